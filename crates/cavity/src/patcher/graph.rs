//! The face graph and the breadth-first searches of the patcher: greedy
//! graph growing for the initial chunks, the search inward from each
//! group's boundary that finds its center, and the multi-source search that
//! assigns nodes to their nearest seed.
//!
//! Every search runs on one FIFO queue (the nearest-seed search level by
//! level, large levels in parallel, in the same order), so its result is
//! fixed by the graph alone; the centers of different groups are found in parallel (rayon),
//! each group on its own nodes, so results do not depend on threads.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use rayon::prelude::*;

use crate::topology::Topology;

/// No label yet.
pub(super) const NONE: u32 = u32::MAX;

/// Smallest frontier that [`Graph::assign`] expands in parallel.
const PARALLEL_FRONTIER: usize = 4096;

/// Marks a node with more than three neighbours: `adj[f] = [MANY, a, b]`
/// and its neighbours are `extra[a..b]`.
const MANY: u32 = u32::MAX - 1;

/// Faces as nodes, faces sharing an edge as neighbours, and the rim: the
/// nodes on an open edge or next to a face outside the graph. Up to three
/// neighbours (the manifold case) are stored in place, padded with
/// [`NONE`], so a search reads one entry per node; more overflow to
/// `extra`.
pub(super) struct Graph {
    adj: Vec<[u32; 3]>,
    extra: Vec<u32>,
    rim: Vec<bool>,
}

/// Nodes grouped by label (CSR): group `i` is `nodes[offsets[i]..offsets[i + 1]]`.
pub(super) struct Groups {
    offsets: Vec<u32>,
    nodes: Vec<u32>,
}

impl Groups {
    /// The nodes of each of the `count` labels, in increasing order.
    pub(super) fn of(label: &[u32], count: usize) -> Groups {
        let mut offsets = vec![0u32; count + 1];
        for &p in label {
            offsets[p as usize + 1] += 1;
        }
        for i in 0..count {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut nodes = vec![0u32; label.len()];
        for (f, &p) in label.iter().enumerate() {
            nodes[fill[p as usize] as usize] = f as u32;
            fill[p as usize] += 1;
        }
        Groups { offsets, nodes }
    }

    /// Number of groups.
    pub(super) fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The nodes of group `i`.
    pub(super) fn get(&self, i: usize) -> &[u32] {
        &self.nodes[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
}

/// A greedy partition into chunks grown breadth-first.
pub(super) struct Chunks {
    /// Chunk of each node.
    pub label: Vec<u32>,
    /// The nodes of each chunk in growing order (its start first).
    pub groups: Groups,
    /// Whether the chunk is the first of its component or has at least a
    /// quarter of the target size: smaller leftovers get no seed of their
    /// own and join their neighbours.
    pub keep: Vec<bool>,
}

impl Graph {
    /// The face graph of `topo`.
    pub(super) fn faces(topo: &Topology) -> Graph {
        let rim = topo
            .fe
            .par_iter()
            .map(|edges| edges.iter().any(|&e| topo.edge_faces(e).len() == 1))
            .collect();
        Graph::new(rim, |f| {
            topo.fe[f]
                .iter()
                .flat_map(move |&e| topo.edge_faces(e).iter().copied())
                .filter(move |&g| g as usize != f)
        })
    }

    /// The subgraph of `nodes` (exactly the nodes labelled `p` in `label`),
    /// numbered in the order given; `local[node]` must hold each node's
    /// position in `nodes`.
    pub(super) fn sub(&self, nodes: &[u32], label: &[u32], p: u32, local: &[AtomicU32]) -> Graph {
        let rim = nodes
            .iter()
            .map(|&f| {
                self.rim[f as usize] || self.neighbors(f).iter().any(|&g| label[g as usize] != p)
            })
            .collect();
        Graph::new(rim, |i| {
            self.neighbors(nodes[i])
                .iter()
                .filter(move |&&g| label[g as usize] == p)
                .map(|&g| local[g as usize].load(Ordering::Relaxed))
        })
    }

    /// The graph whose node `i` has the rim flag `rim[i]` and the
    /// neighbours `neighbors(i)`.
    fn new<I: Iterator<Item = u32>>(
        rim: Vec<bool>,
        neighbors: impl Fn(usize) -> I + Sync,
    ) -> Graph {
        let mut adj: Vec<[u32; 3]> = (0..rim.len())
            .into_par_iter()
            .map(|i| {
                let mut row = [NONE; 3];
                for (k, g) in neighbors(i).enumerate() {
                    match row.get_mut(k) {
                        Some(slot) => *slot = g,
                        None => return [MANY, 0, 0],
                    }
                }
                row
            })
            .collect();
        let mut extra = Vec::new();
        for (i, row) in adj.iter_mut().enumerate() {
            if row[0] == MANY {
                row[1] = extra.len() as u32;
                extra.extend(neighbors(i));
                row[2] = extra.len() as u32;
            }
        }
        Graph { adj, extra, rim }
    }

    /// Number of nodes.
    pub(super) fn len(&self) -> usize {
        self.rim.len()
    }

    fn neighbors(&self, f: u32) -> &[u32] {
        let row = &self.adj[f as usize];
        if row[0] == MANY {
            &self.extra[row[1] as usize..row[2] as usize]
        } else {
            let degree = row.iter().position(|&g| g == NONE).unwrap_or(3);
            &row[..degree]
        }
    }

    /// Greedy graph growing (Karypis and Kumar, "A fast and high quality
    /// multilevel scheme for partitioning irregular graphs", 1998, section
    /// 4.1, one region after the other). In each connected component
    /// (taken from its first node at or after `start`, cyclically) a chunk
    /// grows breadth-first over free nodes to `target` nodes or as far as
    /// free nodes reach; the free neighbours of each finished chunk join a
    /// queue of candidates, and the first candidate still free starts the
    /// next chunk. Chunks are connected, and compact where the surface
    /// allows: each starts on the edge of the covered region and grows
    /// into the free one.
    pub(super) fn chunks(&self, target: u32, start: usize) -> Chunks {
        let n = self.len();
        let target = target as usize;
        let mut label = vec![NONE; n];
        let mut candidates = Vec::new();
        let mut grown = Vec::with_capacity(n);
        let mut offsets = vec![0u32];
        let mut keep = Vec::new();
        for root in (start..n).chain(0..start) {
            if label[root] != NONE {
                continue;
            }
            candidates.clear();
            candidates.push(root as u32);
            let mut head = 0;
            while let Some(&f) = candidates.get(head) {
                head += 1;
                if label[f as usize] != NONE {
                    continue;
                }
                let c = keep.len() as u32;
                let first = grown.len();
                label[f as usize] = c;
                grown.push(f);
                // Expands grown[first..] in order; stops when full, with
                // grown[next - 1..] not (or not wholly) expanded.
                let mut next = first;
                'grow: while let Some(&h) = grown.get(next) {
                    next += 1;
                    for &g in self.neighbors(h) {
                        if grown.len() - first == target {
                            break 'grow;
                        }
                        if label[g as usize] == NONE {
                            label[g as usize] = c;
                            grown.push(g);
                        }
                    }
                }
                for &h in &grown[next - 1..] {
                    for &g in self.neighbors(h) {
                        if label[g as usize] == NONE {
                            candidates.push(g);
                        }
                    }
                }
                offsets.push(grown.len() as u32);
                keep.push(f as usize == root || 4 * (grown.len() - first) >= target);
            }
        }
        Chunks {
            label,
            groups: Groups {
                offsets,
                nodes: grown,
            },
            keep,
        }
    }

    /// The center of each group of `groups` (the nodes with that label in
    /// `label`): the node reached last by a breadth-first search inward
    /// from the group's boundary (its nodes on the rim or next to another
    /// label), so one farthest from it. A group without boundary (a whole
    /// closed component) keeps its first node.
    pub(super) fn centers(&self, label: &[u32], groups: &Groups) -> Vec<u32> {
        let seen: Vec<AtomicBool> = (0..self.len())
            .into_par_iter()
            .map(|_| AtomicBool::new(false))
            .collect();
        (0..groups.len())
            .into_par_iter()
            .map_init(Vec::new, |queue, i| {
                let nodes = groups.get(i);
                let p = i as u32;
                queue.clear();
                for &f in nodes {
                    if self.rim[f as usize]
                        || self.neighbors(f).iter().any(|&g| label[g as usize] != p)
                    {
                        seen[f as usize].store(true, Ordering::Relaxed);
                        queue.push(f);
                    }
                }
                let mut head = 0;
                while let Some(&f) = queue.get(head) {
                    head += 1;
                    for &g in self.neighbors(f) {
                        if label[g as usize] == p && !seen[g as usize].load(Ordering::Relaxed) {
                            seen[g as usize].store(true, Ordering::Relaxed);
                            queue.push(g);
                        }
                    }
                }
                queue.last().copied().unwrap_or(nodes[0])
            })
            .collect()
    }

    /// Multi-source breadth-first search: each node gets the index of the
    /// seed it is reached from first (a nearest seed; among equally near
    /// ones, the one whose wave arrives first in queue order). Every
    /// connected component must hold a seed. Each label's nodes are
    /// connected.
    ///
    /// Level-synchronous (the parallel assignment of RXMesh section 6.3):
    /// with more than one rayon worker, a level's frontier of at least
    /// [`PARALLEL_FRONTIER`] nodes is expanded in parallel. A free node is
    /// claimed by the frontier node of smallest position among its
    /// neighbours (an atomic minimum), and the next frontier lists the
    /// claimed nodes by their claimer's position, then by their place in
    /// its neighbours: the order one FIFO queue gives, so the labels are
    /// those of the serial search, for any thread count.
    pub(super) fn assign(&self, seeds: &[u32]) -> Vec<u32> {
        // Per node, the label (high half) and the claiming frontier
        // position (low half), in one word: one memory access per visit.
        let free = (NONE as u64) << 32 | NONE as u64;
        let words: Vec<AtomicU64> = (0..self.len())
            .into_par_iter()
            .map(|_| AtomicU64::new(free))
            .collect();
        let state = &words[..];
        let label = |f: u32| (state[f as usize].load(Ordering::Relaxed) >> 32) as u32;
        let mut frontier = Vec::with_capacity(seeds.len());
        for (p, &s) in seeds.iter().enumerate() {
            state[s as usize].store((p as u64) << 32, Ordering::Relaxed);
            frontier.push(s);
        }
        let parallel = rayon::current_num_threads() > 1;
        let mut reached = frontier.len();
        let mut next = Vec::new();
        while !frontier.is_empty() {
            if !parallel || frontier.len() < PARALLEL_FRONTIER {
                // The serial queue order within the level.
                next.clear();
                for &f in &frontier {
                    let p = (label(f) as u64) << 32;
                    for &g in self.neighbors(f) {
                        if label(g) == NONE {
                            state[g as usize].store(p, Ordering::Relaxed);
                            next.push(g);
                        }
                    }
                }
            } else {
                frontier.par_iter().enumerate().for_each(|(i, &f)| {
                    let claim = (NONE as u64) << 32 | i as u64;
                    for &g in self.neighbors(f) {
                        let s = &state[g as usize];
                        if s.load(Ordering::Relaxed) > claim {
                            s.fetch_min(claim, Ordering::Relaxed);
                        }
                    }
                });
                // A free node's word holds its smallest claim; only that
                // claimer labels it, and labelled nodes lose the free label.
                next = frontier
                    .par_iter()
                    .enumerate()
                    .flat_map_iter(|(i, &f)| {
                        let claim = (NONE as u64) << 32 | i as u64;
                        let p = (label(f) as u64) << 32;
                        self.neighbors(f).iter().copied().filter(move |&g| {
                            let s = &state[g as usize];
                            let mine = s.load(Ordering::Relaxed) == claim;
                            if mine {
                                s.store(p, Ordering::Relaxed);
                            }
                            mine
                        })
                    })
                    .collect();
            }
            reached += next.len();
            std::mem::swap(&mut frontier, &mut next);
        }
        debug_assert_eq!(reached, self.len(), "a component without seed");
        words
            .into_par_iter()
            .map(|s| (s.into_inner() >> 32) as u32)
            .collect()
    }
}

//! Partitioning the faces into small, connected patches: Lloyd's k-means
//! over the face graph with seed addition on oversized patches (RXMesh
//! section 6.3 and appendix C).
//!
//! Faces are graph nodes, faces sharing an edge are neighbours, all weights
//! are 1 (so non-manifold inputs need no special case). Each iteration
//! assigns every face to its nearest seed by a multi-source breadth-first
//! search (so every patch is one connected component), then moves each seed
//! to the patch face farthest from the patch boundary. Every fifth
//! iteration (every iteration after the 25th), patches over the size limit
//! get extra seeds on their boundary (anywhere in a patch without one).
//! It stops when no patch has more than `max_patch_size` faces.
//!
//! Both searches run level by level in parallel (rayon). A face reached by
//! several patches in the same level joins the lowest patch id, so the
//! result does not depend on the thread count.

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

use crate::topology::Topology;

/// Default maximum faces per patch (the dynamic paper's static setting).
pub const DEFAULT_PATCH_SIZE: u32 = 512;
/// Largest accepted maximum patch size: beyond it a patch's local edges
/// overflow the 15-bit FE index.
pub const MAX_PATCH_SIZE: u32 = 8192;

/// Errors of the patcher.
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    /// The requested patch size is outside `1..=MAX_PATCH_SIZE`.
    #[error("patch size {0} is out of range: use --patch-size between 1 and {MAX_PATCH_SIZE}")]
    PatchSize(u32),
    /// A patch with its ribbon holds more local elements than the patch
    /// layout's local indices allow (`cavity_device::layout::MAX_LOCAL_*`).
    #[error(
        "patch {patch} needs {count} local {what} (its own and its ribbon's), more than {limit}; lower --patch-size (now {patch_size}); if that does not help, a vertex's one-ring alone is too large"
    )]
    LocalOverflow {
        /// Patch id.
        patch: u32,
        /// Element count needed.
        count: usize,
        /// "vertices", "edges" or "faces".
        what: &'static str,
        /// The limit.
        limit: u32,
        /// The patch size in use.
        patch_size: u32,
    },
}

/// A face → patch assignment.
#[derive(Clone, Debug)]
pub struct Partition {
    /// Patch of each face.
    pub face_patch: Vec<u32>,
    /// Number of patches (at least 1).
    pub num_patches: u32,
    /// Lloyd iterations run.
    pub iterations: u32,
}

/// Partitions the faces of `topo` into connected patches of at most
/// `max_patch_size` faces. `seed` makes the initial seed choice reproducible.
pub fn partition(
    topo: &Topology,
    num_faces: usize,
    max_patch_size: u32,
    seed: u64,
) -> Result<Partition, PatchError> {
    if max_patch_size == 0 || max_patch_size > MAX_PATCH_SIZE {
        return Err(PatchError::PatchSize(max_patch_size));
    }
    if num_faces == 0 {
        return Ok(Partition {
            face_patch: Vec::new(),
            num_patches: 1,
            iterations: 0,
        });
    }
    let graph = FaceGraph::new(topo);
    let mut rng = seed ^ 0x9e37_79b9_7f4a_7c15;
    let k = num_faces.div_ceil(max_patch_size as usize);
    let mut seeds: Vec<u32> = (0..k)
        .map(|i| {
            let span = num_faces / k;
            (i * span + (next(&mut rng) as usize % span.max(1))) as u32
        })
        .collect();
    seeds.sort_unstable();
    seeds.dedup();
    let mut face_patch = vec![u32::MAX; num_faces];
    let mut iterations = 0;
    loop {
        iterations += 1;
        graph.assign(&mut seeds, &mut face_patch);
        let mut sizes = vec![0u32; seeds.len()];
        for &p in &face_patch {
            sizes[p as usize] += 1;
        }
        let oversized = sizes.iter().any(|&s| s > max_patch_size);
        if !oversized {
            return Ok(Partition {
                face_patch,
                num_patches: seeds.len() as u32,
                iterations,
            });
        }
        let (centers, boundary) = graph.centers(&face_patch, seeds.len());
        for (s, c) in seeds.iter_mut().zip(&centers) {
            if *c != u32::MAX {
                *s = *c;
            }
        }
        if iterations % 5 == 0 || iterations > 25 {
            for (p, &size) in sizes.iter().enumerate() {
                if size > max_patch_size {
                    let extra = (size / max_patch_size).max(1) as usize;
                    // Candidates exclude the patch's own seed, so every
                    // oversized patch gains a seed and the loop ends (at
                    // worst with one face per patch). A patch without
                    // boundary is a whole component: seed it anywhere.
                    let own = seeds[p];
                    let faces: Vec<u32> = if boundary[p].is_empty() {
                        (0..num_faces as u32)
                            .filter(|&f| face_patch[f as usize] == p as u32 && f != own)
                            .collect()
                    } else {
                        boundary[p].iter().copied().filter(|&f| f != own).collect()
                    };
                    for j in 0..extra.min(faces.len()) {
                        seeds.push(faces[j * faces.len() / extra]);
                    }
                }
            }
            seeds.sort_unstable();
            seeds.dedup();
        }
    }
}

/// xorshift64*.
fn next(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// Faces sharing an edge, as CSR.
struct FaceGraph {
    offsets: Vec<u32>,
    adj: Vec<u32>,
}

impl FaceGraph {
    fn new(topo: &Topology) -> FaceGraph {
        let mut offsets = vec![0u32; topo.fe.len() + 1];
        let mut adj = Vec::with_capacity(3 * topo.fe.len());
        for (f, edges) in topo.fe.iter().enumerate() {
            for &e in edges {
                adj.extend(topo.edge_faces(e).iter().filter(|&&g| g as usize != f));
            }
            offsets[f + 1] = adj.len() as u32;
        }
        FaceGraph { offsets, adj }
    }

    fn neighbors(&self, f: u32) -> &[u32] {
        &self.adj[self.offsets[f as usize] as usize..self.offsets[f as usize + 1] as usize]
    }

    /// Multi-source BFS from the seeds; faces no seed reaches (components
    /// without a seed) become seeds of their own.
    fn assign(&self, seeds: &mut Vec<u32>, face_patch: &mut [u32]) {
        let label: Vec<AtomicU32> = (0..face_patch.len())
            .into_par_iter()
            .map(|_| AtomicU32::new(u32::MAX))
            .collect();
        for (p, &s) in seeds.iter().enumerate() {
            label[s as usize].store(p as u32, Ordering::Relaxed);
        }
        let mut frontier = seeds.clone();
        let mut unassigned = 0usize;
        loop {
            self.grow(&label, frontier);
            while unassigned < label.len() && label[unassigned].load(Ordering::Relaxed) != u32::MAX
            {
                unassigned += 1;
            }
            if unassigned == label.len() {
                break;
            }
            label[unassigned].store(seeds.len() as u32, Ordering::Relaxed);
            seeds.push(unassigned as u32);
            frontier = vec![unassigned as u32];
        }
        face_patch
            .par_iter_mut()
            .zip(label.par_iter())
            .for_each(|(f, l)| *f = l.load(Ordering::Relaxed));
    }

    /// Level-synchronous BFS from `frontier` (labelled faces) into the
    /// unlabelled faces, each taking the lowest label among its
    /// neighbours in the previous level.
    fn grow(&self, label: &[AtomicU32], frontier: Vec<u32>) {
        // A face claimed in this level holds `CLAIMED | patch` until the
        // level ends: above every final label, so `fetch_min` settles the
        // claims of one level without lowering labels of earlier levels.
        const CLAIMED: u32 = 1 << 31;
        self.levels(
            frontier,
            |_, f, g| {
                let p = label[f as usize].load(Ordering::Relaxed);
                label[g as usize].fetch_min(CLAIMED | p, Ordering::Relaxed) == u32::MAX
            },
            |claimed| {
                claimed.par_iter().for_each(|&g| {
                    label[g as usize].fetch_and(!CLAIMED, Ordering::Relaxed);
                })
            },
        );
    }

    /// Breadth-first search level by level, each level in parallel: every
    /// face of the frontier offers itself to each neighbour `g` through
    /// `claim(level, f, g)`, which returns true for the one claim that
    /// takes `g` (levels count from 1); `settle(next)` then runs on the
    /// faces claimed in the level, which form the next frontier.
    fn levels(
        &self,
        mut frontier: Vec<u32>,
        claim: impl Fn(u32, u32, u32) -> bool + Sync,
        settle: impl Fn(&[u32]),
    ) {
        let claim = &claim;
        let mut level = 0;
        while !frontier.is_empty() {
            level += 1;
            let next: Vec<u32> = frontier
                .par_iter()
                .flat_map_iter(|&f| {
                    self.neighbors(f)
                        .iter()
                        .filter_map(move |&g| claim(level, f, g).then_some(g))
                })
                .collect();
            settle(&next);
            frontier = next;
        }
    }

    /// For each patch, the face reached last by a BFS inward from the patch
    /// boundary (its "center": deepest, highest id among the deepest;
    /// `u32::MAX` for a patch without boundary), and the patch's boundary
    /// faces in face order.
    fn centers(&self, face_patch: &[u32], patches: usize) -> (Vec<u32>, Vec<Vec<u32>>) {
        let on_boundary: Vec<bool> = (0..face_patch.len() as u32)
            .into_par_iter()
            .map(|f| {
                let p = face_patch[f as usize];
                self.neighbors(f)
                    .iter()
                    .any(|&g| face_patch[g as usize] != p)
            })
            .collect();
        let mut boundary = vec![Vec::new(); patches];
        for (f, _) in on_boundary.iter().enumerate().filter(|(_, b)| **b) {
            boundary[face_patch[f] as usize].push(f as u32);
        }
        // Depth from the boundary: the label is the level a face is reached in.
        let depth: Vec<AtomicU32> = on_boundary
            .par_iter()
            .map(|&b| AtomicU32::new(if b { 0 } else { u32::MAX }))
            .collect();
        let frontier: Vec<u32> = (0..face_patch.len() as u32)
            .filter(|&f| on_boundary[f as usize])
            .collect();
        self.levels(
            frontier,
            |level, f, g| {
                face_patch[g as usize] == face_patch[f as usize]
                    && depth[g as usize].fetch_min(level, Ordering::Relaxed) == u32::MAX
            },
            |_| {},
        );
        let mut centers = vec![u32::MAX; patches];
        let mut deepest = vec![0u32; patches];
        for (f, d) in depth.iter().enumerate() {
            let (p, d) = (face_patch[f] as usize, d.load(Ordering::Relaxed));
            if d != u32::MAX && (centers[p] == u32::MAX || d >= deepest[p]) {
                centers[p] = f as u32;
                deepest[p] = d;
            }
        }
        (centers, boundary)
    }
}

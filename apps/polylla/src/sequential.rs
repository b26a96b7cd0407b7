//! Sequential Polylla (GPolylla, section 5; Salinas-Fernández et al.,
//! "A generalization of Delaunay triangulations: Polylla"): the label,
//! traversal and repair phases, one after another on one thread. The
//! comparison baseline of the GPU version and its oracle.
//!
//! - **Label** ([`label`]): each triangle's longest edge ([`is_longer`]:
//!   by squared length, ties by the edge's smaller half-edge, so that
//!   every edge has one rank and a terminal-edge region has no inner
//!   vertex); frontier edges, on the boundary or the longest edge of
//!   neither triangle; seed edges, one half-edge of each terminal edge
//!   (the smaller) and each border terminal edge.
//! - **Traversal**: from each seed, the first frontier half-edge turning
//!   clockwise around its origin, then frontier half-edge after frontier
//!   half-edge (`next` turned clockwise around the target until frontier),
//!   each half-edge's `next` and `prev` re-linked to its neighbours on
//!   the polygon.
//! - **Repair**: a polygon with a barrier tip (a vertex of one frontier
//!   edge) gets, at each tip, the middle edge around it (the
//!   `degree / 2`-th clockwise from the frontier edge) as a frontier edge;
//!   both its half-edges become seeds and the polygons they bound are
//!   traversed again, each once (a usage mark per half-edge).
//! - **Bridges** (issue 52; not in the paper): a barrier edge that no
//!   barrier tip ends is walked by its polygon in both directions, where a
//!   region wraps around other regions (or a hole of the domain) and is
//!   joined to itself only through that edge, or where the tips' repair
//!   leaves the stem of a barrier tree. Every such edge, found once all
//!   polygons are traversed, gets one more frontier edge
//!   ([`bridge_chord`]) that puts its two half-edges in different
//!   polygons, and the polygons it splits are traversed again.
//!
//! The polygons are then simple in the sense the paper gives the word
//! (no barrier edge: no polygon walks an edge twice, and every boundary is
//! one closed cycle). A polygon may still touch itself at a vertex, where
//! its region wraps around others and meets itself there (a weakly simple
//! polygon): its edges, and each edge's two polygons, stay well defined,
//! which is what the virtual element and finite-volume methods read.
//!
//! Each polygon is named by its smallest half-edge; [`Polylla::polygons`]
//! lists them ascending.

use std::collections::BTreeSet;

use crate::PolyllaError;
use crate::halfedge::{HalfEdges, NONE};

/// A Polylla mesh over the half-edges of its triangulation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Polylla {
    /// Whether each half-edge's edge is a frontier edge (a polygon edge).
    pub frontier: Vec<bool>,
    /// The next half-edge around each polygon (re-linked for the frontier
    /// half-edges of the triangles; the others as in the triangulation).
    pub next: Vec<u32>,
    /// The previous half-edge around each polygon.
    pub prev: Vec<u32>,
    /// Each polygon's smallest half-edge, ascending.
    pub polygons: Vec<u32>,
    /// Barrier tips repaired (each by one new frontier edge).
    pub repaired: usize,
    /// Barrier edges the tips' repair left (each split by one new
    /// frontier edge, [`bridge_chord`]).
    pub bridges: usize,
}

impl Polylla {
    /// The vertices of polygon `seed` (a half-edge of it), in order.
    pub fn polygon(&self, mesh: &HalfEdges, seed: u32) -> Vec<u32> {
        self.polygon_edges(seed)
            .into_iter()
            .map(|h| mesh.origin[h as usize])
            .collect()
    }

    /// The half-edges of polygon `seed`, from `seed` along `next`.
    ///
    /// # Panics
    /// When `next` does not lead back to `seed`
    /// ([`Polylla::try_polygon_edges`]' error), never looping.
    pub fn polygon_edges(&self, seed: u32) -> Vec<u32> {
        self.try_polygon_edges(seed)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// The half-edges of polygon `seed`, from `seed` along `next`, the
    /// walk bounded by the number of half-edges.
    ///
    /// # Errors
    /// [`PolyllaError::Input`] when `seed` is not a half-edge, or `next`
    /// leaves the half-edges or does not come back to `seed` within them
    /// (it runs into a cycle without `seed`).
    pub fn try_polygon_edges(&self, seed: u32) -> Result<Vec<u32>, PolyllaError> {
        let n = self.next.len();
        let broken = |what: String| {
            PolyllaError::Input(format!(
                "the polygon of half-edge {seed} {what} ({n} half-edges): `next` is not a cycle through it"
            ))
        };
        if seed as usize >= n {
            return Err(broken("names no half-edge".into()));
        }
        let mut out = vec![seed];
        let mut h = self.next[seed as usize];
        while h != seed {
            if h as usize >= n {
                return Err(broken(format!("reaches {h}, no half-edge")));
            }
            if out.len() == n {
                return Err(broken("does not close".into()));
            }
            out.push(h);
            h = self.next[h as usize];
        }
        Ok(out)
    }
}

/// Whether `h`'s edge ranks above `g`'s as a longest edge: longer, or as
/// long with a larger smaller half-edge (a total order of edges, the same
/// seen from either side).
pub fn is_longer(mesh: &HalfEdges, h: u32, g: u32) -> bool {
    let key = |x: u32| (mesh.length2(x), x.min(mesh.twin[x as usize]));
    let (a, b) = (key(h), key(g));
    a.0 > b.0 || (a.0 == b.0 && a.1 > b.1)
}

/// The label phase: whether each half-edge is its triangle's longest
/// edge, whether it is a frontier edge, and the seed half-edges
/// (ascending).
pub fn label(mesh: &HalfEdges) -> (Vec<bool>, Vec<bool>, Vec<u32>) {
    let n = mesh.len();
    let mut longest = vec![false; n];
    for f in 0..mesh.triangles() as u32 {
        let mut best = 3 * f;
        for h in [3 * f + 1, 3 * f + 2] {
            if is_longer(mesh, h, best) {
                best = h;
            }
        }
        longest[best as usize] = true;
    }
    let frontier: Vec<bool> = (0..n as u32)
        .map(|h| {
            let t = mesh.twin[h as usize];
            mesh.is_border_edge(h) || (!longest[h as usize] && !longest[t as usize])
        })
        .collect();
    let seeds = (0..mesh.interior)
        .filter(|&h| {
            let t = mesh.twin[h as usize];
            longest[h as usize] && (mesh.is_border(t) || (longest[t as usize] && h < t))
        })
        .collect();
    (longest, frontier, seeds)
}

/// The first frontier half-edge turning clockwise around `h`'s origin
/// from `h`.
fn frontier_around(mesh: &HalfEdges, frontier: &[bool], mut h: u32) -> u32 {
    while !frontier[h as usize] {
        h = mesh.cw_vertex_edge(h);
    }
    h
}

/// The frontier half-edges of the polygon of frontier half-edge `start`,
/// in order.
fn traverse(mesh: &HalfEdges, frontier: &[bool], start: u32) -> Vec<u32> {
    let mut out = vec![start];
    let mut h = frontier_around(mesh, frontier, mesh.next[start as usize]);
    while h != start {
        out.push(h);
        h = frontier_around(mesh, frontier, mesh.next[h as usize]);
    }
    out
}

/// The middle edge around barrier tip `v` (one frontier edge): the
/// `degree / 2`-th half-edge out of `v` clockwise from the frontier one,
/// or `None` when `v` is not a tip.
pub fn middle_edge(mesh: &HalfEdges, frontier: &[bool], v: u32) -> Option<u32> {
    let start = mesh.edge_of_vertex[v as usize];
    if start == NONE {
        return None;
    }
    let (mut h, mut count, mut degree, mut first) = (start, 0, 0, start);
    loop {
        if frontier[h as usize] {
            count += 1;
            first = h;
        }
        degree += 1;
        h = mesh.cw_vertex_edge(h);
        if h == start {
            break;
        }
    }
    if count != 1 {
        return None;
    }
    let mut m = first;
    for _ in 0..degree / 2 {
        m = mesh.cw_vertex_edge(m);
    }
    Some(m)
}

/// Sequential Polylla of `mesh`.
pub fn polylla_sequential(mesh: &HalfEdges) -> Polylla {
    let (_, mut frontier, seeds) = label(mesh);
    let mut next = mesh.next.clone();
    let mut prev = mesh.prev.clone();
    let mut used = vec![false; mesh.len()];
    let mut polygons = Vec::new();
    let mut repaired = 0;
    let link = |edges: &[u32], next: &mut [u32], prev: &mut [u32]| {
        for (i, &h) in edges.iter().enumerate() {
            let n = edges[(i + 1) % edges.len()];
            next[h as usize] = n;
            prev[n as usize] = h;
        }
    };
    for s in seeds {
        let start = frontier_around(mesh, &frontier, s);
        if used[start as usize] {
            continue;
        }
        let edges = traverse(mesh, &frontier, start);
        for &h in &edges {
            used[h as usize] = true;
        }
        // Barrier tips: the polygon's vertices of one frontier edge, all
        // found before any is repaired.
        let middles: Vec<u32> = edges
            .iter()
            .filter_map(|&h| middle_edge(mesh, &frontier, mesh.origin[h as usize]))
            .collect();
        if middles.is_empty() {
            link(&edges, &mut next, &mut prev);
            polygons.push(*edges.iter().min().expect("a polygon has edges"));
            continue;
        }
        repaired += middles.len();
        for &m in &middles {
            frontier[m as usize] = true;
            frontier[mesh.twin[m as usize] as usize] = true;
        }
        let mut pieces = Vec::new();
        for &m in &middles {
            for s in [m, mesh.twin[m as usize]] {
                // A seed on a polygon already traversed gives that polygon.
                if !pieces.iter().any(|p: &Vec<u32>| p.contains(&s)) {
                    pieces.push(traverse(mesh, &frontier, s));
                }
            }
        }
        for piece in pieces {
            for &h in &piece {
                used[h as usize] = true;
            }
            link(&piece, &mut next, &mut prev);
            polygons.push(*piece.iter().min().expect("a polygon has edges"));
        }
    }
    let bridges = split_bridges(mesh, &mut frontier, [&mut next, &mut prev], &mut polygons);
    polygons.sort_unstable();
    Polylla {
        frontier,
        next,
        prev,
        polygons,
        repaired,
        bridges,
    }
}

/// The new frontier edge that splits the polygon walking barrier edge `h`
/// in both directions (`h` the smaller of its half-edges, `next` the
/// polygons' links, `frontier` before the split): one of the two other
/// edges of `h`'s triangle `(u, v, w)`, `h` running from `u` to `v`.
///
/// The polygon's cycle is `h A twin(h) B`, `A` a loop at `v`, `B` one at
/// `u` (one of them around the regions, or the hole, that the polygon
/// surrounds). The triangle's corner at `w` lies in the polygon between
/// two of its half-edges, the one after it, `x`, the first frontier
/// half-edge clockwise around `w` from the triangle's half-edge `w → u`
/// (how the traversal turns). When `x` is in `A` the edge `(w, u)` joins
/// `A` to `u` before `h` and cuts the cycle into `h A₁ (w → u)` and the
/// rest, which holds `twin(h)`; otherwise `(v, w)` joins `v` after `h` to
/// `B`. Neither is a frontier edge (a frontier `(v, w)` would make `x`
/// follow it in `A`; a frontier `(w, u)` would be `x`, last in `B`).
pub fn bridge_chord(mesh: &HalfEdges, frontier: &[bool], next: &[u32], h: u32) -> u32 {
    let (a, b) = (mesh.next[h as usize], mesh.prev[h as usize]);
    let x = frontier_around(mesh, frontier, b);
    let t = mesh.twin[h as usize];
    let mut g = next[h as usize];
    while g != t && g != x {
        g = next[g as usize];
    }
    if g == x { b } else { a }
}

/// Splits every polygon that walks an edge in both directions (a barrier
/// edge no barrier tip ends: a region wrapped around others and joined to
/// itself through that edge, or one with a barrier tree the tips' repair
/// left a stem of) at the [`bridge_chord`] of each such edge, all chosen
/// before any is added; relinks the pieces and names them in `polygons`
/// in place of the split polygons. Returns the barrier edges split.
///
/// Each chord separates its barrier edge's two half-edges, and a chord
/// joins two different polygons (it cuts the tree of triangles of its
/// polygon), so no barrier edge remains.
fn split_bridges(
    mesh: &HalfEdges,
    frontier: &mut [bool],
    [next, prev]: [&mut Vec<u32>; 2],
    polygons: &mut Vec<u32>,
) -> usize {
    let mut id = vec![NONE; mesh.len()];
    for &p in polygons.iter() {
        let mut h = p;
        loop {
            id[h as usize] = p;
            h = next[h as usize];
            if h == p {
                break;
            }
        }
    }
    let barriers: Vec<u32> = (0..mesh.interior)
        .filter(|&h| {
            let t = mesh.twin[h as usize];
            h < t && id[h as usize] != NONE && id[h as usize] == id[t as usize]
        })
        .collect();
    if barriers.is_empty() {
        return 0;
    }
    let chords: Vec<u32> = barriers
        .iter()
        .map(|&h| bridge_chord(mesh, frontier, next, h))
        .collect();
    let split: BTreeSet<u32> = barriers.iter().map(|&h| id[h as usize]).collect();
    polygons.retain(|p| !split.contains(p));
    for &c in &chords {
        frontier[c as usize] = true;
        frontier[mesh.twin[c as usize] as usize] = true;
    }
    let mut done = vec![false; mesh.len()];
    for &c in &chords {
        for s in [c, mesh.twin[c as usize]] {
            if done[s as usize] {
                continue;
            }
            let piece = traverse(mesh, frontier, s);
            for (i, &h) in piece.iter().enumerate() {
                done[h as usize] = true;
                let n = piece[(i + 1) % piece.len()];
                next[h as usize] = n;
                prev[n as usize] = h;
            }
            polygons.push(*piece.iter().min().expect("a polygon has edges"));
        }
    }
    barriers.len()
}

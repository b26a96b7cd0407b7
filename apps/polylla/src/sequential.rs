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
//!
//! Each polygon is named by its smallest half-edge; [`Polylla::polygons`]
//! lists them ascending.

use crate::halfedge::HalfEdges;

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
    pub fn polygon_edges(&self, seed: u32) -> Vec<u32> {
        let mut out = vec![seed];
        let mut h = self.next[seed as usize];
        while h != seed {
            out.push(h);
            h = self.next[h as usize];
        }
        out
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
    if start == crate::halfedge::NONE {
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
    polygons.sort_unstable();
    Polylla {
        frontier,
        next,
        prev,
        polygons,
        repaired,
    }
}

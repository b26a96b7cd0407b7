//! Fill-ins the cavity applications share (dynamic paper, section 3 and
//! fig. 4): a cavity's boundary checked to be a simple loop or chain, the
//! link condition of a collapse ([`collapses_to_a_point`]), and the fills
//! themselves: a star around a new vertex ([`star_fill`]) and a vertex
//! split ([`vertex_split_fill`]).

use crate::block::Block;
use crate::geometry::midpoint;

use super::FillIn;

/// Most boundary half-edges a fan or star fill-in takes (edge collapse,
/// vertex delete).
pub const MAX_LOOP: u32 = 32;

/// Number of boundary vertices: as many as half-edges on a closed loop, one
/// more on an open chain (a cavity at the mesh boundary).
fn chain_vertices<B: Block>(fill: &FillIn<'_, B>) -> u32 {
    fill.boundary_len() + !fill.is_closed() as u32
}

/// Boundary vertex `i` of the loop or chain (`i < chain_vertices`).
fn chain_vertex<B: Block>(fill: &FillIn<'_, B>, i: u32) -> u32 {
    let n = fill.boundary_len();
    if i < n {
        fill.boundary_vertex(i)
    } else {
        fill.boundary_end(n - 1)
    }
}

/// Whether the boundary vertices are distinct.
fn distinct_vertices<B: Block>(fill: &FillIn<'_, B>) -> bool {
    let n = chain_vertices(fill);
    (0..n).all(|i| (i + 1..n).all(|j| chain_vertex(fill, i) != chain_vertex(fill, j)))
}

/// Whether the cavity's boundary is one closed loop through distinct
/// vertices (the cavity is a disk; for an edge collapse this is the link
/// condition).
pub fn simple_loop<B: Block>(fill: &FillIn<'_, B>) -> bool {
    fill.is_closed() && distinct_vertices(fill)
}

/// Whether the cavity's boundary is one open chain through distinct
/// vertices (the cavity is a half-disk at the mesh boundary): each
/// half-edge ends where the next starts (boundary half-edges that do not
/// form one chain, e.g. around a vertex where two fans meet, are not
/// ordered into one).
pub fn simple_chain<B: Block>(fill: &FillIn<'_, B>) -> bool {
    let n = fill.boundary_len();
    n > 0
        && !fill.is_closed()
        && (1..n).all(|i| fill.boundary_end(i - 1) == fill.boundary_vertex(i))
        && distinct_vertices(fill)
}

/// Fills a closed boundary loop, or an open chain, of at most
/// [`MAX_LOOP`] vertices with a new vertex at `at` joined to every boundary
/// vertex (a star of triangles, one per boundary half-edge). Returns false
/// when slots run out.
pub fn star_fill<B: Block>(fill: &mut FillIn<'_, B>, at: [f32; 3]) -> bool {
    let n = fill.boundary_len();
    let nv = chain_vertices(fill);
    if nv > MAX_LOOP {
        return false;
    }
    fill.expect([1, nv, n]);
    let Some(m) = fill.add_vertex(&at) else {
        return false;
    };
    let mut spokes = [0u32; MAX_LOOP as usize];
    for i in 0..nv {
        let Some(e) = fill.add_edge(m, chain_vertex(fill, i)) else {
            return false;
        };
        spokes[i as usize] = e;
    }
    (0..n).all(|i| {
        let j = (i + 1) % nv;
        let h = fill.boundary_edge(i);
        let to_m = fill.half_edge(spokes[j as usize], chain_vertex(fill, j));
        let from_m = fill.half_edge(spokes[i as usize], m);
        fill.add_face([h, to_m, from_m]).is_some()
    })
}

/// Mean position of the boundary vertices.
pub fn centroid<B: Block>(fill: &FillIn<'_, B>) -> [f32; 3] {
    let n = fill.boundary_len();
    let mut c = [0.0f32; 3];
    for i in 0..n {
        let p = fill.ctx.position(fill.boundary_vertex(i));
        for k in 0..3 {
            c[k] += p[k] / n as f32;
        }
    }
    c
}

/// Whether an edge collapse's cavity (template `EdgeStar`) may become one
/// vertex without changing the topology ([`collapses_to_a_point`] of the
/// edge's two vertices).
pub fn collapsible<B: Block>(fill: &FillIn<'_, B>) -> bool {
    collapses_to_a_point(fill, &fill.ctx.edge_vertices(fill.seed()))
}

/// Whether a cavity made of the stars of `vertices` (joined by the seed)
/// may become one vertex without changing the topology: the stars form a
/// disk (every edge on those vertices has two faces, and the faces number
/// the boundary's length plus `2 × vertices - 2`, Euler's count for a disk
/// with that many interior vertices) whose boundary loop visits at least
/// three distinct vertices (the link condition).
pub fn collapses_to_a_point<B: Block>(fill: &FillIn<'_, B>, vertices: &[u32]) -> bool {
    if vertices.is_empty() {
        return false;
    }
    let ctx = fill.ctx;
    let manifold_stars = fill.deleted_faces().all(|f| {
        (0..3).all(|i| {
            let e = ctx.copy.face_edge(f, i).0;
            let on_seed = ctx.edge_vertices(e).iter().any(|v| vertices.contains(v));
            !on_seed || ctx.edge_faces(e).0 == 2
        })
    });
    let interior = 2 * vertices.len() as u32 - 2;
    manifold_stars
        && fill.deleted_faces().count() as u32 == fill.boundary_len() + interior
        && simple_loop(fill)
        && fill.boundary_len() >= 3
}

/// Fills the closed loop `b_0..b_{k-1}` of a vertex star (template
/// `VertexStar`, `4 <= k <= MAX_LOOP` distinct vertices) with a vertex
/// split (see the test application `SplitVertices`): two new vertices, `k + 3` edges and
/// `k + 2` faces. Returns false (adding nothing) for another boundary, and
/// when slots run out.
pub fn vertex_split_fill<B: Block>(fill: &mut FillIn<'_, B>) -> bool {
    let k = fill.boundary_len();
    if !simple_loop(fill) || !(4..=MAX_LOOP).contains(&k) {
        return false;
    }
    let h = k / 2;
    let b = |fill: &FillIn<'_, B>, i: u32| fill.boundary_vertex(i % k);
    let old = fill.ctx.position(fill.seed());
    let half_centroid = |fill: &FillIn<'_, B>, from: u32, to: u32| {
        let mut c = [0.0f32; 3];
        for i in from..=to {
            let p = fill.ctx.position(b(fill, i));
            for (x, y) in c.iter_mut().zip(p) {
                *x += y / (to - from + 1) as f32;
            }
        }
        midpoint(old, c)
    };
    let (at_u, at_w) = (half_centroid(fill, 0, h), half_centroid(fill, h, k));
    fill.expect([2, k + 3, k + 2]);
    let (Some(u), Some(w)) = (fill.add_vertex(&at_u), fill.add_vertex(&at_w)) else {
        return false;
    };
    // Spokes: u to b_0..=b_h, w to b_h..=b_k (b_k = b_0).
    let mut spokes_u = [0u32; MAX_LOOP as usize + 1];
    let mut spokes_w = [0u32; MAX_LOOP as usize + 1];
    for i in 0..=h {
        let Some(e) = fill.add_edge(u, b(fill, i)) else {
            return false;
        };
        spokes_u[i as usize] = e;
    }
    for i in h..=k {
        let Some(e) = fill.add_edge(w, b(fill, i)) else {
            return false;
        };
        spokes_w[i as usize] = e;
    }
    let Some(uw) = fill.add_edge(u, w) else {
        return false;
    };
    // The fans: face (b_i, b_{i+1}, centre) for each boundary half-edge.
    for i in 0..k {
        let (centre, spokes) = if i < h {
            (u, &spokes_u)
        } else {
            (w, &spokes_w)
        };
        let h_i = fill.boundary_edge(i);
        let to_c = fill.half_edge(spokes[i as usize + 1], b(fill, i + 1));
        let from_c = fill.half_edge(spokes[i as usize], centre);
        if fill.add_face([h_i, to_c, from_c]).is_none() {
            return false;
        }
    }
    // Along the new edge: (b_0, u, w) and (b_h, w, u).
    let faces = [
        [
            fill.half_edge(spokes_u[0], b(fill, 0)),
            fill.half_edge(uw, u),
            fill.half_edge(spokes_w[k as usize], w),
        ],
        [
            fill.half_edge(spokes_w[h as usize], b(fill, h)),
            fill.half_edge(uw, w),
            fill.half_edge(spokes_u[h as usize], u),
        ],
    ];
    faces.into_iter().all(|f| fill.add_face(f).is_some())
}

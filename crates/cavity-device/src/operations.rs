//! Mesh operations on the cavity operator (dynamic paper, section 3 and
//! fig. 4), one [`CavityApp`] per template: edge split, face split 1 to 3,
//! edge collapse, vertex delete, edge delete, face delete, and a
//! user-defined cavity
//! (a face with its three neighbours). Each takes its criterion's
//! parameters by value, so the same struct is the GPU kernel's argument
//! and the CPU backend's application. Positions are vertex attributes
//! 0..3, in the mesh's units.

use crate::block::Block;
use crate::dynamic::cavity::{CavityApp, Ctx, FillIn, HalfEdge, Template};
use crate::layout::Kind;

/// Declares an operation's parameter struct: `repr(C)` plain data, so that
/// it is the GPU kernel's by-value argument as it is on the host (`Clone,
/// Copy, Debug, PartialEq`, and `bytemuck::Pod` off the GPU: a kernel crate
/// that uses it depends on `bytemuck` for its host build).
#[macro_export]
macro_rules! parameters {
    ($(#[$meta:meta])* pub struct $name:ident { $($body:tt)* }) => {
        $(#[$meta])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, PartialEq)]
        #[cfg_attr(
            not(target_arch = "nvptx64"),
            derive(bytemuck::Pod, bytemuck::Zeroable)
        )]
        pub struct $name { $($body)* }
    };
}

/// Most boundary half-edges a fan or star fill-in takes (edge collapse,
/// vertex delete).
pub const MAX_LOOP: u32 = 32;

pub use crate::parameters;

/// `a - b`.
pub fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// `a · b`.
pub fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// `u × v`.
pub fn cross(u: [f32; 3], v: [f32; 3]) -> [f32; 3] {
    [
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    ]
}

/// Twice the area vector of the triangle `a, b, c` (its normal, scaled).
pub fn normal(a: [f32; 3], b: [f32; 3], c: [f32; 3]) -> [f32; 3] {
    cross(sub(b, a), sub(c, a))
}

/// `|a|`.
pub fn norm(a: [f32; 3]) -> f32 {
    core::f32::math::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])
}

/// The midpoint of `a` and `b`.
pub fn midpoint(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        0.5 * (a[0] + b[0]),
        0.5 * (a[1] + b[1]),
        0.5 * (a[2] + b[2]),
    ]
}

/// Sine of the smallest interior angle of triangle `a, b, c` (0 when
/// degenerate): twice its area over the product of its two longest edges.
/// It orders triangles as their smallest angles do (at most 60°).
pub fn smallest_angle_sin(a: [f32; 3], b: [f32; 3], c: [f32; 3]) -> f32 {
    let [x, y, z] = [norm(sub(b, a)), norm(sub(c, b)), norm(sub(a, c))];
    let shortest = x.min(y).min(z);
    let longest = x.max(y).max(z);
    let middle = x + y + z - shortest - longest;
    let d = middle * longest;
    if d > 0.0 {
        norm(normal(a, b, c)) / d
    } else {
        0.0
    }
}

/// Sine of 10°: remeshing operations create no face whose smallest angle
/// is below both this and the smallest angle of the faces they replace.
pub const SLIVER_SIN: f32 = 0.173_648_18;

/// Area of the triangle `p`.
pub fn area(p: [[f32; 3]; 3]) -> f32 {
    0.5 * norm(normal(p[0], p[1], p[2]))
}

/// Length of local edge `e`.
pub fn length<B: Block>(ctx: &Ctx<'_, B>, e: u32) -> f32 {
    let [a, b] = ctx.edge_vertices(e);
    norm(sub(ctx.position(a), ctx.position(b)))
}

/// Whether local edge `e` is interior (two faces).
pub fn interior<B: Block>(ctx: &Ctx<'_, B>, e: u32) -> bool {
    ctx.edge_faces(e).0 == 2
}

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

/// A 16-bit priority that puts shorter lengths first: the top bits of the
/// length's IEEE bits, which order like the values for non-negative floats
/// (a relative resolution of 1/128).
pub fn shortest_first(len: f32) -> u32 {
    len.max(0.0).to_bits() >> 16
}

/// A 16-bit priority that puts longer lengths first (see
/// [`shortest_first`]).
pub fn longest_first(len: f32) -> u32 {
    0xffff - shortest_first(len)
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

parameters! {
    /// Edge split (template `EdgeFaces`): every edge with one or two faces
    /// longer than `max_length` gets a vertex at its midpoint joined to the
    /// opposite vertices (two faces become four; at the mesh boundary one
    /// becomes two, and the boundary keeps its shape). An edge is split
    /// only when no edge of its faces is longer, and longer edges win
    /// conflicts: longest-edge bisection (Rivara 1984), which keeps the
    /// smallest angle and the valences bounded however many times the mesh
    /// is refined, where splitting in any order can bisect one side of a
    /// long edge again and again and build needle faces around a vertex of
    /// high valence.
    pub struct SplitLongEdges {
        /// Longest edge left alone.
        pub max_length: f32,
        /// 1: boundary edges (one face) are not split (the boundary stays
        /// as it is), and the edges of a face whose boundary edge is longer
        /// than `max_length` only while longer than 3/4 of it (bisection
        /// towards it would never end); 0: boundary edges are split like
        /// the others.
        pub keep_boundary: u32,
    }
}

impl SplitLongEdges {
    /// Splits every edge longer than `max_length`, boundary edges too.
    pub const fn new(max_length: f32) -> SplitLongEdges {
        SplitLongEdges {
            max_length,
            keep_boundary: 0,
        }
    }
}

impl CavityApp for SplitLongEdges {
    const TEMPLATE: Template = Template::EdgeFaces;
    const MAX_NEW: [u32; 3] = [1, 4, 4];
    const JOINS_BOUNDARY: bool = false;
    const SCREENS: bool = true;
    fn screen<B: Block>(&self, ctx: &Ctx<'_, B>, e: u32) -> bool {
        // A NaN length passes: `create` does not turn it down either.
        let len = length(ctx, e);
        len > self.max_length || len.is_nan()
    }
    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, e: u32) -> bool {
        let (n, faces) = ctx.edge_faces(e);
        let len = length(ctx, e);
        let kept = |g: u32| self.keep_boundary != 0 && ctx.edge_faces(g).0 == 1;
        if !matches!(n, 1 | 2) || len <= self.max_length || kept(e) {
            return false;
        }
        for &f in &faces[..n as usize] {
            if (0..3).any(|i| {
                let g = ctx.copy.face_edge(f, i).0;
                let l = length(ctx, g);
                // A face on a kept boundary edge that is too long would be
                // bisected towards it without end: its edges are split
                // only while longer than 3/4 of it.
                if kept(g) {
                    l > self.max_length && len < 0.75 * l
                } else {
                    l > len
                }
            }) {
                if !ctx.is_owned(Kind::Face, f) {
                    // A ribbon face's longer edge is its owner's to split,
                    // which the cleanup shows here: look again next sweep.
                    ctx.defer();
                }
                return false;
            }
        }
        true
    }
    fn priority<B: Block>(&self, ctx: &Ctx<'_, B>, e: u32, _: u32) -> u32 {
        longest_first(length(ctx, e))
    }
    fn fill<B: Block>(&self, fill: &mut FillIn<'_, B>) -> bool {
        let interior = simple_loop(fill) && fill.boundary_len() == 4;
        let boundary = simple_chain(fill) && fill.boundary_len() == 2;
        if !interior && !boundary {
            return false;
        }
        let [a, b] = fill.ctx.edge_vertices(fill.seed());
        let at = midpoint(fill.ctx.position(a), fill.ctx.position(b));
        star_fill(fill, at)
    }
}

parameters! {
    /// Face split 1 to 3 (template `Face`): every face larger than `max_area`
    /// gets a vertex at its centroid.
    pub struct SplitLargeFaces {
        /// Largest face area left alone.
        pub max_area: f32,
    }
}

impl CavityApp for SplitLargeFaces {
    const TEMPLATE: Template = Template::Face;
    const MAX_NEW: [u32; 3] = [1, 3, 3];
    const JOINS_BOUNDARY: bool = false;
    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, f: u32) -> bool {
        area(ctx.face_vertices(f).map(|v| ctx.position(v))) > self.max_area
    }
    fn fill<B: Block>(&self, fill: &mut FillIn<'_, B>) -> bool {
        if !simple_loop(fill) || fill.boundary_len() != 3 {
            return false;
        }
        let c = centroid(fill);
        star_fill(fill, c)
    }
}

parameters! {
    /// Edge collapse (template `EdgeStar`): every interior edge shorter than
    /// `min_length` becomes a vertex at its midpoint, when the two stars form
    /// a disk (every edge on the two vertices has two faces, and the faces
    /// number the boundary's length plus two) and the link condition holds
    /// (the loop around the disk visits distinct vertices): the mesh keeps
    /// its topology.
    pub struct CollapseShortEdges {
        /// Shortest edge left alone.
        pub min_length: f32,
    }
}

impl CavityApp for CollapseShortEdges {
    const TEMPLATE: Template = Template::EdgeStar;
    const MAX_NEW: [u32; 3] = [1, MAX_LOOP, MAX_LOOP];
    const JOINS_BOUNDARY: bool = false;
    fn max_new(&self, boundary: u32) -> [u32; 3] {
        [1, boundary, boundary]
    }
    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, e: u32) -> bool {
        interior(ctx, e) && length(ctx, e) < self.min_length
    }
    fn priority<B: Block>(&self, ctx: &Ctx<'_, B>, e: u32, _: u32) -> u32 {
        shortest_first(length(ctx, e))
    }
    fn fill<B: Block>(&self, fill: &mut FillIn<'_, B>) -> bool {
        if !collapsible(fill) {
            return false;
        }
        let [a, b] = fill.ctx.edge_vertices(fill.seed());
        let at = midpoint(fill.ctx.position(a), fill.ctx.position(b));
        star_fill(fill, at)
    }
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

parameters! {
    /// Vertex split (template `VertexStar`): every interior vertex with more
    /// than `max_valence` edges becomes two vertices joined by a new edge.
    /// The loop of its `k` neighbours is cut at two of them, `b_0` and
    /// `b_h` (`h = k / 2`); one new vertex takes the fan over `b_0..b_h`,
    /// the other the fan over `b_h..b_0`, and two faces along the new edge
    /// close the gap (+1 vertex, +3 edges, +2 faces; valences about `k / 2
    /// + 2`). Each new vertex lies halfway between the old one and the
    /// centroid of its half of the loop. Declined unless the star is a disk
    /// whose loop has distinct vertices (at most [`MAX_LOOP`]).
    pub struct SplitVertices {
        /// Largest valence left alone; values below 5 count as 5 (a split
        /// of a vertex of valence `k` leaves valences `k / 2 + 2` and
        /// `(k + 1) / 2 + 2`, below `k` only from 5 on: a lower limit would
        /// split for ever).
        pub max_valence: u32,
    }
}

impl CavityApp for SplitVertices {
    const TEMPLATE: Template = Template::VertexStar;
    const MAX_NEW: [u32; 3] = [2, MAX_LOOP + 3, MAX_LOOP + 2];
    fn max_new(&self, boundary: u32) -> [u32; 3] {
        [2, boundary + 3, boundary + 2]
    }
    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, v: u32) -> bool {
        let mut valence = 0;
        let interior = ctx.vertex_edges(v).all(|e| {
            valence += 1;
            ctx.edge_faces(e).0 == 2
        });
        interior && valence > self.max_valence.max(5)
    }
    fn priority<B: Block>(&self, ctx: &Ctx<'_, B>, v: u32, _: u32) -> u32 {
        // Higher valences first.
        0xffff - ctx.vertex_edges(v).count().min(0xffff) as u32
    }
    fn fill<B: Block>(&self, fill: &mut FillIn<'_, B>) -> bool {
        let k = fill.boundary_len();
        let disk = fill.deleted_faces().count() as u32 == k;
        if !disk || !simple_loop(fill) || !(4..=MAX_LOOP).contains(&k) {
            return false;
        }
        vertex_split_fill(fill)
    }
}

/// Fills the closed loop `b_0..b_{k-1}` of a vertex star (template
/// `VertexStar`, `4 <= k <= MAX_LOOP` distinct vertices) with a vertex
/// split (see [`SplitVertices`]): two new vertices, `k + 3` edges and
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

parameters! {
    /// Face collapse (template `FaceStar`): every interior face smaller
    /// than `min_area` becomes one vertex at its centroid, joined to the
    /// loop around its three vertices' stars, when the stars form a disk
    /// and the loop visits distinct vertices ([`collapses_to_a_point`]):
    /// the mesh keeps its topology (-2 vertices, -6 edges, -4 faces).
    pub struct CollapseSmallFaces {
        /// Smallest face area left alone.
        pub min_area: f32,
    }
}

impl CavityApp for CollapseSmallFaces {
    const TEMPLATE: Template = Template::FaceStar;
    const MAX_NEW: [u32; 3] = [1, MAX_LOOP, MAX_LOOP];
    const JOINS_BOUNDARY: bool = false;
    fn max_new(&self, boundary: u32) -> [u32; 3] {
        [1, boundary, boundary]
    }
    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, f: u32) -> bool {
        let p = ctx.face_vertices(f).map(|v| ctx.position(v));
        (0..3).all(|i| interior(ctx, ctx.copy.face_edge(f, i).0)) && area(p) < self.min_area
    }
    fn priority<B: Block>(&self, ctx: &Ctx<'_, B>, f: u32, _: u32) -> u32 {
        let p = ctx.face_vertices(f).map(|v| ctx.position(v));
        shortest_first(area(p))
    }
    fn fill<B: Block>(&self, fill: &mut FillIn<'_, B>) -> bool {
        let corners = fill.ctx.face_vertices(fill.seed());
        if !collapses_to_a_point(fill, &corners) {
            return false;
        }
        let p = corners.map(|v| fill.ctx.position(v));
        let at = [0, 1, 2].map(|k| (p[0][k] + p[1][k] + p[2][k]) / 3.0);
        star_fill(fill, at)
    }
}

/// Whether `p` lies inside the ball around `centre` of radius `radius`.
fn in_ball(p: [f32; 3], centre: [f32; 3], radius: f32) -> bool {
    norm(sub(p, centre)) < radius
}

parameters! {
    /// Vertex delete (template `VertexStar`): every vertex inside a ball is
    /// removed and its hole re-triangulated as a fan from the loop's first
    /// vertex (declined when a diagonal already exists or the loop is not a
    /// simple one of at most [`MAX_LOOP`] vertices).
    pub struct DeleteVerticesInBall {
        /// Centre of the ball.
        pub centre: [f32; 3],
        /// Radius of the ball.
        pub radius: f32,
    }
}

impl CavityApp for DeleteVerticesInBall {
    const TEMPLATE: Template = Template::VertexStar;
    const MAX_NEW: [u32; 3] = [0, MAX_LOOP - 3, MAX_LOOP - 2];
    fn max_new(&self, boundary: u32) -> [u32; 3] {
        [0, boundary.saturating_sub(3), boundary.saturating_sub(2)]
    }
    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, v: u32) -> bool {
        in_ball(ctx.position(v), self.centre, self.radius)
    }
    fn fill<B: Block>(&self, fill: &mut FillIn<'_, B>) -> bool {
        let n = fill.boundary_len();
        if !simple_loop(fill) || !(3..=MAX_LOOP).contains(&n) {
            return false;
        }
        let x0 = fill.boundary_vertex(0);
        if (2..n - 1).any(|i| fill.ctx.has_edge(x0, fill.boundary_vertex(i))) {
            return false;
        }
        // Diagonals x0–x_i, i = 2..n-2; triangles (x0, x_i, x_{i+1}).
        let mut prev: HalfEdge = fill.boundary_edge(0);
        for i in 1..n - 1 {
            let xi1 = fill.boundary_vertex(i + 1);
            let closing = if i == n - 2 {
                fill.boundary_edge(n - 1)
            } else {
                let Some(d) = fill.add_edge(x0, xi1) else {
                    return false;
                };
                fill.half_edge(d, xi1)
            };
            if fill
                .add_face([prev, fill.boundary_edge(i), closing])
                .is_none()
            {
                return false;
            }
            prev = HalfEdge {
                edge: closing.edge,
                reversed: !closing.reversed,
            };
        }
        true
    }
}

parameters! {
    /// Face delete (template `Face`, no fill-in): every face whose centroid
    /// lies inside a ball is removed, leaving a hole.
    pub struct DeleteFacesInBall {
        /// Centre of the ball.
        pub centre: [f32; 3],
        /// Radius of the ball.
        pub radius: f32,
    }
}

impl CavityApp for DeleteFacesInBall {
    const TEMPLATE: Template = Template::Face;
    const MAX_NEW: [u32; 3] = [0, 0, 0];
    const JOINS_BOUNDARY: bool = false;
    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, f: u32) -> bool {
        let p = ctx.face_vertices(f).map(|v| ctx.position(v));
        let c = [0, 1, 2].map(|k| (p[0][k] + p[1][k] + p[2][k]) / 3.0);
        in_ball(c, self.centre, self.radius)
    }
    fn fill<B: Block>(&self, _fill: &mut FillIn<'_, B>) -> bool {
        true
    }
}

parameters! {
    /// Edge delete (template `EdgeFaces`, no fill-in): every edge whose
    /// midpoint lies inside a ball is removed with its faces, opening
    /// holes; its vertices and other edges stay.
    pub struct DeleteEdgesInBall {
        /// Centre of the ball.
        pub centre: [f32; 3],
        /// Radius of the ball.
        pub radius: f32,
    }
}

impl CavityApp for DeleteEdgesInBall {
    const TEMPLATE: Template = Template::EdgeFaces;
    const MAX_NEW: [u32; 3] = [0, 0, 0];
    const JOINS_BOUNDARY: bool = false;
    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, e: u32) -> bool {
        let [a, b] = ctx.edge_vertices(e);
        in_ball(
            midpoint(ctx.position(a), ctx.position(b)),
            self.centre,
            self.radius,
        )
    }
    fn fill<B: Block>(&self, _fill: &mut FillIn<'_, B>) -> bool {
        true
    }
}

parameters! {
    /// A user-defined cavity (template `Custom(Face)`, section 3): a seed face
    /// larger than `min_area` with three interior edges deletes its edges, so
    /// the three faces across them go too; the hexagonal hole gets a vertex at
    /// its centroid (four faces become six).
    pub struct RefineFaceNeighbourhood {
        /// Largest seed-face area left alone.
        pub min_area: f32,
    }
}

impl CavityApp for RefineFaceNeighbourhood {
    const TEMPLATE: Template = Template::Custom(Kind::Face);
    const MAX_NEW: [u32; 3] = [1, 6, 6];
    const JOINS_BOUNDARY: bool = false;
    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, f: u32) -> bool {
        (0..3).all(|i| interior(ctx, ctx.copy.face_edge(f, i).0))
            && area(ctx.face_vertices(f).map(|v| ctx.position(v))) > self.min_area
    }
    fn deleted<B: Block>(&self, ctx: &Ctx<'_, B>, f: u32, mut delete: impl FnMut(Kind, u32)) {
        for i in 0..3 {
            delete(Kind::Edge, ctx.copy.face_edge(f, i).0);
        }
    }
    fn fill<B: Block>(&self, fill: &mut FillIn<'_, B>) -> bool {
        if !simple_loop(fill) || fill.boundary_len() != 6 || fill.deleted_faces().count() != 4 {
            return false;
        }
        let c = centroid(fill);
        star_fill(fill, c)
    }
}

crate::cavity_kernels!(
    @core
    SplitLongEdges,
    SplitLargeFaces,
    CollapseShortEdges,
    DeleteVerticesInBall,
    DeleteEdgesInBall,
    DeleteFacesInBall,
    RefineFaceNeighbourhood,
    SplitVertices,
    CollapseSmallFaces,
);

//! Mesh operations on the cavity operator that the tests run (dynamic
//! paper, section 3 and fig. 4), one [`CavityApp`] per template: face
//! split 1 to 3, edge collapse, vertex split, small-face collapse, vertex,
//! edge and face delete, and a user-defined cavity (a face with its three
//! neighbours). Each takes its criterion's parameters by value, so the same
//! struct is the GPU kernel's argument and the CPU backend's application.
//! Positions are vertex attributes 0..3, in the mesh's units.

use cavity_device::block::Block;
use cavity_device::dynamic::cavity::criteria::{interior, length, shortest_first};
use cavity_device::dynamic::cavity::fills::{
    MAX_LOOP, centroid, collapses_to_a_point, collapsible, simple_loop, star_fill,
    vertex_split_fill,
};
use cavity_device::dynamic::cavity::{CavityApp, Ctx, FillIn, HalfEdge, Template};
use cavity_device::geometry::{area, midpoint, norm, sub};
use cavity_device::layout::Kind;
use cavity_device::parameters;

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

cavity_device::cavity_kernels!(
    SplitLargeFaces,
    CollapseShortEdges,
    DeleteVerticesInBall,
    DeleteEdgesInBall,
    DeleteFacesInBall,
    RefineFaceNeighbourhood,
    SplitVertices,
    CollapseSmallFaces,
);

//! The cavity applications of isotropic remeshing (Botsch and Kobbelt
//! 2004; dynamic paper, section 6.3): the collapse of short edges that
//! keeps every new edge short and no face folded, and the edge flip that
//! brings the valences of the four vertices closer to 6 (4 on the
//! boundary). The split of long edges is
//! [`crate::operations::SplitLongEdges`]. Feature edges (a dihedral angle
//! whose cosine is below `feature_cos`) are neither flipped nor collapsed.

use crate::block::Block;
use crate::dynamic::cavity::{CavityApp, Ctx, FillIn, Template};
use crate::flip;
use crate::layout::Kind;
use crate::operations::{
    MAX_LOOP, collapsible, dot, interior, length, midpoint, norm, normal, parameters,
    shortest_first, star_fill, sub,
};

/// Cosine of the dihedral angle at interior edge `e` (1 when flat), from
/// the normals of its two faces; `None` when one is degenerate.
pub fn dihedral_cos<B: Block>(ctx: &Ctx<'_, B>, e: u32) -> Option<f32> {
    let (_, [f0, f1]) = ctx.edge_faces(e);
    let n = [f0, f1].map(|f| {
        let [a, b, c] = ctx.face_vertices(f).map(|v| ctx.position(v));
        normal(a, b, c)
    });
    let l = norm(n[0]) * norm(n[1]);
    (l > 0.0).then(|| dot(n[0], n[1]) / l)
}

/// Whether interior edge `e` is smooth enough to change (not a feature).
fn smooth<B: Block>(ctx: &Ctx<'_, B>, e: u32, feature_cos: f32) -> bool {
    dihedral_cos(ctx, e).is_some_and(|c| c >= feature_cos)
}

/// Valence of `v` and its target: 4 on the mesh boundary (an edge with one
/// face), 6 inside (exact when the patch owns `v`).
pub fn valence<B: Block>(ctx: &Ctx<'_, B>, v: u32) -> (i32, i32) {
    let mut n = 0;
    let mut boundary = false;
    for e in ctx.vertex_edges(v) {
        n += 1;
        boundary |= ctx.edge_faces(e).0 == 1;
    }
    (n, if boundary { 4 } else { 6 })
}

/// Whether flipping `ab` to `cd` lowers the summed distance of the four
/// valences from their targets.
fn improves<B: Block>(ctx: &Ctx<'_, B>, q: [u32; 4]) -> bool {
    // The flip takes an edge from a and b and gives one to c and d.
    let change = [-1, -1, 1, 1];
    let (mut before, mut after) = (0, 0);
    for (&v, dv) in q.iter().zip(change) {
        let (n, target) = valence(ctx, v);
        before += (n - target).abs();
        after += (n + dv - target).abs();
    }
    after < before
}

/// Whether the faces `cda` and `dcb` of the flipped edge face the same way
/// (the quadrilateral is convex enough: the flip folds nothing over).
fn unfolded<B: Block>(ctx: &Ctx<'_, B>, [a, b, c, d]: [u32; 4]) -> bool {
    let [pa, pb, pc, pd] = [a, b, c, d].map(|v| ctx.position(v));
    dot(normal(pc, pd, pa), normal(pd, pc, pb)) > 0.0
}

parameters! {
    /// Valence-improving edge flip (template `EdgeFaces`): an interior edge
    /// is flipped when that lowers `Σ |valence - target|` over its two
    /// vertices and the two opposite ones (target 6, 4 on the boundary),
    /// folds no face over, and the edge is not a feature.
    pub struct ImproveValence {
        /// Edges whose dihedral-angle cosine is below this are features and
        /// stay (-1 or less: no features).
        pub feature_cos: f32,
    }
}

impl CavityApp for ImproveValence {
    const TEMPLATE: Template = Template::EdgeFaces;
    const MAX_NEW: [u32; 3] = [0, 1, 2];
    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, e: u32) -> bool {
        // The valence of a vertex this patch does not own may be short
        // here: then only the fill-in (which owns all four) decides.
        flip::candidate(ctx, e).is_some_and(|q| {
            let exact = q.iter().all(|&v| ctx.is_owned(Kind::Vertex, v));
            smooth(ctx, e, self.feature_cos) && unfolded(ctx, q) && (!exact || improves(ctx, q))
        })
    }
    fn fill<B: Block>(&self, fill: &mut FillIn<'_, B>) -> bool {
        let ctx = fill.ctx;
        flip::fill(fill, |q| improves(ctx, q) && unfolded(ctx, q))
    }
}

parameters! {
    /// Edge collapse for remeshing (template `EdgeStar`): an interior,
    /// non-feature edge shorter than `min_length` becomes a vertex at its
    /// midpoint when the topology stays ([`collapsible`]), no new edge is
    /// longer than `max_length`, and no new face turns against the face it
    /// replaces. Shorter edges go first.
    pub struct CollapseShortEdgesSafely {
        /// Shortest edge left alone.
        pub min_length: f32,
        /// Longest edge a collapse may create.
        pub max_length: f32,
        /// Feature threshold, as for [`ImproveValence`].
        pub feature_cos: f32,
    }
}

impl CavityApp for CollapseShortEdgesSafely {
    const TEMPLATE: Template = Template::EdgeStar;
    const MAX_NEW: [u32; 3] = [1, MAX_LOOP, MAX_LOOP];
    const JOINS_BOUNDARY: bool = false;
    fn max_new(&self, boundary: u32) -> [u32; 3] {
        [1, boundary, boundary]
    }
    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, e: u32) -> bool {
        interior(ctx, e) && length(ctx, e) < self.min_length && smooth(ctx, e, self.feature_cos)
    }
    fn priority<B: Block>(&self, ctx: &Ctx<'_, B>, e: u32, _: u32) -> u32 {
        shortest_first(length(ctx, e))
    }
    fn fill<B: Block>(&self, fill: &mut FillIn<'_, B>) -> bool {
        if !collapsible(fill) {
            return false;
        }
        let ctx = fill.ctx;
        let [a, b] = ctx.edge_vertices(fill.seed());
        let m = midpoint(ctx.position(a), ctx.position(b));
        let n = fill.boundary_len();
        let keeps_shape = (0..n).all(|i| {
            let h = fill.boundary_edge(i);
            let [x, y] = [fill.boundary_vertex(i), fill.boundary_end(i)].map(|v| ctx.position(v));
            // The old face on this boundary half-edge (it runs the same way
            // there) and the new one, x → y → m.
            let old = fill
                .deleted_faces()
                .find(|&f| (0..3).any(|j| ctx.copy.face_edge(f, j) == (h.edge, h.reversed)));
            let Some(f) = old else {
                return false;
            };
            let [p, q, r] = ctx.face_vertices(f).map(|v| ctx.position(v));
            norm(sub(m, x)) <= self.max_length && dot(normal(x, y, m), normal(p, q, r)) > 0.0
        });
        keeps_shape && star_fill(fill, m)
    }
}

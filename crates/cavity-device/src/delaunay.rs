//! Delaunay edge flips (dynamic paper, section 6.2): an edge whose two
//! opposite angles sum to more than π is flipped; repeated until no such
//! edge is left (terminates on surfaces, Cheng and Dey 2008). The cavity is
//! the edge with its two faces; the fill-in joins the two opposite vertices.

use crate::block::Block;
use crate::dynamic::cavity::{CavityApp, Ctx, FillIn, HalfEdge, Template};

/// Flips of edges with `cot α + cot β < -TOLERANCE` (opposite angles `α`,
/// `β`; the sum exceeds π exactly when the cotangents sum below zero).
pub const TOLERANCE: f32 = 1e-5;

/// The Delaunay edge-flip application.
#[derive(Clone, Copy, Debug, Default)]
pub struct Delaunay;

fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// Cotangent of the angle at `o` between `a` and `b`; `None` when the
/// triangle is degenerate.
pub fn cotangent(o: [f32; 3], a: [f32; 3], b: [f32; 3]) -> Option<f32> {
    let (u, v) = (sub(a, o), sub(b, o));
    let dot = u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
    let c = [
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    ];
    let cross = core::f32::math::sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
    (cross > 0.0).then(|| dot / cross)
}

impl CavityApp for Delaunay {
    const TEMPLATE: Template = Template::EdgeFaces;
    const MAX_NEW: [u32; 3] = [0, 1, 2];

    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, e: u32) -> bool {
        let (n, [f0, f1]) = ctx.edge_faces(e);
        if n != 2 {
            return false;
        }
        let [a, b] = ctx.edge_vertices(e);
        let c = ctx.opposite_vertex(f0, e);
        let d = ctx.opposite_vertex(f1, e);
        // Cheap rejections of flips the fill-in would decline (its check of
        // the new edge is exact once the patch owns `c` and `d`; a ribbon
        // copy seen here is current as of the last cleanup).
        if c == d || ctx.traverses_forward(f0, e) == ctx.traverses_forward(f1, e) {
            return false;
        }
        if ctx.has_edge(c, d) {
            // The edge seen may be a ribbon copy that its owner has flipped
            // away since the last cleanup: look again next sweep.
            ctx.defer();
            return false;
        }
        let (pa, pb) = (ctx.position(a), ctx.position(b));
        match (
            cotangent(ctx.position(c), pa, pb),
            cotangent(ctx.position(d), pa, pb),
        ) {
            (Some(x), Some(y)) => x + y < -TOLERANCE,
            _ => false,
        }
    }

    fn fill<B: Block>(&self, fill: &mut FillIn<'_, B>) -> bool {
        if !fill.is_closed() || fill.boundary_len() != 4 {
            return false;
        }
        let [a, b] = fill.ctx.edge_vertices(fill.seed());
        let x: [u32; 4] = [0, 1, 2, 3].map(|i| fill.boundary_vertex(i));
        let h: [HalfEdge; 4] = [0, 1, 2, 3].map(|i| fill.boundary_edge(i));
        // The opposite vertices sit at alternate loop positions.
        let i = if x[0] != a && x[0] != b { 0 } else { 1 };
        let (c, d) = (x[i], x[i + 2]);
        if c == d || fill.ctx.has_edge(c, d) {
            return false;
        }
        let Some(e) = fill.add_edge(c, d) else {
            return false;
        };
        let dc = fill.half_edge(e, d);
        let cd = fill.half_edge(e, c);
        fill.add_face([h[i], h[i + 1], dc]).is_some()
            && fill
                .add_face([h[(i + 2) % 4], h[(i + 3) % 4], cd])
                .is_some()
    }
}

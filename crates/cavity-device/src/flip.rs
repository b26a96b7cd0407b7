//! The edge flip on the cavity operator (dynamic paper, section 3, fig. 4):
//! the cavity is an interior edge with its two faces, the fill-in joins the
//! two opposite vertices. Shared by the applications that flip for their
//! own criterion (Delaunay, valence).

use crate::block::Block;
use crate::dynamic::cavity::{Ctx, FillIn, HalfEdge};

/// The vertices `[a, b, c, d]` of a flip of edge `e = ab` (`c`, `d` its
/// opposite vertices), or `None` when `e` cannot be flipped: not on two
/// consistently oriented faces, the opposite vertices equal, or already
/// joined (then the view may be a ribbon copy its owner has flipped away
/// since the last cleanup, and the patch looks again next sweep).
pub fn candidate<B: Block>(ctx: &Ctx<'_, B>, e: u32) -> Option<[u32; 4]> {
    let (n, [f0, f1]) = ctx.edge_faces(e);
    if n != 2 {
        return None;
    }
    let [a, b] = ctx.edge_vertices(e);
    let c = ctx.opposite_vertex(f0, e);
    let d = ctx.opposite_vertex(f1, e);
    if c == d || ctx.traverses_forward(f0, e) == ctx.traverses_forward(f1, e) {
        return None;
    }
    if ctx.has_edge(c, d) {
        ctx.defer();
        return None;
    }
    Some([a, b, c, d])
}

/// Fills the cavity of a flip: the edge between the opposite vertices and
/// its two faces, when the cavity is a closed loop of four half-edges and
/// `accept([a, b, c, d])` (exact here: the patch owns the four vertices and
/// their stars). False when declined or out of slots.
pub fn fill<B: Block>(fill: &mut FillIn<'_, B>, accept: impl Fn([u32; 4]) -> bool) -> bool {
    if !fill.is_closed() || fill.boundary_len() != 4 {
        return false;
    }
    let [a, b] = fill.ctx.edge_vertices(fill.seed());
    let x: [u32; 4] = [0, 1, 2, 3].map(|i| fill.boundary_vertex(i));
    let h: [HalfEdge; 4] = [0, 1, 2, 3].map(|i| fill.boundary_edge(i));
    // The opposite vertices sit at alternate loop positions.
    let i = if x[0] != a && x[0] != b { 0 } else { 1 };
    let (c, d) = (x[i], x[i + 2]);
    if c == d || fill.ctx.has_edge(c, d) || !accept([a, b, c, d]) {
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

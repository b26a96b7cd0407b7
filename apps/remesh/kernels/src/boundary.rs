//! The boundary star of a vertex: what a patch sees of a vertex on the
//! mesh boundary (its boundary edges, their other ends, whether an edge at
//! it is non-manifold), and whether the boundary polyline turns gently
//! there. The smoothing ([`crate::smooth`]) keeps corners with it; the
//! remeshing collapse ([`crate::CollapseShortEdgesSafely`]) moves only
//! plain boundary vertices.

use cavity_device::block::Block;
use cavity_device::dynamic::cavity::Ctx;
use cavity_device::geometry::{dot, norm, sub};
use cavity_device::layout::Kind;

/// What the patch sees of vertex `v` on the mesh boundary: its boundary
/// edges (one face) and their other ends, and whether an edge at `v` has
/// more than two faces. Exact when the patch owns `v`; of a ribbon
/// vertex, whose outer edges may show one face here, nothing is known
/// (`known` false): it is taken as interior, and as movable at the end of
/// a boundary edge, and the fill-in, which owns it, decides.
#[derive(Clone, Copy)]
pub struct BoundaryStar {
    /// Boundary edges at `v`.
    pub edges: u32,
    /// The other ends of the first two.
    pub ends: [u32; 2],
    /// Whether an edge at `v` has three or more faces.
    pub non_manifold: bool,
    /// Whether the patch owns `v` (else nothing above is known).
    pub known: bool,
}

impl BoundaryStar {
    /// The boundary star of `v`.
    pub fn of<B: Block>(ctx: &Ctx<'_, B>, v: u32) -> BoundaryStar {
        let mut star = BoundaryStar {
            edges: 0,
            ends: [v; 2],
            non_manifold: false,
            known: ctx.is_owned(Kind::Vertex, v),
        };
        if !star.known {
            return star;
        }
        for g in ctx.vertex_edges(v) {
            match ctx.edge_faces(g).0 {
                1 => {
                    if star.edges < 2 {
                        let [x, y] = ctx.edge_vertices(g);
                        star.ends[star.edges as usize] = if x == v { y } else { x };
                    }
                    star.edges += 1;
                }
                2 => {}
                _ => star.non_manifold = true,
            }
        }
        star
    }

    /// Whether `v` is on the mesh boundary.
    pub fn on_boundary(&self) -> bool {
        self.edges > 0 || self.non_manifold
    }

    /// Whether `v` is a plain boundary vertex (two boundary edges, no
    /// non-manifold edge) whose turning angle's cosine is at least
    /// `boundary_cos` (not a corner), at position `at`.
    pub fn movable<B: Block>(&self, ctx: &Ctx<'_, B>, at: [f32; 3], boundary_cos: f32) -> bool {
        if !self.known {
            return boundary_cos <= 1.0;
        }
        if self.edges != 2 || self.non_manifold || boundary_cos > 1.0 {
            return false;
        }
        let [u, w] = self.ends.map(|x| ctx.position(x));
        turns_gently(at, u, w, boundary_cos)
    }
}

/// Whether the boundary polyline `u, at, w` turns at `at` by an angle
/// whose cosine is at least `boundary_cos` (`at` is no corner).
pub fn turns_gently(at: [f32; 3], u: [f32; 3], w: [f32; 3], boundary_cos: f32) -> bool {
    let (d0, d1) = (sub(at, u), sub(w, at));
    dot(d0, d1) >= boundary_cos * norm(d0) * norm(d1)
}

//! Edge split by longest-edge bisection (Rivara 1984) on the cavity
//! operator (template `EdgeFaces`): the split of remeshing and tracking.

use cavity_device::block::Block;
use cavity_device::dynamic::cavity::criteria::{length, longest_first};
use cavity_device::dynamic::cavity::fills::{simple_chain, simple_loop, star_fill};
use cavity_device::dynamic::cavity::{CavityApp, Ctx, FillIn, Template};
use cavity_device::geometry::midpoint;
use cavity_device::layout::Kind;
use cavity_device::parameters;

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

cavity_device::cavity_kernels!(SplitLongEdges);

//! The valence flips: each vertex's valence stored by a per-element
//! computation ([`StoreValences`]), and the edge flip that brings the
//! valences of its four vertices closer to their targets
//! ([`ImproveValence`]), which also removes caps and small angles.

use crate::shape::{
    encode, has_small_angle, is_cap, may_improve, removes_cap, smooth, unfolded, valence,
};
use core::cell::Cell;

use cavity_device::attribute::Attr;
use cavity_device::block::Block;
use cavity_device::dynamic::cavity::{CavityApp, Ctx, FillIn, Template};
use cavity_device::dynamic::compute::{Element, ElementComputation};
use cavity_device::flip;
use cavity_device::geometry::{norm, sub};
use cavity_device::query::Query;

cavity_device::parameters! {
    /// Stores every owned vertex's valence (its edge count and whether it
    /// is on the mesh boundary, [`encode`]) in `valence`, so that the flips
    /// of patches holding it as a ribbon copy read it ([`ImproveValence`];
    /// run at the start of every sweep of the flips, whose fill-ins keep it
    /// nearly current within the sweep). A per-vertex computation on VE
    /// with the faces per edge counted.
    pub struct StoreValences {
        /// The stored valences (a `u32` vertex attribute).
        pub valence: Attr<u32, 1>,
    }
}

impl ElementComputation for StoreValences {
    const QUERY: Query = Query::VE;
    const FACES_PER_EDGE: bool = true;

    fn compute<B: Block>(&self, v: &Element<'_, B>) {
        let boundary = v.neighbors().any(|e| v.edge_face_count(e) == Some(1));
        let target = if boundary { 4 } else { 6 };
        v.set(&self.valence, [encode((v.len() as i32, target))]);
    }
}

cavity_device::parameters! {
    /// Valence-improving edge flip (template `EdgeFaces`): an interior edge
    /// is flipped when that lowers `Σ (valence - target)²` over its two
    /// vertices and the two opposite ones (target 6, 4 on the boundary),
    /// folds no face over, makes no sliver, the new edge is at most
    /// `max_length`, and the edge is not a feature. An edge opposite a
    /// cap's large angle ([`CAP_COS`]) is flipped whatever the valences when
    /// that removes the cap well (`removes_cap`) and the new edge is at most
    /// `max_length`: the repair of degenerate input (issue 24). In the
    /// final repair (`caps_only`), so is an edge that is not a feature and
    /// has a face with an angle below 15° ([`SMALL_ANGLE_SIN`]) when the
    /// flip raises the smallest angle of the two faces (the same test; the
    /// Delaunay flip's aim, kept to the faces the criterion of issue 24
    /// rejects): it takes the small angles that collapses leave next to
    /// vertices that stay (corners, non-manifold vertices) and along
    /// jagged rims. Not with the valence flips: a valence flip may lower a
    /// pair's smallest angle from 14° to 11° (no sliver below 10°), and
    /// the two would undo each other without end; the final repair's flips
    /// only raise it.
    pub struct ImproveValence {
        /// Edges whose dihedral-angle cosine is below this are features and
        /// stay (-1 or less: no features).
        pub feature_cos: f32,
        /// Longest edge a flip may create (`f32::INFINITY`: any).
        pub max_length: f32,
        /// 1: the final repair of `cavity_remesh`: only the edges of caps
        /// and of faces with an angle below 15° are flipped; 0: caps'
        /// edges and valences.
        pub caps_only: u32,
        /// The stored valences ([`StoreValences`]).
        pub valence: Attr<u32, 1>,
    }
}

impl ImproveValence {
    /// Whether the flip of `ab` to `cd` folds nothing, makes no sliver
    /// ([`unfolded`]) and `cd` is at most `max_length`.
    fn shape_ok<B: Block>(&self, ctx: &Ctx<'_, B>, q: [u32; 4]) -> bool {
        self.short_enough(ctx, q) && unfolded(ctx, q)
    }

    /// Whether the new edge `cd` is at most `max_length`.
    fn short_enough<B: Block>(&self, ctx: &Ctx<'_, B>, q: [u32; 4]) -> bool {
        let [c, d] = [q[2], q[3]].map(|v| ctx.position(v));
        norm(sub(c, d)) <= self.max_length
    }

    /// Whether the flip of `ab` to `cd` is taken, judged on what the patch
    /// holds: a cap's edge when that removes it well, any other edge when it
    /// keeps the shape and may lower the valence deviation.
    #[inline(always)]
    fn accepts<B: Block>(&self, ctx: &Ctx<'_, B>, q: [u32; 4]) -> bool {
        if is_cap(ctx, q) {
            self.short_enough(ctx, q) && removes_cap(ctx, q)
        } else {
            let repairs = self.caps_only != 0
                && has_small_angle(ctx, q)
                && self.short_enough(ctx, q)
                && removes_cap(ctx, q);
            repairs
                || self.caps_only == 0
                    && self.shape_ok(ctx, q)
                    && may_improve(ctx, q, &self.valence)
        }
    }
}

impl CavityApp for ImproveValence {
    const TEMPLATE: Template = Template::EdgeFaces;
    const MAX_NEW: [u32; 3] = [0, 1, 2];
    // Inlined: outlined, it takes the context through local memory.
    #[inline(always)]
    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, e: u32) -> bool {
        let Some(q) = flip::candidate(ctx, e) else {
            return false;
        };
        let cap = is_cap(ctx, q);
        let smooth = smooth(ctx, e, self.feature_cos);
        let small = self.caps_only != 0 && smooth && has_small_angle(ctx, q);
        (cap || small || self.caps_only == 0 && smooth) && self.accepts(ctx, q)
    }
    fn fill<B: Block>(&self, fill: &mut FillIn<'_, B>) -> bool {
        let ctx = fill.ctx;
        let flipped = Cell::new(None);
        let done = flip::fill(fill, |q| {
            flipped.set(Some(q));
            self.accepts(ctx, q)
        });
        if let Some(q) = flipped.get().filter(|_| done) {
            // The relations are as before the flip: a and b lose an edge,
            // c and d gain one.
            for (v, dv) in q.into_iter().zip([-1, -1, 1, 1]) {
                let (n, target) = valence(ctx, v);
                fill.set_owned_attr(&self.valence, v, [encode((n + dv, target))]);
            }
        }
        done
    }
}

cavity_device::cavity_kernels!(ImproveValence);
cavity_device::element_kernels!(StoreValences);

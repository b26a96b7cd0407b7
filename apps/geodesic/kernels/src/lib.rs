//! Approximate geodesic distance from source vertices by parallel
//! toplesets propagation (Romero Calla, Fuentes Perez and Montenegro 2019,
//! "Parallel geodesic distance computation on triangle meshes"), as
//! RXMesh section 8.2 and the dynamic paper's section 6.1 run it: the
//! vertices are grouped by their hops from the sources (toplesets, found on
//! the host); each pass relaxes the vertices of a band of toplesets from
//! their faces (VF), and the host moves the band on as its first topleset
//! converges ([`GeodesicRelax`]).
//!
//! The kernel half of the geodesic application crate (`apps/geodesic`).
#![no_std]
#![feature(core_float_math)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

use cavity_device::attribute::Attr;
use cavity_device::block::Block;
use cavity_device::dynamic::compute::{Element, ElementComputation};
use cavity_device::operations::{dot, sub};
use cavity_device::query::Query;

/// The distance at `v` that face `(v, a, b)` gives from the distances
/// `d_a`, `d_b` at its other corners: the point source at distance `d_a`
/// from `a` and `d_b` from `b`, unfolded into the face's plane on the far
/// side of edge `ab` (as the windows of Surazhsky et al. 2005 unfold it),
/// when the straight line from it to `v` crosses `ab` inside the edge;
/// else the shorter path along an edge, `min(d_a + |va|, d_b + |vb|)`.
/// Exact on a planar mesh for a single source whose distances at `a` and
/// `b` are exact (the fast-marching update, a plane wave through `a` and
/// `b`, is not: 1 + √½ instead of √2 at the far corner of a unit square
/// from its near one). Infinite when both distances are.
#[inline(always)]
pub fn update_step(v: [f32; 3], a: [f32; 3], b: [f32; 3], d_a: f32, d_b: f32) -> f32 {
    let length = |x: [f32; 3]| core::f32::math::sqrt(dot(x, x));
    let av = sub(v, a);
    let along = along_edges(v, a, b, d_a, d_b);
    if d_a.is_infinite() || d_b.is_infinite() {
        return along;
    }
    // The face's frame: `a` at the origin, `b` on the x axis, `v` above.
    let ab = sub(b, a);
    let c = length(ab);
    if c.is_nan() || c <= 0.0 {
        return along;
    }
    let vx = dot(av, ab) / c;
    let vy2 = dot(av, av) - vx * vx;
    if vy2.is_nan() || vy2 <= 0.0 {
        return along;
    }
    let vy = core::f32::math::sqrt(vy2);
    // The source below the x axis: |s| = d_a, |s - (c, 0)| = d_b.
    let sx = ((d_a - d_b) * (d_a + d_b) + c * c) / (2.0 * c);
    let sy2 = (d_a - sx) * (d_a + sx);
    if sy2.is_nan() || sy2 < 0.0 {
        return along;
    }
    let sy = -core::f32::math::sqrt(sy2);
    // Where the segment from the source to `v` crosses the x axis.
    let x = sx + (-sy / (vy - sy)) * (vx - sx);
    if x.is_nan() || x <= 0.0 || x >= c {
        return along;
    }
    core::f32::math::sqrt((vx - sx) * (vx - sx) + (vy - sy) * (vy - sy))
}

/// The distance at `v` along the edges of face `(v, a, b)`:
/// `min(d_a + |va|, d_b + |vb|)`.
#[inline(always)]
pub fn along_edges(v: [f32; 3], a: [f32; 3], b: [f32; 3], d_a: f32, d_b: f32) -> f32 {
    let length = |x: [f32; 3]| core::f32::math::sqrt(dot(x, x));
    let (e0, e1) = (d_a + length(sub(v, a)), d_b + length(sub(v, b)));
    if e1 < e0 { e1 } else { e0 }
}

cavity_device::parameters! {
    /// One pass of the propagation: every vertex of a topleset in
    /// `[band_start, band_end)` takes the smallest of its distance in
    /// `from` and what each of its faces gives ([`update_step`]) into `to`;
    /// with `edges_only` 1 a face gives only the paths along its edges
    /// ([`along_edges`]). A vertex of the topleset before the band copies
    /// `from` into `to` (the band starts at most one topleset later each
    /// pass, so a vertex it leaves holds its last distance in both
    /// attributes); the others, sources included, are not active
    /// (both attributes hold their distance, or infinity ahead of the
    /// band), and a patch with none in the band or behind it is skipped.
    /// A vertex has settled when its distance is finite and did not
    /// change or changed by less than `tolerance` of its old value; the
    /// settled vertices of topleset `band_start` are counted
    /// (`Element::count`: the host takes the count after the pass), or
    /// with `whole_band` 1 the vertices of the band that have not, and the
    /// patch of a vertex whose distance changed is marked
    /// (`Element::mark_patch`).
    pub struct GeodesicRelax {
        /// Hops from the nearest source (`u32::MAX`: unreachable).
        pub level: Attr<u32, 1>,
        /// The source a vertex is fewest hops from: a face unfolds a
        /// point source only from two corners of the same origin (two
        /// distances from different sources give a virtual source that
        /// can undercut every path); else it gives the paths along its
        /// edges. A heuristic: near where two sources' regions meet, a
        /// corner's distance can come from a source other than its
        /// hop-nearest one (the settling passes then keep the result
        /// 1-Lipschitz).
        pub origin: Attr<u32, 1>,
        /// The distances read.
        pub from: Attr<f32, 1>,
        /// The distances written (not `from`).
        pub to: Attr<f32, 1>,
        /// The band's first topleset.
        pub band_start: u32,
        /// The topleset after the band's last.
        pub band_end: u32,
        /// Relative change below which a vertex has converged.
        pub tolerance: f32,
        /// 1: count the vertices of the whole band that have not settled
        /// (the settling passes), instead of the settled ones of its first
        /// topleset.
        pub whole_band: u32,
        /// 1: relax along the edges only.
        pub edges_only: u32,
    }
}

impl ElementComputation for GeodesicRelax {
    const QUERY: Query = Query::VF;

    fn active<B: Block>(&self, v: &Element<'_, B>) -> bool {
        let level = v.get(&self.level)[0];
        level != 0 && level.saturating_add(1) >= self.band_start && level < self.band_end
    }

    fn compute<B: Block>(&self, v: &Element<'_, B>) {
        let level = v.get(&self.level)[0];
        let old = v.get(&self.from)[0];
        if level < self.band_start {
            v.set(&self.to, [old]);
            return;
        }
        let l = v.local();
        let p = v.position(l);
        let mut new = old;
        for f in v.neighbors() {
            let [x, y, z] = v.face_vertices(f);
            let [a, b] = if x == l {
                [y, z]
            } else if y == l {
                [z, x]
            } else {
                [x, y]
            };
            let (pa, pb) = (v.position(a), v.position(b));
            let (d_a, d_b) = (v.get_at(&self.from, a)[0], v.get_at(&self.from, b)[0]);
            let same = v.get_at(&self.origin, a)[0] == v.get_at(&self.origin, b)[0];
            let d = if self.edges_only != 0 || !same {
                along_edges(p, pa, pb, d_a, d_b)
            } else {
                update_step(p, pa, pb, d_a, d_b)
            };
            if d < new {
                new = d;
            }
        }
        v.set(&self.to, [new]);
        // A settling pass marks the patches where a distance changed: only
        // they and their neighbours can change in the next one.
        if self.whole_band != 0 && new < old {
            v.mark_patch();
        }
        // A distance that stays (0 at a vertex on a source's position
        // too) has converged; one still infinite has not.
        let settled = new.is_finite() && (new == old || (old - new) < self.tolerance * old);
        // Few atomics either way: the band's first topleset is small, and
        // few vertices still change in a settling pass.
        let counted = if self.whole_band != 0 {
            !settled
        } else {
            settled && level == self.band_start
        };
        if counted {
            v.count();
        }
    }
}

cavity_device::element_kernels!(GeodesicRelax);

//! Approximate geodesic distance from source vertices by parallel
//! toplesets propagation (Romero Calla, Fuentes Perez and Montenegro 2019,
//! "Parallel geodesic distance computation on triangle meshes"), as
//! RXMesh section 8.2 and the dynamic paper's section 6.1 run it: the
//! vertices are grouped by their hops from the sources (toplesets, found on
//! the device by [`ToplesetLevel`] or on the host); each pass relaxes the
//! vertices of the toplesets the band has reached from their faces (VF),
//! in the patches where a distance changed
//! by more than the tolerance in the pass before, their neighbours and
//! those the band reaches next (the error-driven advance, by patch), and
//! sweeps each patch several times ([`GeodesicRelax`]).
//!
//! The kernel half of the geodesic application crate (`apps/geodesic`).
#![no_std]
#![feature(core_float_math)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

/// Threads a block of [`ToplesetLevel`] (its launch bounds').
pub const TOPLESET_THREADS: u32 = cavity_device::array::BOUNDS.threads;

use cavity_device::attribute::Attr;
use cavity_device::block::Block;
use cavity_device::dynamic::compute::{Element, ElementComputation, Sweeps};
use cavity_device::geometry::{dot, sub};
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
    /// One pass of the propagation over the patches the host lists: every
    /// vertex of a topleset in `[1, band_end)` (sources and unreachable
    /// vertices are not active) takes the smallest of its distance and
    /// what each of its faces gives into `to`, with the source that
    /// distance comes from into `source_to`. A face unfolds
    /// ([`update_step`]) from two corners whose distances come from the
    /// same source, else (or with `edges_only` 1) it gives the shorter path
    /// along its edges ([`along_edges`]). The pass sweeps each patch up to
    /// `sweeps` times (`Sweeps`, carrying the distance and its source; a
    /// distance crosses the patch in one pass) while a distance falls by
    /// more than `tolerance` of itself in a sweep, and marks the patch of a
    /// vertex whose distance fell by more than that over the pass
    /// (`Element::mark_patch`): only they and their neighbours can change
    /// by that much in the next pass. [`GeodesicKeep`] follows, over the
    /// same patches.
    pub struct GeodesicRelax {
        /// Hops from the nearest source (`u32::MAX`: unreachable).
        pub level: Attr<u32, 1>,
        /// The distances read.
        pub from: Attr<f32, 1>,
        /// The distances written (not `from`).
        pub to: Attr<f32, 1>,
        /// The source (its position in the sources) each distance read
        /// comes from (`u32::MAX`: none yet).
        pub source_from: Attr<u32, 1>,
        /// The sources of the distances written.
        pub source_to: Attr<u32, 1>,
        /// The topleset after the band's last.
        pub band_end: u32,
        /// Relative change above which a vertex has not converged.
        pub tolerance: f32,
        /// 1: relax along the edges only.
        pub edges_only: u32,
        /// Sweeps of each patch per pass, at most (at least 1).
        pub sweeps: u32,
    }
}

/// Whether a vertex of topleset `level` is relaxed in a pass whose band
/// ends at `band_end`: not a source, not unreachable, reached by the band.
#[inline(always)]
fn in_band(level: u32, band_end: u32) -> bool {
    level != 0 && level < band_end
}

/// Whether a distance that fell from `old` to `new` fell by more than
/// `tolerance` of `old` (any fall from infinity does).
#[inline(always)]
fn fell(new: f32, old: f32, tolerance: f32) -> bool {
    new < old && (old.is_infinite() || old - new >= tolerance * old)
}

impl ElementComputation for GeodesicRelax {
    const QUERY: Query = Query::VF;
    const SWEEPING: bool = true;

    fn sweeps(&self) -> Sweeps {
        Sweeps::new(self.sweeps, &self.from, &self.to).and(&self.source_from, &self.source_to)
    }

    fn active<B: Block>(&self, v: &Element<'_, B>) -> bool {
        in_band(v.get(&self.level)[0], self.band_end)
    }

    // Inlined into the sweep loop: a call would keep the element in local
    // memory.
    #[inline(always)]
    fn compute<B: Block>(&self, v: &Element<'_, B>) {
        let l = v.local();
        let p = v.position(l);
        // The distance the sweep before left, no larger than the pass's.
        let last = v.get_at(&self.from, l)[0];
        let (mut new, mut source) = (last, v.get_at(&self.source_from, l)[0]);
        for f in v.neighbors() {
            let [a, b] = v.other_corners(f);
            let (pa, pb) = (v.position(a), v.position(b));
            let (d_a, d_b) = (v.get_at(&self.from, a)[0], v.get_at(&self.from, b)[0]);
            let (s_a, s_b) = (
                v.get_at(&self.source_from, a)[0],
                v.get_at(&self.source_from, b)[0],
            );
            let (d, s) = if self.edges_only == 0 && s_a == s_b {
                (update_step(p, pa, pb, d_a, d_b), s_a)
            } else {
                let length = |x: [f32; 3]| core::f32::math::sqrt(dot(x, x));
                let (e_a, e_b) = (d_a + length(sub(p, pa)), d_b + length(sub(p, pb)));
                if e_b < e_a { (e_b, s_b) } else { (e_a, s_a) }
            };
            if d < new {
                (new, source) = (d, s);
            }
        }
        v.set(&self.to, [new]);
        v.set(&self.source_to, [source]);
        if fell(new, last, self.tolerance) {
            v.sweep_again();
        }
        if fell(new, v.get(&self.from)[0], self.tolerance) {
            v.mark_patch();
        }
    }
}

cavity_device::parameters! {
    /// After a pass of [`GeodesicRelax`] over the same patches: every
    /// vertex it relaxed copies its distance and source from `to` and
    /// `source_to` back into `from` and `source_from`, so that both hold
    /// every vertex's newest (a patch the next pass skips keeps them).
    pub struct GeodesicKeep {
        /// The pass.
        pub pass: GeodesicRelax,
    }
}

impl ElementComputation for GeodesicKeep {
    const QUERY: Query = Query::VF;
    const QUERY_RESULTS: bool = false;

    fn active<B: Block>(&self, v: &Element<'_, B>) -> bool {
        self.pass.active(v)
    }

    fn compute<B: Block>(&self, v: &Element<'_, B>) {
        let p = &self.pass;
        v.set(&p.from, v.get(&p.to));
        v.set(&p.source_from, v.get(&p.source_to));
    }
}

cavity_device::element_kernels!(GeodesicRelax, GeodesicKeep);

cavity_device::kernel! {
    /// One level of the toplesets' breadth-first search on the device
    /// (issue 55 item 5), launched level after level without the host
    /// reading each level's size: `mesh` is the vertex-face rows (offsets
    /// and faces), the faces (three corners each) and the sources (the
    /// topleset 0, `sources` of them). `bounds` holds each topleset's place
    /// in `queue` and its size (words `2 L` and `2 L + 1`; the size of a
    /// topleset past 0 is counted as it is found). Each vertex of topleset
    /// `at` visits the corners of its faces; a corner not yet `visited`
    /// (one bit a vertex) is claimed by an atomic or, gets `level` `at + 1`
    /// and is appended to the topleset `at + 1` in `queue`. Block 0 writes
    /// where that topleset starts. Each vertex is claimed once, so the
    /// levels do not depend on the order the threads ran in (the order
    /// within a topleset does). A level past the last topleset finds none.
    ///
    /// # Safety
    /// Checked: the rows, faces and sources are only read; the visited
    /// bits and the sizes are claimed atomically, only the claiming thread
    /// writes a vertex's level and its slot of `queue`, and the place of
    /// the next topleset is written by one thread; the place and size of
    /// topleset `at`, read by plain loads, are words no thread of the
    /// launch writes.
    #[launch_bounds = cavity_device::array::BOUNDS]
    #[checked]
    pub kernel ToplesetLevel(
        launch,
        mesh: cavity_device::array::Ins<u32, 4>,
        at: u32,
        sources: u32,
        visited: cavity_device::array::InOut<u32>,
        level: cavity_device::array::InOut<u32>,
        queue: cavity_device::array::InOut<u32>,
        bounds: cavity_device::array::InOut<u32>,
    ) {
        let [vf_offsets, vf, faces, first] = mesh.0;
        // Plain loads, served by the caches: an atomic load of the same
        // word by every thread of the grid queued them all at one place
        // in L2 (0.1 ms a level at 3 M vertices).
        let (begin, count) = if at == 0 {
            (0, sources)
        } else {
            // SAFETY: this launch writes words `2 at + 2` and `2 at + 3`
            // of `bounds` alone, never these two.
            unsafe { (bounds.get_unshared(2 * at), bounds.get_unshared(2 * at + 1)) }
        };
        let end = begin.wrapping_add(count);
        if launch.block_idx == 0 && launch.block.thread_idx() == 0 {
            bounds.set(2 * (at + 1), end);
        }
        // One vertex a thread across the grid: a topleset is a few
        // thousand vertices, whose visits are chains of dependent loads.
        let (mut k, stride) = launch.grid_stride();
        while k < count {
            let v = if at == 0 {
                first.get(k)
            } else {
                queue.get(begin.wrapping_add(k))
            };
            k = match k.checked_add(stride) {
                Some(next) => next,
                None => count,
            };
            for i in vf_offsets.get(v)..vf_offsets.get(v + 1) {
                let f = vf.get(i);
                for c in 0..3 {
                    let u = faces.get((3 * f).wrapping_add(c));
                    let bit = 1u32 << (u % 32);
                    if visited.get(u / 32) & bit == 0 && visited.fetch_or(u / 32, bit) & bit == 0 {
                        level.set(u, at + 1);
                        let slot = bounds.fetch_add(2 * (at + 1) + 1, 1);
                        queue.set(end.wrapping_add(slot), u);
                    }
                }
            }
        }
    }
}

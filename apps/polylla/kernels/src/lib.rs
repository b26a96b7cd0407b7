//! GPolylla's kernels (Salinas-Fernández et al., "GPolylla: Fully
//! GPU-accelerated polygonal mesh generator", section 6) over the
//! half-edge arrays of a 2D triangulation (`origin`, `twin`, `next`,
//! `prev`, one word per half-edge; the interior half-edges first, `3f + i`
//! of triangle `f`, then the border ones; positions as two `f64` per
//! vertex, four words):
//!
//! - [`label`]: [`LongestEdges`] (a thread per triangle), [`FrontierEdges`]
//!   and [`SeedEdges`] (a thread per half-edge);
//! - [`repair`]: [`BarrierTips`] (a thread per vertex: a vertex of one
//!   frontier edge gets its middle edge as a new frontier edge, both
//!   half-edges seeds) and [`MergeFrontier`];
//! - [`link`]: [`Relink`] (`next` and `prev` of each frontier half-edge to
//!   the next frontier half-edge turning clockwise, the previous turning
//!   counter-clockwise), [`MoveSeeds`] (each seed onto the first frontier
//!   half-edge clockwise around its origin) and [`PolygonSeeds`] (each
//!   polygon named once, by its smallest half-edge); the list of polygons
//!   is the compaction of those marks (`cavity-arrays-kernels`).
//!
//! The labels are words of 0 and 1; a kernel reads the labels of the
//! kernels before it and writes its own array, so no thread reads a word
//! another writes in the same launch (the marks of [`BarrierTips`] and
//! [`MoveSeeds`], which threads may share, are atomic ORs of 1).
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

pub mod label;
pub mod link;
pub mod repair;

pub use label::{FrontierEdges, LongestEdges, SeedEdges};
pub use link::{MoveSeeds, PolygonSeeds, Relink};
pub use repair::{BarrierTips, MergeFrontier};

use cavity_device::dynamic::global::GlobalU32;

/// Coordinate `k` (0 or 1) of vertex `v` of `positions` (two `f64` per
/// vertex, each as its low and high word).
///
/// # Safety
/// `positions` holds vertex `v`.
#[inline(always)]
pub unsafe fn coordinate(positions: GlobalU32, v: u32, k: u32) -> f64 {
    // SAFETY: the caller's contract.
    let (lo, hi) = unsafe {
        (
            positions.load_unshared(4 * v + 2 * k),
            positions.load_unshared(4 * v + 2 * k + 1),
        )
    };
    f64::from_bits(u64::from(hi) << 32 | u64::from(lo))
}

/// The rank of half-edge `h`'s edge as a longest edge: its squared
/// length from `a` to `b`, then its smaller half-edge (the same order as
/// the host's `sequential::is_longer`).
#[inline(always)]
pub fn rank(a: [f64; 2], b: [f64; 2], h: u32, twin: u32) -> (f64, u32) {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    (dx * dx + dy * dy, if h < twin { h } else { twin })
}

/// Whether rank `a` is above rank `b`.
#[inline(always)]
pub fn above(a: (f64, u32), b: (f64, u32)) -> bool {
    a.0 > b.0 || (a.0 == b.0 && a.1 > b.1)
}

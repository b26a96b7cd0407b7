//! GPolylla's kernels (Salinas-Fernández et al., "GPolylla: Fully
//! GPU-accelerated polygonal mesh generator", section 6) over the
//! half-edge arrays of a 2D triangulation: `origin` and `twin`, one word
//! per half-edge, the interior half-edges first (`3f + i` of triangle
//! `f`, whose `next` and `prev` are implicit: [`Mesh::next`]), then the
//! border ones with their `next` and `prev` in arrays of their own;
//! positions as two `f64` per vertex, four words.
//!
//! - [`label`]: [`LongestEdges`] (a byte per triangle: the corner of its
//!   longest edge) and [`Labels`] (a byte per triangle: frontier and seed
//!   bits of its three half-edges; each vertex's count of frontier edges,
//!   saturated at two, in two bits);
//! - [`repair`]: [`BarrierTips`] (a thread per vertex; a vertex of one
//!   frontier edge turns its star to find the middle edge, which becomes
//!   a frontier edge and both its half-edges seeds), [`MergeExtra`], and
//!   [`SharedIds`] and [`Bridges`] (once the polygons are linked and
//!   each half-edge holds its polygon's id: a barrier edge the tips
//!   leave, walked in both directions by its polygon, is split by one
//!   more frontier edge, [`repair::bridge_chord`], and its polygon's bit
//!   cleared), [`RelinkChords`] (the links around the new frontier
//!   edges, a thread per half-edge of them) and [`SplitPolygons`] (the
//!   pieces named from those half-edges);
//! - [`link`]: [`Relink`] (`next` and `prev` of each frontier half-edge to
//!   the next frontier half-edge turning clockwise, the previous turning
//!   counter-clockwise), [`MoveSeeds`] (each seed onto the first frontier
//!   half-edge clockwise around its origin, a bit per interior half-edge)
//!   and [`PolygonSeeds`] (each polygon named once, by its smallest
//!   half-edge, a bit per interior half-edge; its half-edges given its
//!   seed as id); the list of polygons is the compaction of those bits
//!   (`cavity_device::array::bits`);
//! - [`lists`]: [`PolygonSizes`] and [`PolygonVertices`], the polygons'
//!   vertex lists for the writers.
//!
//! The paper keeps a word per half-edge for each label; bytes per triangle
//! and bits per half-edge keep the arrays that the kernels gather from at
//! random small enough for the GPU's L2 cache. A kernel reads the labels
//! of the kernels before it and writes its own, so no thread reads a
//! byte another writes in the same launch; marks that threads may share
//! are atomic ORs. The kernels are checked (`cavity_device::kernel::CheckedKernel`):
//! every array is a bounds-checked view (`cavity_device::array`), and a
//! word whose index comes from the arrays' contents is written
//! atomically, so arrays that do not describe a triangulation only give
//! wrong labels (or a walk that never ends), never an access outside
//! them.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

pub mod label;
pub mod link;
pub mod lists;
pub mod repair;

pub use label::{Labels, LongestEdges};
pub use link::{MoveSeeds, PolygonSeeds, Relink};
pub use lists::{PolygonSizes, PolygonVertices};
pub use repair::{BarrierTips, Bridges, MergeExtra, RelinkChords, SharedIds, SplitPolygons};

pub use cavity_device::array::{BOUNDS, CHUNK, blocks, chunk};

use cavity_device::array::In;

/// Bits of a triangle's label byte: bit `i` (of [`FRONTIER`]) marks
/// half-edge `3f + i` as a frontier half-edge, bit `3 + i` (of [`SEED`])
/// as a seed.
pub const FRONTIER: u8 = 0b111;

/// The seed bits of a triangle's label byte.
pub const SEED: u8 = 0b111 << 3;

/// Bits of a triangle's byte of [`LongestEdges`] holding the corner of its
/// longest edge; [`BarrierTips`] sets bit `2 + i` (of [`EXTRA_SHIFT`]) for
/// a half-edge `3f + i` made a frontier edge at a tip.
pub const LONGEST: u8 = 0b11;

/// The first bit of a tip's new frontier half-edges in the bytes of
/// [`LongestEdges`].
pub const EXTRA_SHIFT: u32 = 2;

/// Coordinate `k` (0 or 1) of vertex `v` of `positions` (two `f64` per
/// vertex, each as its low and high word).
#[inline(always)]
pub fn coordinate(positions: In<u32>, v: u32, k: u32) -> f64 {
    let at = v.wrapping_mul(4).wrapping_add(2 * k);
    let (lo, hi) = (positions.get(at), positions.get(at.wrapping_add(1)));
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

/// The connectivity the kernels turn around vertices with: `twin`, the
/// border half-edges' `next` and `prev` (indexed from `interior`), and the
/// interior half-edges' implicit ones.
#[derive(Clone, Copy)]
pub struct Mesh {
    /// The opposite half-edge of each half-edge.
    pub twin: In<u32>,
    /// `next` of border half-edge `interior + k` at `k`.
    pub border_next: In<u32>,
    /// `prev` of border half-edge `interior + k` at `k`.
    pub border_prev: In<u32>,
    /// Interior half-edges (three per triangle).
    pub interior: u32,
}

impl Mesh {
    /// The connectivity of `[twin, border_next, border_prev]` with
    /// `interior` interior half-edges.
    #[inline(always)]
    pub fn new([twin, border_next, border_prev]: [In<u32>; 3], interior: u32) -> Mesh {
        Mesh {
            twin,
            border_next,
            border_prev,
            interior,
        }
    }

    /// The next half-edge around `h`'s face.
    #[inline(always)]
    pub fn next(&self, h: u32) -> u32 {
        if h < self.interior {
            if h % 3 == 2 { h - 2 } else { h + 1 }
        } else {
            self.border_next.get(h - self.interior)
        }
    }

    /// The previous half-edge around `h`'s face.
    #[inline(always)]
    pub fn prev(&self, h: u32) -> u32 {
        if h < self.interior {
            if h % 3 == 0 { h + 2 } else { h - 1 }
        } else {
            self.border_prev.get(h - self.interior)
        }
    }

    /// The opposite half-edge of `h`.
    #[inline(always)]
    pub fn twin(&self, h: u32) -> u32 {
        self.twin.get(h)
    }

    /// The half-edge out of `h`'s origin next clockwise: `next(twin(h))`.
    #[inline(always)]
    pub fn cw(&self, h: u32) -> u32 {
        self.next(self.twin(h))
    }

    /// The half-edge out of `h`'s origin next counter-clockwise:
    /// `twin(prev(h))`, the inverse of [`Mesh::cw`].
    #[inline(always)]
    pub fn ccw(&self, h: u32) -> u32 {
        self.twin(self.prev(h))
    }

    /// Whether `h` is a frontier half-edge by the label bytes `labels`
    /// (border half-edges always are).
    #[inline(always)]
    pub fn frontier(&self, labels: In<u32>, h: u32) -> bool {
        h >= self.interior || labels.byte(h / 3) >> (h % 3) & 1 != 0
    }
}

//! Kernels over the ternary sparse boundary operators of a volumetric
//! mesh (Mueller-Roemer, Stork and Fellner, "Ternary Sparse Matrix
//! Representation for Volumetric Mesh Subdivision and Processing on GPUs",
//! sections 3-4): the count, scan and fill steps of a transpose and the
//! per-row sort that makes its result deterministic (Algorithm 1).
//!
//! - [`signed`]: the ternary entry (a column index with its sign, `!c` for
//!   -1), decoded without branches;
//! - [`scan`]: a device-wide exclusive prefix sum in chunks ([`ScanChunks`],
//!   [`AddChunkOffsets`]);
//! - [`transpose`]: [`CountColumns`], [`FillTranspose`], [`SortRows`];
//! - [`relations`]: the indirect relations, [`FaceVertices`],
//!   [`Compose`];
//! - [`boundary`]: boundary extraction and Laplacian smoothing of inner
//!   vertices;
//! - [`subdivide`]: one level of volumetric Catmull-Clark subdivision.
//!
//! Every kernel takes its work in chunks of [`CHUNK`] items per block, so
//! that the CPU backend's one-thread blocks and the GPU's 256-thread blocks
//! run the same launch.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

pub mod boundary;
pub mod relations;
pub mod scan;
pub mod signed;
pub mod subdivide;
pub mod transpose;

pub use boundary::{
    Compact, MarkBoundaryFaces, MarkEdgeVertices, MarkFaceEdges, MarkListed, SmoothInner,
};
pub use relations::{Compose, FaceVertices};
pub use scan::{AddChunkOffsets, ScanChunks};
pub use subdivide::{
    CellCells, CellFaces, EdgeOperator, EdgePoints, FaceFaces, FacePoints, RowMeans, SplitEdges,
    SpokeEdges, Stride, VertexPoints,
};
pub use transpose::{CountColumns, FillTranspose, SortRows};

use cavity_device::dynamic::global::GlobalU32;
use cavity_device::kernel::LaunchBounds;

/// The arrays of words at `addresses` (kernel parameters).
///
/// # Safety
/// Each address is that of a live array of words that the kernel's
/// contract names, accessed as that contract says.
#[inline(always)]
pub unsafe fn arrays<const N: usize>(addresses: [u64; N]) -> [GlobalU32; N] {
    // SAFETY: the caller's contract.
    addresses.map(|a| unsafe { GlobalU32::new(a) })
}

/// Items (entries, rows or array elements) per block of every kernel here.
pub const CHUNK: u32 = 2048;

/// Threads per block and blocks per multiprocessor of every kernel here.
pub const BOUNDS: LaunchBounds = LaunchBounds {
    threads: 256,
    min_blocks: 4,
};

/// The items `[start, end)` of block `block` of `n` items in [`CHUNK`]s.
#[inline(always)]
pub fn chunk(block: u32, n: u32) -> (u32, u32) {
    let start = block.saturating_mul(CHUNK).min(n);
    (start, start.saturating_add(CHUNK).min(n))
}

/// Blocks for `n` items in [`CHUNK`]s (at least one).
#[inline(always)]
pub fn blocks(n: u32) -> u32 {
    n.div_ceil(CHUNK).max(1)
}

//! Kernels over arrays of words, each block taking a [`CHUNK`] of items,
//! so that the CPU backend's one-thread blocks and the GPU's 256-thread
//! blocks run the same launch: a device-wide exclusive prefix sum
//! ([`scan`]) and the compaction of marked elements into a list
//! ([`compact`]; of the set bits of a bitmask: [`bits`]), the scan and
//! fill steps of count-scan-fill (the volumetric paper's Algorithm 1,
//! GPolylla's seed compaction).
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

pub mod bits;
pub mod compact;
pub mod scan;

pub use bits::{CountBits, ListBits};
pub use compact::Compact;
pub use scan::{AddChunkOffsets, ScanChunks};

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

/// Items (entries, rows or array elements) per block of every kernel of
/// the crates built on this one.
pub const CHUNK: u32 = 2048;

/// Threads per block and blocks per multiprocessor of those kernels.
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

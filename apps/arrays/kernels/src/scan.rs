//! A device-wide exclusive prefix sum of `n` words in [`CHUNK`]s: each
//! block scans its chunk in shared memory ([`ScanChunks`]) and writes the
//! chunk's total; the totals are scanned the same way (the host recurses
//! until one chunk is left); each chunk then adds its total's prefix
//! ([`AddChunkOffsets`]). The scan step of count-scan-fill (the volumetric
//! paper's Algorithm 1).

use crate::{BOUNDS, CHUNK, arrays, chunk};
use cavity_device::block::{SharedArena, scan_scratch_len};

/// Shared-memory bytes of [`ScanChunks`] with `threads` threads per block.
pub fn shared_bytes(threads: u32) -> usize {
    let mut arena = SharedArena::measuring();
    arena.alloc::<u32>(CHUNK);
    arena.alloc::<u32>(scan_scratch_len(threads));
    arena.used()
}

cavity_device::kernel! {
    /// Replaces `data[..n]` chunk by chunk with its exclusive prefix sum
    /// within the chunk and writes chunk `b`'s total to `sums[b]`; one block
    /// per chunk ([`crate::blocks`]`(n)` blocks).
    ///
    /// # Safety
    /// `data` holds `n` words and `sums` one per block; dynamic shared
    /// memory is [`shared_bytes`]; no other kernel touches them meanwhile.
    #[launch_bounds = BOUNDS]
    pub kernel ScanChunks(launch, data: u64, n: u32, sums: u64) {
        let block = launch.block;
        let values = launch.arena.alloc::<u32>(CHUNK);
        let scratch = launch.arena.alloc::<u32>(scan_scratch_len(block.block_dim()));
        launch.arena.check();
        // SAFETY: the kernel's contract.
        let [data, sums] = unsafe { arrays([data, sums]) };
        let (start, end) = chunk(launch.block_idx, n);
        // SAFETY: each word of the chunk is read and written by one thread.
        block.for_each(end - start, |k| values.set(k, unsafe { data.load_unshared(start + k) }));
        block.sync();
        let total = block.scan(values, end - start, scratch, false);
        // SAFETY: as above.
        block.for_each(end - start, |k| unsafe { data.store_unshared(start + k, values.get(k)) });
        if block.thread_idx() == 0 {
            // SAFETY: one thread of one block writes the block's total.
            unsafe { sums.store_unshared(launch.block_idx, total) };
        }
    }
}

cavity_device::kernel! {
    /// Adds `sums[b]` (the scanned chunk totals) to every word of chunk `b`
    /// of `data[..n]`, one block per chunk.
    ///
    /// # Safety
    /// `data` holds `n` words and `sums` one per block; no other kernel
    /// writes them meanwhile.
    #[launch_bounds = BOUNDS]
    pub kernel AddChunkOffsets(launch, data: u64, n: u32, sums: u64) {
        // SAFETY: the kernel's contract.
        let [data, sums] = unsafe { arrays([data, sums]) };
        let (start, end) = chunk(launch.block_idx, n);
        // SAFETY: read only.
        let before = unsafe { sums.load_unshared(launch.block_idx) };
        launch.block.for_each(end - start, |k| {
            // SAFETY: each word of the chunk is read and written by one
            // thread.
            unsafe { data.store_unshared(start + k, data.load_unshared(start + k) + before) };
        });
    }
}

//! A device-wide exclusive prefix sum of `n` words in [`CHUNK`]s: each
//! block scans its chunk in shared memory ([`ScanChunks`]) and writes the
//! chunk's total; the totals are scanned the same way (the host recurses
//! until one chunk is left); each chunk then adds its total's prefix
//! ([`AddChunkOffsets`]). The scan step of count-scan-fill (the volumetric
//! paper's Algorithm 1).

use super::{BOUNDS, CHUNK, In, InOut, chunk};
use crate::block::{SharedArena, scan_scratch_len};

/// Shared-memory bytes of [`ScanChunks`] with `threads` threads per block.
pub fn shared_bytes(threads: u32) -> usize {
    let mut arena = SharedArena::measuring();
    arena.alloc::<u32>(CHUNK);
    arena.alloc::<u32>(scan_scratch_len(threads));
    arena.used()
}

crate::kernel! {
    @core
    /// Replaces `data[..n]` chunk by chunk with its exclusive prefix sum
    /// within the chunk and writes chunk `b`'s total to `sums[b]`; one block
    /// per chunk ([`super::blocks`]`(n)` blocks), dynamic shared memory
    /// [`shared_bytes`].
    ///
    /// # Safety
    /// Checked: each word of `data` is read and written by the one thread
    /// its index names, each word of `sums` by its block's first thread.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel ScanChunks(launch, data: InOut<u32>, n: u32, sums: InOut<u32>) {
        let block = launch.block;
        let values = launch.arena.alloc::<u32>(CHUNK);
        let scratch = launch.arena.alloc::<u32>(scan_scratch_len(block.block_dim()));
        launch.arena.check();
        let (start, end) = chunk(launch.block_idx, n);
        // SAFETY: each word of the chunk is read and written by one thread.
        block.for_each(end - start, |k| values.set(k, unsafe { data.get_unshared(start + k) }));
        block.sync();
        let total = block.scan(values, end - start, scratch, false);
        // SAFETY: as above.
        block.for_each(end - start, |k| unsafe { data.set_unshared(start + k, values.get(k)) });
        if block.thread_idx() == 0 {
            // SAFETY: one thread of one block writes the block's total.
            unsafe { sums.set_unshared(launch.block_idx, total) };
        }
    }
}

crate::kernel! {
    @core
    /// Adds `sums[b]` (the scanned chunk totals) to every word of chunk `b`
    /// of `data[..n]`, one block per chunk.
    ///
    /// # Safety
    /// Checked: each word of `data` is read and written by the one thread
    /// its index names; `sums` is only read.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel AddChunkOffsets(launch, data: InOut<u32>, n: u32, sums: In<u32>) {
        let (start, end) = chunk(launch.block_idx, n);
        let before = sums.get(launch.block_idx);
        launch.block.for_each(end - start, |k| {
            let i = start + k;
            // SAFETY: each word of the chunk is read and written by one
            // thread.
            unsafe { data.set_unshared(i, data.get_unshared(i).wrapping_add(before)) };
        });
    }
}

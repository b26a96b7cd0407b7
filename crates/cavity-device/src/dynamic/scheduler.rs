//! The queue scheduler (dynamic paper, section 5.3): an array-based queue in
//! global memory (Gottlieb et al. 1983). A block's leader thread dequeues a
//! patch; a patch that cannot be processed (its lock or a neighbour's is
//! taken, or a neighbour changed in this round) is enqueued again; the host
//! relaunches until the queue is empty. On the GPU a round's blocks are
//! persistent: as many as the device holds at once, each dequeuing patches
//! until the round took its share (below), instead of one block per queued
//! patch.
//!
//! The scheduler avoids processing neighbouring patches in the same round
//! (section 4.3): a dequeued patch that a competing neighbour outranks in
//! the round is enqueued again untouched ([`outranks`]), so blocks seldom
//! wait for a lock and the locks can be impatient. The queue itself is
//! [`super::queue`].

use crate::block::{Block, SharedArena, scan_scratch_len};
use crate::kernel::DYNAMIC_BOUNDS;

use super::layout::RawDynamicMesh;
use super::layout::{NO_PATCH, flag, stat};
use super::patch::DynMesh;
use super::queue;

/// Shared memory of [`refill`] in bytes, for `threads` threads.
pub fn refill_shared_bytes(threads: u32) -> usize {
    let mut arena = SharedArena::measuring();
    refill_windows(&mut arena, threads);
    arena.used()
}

fn refill_windows(arena: &mut SharedArena, threads: u32) -> [crate::block::Shared<u32>; 2] {
    [arena.alloc(threads), arena.alloc(scan_scratch_len(threads))]
}

/// Queues the patches for a sweep (one block, between sweeps): every patch
/// in use, or with `changed_only` those flagged `CHANGED`, in patch
/// order; clears `CHANGED` and marks every patch's declined seeds stale
/// (`NEW_SWEEP`: a sweep looks at every candidate afresh); zeroes the
/// counters. Shared memory: [`refill_shared_bytes`].
#[inline(always)]
pub fn refill<B: Block>(block: &B, arena: &mut SharedArena, mesh: &DynMesh, changed_only: bool) {
    let [taken, scratch] = refill_windows(arena, block.block_dim());
    arena.check();
    let dim = block.block_dim();
    let t = block.thread_idx();
    let n = mesh.num_patches;
    let mut queued = 0;
    let mut first = 0;
    while first < n {
        let p = first + t;
        let f = if p < n { mesh.flags.load(p) } else { 0 };
        let take = p < n && (!changed_only || f & flag::CHANGED != 0);
        taken.set(t, take as u32);
        block.sync();
        let count = block.scan(taken, dim, scratch, false);
        if p < n {
            let mut g = (f & !(flag::QUEUED | flag::CHANGED)) | flag::NEW_SWEEP;
            if take {
                mesh.queue.store(queued + taken.get(t), p);
                g |= flag::QUEUED;
            }
            mesh.flags.store(p, g);
        }
        queued += count;
        first += dim;
        block.sync();
    }
    block.for_each(mesh.cap.patches - queued, |i| {
        mesh.queue.store(queued + i, NO_PATCH);
    });
    if t == 0 {
        queue::reset(mesh.queue_state, queued, n);
        // The computations' count is the host's to take
        // (`Rounds::take_count`): a refill keeps it.
        for i in (0..stat::COUNT).filter(|&i| i != stat::COUNTED) {
            mesh.stats.store(i, 0);
        }
    }
}

/// Whether patch `q` outranks patch `p` in the round of `salt`: a random
/// order per round (a hash of the patch and the salt, ties broken by the
/// id), so that the queued patches that no queued neighbour outranks, a
/// maximal independent set of them, are processed first (Luby's rule on
/// the patch graph).
#[inline(always)]
pub fn outranks(q: u32, p: u32, salt: u32) -> bool {
    (rank(q, salt), q) > (rank(p, salt), p)
}

/// Random rank of patch `p` in the round of `salt`.
#[inline(always)]
fn rank(p: u32, salt: u32) -> u32 {
    let mut x = p.wrapping_mul(0x9e37_79b9) ^ salt.wrapping_mul(0x85eb_ca6b);
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^ (x >> 16)
}

crate::kernel! {
    @core
    /// Queues the patches for a sweep ([`refill`]; every patch in use, or
    /// with `changed_only != 0` those flagged `CHANGED`). One block.
    ///
    /// # Safety
    /// The mesh describes live arrays of a dynamic mesh; no update kernel
    /// runs meanwhile; dynamic shared memory is
    /// [`refill_shared_bytes`]`(threads)`.
    #[launch_bounds = DYNAMIC_BOUNDS]
    pub kernel Refill(launch, mesh: RawDynamicMesh, changed_only: u32) {
        // SAFETY: the kernel's contract.
        let m = unsafe { DynMesh::new(&mesh) };
        refill(launch.block, launch.arena, &m, changed_only != 0);
    }
}

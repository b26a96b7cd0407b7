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
//! wait for a lock and the locks can be impatient.
//!
//! `state[0]` counts queued patches, `state[1]` and `state[2]` are the
//! front and back positions (modulo the queue's length); a slot holds
//! [`NO_PATCH`] while empty. `state[3]` is the number of patch slots in use
//! (patch slicing takes the next one). `state[4]` is the round's share,
//! the patches queued when it began, and `state[5]` counts the dequeues
//! the round tried: a round dequeues at most its share, as if it had
//! exactly one block per queued patch, whatever its block count (the host
//! launches a round before it knows how many patches the previous one left
//! queued: `rounds::Rounds::runs_ahead` in the host crate).

use crate::block::{Block, SharedArena, scan_scratch_len};
use crate::kernel::DYNAMIC_BOUNDS;

use super::global::GlobalU32;
use super::layout::RawDynamicMesh;
use super::layout::{NO_PATCH, flag, stat};
use super::patch::DynMesh;

/// Index of the queued-patch count in the queue state.
pub const COUNT: u32 = 0;
/// Index of the number of patch slots in use in the queue state.
pub const PATCHES: u32 = 3;
/// Words of the queue state.
pub const STATE_WORDS: u32 = 6;
const FRONT: u32 = 1;
const BACK: u32 = 2;
/// Index of the round's share (patches queued when the round began).
const SHARE: u32 = 4;
/// Index of the dequeues the round tried.
const TRIED: u32 = 5;

/// Enqueues `patch`. The queue's length must exceed the number of patches
/// queued at once (one slot per patch slot suffices).
#[inline(always)]
pub fn push(queue: GlobalU32, state: GlobalU32, len: u32, patch: u32) {
    state.fetch_add(COUNT, 1);
    let pos = state.fetch_add(BACK, 1) % len;
    // The slot is empty unless a slow dequeue of the previous lap still
    // holds it; wait for it.
    while queue.compare_exchange(pos, NO_PATCH, patch) != NO_PATCH {
        core::hint::spin_loop();
    }
}

/// Dequeues a patch, or `None` when the queue is empty or the round tried
/// as many dequeues as its share.
#[inline(always)]
pub fn pop(queue: GlobalU32, state: GlobalU32, len: u32) -> Option<u32> {
    if state.fetch_add(TRIED, 1) >= state.load(SHARE) {
        return None;
    }
    let before = state.fetch_add(COUNT, u32::MAX);
    if before == 0 || before > i32::MAX as u32 {
        state.fetch_add(COUNT, 1);
        return None;
    }
    let pos = state.fetch_add(FRONT, 1) % len;
    loop {
        let p = queue.swap(pos, NO_PATCH);
        if p != NO_PATCH {
            return Some(p);
        }
        // The matching enqueue has counted itself but not written yet.
        core::hint::spin_loop();
    }
}

/// Ends a round (one thread, no update running): the next round's share
/// is the patches queued now.
#[inline(always)]
pub fn close_round(state: GlobalU32) {
    state.store(SHARE, state.load(COUNT));
    state.store(TRIED, 0);
}

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
        let state = mesh.queue_state;
        for (i, v) in [queued, 0, queued, n, queued, 0].into_iter().enumerate() {
            state.store(i as u32, v);
        }
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

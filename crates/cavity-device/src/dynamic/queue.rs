//! The scheduler's queue (dynamic paper, section 5.3): an array-based
//! queue of patches in global memory (Gottlieb et al. 1983), and the state
//! words of the round that reads it.
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

use super::global::GlobalU32;
use super::layout::NO_PATCH;

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

/// Resets the state (one thread, no update running) to `queued` patches
/// in the queue's first slots, `patches` patch slots in use and a round
/// whose share is the queued patches.
#[inline(always)]
pub fn reset(state: GlobalU32, queued: u32, patches: u32) {
    for (i, v) in [
        (COUNT, queued),
        (FRONT, 0),
        (BACK, queued),
        (PATCHES, patches),
        (SHARE, queued),
        (TRIED, 0),
    ] {
        state.store(i, v);
    }
}

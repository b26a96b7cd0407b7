//! The queue scheduler (dynamic paper, section 5.3): an array-based queue in
//! global memory (Gottlieb et al. 1983). A block's leader thread dequeues a
//! patch; a patch that cannot be processed (its lock or a neighbour's is
//! taken, or a neighbour changed in this round) is enqueued again; the host
//! relaunches until the queue is empty.
//!
//! The scheduler avoids processing neighbouring patches in the same round
//! (section 4.3): a dequeued patch that a competing neighbour outranks in
//! the round is enqueued again untouched ([`outranks`]), so blocks seldom
//! wait for a lock and the locks can be impatient.
//!
//! `state[0]` counts queued patches, `state[1]` and `state[2]` are the
//! front and back positions (modulo the queue's length); a slot holds
//! [`NO_PATCH`] while empty. `state[3]` is the number of patch slots in use
//! (patch slicing takes the next one).

use super::global::GlobalU32;
use super::layout::NO_PATCH;

/// Index of the queued-patch count in the queue state.
pub const COUNT: u32 = 0;
/// Index of the number of patch slots in use in the queue state.
pub const PATCHES: u32 = 3;
/// Words of the queue state.
pub const STATE_WORDS: u32 = 4;
const FRONT: u32 = 1;
const BACK: u32 = 2;

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

/// Dequeues a patch, or `None` when the queue is empty.
#[inline(always)]
pub fn pop(queue: GlobalU32, state: GlobalU32, len: u32) -> Option<u32> {
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

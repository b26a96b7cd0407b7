//! Patch locks (dynamic paper, section 5.3, "Locking Algorithm"): one word
//! per patch, taken by one thread of a block with a compare-and-swap and a
//! bounded number of tries with exponential backoff (the update kernel
//! locks its own patch from thread 0 and the neighbours an expansion needs
//! side by side, one thread per neighbour). A failed attempt
//! makes the block give its patch back (rolling back costs nothing: its
//! changes live in shared memory), so locks never deadlock. The word holds
//! the holder's patch id + 1; a block keeps trying longer against holders
//! with a larger id, so that of two blocks that want each other's patch the
//! one with the smaller id usually wins instead of both giving up.

use super::global::GlobalU32;

/// The lock word of a free patch.
pub const FREE: u32 = 0;
/// The lock word of a patch that no block may take in this round: the CPU
/// backend's deterministic schedule leaves free only the patches it gives
/// to a block (`cavity::backend::cpu::territories`), so that no lock is ever
/// contended and a round's outcome does not depend on timing. A block
/// working on patch `me` holds `me + 1 < RESERVED`.
pub const RESERVED: u32 = u32::MAX;
/// Tries against a holder with a larger patch id.
const PATIENT_TRIES: u32 = 16;
/// Longest single wait, in nanoseconds (the patient tries wait about 41 µs
/// in all, `nanosleep` taking anywhere up to twice the time asked: long enough for a neighbour's expansion, not for a neighbour's
/// whole processing, which the scheduler keeps out of the round).
const MAX_WAIT: u32 = 1 << 12;
/// Tries against a holder with a smaller patch id.
const IMPATIENT_TRIES: u32 = 4;

/// Waits about `ns` nanoseconds.
#[inline(always)]
fn backoff(ns: u32) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: `nanosleep` only suspends the calling thread (sm_70+).
    unsafe {
        core::arch::asm!("nanosleep.u32 {t};", t = in(reg32) ns);
    }
    #[cfg(not(target_arch = "nvptx64"))]
    for _ in 0..ns / 8 {
        core::hint::spin_loop();
    }
}

/// Tries to lock `patch` for the block working on patch `me`; returns
/// whether it holds the lock (at once `false` for a [`RESERVED`] patch).
/// Call from one thread of the block per patch.
#[inline(always)]
pub fn try_lock(locks: GlobalU32, patch: u32, me: u32) -> bool {
    let mut wait = 64;
    let mut tries = 0;
    loop {
        let found = locks.compare_exchange_acquire(patch, FREE, me + 1);
        if found == FREE {
            return true;
        }
        if found == RESERVED {
            return false;
        }
        tries += 1;
        let limit = if found - 1 > me {
            PATIENT_TRIES
        } else {
            IMPATIENT_TRIES
        };
        if tries >= limit {
            return false;
        }
        backoff(wait);
        wait = (wait * 2).min(MAX_WAIT);
    }
}

/// Releases `patch` (release ordering: everything the block wrote before is
/// visible to the next holder). Call from the thread of the block that
/// handles `patch`, after a barrier and a fence when the block wrote to
/// the patch (a patch given back untouched needs neither).
#[inline(always)]
pub fn unlock(locks: GlobalU32, patch: u32) {
    locks.store_release(patch, FREE);
}

//! The ribbon hash table of a patch (dynamic paper, section 5.1): maps the
//! local index of a not-owned element to its owner, as a 6-bit index into the
//! patch stash and the 13-bit local index in the owner patch. One 32-bit
//! entry holds `key << 19 | stash << 13 | owner_local`; the empty slot is
//! all ones (no valid entry is, since local indices stay below
//! [`LOCAL_MASK`]).
//!
//! Cuckoo hashing (Awad et al. 2023, as used by the paper): four hash
//! functions, insertion by atomic exchange with eviction chains of bounded
//! length, then a few overflow slots taken by compare-and-swap. Lookups read
//! four slots and the overflow slots. Several threads may insert distinct
//! keys at once; lookups must not run concurrently with insertions.

use super::layout::{HASH_OVERFLOW, LOCAL_BITS, LOCAL_MASK};

/// An empty table slot.
pub const EMPTY: u32 = u32::MAX;
/// Key position of ribbon entries: 13-bit keys (local indices).
pub const RIBBON: u32 = 32 - LOCAL_BITS;
/// Key position of the inverse tables the migration builds in shared
/// memory: 19-bit keys (`stash << 13 | owner_local`), 13-bit values (the
/// local index in this patch).
pub const INVERSE: u32 = LOCAL_BITS;

/// Packs an entry: `key` (local index in this patch), the owner's index in
/// this patch's stash and the element's local index in the owner.
#[inline(always)]
pub fn entry(key: u32, stash: u32, owner_local: u32) -> u32 {
    (key << (32 - LOCAL_BITS)) | (stash << LOCAL_BITS) | owner_local
}

/// The key (local index) of an entry.
#[inline(always)]
pub fn key_of(e: u32) -> u32 {
    e >> (32 - LOCAL_BITS)
}

/// The owner's stash index and the owner-local index of an entry.
#[inline(always)]
pub fn value_of(e: u32) -> (u32, u32) {
    ((e >> LOCAL_BITS) & 0x3f, e & LOCAL_MASK)
}

/// Storage of one table: `slots` slots (any number) followed by
/// [`HASH_OVERFLOW`] overflow slots.
pub trait Slots {
    /// Slots before the overflow slots.
    fn slots(&self) -> u32;
    /// Reads slot `i`.
    fn get(&self, i: u32) -> u32;
    /// Writes slot `i`.
    fn set(&self, i: u32, v: u32);
    /// Atomically replaces slot `i` by `v`; returns the old value.
    fn exchange(&self, i: u32, v: u32) -> u32;
    /// Atomically replaces slot `i` by `new` if it holds `current`; returns
    /// whether it did.
    fn compare_exchange(&self, i: u32, current: u32, new: u32) -> bool;
}

const SEEDS: [u32; 4] = [0x2545_f491, 0x9e37_79b9, 0x85eb_ca6b, 0xc2b2_ae35];
/// Longest eviction chain before the overflow slots are tried.
const MAX_CHAIN: u32 = 48;

/// Slot of `key` under hash function `h` in a table of `slots`: the mixed
/// key scaled to `0..slots` by a multiply-high (Lemire's range reduction),
/// so that tables need not have a power-of-two size.
#[inline(always)]
fn slot(key: u32, h: u32, slots: u32) -> u32 {
    let x = (key ^ SEEDS[h as usize]).wrapping_mul(0x2c1b_3c6d);
    let x = x ^ (x >> 15);
    ((x as u64 * slots as u64) >> 32) as u32
}

/// Inserts entry `e` (whose key, the bits from `SHIFT` up, must not be in
/// the table). Returns false when the table and its overflow slots are full.
#[inline(always)]
pub fn insert<const SHIFT: u32, S: Slots + ?Sized>(t: &S, e: u32) -> bool {
    let slots = t.slots();
    let mut cur = e;
    let mut h = 0;
    for _ in 0..MAX_CHAIN {
        let s = slot(cur >> SHIFT, h, slots);
        let old = t.exchange(s, cur);
        if old == EMPTY {
            return true;
        }
        // Move the evicted entry to its next hash function.
        let k = old >> SHIFT;
        let mut j = 0;
        while j < 3 && slot(k, j, slots) != s {
            j += 1;
        }
        h = (j + 1) % 4;
        cur = old;
    }
    for i in slots..slots + HASH_OVERFLOW {
        if t.compare_exchange(i, EMPTY, cur) {
            return true;
        }
    }
    false
}

/// The slot holding `key` (keys at bit `SHIFT`), if any.
#[inline(always)]
pub fn find<const SHIFT: u32, S: Slots + ?Sized>(t: &S, key: u32) -> Option<u32> {
    // One slot after another: most keys sit in their first slot, and
    // reading all four at once made the calibration kernel, which looks up
    // every ribbon entry in global memory, slower.
    let slots = t.slots();
    for h in 0..4 {
        let s = slot(key, h, slots);
        let e = t.get(s);
        if e != EMPTY && e >> SHIFT == key {
            return Some(s);
        }
    }
    (slots..slots + HASH_OVERFLOW).find(|&i| {
        let e = t.get(i);
        e != EMPTY && e >> SHIFT == key
    })
}

/// The owner's stash index and owner-local index of ribbon key `key`, if
/// present.
#[inline(always)]
pub fn lookup<S: Slots + ?Sized>(t: &S, key: u32) -> Option<(u32, u32)> {
    find::<RIBBON, S>(t, key).map(|s| value_of(t.get(s)))
}

/// The value (low `SHIFT` bits) stored under `key`, if present.
#[inline(always)]
pub fn get<const SHIFT: u32, S: Slots + ?Sized>(t: &S, key: u32) -> Option<u32> {
    find::<SHIFT, S>(t, key).map(|s| t.get(s) & ((1 << SHIFT) - 1))
}

/// Removes ribbon key `key`; returns whether it was present.
#[inline(always)]
pub fn remove<S: Slots + ?Sized>(t: &S, key: u32) -> bool {
    match find::<RIBBON, S>(t, key) {
        Some(s) => {
            t.set(s, EMPTY);
            true
        }
        None => false,
    }
}

/// Inserts ribbon entry `e` or replaces the entry with the same key;
/// returns false when the table is full.
#[inline(always)]
pub fn upsert<S: Slots + ?Sized>(t: &S, e: u32) -> bool {
    match find::<RIBBON, S>(t, key_of(e)) {
        Some(s) => {
            t.set(s, e);
            true
        }
        None => insert::<RIBBON, S>(t, e),
    }
}

/// Host-side tables (building and checking on the CPU, single-threaded):
/// the slice holds the slots and then the overflow slots.
impl Slots for [core::cell::Cell<u32>] {
    fn slots(&self) -> u32 {
        self.len() as u32 - HASH_OVERFLOW
    }
    fn get(&self, i: u32) -> u32 {
        self[i as usize].get()
    }
    fn set(&self, i: u32, v: u32) {
        self[i as usize].set(v)
    }
    fn exchange(&self, i: u32, v: u32) -> u32 {
        self[i as usize].replace(v)
    }
    fn compare_exchange(&self, i: u32, current: u32, new: u32) -> bool {
        let ok = self[i as usize].get() == current;
        if ok {
            self[i as usize].set(new);
        }
        ok
    }
}

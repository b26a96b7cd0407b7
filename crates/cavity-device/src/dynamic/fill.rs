//! The static patches copied into the patch slots of the dynamic layout on
//! the device (the host's reference: `DynamicMesh::from_patched_with` of
//! the host crate; the layout: dynamic paper, Mahmoud et al. 2024,
//! section 5.1), so that a mesh patched on the device (RXMesh 2021,
//! section 6.3: `crate::patch_build`) starts its update rounds without a
//! trip through the host.
//!
//! [`FillSlots`] writes each slot's counts, FE and EV (two 16-bit entries
//! a word), owned and active bitmasks, stash and ribbon hash tables;
//! [`FillAttributes`] writes the vertices' positions and input indices
//! and the edges' and faces' input indices. The other arrays of the layout
//! start zeroed. Both keep the host's result word for word: each kind's
//! ribbon entries are inserted into its table by one thread, in ribbon
//! order, as the host inserts them.
//!
//! The static layout's arrays (`statics`), in order: the patch headers
//! ([`PatchInfo`], `crate::patch_build::INFO_WORDS` words a patch), FE and
//! EV as words of two 16-bit entries (each patch's entries from its even
//! `fe_offset` and `ev_offset`), the ribbon entries and the stashes.

use core::mem::offset_of;

use super::hash::{self, EMPTY, RIBBON, Slots};
use super::layout::{
    COUNT_STASH, COUNT_WORDS, Capacity, HASH_OVERFLOW, NO_PATCH, STASH_SIZE, input_index_word,
};
use crate::array::{BOUNDS, In, InOut, Ins};
use crate::layout::{Kind, PatchInfo, ribbon_owner};
use crate::patch_build::{INFO_WORDS, info_at};

/// `failed[0]` of [`FillSlots`]: a header larger than the capacity or the
/// stash.
pub const FAILED_HEADER: u32 = 0;

/// `failed[1]` of [`FillSlots`]: 0, or `u32::MAX - (3 p + k)` for the
/// first patch `p` (and in it the first kind `k`, in [`Kind::ALL`] order)
/// whose ribbon table overflowed ([`failed_table`] reads it).
pub const FAILED_TABLE: u32 = 1;

/// The patch and kind of [`FAILED_TABLE`]'s word, `None` when no table
/// overflowed.
pub fn failed_table(word: u32) -> Option<(u32, Kind)> {
    (word != 0).then(|| {
        let at = u32::MAX - word;
        (at / 3, Kind::ALL[(at % 3) as usize])
    })
}

/// One kind's ribbon table of one slot in global memory, written by a
/// single thread (its exchanges are a read and a write).
struct Table<'a> {
    words: &'a InOut<u32>,
    base: u32,
    slots: u32,
}

impl Slots for Table<'_> {
    #[inline(always)]
    fn slots(&self) -> u32 {
        self.slots
    }
    #[inline(always)]
    fn get(&self, i: u32) -> u32 {
        self.words.get(self.base.wrapping_add(i))
    }
    #[inline(always)]
    fn set(&self, i: u32, v: u32) {
        self.words.set(self.base.wrapping_add(i), v)
    }
    #[inline(always)]
    fn exchange(&self, i: u32, v: u32) -> u32 {
        let old = self.get(i);
        self.set(i, v);
        old
    }
    #[inline(always)]
    fn compare_exchange(&self, i: u32, current: u32, new: u32) -> bool {
        let ok = self.get(i) == current;
        if ok {
            self.set(i, new);
        }
        ok
    }
}

/// Word of a patch header holding the first handle of `kind`
/// ([`PatchInfo::base`]).
fn base_word(kind: Kind) -> u32 {
    (offset_of!(PatchInfo, vertex_base) / 4) as u32 + kind as u32
}

crate::kernel! {
    @core
    /// Patch slot `p` (a block each, `cap.patches` blocks) of the dynamic
    /// layout of capacity `cap` from the static patches of `statics` (see
    /// the [module](self)): every slot's ribbon tables empty ([`EMPTY`])
    /// and its stash unused ([`NO_PATCH`]); then, for `p <
    /// num_patches`, its counts and stash length, FE and EV (as words of
    /// two entries: a slot's entries start at an even index), its owned
    /// and active bitmasks, its stash, and its ribbon entries inserted
    /// into the tables. `counts`, `fe`, `ev` and `masks` must start
    /// zeroed. A header over the capacity or [`STASH_SIZE`] sets
    /// `failed[FAILED_HEADER]` and writes nothing more of its slot; a
    /// full table sets `failed[FAILED_TABLE]`.
    ///
    /// # Safety
    /// Checked: the static arrays are only read; each block writes its own
    /// slot's words, every table by one thread after a barrier.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel FillSlots(
        launch,
        statics: Ins<u32, 5>,
        num_patches: u32,
        cap: Capacity,
        counts: InOut<u32>,
        fe: InOut<u32>,
        ev: InOut<u32>,
        masks: InOut<u32>,
        hash: InOut<u32>,
        stash: InOut<u32>,
        failed: InOut<u32>,
    ) {
        let [infos, fe_words, ev_words, ribbon, stashes] = &statics.0;
        let block = launch.block;
        let p = launch.block_idx;
        let hash_base = p.wrapping_mul(cap.hash_stride());
        let stash_base = p.wrapping_mul(STASH_SIZE);
        block.for_each(cap.hash_stride(), |i| hash.set(hash_base.wrapping_add(i), EMPTY));
        block.for_each(STASH_SIZE, |i| stash.set(stash_base.wrapping_add(i), NO_PATCH));
        if p >= num_patches {
            return;
        }
        let info = info_at(infos, p);
        if info.num_vertices > cap.vertices
            || info.num_edges > cap.edges
            || info.num_faces > cap.faces
            || info.stash_len > STASH_SIZE
        {
            if block.thread_idx() == 0 {
                failed.set(FAILED_HEADER, 1);
            }
            return;
        }
        let count_base = p.wrapping_mul(COUNT_WORDS);
        block.for_each(COUNT_WORDS, |i| {
            let n = match i {
                0 => info.num_vertices,
                1 => info.num_edges,
                2 => info.num_faces,
                COUNT_STASH => info.stash_len,
                _ => 0,
            };
            counts.set(count_base.wrapping_add(i), n);
        });

        let fe_base = p.wrapping_mul(cap.fe_stride()) / 2;
        block.for_each((3 * info.num_faces).div_ceil(2), |w| {
            fe.set(fe_base.wrapping_add(w), fe_words.get((info.fe_offset / 2).wrapping_add(w)));
        });
        let ev_base = p.wrapping_mul(cap.ev_stride()) / 2;
        block.for_each(info.num_edges, |w| {
            ev.set(ev_base.wrapping_add(w), ev_words.get((info.ev_offset / 2).wrapping_add(w)));
        });
        block.for_each(info.stash_len, |i| {
            stash.set(stash_base.wrapping_add(i), stashes.get(info.stash_offset.wrapping_add(i)));
        });

        let mask_base = p.wrapping_mul(cap.mask_stride());
        for kind in Kind::ALL {
            for (active, bits) in [(false, info.owned(kind)), (true, info.count(kind))] {
                let at = mask_base.wrapping_add(cap.mask_offset(kind, active));
                block.for_each(bits.div_ceil(32), |w| {
                    let k = (bits - 32 * w).min(32);
                    let word = if k == 32 { u32::MAX } else { (1u32 << k) - 1 };
                    masks.set(at.wrapping_add(w), word);
                });
            }
        }

        // The tables are empty before any entry goes in.
        block.sync();
        block.for_each_spread(3, |k| {
            let kind = Kind::ALL[k as usize];
            let table = Table {
                words: &hash,
                base: hash_base.wrapping_add(cap.table_offset(kind)),
                slots: cap.table_words(kind) - HASH_OVERFLOW,
            };
            let owned = info.owned(kind);
            let start = info.ribbon_start(kind);
            for i in 0..info.count(kind) - owned {
                let (s, owner_local) = ribbon_owner(ribbon.get(start.wrapping_add(i)));
                let entry = hash::entry(owned + i, s, owner_local);
                if !hash::insert::<RIBBON, _>(&table, entry) {
                    failed.fetch_max(FAILED_TABLE, u32::MAX - (3 * p + k));
                    return;
                }
            }
        });
    }
}

crate::kernel! {
    @core
    /// The core attributes of used patch slot `p` (a block each,
    /// `num_patches` blocks) of the dynamic layout of capacity `cap`: each
    /// local vertex's position (`positions`, three `f32` a vertex as bits)
    /// and input index, and, where `cap` gives edges or faces attribute
    /// words, their input indices ([`input_index_word`]). `statics`:
    /// the headers, the ribbon entries and the stashes of the static
    /// patches; `to_input`: each kind's handle → input element. A
    /// not-owned element's input is its owner's (through the stash and the
    /// owner's header).
    ///
    /// # Safety
    /// Checked: the inputs are only read; each block writes its own slot's
    /// words, each word once.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel FillAttributes(
        launch,
        statics: Ins<u32, 3>,
        to_input: Ins<u32, 3>,
        positions: In<u32>,
        cap: Capacity,
        vertex_attrs: InOut<u32>,
        edge_attrs: InOut<u32>,
        face_attrs: InOut<u32>,
    ) {
        let [infos, ribbon, stashes] = &statics.0;
        let block = launch.block;
        let p = launch.block_idx;
        let info = info_at(infos, p);
        let attrs = [&vertex_attrs, &edge_attrs, &face_attrs];
        for kind in Kind::ALL {
            if cap.attr_stride(kind) == 0 {
                continue;
            }
            let (owned, base) = (info.owned(kind), info.base(kind));
            let start = info.ribbon_start(kind);
            let words = attrs[kind as usize];
            let to_input = &to_input.0[kind as usize];
            block.for_each(info.count(kind), |l| {
                let handle = if l < owned {
                    base.wrapping_add(l)
                } else {
                    let (s, owner_local) = ribbon_owner(ribbon.get(start.wrapping_add(l - owned)));
                    let q = stashes.get(info.stash_offset.wrapping_add(s));
                    let owner_base = infos.get((INFO_WORDS.wrapping_mul(q)).wrapping_add(base_word(kind)));
                    owner_base.wrapping_add(owner_local)
                };
                let input = to_input.get(handle);
                let word = |i: u32| cap.attr_index(kind, (p, l), i);
                if kind == Kind::Vertex {
                    for i in 0..3 {
                        words.set(word(i), positions.get((3u32.wrapping_mul(input)).wrapping_add(i)));
                    }
                }
                words.set(word(input_index_word(kind)), input);
            });
        }
    }
}

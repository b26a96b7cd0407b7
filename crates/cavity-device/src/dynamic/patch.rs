//! A patch's working copy in shared memory (dynamic paper, section 4.1,
//! "Optimistic Parallelism"): a block loads FE, EV, bitmasks, ribbon hash
//! tables and patch stash once, changes only this copy, and writes it back
//! in one piece on commit, so rolling back is discarding it.
//!
//! Longer than 700 lines as one file on purpose: [`DynMesh`] is the one
//! place that knows the layout of the dynamic mesh's arrays (its accessors
//! are most of the file), and the ribbon tables and the patch copy read
//! that layout.

use crate::attribute::{Attr, Scalar};
use crate::block::{Block, Shared, SharedArena};
use crate::layout::{FE_REVERSED, Kind};

use super::global::{GlobalU16, GlobalU32};
use super::hash::{self, Slots};
use super::layout::{
    COUNT_STASH, COUNT_WORDS, Capacity, NO_PATCH, RawDynamicMesh, STASH_SIZE, flag,
};
use super::{lock, queue};

/// The global arrays of the dynamic mesh, typed (see [`RawDynamicMesh`]).
#[derive(Clone, Copy)]
pub struct DynMesh {
    /// Capacities.
    pub cap: Capacity,
    /// Patch slots in use.
    pub num_patches: u32,
    /// Per-patch counters.
    pub counts: GlobalU32,
    /// FE.
    pub fe: GlobalU16,
    /// EV.
    pub ev: GlobalU16,
    /// Bitmasks.
    pub masks: GlobalU32,
    /// Ribbon hash tables.
    pub hash: GlobalU32,
    /// Patch stashes.
    pub stash: GlobalU32,
    /// Lock words.
    pub locks: GlobalU32,
    /// Status flags.
    pub flags: GlobalU32,
    /// Declined seeds.
    pub declined: GlobalU32,
    /// Vertex attribute words.
    pub vertex_attrs: GlobalU32,
    /// Edge attribute words.
    pub edge_attrs: GlobalU32,
    /// Face attribute words.
    pub face_attrs: GlobalU32,
    /// Scheduler queue.
    pub queue: GlobalU32,
    /// Scheduler counters.
    pub queue_state: GlobalU32,
    /// Global counters.
    pub stats: GlobalU32,
}

impl DynMesh {
    /// The typed view of `raw`.
    ///
    /// # Safety
    /// Every address of `raw` must point to an array of the shape
    /// [`RawDynamicMesh`] documents for `raw.cap`, valid while the view is
    /// used, accessed by other threads only through the same protocol
    /// (atomics, FE/EV under patch locks).
    #[inline(always)]
    pub unsafe fn new(raw: &RawDynamicMesh) -> Self {
        // SAFETY: forwarded from the caller.
        unsafe {
            DynMesh {
                cap: raw.cap,
                num_patches: raw.num_patches,
                counts: GlobalU32::new(raw.counts),
                fe: GlobalU16::new(raw.fe),
                ev: GlobalU16::new(raw.ev),
                masks: GlobalU32::new(raw.masks),
                hash: GlobalU32::new(raw.hash),
                stash: GlobalU32::new(raw.stash),
                locks: GlobalU32::new(raw.locks),
                flags: GlobalU32::new(raw.flags),
                declined: GlobalU32::new(raw.declined),
                vertex_attrs: GlobalU32::new(raw.vertex_attrs),
                edge_attrs: GlobalU32::new(raw.edge_attrs),
                face_attrs: GlobalU32::new(raw.face_attrs),
                queue: GlobalU32::new(raw.queue),
                queue_state: GlobalU32::new(raw.queue_state),
                stats: GlobalU32::new(raw.stats),
            }
        }
    }

    /// High-water mark of `kind` in patch `p`.
    #[inline(always)]
    pub fn count(&self, p: u32, kind: Kind) -> u32 {
        self.counts.load(COUNT_WORDS * p + kind as u32)
    }

    /// Whether local `l` of `kind` is owned (`active == false`) or active in
    /// patch `p`, read from global memory.
    #[inline(always)]
    pub fn bit(&self, p: u32, kind: Kind, active: bool, l: u32) -> bool {
        self.masks.bit(
            p * self.cap.mask_stride() + self.cap.mask_offset(kind, active),
            l,
        )
    }

    /// Whether local `l` of `kind` is owned and active in patch `p` (the
    /// elements a computation on the patch visits).
    #[inline(always)]
    pub fn owns_active(&self, p: u32, kind: Kind, l: u32) -> bool {
        self.bit(p, kind, false, l) && self.bit(p, kind, true, l)
    }

    /// Changes bit `l` of a global mask of patch `p`.
    #[inline(always)]
    pub fn set_bit(&self, p: u32, kind: Kind, active: bool, l: u32, on: bool) {
        let w = p * self.cap.mask_stride() + self.cap.mask_offset(kind, active) + l / 32;
        if on {
            self.masks.fetch_or(w, 1 << (l % 32));
        } else {
            self.masks.fetch_and(w, !(1 << (l % 32)));
        }
    }

    /// The ribbon hash table of `kind` of patch `p` in global memory.
    #[inline(always)]
    pub fn table(&self, p: u32, kind: Kind) -> GlobalTable {
        GlobalTable {
            words: self.hash,
            base: p * self.cap.hash_stride() + self.cap.table_offset(kind),
            slots: self.cap.hash_slots(kind),
        }
    }

    /// Enqueues patch `p` for a later round and flags it queued.
    #[inline(always)]
    pub fn enqueue(&self, p: u32) {
        self.flags.fetch_or(p, flag::QUEUED);
        queue::push(self.queue, self.queue_state, self.cap.patches, p);
    }

    /// Whether patch `q` competes in this round: queued, or locked (being
    /// processed, or expanded into).
    #[inline(always)]
    pub fn competes(&self, q: u32) -> bool {
        self.flags.load(q) & flag::QUEUED != 0 || self.locks.load(q) != lock::FREE
    }

    /// Owner (patch, local) of local `l` of `kind` in patch `p` by one hop
    /// (the patch itself when it owns the element); `None` for an element
    /// that is neither owned nor in the ribbon table.
    #[inline(always)]
    pub fn owner(&self, p: u32, kind: Kind, l: u32) -> Option<(u32, u32)> {
        if self.bit(p, kind, false, l) {
            return Some((p, l));
        }
        let (s, ol) = hash::lookup(&self.table(p, kind), l)?;
        let q = self.stash.load(p * STASH_SIZE + s);
        (q != NO_PATCH).then_some((q, ol))
    }

    /// The three local vertices of face `f` of patch `p` (global FE/EV; the
    /// caller holds `p`'s lock).
    #[inline(always)]
    pub fn face_vertices(&self, p: u32, f: u32) -> [u32; 3] {
        [0, 1, 2].map(|i| self.corner_vertex(p, self.fe.load(p * self.cap.fe_stride() + 3 * f + i)))
    }

    /// The first vertex of the half-edge `h` (an FE entry) of patch `p`:
    /// the vertex of the face at that corner.
    #[inline(always)]
    pub fn corner_vertex(&self, p: u32, h: u16) -> u32 {
        let e = (h >> 1) as u32;
        let r = (h & FE_REVERSED) as u32;
        self.ev.load(p * self.cap.ev_stride() + 2 * e + r) as u32
    }

    /// The attribute words of `kind`.
    #[inline(always)]
    pub fn attrs(&self, kind: Kind) -> GlobalU32 {
        match kind {
            Kind::Vertex => self.vertex_attrs,
            Kind::Edge => self.edge_attrs,
            Kind::Face => self.face_attrs,
        }
    }

    /// Index of word `i` of the attribute words of local element `at.1` of
    /// `kind` in patch `at.0` (`Capacity::attr_index`).
    #[inline(always)]
    pub fn attr_at(&self, kind: Kind, at: (u32, u32), i: u32) -> u32 {
        self.cap.attr_index(kind, at, i)
    }

    /// Copies the attribute words of local element `from.1` of `kind` in
    /// patch `from.0` to local element `to.1` of patch `to.0` (migration
    /// and slicing: attributes follow their element). Nothing for a kind
    /// without attribute words.
    #[inline(always)]
    pub fn copy_attrs(&self, kind: Kind, from: (u32, u32), to: (u32, u32)) {
        let words = self.attrs(kind);
        for i in 0..self.cap.attr_stride(kind) {
            let x = words.load(self.attr_at(kind, from, i));
            words.store(self.attr_at(kind, to, i), x);
        }
    }

    /// Whether `attr`'s words lie within its kind's attribute words.
    #[inline(always)]
    pub fn holds<T: Scalar, const N: usize>(&self, attr: &Attr<T, N>) -> bool {
        self.holds_as(attr.kind(), attr)
    }

    /// [`DynMesh::holds`] with `attr`'s kind given (`kind ==
    /// attr.kind()`, a constant where [`Kind::specialize`] gives it).
    #[inline(always)]
    fn holds_as<T: Scalar, const N: usize>(&self, kind: Kind, attr: &Attr<T, N>) -> bool {
        let stride = self.cap.attr_stride(kind);
        attr.offset() <= stride && attr.words() <= stride - attr.offset()
    }

    /// The value of `attr` stored at local element `at.1` of patch `at.0`
    /// (that slot's words: the owner's value when the patch owns the
    /// element; see `cavity::Ctx::attr` for reads that resolve the owner).
    /// Defaults for a handle the mesh does not hold.
    #[inline(always)]
    pub fn load_attr<T: Scalar, const N: usize>(
        &self,
        attr: &Attr<T, N>,
        at: (u32, u32),
    ) -> [T; N] {
        attr.kind()
            .specialize(|kind| self.load_attr_as(kind, attr, at))
    }

    /// [`DynMesh::load_attr`] with `attr`'s kind given (`kind ==
    /// attr.kind()`, a constant where [`Kind::specialize`] gives it).
    #[inline(always)]
    pub fn load_attr_as<T: Scalar, const N: usize>(
        &self,
        kind: Kind,
        attr: &Attr<T, N>,
        at: (u32, u32),
    ) -> [T; N] {
        self.load_attr_with(kind, attr, |word| self.load_value(kind, at, word, T::WORDS))
    }

    /// [`DynMesh::load_attr_as`] with plain loads
    /// (`GlobalU32::load_unshared`, served from L1).
    ///
    /// # Safety
    /// No other thread writes the attribute's words of element `at` while
    /// the kernel runs (an element's own value in a per-element
    /// computation, which only its own thread writes).
    #[inline(always)]
    pub unsafe fn load_attr_unshared_as<T: Scalar, const N: usize>(
        &self,
        kind: Kind,
        attr: &Attr<T, N>,
        at: (u32, u32),
    ) -> [T; N] {
        self.load_attr_with(kind, attr, |word| {
            // SAFETY: the caller's contract.
            unsafe { self.load_value_unshared(kind, at, word, T::WORDS) }
        })
    }

    /// `attr` read component by component with `load` (the words of one
    /// value from its first word's index); defaults for a handle the mesh
    /// does not hold.
    #[inline(always)]
    fn load_attr_with<T: Scalar, const N: usize>(
        &self,
        kind: Kind,
        attr: &Attr<T, N>,
        load: impl Fn(u32) -> [u32; 2],
    ) -> [T; N] {
        let mut value = [T::default(); N];
        if self.holds_as(kind, attr) {
            for (c, x) in value.iter_mut().enumerate() {
                *x = T::from_words(load(attr.offset() + c as u32 * T::WORDS));
            }
        }
        value
    }

    /// Stores `value` as `attr` of local element `at.1` of patch `at.0`;
    /// nothing for a handle the mesh does not hold.
    #[inline(always)]
    pub fn store_attr<T: Scalar, const N: usize>(
        &self,
        attr: &Attr<T, N>,
        at: (u32, u32),
        value: [T; N],
    ) {
        attr.kind()
            .specialize(|kind| self.store_attr_as(kind, attr, at, value))
    }

    /// [`DynMesh::store_attr`] with `attr`'s kind given (`kind ==
    /// attr.kind()`, a constant where [`Kind::specialize`] gives it).
    #[inline(always)]
    pub fn store_attr_as<T: Scalar, const N: usize>(
        &self,
        kind: Kind,
        attr: &Attr<T, N>,
        at: (u32, u32),
        value: [T; N],
    ) {
        if self.holds_as(kind, attr) {
            for (c, x) in value.into_iter().enumerate() {
                let word = attr.offset() + c as u32 * T::WORDS;
                self.store_value(kind, at, word, x.to_words(), T::WORDS);
            }
        }
    }

    /// The `n` words (1, or 2 for an `f64`, low word first) of one value
    /// at word `word` of local element `at.1` of `kind` in patch `at.0`.
    #[inline(always)]
    pub fn load_value(&self, kind: Kind, at: (u32, u32), word: u32, n: u32) -> [u32; 2] {
        let words = self.attrs(kind);
        let i = |k| self.attr_at(kind, at, word + k);
        [words.load(i(0)), if n == 2 { words.load(i(1)) } else { 0 }]
    }

    /// [`DynMesh::load_value`] with plain loads (`GlobalU32::load_unshared`).
    ///
    /// # Safety
    /// No other thread writes those words while the kernel runs.
    #[inline(always)]
    pub unsafe fn load_value_unshared(
        &self,
        kind: Kind,
        at: (u32, u32),
        word: u32,
        n: u32,
    ) -> [u32; 2] {
        let words = self.attrs(kind);
        let i = |k| self.attr_at(kind, at, word + k);
        // SAFETY: the caller's contract.
        unsafe {
            [
                words.load_unshared(i(0)),
                if n == 2 { words.load_unshared(i(1)) } else { 0 },
            ]
        }
    }

    /// [`DynMesh::store_value`] with plain stores
    /// (`GlobalU32::store_unshared`).
    ///
    /// # Safety
    /// No other thread reads or writes those words while the kernel runs.
    #[inline(always)]
    pub unsafe fn store_value_unshared(
        &self,
        kind: Kind,
        at: (u32, u32),
        word: u32,
        w: [u32; 2],
        n: u32,
    ) {
        let words = self.attrs(kind);
        let i = |k| self.attr_at(kind, at, word + k);
        // SAFETY: the caller's contract.
        unsafe {
            words.store_unshared(i(0), w[0]);
            if n == 2 {
                words.store_unshared(i(1), w[1]);
            }
        }
    }

    /// Stores the `n` words of one value (see [`DynMesh::load_value`]).
    #[inline(always)]
    pub fn store_value(&self, kind: Kind, at: (u32, u32), word: u32, w: [u32; 2], n: u32) {
        let words = self.attrs(kind);
        words.store(self.attr_at(kind, at, word), w[0]);
        if n == 2 {
            words.store(self.attr_at(kind, at, word + 1), w[1]);
        }
    }

    /// Index in patch `p`'s global stash of `q`, adding it in the first
    /// free entry when absent; `None` when the stash is full.
    #[inline(always)]
    pub fn stash_index_or_add(&self, p: u32, q: u32) -> Option<u32> {
        let base = p * STASH_SIZE;
        // Eight loads in flight at a time rather than one after another.
        const CHUNK: u32 = 8;
        const { assert!(STASH_SIZE.is_multiple_of(CHUNK)) };
        for at in (0..STASH_SIZE).step_by(CHUNK as usize) {
            let entries: [u32; CHUNK as usize] =
                core::array::from_fn(|k| self.stash.load(base + at + k as u32));
            if let Some(k) = entries.iter().position(|&x| x == q) {
                return Some(at + k as u32);
            }
        }
        for s in 0..STASH_SIZE {
            let found = self.stash.compare_exchange(base + s, NO_PATCH, q);
            if found == NO_PATCH {
                self.counts.fetch_max(COUNT_WORDS * p + COUNT_STASH, s + 1);
                return Some(s);
            }
            if found == q {
                return Some(s);
            }
        }
        None
    }

    /// Adds `v` to global counter `i` of [`super::layout::stat`].
    #[inline(always)]
    pub fn add_stat(&self, i: u32, v: u32) {
        if v != 0 {
            self.stats.fetch_add(i, v);
        }
    }

    /// Whether a fatal error is recorded (`stat::FATAL`): the kernels a
    /// host launched before it read the error (rounds launched ahead, the
    /// slicing after them) then do nothing.
    #[inline(always)]
    pub fn failed(&self) -> bool {
        self.stats.load(super::layout::stat::FATAL) != 0
    }
}

/// A ribbon hash table in global memory.
#[derive(Clone, Copy)]
pub struct GlobalTable {
    words: GlobalU32,
    base: u32,
    slots: u32,
}

impl Slots for GlobalTable {
    #[inline(always)]
    fn slots(&self) -> u32 {
        self.slots
    }
    #[inline(always)]
    fn get(&self, i: u32) -> u32 {
        self.words.load(self.base + i)
    }
    #[inline(always)]
    fn set(&self, i: u32, v: u32) {
        self.words.store(self.base + i, v)
    }
    #[inline(always)]
    fn exchange(&self, i: u32, v: u32) -> u32 {
        self.words.swap(self.base + i, v)
    }
    #[inline(always)]
    fn compare_exchange(&self, i: u32, current: u32, new: u32) -> bool {
        self.words.compare_exchange(self.base + i, current, new) == current
    }
}

/// A hash table in a shared-memory window, changed with block-scope atomics.
#[derive(Clone, Copy)]
pub struct SharedTable<'b, B: Block> {
    /// The block.
    pub block: &'b B,
    /// The window holding the table.
    pub words: Shared<u32>,
    /// First word of the table in the window.
    pub base: u32,
    /// Slots of the table before its overflow slots.
    pub slots: u32,
}

impl<B: Block> Slots for SharedTable<'_, B> {
    #[inline(always)]
    fn slots(&self) -> u32 {
        self.slots
    }
    #[inline(always)]
    fn get(&self, i: u32) -> u32 {
        self.words.get(self.base + i)
    }
    #[inline(always)]
    fn set(&self, i: u32, v: u32) {
        self.words.set(self.base + i, v)
    }
    #[inline(always)]
    fn exchange(&self, i: u32, v: u32) -> u32 {
        self.block.shared_exchange(self.words, self.base + i, v)
    }
    #[inline(always)]
    fn compare_exchange(&self, i: u32, current: u32, new: u32) -> bool {
        self.block
            .shared_compare_exchange(self.words, self.base + i, current, new)
            == current
    }
}

/// The shared-memory working copy of one patch.
#[derive(Clone, Copy)]
pub struct PatchCopy {
    /// The patch.
    pub p: u32,
    /// Capacities.
    pub cap: Capacity,
    /// FE, `3 × cap.faces`.
    pub fe: Shared<u16>,
    /// EV, `2 × cap.edges`.
    pub ev: Shared<u16>,
    /// Owned and active bitmasks, [`Capacity::mask_stride`] words.
    pub masks: Shared<u32>,
    /// Ribbon hash tables, [`Capacity::hash_stride`] words.
    pub hash: Shared<u32>,
    /// Patch stash, 64 entries.
    pub stash: Shared<u32>,
    /// High-water marks of vertices, edges, faces and the stash length.
    pub counts: Shared<u32>,
}

impl PatchCopy {
    /// Windows for a patch of capacity `cap`.
    #[inline(always)]
    pub fn alloc(arena: &mut SharedArena, cap: Capacity, p: u32) -> Self {
        PatchCopy {
            p,
            cap,
            fe: arena.alloc(cap.fe_stride()),
            ev: arena.alloc(cap.ev_stride()),
            masks: arena.alloc(cap.mask_stride()),
            hash: arena.alloc(cap.hash_stride()),
            stash: arena.alloc(STASH_SIZE),
            counts: arena.alloc(COUNT_WORDS),
        }
    }

    /// Copies patch `p` from global memory (every thread; visible after a
    /// barrier). The block must hold `p`'s lock, or be the only one touching
    /// `p` (cleanup kernels).
    #[inline(always)]
    pub fn load<B: Block>(&self, block: &B, mesh: &DynMesh) {
        self.load_masks(block, mesh);
        self.load_connectivity(block, mesh);
    }

    /// The first half of [`PatchCopy::load`]: the counts and the owned and
    /// active bitmasks only (what tells which elements exist), so that a
    /// block can decide whether the patch needs the rest.
    #[inline(always)]
    pub fn load_masks<B: Block>(&self, block: &B, mesh: &DynMesh) {
        let p = self.p;
        let cap = &self.cap;
        block.for_each(COUNT_WORDS, |i| {
            self.counts.set(i, mesh.counts.load(COUNT_WORDS * p + i))
        });
        block.for_each(cap.mask_stride(), |i| {
            self.masks
                .set(i, mesh.masks.load(p * cap.mask_stride() + i))
        });
    }

    /// The second half of [`PatchCopy::load`]: FE, EV, the ribbon tables
    /// and the stash.
    #[inline(always)]
    pub fn load_connectivity<B: Block>(&self, block: &B, mesh: &DynMesh) {
        let p = self.p;
        let cap = &self.cap;
        let nf = mesh.count(p, Kind::Face);
        let ne = mesh.count(p, Kind::Edge);
        block.for_each(3 * nf, |i| {
            self.fe.set(i, mesh.fe.load(p * cap.fe_stride() + i))
        });
        block.for_each(2 * ne, |i| {
            self.ev.set(i, mesh.ev.load(p * cap.ev_stride() + i))
        });
        block.for_each(cap.hash_stride(), |i| {
            self.hash.set(i, mesh.hash.load(p * cap.hash_stride() + i))
        });
        block.for_each(STASH_SIZE, |i| {
            self.stash.set(i, mesh.stash.load(p * STASH_SIZE + i))
        });
    }

    /// Writes the copy back to global memory (every thread, after a
    /// barrier; the block holds `p`'s lock).
    #[inline(always)]
    pub fn store<B: Block>(&self, block: &B, mesh: &DynMesh) {
        let p = self.p;
        let cap = &self.cap;
        let nf = self.count(Kind::Face);
        let ne = self.count(Kind::Edge);
        block.for_each(COUNT_WORDS, |i| {
            mesh.counts.store(COUNT_WORDS * p + i, self.counts.get(i))
        });
        block.for_each(3 * nf, |i| {
            mesh.fe.store(p * cap.fe_stride() + i, self.fe.get(i))
        });
        block.for_each(2 * ne, |i| {
            mesh.ev.store(p * cap.ev_stride() + i, self.ev.get(i))
        });
        block.for_each(cap.mask_stride(), |i| {
            mesh.masks
                .store(p * cap.mask_stride() + i, self.masks.get(i))
        });
        block.for_each(cap.hash_stride(), |i| {
            mesh.hash.store(p * cap.hash_stride() + i, self.hash.get(i))
        });
        block.for_each(STASH_SIZE, |i| {
            mesh.stash.store(p * STASH_SIZE + i, self.stash.get(i))
        });
    }

    /// High-water mark of `kind`.
    #[inline(always)]
    pub fn count(&self, kind: Kind) -> u32 {
        self.counts.get(kind as u32)
    }

    #[inline(always)]
    fn mask_word(&self, kind: Kind, active: bool, l: u32) -> u32 {
        self.cap.mask_offset(kind, active) + l / 32
    }

    /// Word `i` of the active mask of `kind` (bits `32i..32i + 32`).
    #[inline(always)]
    pub fn active_word(&self, kind: Kind, i: u32) -> u32 {
        self.masks.get(self.cap.mask_offset(kind, true) + i)
    }

    /// Whether local `l` of `kind` is owned.
    #[inline(always)]
    pub fn is_owned(&self, kind: Kind, l: u32) -> bool {
        (self.masks.get(self.mask_word(kind, false, l)) >> (l % 32)) & 1 == 1
    }

    /// Whether local `l` of `kind` is active (exists).
    #[inline(always)]
    pub fn is_active(&self, kind: Kind, l: u32) -> bool {
        (self.masks.get(self.mask_word(kind, true, l)) >> (l % 32)) & 1 == 1
    }

    /// Sets or clears the owned (`active == false`) or active bit of local
    /// `l` of `kind` (atomic: other threads may change the same word).
    #[inline(always)]
    pub fn set_bit<B: Block>(&self, block: &B, kind: Kind, active: bool, l: u32, on: bool) {
        let w = self.mask_word(kind, active, l);
        if on {
            block.shared_fetch_or(self.masks, w, 1 << (l % 32));
        } else {
            block.shared_fetch_and(self.masks, w, !(1 << (l % 32)));
        }
    }

    /// The two local vertices of edge `e`.
    #[inline(always)]
    pub fn edge_vertices(&self, e: u32) -> [u32; 2] {
        [self.ev.get(2 * e) as u32, self.ev.get(2 * e + 1) as u32]
    }

    /// Corner `i`'s half-edge of face `f`: the local edge and whether the
    /// face traverses it against its EV order.
    #[inline(always)]
    pub fn face_edge(&self, f: u32, i: u32) -> (u32, bool) {
        let h = self.fe.get(3 * f + i);
        ((h >> 1) as u32, h & FE_REVERSED != 0)
    }

    /// The three local vertices of face `f` in its orientation (corner `i`
    /// starts half-edge `i`).
    #[inline(always)]
    pub fn face_vertices(&self, f: u32) -> [u32; 3] {
        let mut v = [0u32; 3];
        for (i, vi) in v.iter_mut().enumerate() {
            let (e, r) = self.face_edge(f, i as u32);
            *vi = self.ev.get(2 * e + r as u32) as u32;
        }
        v
    }

    /// The ribbon hash table of `kind`.
    #[inline(always)]
    pub fn table<'b, B: Block>(&self, block: &'b B, kind: Kind) -> SharedTable<'b, B> {
        SharedTable {
            block,
            words: self.hash,
            base: self.cap.table_offset(kind),
            slots: self.cap.hash_slots(kind),
        }
    }

    /// Owner (patch, local) of local `l` of `kind` (the patch itself when it
    /// owns it); `None` for an inactive or unresolvable element.
    #[inline(always)]
    pub fn owner<B: Block>(&self, block: &B, kind: Kind, l: u32) -> Option<(u32, u32)> {
        if self.is_owned(kind, l) {
            return Some((self.p, l));
        }
        let (s, ol) = hash::lookup(&self.table(block, kind), l)?;
        Some((self.stash.get(s), ol))
    }

    /// [`PatchCopy::owner`], or the local element itself when the ribbon
    /// names no owner (reads of its attributes then see the patch's own
    /// slot).
    #[inline(always)]
    pub fn owner_or_self<B: Block>(&self, block: &B, kind: Kind, l: u32) -> (u32, u32) {
        self.owner(block, kind, l).unwrap_or((self.p, l))
    }

    /// Index of patch `q` in the stash, adding it when absent (atomic);
    /// `None` when the stash is full.
    #[inline(always)]
    pub fn stash_index_or_add<B: Block>(&self, block: &B, q: u32) -> Option<u32> {
        if let Some(s) = self.stash_index(q) {
            return Some(s);
        }
        for s in 0..STASH_SIZE {
            let found = block.shared_compare_exchange(self.stash, s, NO_PATCH, q);
            if found == NO_PATCH || found == q {
                if found == NO_PATCH {
                    // The stash length is the highest used entry + 1.
                    block.shared_max(self.counts, COUNT_STASH, s + 1);
                }
                return Some(s);
            }
        }
        None
    }

    /// Index of patch `q` in the stash, if present.
    #[inline(always)]
    pub fn stash_index(&self, q: u32) -> Option<u32> {
        (0..STASH_SIZE).find(|&s| self.stash.get(s) == q)
    }
}

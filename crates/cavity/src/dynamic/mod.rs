//! The dynamic patched mesh on the host (Mahmoud et al. 2024, "Dynamic Mesh
//! Processing on the GPU", section 5.1): every patch slot has the same
//! capacity per element kind, ribbons are per-patch cuckoo hash tables
//! mapping a not-owned local element to its owner (a patch-stash index and
//! the owner-local index), and all arrays are allocated once, before any
//! kernel runs, with room for growth chosen by [`CapacityFactors`].
//!
//! [`DynamicMesh`] owns the host copies of every array of
//! [`RawDynamicMesh`] in the layout of `cavity_device::dynamic::layout`;
//! [`DynamicMesh::new`] builds it from a static [`PatchedMesh`] keeping every
//! patch's local numbering, [`DynamicMesh::export`] turns it back into an
//! indexed mesh, and [`DynamicMesh::validate`] checks every invariant the
//! dynamic kernels rely on (the oracle of the dynamic tests).
//!
//! [`PatchedMesh`]: crate::PatchedMesh

mod attribute;
mod build;
mod capacity;
mod error;
mod export;
mod tables;
mod validate;

use rayon::prelude::*;

use cavity_device::dynamic::hash::{self, Slots};
use cavity_device::dynamic::layout::{
    COUNT_STASH, COUNT_WORDS, Capacity, RawDynamicMesh, STASH_SIZE,
};
use cavity_device::layout::{FE_REVERSED, Kind};

pub use attribute::AttributeWriter;
pub(crate) use attribute::{check_by_input, check_words, check_writable, values_of};
pub(crate) use build::Shape;
pub use capacity::{CapacityFactors, MIN_SPARE_PATCH_SLOTS};
pub use error::{DynamicError, ValidationError, ValidationProblem};

use tables::Frozen;

use crate::attributes::AttributeLayout;

pub use cavity_device::dynamic::layout::{INPUT_INDEX_ATTR, NEW_ELEMENT};

/// The identity of an element: its owner patch and its local index there.
type Id = (u32, u32);

/// The dynamic patched mesh in host memory: the arrays of
/// [`RawDynamicMesh`] (see `cavity_device::dynamic::layout` for their
/// shapes), every patch slot at `p × stride`. Patches `0..num_patches` are
/// in use; the other slots are empty (zero counts, empty stashes).
#[derive(Clone, Debug)]
pub struct DynamicMesh {
    /// Capacities shared by all patch slots.
    pub(crate) cap: Capacity,
    /// Patch slots in use.
    pub(crate) num_patches: u32,
    /// The static patcher's maximum faces per patch.
    pub(crate) patch_size: u32,
    /// Vertices of the input mesh.
    pub(crate) input_vertices: u32,
    /// Edges of the input mesh ([`DynamicMesh::input_count`]).
    pub(crate) input_edges: u32,
    /// Faces of the input mesh ([`DynamicMesh::input_count`]).
    pub(crate) input_faces: u32,
    /// The user's attributes.
    attributes: AttributeLayout,
    /// `counts[4p..4p + 4]`: vertex, edge, face high-water marks and the
    /// stash length (`COUNT_STASH`).
    pub(crate) counts: Vec<u32>,
    /// FE, `3 × cap.faces` entries per slot: `(local edge << 1) | reversed`.
    pub(crate) fe: Vec<u16>,
    /// EV, `2 × cap.edges` entries per slot: two local vertices per edge.
    pub(crate) ev: Vec<u16>,
    /// Owned and active bitmasks of vertices, edges and faces,
    /// `cap.mask_stride()` words per slot.
    pub(crate) masks: Vec<u32>,
    /// Ribbon hash tables of vertices, edges and faces,
    /// `cap.hash_stride()` words per slot; empty slots are [`EMPTY`].
    ///
    /// [`EMPTY`]: cavity_device::dynamic::hash::EMPTY
    pub(crate) hash: Vec<u32>,
    /// Patch stashes, [`STASH_SIZE`] entries per slot; unused ones are
    /// [`NO_PATCH`].
    ///
    /// [`NO_PATCH`]: cavity_device::dynamic::layout::NO_PATCH
    pub(crate) stash: Vec<u32>,
    /// Patch lock words (0 = free).
    pub(crate) locks: Vec<u32>,
    /// Patch flags (`cavity_device::dynamic::layout::flag`).
    pub(crate) flags: Vec<u32>,
    /// Seeds whose fill-in declined in this sweep,
    /// `cap.declined_words()` words per slot (bit per local seed).
    pub(crate) declined: Vec<u32>,
    /// Attribute words of every local vertex, owned or not,
    /// `cap.vertex_attrs` per vertex slot, word by word within a patch
    /// slot (`Capacity::attr_index`): the position `x, y, z` as `f32`
    /// bits, the input index ([`INPUT_INDEX_ATTR`]), then the user's
    /// attributes (`crate::attributes`).
    pub(crate) vertex_attrs: Vec<u32>,
    /// Attribute words of every local edge, `cap.edge_attrs` per edge slot,
    /// laid out as the vertices' (none without user edge attributes): the input index, then the
    /// user's (read them with [`DynamicMesh::attr_words`]).
    pub(crate) edge_attrs: Vec<u32>,
    /// Attribute words of every local face, as for edges.
    pub(crate) face_attrs: Vec<u32>,
    /// The scheduler's queue, one slot per patch slot, [`NO_PATCH`] when
    /// empty.
    ///
    /// [`NO_PATCH`]: cavity_device::dynamic::layout::NO_PATCH
    pub(crate) queue: Vec<u32>,
    /// The scheduler's count, front and back, and the patch slots in use
    /// (see [`scheduler`]).
    ///
    /// [`scheduler`]: cavity_device::dynamic::scheduler
    pub(crate) queue_state: Vec<u32>,
    /// Global counters (`stat::COUNT` words).
    pub(crate) stats: Vec<u32>,
}

/// The per-patch arrays of a [`DynamicMesh`] as they lie in memory (their
/// shapes: `cavity_device::dynamic::layout` and the fields of
/// [`RawDynamicMesh`]), read-only: for inspection, as the layout tests do.
/// [`DynamicMesh::storage_mut`] gives them mutable.
#[derive(Debug)]
pub struct Storage<C, H> {
    /// Vertex, edge and face high-water marks and the stash length, 4 per
    /// slot.
    pub counts: C,
    /// FE, `3 × cap.faces` entries per slot.
    pub fe: H,
    /// EV, `2 × cap.edges` entries per slot.
    pub ev: H,
    /// Owned and active bitmasks, `cap.mask_stride()` words per slot.
    pub masks: C,
    /// Ribbon hash tables, `cap.hash_stride()` words per slot.
    pub hash: C,
    /// Patch stashes, `STASH_SIZE` entries per slot.
    pub stash: C,
    /// Patch lock words.
    pub locks: C,
    /// Patch flags.
    pub flags: C,
    /// Declined seeds, `cap.declined_words()` words per slot.
    pub declined: C,
    /// Vertex attribute words, `cap.vertex_attrs` per vertex slot.
    pub vertex_attrs: C,
    /// Edge attribute words, `cap.edge_attrs` per edge slot.
    pub edge_attrs: C,
    /// Face attribute words, `cap.face_attrs` per face slot.
    pub face_attrs: C,
    /// The scheduler's queue.
    pub queue: C,
    /// The scheduler's count, front, back and slots in use.
    pub queue_state: C,
    /// Global counters.
    pub stats: C,
}

/// The arrays of a [`DynamicMesh`], read-only.
pub type StorageRef<'a> = Storage<&'a [u32], &'a [u16]>;
/// The arrays of a [`DynamicMesh`], mutable ([`DynamicMesh::storage_mut`]).
pub type StorageMut<'a> = Storage<&'a mut [u32], &'a mut [u16]>;

impl DynamicMesh {
    /// Capacities shared by all patch slots.
    pub fn cap(&self) -> Capacity {
        self.cap
    }

    /// Patch slots in use (`0..num_patches`).
    pub fn num_patches(&self) -> u32 {
        self.num_patches
    }

    /// The patches patch `p` holds ribbon elements of (its stash), as the
    /// host holds the mesh: every patch owning a neighbour of an element
    /// `p` owns is among them.
    pub fn neighbour_patches(&self, p: u32) -> impl Iterator<Item = u32> + '_ {
        let at = (p * cavity_device::dynamic::layout::STASH_SIZE) as usize;
        self.stash[at..at + cavity_device::dynamic::layout::STASH_SIZE as usize]
            .iter()
            .copied()
            .filter(|&q| q != cavity_device::dynamic::layout::NO_PATCH)
    }

    /// The static patcher's maximum faces per patch.
    pub fn patch_size(&self) -> u32 {
        self.patch_size
    }

    /// The arrays, read-only ([`Storage`]).
    pub fn storage(&self) -> StorageRef<'_> {
        Storage {
            counts: &self.counts,
            fe: &self.fe,
            ev: &self.ev,
            masks: &self.masks,
            hash: &self.hash,
            stash: &self.stash,
            locks: &self.locks,
            flags: &self.flags,
            declined: &self.declined,
            vertex_attrs: &self.vertex_attrs,
            edge_attrs: &self.edge_attrs,
            face_attrs: &self.face_attrs,
            queue: &self.queue,
            queue_state: &self.queue_state,
            stats: &self.stats,
        }
    }

    /// The arrays, mutable: for tests that break a mesh on purpose
    /// ([`DynamicMesh::validate`] must find it).
    ///
    /// # Safety
    /// The kernels trust the arrays (local indices within the capacities,
    /// stash entries naming patch slots, ribbon entries naming slots in
    /// use): before the mesh runs on a backend again, the caller restores
    /// what [`DynamicMesh::validate`] checks.
    pub unsafe fn storage_mut(&mut self) -> StorageMut<'_> {
        Storage {
            counts: &mut self.counts,
            fe: &mut self.fe,
            ev: &mut self.ev,
            masks: &mut self.masks,
            hash: &mut self.hash,
            stash: &mut self.stash,
            locks: &mut self.locks,
            flags: &mut self.flags,
            declined: &mut self.declined,
            vertex_attrs: &mut self.vertex_attrs,
            edge_attrs: &mut self.edge_attrs,
            face_attrs: &mut self.face_attrs,
            queue: &mut self.queue,
            queue_state: &mut self.queue_state,
            stats: &mut self.stats,
        }
    }

    /// The arrays as host addresses, for the CPU backend's kernels. The
    /// addresses stay valid while the vectors are neither dropped nor
    /// resized; the exclusive borrow marks that kernels may write through
    /// them.
    pub fn raw(&mut self) -> RawDynamicMesh {
        RawDynamicMesh {
            cap: self.cap,
            num_patches: self.num_patches,
            reserved: 0,
            counts: self.counts.as_mut_ptr() as u64,
            fe: self.fe.as_mut_ptr() as u64,
            ev: self.ev.as_mut_ptr() as u64,
            masks: self.masks.as_mut_ptr() as u64,
            hash: self.hash.as_mut_ptr() as u64,
            stash: self.stash.as_mut_ptr() as u64,
            locks: self.locks.as_mut_ptr() as u64,
            flags: self.flags.as_mut_ptr() as u64,
            declined: self.declined.as_mut_ptr() as u64,
            vertex_attrs: self.vertex_attrs.as_mut_ptr() as u64,
            edge_attrs: self.edge_attrs.as_mut_ptr() as u64,
            face_attrs: self.face_attrs.as_mut_ptr() as u64,
            queue: self.queue.as_mut_ptr() as u64,
            queue_state: self.queue_state.as_mut_ptr() as u64,
            stats: self.stats.as_mut_ptr() as u64,
        }
    }

    /// High-water marks of vertices, edges and faces of patch `p` (below
    /// `cap.patches`).
    pub fn counts(&self, p: u32) -> [u32; 3] {
        Kind::ALL.map(|kind| self.count(p, kind))
    }

    /// The high-water mark of `kind` in patch `p`.
    fn count(&self, p: u32, kind: Kind) -> u32 {
        self.counts[(COUNT_WORDS * p + kind as u32) as usize]
    }

    /// The stash length of patch `p`.
    fn stash_len(&self, p: u32) -> u32 {
        self.counts[(COUNT_WORDS * p + COUNT_STASH) as usize]
    }

    /// Stash entry `s` of patch `p`.
    fn stash_entry(&self, p: u32, s: u32) -> u32 {
        self.stash[(STASH_SIZE * p + s) as usize]
    }

    /// Bit `local` of the owned (`active == false`) or active mask of `kind`
    /// in patch `p`; false at or above the capacity.
    fn bit(&self, p: u32, kind: Kind, active: bool, local: u32) -> bool {
        if local >= self.cap.of(kind) {
            return false;
        }
        let w = self.cap.mask_stride() * p + self.cap.mask_offset(kind, active) + local / 32;
        (self.masks[w as usize] >> (local % 32)) & 1 == 1
    }

    /// Whether local element `local` of `kind` is owned by patch `p` (below
    /// `cap.patches`); false at or above the capacity.
    pub fn is_owned(&self, p: u32, kind: Kind, local: u32) -> bool {
        self.bit(p, kind, false, local)
    }

    /// Whether local element `local` of `kind` is active in patch `p` (below
    /// `cap.patches`); false at or above the capacity.
    pub fn is_active(&self, p: u32, kind: Kind, local: u32) -> bool {
        self.bit(p, kind, true, local)
    }

    /// Index of the first word of the ribbon hash table of `kind` in patch
    /// `p`.
    fn table_start(&self, p: u32, kind: Kind) -> usize {
        (self.cap.hash_stride() * p + self.cap.table_offset(kind)) as usize
    }

    /// The owner of active local element `local` of `kind` in patch `p`
    /// (below `cap.patches`) as `(patch, local index there)`: `(p, local)`
    /// when `p` owns it, else the stash entry and owner-local index of its
    /// ribbon hash entry (one hop). `None` when the element is inactive, has
    /// no entry or its entry names no stash entry.
    pub fn owner(&self, p: u32, kind: Kind, local: u32) -> Option<(u32, u32)> {
        self.owner_in(&self.frozen_table(p, kind), p, kind, local)
    }

    /// The ribbon hash table of `kind` in patch `p`, read in place.
    fn frozen_table(&self, p: u32, kind: Kind) -> Frozen<'_> {
        Frozen(&self.hash[self.table_start(p, kind)..][..self.cap.table_words(kind) as usize])
    }

    /// [`DynamicMesh::owner`] with the ribbon table of `kind` in `p` given
    /// (as cells, or [`Frozen`]).
    fn owner_in<S: Slots + ?Sized>(&self, table: &S, p: u32, kind: Kind, local: u32) -> Option<Id> {
        if !self.is_active(p, kind, local) {
            return None;
        }
        if self.is_owned(p, kind, local) {
            return Some((p, local));
        }
        let (s, owner_local) = hash::lookup(table, local)?;
        (s < self.stash_len(p)).then(|| (self.stash_entry(p, s), owner_local))
    }

    /// FE entry `i` of local face `f` of patch `p`.
    fn fe_entry(&self, p: u32, f: u32, i: u32) -> u16 {
        self.fe[(self.cap.fe_stride() * p + 3 * f + i) as usize]
    }

    /// EV entry `i` of local edge `e` of patch `p`.
    fn ev_entry(&self, p: u32, e: u32, i: u32) -> u32 {
        self.ev[(self.cap.ev_stride() * p + 2 * e + i) as usize] as u32
    }

    /// Local edge `e` of patch `p` as traversed by an FE entry with
    /// `reversed` bit: `[start, end]`.
    fn directed_edge(&self, p: u32, e: u32, reversed: bool) -> [u32; 2] {
        let (a, b) = (self.ev_entry(p, e, 0), self.ev_entry(p, e, 1));
        if reversed { [b, a] } else { [a, b] }
    }

    /// The three local vertices of local face `f` of patch `p` in the
    /// face's orientation: corner `i` is where FE entry `i` starts (its
    /// edge's first EV vertex, or its second when the entry has the
    /// reversed bit), as in the static layout. `f` must be below the face
    /// capacity and its FE entries name edges below the edge capacity.
    pub fn face_vertices(&self, p: u32, f: u32) -> [u32; 3] {
        [0, 1, 2].map(|i| {
            let e = self.fe_entry(p, f, i);
            self.directed_edge(p, (e >> 1) as u32, e & FE_REVERSED != 0)[0]
        })
    }

    /// The position stored with local vertex `v` of patch `p` (the owner's
    /// value, or the ribbon copy of it).
    pub fn position(&self, p: u32, v: u32) -> [f32; 3] {
        [0, 1, 2].map(|c| {
            f32::from_bits(self.vertex_attrs[self.cap.attr_index(Kind::Vertex, (p, v), c) as usize])
        })
    }

    /// Active owned elements of each kind (vertices, edges, faces) over the
    /// patches in use.
    pub fn num_elements(&self) -> [usize; 3] {
        Kind::ALL.map(|kind| self.num_owned(kind))
    }

    /// Active owned elements of `kind` over the patches in use (counted in
    /// parallel over the patches).
    fn num_owned(&self, kind: Kind) -> usize {
        (0..self.num_patches)
            .into_par_iter()
            .map(|p| self.owned_active(p, kind).count())
            .sum()
    }

    /// Bytes of all arrays (every patch slot, used or not; of a layout
    /// made on the device, once its arrays are copied to the host).
    pub fn bytes(&self) -> usize {
        self.planned_bytes() as usize
    }

    /// The bytes of the arrays as allocated: [`DynamicMesh::bytes`] once
    /// they are.
    fn array_bytes(&self) -> usize {
        2 * (self.fe.len() + self.ev.len())
            + 4 * (self.counts.len()
                + self.masks.len()
                + self.hash.len()
                + self.stash.len()
                + self.locks.len()
                + self.flags.len()
                + self.declined.len()
                + self.vertex_attrs.len()
                + self.edge_attrs.len()
                + self.face_attrs.len()
                + self.queue.len()
                + self.queue_state.len()
                + self.stats.len())
    }

    /// [`DynamicMesh::bytes`] per active owned face (per one when there is
    /// none).
    pub fn bytes_per_face(&self) -> f64 {
        self.bytes() as f64 / self.num_owned(Kind::Face).max(1) as f64
    }

    /// Active owned local elements of `kind` in patch `p`.
    fn owned_active(&self, p: u32, kind: Kind) -> impl Iterator<Item = u32> + '_ {
        (0..self.count(p, kind))
            .filter(move |&l| self.is_owned(p, kind, l) && self.is_active(p, kind, l))
    }

    /// Active local elements of `kind` in patch `p`.
    fn active(&self, p: u32, kind: Kind) -> impl Iterator<Item = u32> + '_ {
        (0..self.count(p, kind)).filter(move |&l| self.is_active(p, kind, l))
    }
}

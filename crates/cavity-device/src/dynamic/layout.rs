//! Global-memory layout of the dynamic patched mesh (dynamic paper,
//! section 5.1): every patch slot has the same capacity per element kind,
//! so patch `p`'s FE, EV, bitmasks, ribbon hash tables, patch stash and
//! attributes lie at `p × stride` in their arrays. Capacities come from two
//! run-time factors (elements per patch, extra patch slots) chosen on the
//! host; nothing is allocated while kernels run.
//!
//! Local indices have 13 bits (at most [`MAX_CAPACITY`] elements of a kind
//! per patch) so that a ribbon hash entry packs key, patch-stash index and
//! owner-local index into one 32-bit word (section 5.1, "the key-value of
//! our hash table").

use crate::attribute::{Attr, Scalar};
use crate::layout::Kind;

/// Bits of a local index in the dynamic layout.
pub const LOCAL_BITS: u32 = 13;
/// Mask of a local index.
pub const LOCAL_MASK: u32 = (1 << LOCAL_BITS) - 1;
/// Largest capacity of one element kind per patch (a multiple of 32 below
/// `2^13`, so that every local index differs from [`LOCAL_MASK`]).
pub const MAX_CAPACITY: u32 = 8160;
/// Entries of a patch stash (6-bit stash indices).
pub const STASH_SIZE: u32 = 64;
/// An empty patch-stash entry.
pub const NO_PATCH: u32 = u32::MAX;
/// Overflow slots after each ribbon hash table, used when a cuckoo
/// eviction chain gets too long.
pub const HASH_OVERFLOW: u32 = 16;

/// Entries of the per-patch counter record in [`RawDynamicMesh::counts`].
pub const COUNT_WORDS: u32 = 4;
/// `counts[4p + COUNT_STASH]`: entries used in the patch stash (the other
/// three are the vertex, edge and face high-water marks, by [`Kind`]).
pub const COUNT_STASH: u32 = 3;

/// The vertex positions as an attribute (`x, y, z`, the first words of
/// every vertex), for computations that read them
/// (`dynamic::compute::Element::get_at`).
pub const POSITION: Attr<f32, 3> = Attr::new(Kind::Vertex, 0);

/// Vertex attribute words the core keeps before the user's attributes:
/// the position `x, y, z` (`f32`), the input index
/// ([`INPUT_INDEX_ATTR`]).
pub const VERTEX_CORE_ATTRS: u32 = 4;
/// Vertex attribute word holding the input vertex index ([`NEW_ELEMENT`]
/// for a vertex a fill-in added).
pub const INPUT_INDEX_ATTR: u32 = 3;
/// Edge and face attribute words the core keeps before the user's
/// attributes when the kind has any (else the kind has no attribute words
/// at all): the input element index, word [`ELEMENT_INPUT_INDEX`].
pub const ELEMENT_CORE_ATTRS: u32 = 1;
/// Edge and face attribute word holding the input element index.
pub const ELEMENT_INPUT_INDEX: u32 = 0;

/// The attribute word of `kind` holding an element's input index
/// ([`INPUT_INDEX_ATTR`] for vertices, [`ELEMENT_INPUT_INDEX`] for edges
/// and faces; edges and faces have it only when their kind has attribute
/// words).
#[inline(always)]
pub fn input_index_word(kind: Kind) -> u32 {
    match kind {
        Kind::Vertex => INPUT_INDEX_ATTR,
        Kind::Edge | Kind::Face => ELEMENT_INPUT_INDEX,
    }
}
/// Attribute words the core keeps on `kind` before the user's.
#[inline(always)]
pub fn core_attrs(kind: Kind) -> u32 {
    match kind {
        Kind::Vertex => VERTEX_CORE_ATTRS,
        Kind::Edge | Kind::Face => ELEMENT_CORE_ATTRS,
    }
}

/// Whether a computation may write `attr` (of its own kind `kind`): a
/// user attribute, or the vertex position ([`POSITION`]); the core's other
/// words (the input index) are the core's.
#[inline(always)]
pub fn computation_writes<T: Scalar, const N: usize>(kind: Kind, attr: &Attr<T, N>) -> bool {
    let position = kind == Kind::Vertex && attr.offset() + attr.words() <= 3;
    position || attr.offset() >= core_attrs(kind)
}

/// The input index of an element a fill-in added.
pub const NEW_ELEMENT: u32 = u32::MAX;

/// Per-patch status flags in [`RawDynamicMesh::flags`].
pub mod flag {
    /// The patch was changed in this round (it committed, or a neighbour
    /// took elements from it): it may not be processed or read again until
    /// the cleanup kernels have run.
    pub const DIRTY: u32 = 1;
    /// The patch ran out of capacity in this round and should be sliced.
    pub const SLICE: u32 = 2;
    /// The calibration changed the patch's ribbon (an entry re-pointed or
    /// a copy of a deleted element dropped): the compaction must visit it.
    pub const TOUCHED: u32 = 4;
    /// In this sweep the patch committed, a fill-in or a predicate of it
    /// declined or deferred, a neighbour took elements from it, or its
    /// ribbon changed (an entry re-pointed or dropped): whatever its
    /// candidates depend on within its view may have changed (kept across
    /// rounds; cleared when the next sweep is enqueued,
    /// `scheduler::refill`).
    pub const CHANGED: u32 = 8;
    /// A sweep began since the patch last stored its declined seeds: they
    /// are stale (set for every patch when a sweep is enqueued,
    /// `scheduler::refill`; the new half of a slicing inherits it).
    pub const NEW_SWEEP: u32 = 16;
    /// The patch is queued and no block has begun on it (set when it is
    /// enqueued, cleared once a block holds its lock and starts): with its
    /// lock word, this tells a neighbour that the patch competes in the
    /// round (see `scheduler::outranks`).
    pub const QUEUED: u32 = 32;
    /// In this round a neighbour's expansion copied elements of the patch
    /// and then failed, so the neighbour may have committed copies it does
    /// not need (until its compaction): the patch reuses no slot of an
    /// element it deletes before the cleanup (see
    /// `cavity::mark_fresh`). Cleared by the compaction.
    pub const NAMED: u32 = 64;
    /// The patch ran out of room in the first pass of a processing, right
    /// after a cleanup, and filled cavities in later passes: it is sliced
    /// between rounds like a [`SLICE`] patch when it owns at least a
    /// quarter of the face slots and a patch slot is to spare (else the
    /// flag is just cleared), so that a patch that grows (edge splits)
    /// gets room in one slicing instead of filling a few cavities a round
    /// until none fits.
    pub const CROWDED: u32 = 128;
    /// A per-element computation marked the patch
    /// (`compute::Element::mark_patch`) since the host last took the
    /// marks (`Rounds::take_marked_patches`).
    pub const MARKED: u32 = 256;
}

/// Global counters in [`RawDynamicMesh::stats`].
pub mod stat {
    /// Patches dequeued by blocks and not outranked ([`OUTRANKED`]).
    pub const SCHEDULED: u32 = 0;
    /// Dequeued patches given back without a commit (lock not obtained,
    /// dirty neighbour): the rolled-back work of fig. 6.
    pub const ROLLED_BACK: u32 = 1;
    /// Cavities filled in (operations done).
    pub const FILLED: u32 = 2;
    /// Cavities that lost the independent set or could not own their
    /// closure (retried in a later round).
    pub const LOST: u32 = 3;
    /// Cavities dropped because the patch was out of capacity.
    pub const CAPACITY: u32 = 4;
    /// Set to one of the `FATAL_*` codes when a capacity that no round can
    /// fix was exceeded.
    pub const FATAL: u32 = 5;
    /// Cavities whose fill-in declined (the application's own check
    /// failed); they are not retried until their patch changes.
    pub const DECLINED: u32 = 6;
    /// [`FATAL`]: a patch stash would hold more than 64 neighbour patches.
    pub const FATAL_STASH: u32 = 1;
    /// [`FATAL`]: a ribbon hash table is full.
    pub const FATAL_HASH: u32 = 2;
    /// [`FATAL`]: an ownership chain is longer than the cleanup follows.
    pub const FATAL_CHAIN: u32 = 3;
    /// [`FATAL`]: a patch must be sliced but every patch slot is in use.
    pub const FATAL_PATCH_SLOTS: u32 = 4;
    /// [`FATAL`]: a patch out of element slots owns too few faces for
    /// slicing to help (`slice::min_owned_faces`): its cavities'
    /// neighbourhoods do not fit in a patch.
    pub const FATAL_TOO_SMALL: u32 = 5;
    /// Dequeued patches given back untouched because a competing neighbour
    /// outranks them in the round (`scheduler::outranks`).
    pub const OUTRANKED: u32 = 7;
    /// Elements that per-element computations counted
    /// (`compute::Element::count`) since the host last took the count.
    pub const COUNTED: u32 = 8;
    /// Number of counters.
    pub const COUNT: u32 = 9;
}

/// Capacities shared by all patch slots (a kernel parameter).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(
    not(target_arch = "nvptx64"),
    derive(bytemuck::Pod, bytemuck::Zeroable)
)]
pub struct Capacity {
    /// Vertices per patch (a multiple of 32, at most [`MAX_CAPACITY`]).
    pub vertices: u32,
    /// Edges per patch.
    pub edges: u32,
    /// Faces per patch.
    pub faces: u32,
    /// Patch slots (used ones plus room for slicing).
    pub patches: u32,
    /// Attribute words per vertex: [`VERTEX_CORE_ATTRS`], then the
    /// user's (`crate::attribute`).
    pub vertex_attrs: u32,
    /// Attribute words per edge: 0, or [`ELEMENT_CORE_ATTRS`] and the
    /// user's.
    pub edge_attrs: u32,
    /// Attribute words per face: 0, or [`ELEMENT_CORE_ATTRS`] and the
    /// user's.
    pub face_attrs: u32,
    /// Padding to 8 words.
    pub reserved: u32,
}

impl Capacity {
    /// Capacity of `kind`.
    #[inline(always)]
    pub fn of(&self, kind: Kind) -> u32 {
        match kind {
            Kind::Vertex => self.vertices,
            Kind::Edge => self.edges,
            Kind::Face => self.faces,
        }
    }

    /// Bits of a local vertex index (below [`Capacity::vertices`]): the
    /// shift of a packed `(patch, local vertex)` (`super::ring::VertexSlot`).
    #[inline(always)]
    pub fn vertex_bits(&self) -> u32 {
        u32::BITS - self.vertices.saturating_sub(1).leading_zeros()
    }

    /// Attribute words per element of `kind`.
    #[inline(always)]
    pub fn attr_stride(&self, kind: Kind) -> u32 {
        match kind {
            Kind::Vertex => self.vertex_attrs,
            Kind::Edge => self.edge_attrs,
            Kind::Face => self.face_attrs,
        }
    }

    /// Attribute words per patch slot of `kind`.
    #[inline(always)]
    pub fn attr_words(&self, kind: Kind) -> u32 {
        self.of(kind) * self.attr_stride(kind)
    }

    /// Index of word `word` (below [`Capacity::attr_stride`]) of local
    /// element `l` of `kind` in patch slot `p`, in that kind's attribute
    /// words. A patch slot's words are laid out word by word: word 0 of
    /// every local element, then word 1, and so on, so that threads taking
    /// consecutive elements read and write consecutive words (coalesced
    /// on the GPU) and a computation pulls only the words it uses.
    #[inline(always)]
    pub fn attr_index(&self, kind: Kind, (p, l): (u32, u32), word: u32) -> u32 {
        p * self.attr_words(kind) + word * self.of(kind) + l
    }

    /// FE entries per patch slot.
    #[inline(always)]
    pub fn fe_stride(&self) -> u32 {
        3 * self.faces
    }

    /// EV entries per patch slot.
    #[inline(always)]
    pub fn ev_stride(&self) -> u32 {
        2 * self.edges
    }

    /// Words of one bitmask of `kind`.
    #[inline(always)]
    pub fn mask_words(&self, kind: Kind) -> u32 {
        self.of(kind) / 32
    }

    /// Bitmask words per patch slot: owned then active mask of vertices,
    /// edges and faces.
    #[inline(always)]
    pub fn mask_stride(&self) -> u32 {
        2 * (self.vertices + self.edges + self.faces) / 32
    }

    /// Offset of the owned (`active == false`) or active mask of `kind`
    /// inside a patch's bitmask words.
    #[inline(always)]
    pub fn mask_offset(&self, kind: Kind, active: bool) -> u32 {
        let base = match kind {
            Kind::Vertex => 0,
            Kind::Edge => 2 * self.vertices / 32,
            Kind::Face => 2 * (self.vertices + self.edges) / 32,
        };
        base + if active { self.mask_words(kind) } else { 0 }
    }

    /// Slots of the ribbon hash table of `kind`, before its
    /// [`HASH_OVERFLOW`] overflow slots: one per element slot of the kind
    /// (a patch holds at most that many not-owned copies and forwarding
    /// entries; in practice its ribbon fills a fifth to a third of them).
    #[inline(always)]
    pub fn hash_slots(&self, kind: Kind) -> u32 {
        self.of(kind)
    }

    /// Words of the ribbon hash table of `kind` with its overflow slots.
    #[inline(always)]
    pub fn table_words(&self, kind: Kind) -> u32 {
        self.hash_slots(kind) + HASH_OVERFLOW
    }

    /// First word of the table of `kind` among a patch's hash words (the
    /// tables of vertices, edges and faces follow each other).
    #[inline(always)]
    pub fn table_offset(&self, kind: Kind) -> u32 {
        match kind {
            Kind::Vertex => 0,
            Kind::Edge => self.table_words(Kind::Vertex),
            Kind::Face => self.table_words(Kind::Vertex) + self.table_words(Kind::Edge),
        }
    }

    /// The kind whose table holds word `i` of a patch's hash words
    /// (`i < hash_stride()`).
    #[inline(always)]
    pub fn table_kind(&self, i: u32) -> Kind {
        if i < self.table_offset(Kind::Edge) {
            Kind::Vertex
        } else if i < self.table_offset(Kind::Face) {
            Kind::Edge
        } else {
            Kind::Face
        }
    }

    /// Hash words per patch slot: the tables of vertices, edges and faces.
    #[inline(always)]
    pub fn hash_stride(&self) -> u32 {
        self.table_offset(Kind::Face) + self.table_words(Kind::Face)
    }

    /// Words per patch slot of the declined-seed bitmask (one bit per slot
    /// of the largest kind, so that any template's seeds fit).
    #[inline(always)]
    pub fn declined_words(&self) -> u32 {
        self.vertices.max(self.edges).max(self.faces) / 32
    }
}

/// The dynamic patched mesh as raw device (or host) addresses: the one
/// struct the dynamic kernels receive, by value. Shapes, per patch slot `p`
/// of [`Capacity::patches`]:
/// - `counts[4p..4p + 4]`: high-water marks of vertices, edges, faces
///   (local indices in use are below them) and the patch-stash length;
/// - `fe[p × 3F..]`: `(local edge << 1) | reversed` per face corner;
/// - `ev[p × 2E..]`: two local vertices per edge;
/// - `masks[p × mask_stride..]`: owned and active bitmasks;
/// - `hash[p × hash_stride..]`: ribbon hash tables (see [`super::hash`]);
/// - `stash[p × 64..]`: neighbour patch ids, [`NO_PATCH`] when unused;
/// - `locks[p]`, `flags[p]`: the patch lock word and [`flag`] bits;
/// - `declined[p × declined_words..]`: seeds whose fill-in declined in this
///   sweep (bit per local seed; stale while `flag::NEW_SWEEP` is set);
/// - `vertex_attrs[p × V × A..]`, `edge_attrs[p × E × A_E..]`,
///   `face_attrs[p × F × A_F..]`: the attribute words of each patch slot,
///   word `i` of local element `l` at `i × V + l` (`V`, `E`, `F` the
///   capacities; [`Capacity::attr_index`]; see `crate::attribute`);
/// - `queue[..patches]`, `queue_state[..queue::STATE_WORDS]`: the
///   scheduler's ring buffer, its counters, the patch slots in use and the
///   round's share (see [`super::scheduler`]);
/// - `stats[..stat::COUNT]`: global counters.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
#[cfg_attr(
    not(target_arch = "nvptx64"),
    derive(bytemuck::Pod, bytemuck::Zeroable)
)]
pub struct RawDynamicMesh {
    /// Capacities.
    pub cap: Capacity,
    /// Patch slots in use (patches `0..num_patches`).
    pub num_patches: u32,
    /// Padding.
    pub reserved: u32,
    /// Address of `counts` (u32).
    pub counts: u64,
    /// Address of `fe` (u16).
    pub fe: u64,
    /// Address of `ev` (u16).
    pub ev: u64,
    /// Address of `masks` (u32).
    pub masks: u64,
    /// Address of `hash` (u32).
    pub hash: u64,
    /// Address of `stash` (u32).
    pub stash: u64,
    /// Address of `locks` (u32).
    pub locks: u64,
    /// Address of `flags` (u32).
    pub flags: u64,
    /// Address of `declined` (u32).
    pub declined: u64,
    /// Address of `vertex_attrs` (u32).
    pub vertex_attrs: u64,
    /// Address of `edge_attrs` (u32).
    pub edge_attrs: u64,
    /// Address of `face_attrs` (u32).
    pub face_attrs: u64,
    /// Address of `queue` (u32).
    pub queue: u64,
    /// Address of `queue_state` (u32).
    pub queue_state: u64,
    /// Address of `stats` (u32).
    pub stats: u64,
}

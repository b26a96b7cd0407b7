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

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

use cavity_device::dynamic::hash::{self, EMPTY, RIBBON, Slots};
use cavity_device::dynamic::layout::{
    COUNT_STASH, COUNT_WORDS, Capacity, HASH_OVERFLOW, MAX_CAPACITY, NO_PATCH, RawDynamicMesh,
    STASH_SIZE, VALENCE_ATTR, stat,
};
use cavity_device::dynamic::scheduler;
use cavity_device::layout::{FE_REVERSED, Kind, ribbon_owner};

use crate::patcher::PatchError;
use crate::reference::UnionFind;
use crate::settings::{NamesSettings, Setting};
use crate::topology::Topology;
use crate::{PatchedMesh, TriMesh};

/// Attribute values per vertex: the position `x, y, z`, the input vertex
/// index (a `u32`; [`NEW_VERTEX`] for vertices added by fill-ins), and the
/// valence the remeshing flips read (`VALENCE_ATTR`, all ones until
/// stored).
const VERTEX_ATTRS: u32 = 5;
/// Attribute holding the input vertex index.
pub const INPUT_INDEX_ATTR: u32 = 3;
/// The input index of a vertex that was not in the input.
pub const NEW_VERTEX: u32 = u32::MAX;
/// Position values per vertex.
const POSITION_ATTRS: u32 = 3;
/// Fewest slots per kind: room for the one-rings a small patch takes in
/// when it expands over its neighbours (patches of a few faces would
/// otherwise have no room to grow).
const MIN_SLOTS: u64 = 256;

/// The singular name of `kind`, for messages.
fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Vertex => "vertex",
        Kind::Edge => "edge",
        Kind::Face => "face",
    }
}

/// Growth room of the dynamic layout (dynamic paper, section 5.1: patch
/// capacities fixed up front so that nothing is allocated while kernels
/// run).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CapacityFactors {
    /// Element slots per patch of each kind over the largest static local
    /// count of that kind (the capacity factor, at least 1). It also sizes
    /// the ribbon hash tables.
    pub elements: f32,
    /// Patch slots over the number of static patches (the patch factor, at
    /// least 1): room for patches created by slicing. Above 1, at least
    /// [`MIN_SPARE_PATCH_SLOTS`] slots are spare (small meshes).
    pub patches: f32,
}

/// Fewest spare patch slots when the patch factor is above 1. Small
/// inputs that grow a lot slice the most: remeshing a 192-face cube (one
/// patch) to 0.15 of its mean edge length (7200 faces out, 80 patch slots
/// from the expected growth) ran out of patch slots in 11 of 160 runs with
/// 64 spare slots, none in 200 runs at 0.15 and 0.1 with 256 (CPU backend,
/// 48 workers; test `remesh::a_small_mesh_refined_tenfold_keeps_its_patch_slots`).
/// The floor binds only on inputs of fewer patches than it (at 512 faces
/// per patch, under about 130 k faces at the default factor of 2), and a
/// slot of such a layout takes at most about 55 KB.
pub const MIN_SPARE_PATCH_SLOTS: u64 = 256;

impl Default for CapacityFactors {
    /// Twice the elements and twice the patches.
    fn default() -> Self {
        CapacityFactors {
            elements: 2.0,
            patches: 2.0,
        }
    }
}

impl CapacityFactors {
    /// Checks that both factors are finite and at least 1.
    pub fn check(&self) -> Result<(), DynamicError> {
        for (setting, value) in [
            (Setting::CapacityFactor, self.elements),
            (Setting::PatchFactor, self.patches),
        ] {
            if !value.is_finite() || value < 1.0 {
                return Err(DynamicError::Factor { setting, value });
            }
        }
        Ok(())
    }
}

/// Errors building a [`DynamicMesh`].
#[derive(Debug, thiserror::Error)]
pub enum DynamicError {
    /// A factor of [`CapacityFactors`] is not a finite number of at least 1.
    #[error("{} is {value}; it must be a finite number of at least 1.0", setting.name())]
    Factor {
        /// The factor.
        setting: Setting,
        /// The value given.
        value: f32,
    },
    /// The capacity of a kind, from the largest patch's local count, exceeds
    /// [`MAX_CAPACITY`] (13-bit local indices).
    #[error(
        "patch {patch} needs {slots} {} slots with capacity factor {factor}; the limit is {MAX_CAPACITY}: lower the patch size or the capacity factor",
        kind_name(*.kind)
    )]
    Capacity {
        /// The patch with the largest local count of `kind`.
        patch: u32,
        /// The element kind.
        kind: Kind,
        /// Slots needed (rounded up to a multiple of 32).
        slots: u64,
        /// The element factor in use.
        factor: f32,
    },
    /// A patch has more neighbour patches than its stash holds.
    #[error(
        "patch {patch} has {neighbours} neighbour patches, more than the {STASH_SIZE} its patch stash holds: raise the patch size"
    )]
    Stash {
        /// The patch.
        patch: u32,
        /// Its number of neighbour patches.
        neighbours: u32,
    },
    /// A ribbon hash table could not take all of its patch's not-owned
    /// elements of one kind.
    #[error(
        "the {} ribbon hash table of patch {patch} ({slots} slots and {HASH_OVERFLOW} overflow slots) could not take its {entries} entries: raise the capacity factor (now {factor})",
        kind_name(*.kind)
    )]
    HashFull {
        /// The patch.
        patch: u32,
        /// The element kind of the table.
        kind: Kind,
        /// Slots of the table, before the overflow slots.
        slots: u32,
        /// Not-owned elements of that kind in the patch.
        entries: u32,
        /// The element factor in use.
        factor: f32,
    },
    /// An array of the layout has more entries than the kernels' 32-bit
    /// indices address.
    #[error(
        "the dynamic mesh's {array} array needs {len} entries, more than 32-bit indices address: lower the patch factor or the capacity factor"
    )]
    TooLarge {
        /// The array's name in [`RawDynamicMesh`].
        array: &'static str,
        /// Its length in entries.
        len: u64,
    },
    /// Patching the input failed.
    #[error(transparent)]
    Patch(#[from] PatchError),
}

impl NamesSettings for DynamicError {
    fn settings(&self) -> Vec<Setting> {
        match self {
            DynamicError::Factor { setting, .. } => vec![*setting],
            DynamicError::Capacity { .. } => vec![Setting::PatchSize, Setting::CapacityFactor],
            DynamicError::Stash { .. } => vec![Setting::PatchSize],
            DynamicError::HashFull { .. } => vec![Setting::CapacityFactor],
            DynamicError::TooLarge { .. } => vec![Setting::PatchFactor, Setting::CapacityFactor],
            DynamicError::Patch(e) => e.settings(),
        }
    }
}

/// What [`DynamicMesh::validate`] found wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ValidationProblem {
    /// `num_patches` exceeds the patch slots (reported at the last patch
    /// in use).
    #[error("counted in use by num_patches, but there are only {slots} patch slots")]
    PatchSlots {
        /// Patch slots of the capacity.
        slots: u32,
    },
    /// The scheduler's patch count (which slicing advances) differs from
    /// `num_patches` (reported at the last patch in use).
    #[error("counted in use by num_patches, but the scheduler counts {counted} patches")]
    PatchCount {
        /// The scheduler's count.
        counted: u32,
    },
    /// A high-water mark exceeds the capacity of its kind.
    #[error("high-water mark {count} exceeds the capacity {capacity}")]
    OverCapacity {
        /// The high-water mark.
        count: u32,
        /// The capacity of the kind.
        capacity: u32,
    },
    /// The patch stash is longer than [`STASH_SIZE`].
    #[error("patch stash length {len} exceeds {STASH_SIZE}")]
    StashLength {
        /// The stash length.
        len: u32,
    },
    /// A patch-stash entry is not another patch in use, or repeats one.
    #[error("patch stash entry {index} is {value}: not another patch in use, or a repeat")]
    StashEntry {
        /// Index in the stash.
        index: u32,
        /// The entry.
        value: u32,
    },
    /// An owned or active bit is set at or above the high-water mark.
    #[error("{} bit set at or above the high-water mark", if *.owned { "owned" } else { "active" })]
    MaskAboveCount {
        /// Whether the owned (else the active) bit is set.
        owned: bool,
    },
    /// An owned element is not active.
    #[error("owned but not active")]
    OwnedInactive,
    /// A ribbon hash entry whose key is no active not-owned element.
    #[error("ribbon hash entry {entry:#010x} names no active not-owned element")]
    StaleEntry {
        /// The raw entry.
        entry: u32,
    },
    /// An active not-owned element has no ribbon hash entry.
    #[error("active and not owned, but it has no ribbon hash entry")]
    MissingEntry,
    /// An active not-owned element has several ribbon hash entries.
    #[error("{entries} ribbon hash entries have this key")]
    DuplicateEntry {
        /// Entries with the key.
        entries: u32,
    },
    /// The element's ribbon hash entry lies where a lookup does not see it.
    #[error("its ribbon hash entry is in none of its cuckoo slots or the overflow slots")]
    UnreachableEntry,
    /// The stash index of a ribbon hash entry is past the stash length.
    #[error("its ribbon hash entry names stash index {index}, but the stash holds {len}")]
    BadStashIndex {
        /// The stash index.
        index: u32,
        /// The stash length.
        len: u32,
    },
    /// A ribbon hash entry names an element that is not an active owned
    /// element of the owner patch.
    #[error(
        "its ribbon hash entry names local {owner_local} of patch {owner}, which is not an active element owned there"
    )]
    OwnerNotOwned {
        /// The named owner patch.
        owner: u32,
        /// The named owner-local index.
        owner_local: u32,
    },
    /// A ribbon copy names an edge or face that its owner may delete and
    /// reuse the slot of within one processing: one of its vertices lies
    /// farther than two faces from every element the owner does not own
    /// (`cavity_device::dynamic::cavity::mark_fresh`). A patch should hold
    /// only copies of elements near its own.
    #[error(
        "its ribbon hash entry names local {owner_local} of patch {owner}, which lies inside that patch (farther than two faces from what it does not own)"
    )]
    NamedInner {
        /// The owner patch.
        owner: u32,
        /// The owner-local index.
        owner_local: u32,
    },
    /// An active element refers to an inactive element, or to an index at
    /// or above the high-water mark.
    #[error(
        "refers to {} {index}, which is not active or not below the high-water mark",
        kind_name(*.kind)
    )]
    Dangling {
        /// Kind of the element referred to.
        kind: Kind,
        /// Its local index.
        index: u32,
    },
    /// An edge or face repeats a vertex.
    #[error("repeats a vertex")]
    Degenerate,
    /// A face's FE entries do not form a cycle: edge `corner` does not end
    /// where edge `corner + 1` starts.
    #[error("FE entry {corner} does not end where the next one starts")]
    OpenFace {
        /// The corner (0, 1 or 2).
        corner: u32,
    },
    /// Two local elements of a patch stand for the same element.
    #[error("is a second local copy of the element held as local {other}")]
    DuplicateCopy {
        /// The other local index.
        other: u32,
    },
    /// A ribbon copy differs from its owner (an edge's vertices, or a face's
    /// edges or orientation bits).
    #[error("differs from its owner, local {owner_local} of patch {owner}")]
    RibbonMismatch {
        /// The owner patch.
        owner: u32,
        /// The owner-local index.
        owner_local: u32,
    },
    /// Two owned edges or faces have the same vertices.
    #[error("has the same vertices as local {other_local} of patch {other_patch}")]
    DuplicateElement {
        /// Patch owning the other element.
        other_patch: u32,
        /// Its local index there.
        other_local: u32,
    },
    /// A face incident to this owned vertex or edge is not active in the
    /// patch (its ribbon is incomplete).
    #[error("face {face_local} of patch {face_patch} is incident to it but not active here")]
    MissingRibbonFace {
        /// Patch owning the face.
        face_patch: u32,
        /// The face's local index there.
        face_local: u32,
    },
    /// The two faces of this edge traverse it in the same direction.
    #[error("its two faces traverse it in the same direction")]
    Orientation,
    /// The edge has more than two faces (only with `expect_manifold`).
    #[error("has {faces} faces")]
    NonManifoldEdge {
        /// Its number of faces.
        faces: usize,
    },
    /// The vertex's faces form several fans (only with `expect_manifold`).
    #[error("its faces form {fans} fans")]
    NonManifoldVertex {
        /// Its number of fans.
        fans: usize,
    },
}

/// An invariant of the dynamic mesh that does not hold: the patch, the
/// element (kind and local index in that patch) where it shows, and what is
/// wrong. Problems about a patch as a whole (stash, patch slots) name no
/// element.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("patch {patch}{}: {problem}", element_text(.element))]
pub struct ValidationError {
    /// The patch.
    pub patch: u32,
    /// The element kind and its local index in `patch`, if the problem is
    /// about one element.
    pub element: Option<(Kind, u32)>,
    /// What is wrong.
    pub problem: ValidationProblem,
}

/// `", edge 17"` for an element, nothing for none.
fn element_text(element: &Option<(Kind, u32)>) -> String {
    match element {
        Some((kind, local)) => format!(", {} {local}", kind_name(*kind)),
        None => String::new(),
    }
}

/// A validation error about `element` (or the patch) of `patch`.
fn fail<T>(
    patch: u32,
    element: Option<(Kind, u32)>,
    problem: ValidationProblem,
) -> Result<T, ValidationError> {
    Err(ValidationError {
        patch,
        element,
        problem,
    })
}

/// The identity of an element: its owner patch and its local index there.
type Id = (u32, u32);

/// Capacity of one kind: `count × factor`, at least one element, rounded up
/// to a multiple of 32. The product is taken in `f32`, the factor's own
/// precision, so that e.g. 10 × 1.1 is 11, not 12.
fn slots(count: u32, factor: f32) -> u64 {
    ((count as f32 * factor).ceil() as u64)
        .max(MIN_SLOTS)
        .next_multiple_of(32)
}

/// The dynamic patched mesh in host memory: the arrays of
/// [`RawDynamicMesh`] (see `cavity_device::dynamic::layout` for their
/// shapes), every patch slot at `p × stride`. Patches `0..num_patches` are
/// in use; the other slots are empty (zero counts, empty stashes).
#[derive(Clone, Debug)]
pub struct DynamicMesh {
    /// Capacities shared by all patch slots.
    pub cap: Capacity,
    /// Patch slots in use.
    pub num_patches: u32,
    /// The static patcher's maximum faces per patch.
    pub patch_size: u32,
    /// Vertices of the input mesh.
    pub input_vertices: u32,
    /// `counts[4p..4p + 4]`: vertex, edge, face high-water marks and the
    /// stash length (`COUNT_STASH`).
    pub counts: Vec<u32>,
    /// FE, `3 × cap.faces` entries per slot: `(local edge << 1) | reversed`.
    pub fe: Vec<u16>,
    /// EV, `2 × cap.edges` entries per slot: two local vertices per edge.
    pub ev: Vec<u16>,
    /// Owned and active bitmasks of vertices, edges and faces,
    /// `cap.mask_stride()` words per slot.
    pub masks: Vec<u32>,
    /// Ribbon hash tables of vertices, edges and faces,
    /// `cap.hash_stride()` words per slot; empty slots are [`EMPTY`].
    pub hash: Vec<u32>,
    /// Patch stashes, [`STASH_SIZE`] entries per slot; unused ones are
    /// [`NO_PATCH`].
    pub stash: Vec<u32>,
    /// Patch lock words (0 = free).
    pub locks: Vec<u32>,
    /// Patch flags (`cavity_device::dynamic::layout::flag`).
    pub flags: Vec<u32>,
    /// Seeds whose fill-in declined in this sweep,
    /// `cap.declined_words()` words per slot (bit per local seed).
    pub declined: Vec<u32>,
    /// `cap.vertex_attrs` values per vertex slot as `f32` bits: the position
    /// `x, y, z` of every local vertex, owned or not.
    pub vertex_attrs: Vec<u32>,
    /// The scheduler's queue, one slot per patch slot, [`NO_PATCH`] when
    /// empty.
    pub queue: Vec<u32>,
    /// The scheduler's count, front and back, and the patch slots in use
    /// (see [`scheduler`]).
    pub queue_state: Vec<u32>,
    /// Global counters (`stat::COUNT` words).
    pub stats: Vec<u32>,
}

impl DynamicMesh {
    /// Patches `mesh` with at most `patch_size` faces per patch and converts
    /// the patches to the dynamic layout with the room of `factors`.
    ///
    /// # Errors
    /// [`DynamicError::Patch`] when patching fails, and the errors of
    /// [`DynamicMesh::from_patched`].
    pub fn new(
        mesh: &TriMesh,
        patch_size: u32,
        factors: CapacityFactors,
    ) -> Result<DynamicMesh, DynamicError> {
        Self::with_topology(mesh, &Topology::new(mesh), patch_size, factors)
    }

    /// [`DynamicMesh::new`] with the topology of `mesh` given
    /// (`Topology::new(mesh)`), for a caller that has it.
    ///
    /// # Errors
    /// As [`DynamicMesh::new`].
    pub fn with_topology(
        mesh: &TriMesh,
        topology: &Topology,
        patch_size: u32,
        factors: CapacityFactors,
    ) -> Result<DynamicMesh, DynamicError> {
        let patched = PatchedMesh::with_topology(mesh, topology, patch_size)?;
        Self::from_patched(mesh, &patched, factors)
    }

    /// Converts the static patches of `patched` (made from `mesh`) to the
    /// dynamic layout, keeping every patch's local indices: FE and EV copied,
    /// owned bits for the owned-first prefix, active bits for all local
    /// elements, ribbon entries moved into the cuckoo tables, the stash
    /// copied, and the position of every local vertex (owned or not) copied
    /// from `mesh`.
    ///
    /// Capacities: per kind, the largest local count of any patch times
    /// `factors.elements`, rounded up to a multiple of 32 (at least 256);
    /// a ribbon hash table per kind with one slot per element slot of the
    /// kind (`Capacity::hash_slots`);
    /// `factors.patches` times as many patch slots as patches, rounded up.
    ///
    /// # Errors
    /// [`DynamicError::Factor`] for a factor that is not finite or below 1,
    /// [`DynamicError::Capacity`] when a capacity exceeds [`MAX_CAPACITY`],
    /// [`DynamicError::Stash`] for a patch with more than [`STASH_SIZE`]
    /// neighbours, [`DynamicError::TooLarge`] when an array outgrows 32-bit
    /// indices and [`DynamicError::HashFull`] when a ribbon table overflows.
    pub fn from_patched(
        mesh: &TriMesh,
        patched: &PatchedMesh,
        factors: CapacityFactors,
    ) -> Result<DynamicMesh, DynamicError> {
        factors.check()?;
        let infos = &patched.patches;
        let mut cap = Capacity {
            vertex_attrs: VERTEX_ATTRS,
            ..Capacity::default()
        };
        for kind in Kind::ALL {
            let (patch, count) = infos
                .iter()
                .enumerate()
                .map(|(p, info)| (p as u32, info.count(kind)))
                .fold((0, 0), |best, x| if x.1 > best.1 { x } else { best });
            let n = slots(count, factors.elements);
            if n > MAX_CAPACITY as u64 {
                return Err(DynamicError::Capacity {
                    patch,
                    kind,
                    slots: n,
                    factor: factors.elements,
                });
            }
            match kind {
                Kind::Vertex => cap.vertices = n as u32,
                Kind::Edge => cap.edges = n as u32,
                Kind::Face => cap.faces = n as u32,
            }
        }
        if let Some((p, info)) = infos
            .iter()
            .enumerate()
            .find(|(_, info)| info.stash_len > STASH_SIZE)
        {
            return Err(DynamicError::Stash {
                patch: p as u32,
                neighbours: info.stash_len,
            });
        }
        let num_patches = patched.num_patches();
        let mut patch_slots = (num_patches as f32 * factors.patches).ceil() as u64;
        if factors.patches > 1.0 {
            patch_slots = patch_slots.max(num_patches as u64 + MIN_SPARE_PATCH_SLOTS);
        }
        for (array, per_patch) in [
            ("fe", cap.fe_stride() as u64),
            ("ev", cap.ev_stride() as u64),
            ("masks", cap.mask_stride() as u64),
            ("hash", cap.hash_stride() as u64),
            ("stash", STASH_SIZE as u64),
            ("declined", cap.declined_words() as u64),
            ("vertex_attrs", (cap.vertices * cap.vertex_attrs) as u64),
        ] {
            let len = patch_slots.saturating_mul(per_patch);
            if len > u32::MAX as u64 {
                return Err(DynamicError::TooLarge { array, len });
            }
        }
        cap.patches = patch_slots as u32;

        let n = cap.patches as usize;
        let mut out = DynamicMesh {
            cap,
            num_patches,
            patch_size: patched.patch_size,
            input_vertices: mesh.num_vertices() as u32,
            counts: vec![0; COUNT_WORDS as usize * n],
            fe: vec![0; cap.fe_stride() as usize * n],
            ev: vec![0; cap.ev_stride() as usize * n],
            masks: vec![0; cap.mask_stride() as usize * n],
            hash: vec![0; cap.hash_stride() as usize * n],
            stash: vec![0; STASH_SIZE as usize * n],
            locks: vec![0; n],
            flags: vec![0; n],
            declined: vec![0; cap.declined_words() as usize * n],
            vertex_attrs: vec![0; (cap.vertices * cap.vertex_attrs) as usize * n],
            queue: vec![NO_PATCH; n],
            queue_state: vec![0; scheduler::STATE_WORDS as usize],
            stats: vec![0; stat::COUNT as usize],
        };
        out.queue_state[scheduler::PATCHES as usize] = num_patches;
        // Every slot in parallel: its hash tables and stash filled empty
        // (the other arrays start zeroed), then the patch in use copied.
        let failed = out
            .counts
            .par_chunks_mut(COUNT_WORDS as usize)
            .zip(out.fe.par_chunks_mut(cap.fe_stride() as usize))
            .zip(out.ev.par_chunks_mut(cap.ev_stride() as usize))
            .zip(out.masks.par_chunks_mut(cap.mask_stride() as usize))
            .zip(out.hash.par_chunks_mut(cap.hash_stride() as usize))
            .zip(out.stash.par_chunks_mut(STASH_SIZE as usize))
            .zip(
                out.vertex_attrs
                    .par_chunks_mut((cap.vertices * cap.vertex_attrs) as usize),
            )
            .enumerate()
            .filter_map(
                |(p, ((((((counts, fe), ev), masks), hash), stash), vertex_attrs))| {
                    hash.fill(EMPTY);
                    stash.fill(NO_PATCH);
                    let slot = Slot {
                        counts,
                        fe,
                        ev,
                        masks,
                        hash,
                        stash,
                        vertex_attrs,
                    };
                    (p < num_patches as usize)
                        .then(|| {
                            convert_patch(cap, slot, mesh, patched, p as u32, factors.elements)
                        })
                        .and_then(Result::err)
                        .map(|error| (p, error))
                },
            )
            .min_by_key(|&(p, _)| p);
        match failed {
            Some((_, error)) => Err(error),
            None => Ok(out),
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
        let at = ((self.cap.vertices * p + v) * self.cap.vertex_attrs) as usize;
        [0, 1, 2].map(|c| f32::from_bits(self.vertex_attrs[at + c]))
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

    /// Bytes of all arrays (every patch slot, used or not).
    pub fn bytes(&self) -> usize {
        2 * (self.fe.len() + self.ev.len())
            + 4 * (self.counts.len()
                + self.masks.len()
                + self.hash.len()
                + self.stash.len()
                + self.locks.len()
                + self.flags.len()
                + self.declined.len()
                + self.vertex_attrs.len()
                + self.queue.len()
                + self.queue_state.len()
                + self.stats.len())
    }

    /// [`DynamicMesh::bytes`] per active owned face (per one when there is
    /// none).
    pub fn bytes_per_face(&self) -> f64 {
        self.bytes() as f64 / self.num_owned(Kind::Face).max(1) as f64
    }

    /// The mesh as indexed faces: vertices are the active owned vertices in
    /// patch then local order with their stored positions, faces the active
    /// owned faces in the same order with corners resolved to the owners of
    /// their vertices; the second value is the owner patch of each face.
    ///
    /// # Panics
    /// When a face's vertex does not resolve to an active owned vertex (a
    /// mesh that [`DynamicMesh::validate`] rejects).
    pub fn export(&self) -> (TriMesh, Vec<u32>) {
        let ex = self.collect();
        (ex.mesh, ex.face_patch)
    }

    /// The mesh in the input's vertex order: the input vertices that remain,
    /// in input order (all of them, with their indices, when nothing was
    /// deleted), then the vertices fill-ins added, in patch order; faces in
    /// patch order.
    pub fn to_mesh(&self) -> TriMesh {
        self.to_mesh_with_sources().0
    }

    /// [`DynamicMesh::to_mesh`] with the input index of every vertex
    /// (`u32::MAX` for a vertex a fill-in added). In parallel, the same
    /// result for any number of workers.
    pub fn to_mesh_with_sources(&self) -> (TriMesh, Vec<u32>) {
        let ex = self.collect();
        let input_of = |i: usize| {
            let (p, v) = ex.vertex_ids[i];
            let at = (p * self.cap.vertices + v) * self.cap.vertex_attrs + INPUT_INDEX_ATTR;
            self.vertex_attrs[at as usize]
        };
        let mut kept: Vec<(u32, u32)> = (0..ex.vertex_ids.len())
            .into_par_iter()
            .map(|i| (input_of(i), i as u32))
            .collect();
        // Input vertices first by input index; added ones (NEW_VERTEX) after,
        // in export order (the export index makes every key distinct).
        kept.par_sort_unstable_by_key(|&(input, i)| {
            if input < self.input_vertices {
                (0, input, i)
            } else {
                (1, i, i)
            }
        });
        let order = invert(kept.par_iter().map(|&(_, i)| i));
        let positions = kept
            .par_iter()
            .map(|&(_, i)| ex.mesh.positions[i as usize])
            .collect();
        let faces = ex
            .mesh
            .faces
            .par_iter()
            .map(|f| f.map(|v| order[v as usize]))
            .collect();
        let sources = kept
            .par_iter()
            .map(|&(input, _)| {
                if input < self.input_vertices {
                    input
                } else {
                    u32::MAX
                }
            })
            .collect();
        (TriMesh { positions, faces }, sources)
    }

    /// The export with the identities of its vertices and faces, built
    /// patch by patch in parallel (the same for any number of workers).
    fn collect(&self) -> Exported {
        let patches = 0..self.num_patches;
        let owned_vertices: Vec<Vec<u32>> = patches
            .clone()
            .into_par_iter()
            .map(|p| self.owned_active(p, Kind::Vertex).collect())
            .collect();
        // Each patch's first export index, then every local vertex's
        // export index in its patch (`u32::MAX`: not owned and active).
        let mut first = Vec::with_capacity(owned_vertices.len());
        let mut next = 0u32;
        for owned in &owned_vertices {
            first.push(next);
            next += owned.len() as u32;
        }
        let index: Vec<Vec<u32>> = owned_vertices
            .par_iter()
            .zip(&first)
            .enumerate()
            .map(|(p, (owned, &first))| {
                let mut row = vec![u32::MAX; self.count(p as u32, Kind::Vertex) as usize];
                for (k, &v) in owned.iter().enumerate() {
                    row[v as usize] = first + k as u32;
                }
                row
            })
            .collect();
        let vertex_ids: Vec<Id> = owned_vertices
            .par_iter()
            .enumerate()
            .flat_map_iter(|(p, owned)| owned.iter().map(move |&v| (p as u32, v)))
            .collect();
        let positions = vertex_ids
            .par_iter()
            .map(|&(p, v)| self.position(p, v))
            .collect();
        let face_ids: Vec<Id> = patches
            .into_par_iter()
            .flat_map_iter(|p| self.owned_active(p, Kind::Face).map(move |f| (p, f)))
            .collect();
        let faces = face_ids
            .par_iter()
            .map(|&(p, f)| {
                let table = self.frozen_table(p, Kind::Vertex);
                self.face_vertices(p, f).map(|v| {
                    let (q, l) = self
                        .owner_in(&table, p, Kind::Vertex, v)
                        .expect("every face vertex resolves to its owner (see validate)");
                    index[q as usize][l as usize]
                })
            })
            .collect();
        Exported {
            mesh: TriMesh { positions, faces },
            face_patch: face_ids.par_iter().map(|&(p, _)| p).collect(),
            vertex_ids,
            face_ids,
        }
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

    /// Checks every invariant of the layout over patches `0..num_patches`
    /// (the patches themselves within the patch slots): counts within
    /// capacity; stashes of at most [`STASH_SIZE`] distinct other patches in
    /// use; the scheduler's patch count equal to `num_patches`; no mask bit
    /// at or above a high-water mark; owned elements
    /// active; exactly one reachable ribbon hash entry per active not-owned
    /// element and none for anything else, naming an active owned element
    /// of the stash patch (one hop) and, for edges and faces, near what
    /// that patch does not own (its slot is not reused within a
    /// processing); no dangling references, FE forming
    /// cycles, no repeated vertex in an edge or face; no element held twice
    /// in a patch; ribbon copies equal to their owners (an edge's vertices
    /// in order, a face's edges and reversed bits); every face incident to
    /// an owned vertex or edge active in the owner's patch; no two owned
    /// edges or faces with the same vertices; every edge with two faces
    /// traversed in opposite directions; and, with `expect_manifold`, at
    /// most two faces per edge and one fan per vertex.
    ///
    /// # Errors
    /// The first [`ValidationError`] found, in the order above.
    pub fn validate(&self, expect_manifold: bool) -> Result<(), ValidationError> {
        if self.num_patches > self.cap.patches {
            return fail(
                self.num_patches - 1,
                None,
                ValidationProblem::PatchSlots {
                    slots: self.cap.patches,
                },
            );
        }
        let counted = self.queue_state[scheduler::PATCHES as usize];
        if counted != self.num_patches {
            return fail(
                self.num_patches.saturating_sub(1),
                None,
                ValidationProblem::PatchCount { counted },
            );
        }
        let tables = Tables::new(self);
        for p in 0..self.num_patches {
            self.check_storage(p, &tables)?;
        }
        for p in 0..self.num_patches {
            self.check_references(p)?;
        }
        let near: Vec<Vec<bool>> = (0..self.num_patches)
            .map(|p| self.near_not_owned(p))
            .collect();
        for p in 0..self.num_patches {
            self.check_named(p, &tables, &near)?;
        }
        let ids = (0..self.num_patches)
            .map(|p| self.check_copies(p, &tables))
            .collect::<Result<Vec<_>, _>>()?;
        let ex = self.collect();
        self.check_completeness(&ex, &ids, &tables)?;
        self.check_global(&ex, &tables, expect_manifold)
    }

    /// Counts, stash, masks and ribbon hash entries of patch `p`.
    fn check_storage(&self, p: u32, tables: &Tables) -> Result<(), ValidationError> {
        use ValidationProblem as V;
        for kind in Kind::ALL {
            let (count, capacity) = (self.count(p, kind), self.cap.of(kind));
            if count > capacity {
                return fail(p, None, V::OverCapacity { count, capacity });
            }
        }
        let len = self.stash_len(p);
        if len > STASH_SIZE {
            return fail(p, None, V::StashLength { len });
        }
        let mut seen = HashSet::new();
        for index in 0..len {
            let value = self.stash_entry(p, index);
            if value >= self.num_patches || value == p || !seen.insert(value) {
                return fail(p, None, V::StashEntry { index, value });
            }
        }
        for kind in Kind::ALL {
            for l in 0..self.cap.of(kind) {
                let (owned, active) = (self.is_owned(p, kind, l), self.is_active(p, kind, l));
                if l >= self.count(p, kind) && (owned || active) {
                    return fail(p, Some((kind, l)), V::MaskAboveCount { owned });
                }
                if owned && !active {
                    return fail(p, Some((kind, l)), V::OwnedInactive);
                }
            }
        }
        for kind in Kind::ALL {
            let count = self.count(p, kind);
            let start = self.table_start(p, kind);
            let mut keys = vec![0u32; count as usize];
            for &e in &self.hash[start..][..self.cap.table_words(kind) as usize] {
                if e == EMPTY {
                    continue;
                }
                let k = hash::key_of(e);
                if k >= count || !self.is_active(p, kind, k) || self.is_owned(p, kind, k) {
                    return fail(p, Some((kind, k)), V::StaleEntry { entry: e });
                }
                keys[k as usize] += 1;
            }
            for l in self.active(p, kind).filter(|&l| !self.is_owned(p, kind, l)) {
                let at = Some((kind, l));
                match keys[l as usize] {
                    0 => return fail(p, at, V::MissingEntry),
                    1 => {}
                    entries => return fail(p, at, V::DuplicateEntry { entries }),
                }
                let table = tables.of(p, kind);
                let Some((index, owner_local)) = hash::lookup(table, l) else {
                    return fail(p, at, V::UnreachableEntry);
                };
                if index >= len {
                    return fail(p, at, V::BadStashIndex { index, len });
                }
                let owner = self.stash_entry(p, index);
                if owner_local >= self.count(owner, kind)
                    || !self.is_owned(owner, kind, owner_local)
                    || !self.is_active(owner, kind, owner_local)
                {
                    return fail(p, at, V::OwnerNotOwned { owner, owner_local });
                }
            }
        }
        Ok(())
    }

    /// Per local vertex of patch `p`, whether it lies on a face that shares
    /// a vertex with a face touching an element `p` does not own (the
    /// face, one of its edges or vertices): the vertices of the elements a
    /// processing of `p` may not reuse the slots of (an edge or face is
    /// reusable when one of its vertices is not near, `cavity::mark_fresh`).
    fn near_not_owned(&self, p: u32) -> Vec<bool> {
        let faces: Vec<u32> = self.active(p, Kind::Face).collect();
        let owned = |kind, l| self.is_owned(p, kind, l);
        let mut touching = vec![false; self.count(p, Kind::Vertex) as usize];
        for &f in &faces {
            let vs = self.face_vertices(p, f);
            let touches = !owned(Kind::Face, f)
                || (0..3).any(|i| !owned(Kind::Edge, (self.fe_entry(p, f, i) >> 1) as u32))
                || vs.iter().any(|&v| !owned(Kind::Vertex, v));
            if touches {
                vs.iter().for_each(|&v| touching[v as usize] = true);
            }
        }
        let mut near = touching.clone();
        for &f in &faces {
            let vs = self.face_vertices(p, f);
            if vs.iter().any(|&v| touching[v as usize]) {
                vs.iter().for_each(|&v| near[v as usize] = true);
            }
        }
        near
    }

    /// The ribbon copies of edges and faces in patch `p` name only
    /// elements their owners may not reuse the slots of within a
    /// processing (`near`: per patch, [`DynamicMesh::near_not_owned`];
    /// vertex slots are not reused).
    fn check_named(
        &self,
        p: u32,
        tables: &Tables,
        near: &[Vec<bool>],
    ) -> Result<(), ValidationError> {
        for kind in [Kind::Edge, Kind::Face] {
            for l in self.active(p, kind).filter(|&l| !self.is_owned(p, kind, l)) {
                let (owner, owner_local) = self.id(tables, p, kind, l);
                let vertices = match kind {
                    Kind::Edge => (0..2)
                        .map(|i| self.ev_entry(owner, owner_local, i))
                        .collect(),
                    _ => self.face_vertices(owner, owner_local).to_vec(),
                };
                let near = &near[owner as usize];
                if !vertices
                    .iter()
                    .all(|&v| near.get(v as usize).copied().unwrap_or(true))
                {
                    return fail(
                        p,
                        Some((kind, l)),
                        ValidationProblem::NamedInner { owner, owner_local },
                    );
                }
            }
        }
        Ok(())
    }

    /// References of active edges and faces of patch `p`: below the
    /// high-water marks, to active elements; faces' FE forming cycles; no
    /// repeated local vertex.
    fn check_references(&self, p: u32) -> Result<(), ValidationError> {
        use ValidationProblem as V;
        let live = |kind: Kind, index: u32| {
            if index < self.count(p, kind) && self.is_active(p, kind, index) {
                Ok(())
            } else {
                Err(V::Dangling { kind, index })
            }
        };
        for e in self.active(p, Kind::Edge) {
            let at = Some((Kind::Edge, e));
            let [a, b] = self.directed_edge(p, e, false);
            for v in [a, b] {
                live(Kind::Vertex, v).or_else(|problem| fail(p, at, problem))?;
            }
            if a == b {
                return fail(p, at, V::Degenerate);
            }
        }
        for f in self.active(p, Kind::Face) {
            let at = Some((Kind::Face, f));
            let sides = [0, 1, 2].map(|i| {
                let e = self.fe_entry(p, f, i);
                ((e >> 1) as u32, e & FE_REVERSED != 0)
            });
            for (e, _) in sides {
                live(Kind::Edge, e).or_else(|problem| fail(p, at, problem))?;
            }
            let [d0, d1, d2] = sides.map(|(e, r)| self.directed_edge(p, e, r));
            for (corner, (d, next)) in [(d0, d1), (d1, d2), (d2, d0)].into_iter().enumerate() {
                if d[1] != next[0] {
                    return fail(
                        p,
                        at,
                        V::OpenFace {
                            corner: corner as u32,
                        },
                    );
                }
            }
            if d0[0] == d1[0] || d1[0] == d2[0] || d2[0] == d0[0] {
                return fail(p, at, V::Degenerate);
            }
        }
        Ok(())
    }

    /// The identity of an active element whose storage passed
    /// [`DynamicMesh::check_storage`].
    fn id(&self, tables: &Tables, p: u32, kind: Kind, local: u32) -> Id {
        self.owner_in(tables.of(p, kind), p, kind, local)
            .expect("checked active element resolves to its owner")
    }

    /// An active edge's vertex identities in EV order.
    fn edge_ids(&self, tables: &Tables, p: u32, e: u32) -> [Id; 2] {
        self.directed_edge(p, e, false)
            .map(|v| self.id(tables, p, Kind::Vertex, v))
    }

    /// An active face's edge identities with their reversed bits.
    fn face_sides(&self, tables: &Tables, p: u32, f: u32) -> [(Id, bool); 3] {
        [0, 1, 2].map(|i| {
            let e = self.fe_entry(p, f, i);
            (
                self.id(tables, p, Kind::Edge, (e >> 1) as u32),
                e & FE_REVERSED != 0,
            )
        })
    }

    /// No element held twice in patch `p`, and its ribbon copies equal to
    /// their owners. Returns the identities of the patch's active faces.
    fn check_copies(&self, p: u32, tables: &Tables) -> Result<HashSet<Id>, ValidationError> {
        use ValidationProblem as V;
        let mut faces = HashSet::new();
        for kind in Kind::ALL {
            let mut held: HashMap<Id, u32> = HashMap::new();
            for l in self.active(p, kind) {
                let id = self.id(tables, p, kind, l);
                if let Some(&other) = held.get(&id) {
                    return fail(p, Some((kind, l)), V::DuplicateCopy { other });
                }
                held.insert(id, l);
                if kind == Kind::Face {
                    faces.insert(id);
                }
            }
        }
        let mismatch = |kind: Kind, l: u32, (owner, owner_local): Id| {
            fail(p, Some((kind, l)), V::RibbonMismatch { owner, owner_local })
        };
        for e in self.active(p, Kind::Edge) {
            let (q, l) = self.id(tables, p, Kind::Edge, e);
            if q != p && self.edge_ids(tables, p, e) != self.edge_ids(tables, q, l) {
                return mismatch(Kind::Edge, e, (q, l));
            }
        }
        for f in self.active(p, Kind::Face) {
            let (q, l) = self.id(tables, p, Kind::Face, f);
            if q != p && self.face_sides(tables, p, f) != self.face_sides(tables, q, l) {
                return mismatch(Kind::Face, f, (q, l));
            }
        }
        Ok(faces)
    }

    /// Every active owned face is active in the patches owning its vertices
    /// and edges (`faces[p]`: identities of the faces active in `p`).
    fn check_completeness(
        &self,
        ex: &Exported,
        faces: &[HashSet<Id>],
        tables: &Tables,
    ) -> Result<(), ValidationError> {
        for (&(q, f), corners) in ex.face_ids.iter().zip(&ex.mesh.faces) {
            let vertices = corners.map(|v| (Kind::Vertex, ex.vertex_ids[v as usize]));
            let edges = self
                .face_sides(tables, q, f)
                .map(|(id, _)| (Kind::Edge, id));
            for (kind, (owner, l)) in vertices.into_iter().chain(edges) {
                if !faces[owner as usize].contains(&(q, f)) {
                    return fail(
                        owner,
                        Some((kind, l)),
                        ValidationProblem::MissingRibbonFace {
                            face_patch: q,
                            face_local: f,
                        },
                    );
                }
            }
        }
        Ok(())
    }

    /// Duplicate edges and faces, orientation and (with `expect_manifold`)
    /// manifoldness, over the export.
    fn check_global(
        &self,
        ex: &Exported,
        tables: &Tables,
        expect_manifold: bool,
    ) -> Result<(), ValidationError> {
        use ValidationProblem as V;
        let vertex_index: HashMap<Id, u32> = ex
            .vertex_ids
            .iter()
            .enumerate()
            .map(|(i, &id)| (id, i as u32))
            .collect();
        let mut edges: HashMap<[u32; 2], Id> = HashMap::new();
        for p in 0..self.num_patches {
            for e in self.owned_active(p, Kind::Edge) {
                let [a, b] = self.edge_ids(tables, p, e).map(|id| vertex_index[&id]);
                if let Some(&(other_patch, other_local)) = edges.get(&[a.min(b), a.max(b)]) {
                    return fail(
                        p,
                        Some((Kind::Edge, e)),
                        V::DuplicateElement {
                            other_patch,
                            other_local,
                        },
                    );
                }
                edges.insert([a.min(b), a.max(b)], (p, e));
            }
        }
        let mut faces: HashMap<[u32; 3], Id> = HashMap::new();
        for (&(p, f), t) in ex.face_ids.iter().zip(&ex.mesh.faces) {
            let mut key = *t;
            key.sort_unstable();
            if let Some(&(other_patch, other_local)) = faces.get(&key) {
                return fail(
                    p,
                    Some((Kind::Face, f)),
                    V::DuplicateElement {
                        other_patch,
                        other_local,
                    },
                );
            }
            faces.insert(key, (p, f));
        }

        // Face sides grouped by edge: (low vertex, high vertex, face,
        // forward = traversed from low to high).
        let mut sides: Vec<(u32, u32, u32, bool)> = Vec::with_capacity(3 * ex.mesh.faces.len());
        for (i, t) in ex.mesh.faces.iter().enumerate() {
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                sides.push((a.min(b), a.max(b), i as u32, a < b));
            }
        }
        sides.sort_unstable();
        let mut fans = UnionFind::new(3 * ex.mesh.faces.len());
        let corner = |f: u32, v: u32| {
            let t = ex.mesh.faces[f as usize];
            3 * f as usize + t.iter().position(|&x| x == v).expect("vertex of face")
        };
        for run in sides.chunk_by(|x, y| (x.0, x.1) == (y.0, y.1)) {
            let (a, b) = (run[0].0, run[0].1);
            let (p, e) = edges[&[a, b]];
            let at = Some((Kind::Edge, e));
            if let [(_, _, f, forward_f), (_, _, g, forward_g)] = *run {
                if forward_f == forward_g {
                    return fail(p, at, V::Orientation);
                }
                for v in [a, b] {
                    fans.union(corner(f, v), corner(g, v));
                }
            } else if expect_manifold && run.len() > 2 {
                return fail(p, at, V::NonManifoldEdge { faces: run.len() });
            }
        }
        if expect_manifold {
            let mut roots: Vec<(u32, usize)> = (0..3 * ex.mesh.faces.len())
                .map(|c| (ex.mesh.faces[c / 3][c % 3], fans.find(c)))
                .collect();
            roots.sort_unstable();
            roots.dedup();
            for run in roots.chunk_by(|x, y| x.0 == y.0) {
                if run.len() > 1 {
                    let (p, v) = ex.vertex_ids[run[0].0 as usize];
                    return fail(
                        p,
                        Some((Kind::Vertex, v)),
                        V::NonManifoldVertex { fans: run.len() },
                    );
                }
            }
        }
        Ok(())
    }
}

/// The arrays of one patch slot of a [`DynamicMesh`].
struct Slot<'a> {
    counts: &'a mut [u32],
    fe: &'a mut [u16],
    ev: &'a mut [u16],
    masks: &'a mut [u32],
    hash: &'a mut [u32],
    stash: &'a mut [u32],
    vertex_attrs: &'a mut [u32],
}

/// Copies static patch `p` into its slot (zeroed, with empty hash tables
/// and stash).
fn convert_patch(
    cap: Capacity,
    slot: Slot<'_>,
    mesh: &TriMesh,
    patched: &PatchedMesh,
    p: u32,
    factor: f32,
) -> Result<(), DynamicError> {
    let info = &patched.patches[p as usize];
    slot.counts[0] = info.num_vertices;
    slot.counts[1] = info.num_edges;
    slot.counts[2] = info.num_faces;
    slot.counts[COUNT_STASH as usize] = info.stash_len;

    let fe_len = 3 * info.num_faces as usize;
    slot.fe[..fe_len].copy_from_slice(&patched.fe[info.fe_offset as usize..][..fe_len]);
    let ev_len = 2 * info.num_edges as usize;
    slot.ev[..ev_len].copy_from_slice(&patched.ev[info.ev_offset as usize..][..ev_len]);

    let static_stash = &patched.stash[info.stash_offset as usize..][..info.stash_len as usize];
    slot.stash[..static_stash.len()].copy_from_slice(static_stash);

    for kind in Kind::ALL {
        for (active, set) in [(false, info.owned(kind)), (true, info.count(kind))] {
            let start = cap.mask_offset(kind, active) as usize;
            for l in 0..set as usize {
                slot.masks[start + l / 32] |= 1 << (l % 32);
            }
        }
    }

    for kind in Kind::ALL {
        let table =
            &mut slot.hash[cap.table_offset(kind) as usize..][..cap.table_words(kind) as usize];
        let cells = Cell::from_mut(table).as_slice_of_cells();
        let owned = info.owned(kind);
        let ribbon = &patched.ribbon[info.ribbon_start(kind) as usize..]
            [..(info.count(kind) - owned) as usize];
        for (i, &r) in ribbon.iter().enumerate() {
            let (s, owner_local) = ribbon_owner(r);
            if !hash::insert::<RIBBON, _>(cells, hash::entry(owned + i as u32, s, owner_local)) {
                return Err(DynamicError::HashFull {
                    patch: p,
                    kind,
                    slots: cap.hash_slots(kind),
                    entries: ribbon.len() as u32,
                    factor,
                });
            }
        }
    }

    let vertex_ribbon = &patched.ribbon[info.ribbon_start(Kind::Vertex) as usize..];
    let attrs = cap.vertex_attrs as usize;
    for v in 0..info.num_vertices {
        let handle = if v < info.owned_vertices {
            info.vertex_base + v
        } else {
            let (s, owner_local) = ribbon_owner(vertex_ribbon[(v - info.owned_vertices) as usize]);
            let q = static_stash[s as usize];
            patched.patches[q as usize].vertex_base + owner_local
        };
        let input = patched.vertex_to_input[handle as usize];
        let at = v as usize * attrs;
        for (value, x) in slot.vertex_attrs[at..at + POSITION_ATTRS as usize]
            .iter_mut()
            .zip(mesh.positions[input as usize])
        {
            *value = x.to_bits();
        }
        slot.vertex_attrs[at + INPUT_INDEX_ATTR as usize] = input;
        slot.vertex_attrs[at + VALENCE_ATTR as usize] = u32::MAX;
    }
    Ok(())
}

/// The export with identities: what validation's global checks read.
#[derive(Default)]
struct Exported {
    /// The exported mesh.
    mesh: TriMesh,
    /// Owner patch of each exported face.
    face_patch: Vec<u32>,
    /// Identity of each exported vertex.
    vertex_ids: Vec<Id>,
    /// Identity of each exported face.
    face_ids: Vec<Id>,
}

/// A ribbon hash table read in place: lookups only (the device crate's
/// cuckoo functions take any [`Slots`]), from any number of threads.
struct Frozen<'a>(&'a [u32]);

impl Slots for Frozen<'_> {
    fn slots(&self) -> u32 {
        self.0.len() as u32 - HASH_OVERFLOW
    }

    fn get(&self, i: u32) -> u32 {
        self.0[i as usize]
    }

    fn set(&self, _: u32, _: u32) {
        unreachable!("a frozen ribbon table is only read")
    }

    fn exchange(&self, _: u32, _: u32) -> u32 {
        unreachable!("a frozen ribbon table is only read")
    }

    fn compare_exchange(&self, _: u32, _: u32, _: u32) -> bool {
        unreachable!("a frozen ribbon table is only read")
    }
}

/// The inverse of the permutation `perm` of `0..n` (given in order).
fn invert(perm: impl IndexedParallelIterator<Item = u32>) -> Vec<u32> {
    let inverse: Vec<AtomicU32> = (0..perm.len())
        .into_par_iter()
        .map(|_| AtomicU32::new(0))
        .collect();
    perm.enumerate().for_each(|(i, j)| {
        inverse[j as usize].store(i as u32, Ordering::Relaxed);
    });
    inverse.into_par_iter().map(AtomicU32::into_inner).collect()
}

/// A copy of all ribbon hash tables as cells, for lookups through the
/// device crate's cuckoo functions (implemented for cells) without a
/// mutable borrow of the mesh.
struct Tables {
    cells: Vec<Cell<u32>>,
    cap: Capacity,
}

impl Tables {
    fn new(mesh: &DynamicMesh) -> Tables {
        Tables {
            cells: mesh.hash.iter().map(|&w| Cell::new(w)).collect(),
            cap: mesh.cap,
        }
    }

    /// The table of `kind` in patch `p`.
    fn of(&self, p: u32, kind: Kind) -> &[Cell<u32>] {
        let cap = &self.cap;
        &self.cells[(cap.hash_stride() * p + cap.table_offset(kind)) as usize..]
            [..cap.table_words(kind) as usize]
    }
}

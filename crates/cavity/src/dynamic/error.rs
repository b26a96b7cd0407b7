//! What can go wrong: [`DynamicError`] building a dynamic mesh (with the
//! settings it names) and [`ValidationError`] from validating one.

use cavity_device::dynamic::layout::{HASH_OVERFLOW, MAX_CAPACITY, STASH_SIZE};
use cavity_device::layout::Kind;

use crate::attributes::kind_name;
use crate::patcher::PatchError;
use crate::settings::{NamesSettings, Setting};

/// Errors building a [`DynamicMesh`].
///
/// [`DynamicMesh`]: super::DynamicMesh
#[derive(Debug, thiserror::Error)]
pub enum DynamicError {
    /// A factor of [`CapacityFactors`] is not a finite number of at least 1.
    ///
    /// [`CapacityFactors`]: super::CapacityFactors
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
        ///
        /// [`RawDynamicMesh`]: cavity_device::dynamic::layout::RawDynamicMesh
        array: &'static str,
        /// Its length in entries.
        len: u64,
    },
    /// The layout needs more memory than the host has available now
    /// (`crate::memory::available_host_bytes`), or, for a layout made on
    /// the device, more than the GPU has free; checked before it is
    /// allocated.
    #[error(
        "the dynamic mesh needs {} ({slots} patch slots of {} each), more than the {} of {memory} memory available: lower the patch factor or the capacity factor",
        crate::units::bytes(*.needed),
        crate::units::bytes(*.per_slot),
        crate::units::bytes(*.available)
    )]
    Memory {
        /// Bytes of the whole layout.
        needed: u64,
        /// Patch slots.
        slots: u64,
        /// Bytes per patch slot.
        per_slot: u64,
        /// Bytes available.
        available: u64,
        /// Whose memory: `"host"`, or `"GPU"` for a layout made on the
        /// device (`crate::backend::PlacedMesh`).
        memory: &'static str,
    },
    /// Patching the input failed.
    #[error(transparent)]
    Patch(#[from] PatchError),
}

impl NamesSettings for DynamicError {
    fn settings(&self) -> Vec<Setting> {
        match self {
            DynamicError::Factor { setting, .. } => vec![*setting],
            DynamicError::Capacity { .. } => vec![Setting::PATCH_SIZE, Setting::CAPACITY_FACTOR],
            DynamicError::Stash { .. } => vec![Setting::PATCH_SIZE],
            DynamicError::HashFull { .. } => vec![Setting::CAPACITY_FACTOR],
            DynamicError::TooLarge { .. } | DynamicError::Memory { .. } => {
                vec![Setting::PATCH_FACTOR, Setting::CAPACITY_FACTOR]
            }
            DynamicError::Patch(e) => e.settings(),
        }
    }
}

crate::names_settings!(DynamicError);

/// What [`DynamicMesh::validate`] found wrong.
///
/// [`DynamicMesh::validate`]: super::DynamicMesh::validate
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

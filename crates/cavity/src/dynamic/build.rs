//! Construction: a [`DynamicMesh`] from a [`TriMesh`], patched, with
//! every static patch copied into its slot of the dynamic layout.

use std::cell::Cell;

use rayon::prelude::*;

use cavity_device::dynamic::hash::{self, EMPTY, RIBBON};
use cavity_device::dynamic::layout::{
    COUNT_STASH, COUNT_WORDS, Capacity, ELEMENT_INPUT_INDEX, INPUT_INDEX_ATTR, MAX_CAPACITY,
    NO_PATCH, STASH_SIZE, stat,
};
use cavity_device::dynamic::queue;
use cavity_device::layout::{Kind, PatchInfo, ribbon_owner};

use crate::topology::Topology;
use crate::{PatchedMesh, TriMesh};

use super::capacity::slots;
use super::{CapacityFactors, DynamicError, DynamicMesh, MIN_SPARE_PATCH_SLOTS};
use crate::attributes::AttributeLayout;

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
        let layout = AttributeLayout::new();
        Self::with_topology_and_attributes(mesh, topology, patch_size, factors, &layout)
    }

    /// [`DynamicMesh::new`] with the attributes of `layout`, all zero
    /// (set them with [`DynamicMesh::set_attribute`]).
    ///
    /// # Errors
    /// As [`DynamicMesh::new`].
    pub fn with_attributes(
        mesh: &TriMesh,
        patch_size: u32,
        factors: CapacityFactors,
        layout: &AttributeLayout,
    ) -> Result<DynamicMesh, DynamicError> {
        let topology = Topology::new(mesh);
        Self::with_topology_and_attributes(mesh, &topology, patch_size, factors, layout)
    }

    /// [`DynamicMesh::with_attributes`] with the topology of `mesh` given
    /// (`Topology::new(mesh)`).
    ///
    /// # Errors
    /// As [`DynamicMesh::new`].
    pub fn with_topology_and_attributes(
        mesh: &TriMesh,
        topology: &Topology,
        patch_size: u32,
        factors: CapacityFactors,
        layout: &AttributeLayout,
    ) -> Result<DynamicMesh, DynamicError> {
        let patched = PatchedMesh::with_topology(mesh, topology, patch_size)?;
        Self::from_patched_with(mesh, &patched, factors, layout)
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
        Self::from_patched_with(mesh, patched, factors, &AttributeLayout::new())
    }

    /// [`DynamicMesh::from_patched`] with the attributes of `layout`, all
    /// zero. Edges and faces with attributes also keep their input index
    /// (the order of [`DynamicMesh::sources`]).
    ///
    /// # Errors
    /// As [`DynamicMesh::from_patched`].
    pub fn from_patched_with(
        mesh: &TriMesh,
        patched: &PatchedMesh,
        factors: CapacityFactors,
        layout: &AttributeLayout,
    ) -> Result<DynamicMesh, DynamicError> {
        let shape = Shape {
            patch_size: patched.patch_size,
            input_vertices: mesh.num_vertices() as u32,
            input_edges: patched.count(Kind::Edge) as u32,
            input_faces: mesh.faces.len() as u32,
        };
        let mut out = DynamicMesh::planned(&patched.patches, shape, factors, layout)?;
        out.allocate(false);
        let cap = out.cap;
        let n = cap.patches as usize;
        let num_patches = out.num_patches;
        // Every slot in use in parallel: the patch copied into it (the
        // tables and stashes start empty).
        let failed = out
            .counts
            .par_chunks_mut(COUNT_WORDS as usize)
            .zip(out.fe.par_chunks_mut(cap.fe_stride() as usize))
            .zip(out.ev.par_chunks_mut(cap.ev_stride() as usize))
            .zip(out.masks.par_chunks_mut(cap.mask_stride() as usize))
            .zip(out.hash.par_chunks_mut(cap.hash_stride() as usize))
            .zip(out.stash.par_chunks_mut(STASH_SIZE as usize))
            .zip(attr_chunks(&mut out.vertex_attrs, cap, Kind::Vertex, n))
            .zip(attr_chunks(&mut out.edge_attrs, cap, Kind::Edge, n))
            .zip(attr_chunks(&mut out.face_attrs, cap, Kind::Face, n))
            .take(num_patches as usize)
            .enumerate()
            .filter_map(
                |(p, ((((((((counts, fe), ev), masks), hash), stash), v), e), f))| {
                    let slot = Slot {
                        counts,
                        fe,
                        ev,
                        masks,
                        hash,
                        stash,
                        attrs: [v, e, f],
                    };
                    convert_patch(cap, slot, mesh, patched, p as u32, factors.elements)
                        .err()
                        .map(|error| (p, error))
                },
            )
            .min_by_key(|&(p, _)| p);
        match failed {
            Some((_, error)) => Err(error),
            None => Ok(out),
        }
    }

    /// The layout of the static patches `infos` with the room of `factors`
    /// and the attributes of `layout` (see [`DynamicMesh::from_patched`]
    /// for the capacities), its arrays not allocated yet: a shell that
    /// [`DynamicMesh::allocate`] fills with empty slots, or that a backend
    /// fills on the device (`crate::backend::PlacedMesh`).
    ///
    /// # Errors
    /// As [`DynamicMesh::from_patched`] but [`DynamicError::HashFull`].
    pub(crate) fn planned(
        infos: &[PatchInfo],
        shape: Shape,
        factors: CapacityFactors,
        layout: &AttributeLayout,
    ) -> Result<DynamicMesh, DynamicError> {
        factors.check()?;
        let mut cap = Capacity {
            vertex_attrs: layout.stride(Kind::Vertex),
            edge_attrs: layout.stride(Kind::Edge),
            face_attrs: layout.stride(Kind::Face),
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
        let num_patches = infos.len() as u32;
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
            ("vertex_attrs", cap.attr_words(Kind::Vertex) as u64),
            ("edge_attrs", cap.attr_words(Kind::Edge) as u64),
            ("face_attrs", cap.attr_words(Kind::Face) as u64),
        ] {
            let len = patch_slots.saturating_mul(per_patch);
            if len > u32::MAX as u64 {
                return Err(DynamicError::TooLarge { array, len });
            }
        }
        cap.patches = patch_slots as u32;
        let per_slot = slot_bytes(&cap);
        let needed = patch_slots.saturating_mul(per_slot) + FIXED_BYTES;
        if let Some(available) = crate::memory::available_host_bytes()
            && needed > available
        {
            return Err(DynamicError::Memory {
                needed,
                slots: patch_slots,
                per_slot,
                available,
                memory: "host",
            });
        }
        Ok(DynamicMesh {
            cap,
            num_patches,
            patch_size: shape.patch_size,
            input_vertices: shape.input_vertices,
            input_edges: shape.input_edges,
            input_faces: shape.input_faces,
            attributes: layout.clone(),
            counts: Vec::new(),
            fe: Vec::new(),
            ev: Vec::new(),
            masks: Vec::new(),
            hash: Vec::new(),
            stash: Vec::new(),
            locks: Vec::new(),
            flags: Vec::new(),
            declined: Vec::new(),
            vertex_attrs: Vec::new(),
            edge_attrs: Vec::new(),
            face_attrs: Vec::new(),
            queue: Vec::new(),
            queue_state: Vec::new(),
            stats: Vec::new(),
        })
    }

    /// Whether the arrays are allocated (a [`DynamicMesh::planned`] shell's
    /// are not until [`DynamicMesh::allocate`]).
    pub(crate) fn is_allocated(&self) -> bool {
        self.counts.len() == COUNT_WORDS as usize * self.cap.patches as usize
            && self.queue_state.len() == queue::STATE_WORDS as usize
    }

    /// Allocates the arrays of a [`DynamicMesh::planned`] shell (nothing
    /// when they are): every slot empty (zero counts, empty tables and
    /// stash), the queue empty with the slots in use counted, the
    /// statistics zero. The tables and stashes are filled in parallel; the
    /// zeroed arrays are left to the allocator's zero pages unless
    /// `touched`, when they are written too (in parallel: a copy into them
    /// then finds its pages in place, as the GPU's copy back does).
    pub(crate) fn allocate(&mut self, touched: bool) {
        if self.is_allocated() {
            return;
        }
        let cap = self.cap;
        let n = cap.patches as usize;
        let zeros = |len: usize| filled(len, 0u32, touched);
        self.counts = zeros(COUNT_WORDS as usize * n);
        self.fe = filled(cap.fe_stride() as usize * n, 0u16, touched);
        self.ev = filled(cap.ev_stride() as usize * n, 0u16, touched);
        self.masks = zeros(cap.mask_stride() as usize * n);
        self.hash = filled(cap.hash_stride() as usize * n, EMPTY, touched);
        self.stash = filled(STASH_SIZE as usize * n, NO_PATCH, touched);
        self.vertex_attrs = zeros(cap.attr_words(Kind::Vertex) as usize * n);
        self.edge_attrs = zeros(cap.attr_words(Kind::Edge) as usize * n);
        self.face_attrs = zeros(cap.attr_words(Kind::Face) as usize * n);
        self.allocate_state();
        debug_assert_eq!(
            self.array_bytes(),
            self.bytes(),
            "the layout's bytes as planned"
        );
    }

    /// Allocates the arrays a layout's rounds start empty whatever the
    /// patches: the locks, flags and declined seeds zero, the queue empty
    /// with the slots in use counted, the statistics zero.
    pub(crate) fn allocate_state(&mut self) {
        let n = self.cap.patches as usize;
        self.locks = vec![0; n];
        self.flags = vec![0; n];
        self.declined = vec![0; self.cap.declined_words() as usize * n];
        self.queue = vec![NO_PATCH; n];
        self.queue_state = vec![0; queue::STATE_WORDS as usize];
        self.queue_state[queue::PATCHES as usize] = self.num_patches;
        self.stats = vec![0; stat::COUNT as usize];
    }

    /// Moves the arrays of `other` (a shell of this mesh's layout
    /// allocated elsewhere, [`DynamicMesh::allocate`]) into this mesh,
    /// whose arrays are dropped.
    pub(crate) fn take_arrays(&mut self, other: DynamicMesh) {
        debug_assert_eq!(self.cap, other.cap, "a shell of the same layout");
        self.counts = other.counts;
        self.fe = other.fe;
        self.ev = other.ev;
        self.masks = other.masks;
        self.hash = other.hash;
        self.stash = other.stash;
        self.locks = other.locks;
        self.flags = other.flags;
        self.declined = other.declined;
        self.vertex_attrs = other.vertex_attrs;
        self.edge_attrs = other.edge_attrs;
        self.face_attrs = other.face_attrs;
        self.queue = other.queue;
        self.queue_state = other.queue_state;
        self.stats = other.stats;
    }

    /// The bytes of the arrays once allocated ([`DynamicMesh::bytes`]).
    pub(crate) fn planned_bytes(&self) -> u64 {
        u64::from(self.cap.patches) * slot_bytes(&self.cap) + FIXED_BYTES
    }
}

/// What a dynamic layout keeps of its input besides the patches.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shape {
    /// The static patcher's limit of faces a patch.
    pub(crate) patch_size: u32,
    /// Vertices of the input mesh.
    pub(crate) input_vertices: u32,
    /// Edges of the input mesh (as the patcher numbers them).
    pub(crate) input_edges: u32,
    /// Faces of the input mesh.
    pub(crate) input_faces: u32,
}

/// `len` copies of `value`, written in parallel unless `value` is zero
/// and the array need not be `touched` (then the allocator's zero pages
/// hold it until first written).
fn filled<T: Copy + Default + PartialEq + Send + Sync>(
    len: usize,
    value: T,
    touched: bool,
) -> Vec<T> {
    let mut v = vec![T::default(); len];
    if touched || value != T::default() {
        v.par_chunks_mut(1 << 16)
            .for_each(|chunk| chunk.fill(value));
    }
    v
}

/// Bytes of one patch slot of a layout of capacity `cap` (every array of
/// [`DynamicMesh::bytes`] that has a stride per slot).
fn slot_bytes(cap: &Capacity) -> u64 {
    let halves = u64::from(cap.fe_stride()) + u64::from(cap.ev_stride());
    let words = u64::from(COUNT_WORDS)
        + u64::from(cap.mask_stride())
        + u64::from(cap.hash_stride())
        + u64::from(STASH_SIZE)
        + 2 // lock and flags
        + u64::from(cap.declined_words())
        + u64::from(cap.attr_words(Kind::Vertex))
        + u64::from(cap.attr_words(Kind::Edge))
        + u64::from(cap.attr_words(Kind::Face))
        + 1; // queue entry
    2 * halves + 4 * words
}

/// Bytes of a layout that do not grow with its patch slots: the queue's
/// state and the statistics.
const FIXED_BYTES: u64 = 4 * (queue::STATE_WORDS as u64 + stat::COUNT as u64);

/// The patch slots' chunks of the attribute words of `kind` (`n` slots;
/// empty chunks when the kind has no words).
fn attr_chunks(
    words: &mut [u32],
    cap: Capacity,
    kind: Kind,
    n: usize,
) -> impl IndexedParallelIterator<Item = &mut [u32]> {
    let len = cap.attr_words(kind) as usize;
    let mut chunks: Vec<&mut [u32]> = if len == 0 {
        Vec::new()
    } else {
        words.chunks_mut(len).collect()
    };
    chunks.resize_with(n, Default::default);
    chunks.into_par_iter()
}

/// The arrays of one patch slot of a [`DynamicMesh`].
struct Slot<'a> {
    counts: &'a mut [u32],
    fe: &'a mut [u16],
    ev: &'a mut [u16],
    masks: &'a mut [u32],
    hash: &'a mut [u32],
    stash: &'a mut [u32],
    /// Attribute words of vertices, edges and faces.
    attrs: [&'a mut [u32]; 3],
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

    for kind in Kind::ALL {
        if cap.attr_stride(kind) == 0 {
            continue;
        }
        let ribbon = &patched.ribbon[info.ribbon_start(kind) as usize..];
        let (owned, base) = (info.owned(kind), info.base(kind));
        for l in 0..info.count(kind) {
            let handle = if l < owned {
                base + l
            } else {
                let (s, owner_local) = ribbon_owner(ribbon[(l - owned) as usize]);
                let q = static_stash[s as usize];
                patched.patches[q as usize].base(kind) + owner_local
            };
            let input = patched.to_input(kind)[handle as usize];
            // Word `i` of the element within its patch slot
            // (`Capacity::attr_index` of patch 0).
            let word = |i: u32| cap.attr_index(kind, (0, l), i) as usize;
            let words = &mut *slot.attrs[kind as usize];
            if kind == Kind::Vertex {
                for (i, x) in (0..).zip(mesh.positions[input as usize]) {
                    words[word(i)] = x.to_bits();
                }
                words[word(INPUT_INDEX_ATTR)] = input;
            } else {
                words[word(ELEMENT_INPUT_INDEX)] = input;
            }
        }
    }
    Ok(())
}

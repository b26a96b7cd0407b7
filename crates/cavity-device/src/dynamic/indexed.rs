//! The dynamic mesh exported as indexed faces where it lies (Mahmoud et
//! al. 2024, section 5.1's layout read back as a plain mesh): the result
//! of the host crate's `DynamicMesh::to_mesh_with_sources`, made by the
//! backend that ran the rounds, so that the dynamic layout need not be
//! copied back to the host for an application's output.
//!
//! Element order is the host's: the active owned elements that keep an
//! input index come first, by input index; the others (the ones fill-ins
//! added, and every element of a kind without attribute words) follow in
//! patch order (patch slot, then local index). Three passes, one block per
//! used patch slot:
//!
//! 1. [`CountExported`] marks each input index the mesh holds (`present`)
//!    and counts each patch's elements without one (`added`);
//! 2. the host scans `present` and `added` on the backend: an input
//!    index's rank among those held is its element's place, and a patch's
//!    scanned count (after all held ones) is where its added elements
//!    start; [`PlaceExported`] writes every element's place by slot, its
//!    input index by place, and, for vertices, its position by place;
//! 3. [`WriteExportedCorners`] writes each face's corners as the places of their
//!    owners, resolved through the ribbon by one hop.
//!
//! An input index held twice (a fill-in's copy) has no place by rank:
//! [`CountExported`] counts it and the host exports on the host instead.

use crate::block::{SharedArena, scan_scratch_len};
use crate::kernel::ELEMENT_BOUNDS;
use crate::layout::Kind;

use super::global::GlobalU32;
use super::layout::{Capacity, NEW_ELEMENT, RawDynamicMesh, input_index_word};
use super::patch::DynMesh;

/// The input index of active owned element `l` of `kind` in patch `p`:
/// [`NEW_ELEMENT`] for one without (a kind without attribute words, or
/// an index at or past `inputs`), as the host's `DynamicMesh::input_index`.
#[inline(always)]
fn input_of(m: &DynMesh, kind: Kind, (p, l): (u32, u32), inputs: u32) -> u32 {
    let word = input_index_word(kind);
    if m.cap.attr_stride(kind) <= word {
        return NEW_ELEMENT;
    }
    let input = m.load_value(kind, (p, l), word, 1)[0];
    if input < inputs { input } else { NEW_ELEMENT }
}

/// Shared-memory bytes of [`PlaceExported`] on `kind` with `threads` threads
/// a block: a mark per local element and the scan's scratch.
pub fn place_shared_bytes(cap: &Capacity, kind: Kind, threads: u32) -> usize {
    let mut arena = SharedArena::measuring();
    arena.alloc::<u32>(cap.of(kind));
    arena.alloc::<u32>(scan_scratch_len(threads));
    arena.used()
}

crate::kernel! {
    @core
    /// Pass 1 of the export ([module](self)) on `kind` (`Kind::from_u32`)
    /// of used patch slot `p` (a block each): `present[input]` counts the
    /// active owned elements of each input index below `inputs`, `added[p]`
    /// the patch's active owned elements without one, and `shared[0]` the
    /// elements whose input index another element holds too.
    ///
    /// # Safety
    /// `mesh` describes the live arrays of a dynamic mesh that nothing
    /// writes meanwhile; `present` points at `inputs` words, `added` at one
    /// word per used patch slot and `shared` at one, all zeroed.
    #[launch_bounds = ELEMENT_BOUNDS]
    pub kernel CountExported(
        launch,
        mesh: RawDynamicMesh,
        kind: u32,
        inputs: u32,
        present: u64,
        added: u64,
        shared: u64,
    ) {
        // SAFETY: the kernel's contract.
        let (m, present, added, shared) = unsafe {
            (
                DynMesh::new(&mesh),
                GlobalU32::new(present),
                GlobalU32::new(added),
                GlobalU32::new(shared),
            )
        };
        let p = launch.block_idx;
        let kind = Kind::from_u32(kind);
        let (mut new, mut twice) = (0, 0);
        launch.block.for_each(m.count(p, kind), |l| {
            if !m.owns_active(p, kind, l) {
                return;
            }
            match input_of(&m, kind, (p, l), inputs) {
                NEW_ELEMENT => new += 1,
                input => {
                    if present.fetch_add(input, 1) != 0 {
                        twice += 1;
                    }
                }
            }
        });
        if new > 0 {
            added.fetch_add(p, new);
        }
        if twice > 0 {
            shared.fetch_add(0, twice);
        }
    }
}

crate::kernel! {
    @core
    /// Pass 2 of the export ([module](self)) on `kind` (`Kind::from_u32`)
    /// of used patch slot `p` (a block each, [`place_shared_bytes`] of
    /// shared memory): each active owned element's place in element order
    /// (`rank[input]` for one with an input index below `inputs`; else
    /// `kept + added[p]` plus its rank among the patch's elements without
    /// one, in local order) goes to `places[p × cap + l]`, its input index
    /// ([`NEW_ELEMENT`] without one) to `sources[place]`, and, unless
    /// `positions` is 0, its first three attribute words (a vertex's
    /// position) to `positions[3 × place..]`.
    ///
    /// # Safety
    /// `mesh` describes the live arrays of a dynamic mesh that nothing
    /// writes meanwhile, with no input index held twice ([`CountExported`]);
    /// `rank` holds the exclusive scan of [`CountExported`]'s `present`
    /// (`inputs` words, `kept` their sum) and `added` that of its
    /// `added`; `places` holds `cap.patches × cap` words of `kind`,
    /// `sources` (and `positions`, three words each, unless 0) one per
    /// element exported; the shared memory is [`place_shared_bytes`].
    #[launch_bounds = ELEMENT_BOUNDS]
    pub kernel PlaceExported(
        launch,
        mesh: RawDynamicMesh,
        kind: u32,
        inputs: u32,
        rank: u64,
        kept: u32,
        added: u64,
        places: u64,
        sources: u64,
        positions: u64,
    ) {
        // SAFETY: the kernel's contract.
        let (m, rank, added, places, sources, at) = unsafe {
            (
                DynMesh::new(&mesh),
                GlobalU32::new(rank),
                GlobalU32::new(added),
                GlobalU32::new(places),
                GlobalU32::new(sources),
                GlobalU32::new(positions),
            )
        };
        let (block, p) = (launch.block, launch.block_idx);
        let kind = Kind::from_u32(kind);
        let n = m.count(p, kind);
        let marks = launch.arena.alloc::<u32>(m.cap.of(kind));
        let scratch = launch.arena.alloc::<u32>(scan_scratch_len(block.block_dim()));
        launch.arena.check();
        let input = |l: u32| {
            if m.owns_active(p, kind, l) {
                input_of(&m, kind, (p, l), inputs)
            } else {
                // Neither held nor added: no place.
                0
            }
        };
        block.for_each(n, |l| {
            let new = m.owns_active(p, kind, l) && input(l) == NEW_ELEMENT;
            marks.set(l, u32::from(new));
        });
        block.sync();
        block.scan(marks, n, scratch, false);
        block.sync();
        let first = kept + added.load(p);
        block.for_each(n, |l| {
            if !m.owns_active(p, kind, l) {
                return;
            }
            let input = input(l);
            let place = if input == NEW_ELEMENT {
                first + marks.get(l)
            } else {
                rank.load(input)
            };
            // SAFETY: each slot and each place (no input index held
            // twice: the contract) is written by this one thread, and
            // nothing reads them while the kernel runs.
            unsafe {
                places.store_unshared(p * m.cap.of(kind) + l, place);
                sources.store_unshared(place, input);
                if positions != 0 {
                    for c in 0..3 {
                        at.store_unshared(3 * place + c, m.load_value(kind, (p, l), c, 1)[0]);
                    }
                }
            }
        });
    }
}

crate::kernel! {
    @core
    /// Pass 3 of the export ([module](self)) on used patch slot `p` (a
    /// block each): the corners of each active owned face go to
    /// `faces[3 × place..]` (`place` its `face_places` entry) as the
    /// `vertex_places` entries of their owners, resolved through the
    /// ribbon by one hop; a corner without an active owned owner (a mesh
    /// the host's validation rejects) is counted in `strays[0]` and
    /// written as `u32::MAX`.
    ///
    /// # Safety
    /// `mesh` describes the live arrays of a dynamic mesh that nothing
    /// writes meanwhile; `vertex_places` and `face_places` are
    /// [`PlaceExported`]'s on vertices and faces, `faces` holds three words
    /// per face exported, `strays` one, zeroed.
    #[launch_bounds = ELEMENT_BOUNDS]
    pub kernel WriteExportedCorners(
        launch,
        mesh: RawDynamicMesh,
        vertex_places: u64,
        face_places: u64,
        faces: u64,
        strays: u64,
    ) {
        // SAFETY: the kernel's contract.
        let (m, vertex_places, face_places, faces, strays) = unsafe {
            (
                DynMesh::new(&mesh),
                GlobalU32::new(vertex_places),
                GlobalU32::new(face_places),
                GlobalU32::new(faces),
                GlobalU32::new(strays),
            )
        };
        let p = launch.block_idx;
        let mut lost = 0;
        launch.block.for_each(m.count(p, Kind::Face), |f| {
            if !m.owns_active(p, Kind::Face, f) {
                return;
            }
            let place = face_places.load(p * m.cap.faces + f);
            let corners = m.face_vertices(p, f);
            for (i, v) in (0u32..).zip(corners) {
                let corner = match m.owner(p, Kind::Vertex, v) {
                    Some((q, l)) if q < m.num_patches && m.owns_active(q, Kind::Vertex, l) => {
                        vertex_places.load(q * m.cap.vertices + l)
                    }
                    _ => {
                        lost += 1;
                        u32::MAX
                    }
                };
                // SAFETY: each face's place is written by this one thread
                // (places are distinct), and nothing reads it meanwhile.
                unsafe { faces.store_unshared(3 * place + i, corner) };
            }
        });
        if lost > 0 {
            strays.fetch_add(0, lost);
        }
    }
}

//! The boundary operators ∂1, ∂2 and ∂3 of the collapsed mesh, built on
//! the device from its tetrahedra, stars and edge rows (issue 54 item 1;
//! the ternary operators of Zayer et al.'s volumetric structure, which
//! `cavity_volume::ResidentMesh` holds), by count, scan and fill, and
//! numbered as `cavity_volume::VolumeMesh::from_cells` numbers them:
//!
//! 1. [`CountFaces`]: each tetrahedron's four faces ([`FACE_LOOPS`], the
//!    volume crate's local order), the tetrahedron across each
//!    (`across`, from the star of the face's first vertex) and how many
//!    it owns (a face belongs to the lower-indexed of its tetrahedra,
//!    its first occurrence); the host scans the counts;
//! 2. [`NumberFaces`]: the owned faces numbered in the tetrahedra's
//!    order, each face's three edge slots (`3 f + i`, the loop's edge
//!    `i`) with their edge in the edge rows, and each edge's first slot
//!    (an atomic maximum of the slot's complement);
//! 3. [`MarkFirstSlots`]: 1 at each edge's first slot; the host scans
//!    them, numbering the edges in the order the faces first name them;
//! 4. [`FaceEdges`]: ∂1 (each edge as its first slot runs) and ∂2 (each
//!    slot's edge, negative where the loop runs against it);
//! 5. [`CellFaces`]: ∂3, each tetrahedron's faces, negative where the
//!    face's stored loop (its owner's) turns the other way.
//!
//! Every launch reads only what an earlier one wrote, and the numbers do
//! not depend on the order of the threads. The other way,
//! [`OrientCells`] makes tetrahedra of the cell-vertex relation of a
//! mesh on the device.

use cavity_device::array::{In, InOut, Ins};

use crate::chunk;
use crate::geometry::signed_volume;
use crate::iteration::{Arrays, find_edge};
use crate::star::{Star, has, smallest_star};

/// The outward vertex loops of a positively oriented tetrahedron's faces,
/// as local corners, in the volume crate's order (`TET_FACES` of
/// `cavity_volume::mesh`): face `j` of cell `c` is its `4 c + j`-th face
/// occurrence.
pub const FACE_LOOPS: [[usize; 3]; 4] = [[0, 2, 1], [0, 1, 3], [1, 2, 3], [0, 3, 2]];

/// No tetrahedron (across a boundary face).
pub const NONE: u32 = u32::MAX;

/// An operator's entry: `index` for +1, `!index` for -1 (the volume
/// crate's encoding).
#[inline(always)]
pub fn encode(index: u32, negative: bool) -> u32 {
    if negative { !index } else { index }
}

/// Face `j`'s loop of tetrahedron `t` (its vertices).
#[inline(always)]
fn face_loop(t: [u32; 4], j: usize) -> [u32; 3] {
    FACE_LOOPS[j].map(|k| t[k])
}

/// Whether loop `b` is loop `a` turned the same way (a rotation of it).
#[inline(always)]
fn same_turn(a: [u32; 3], b: [u32; 3]) -> bool {
    (b[0] == a[0] && b[1] == a[1])
        || (b[0] == a[1] && b[1] == a[2])
        || (b[0] == a[2] && b[1] == a[0])
}

/// The tetrahedron other than `t` with triangle `f`, or [`NONE`], read
/// from the smallest of its vertices' stars ([`smallest_star`]).
#[inline(always)]
fn across<S: Star>(s: &S, t: u32, f: [u32; 3]) -> u32 {
    let (v, [x, y]) = smallest_star(s, f);
    let mut i = 0;
    while i < s.star_len(v) {
        let u = s.star_tet(v, i);
        i += 1;
        if u != t {
            let q = s.tet(u);
            if has(q, x) && has(q, y) {
                return u;
            }
        }
    }
    NONE
}

/// Whether loop `l` has vertex `x`.
#[inline(always)]
fn holds(l: [u32; 3], x: u32) -> bool {
    l[0] == x || l[1] == x || l[2] == x
}

/// The face of `t` (its local index) with the vertices of `f`, which `t`
/// has (the tetrahedron [`across`] found): the last when none of the
/// first three is.
#[inline(always)]
fn local_face(t: [u32; 4], f: [u32; 3]) -> usize {
    let mut j = 0;
    while j < 3 {
        let l = face_loop(t, j);
        if holds(l, f[0]) && holds(l, f[1]) && holds(l, f[2]) {
            return j;
        }
        j += 1;
    }
    3
}

/// The directed edge of slot `slot` (`3 f + i`: face `f`'s loop edge
/// `i`), its face's occurrence `4 t + j` read from `face_slot`.
#[inline(always)]
fn slot_edge_of(tets: In<u32>, face_slot: In<u32>, slot: u32) -> [u32; 2] {
    let occurrence = face_slot.get(slot / 3);
    let (t, j) = (occurrence / 4, (occurrence % 4) as usize);
    let b = 4 * t;
    let corners = [
        tets.get(b),
        tets.get(b + 1),
        tets.get(b + 2),
        tets.get(b + 3),
    ];
    let l = face_loop(corners, j);
    let i = (slot % 3) as usize;
    [l[i], l[(i + 1) % 3]]
}

cavity_device::kernel! {
    @core
    /// For each of the `tets` tetrahedra `t` and its faces `j`
    /// ([`FACE_LOOPS`]): the tetrahedron across into `across[4 t + j]`
    /// ([`NONE`] on the boundary), and the faces it owns (those with no
    /// tetrahedron across, or a higher one) into `owned[t]`.
    ///
    /// # Safety
    /// Checked: the mesh is only read; each tetrahedron writes its own
    /// words.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel CountFaces(
        launch,
        mesh: Ins<u32, 4>,
        geometry: Ins<f32, 2>,
        tets: u32,
        across_out: InOut<u32>,
        owned: InOut<u32>,
    ) {
        let s = Arrays::new(mesh, geometry);
        let (start, end) = chunk(launch.block_idx, tets);
        launch.block.for_each(end - start, |k| {
            let t = start + k;
            let c = s.tet(t);
            let mut count = 0;
            for j in 0..4 {
                let u = across(&s, t, face_loop(c, j));
                across_out.set(4 * t + j as u32, u);
                if u == NONE || u > t {
                    count += 1;
                }
            }
            owned.set(t, count);
        });
    }
}

cavity_device::kernel! {
    @core
    /// Numbers the owned faces: tetrahedron `t`'s owned faces, in their
    /// local order, get `face_first[t]`, `face_first[t] + 1`, ... into
    /// `face_of[4 t + j]`, and `face_slot[f] = 4 t + j`; each face's loop
    /// edge `i` (slot `3 f + i`) gets its edge in the edge rows into
    /// `slot_edge`, and each edge the complement of its least slot in
    /// `first_slot` (zero at the start; an atomic maximum). Parameters:
    /// `(mesh, geometry, [face_first, across, edge_offsets, edges],
    /// tets, face_of, face_slot, slot_edge, first_slot)`.
    ///
    /// # Safety
    /// Checked: the inputs are only read; each face's words are written
    /// by its owner, the first slots atomically.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel NumberFaces(
        launch,
        mesh: Ins<u32, 4>,
        geometry: Ins<f32, 2>,
        aux: Ins<u32, 4>,
        tets: u32,
        face_of: InOut<u32>,
        face_slot: InOut<u32>,
        slot_edge: InOut<u32>,
        first_slot: InOut<u32>,
    ) {
        let s = Arrays::new(mesh, geometry);
        let [face_first, across_in, edge_offsets, edges] = *aux;
        let (start, end) = chunk(launch.block_idx, tets);
        launch.block.for_each(end - start, |k| {
            let t = start + k;
            let c = s.tet(t);
            let mut f = face_first.get(t);
            for j in 0..4 {
                let u = across_in.get(4 * t + j as u32);
                if u != NONE && u < t {
                    continue;
                }
                face_of.set(4 * t + j as u32, f);
                face_slot.set(f, 4 * t + j as u32);
                let l = face_loop(c, j);
                for i in 0..3 {
                    let e = find_edge(edge_offsets, edges, l[i], l[(i + 1) % 3]);
                    let slot = 3 * f + i as u32;
                    slot_edge.set(slot, e);
                    first_slot.fetch_max(e, !slot);
                }
                f += 1;
            }
        });
    }
}

cavity_device::kernel! {
    @core
    /// 1 into `marks[s]` for each of the `slots` slots that is its edge's
    /// first (`[slot_edge, first_slot]` as [`NumberFaces`] left them).
    ///
    /// # Safety
    /// Checked: the inputs are only read; each slot writes its own word.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel MarkFirstSlots(launch, aux: Ins<u32, 2>, slots: u32, marks: InOut<u32>) {
        let [slot_edge, first_slot] = *aux;
        let (start, end) = chunk(launch.block_idx, slots);
        launch.block.for_each(end - start, |k| {
            let slot = start + k;
            let first = !first_slot.get(slot_edge.get(slot));
            marks.set(slot, u32::from(first == slot));
        });
    }
}

cavity_device::kernel! {
    @core
    /// ∂1 and ∂2: for each of the `slots` slots, its edge's number (the
    /// scanned first-slot marks at the edge's first slot); at the first
    /// slot the edge's pair (its two vertices as that loop runs) into
    /// `pairs`, and at every slot the signed edge into `face_edges`,
    /// negative where the loop runs against the pair. Parameters:
    /// `(tets, [slot_edge, first_slot, numbers, face_slot], slots, pairs,
    /// face_edges)`.
    ///
    /// # Safety
    /// Checked: the inputs are only read; each slot writes its own entry,
    /// each edge's pair only its first slot.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel FaceEdges(
        launch,
        tets: In<u32>,
        aux: Ins<u32, 4>,
        slots: u32,
        pairs: InOut<u32>,
        face_edges: InOut<u32>,
    ) {
        let [slot_edge, first_slot, numbers, face_slot] = *aux;
        let (start, end) = chunk(launch.block_idx, slots);
        launch.block.for_each(end - start, |k| {
            let slot = start + k;
            let first = !first_slot.get(slot_edge.get(slot));
            let id = numbers.get(first);
            let runs = slot_edge_of(tets, face_slot, slot);
            let pair = slot_edge_of(tets, face_slot, first);
            if slot == first {
                pairs.set(2 * id, runs[0]);
                pairs.set(2 * id + 1, runs[1]);
            }
            face_edges.set(slot, encode(id, runs != pair));
        });
    }
}

cavity_device::kernel! {
    @core
    /// ∂3: each of the `tets` tetrahedra's four faces into
    /// `cell_faces[4 t + j]`: its own number where it owns the face,
    /// else the owner's, negative where the owner's loop turns the other
    /// way. Parameters: `(tets_in, [across, face_of], tets, cell_faces)`.
    ///
    /// # Safety
    /// Checked: the inputs are only read; each tetrahedron writes its own
    /// words.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel CellFaces(
        launch,
        tet_vertices: In<u32>,
        aux: Ins<u32, 2>,
        tets: u32,
        cell_faces: InOut<u32>,
    ) {
        let [across_in, face_of] = *aux;
        let corners = |t: u32| {
            let b = 4 * t;
            [
                tet_vertices.get(b),
                tet_vertices.get(b + 1),
                tet_vertices.get(b + 2),
                tet_vertices.get(b + 3),
            ]
        };
        let (start, end) = chunk(launch.block_idx, tets);
        launch.block.for_each(end - start, |k| {
            let t = start + k;
            let c = corners(t);
            for j in 0..4 {
                let at = 4 * t + j as u32;
                let u = across_in.get(at);
                let entry = if u == NONE || u > t {
                    encode(face_of.get(at), false)
                } else {
                    let l = face_loop(c, j);
                    let o = corners(u);
                    let jo = local_face(o, l);
                    let owner = face_loop(o, jo);
                    encode(face_of.get(4 * u + jo as u32), !same_turn(owner, l))
                };
                cell_faces.set(at, entry);
            }
        });
    }
}

cavity_device::kernel! {
    @core
    /// The tetrahedra of a mesh's cell-vertex relation (`[offsets,
    /// entries]`, each of the `cells` rows four vertices, ascending) at
    /// `positions` (three words per vertex): each row into `tets` as a
    /// positively oriented tetrahedron, its first two vertices swapped
    /// where the row's signed volume is negative. `problems[0]` gets one
    /// plus the last cell whose row is not four vertices, `problems[1]`
    /// one plus the last whose volume is zero (atomic maxima; zero when
    /// none is).
    ///
    /// # Safety
    /// Checked: the inputs are only read; each cell writes its own words,
    /// the problems atomically.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel OrientCells(
        launch,
        relation: Ins<u32, 2>,
        positions: In<f32>,
        cells: u32,
        tets: InOut<u32>,
        problems: InOut<u32>,
    ) {
        let [offsets, entries] = *relation;
        let position = |v: u32| {
            let b = 3 * v;
            [
                f64::from(positions.get(b)),
                f64::from(positions.get(b + 1)),
                f64::from(positions.get(b + 2)),
            ]
        };
        let (start, end) = chunk(launch.block_idx, cells);
        launch.block.for_each(end - start, |k| {
            let c = start + k;
            let (first, next) = (offsets.get(c), offsets.get(c + 1));
            if next.wrapping_sub(first) != 4 {
                problems.fetch_max(0, c + 1);
                return;
            }
            let mut t = [
                entries.get(first),
                entries.get(first + 1),
                entries.get(first + 2),
                entries.get(first + 3),
            ];
            let volume = signed_volume(position(t[0]), position(t[1]), position(t[2]), position(t[3]));
            if volume < 0.0 {
                t.swap(0, 1);
            } else if volume.partial_cmp(&0.0) != Some(core::cmp::Ordering::Greater) {
                problems.fetch_max(1, c + 1);
            }
            for (i, v) in (0..).zip(t) {
                tets.set(4 * c + i, v);
            }
        });
    }
}

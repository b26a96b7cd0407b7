//! The boundary operators ∂1, ∂2 and ∂3 built on the device from
//! cell-vertex lists (issue 55 item 6; the ternary operators of the
//! paper's section 3), numbered as the host's sort-based build
//! (`cavity_volume::VolumeMesh::from_cells`) numbers them: a face is
//! stored once, with the loop of its first occurrence among the cells'
//! faces in cell order, and faces are numbered in the order of those
//! first occurrences; the same for the faces' edges in ∂2's order.
//!
//! The cells are tetrahedra, pyramids, prisms and hexahedra ([`Shape`],
//! told apart by their vertex counts), given as compressed rows of
//! their vertices in the types' orders. With their star (the
//! vertex-cell relation: the transpose of the rows, each row sorted), the
//! build is count, scan and fill:
//!
//! 1. [`CountCellFaces`]: each cell's faces, and whether a cell names a
//!    vertex out of range or twice (the host then checks the cells
//!    itself, for the error); the host scans the counts into ∂3's
//!    offsets (each face occurrence's place `at`);
//! 2. [`FindOwners`]: each occurrence's first occurrence, searched in
//!    the star of its vertex with the smallest star among the cells
//!    before it (the star is sorted), with the sign that turns the first
//!    occurrence's loop into its own; each cell's count of first
//!    occurrences, which the host scans;
//! 3. [`NumberFaces`]: the faces numbered by their first occurrences,
//!    each face's cell, local face and length (the host scans the
//!    lengths into ∂2's offsets);
//! 4. [`SignedCellFaces`]: ∂3, each occurrence's face with its sign;
//! 5. [`CountEdgeRows`] and [`FillEdgeRows`]: each vertex's higher
//!    neighbours along the cells' edges, sorted, as rows (one edge each);
//! 6. [`FindSlotEdges`]: each slot of ∂2 (a face's loop edge `i`) with
//!    its edge row and direction, and each edge's first slot (an atomic
//!    maximum of the slot's complement);
//! 7. [`MarkFirstSlots`]: 1 at each edge's first slot; the host scans
//!    them, numbering the edges in the order ∂2 first names them (a row
//!    no stored loop names, as a cell edge that only a later cell's other
//!    loop of a stored face runs through, gets no number, as on the
//!    host);
//! 8. [`SignedFaceEdges`]: ∂2's entries and ∂1, each edge as its first slot
//!    runs.
//!
//! Every launch reads only what an earlier one wrote, and no number
//! depends on the order of the threads. The other way, [`CellLists`]
//! forms the cell-vertex lists of a mesh's operators on the device.

use cavity_device::array::{In, InOut, Ins};

use crate::signed::{encode, index, is_negative, with_sign_of};
use crate::{BOUNDS, chunk};

/// A cell type with a fixed vertex list, each told by its number of
/// vertices ([`Shape::of_vertices`]); vertex orders are those of VTK and
/// Gmsh (Gmsh's for prisms).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Four vertices, positively oriented: `3` on the side of `(0, 1, 2)`
    /// its counter-clockwise loop points to.
    Tetrahedron,
    /// Base `0, 1, 2, 3` counter-clockwise seen from the apex `4`.
    Pyramid,
    /// Bottom triangle `0, 1, 2` counter-clockwise seen from the top, top
    /// `3, 4, 5` above them.
    Prism,
    /// Bottom `0, 1, 2, 3` counter-clockwise seen from the top, top
    /// `4, 5, 6, 7` above them.
    Hexahedron,
}

impl Shape {
    /// The shape of a cell of `n` vertices: 4 a tetrahedron, 5 a pyramid,
    /// 6 a prism, 8 a hexahedron; `None` for any other count.
    #[inline(always)]
    pub fn of_vertices(n: u32) -> Option<Shape> {
        match n {
            4 => Some(Shape::Tetrahedron),
            5 => Some(Shape::Pyramid),
            6 => Some(Shape::Prism),
            8 => Some(Shape::Hexahedron),
            _ => None,
        }
    }

    /// The shape of a closed cell whose faces have `sizes` vertices:
    /// four triangles a tetrahedron, four and a quadrilateral a pyramid,
    /// two and three a prism, six quadrilaterals a hexahedron; `None`
    /// for any other faces (a general polyhedron).
    #[inline(always)]
    pub fn of_face_sizes(sizes: impl Iterator<Item = u32>) -> Option<Shape> {
        let (mut triangles, mut quads, mut other) = (0u32, 0u32, 0u32);
        for n in sizes {
            match n {
                3 => triangles += 1,
                4 => quads += 1,
                _ => other += 1,
            }
        }
        match (triangles, quads, other) {
            (4, 0, 0) => Some(Shape::Tetrahedron),
            (4, 1, 0) => Some(Shape::Pyramid),
            (2, 3, 0) => Some(Shape::Prism),
            (0, 6, 0) => Some(Shape::Hexahedron),
            _ => None,
        }
    }

    /// Its number of vertices.
    #[inline(always)]
    pub fn vertices(self) -> u32 {
        match self {
            Shape::Tetrahedron => 4,
            Shape::Pyramid => 5,
            Shape::Prism => 6,
            Shape::Hexahedron => 8,
        }
    }

    /// Its number of faces.
    #[inline(always)]
    pub fn faces(self) -> u32 {
        match self {
            Shape::Tetrahedron => 4,
            Shape::Pyramid | Shape::Prism => 5,
            Shape::Hexahedron => 6,
        }
    }

    /// Face `j`'s outward vertex loop as local vertices (counter-clockwise
    /// seen from outside), and its length, 3 or 4 (a triangle's fourth
    /// word is 0): the face order of the volumetric structure.
    #[inline(always)]
    pub fn face(self, j: u32) -> ([u32; 4], u32) {
        match self {
            Shape::Tetrahedron => match j {
                0 => ([0, 2, 1, 0], 3),
                1 => ([0, 1, 3, 0], 3),
                2 => ([1, 2, 3, 0], 3),
                _ => ([0, 3, 2, 0], 3),
            },
            Shape::Pyramid => match j {
                0 => ([0, 3, 2, 1], 4),
                1 => ([0, 1, 4, 0], 3),
                2 => ([1, 2, 4, 0], 3),
                3 => ([2, 3, 4, 0], 3),
                _ => ([3, 0, 4, 0], 3),
            },
            Shape::Prism => match j {
                0 => ([0, 2, 1, 0], 3),
                1 => ([3, 4, 5, 0], 3),
                2 => ([0, 1, 4, 3], 4),
                3 => ([1, 2, 5, 4], 4),
                _ => ([2, 0, 3, 5], 4),
            },
            Shape::Hexahedron => match j {
                0 => ([0, 3, 2, 1], 4),
                1 => ([4, 5, 6, 7], 4),
                2 => ([0, 1, 5, 4], 4),
                3 => ([1, 2, 6, 5], 4),
                4 => ([2, 3, 7, 6], 4),
                _ => ([3, 0, 4, 7], 4),
            },
        }
    }
}

/// No vertex (the unused word of a triangle's key).
const NONE: u32 = u32::MAX;

/// A cell of the compressed rows (`offsets`, `vertices`): its first
/// word and its shape (a tetrahedron for a count no shape has: the host
/// uploads none).
#[inline(always)]
fn cell(offsets: In<u32>, c: u32) -> (u32, Shape) {
    let first = offsets.get(c);
    let n = offsets.get(c + 1).wrapping_sub(first);
    (first, Shape::of_vertices(n).unwrap_or(Shape::Tetrahedron))
}

/// Cell `c`'s vertices, read once ([`NONE`] past its shape's count),
/// and its shape.
#[inline(always)]
fn load(offsets: In<u32>, vertices: In<u32>, c: u32) -> ([u32; 8], Shape) {
    let (first, shape) = cell(offsets, c);
    let mut v = [NONE; 8];
    for (i, x) in v.iter_mut().take(shape.vertices() as usize).enumerate() {
        *x = vertices.get(first.wrapping_add(i as u32));
    }
    (v, shape)
}

/// Face `j` of a cell of `shape` with vertices `v`: its loop (global
/// vertices; [`NONE`] past its length) and length.
#[inline(always)]
fn face_loop(v: &[u32; 8], shape: Shape, j: u32) -> ([u32; 4], u32) {
    let (local, len) = shape.face(j);
    let mut l = [NONE; 4];
    for i in 0..len as usize {
        l[i] = v[local[i] as usize & 7];
    }
    (l, len)
}

/// `l` sorted ([`NONE`] last): a face's key.
#[inline(always)]
fn key(mut l: [u32; 4]) -> [u32; 4] {
    let mut swap = |a: usize, b: usize| {
        if l[a] > l[b] {
            l.swap(a, b);
        }
    };
    swap(0, 1);
    swap(2, 3);
    swap(0, 2);
    swap(1, 3);
    swap(1, 2);
    l
}

/// Whether loop `b` runs as loop `a` (both of `len` vertices, the same
/// set): the vertex after `a[0]` in `b` is `a[1]`.
#[inline(always)]
fn same_turn(a: [u32; 4], b: [u32; 4], len: u32) -> bool {
    let n = len as usize;
    let mut k = 0;
    while k < n && b[k] != a[0] {
        k += 1;
    }
    b[(k + 1) % n] == a[1]
}

/// The local face of a cell of `shape` with vertices `v` whose key is
/// `k` (a face of `len` vertices), with its loop; `None` when it has
/// none.
#[inline(always)]
fn face_with(v: &[u32; 8], shape: Shape, k: [u32; 4], len: u32) -> Option<(u32, [u32; 4])> {
    // Most cells of the star lack a vertex of the face: told first.
    for &x in &k[..len as usize] {
        if !v.contains(&x) {
            return None;
        }
    }
    for j in 0..shape.faces() {
        let (l, m) = face_loop(v, shape, j);
        if m == len && key(l) == k {
            return Some((j, l));
        }
    }
    None
}

cavity_device::kernel! {
    /// Writes each of the `cells` cells' face count ([`Shape::faces`])
    /// into `counts`, and sets `bad[0]` to 1 when a cell has a vertex
    /// count no shape has, names a vertex of `vertices` or above, or
    /// names one twice (what the host's check refuses, and what the later
    /// launches must not read). `rows` is the cells' vertex rows:
    /// `[offsets, vertices]` (`cells + 1` offsets).
    ///
    /// # Safety
    /// Checked: the rows are only read; each cell writes its own word,
    /// `bad` is written atomically.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel CountCellFaces(
        launch,
        rows: Ins<u32, 2>,
        cells: u32,
        vertices: u32,
        counts: InOut<u32>,
        bad: InOut<u32>,
    ) {
        let [offsets, listed] = *rows;
        let (start, end) = chunk(launch.block_idx, cells);
        launch.block.for_each(end - start, |k| {
            let c = start + k;
            let first = offsets.get(c);
            let n = offsets.get(c + 1).wrapping_sub(first);
            let mut fine = Shape::of_vertices(n).is_some();
            let mut i = 0;
            while fine && i < n {
                let v = listed.get(first + i);
                fine = v < vertices;
                let mut j = 0;
                while fine && j < i {
                    fine = listed.get(first + j) != v;
                    j += 1;
                }
                i += 1;
            }
            if !fine {
                bad.or(0, 1);
            }
            counts.set(c, cell(offsets, c).1.faces());
        });
    }
}

cavity_device::kernel! {
    /// For each face occurrence `at` (face `j` of cell `c`, at
    /// `occurrences[c] + j`), its first occurrence `at'` into
    /// `owner[at]`, as `at'` where the first occurrence's loop runs as its
    /// own and `!at'` where it runs the other way; and into `owned[c]`
    /// the faces whose first occurrence is in `c` itself. `mesh` is the
    /// cells' vertex rows and their star: `[offsets, vertices,
    /// star_offsets, star]`, each star row sorted.
    ///
    /// # Safety
    /// Checked: the inputs are only read; each cell writes its own words.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel FindOwners(
        launch,
        mesh: Ins<u32, 4>,
        occurrences: In<u32>,
        cells: u32,
        owner: InOut<u32>,
        owned: InOut<u32>,
    ) {
        let [offsets, vertices, star_offsets, star] = *mesh;
        let (start, end) = chunk(launch.block_idx, cells);
        launch.block.for_each(end - start, |k| {
            let c = start + k;
            let (own, shape) = load(offsets, vertices, c);
            // Each vertex's star size, read once for the cell's faces.
            let mut sizes = [0u32; 8];
            for (size, &x) in sizes.iter_mut().zip(&own).take(shape.vertices() as usize) {
                *size = star_offsets.get(x + 1).wrapping_sub(star_offsets.get(x));
            }
            let at0 = occurrences.get(c);
            let mut count = 0;
            for j in 0..shape.faces() {
                let (l, len) = face_loop(&own, shape, j);
                let key = key(l);
                // The face's vertex with the smallest star.
                let (local, _) = shape.face(j);
                let mut best = local[0] as usize & 7;
                for &i in &local[1..len as usize] {
                    if sizes[i as usize & 7] < sizes[best] {
                        best = i as usize & 7;
                    }
                }
                let v = own[best];
                let at = at0.wrapping_add(j);
                let mut found = encode(at, false);
                // The cells before `c` in the star, in order: the first
                // with the face has its first occurrence.
                let mut i = star_offsets.get(v);
                let last = star_offsets.get(v + 1);
                while i < last {
                    let other = index(star.get(i));
                    if other >= c {
                        break;
                    }
                    let (v2, s2) = load(offsets, vertices, other);
                    if let Some((j2, l2)) = face_with(&v2, s2, key, len) {
                        let first_at = occurrences.get(other).wrapping_add(j2);
                        found = encode(first_at, !same_turn(l2, l, len));
                        break;
                    }
                    i += 1;
                }
                if found == at {
                    count += 1;
                }
                owner.set(at, found);
            }
            owned.set(c, count);
        });
    }
}

cavity_device::kernel! {
    /// Numbers the faces: cell `c`'s first occurrences, in its face
    /// order, from `face_first[c]` (the scan of [`FindOwners`]'
    /// `owned`); writes each first occurrence's face into `number[at]`,
    /// and each face's cell, local face and length into `face_cell`,
    /// `face_local` and `lengths`. `ins` is `[offsets, occurrences,
    /// owner, face_first]`.
    ///
    /// # Safety
    /// Checked: the inputs are only read; each cell writes its own
    /// occurrences and faces.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel NumberFaces(
        launch,
        ins: Ins<u32, 4>,
        cells: u32,
        number: InOut<u32>,
        face_cell: InOut<u32>,
        face_local: InOut<u32>,
        lengths: InOut<u32>,
    ) {
        let [offsets, occurrences, owner, face_first] = *ins;
        let (start, end) = chunk(launch.block_idx, cells);
        launch.block.for_each(end - start, |k| {
            let c = start + k;
            let shape = cell(offsets, c).1;
            let at0 = occurrences.get(c);
            let mut f = face_first.get(c);
            for j in 0..shape.faces() {
                let at = at0.wrapping_add(j);
                if owner.get(at) == at {
                    number.set(at, f);
                    face_cell.set(f, c);
                    face_local.set(f, j);
                    lengths.set(f, shape.face(j).1);
                    f += 1;
                }
            }
        });
    }
}

cavity_device::kernel! {
    /// ∂3's entries: each of the `n` occurrences' face ([`NumberFaces`]'
    /// `number` at its first occurrence, `owner`), negative where the
    /// first occurrence's loop runs the other way.
    ///
    /// # Safety
    /// Checked: the inputs are only read; each occurrence writes its own
    /// word.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel SignedCellFaces(
        launch,
        owner: In<u32>,
        number: In<u32>,
        n: u32,
        entries: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let at = start + k;
            let o = owner.get(at);
            entries.set(at, with_sign_of(number.get(index(o)), o));
        });
    }
}

/// Calls `f(b)` for each neighbour `b` of vertex `x` in a cell of
/// `shape` with vertices `v` along its edges: the vertex after `x` in
/// each face loop through it (each edge of a closed cell runs once each
/// way through its faces, so each neighbour comes once).
#[inline(always)]
fn cell_neighbours(v: &[u32; 8], shape: Shape, x: u32, mut f: impl FnMut(u32)) {
    let mut p = 0;
    while p < 8 && v[p] != x {
        p += 1;
    }
    for j in 0..shape.faces() {
        let (local, len) = shape.face(j);
        for i in 0..len as usize {
            if local[i] as usize == p {
                f(v[local[(i + 1) % len as usize] as usize & 7]);
            }
        }
    }
}

cavity_device::kernel! {
    /// Counts each of the `n` vertices' neighbours above it along the
    /// edges of its cells into `counts[v]`, and writes them, ascending,
    /// into `upper` from `4 ×` the start of its star row (a vertex has at
    /// most four neighbours in a cell, at a pyramid's apex), for
    /// [`FillEdgeRows`] to copy once the counts are scanned. `mesh` is as
    /// [`FindOwners`]'.
    ///
    /// # Safety
    /// Checked: the mesh is only read; each vertex writes its own count
    /// and its own part of `upper`.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel CountEdgeRows(
        launch,
        mesh: Ins<u32, 4>,
        n: u32,
        counts: InOut<u32>,
        upper: InOut<u32>,
    ) {
        let [offsets, vertices, star_offsets, star] = *mesh;
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let v = start + k;
            let (row, last) = (star_offsets.get(v), star_offsets.get(v + 1));
            let base = 4u32.wrapping_mul(row);
            let mut count = 0u32;
            for i in row..last {
                let (cv, shape) = load(offsets, vertices, index(star.get(i)));
                cell_neighbours(&cv, shape, v, |b| {
                    if b <= v {
                        return;
                    }
                    // Insertion into the sorted row, once.
                    let mut j = base.wrapping_add(count);
                    while j > base && upper.get(j - 1) > b {
                        j -= 1;
                    }
                    if j > base && upper.get(j - 1) == b {
                        return;
                    }
                    let mut m = base.wrapping_add(count);
                    while m > j {
                        upper.set(m, upper.get(m - 1));
                        m -= 1;
                    }
                    upper.set(j, b);
                    count += 1;
                });
            }
            counts.set(v, count);
        });
    }
}

cavity_device::kernel! {
    /// Writes each of the `n` vertices' edges to higher vertices from
    /// `edge_offsets[v]`: `v` into `lower`, the neighbour into `higher`,
    /// ascending, as [`CountEdgeRows`] left them in `upper`. `rows` is
    /// `[star_offsets, edge_offsets, upper]`.
    ///
    /// # Safety
    /// Checked: the inputs are only read; each vertex writes its own row.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel FillEdgeRows(
        launch,
        rows: Ins<u32, 3>,
        n: u32,
        lower: InOut<u32>,
        higher: InOut<u32>,
    ) {
        let [star_offsets, edge_offsets, upper] = *rows;
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let v = start + k;
            let (first, last) = (edge_offsets.get(v), edge_offsets.get(v + 1));
            let from = 4u32.wrapping_mul(star_offsets.get(v));
            for e in first..last {
                lower.set(e, v);
                higher.set(e, upper.get(from.wrapping_add(e - first)));
            }
        });
    }
}

/// The edge `(a, b)`, `a < b`, in the edge rows (`edge_offsets`, the
/// rows' higher ends `higher`, each row ascending); [`NONE`] when there is
/// none.
#[inline(always)]
fn find_edge(edge_offsets: In<u32>, higher: In<u32>, a: u32, b: u32) -> u32 {
    let (mut lo, mut hi) = (edge_offsets.get(a), edge_offsets.get(a + 1));
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let x = higher.get(mid);
        if x == b {
            return mid;
        }
        if x < b {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    NONE
}

cavity_device::kernel! {
    /// For each slot `s` of the `faces` faces' loops (`face_offsets[f] +
    /// i`: face `f`'s loop edge `i`, from its vertex `i`), its edge row
    /// into `slot_edge[s]` (`!e` where the slot runs from the higher
    /// vertex to the lower), and each edge's first slot into `first[e]`
    /// as the atomic maximum of the slots' complements (`first` starts at
    /// zero). A slot with no edge row (none in a mesh the rows were
    /// built from) counts in `missing[0]`. `faces_in` is `[face_cell,
    /// face_local, face_offsets]`, `mesh` `[offsets, vertices,
    /// edge_offsets, higher]`.
    ///
    /// # Safety
    /// Checked: the inputs are only read; each face writes its own slots,
    /// `first` and `missing` are written atomically.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel FindSlotEdges(
        launch,
        faces_in: Ins<u32, 3>,
        mesh: Ins<u32, 4>,
        faces: u32,
        slot_edge: InOut<u32>,
        first: InOut<u32>,
        missing: InOut<u32>,
    ) {
        let [face_cell, face_local, face_offsets] = *faces_in;
        let [offsets, vertices, edge_offsets, higher] = *mesh;
        let (start, end) = chunk(launch.block_idx, faces);
        launch.block.for_each(end - start, |k| {
            let f = start + k;
            let (cv, shape) = load(offsets, vertices, face_cell.get(f));
            let (l, len) = face_loop(&cv, shape, face_local.get(f));
            let s0 = face_offsets.get(f);
            for i in 0..len {
                let (u, w) = (l[i as usize], l[((i + 1) % len) as usize]);
                let e = find_edge(edge_offsets, higher, u.min(w), u.max(w));
                let s = s0.wrapping_add(i);
                if e == NONE {
                    missing.fetch_add(0, 1);
                    slot_edge.set(s, 0);
                    continue;
                }
                slot_edge.set(s, encode(e, u > w));
                first.fetch_max(e, !s);
            }
        });
    }
}

cavity_device::kernel! {
    /// 1 into `marks[s]` for each of the `slots` slots that is its
    /// edge's first ([`FindSlotEdges`]' `slot_edge` and `first`), else 0.
    ///
    /// # Safety
    /// Checked: the inputs are only read; each slot writes its own word.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel MarkFirstSlots(
        launch,
        slot_edge: In<u32>,
        first: In<u32>,
        slots: u32,
        marks: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, slots);
        launch.block.for_each(end - start, |k| {
            let s = start + k;
            let e = index(slot_edge.get(s));
            marks.set(s, u32::from(!first.get(e) == s));
        });
    }
}

cavity_device::kernel! {
    /// ∂2's entries and ∂1: each of the `slots` slots' edge, numbered by
    /// the scan of [`MarkFirstSlots`]' marks (`numbers`), negative where
    /// the slot runs against the edge's first slot; the first slot writes
    /// its edge's pair into `pairs`, as it runs. `ins` is `[slot_edge,
    /// first, numbers, lower, higher]`.
    ///
    /// # Safety
    /// Checked: the inputs are only read; each slot writes its own entry,
    /// each edge's first slot its pair.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel SignedFaceEdges(
        launch,
        ins: Ins<u32, 5>,
        slots: u32,
        entries: InOut<u32>,
        pairs: InOut<u32>,
    ) {
        let [slot_edge, first, numbers, lower, higher] = *ins;
        let (start, end) = chunk(launch.block_idx, slots);
        launch.block.for_each(end - start, |k| {
            let s = start + k;
            let se = slot_edge.get(s);
            let e = index(se);
            let fs = !first.get(e);
            let id = numbers.get(fs);
            let runs_back = is_negative(se);
            entries.set(s, encode(id, runs_back != is_negative(slot_edge.get(fs))));
            if fs == s {
                let (a, b) = (lower.get(e), higher.get(e));
                let (tail, head) = if runs_back { (b, a) } else { (a, b) };
                pairs.set(2 * id, tail);
                pairs.set(2 * id + 1, head);
            }
        });
    }
}

/// A cell's faces read off the operators, each loop as the cell sees it
/// (outward): ∂3's row `c`, each face's loop the tails of its signed
/// edges in ∂2 (∂1's `pairs`), reversed where the cell uses the face with
/// -1. `ops` is `[d3_offsets, d3_entries, d2_offsets, d2_entries,
/// pairs]`. `None` for a cell of more than six faces or a face of more
/// than four vertices.
#[inline(always)]
fn cell_faces(ops: [In<u32>; 5], c: u32) -> Option<([[u32; 4]; 6], [u32; 6], u32)> {
    let [d3_offsets, d3_entries, d2_offsets, d2_entries, pairs] = ops;
    let (a, b) = (d3_offsets.get(c), d3_offsets.get(c + 1));
    let n = b.wrapping_sub(a);
    if n > 6 {
        return None;
    }
    let mut loops = [[NONE; 4]; 6];
    let mut lens = [0u32; 6];
    for k in 0..n {
        let f = d3_entries.get(a + k);
        let (r0, r1) = (d2_offsets.get(index(f)), d2_offsets.get(index(f) + 1));
        let len = r1.wrapping_sub(r0);
        if len > 4 {
            return None;
        }
        for i in 0..len {
            let e = d2_entries.get(r0 + i);
            let tail = pairs.get((2 * index(e)).wrapping_add(u32::from(is_negative(e))));
            let at = if is_negative(f) { len - 1 - i } else { i };
            loops[k as usize][at as usize] = tail;
        }
        lens[k as usize] = len;
    }
    Some((loops, lens, n))
}

cavity_device::kernel! {
    /// Each of the `cells` cells' vertex count ([`Shape::vertices`] of
    /// the shape its faces make) into `counts[c]`, 0 for a polyhedron of
    /// another shape; `ops` is as [`CellLists`]'.
    ///
    /// # Safety
    /// Checked: the operators are only read; each cell writes its own word.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel CountCellVertices(launch, ops: Ins<u32, 5>, cells: u32, counts: InOut<u32>) {
        let (start, end) = chunk(launch.block_idx, cells);
        launch.block.for_each(end - start, |k| {
            let c = start + k;
            let count = cell_faces(*ops, c)
                .and_then(|(_, lens, n)| Shape::of_face_sizes(lens[..n as usize].iter().copied()))
                .map_or(0, Shape::vertices);
            counts.set(c, count);
        });
    }
}

/// The vertex joined to `v` by an edge of the cell off `base` (the
/// first `m` words): the head of the first loop edge from `v` to a vertex
/// off it, in face order.
#[inline(always)]
fn across(loops: &[[u32; 4]; 6], lens: [u32; 6], n: u32, v: u32, base: [u32; 4], m: usize) -> u32 {
    for k in 0..n as usize {
        let len = lens[k] as usize;
        for i in 0..len {
            let (a, b) = (loops[k][i], loops[k][(i + 1) % len]);
            if a == v && !base[..m].contains(&b) {
                return b;
            }
        }
    }
    0
}

cavity_device::kernel! {
    /// Each of the `cells` cells' vertices in its shape's order into
    /// `vertices` from `offsets[c]` (the scan of [`CountCellVertices`]'
    /// counts; nothing for a polyhedron of another shape): the loop of its
    /// first face of the base's length reversed (that face seen from
    /// inside) and started at its last vertex, then the vertex off it
    /// across each side edge (prisms, hexahedra) or the apex
    /// (tetrahedra, pyramids), as `cavity_volume::VolumeMesh::cells`
    /// forms them. `ops` is `[d3_offsets, d3_entries, d2_offsets,
    /// d2_entries, pairs]`.
    ///
    /// # Safety
    /// Checked: the operators are only read; each cell writes its own row.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel CellLists(
        launch,
        ops: Ins<u32, 5>,
        cells: u32,
        offsets: In<u32>,
        vertices: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, cells);
        launch.block.for_each(end - start, |k| {
            let c = start + k;
            let Some((loops, lens, n)) = cell_faces(*ops, c) else {
                return;
            };
            let Some(shape) = Shape::of_face_sizes(lens[..n as usize].iter().copied()) else {
                return;
            };
            let m = match shape {
                Shape::Tetrahedron | Shape::Prism => 3,
                Shape::Pyramid | Shape::Hexahedron => 4,
            };
            // The base: the first face of `m` vertices, reversed.
            let mut base = [0u32; 4];
            let mut f = 0;
            while f < n as usize && lens[f] as usize != m {
                f += 1;
            }
            for (i, x) in base.iter_mut().take(m).enumerate() {
                *x = loops[f][(2 * m - i) % m];
            }
            let out = offsets.get(c);
            for (i, &x) in base[..m].iter().enumerate() {
                vertices.set(out + i as u32, x);
            }
            match shape {
                Shape::Tetrahedron | Shape::Pyramid => {
                    // The apex: the first vertex off the base.
                    let mut apex = 0;
                    'faces: for k in 0..n as usize {
                        for &x in &loops[k][..lens[k] as usize] {
                            if !base[..m].contains(&x) {
                                apex = x;
                                break 'faces;
                            }
                        }
                    }
                    vertices.set(out + m as u32, apex);
                }
                Shape::Prism | Shape::Hexahedron => {
                    for i in 0..m {
                        let t = across(&loops, lens, n, base[i], base, m);
                        vertices.set(out + (m + i) as u32, t);
                    }
                }
            }
        });
    }
}

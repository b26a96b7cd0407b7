//! A polyhedral mesh as its boundary operators (the paper's section 3):
//! ∂1 as ordered vertex pairs (edge `(a, b)` is `b - a`), ∂2 (faces to
//! oriented edges, each face's edges in the order of its vertex loop) and
//! ∂3 (cells to oriented faces, each face oriented outward from the cell
//! by its sign), with the vertex positions.
//!
//! [`VolumeMesh::from_cells`] builds them from cell-vertex lists. A face
//! or an edge is stored once, oriented as the first cell that has it sees
//! it; a later cell refers to it with the sign that orients it its way.
//! Any number of cells may share a face (non-manifold meshes are kept).

mod numbering;

use std::collections::HashMap;

use rayon::prelude::*;

use crate::VolumeError;
use crate::signed::{encode, index, is_negative};
use crate::ternary::TernaryCsr;
use cavity_volume_kernels::cells::Shape;
pub(crate) use numbering::split_by;
use numbering::{Occurrence, exclusive_scan, number_edges, number_faces};

/// The kinds of cells, each with its vertex order (those of VTK and Gmsh
/// for tetrahedra, hexahedra and pyramids; Gmsh's for prisms).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CellType {
    /// Vertices `0..4`, positively oriented: `3` on the side of `(0, 1, 2)`
    /// its counter-clockwise loop points to.
    Tetrahedron,
    /// Bottom `0, 1, 2, 3` counter-clockwise seen from the top, top
    /// `4, 5, 6, 7` above them.
    Hexahedron,
    /// Bottom triangle `0, 1, 2` counter-clockwise seen from the top, top
    /// `3, 4, 5` above them.
    Prism,
    /// Base `0, 1, 2, 3` counter-clockwise seen from the apex `4`.
    Pyramid,
    /// Any polyhedron, given by its faces' outward loops.
    Polyhedron,
}

impl CellType {
    /// The type of a closed cell whose faces have `sizes` vertices: four
    /// triangles a tetrahedron, six quadrilaterals a hexahedron, two
    /// triangles and three quadrilaterals a prism, four triangles and a
    /// quadrilateral a pyramid, anything else a polyhedron.
    pub fn of_faces(sizes: impl Iterator<Item = usize>) -> CellType {
        let sizes = sizes.map(|n| u32::try_from(n).unwrap_or(u32::MAX));
        Shape::of_face_sizes(sizes).map_or(CellType::Polyhedron, CellType::from)
    }
}

impl From<Shape> for CellType {
    fn from(shape: Shape) -> CellType {
        match shape {
            Shape::Tetrahedron => CellType::Tetrahedron,
            Shape::Pyramid => CellType::Pyramid,
            Shape::Prism => CellType::Prism,
            Shape::Hexahedron => CellType::Hexahedron,
        }
    }
}

/// The cell of `ty` whose outward face loops are `faces`, its vertices in
/// the type's order: the loop of the face that is the type's first face
/// (reversed: that face is the bottom, seen from inside), then the
/// vertices across the cell's side edges from it (hexahedra, prisms) or
/// the one vertex off it (tetrahedra, pyramids).
fn cell_of_faces(ty: CellType, faces: &[&[u32]]) -> CellVertices {
    // The bottom: the first face of `n` vertices, its loop reversed (seen
    // from inside) and started at its last vertex.
    let bottom = |n: usize| {
        let mut b = [0u32; 4];
        if let Some(f) = faces.iter().find(|f| f.len() == n) {
            for (k, x) in b.iter_mut().take(n).enumerate() {
                *x = f[(2 * n - k) % n];
            }
        }
        b
    };
    let apex = |base: &[u32]| {
        faces
            .iter()
            .flat_map(|f| f.iter().copied())
            .find(|v| !base.contains(v))
            .unwrap_or(0)
    };
    // The vertex joined to `v` by an edge of the cell, off `base`.
    let across = |v: u32, base: &[u32]| {
        faces
            .iter()
            .flat_map(|f| (0..f.len()).map(move |i| [f[i], f[(i + 1) % f.len()]]))
            .find(|&[a, b]| a == v && !base.contains(&b))
            .map_or(0, |[_, b]| b)
    };
    match ty {
        CellType::Tetrahedron => {
            let b = bottom(3);
            CellVertices::Tetrahedron([b[0], b[1], b[2], apex(&b[..3])])
        }
        CellType::Pyramid => {
            let b = bottom(4);
            CellVertices::Pyramid([b[0], b[1], b[2], b[3], apex(&b)])
        }
        CellType::Prism => {
            let b = bottom(3);
            let t = [0, 1, 2].map(|k| across(b[k], &b[..3]));
            CellVertices::Prism([b[0], b[1], b[2], t[0], t[1], t[2]])
        }
        CellType::Hexahedron => {
            let b = bottom(4);
            let t = b.map(|v| across(v, &b));
            CellVertices::Hexahedron([b[0], b[1], b[2], b[3], t[0], t[1], t[2], t[3]])
        }
        CellType::Polyhedron => {
            CellVertices::Polyhedron(faces.iter().map(|f| f.to_vec()).collect())
        }
    }
}

/// One cell of a cell-vertex list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CellVertices {
    /// A tetrahedron ([`CellType::Tetrahedron`]).
    Tetrahedron([u32; 4]),
    /// A hexahedron ([`CellType::Hexahedron`]).
    Hexahedron([u32; 8]),
    /// A prism ([`CellType::Prism`]).
    Prism([u32; 6]),
    /// A pyramid ([`CellType::Pyramid`]).
    Pyramid([u32; 5]),
    /// A polyhedron: its faces' vertex loops, each counter-clockwise seen
    /// from outside.
    Polyhedron(Vec<Vec<u32>>),
}

impl CellVertices {
    /// The cell's type.
    pub fn cell_type(&self) -> CellType {
        match self {
            CellVertices::Tetrahedron(_) => CellType::Tetrahedron,
            CellVertices::Hexahedron(_) => CellType::Hexahedron,
            CellVertices::Prism(_) => CellType::Prism,
            CellVertices::Pyramid(_) => CellType::Pyramid,
            CellVertices::Polyhedron(_) => CellType::Polyhedron,
        }
    }

    /// The cell's faces as outward vertex loops (global vertices).
    pub fn faces(&self) -> Vec<Vec<u32>> {
        let mut faces = Vec::with_capacity(self.face_count());
        self.for_each_face(|_, face| faces.push(face.to_vec()));
        faces
    }

    /// The number of the cell's faces.
    pub fn face_count(&self) -> usize {
        match self.listed() {
            Some((_, shape)) => shape.faces() as usize,
            None => match self {
                CellVertices::Polyhedron(faces) => faces.len(),
                _ => 0,
            },
        }
    }

    /// The cell of a fixed type with vertices `v` (4, 5, 6 or 8 of them;
    /// [`CellVertices::listed`] the other way).
    pub(crate) fn of_listed(v: &[u32]) -> CellVertices {
        match *v {
            [a, b, c, d] => CellVertices::Tetrahedron([a, b, c, d]),
            [a, b, c, d, e] => CellVertices::Pyramid([a, b, c, d, e]),
            [a, b, c, d, e, f] => CellVertices::Prism([a, b, c, d, e, f]),
            _ => CellVertices::Hexahedron(std::array::from_fn(|i| v[i])),
        }
    }

    /// The vertices and shape of a cell of a fixed type (its faces'
    /// loops: [`Shape::face`]); `None` for a polyhedron
    /// ([`CellVertices::of_listed`] the other way).
    pub(crate) fn listed(&self) -> Option<(&[u32], Shape)> {
        match self {
            CellVertices::Tetrahedron(v) => Some((v, Shape::Tetrahedron)),
            CellVertices::Hexahedron(v) => Some((v, Shape::Hexahedron)),
            CellVertices::Prism(v) => Some((v, Shape::Prism)),
            CellVertices::Pyramid(v) => Some((v, Shape::Pyramid)),
            CellVertices::Polyhedron(_) => None,
        }
    }

    /// Calls `visit` with each face's number and outward vertex loop
    /// (global vertices), in the order of [`CellVertices::faces`], without
    /// allocating for the fixed types.
    pub fn for_each_face(&self, mut visit: impl FnMut(usize, &[u32])) {
        let Some((vertices, shape)) = self.listed() else {
            if let CellVertices::Polyhedron(faces) = self {
                for (j, face) in faces.iter().enumerate() {
                    visit(j, face);
                }
            }
            return;
        };
        let mut face = [0u32; 4];
        for j in 0..shape.faces() {
            let (local, len) = shape.face(j);
            for (x, &i) in face.iter_mut().zip(&local[..len as usize]) {
                *x = vertices[i as usize];
            }
            visit(j as usize, &face[..len as usize]);
        }
    }

    /// The volume the cell's face loops enclose (the divergence theorem
    /// over fans of its faces, in `f64`): positive for a cell whose faces
    /// face out.
    pub fn signed_volume(&self, positions: &[[f32; 3]]) -> f64 {
        let p = |v: u32| positions[v as usize].map(f64::from);
        let mut volume = 0.0;
        for face in self.faces() {
            for i in 1..face.len().saturating_sub(1) {
                let [a, b, c] = [p(face[0]), p(face[i]), p(face[i + 1])];
                volume += a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
                    + a[2] * (b[0] * c[1] - b[1] * c[0]);
            }
        }
        volume / 6.0
    }

    /// The cell with its faces facing out: mirrored (a tetrahedron's
    /// vertices 1 and 2 swapped, the loops of the other types reversed)
    /// when its [`CellVertices::signed_volume`] is negative, as for cells
    /// listed in the other handedness. Its vertices must lie in
    /// `positions`.
    pub fn oriented(self, positions: &[[f32; 3]]) -> CellVertices {
        if self.signed_volume(positions) >= 0.0 {
            return self;
        }
        match self {
            CellVertices::Tetrahedron([a, b, c, d]) => CellVertices::Tetrahedron([a, c, b, d]),
            CellVertices::Hexahedron(v) => {
                CellVertices::Hexahedron([v[0], v[3], v[2], v[1], v[4], v[7], v[6], v[5]])
            }
            CellVertices::Prism(v) => CellVertices::Prism([v[0], v[2], v[1], v[3], v[5], v[4]]),
            CellVertices::Pyramid(v) => CellVertices::Pyramid([v[0], v[3], v[2], v[1], v[4]]),
            CellVertices::Polyhedron(faces) => CellVertices::Polyhedron(
                faces
                    .into_iter()
                    .map(|mut f| {
                        f.reverse();
                        f
                    })
                    .collect(),
            ),
        }
    }

    /// The cell's distinct vertices, in the order they are listed.
    pub fn vertices(&self) -> Vec<u32> {
        let listed: Vec<u32> = match self {
            CellVertices::Tetrahedron(v) => v.to_vec(),
            CellVertices::Hexahedron(v) => v.to_vec(),
            CellVertices::Prism(v) => v.to_vec(),
            CellVertices::Pyramid(v) => v.to_vec(),
            CellVertices::Polyhedron(faces) => faces.concat(),
        };
        let mut seen = Vec::new();
        for v in listed {
            if !seen.contains(&v) {
                seen.push(v);
            }
        }
        seen
    }
}

/// A polyhedral mesh as its boundary operators.
#[derive(Clone, Debug, PartialEq)]
pub struct VolumeMesh {
    positions: Vec<[f32; 3]>,
    edges: Vec<[u32; 2]>,
    faces: TernaryCsr,
    cells: TernaryCsr,
    cell_types: Vec<CellType>,
}

impl VolumeMesh {
    /// The mesh of `cells` over the vertices at `positions`: every face of
    /// every cell and every edge of every face, each stored once (faces
    /// and edges are the same when they have the same vertices), numbered
    /// in the order the cells first name them. Built in parallel by
    /// sorting the faces' and edges' occurrences by their vertices.
    ///
    /// # Errors
    /// [`VolumeError::VertexOutOfRange`] for a cell naming a vertex past
    /// `positions`; [`VolumeError::DegenerateCell`] for a cell of a type
    /// with a fixed vertex count that names a vertex twice, or a face of
    /// fewer than three vertices or with a repeated vertex;
    /// [`VolumeError::TooLarge`] past `2³¹ - 1` edges or faces.
    pub fn from_cells(
        positions: Vec<[f32; 3]>,
        cells: &[CellVertices],
    ) -> Result<VolumeMesh, VolumeError> {
        check_cells(cells, positions.len())?;
        let counts: Vec<u32> = cells.par_iter().map(|c| c.face_count() as u32).collect();
        let cell_offsets = exclusive_scan(&counts);
        let mut occurrences =
            vec![Occurrence::new(&[], 0); *cell_offsets.last().unwrap_or(&0) as usize];
        split_by(&mut occurrences, &cell_offsets)
            .into_par_iter()
            .zip(cells.par_iter())
            .zip(cell_offsets.par_iter())
            .for_each(|((out, cell), &first)| {
                cell.for_each_face(|j, face| out[j] = Occurrence::new(face, first + j as u32));
            });
        if occurrences.iter().any(|o| o.len == 0) {
            return Self::from_cells_serial(positions, cells);
        }
        let (faces, cell_entries) = number_faces(occurrences);
        let (edges, face_entries) = number_edges(&faces);
        Self::assemble(
            positions,
            cells,
            edges,
            (faces.offsets, face_entries, faces.count),
            (cell_offsets, cell_entries),
        )
    }

    /// The mesh of its parts, the faces' count checked against the ternary
    /// entries' range.
    fn assemble(
        positions: Vec<[f32; 3]>,
        cells: &[CellVertices],
        edges: Vec<[u32; 2]>,
        (face_offsets, face_entries, faces): (Vec<u32>, Vec<u32>, usize),
        (cell_offsets, cell_entries): (Vec<u32>, Vec<u32>),
    ) -> Result<VolumeMesh, VolumeError> {
        for (what, count) in [("edges", edges.len()), ("faces", faces)] {
            if count > i32::MAX as usize {
                return Err(VolumeError::TooLarge { what, count });
            }
        }
        Ok(VolumeMesh {
            faces: TernaryCsr::new(face_offsets, face_entries, edges.len() as u32)?,
            cells: TernaryCsr::new(cell_offsets, cell_entries, faces as u32)?,
            positions,
            edges,
            cell_types: cells.iter().map(CellVertices::cell_type).collect(),
        })
    }

    /// [`VolumeMesh::from_cells`] serially, one cell after another with hash
    /// maps of the faces and edges seen: the reference the parallel build
    /// is tested against (the same mesh, numbered alike), and the build of
    /// meshes with faces of more than four vertices.
    ///
    /// # Errors
    /// As [`VolumeMesh::from_cells`].
    pub fn from_cells_serial(
        positions: Vec<[f32; 3]>,
        cells: &[CellVertices],
    ) -> Result<VolumeMesh, VolumeError> {
        let mut edges: Vec<[u32; 2]> = Vec::new();
        let mut edge_ids: HashMap<[u32; 2], u32> = HashMap::new();
        let mut face_loops: Vec<Vec<u32>> = Vec::new();
        let mut face_ids: HashMap<Vec<u32>, u32> = HashMap::new();
        let (mut face_offsets, mut face_entries) = (vec![0u32], Vec::new());
        let (mut cell_offsets, mut cell_entries) = (vec![0u32], Vec::new());
        for (c, cell) in cells.iter().enumerate() {
            check_cell(c, cell, positions.len())?;
            for face in cell.faces() {
                let mut key = face.clone();
                key.sort_unstable();
                let entry = match face_ids.get(&key) {
                    Some(&f) => encode(f, !same_turn(&face_loops[f as usize], &face)),
                    None => {
                        let f = face_loops.len() as u32;
                        for (i, &a) in face.iter().enumerate() {
                            let b = face[(i + 1) % face.len()];
                            let e = *edge_ids.entry([a.min(b), a.max(b)]).or_insert_with(|| {
                                edges.push([a, b]);
                                edges.len() as u32 - 1
                            });
                            face_entries.push(encode(e, edges[e as usize] != [a, b]));
                        }
                        face_offsets.push(face_entries.len() as u32);
                        face_ids.insert(key, f);
                        face_loops.push(face);
                        encode(f, false)
                    }
                };
                cell_entries.push(entry);
            }
            cell_offsets.push(cell_entries.len() as u32);
        }
        Self::assemble(
            positions,
            cells,
            edges,
            (face_offsets, face_entries, face_loops.len()),
            (cell_offsets, cell_entries),
        )
    }

    /// The mesh of its operators: `positions`, ∂1 as `edges` (ordered
    /// vertex pairs), ∂2 (`faces`: faces to signed edges in loop order) and
    /// ∂3 (`cells`: cells to signed faces, outward). Each cell's type is
    /// read off its faces' sizes ([`CellType::of_faces`]).
    ///
    /// # Errors
    /// [`VolumeError::Matrix`] when an edge names a vertex past
    /// `positions`, ∂2's columns are not the edges or ∂3's not ∂2's rows,
    /// or a face's edges do not form a loop.
    pub fn from_operators(
        positions: Vec<[f32; 3]>,
        edges: Vec<[u32; 2]>,
        faces: TernaryCsr,
        cells: TernaryCsr,
    ) -> Result<VolumeMesh, VolumeError> {
        let bad = |m: String| Err(VolumeError::Matrix(m));
        if let Some(e) = edges
            .par_iter()
            .position_first(|p| p.iter().any(|&v| v as usize >= positions.len()))
        {
            return bad(format!(
                "edge {e} names a vertex past the {} vertices",
                positions.len()
            ));
        }
        if faces.columns() as usize != edges.len() || cells.columns() != faces.rows() {
            return bad(format!(
                "∂2 has {} columns for {} edges, ∂3 {} columns for {} faces",
                faces.columns(),
                edges.len(),
                cells.columns(),
                faces.rows()
            ));
        }
        let mut mesh = VolumeMesh {
            positions,
            edges,
            faces,
            cells,
            cell_types: Vec::new(),
        };
        if let Some(f) = (0..mesh.faces.rows())
            .into_par_iter()
            .find_first(|&f| !mesh.is_loop(f))
        {
            return bad(format!("the edges of face {f} do not form a loop"));
        }
        mesh.cell_types = (0..mesh.cells.rows())
            .into_par_iter()
            .map(|c| {
                let sizes = mesh
                    .cells
                    .row(c)
                    .iter()
                    .map(|&f| mesh.faces.row(index(f)).len());
                CellType::of_faces(sizes)
            })
            .collect();
        Ok(mesh)
    }

    /// Whether face `f`'s signed edges run head to tail around a loop.
    fn is_loop(&self, f: u32) -> bool {
        let ends = |e: u32| {
            let [a, b] = self.edges[index(e) as usize];
            if is_negative(e) { [b, a] } else { [a, b] }
        };
        let row = self.faces.row(f);
        (0..row.len()).all(|i| ends(row[i])[1] == ends(row[(i + 1) % row.len()])[0])
    }

    /// Cell `c`'s faces as outward vertex loops (each face's loop,
    /// reversed where ∂3 uses it with sign -1).
    pub fn cell_faces(&self, c: u32) -> Vec<Vec<u32>> {
        self.cells
            .row(c)
            .iter()
            .map(|&f| {
                let mut face = self.face_vertices(index(f));
                if is_negative(f) {
                    face.reverse();
                }
                face
            })
            .collect()
    }

    /// The cells as cell-vertex lists ([`CellVertices`], each with its
    /// type's vertex order, recovered from its outward faces), e.g. to
    /// write a mesh built from its operators.
    pub fn cells(&self) -> Vec<CellVertices> {
        (0..self.cells.rows())
            .into_par_iter()
            .map(|c| {
                let ty = self.cell_types[c as usize];
                if ty == CellType::Polyhedron {
                    let loops = self.cell_faces(c);
                    let faces: Vec<&[u32]> = loops.iter().map(Vec::as_slice).collect();
                    return cell_of_faces(ty, &faces);
                }
                // At most six faces of at most four vertices: on the stack.
                let mut words = [[0u32; 4]; 6];
                let mut lens = [0usize; 6];
                for (k, &f) in self.cells.row(c).iter().enumerate() {
                    let row = self.faces.row(index(f));
                    for (i, &e) in row.iter().enumerate() {
                        let [a, b] = self.edges[index(e) as usize];
                        let tail = if is_negative(e) { b } else { a };
                        // Reversed where the cell uses the face with -1.
                        let at = if is_negative(f) { row.len() - 1 - i } else { i };
                        words[k][at] = tail;
                    }
                    lens[k] = row.len();
                }
                let n = self.cells.row(c).len();
                let faces: [&[u32]; 6] = std::array::from_fn(|k| &words[k][..lens[k]]);
                cell_of_faces(ty, &faces[..n])
            })
            .collect()
    }

    /// The vertex positions.
    pub fn positions(&self) -> &[[f32; 3]] {
        &self.positions
    }

    /// The mesh with its vertices moved to `positions` (one per vertex).
    ///
    /// # Errors
    /// [`VolumeError::Matrix`] for another number of positions.
    pub fn with_positions(mut self, positions: Vec<[f32; 3]>) -> Result<VolumeMesh, VolumeError> {
        if positions.len() != self.positions.len() {
            return Err(VolumeError::Matrix(format!(
                "{} positions for {} vertices",
                positions.len(),
                self.positions.len()
            )));
        }
        self.positions = positions;
        Ok(self)
    }

    /// ∂1: each edge as its ordered vertex pair `(tail, head)`.
    pub fn edges(&self) -> &[[u32; 2]] {
        &self.edges
    }

    /// ∂1 as a ternary matrix: row `e` is `-tail + head`.
    pub fn d1(&self) -> TernaryCsr {
        let offsets = (0..=self.edges.len() as u32).map(|e| 2 * e).collect();
        let entries = self
            .edges
            .iter()
            .flat_map(|&[a, b]| [encode(a, true), encode(b, false)])
            .collect();
        TernaryCsr::new(offsets, entries, self.positions.len() as u32)
            .expect("edges name existing vertices")
    }

    /// ∂2: faces (rows) to their oriented edges in loop order.
    pub fn d2(&self) -> &TernaryCsr {
        &self.faces
    }

    /// ∂3: cells (rows) to their faces, each signed to face outward.
    pub fn d3(&self) -> &TernaryCsr {
        &self.cells
    }

    /// The type of every cell, in input order.
    pub fn cell_types(&self) -> &[CellType] {
        &self.cell_types
    }

    /// Vertices, edges, faces and cells.
    pub fn counts(&self) -> [usize; 4] {
        [
            self.positions.len(),
            self.edges.len(),
            self.faces.rows() as usize,
            self.cells.rows() as usize,
        ]
    }

    /// Face `f`'s vertex loop, from its signed edges: each edge's tail as
    /// the face runs through it.
    pub fn face_vertices(&self, f: u32) -> Vec<u32> {
        self.faces
            .row(f)
            .iter()
            .map(|&e| {
                let [a, b] = self.edges[index(e) as usize];
                if is_negative(e) { b } else { a }
            })
            .collect()
    }

    /// Bytes of the operators and positions.
    pub fn bytes(&self) -> usize {
        12 * self.positions.len() + 8 * self.edges.len() + self.faces.bytes() + self.cells.bytes()
    }
}

/// Whether loop `b` runs through the vertices of loop `a` (the same set)
/// in the same cyclic order.
pub(super) fn same_turn(a: &[u32], b: &[u32]) -> bool {
    let n = a.len();
    let k = b.iter().position(|&v| v == a[0]).unwrap_or(0);
    n < 2 || b[(k + 1) % n] == a[1]
}

/// Checks cell `c`'s vertices and faces.
/// Checks each of `cells` on its own, in parallel, over `vertices`
/// vertices: what [`VolumeMesh::from_cells`] refuses before it numbers the
/// faces and edges (a format conversion needs no more).
///
/// # Errors
/// The first cell's (by index) [`VolumeError::VertexOutOfRange`] or
/// [`VolumeError::DegenerateCell`], as [`VolumeMesh::from_cells`].
pub fn check_cells(cells: &[CellVertices], vertices: usize) -> Result<(), VolumeError> {
    match cells
        .par_iter()
        .enumerate()
        .find_map_first(|(c, cell)| check_cell(c, cell, vertices).err())
    {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

fn check_cell(c: usize, cell: &CellVertices, vertices: usize) -> Result<(), VolumeError> {
    let degenerate = |what: String| Err(VolumeError::DegenerateCell { cell: c, what });
    let Some((listed, _)) = cell.listed() else {
        return check_polyhedron(c, &cell.faces(), vertices);
    };
    // The fixed types' faces on the stack: the first face with a vertex
    // out of range or repeated, as a polyhedron's.
    let mut found = Ok(());
    cell.for_each_face(|_, face| {
        if found.is_ok() {
            found = check_face(c, face, vertices);
        }
    });
    found?;
    let mut sorted = [0u32; 8];
    let sorted = &mut sorted[..listed.len()];
    sorted.copy_from_slice(listed);
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        return degenerate("a vertex named twice".into());
    }
    Ok(())
}

/// Checks face `face` of cell `c`: its vertices in range, at least three
/// of them, none repeated.
fn check_face(c: usize, face: &[u32], vertices: usize) -> Result<(), VolumeError> {
    if let Some(&v) = face.iter().find(|&&v| v as usize >= vertices) {
        return Err(VolumeError::VertexOutOfRange {
            cell: c,
            vertex: v,
            vertices,
        });
    }
    let repeated = face.iter().enumerate().any(|(i, v)| face[..i].contains(v));
    if face.len() < 3 || repeated {
        return Err(VolumeError::DegenerateCell {
            cell: c,
            what: format!("a face with vertices {face:?}"),
        });
    }
    Ok(())
}

/// Checks polyhedron `c` of faces `faces`: each face as [`check_face`],
/// at least four faces, closed.
fn check_polyhedron(c: usize, faces: &[Vec<u32>], vertices: usize) -> Result<(), VolumeError> {
    for face in faces {
        check_face(c, face, vertices)?;
    }
    let degenerate = |what: String| Err(VolumeError::DegenerateCell { cell: c, what });
    if faces.len() < 4 {
        return degenerate(format!("{} faces", faces.len()));
    }
    match open_edge(faces) {
        Some([a, b]) => degenerate(format!(
            "not closed: its faces run through edge ({a}, {b}) other than once each way"
        )),
        None => Ok(()),
    }
}

/// A directed edge of `faces` (outward loops) that the loops do not run
/// through exactly once, or whose reverse they do not: `None` for a
/// closed, consistently oriented cell.
fn open_edge(faces: &[Vec<u32>]) -> Option<[u32; 2]> {
    let mut runs: HashMap<[u32; 2], u32> = HashMap::new();
    for face in faces {
        for (i, &a) in face.iter().enumerate() {
            *runs.entry([a, face[(i + 1) % face.len()]]).or_default() += 1;
        }
    }
    runs.iter()
        .find(|&(&[a, b], &n)| n != 1 || runs.get(&[b, a]) != Some(&1))
        .map(|(&e, _)| e)
}

//! Legacy VTK `.vtk` files holding an unstructured grid, ASCII or binary,
//! through the `vtkio` crate (for viewers such as ParaView). Read:
//! tetrahedra, hexahedra, voxels (as hexahedra), wedges (as prisms),
//! pyramids and polyhedra (their face streams); vertices, lines and
//! polygons are skipped (surface and feature elements). Written: the
//! same cell types, the positions as `float`. Per-vertex scalar fields
//! ([`PointField`]) are read from `POINT_DATA` (`SCALARS` of one
//! component, and the one-component arrays of a `FIELD`) and written as
//! `SCALARS`.
//!
//! VTK's wedge lists its bottom triangle clockwise seen from the top, a
//! [`crate::CellType::Prism`] counter-clockwise: the two are mirrored on the way
//! in and out.

use std::path::Path;

use vtkio::model::{
    Attribute, Attributes, ByteOrder, CellType as VtkCell, Cells, DataSet, ElementType, IOBuffer,
    Piece, UnstructuredGridPiece, Version, VertexNumbers, Vtk,
};

use super::{CellMesh, PointField, VolumeIoError, unsupported, write_atomically};
use crate::mesh::CellVertices;

/// A wedge's vertices as a prism's and back (the bottom and top triangles
/// turned around).
fn mirror_prism(v: [u32; 6]) -> [u32; 6] {
    [v[0], v[2], v[1], v[3], v[5], v[4]]
}

/// The file's error: what the VTK parser or the grid's data says.
fn malformed(path: &Path, message: String) -> VolumeIoError {
    VolumeIoError::Malformed {
        file: path.display().to_string(),
        message,
    }
}

/// Reads a legacy VTK unstructured grid.
///
/// # Errors
/// [`VolumeIoError::File`] when the file cannot be read;
/// [`VolumeIoError::Malformed`] for a file `vtkio` cannot parse (its
/// message), a vertex index out of range or a non-finite coordinate
/// (naming the cell or point); [`VolumeIoError::Unsupported`] for a data
/// set other than an unstructured grid or a cell type that is neither a
/// linear volume cell nor a surface element.
pub fn read(path: &Path) -> Result<CellMesh, VolumeIoError> {
    read_bytes(path, &super::read_file(path)?)
}

/// [`read`], with the per-vertex scalar fields ([`read_bytes_fields`]).
///
/// # Errors
/// As [`read_bytes_fields`].
pub fn read_fields(path: &Path) -> Result<(CellMesh, Vec<PointField>), VolumeIoError> {
    read_bytes_fields(path, &super::read_file(path)?)
}

/// Reads a legacy VTK unstructured grid from its bytes; `path` names it in
/// errors.
///
/// # Errors
/// As [`read`].
pub fn read_bytes(path: &Path, bytes: &[u8]) -> Result<CellMesh, VolumeIoError> {
    read_bytes_fields(path, bytes).map(|(mesh, _)| mesh)
}

/// [`read_bytes`], with the per-vertex scalar fields of `POINT_DATA`:
/// each `SCALARS` array of one component and each one-component array of
/// a `FIELD`, in file order, their values as `f32` (vectors, normals,
/// tensors, colours and arrays of several components are left out; so is
/// a field missing from a piece, in files of several pieces).
///
/// # Errors
/// As [`read`]; [`VolumeIoError::Malformed`] for a field whose number of
/// values is not the piece's number of points, or whose values are not
/// numbers.
pub fn read_bytes_fields(
    path: &Path,
    bytes: &[u8],
) -> Result<(CellMesh, Vec<PointField>), VolumeIoError> {
    let vtk = Vtk::parse_legacy_be(bytes).map_err(|e| diagnose(path, bytes, &e))?;
    let pieces = match vtk.data {
        DataSet::UnstructuredGrid { pieces, .. } => pieces,
        _ => {
            return Err(unsupported(
                path,
                "not an unstructured grid (DATASET UNSTRUCTURED_GRID)".into(),
            ));
        }
    };
    let mut mesh = CellMesh {
        positions: Vec::new(),
        cells: Vec::new(),
    };
    let mut fields: Option<Vec<PointField>> = None;
    for piece in pieces {
        let Piece::Inline(piece) = piece else {
            return Err(malformed(path, "a piece stored in another file".into()));
        };
        let found = read_piece(path, *piece, &mut mesh)?;
        fields = Some(match fields {
            None => found,
            // A field continues into the next piece only when that piece
            // has it too.
            Some(before) => before
                .into_iter()
                .filter_map(|mut f| {
                    let next = found.iter().find(|g| g.name == f.name)?;
                    f.values.extend_from_slice(&next.values);
                    Some(f)
                })
                .collect(),
        });
    }
    Ok((mesh, fields.unwrap_or_default()))
}

/// The one-component point arrays of `attributes` (see
/// [`read_bytes_fields`]), each checked to hold `points` values.
fn point_fields(
    path: &Path,
    attributes: Vec<Attribute>,
    points: usize,
) -> Result<Vec<PointField>, VolumeIoError> {
    let field = |name: String, data: IOBuffer| -> Result<PointField, VolumeIoError> {
        let values: Vec<f32> = data.cast_into().ok_or_else(|| {
            malformed(
                path,
                format!("POINT_DATA array {name:?}: values that are not numbers"),
            )
        })?;
        if values.len() != points {
            return Err(malformed(
                path,
                format!(
                    "POINT_DATA array {name:?} has {} values for {points} points",
                    values.len()
                ),
            ));
        }
        Ok(PointField { name, values })
    };
    let mut out = Vec::new();
    for a in attributes {
        match a {
            Attribute::DataArray(d) => {
                if matches!(
                    d.elem,
                    ElementType::Scalars { num_comp: 1, .. } | ElementType::Generic(1)
                ) {
                    out.push(field(d.name, d.data)?);
                }
            }
            Attribute::Field { data_array, .. } => {
                for d in data_array {
                    if d.elem == 1 {
                        out.push(field(d.name, d.data)?);
                    }
                }
            }
        }
    }
    Ok(out)
}

/// A legacy VTK file's parts in the order an unstructured grid has them,
/// walked after `vtkio` refused the file (its error names neither the line
/// nor the section) to say where the file departs from the format and
/// what was expected there.
struct Walk<'a> {
    bytes: &'a [u8],
    at: usize,
    binary: bool,
}

/// What the numbers of an ASCII section must be.
#[derive(Clone, Copy)]
enum Integers {
    /// Any numbers (coordinates).
    No,
    /// Unsigned 32-bit integers (vertex counts and indices).
    U32,
    /// Bytes (cell types).
    U8,
}

/// Where a legacy VTK file goes wrong: its 1-based line, the section, and
/// what the section should hold.
type Place = (usize, &'static str, String);

impl<'a> Walk<'a> {
    /// The 1-based line of byte `at`.
    fn line_of(&self, at: usize) -> usize {
        1 + self.bytes[..at.min(self.bytes.len())]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
    }

    /// The next non-blank line's words, and its first byte.
    fn line(&mut self) -> Option<(usize, Vec<&'a str>)> {
        while self.at < self.bytes.len() {
            let start = self.at;
            let rest = &self.bytes[start..];
            let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            self.at += (end + 1).min(rest.len());
            let text = std::str::from_utf8(&rest[..end]).unwrap_or("\u{fffd}");
            let words: Vec<&str> = text.split_whitespace().collect();
            if !words.is_empty() {
                return Some((start, words));
            }
        }
        None
    }

    /// The first word of the next non-blank line, in capitals, without
    /// moving on.
    fn peek(&mut self) -> Option<&'static str> {
        let at = self.at;
        let word = self.line().map(|(_, w)| w[0].to_ascii_uppercase());
        self.at = at;
        ["METADATA", "OFFSETS"]
            .into_iter()
            .find(|k| word.as_deref() == Some(*k))
    }

    /// A section's header line: `keyword` and `numbers` counts after it
    /// (and a type word where `typed`).
    fn header(
        &mut self,
        keyword: &'static str,
        numbers: usize,
        typed: bool,
        expected: &str,
    ) -> Result<(Vec<usize>, Option<&'a str>), Place> {
        let place = self.line_of(self.at);
        let Some((start, w)) = self.line() else {
            return Err((
                place,
                keyword,
                format!("the file ends; expected {expected}"),
            ));
        };
        let here = self.line_of(start);
        let bad = || Err((here, keyword, format!("expected {expected}")));
        if !w[0].eq_ignore_ascii_case(keyword) || w.len() != 1 + numbers + usize::from(typed) {
            return bad();
        }
        let mut counts = Vec::new();
        for x in &w[1..1 + numbers] {
            match x.parse::<u32>() {
                Ok(n) => counts.push(n as usize),
                Err(_) => return bad(),
            }
        }
        Ok((counts, typed.then(|| w[1 + numbers])))
    }

    /// `n` values of `size` bytes in binary files, or `n` numbers in ASCII
    /// ones, of a section that starts on line `line`.
    fn values(
        &mut self,
        n: usize,
        size: usize,
        integers: Integers,
        (line, section): (usize, &'static str),
    ) -> Result<(), Place> {
        if self.binary {
            let need = n.saturating_mul(size);
            if self.bytes.len() - self.at < need {
                return Err((
                    line,
                    section,
                    format!(
                        "the file ends inside it: {n} values of {size} bytes announced, {} bytes left",
                        self.bytes.len() - self.at
                    ),
                ));
            }
            self.at += need;
            return Ok(());
        }
        let mut found = 0;
        while found < n {
            let Some((start, w)) = self.line() else {
                return Err((
                    line,
                    section,
                    format!("the file ends after {found} of its {n} numbers"),
                ));
            };
            for x in w {
                let ok = match integers {
                    Integers::No => x.parse::<f64>().is_ok(),
                    Integers::U32 => x.parse::<u32>().is_ok(),
                    Integers::U8 => x.parse::<u8>().is_ok(),
                };
                if !ok || found == n {
                    let what = match integers {
                        Integers::No => "a number",
                        Integers::U32 => "a vertex count or index (an integer from 0)",
                        Integers::U8 => "a cell type (an integer from 0 to 255)",
                    };
                    let message = if found == n {
                        format!("{n} numbers announced, more found ({x:?})")
                    } else {
                        format!("{x:?} is not {what} (value {} of {n})", found + 1)
                    };
                    return Err((self.line_of(start), section, message));
                }
                found += 1;
            }
        }
        Ok(())
    }

    /// The first place the file departs from an unstructured grid, if
    /// any part before its attributes does.
    fn check(&mut self) -> Result<(), Place> {
        let Some((_, first)) = self.line() else {
            return Err((1, "header", "an empty file".into()));
        };
        if first[..first.len().min(2)] != ["#", "vtk"] {
            return Err((
                1,
                "header",
                "expected `# vtk DataFile Version X.Y` on the first line".into(),
            ));
        }
        // The title is one line, whatever it holds.
        let title_end = self.bytes[self.at..].iter().position(|&b| b == b'\n');
        self.at = title_end.map_or(self.bytes.len(), |k| self.at + k + 1);
        let place = self.line_of(self.at);
        match self.line().map(|(_, w)| w) {
            Some(w) if w.len() == 1 && w[0].eq_ignore_ascii_case("ascii") => {}
            Some(w) if w.len() == 1 && w[0].eq_ignore_ascii_case("binary") => self.binary = true,
            _ => {
                return Err((
                    place,
                    "header",
                    "expected ASCII or BINARY on the third line".into(),
                ));
            }
        }
        let place = self.line_of(self.at);
        match self.line().map(|(_, w)| w) {
            Some(w) if w.len() == 2 && w[0].eq_ignore_ascii_case("dataset") => {
                if !w[1].eq_ignore_ascii_case("unstructured_grid") {
                    return Err((
                        place,
                        "DATASET",
                        format!("{}: only DATASET UNSTRUCTURED_GRID is read", w[1]),
                    ));
                }
            }
            _ => {
                return Err((
                    place,
                    "DATASET",
                    "expected `DATASET UNSTRUCTURED_GRID`".into(),
                ));
            }
        }
        let points = self.line_of(self.at);
        let (n, ty) = self.header("POINTS", 1, true, "`POINTS n float` or `POINTS n double`")?;
        let size = match ty.map(str::to_ascii_lowercase).as_deref() {
            Some("float") => 4,
            Some("double") => 8,
            _ => {
                return Err((points, "POINTS", "expected the type float or double".into()));
            }
        };
        self.values(3 * n[0], size, Integers::No, (points, "POINTS"))?;
        if self.peek() == Some("METADATA") {
            return Ok(());
        }
        let cells = self.line_of(self.at);
        let (n, _) = self.header(
            "CELLS",
            2,
            false,
            "`CELLS n size` (the cells and their numbers)",
        )?;
        if self.peek() == Some("OFFSETS") {
            return Ok(());
        }
        self.values(n[1], 4, Integers::U32, (cells, "CELLS"))?;
        let types = self.line_of(self.at);
        let (n, _) = self.header("CELL_TYPES", 1, false, "`CELL_TYPES n`")?;
        self.values(n[0], 4, Integers::U8, (types, "CELL_TYPES"))
    }
}

/// `vtkio`'s refusal of a file, placed: the line and the section where
/// the file departs from an unstructured grid and what was expected, or,
/// when the grid's parts look right, the parser's words about the
/// attributes after them (or the old `CELLS` layout of version 5.1
/// files, which this walk does not follow).
fn diagnose(path: &Path, bytes: &[u8], e: &vtkio::Error) -> VolumeIoError {
    let mut walk = Walk {
        bytes,
        at: 0,
        binary: false,
    };
    match walk.check() {
        Err((line, section, message)) => cavity::io::MeshIoError::Syntax {
            file: path.display().to_string(),
            line,
            message: format!("{section} section: {message}"),
        }
        .into(),
        Ok(()) => malformed(
            path,
            format!(
                "the attributes after CELL_TYPES (POINT_DATA, CELL_DATA) or the offsets and connectivity of CELLS: vtkio could not parse them ({e})"
            ),
        ),
    }
}

/// Appends one piece's points and volume cells to `mesh`; returns its
/// per-vertex scalar fields ([`point_fields`]).
fn read_piece(
    path: &Path,
    piece: UnstructuredGridPiece,
    mesh: &mut CellMesh,
) -> Result<Vec<PointField>, VolumeIoError> {
    let base = mesh.positions.len() as u32;
    let coordinates: Vec<f64> = piece
        .points
        .cast_into()
        .ok_or_else(|| malformed(path, "points that are not numbers".into()))?;
    for (i, p) in coordinates.chunks(3).enumerate() {
        let p = match p {
            [x, y, z] => [*x as f32, *y as f32, *z as f32],
            _ => [f32::NAN; 3],
        };
        if p.iter().any(|x| !x.is_finite()) {
            return Err(malformed(
                path,
                format!("point {i} is not a finite 3D point"),
            ));
        }
        mesh.positions.push(p);
    }
    let vertices = mesh.positions.len() as u32;
    let numbers = legacy_numbers(piece.cells.cell_verts).map_err(|m| malformed(path, m))?;
    let mut at = 0usize;
    for (c, ty) in piece.cells.types.iter().enumerate() {
        let bad = |what: &str| malformed(path, format!("cell {c}: {what}"));
        let n = *numbers
            .get(at)
            .ok_or_else(|| bad("past the end of CELLS"))? as usize;
        let list = numbers
            .get(at + 1..at + 1 + n)
            .ok_or_else(|| bad("its vertex list runs past the end of CELLS"))?;
        at += 1 + n;
        let checked = |v: &[u32]| -> Result<Vec<u32>, VolumeIoError> {
            v.iter()
                .map(|&x| {
                    if x < vertices - base {
                        Ok(base + x)
                    } else {
                        Err(bad(&format!("vertex {x} of {} points", vertices - base)))
                    }
                })
                .collect()
        };
        let fixed = |count: usize| -> Result<Vec<u32>, VolumeIoError> {
            if n != count {
                return Err(bad(&format!("{n} vertices, expected {count}")));
            }
            checked(list)
        };
        let cell = match ty {
            VtkCell::Tetra => {
                let v = fixed(4)?;
                CellVertices::Tetrahedron([v[0], v[1], v[2], v[3]])
            }
            VtkCell::Hexahedron => CellVertices::Hexahedron(to_array(&fixed(8)?)),
            VtkCell::Voxel => {
                let v = fixed(8)?;
                CellVertices::Hexahedron([v[0], v[1], v[3], v[2], v[4], v[5], v[7], v[6]])
            }
            VtkCell::Wedge => CellVertices::Prism(mirror_prism(to_array(&fixed(6)?))),
            VtkCell::Pyramid => CellVertices::Pyramid(to_array(&fixed(5)?)),
            VtkCell::Polyhedron => {
                // A face stream: the face count, then each face's vertex
                // count and vertices.
                let mut faces = Vec::new();
                let count = *list.first().ok_or_else(|| bad("an empty face stream"))?;
                let mut i = 1;
                for _ in 0..count {
                    let k = *list.get(i).ok_or_else(|| bad("a short face stream"))? as usize;
                    let face = list
                        .get(i + 1..i + 1 + k)
                        .ok_or_else(|| bad("a short face stream"))?;
                    faces.push(checked(face)?);
                    i += 1 + k;
                }
                CellVertices::Polyhedron(faces)
            }
            VtkCell::Vertex
            | VtkCell::PolyVertex
            | VtkCell::Line
            | VtkCell::PolyLine
            | VtkCell::Triangle
            | VtkCell::TriangleStrip
            | VtkCell::Polygon
            | VtkCell::Pixel
            | VtkCell::Quad => continue,
            other => {
                return Err(unsupported(
                    path,
                    format!("cell {c} is a {other:?}; linear volume cells are read"),
                ));
            }
        };
        mesh.cells.push(cell);
    }
    point_fields(path, piece.data.point, (vertices - base) as usize)
}

/// The cells' vertex lists in the legacy layout (each list's length, then
/// its vertices), as `VertexNumbers::into_legacy` gives them but with the
/// offsets of the newer layout checked (increasing, within the
/// connectivity, within `u32`) rather than trusted: `vtkio` would panic on
/// them.
fn legacy_numbers(cells: VertexNumbers) -> Result<Vec<u32>, String> {
    let (offsets, connectivity) = match cells {
        VertexNumbers::Legacy { vertices, .. } => return Ok(vertices),
        VertexNumbers::XML {
            offsets,
            connectivity,
        } => (offsets, connectivity),
    };
    let mut out = Vec::with_capacity(offsets.len() + connectivity.len());
    let mut i = 0usize;
    for (c, &off) in offsets.iter().enumerate() {
        let end = usize::try_from(off)
            .ok()
            .filter(|&e| e >= i && e <= connectivity.len() && u32::try_from(e).is_ok())
            .ok_or_else(|| {
                format!(
                    "OFFSETS entry {c} is {off}: offsets must increase from {i} up to the {} CONNECTIVITY entries",
                    connectivity.len()
                )
            })?;
        out.push((end - i) as u32);
        for (k, &v) in connectivity[i..end].iter().enumerate() {
            out.push(
                u32::try_from(v).map_err(|_| {
                    format!("CONNECTIVITY entry {} is {v}, not a vertex index", i + k)
                })?,
            );
        }
        i = end;
    }
    Ok(out)
}

/// The first `N` of `v` (its length checked before).
fn to_array<const N: usize>(v: &[u32]) -> [u32; N] {
    let mut out = [0; N];
    out.copy_from_slice(&v[..N]);
    out
}

/// Writes a legacy VTK unstructured grid (version 4.2), binary or ASCII.
///
/// # Errors
/// [`VolumeIoError::File`] when the file cannot be written;
/// [`VolumeIoError::Malformed`] if `vtkio` fails to encode the grid.
pub fn write(path: &Path, mesh: &CellMesh, binary: bool) -> Result<(), VolumeIoError> {
    write_field(path, mesh, None, binary)
}

/// [`write`], with `field` (one value per position, checked by the
/// caller: `super::write_volume_field`) as `POINT_DATA` `SCALARS` of
/// type `float`, whitespace in its name written as `_` (a legacy name is
/// one word).
///
/// # Errors
/// As [`write`].
pub fn write_field(
    path: &Path,
    mesh: &CellMesh,
    field: Option<&PointField>,
    binary: bool,
) -> Result<(), VolumeIoError> {
    let points: Vec<f32> = mesh.positions.iter().flatten().copied().collect();
    let mut numbers = Vec::new();
    let mut types = Vec::with_capacity(mesh.cells.len());
    for cell in &mesh.cells {
        let (ty, list): (VtkCell, Vec<u32>) = match cell {
            CellVertices::Tetrahedron(v) => (VtkCell::Tetra, v.to_vec()),
            CellVertices::Hexahedron(v) => (VtkCell::Hexahedron, v.to_vec()),
            CellVertices::Prism(v) => (VtkCell::Wedge, mirror_prism(*v).to_vec()),
            CellVertices::Pyramid(v) => (VtkCell::Pyramid, v.to_vec()),
            CellVertices::Polyhedron(faces) => {
                let mut stream = vec![faces.len() as u32];
                for f in faces {
                    stream.push(f.len() as u32);
                    stream.extend_from_slice(f);
                }
                (VtkCell::Polyhedron, stream)
            }
        };
        numbers.push(list.len() as u32);
        numbers.extend(list);
        types.push(ty);
    }
    let vtk = Vtk {
        version: Version::new_legacy(4, 2),
        title: "cavity volumetric mesh".into(),
        byte_order: ByteOrder::BigEndian,
        file_path: None,
        data: DataSet::inline(UnstructuredGridPiece {
            points: points.into(),
            cells: Cells {
                cell_verts: VertexNumbers::Legacy {
                    num_cells: mesh.cells.len() as u32,
                    vertices: numbers,
                },
                types,
            },
            data: Attributes {
                point: field
                    .map(|f| {
                        let name: String = f
                            .name
                            .chars()
                            .map(|c| if c.is_whitespace() { '_' } else { c })
                            .collect();
                        let name = if name.is_empty() {
                            "field".into()
                        } else {
                            name
                        };
                        Attribute::scalars(name, 1).with_data(f.values.clone())
                    })
                    .into_iter()
                    .collect(),
                cell: Vec::new(),
            },
        }),
    };
    let encoding =
        |e: vtkio::Error| malformed(path, format!("vtkio could not encode the grid: {e}"));
    if binary {
        let mut bytes = Vec::new();
        vtk.write_legacy(&mut bytes).map_err(encoding)?;
        write_atomically(path, &bytes)
    } else {
        let mut text = String::new();
        vtk.write_legacy_ascii(&mut text).map_err(encoding)?;
        write_atomically(path, text.as_bytes())
    }
}

//! Legacy VTK `.vtk` files holding an unstructured grid, ASCII or binary
//! (for viewers such as ParaView), read through the `vtkio` crate except
//! files laid out as the writer and VTK write them, ASCII or binary,
//! which are parsed here in parallel ([`read_bytes_fields`]); written here in
//! `vtkio`'s layout, the arrays formatted or filled in parallel. Read:
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

use cavity::io::{parse_f32, parse_f64, parse_u32};
use rayon::prelude::*;
use vtkio::model::{
    Attribute, CellType as VtkCell, DataSet, ElementType, IOBuffer, Piece, UnstructuredGridPiece,
    VertexNumbers, Vtk,
};

use super::stream::{Out, Record, push_f32, push_int, write_elements, write_streamed};
use super::{CellMesh, PointField, VolumeIoError, listed, records_from, unsupported};
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
    match read_parallel(bytes) {
        Some(read) => Ok(read),
        None => read_vtkio(path, bytes),
    }
}

/// [`read_bytes_fields`] through `vtkio`, for every file
/// [`read_parallel`] does not read.
fn read_vtkio(path: &Path, bytes: &[u8]) -> Result<(CellMesh, Vec<PointField>), VolumeIoError> {
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

/// A cursor over a legacy file for [`read_parallel`]: every step `None`
/// where the bytes are not what it expects. The arrays of a binary file
/// are big-endian values; those of an ASCII file words, separated by
/// blanks, tabs and line breaks (`vtkio`'s `multispace`).
struct Legacy<'a> {
    bytes: &'a [u8],
    at: usize,
    binary: bool,
}

/// An ASCII real as `vtkio` recognizes it (a sign, digits with a point,
/// an exponent) and reads it (`str::parse` of the type): `f32` for
/// `size` 4, else as a double made `f32`.
fn ascii_real(w: &[u8], size: usize) -> Option<f32> {
    let digits = |w: &[u8]| w.iter().take_while(|b| b.is_ascii_digit()).count();
    let body = w
        .strip_prefix(b"+")
        .or_else(|| w.strip_prefix(b"-"))
        .unwrap_or(w);
    let whole = digits(body);
    let mut rest = &body[whole..];
    let mut any = whole > 0;
    if let Some(r) = rest.strip_prefix(b".") {
        any |= digits(r) > 0;
        rest = &r[digits(r)..];
    }
    if let Some(r) = rest.strip_prefix(b"e").or_else(|| rest.strip_prefix(b"E")) {
        let r = r
            .strip_prefix(b"+")
            .or_else(|| r.strip_prefix(b"-"))
            .unwrap_or(r);
        (digits(r) > 0).then_some(())?;
        rest = &r[digits(r)..];
    }
    (any && rest.is_empty()).then_some(())?;
    match size {
        4 => parse_f32(w),
        _ => parse_f64(w).map(|x| x as f32),
    }
}

/// An ASCII count or index: digits alone (`nom`'s `u32`).
fn ascii_u32(w: &[u8]) -> Option<u32> {
    w.iter().all(u8::is_ascii_digit).then_some(())?;
    parse_u32(w)
}

impl<'a> Legacy<'a> {
    /// Skips blanks, tabs and line breaks (`vtkio`'s `multispace0`).
    fn blanks(&mut self) {
        while matches!(self.bytes.get(self.at), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.at += 1;
        }
    }

    /// The exact bytes `text`.
    fn tag(&mut self, text: &[u8]) -> Option<()> {
        self.bytes
            .get(self.at..)?
            .starts_with(text)
            .then(|| self.at += text.len())
    }

    /// Whether the rest starts with `word`, in any case.
    fn looking_at(&self, word: &[u8]) -> bool {
        self.bytes
            .get(self.at..self.at + word.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(word))
    }

    /// A decimal `u32` (digits only, as `vtkio` reads counts).
    fn count(&mut self) -> Option<usize> {
        let digits = self.bytes[self.at..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let text = std::str::from_utf8(&self.bytes[self.at..self.at + digits]).ok()?;
        let n: u32 = text.parse().ok()?;
        self.at += digits;
        Some(n as usize)
    }

    /// A word up to a blank or a line break (a name), at least a byte,
    /// as UTF-8.
    fn word(&mut self) -> Option<&'a str> {
        let rest = &self.bytes[self.at..];
        let len = rest
            .iter()
            .take_while(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
            .count();
        let word = std::str::from_utf8(&rest[..len])
            .ok()
            .filter(|w| !w.is_empty())?;
        self.at += len;
        Some(word)
    }

    /// `float` or `double`, then the size of a value in bytes.
    fn real(&mut self) -> Option<usize> {
        if self.tag(b"float").is_some() {
            Some(4)
        } else {
            self.tag(b"double").map(|()| 8)
        }
    }

    /// The next `n` values of `size` bytes (binary).
    fn values(&mut self, n: usize, size: usize) -> Option<&'a [u8]> {
        let len = n.checked_mul(size)?;
        let out = self.bytes.get(self.at..self.at.checked_add(len)?)?;
        self.at += len;
        Some(out)
    }

    /// The next `n` points of reals of `size` bytes (4 or 8), as `f32`.
    fn points(&mut self, n: usize, size: usize) -> Option<Vec<[f32; 3]>> {
        if !self.binary {
            return records_from(self.bytes, &mut self.at, n, 3, [0.0; 3], |w| {
                Some([
                    ascii_real(w[0], size)?,
                    ascii_real(w[1], size)?,
                    ascii_real(w[2], size)?,
                ])
            });
        }
        Some(
            self.values(n.checked_mul(3)?, size)?
                .par_chunks_exact(3 * size)
                .map(|p| {
                    let x = |k: usize| real(&p[k * size..(k + 1) * size]);
                    [x(0), x(1), x(2)]
                })
                .collect(),
        )
    }

    /// The next `n` reals of `size` bytes, as `f32`.
    fn reals(&mut self, n: usize, size: usize) -> Option<Vec<f32>> {
        match self.binary {
            true => Some(reals(self.values(n, size)?, size)),
            false => records_from(self.bytes, &mut self.at, n, 1, 0.0, |w| {
                ascii_real(w[0], size)
            }),
        }
    }

    /// The next `n` 4-byte integers as `u32` (ASCII: digits alone).
    fn u32s(&mut self, n: usize) -> Option<Vec<u32>> {
        match self.binary {
            true => Some(
                self.values(n, 4)?
                    .par_chunks_exact(4)
                    .map(|x| u32::from_be_bytes(x.try_into().expect("4 bytes")))
                    .collect(),
            ),
            false => records_from(self.bytes, &mut self.at, n, 1, 0, |w| ascii_u32(w[0])),
        }
    }

    /// The next `n` cell types (binary: 4-byte integers taken as their
    /// low byte, as `vtkio` does; ASCII: digits alone, a byte).
    fn types(&mut self, n: usize) -> Option<Vec<u8>> {
        match self.binary {
            true => Some(
                self.values(n, 4)?
                    .par_chunks_exact(4)
                    .map(|x| i32::from_be_bytes(x.try_into().expect("4 bytes")) as u8)
                    .collect(),
            ),
            false => records_from(self.bytes, &mut self.at, n, 1, 0, |w| {
                u8::try_from(ascii_u32(w[0])?).ok()
            }),
        }
    }
}

/// A big-endian real of 4 or 8 bytes as `f32`.
fn real(b: &[u8]) -> f32 {
    match b.len() {
        4 => f32::from_be_bytes(b.try_into().expect("4 bytes")),
        _ => f64::from_be_bytes(b.try_into().expect("8 bytes")) as f32,
    }
}

/// Big-endian reals of `size` bytes (4 or 8) as `f32`, in parallel.
fn reals(data: &[u8], size: usize) -> Vec<f32> {
    data.par_chunks_exact(size).map(real).collect()
}

/// A legacy file read with its arrays parsed in parallel (binary, or
/// ASCII without vertical tabs and form feeds), `None` unless it is laid
/// out as [`write_field`] and VTK write them: the
/// header, `DATASET UNSTRUCTURED_GRID`, `POINTS n float|double`, `CELLS`
/// in the legacy layout, `CELL_TYPES` of the types [`read_piece`] takes,
/// then optionally `POINT_DATA` of as many points holding `SCALARS` of
/// `float` or `double` (each with its `LOOKUP_TABLE` line) and an empty
/// `CELL_DATA`, every index in range and every coordinate finite. On
/// `None` (anything else, and every error) `vtkio` reads the file, which
/// gives the same mesh and fields for every file this accepts, and the
/// errors name what is wrong.
fn read_parallel(bytes: &[u8]) -> Option<(CellMesh, Vec<PointField>)> {
    let mut b = Legacy {
        bytes,
        at: 0,
        binary: true,
    };
    b.tag(b"# vtk DataFile Version ")?;
    b.count()?;
    b.tag(b".")?;
    b.count()?;
    b.tag(b"\n")?;
    // The title: a line of at least a byte, UTF-8, without `\r`.
    let title = bytes[b.at..].iter().position(|&c| c == b'\n')?;
    let text = std::str::from_utf8(&bytes[b.at..b.at + title]).ok()?;
    if text.is_empty() || text.contains('\r') {
        return None;
    }
    b.at += title + 1;
    if b.tag(b"ASCII\n").is_some() {
        // Words parted here by what `vtkio` does not part them by.
        b.binary = false;
        if bytes.par_iter().any(|&c| c == 0x0B || c == 0x0C) {
            return None;
        }
    } else {
        b.tag(b"BINARY\n")?;
    }
    b.blanks();
    b.tag(b"DATASET UNSTRUCTURED_GRID\n")?;
    b.blanks();
    b.tag(b"POINTS ")?;
    let n = b.count()?;
    b.tag(b" ")?;
    let size = b.real()?;
    b.tag(b"\n")?;
    let positions = b.points(n, size)?;
    if positions
        .par_iter()
        .any(|p| p.iter().any(|x| !x.is_finite()))
    {
        return None;
    }
    b.blanks();
    if b.looking_at(b"METADATA") {
        return None;
    }
    b.tag(b"CELLS ")?;
    let _cells = b.count()?;
    b.tag(b" ")?;
    let size = b.count()?;
    b.tag(b"\n")?;
    let mut data = Legacy { at: b.at, ..b };
    data.blanks();
    if data.looking_at(b"OFFSETS") {
        return None;
    }
    let numbers = b.u32s(size)?;
    b.blanks();
    b.tag(b"CELL_TYPES ")?;
    let m = b.count()?;
    b.tag(b"\n")?;
    let types = b.types(m)?;
    let cells = cells_of(&numbers, &types, n)?;
    let mut fields = Vec::new();
    b.blanks();
    if b.tag(b"POINT_DATA ").is_some() {
        if b.count()? != n {
            return None;
        }
        loop {
            b.blanks();
            if b.tag(b"SCALARS ").is_none() {
                break;
            }
            let name = b.word()?;
            b.tag(b" ")?;
            let size = b.real()?;
            let components = match b.tag(b" ") {
                Some(()) => b.count()?,
                None => 1,
            };
            b.tag(b"\n")?;
            b.tag(b"LOOKUP_TABLE ")?;
            b.word()?;
            b.tag(b"\n")?;
            let values = b.reals(components.checked_mul(n)?, size)?;
            if components == 1 {
                fields.push(PointField {
                    name: name.to_string(),
                    values,
                });
            }
            let mut after = Legacy { at: b.at, ..b };
            after.blanks();
            if after.looking_at(b"METADATA") {
                return None;
            }
        }
    }
    b.blanks();
    if b.tag(b"CELL_DATA ").is_some() {
        b.count()?;
        b.blanks();
    }
    (b.at == bytes.len()).then_some((CellMesh { positions, cells }, fields))
}

/// The volume cells of `CELLS` (`numbers`: per cell its list's length
/// and the list) and `CELL_TYPES` over `vertices` points, as
/// [`read_piece`] makes them (surface cells skipped), or `None` where it
/// would refuse them: the lists found one after another, the cells made
/// in parallel.
fn cells_of(numbers: &[u32], types: &[u8], vertices: usize) -> Option<Vec<CellVertices>> {
    let mut starts = Vec::with_capacity(types.len());
    let mut at = 0usize;
    for _ in types {
        starts.push(at);
        at = at.checked_add(1 + *numbers.get(at)? as usize)?;
    }
    if at > numbers.len() {
        return None;
    }
    let cell = |start: usize, ty: u8| -> Option<Option<CellVertices>> {
        let list = &numbers[start + 1..start + 1 + numbers[start] as usize];
        let fixed = |count: usize| -> Option<&[u32]> {
            (list.len() == count && list.iter().all(|&v| (v as usize) < vertices)).then_some(list)
        };
        Some(Some(match ty {
            1..=9 => return Some(None),
            10 => CellVertices::Tetrahedron(to_array(fixed(4)?)),
            11 => {
                let v = fixed(8)?;
                CellVertices::Hexahedron([v[0], v[1], v[3], v[2], v[4], v[5], v[7], v[6]])
            }
            12 => CellVertices::Hexahedron(to_array(fixed(8)?)),
            13 => CellVertices::Prism(mirror_prism(to_array(fixed(6)?))),
            14 => CellVertices::Pyramid(to_array(fixed(5)?)),
            42 => {
                let count = *list.first()?;
                let mut faces = Vec::new();
                let mut i = 1;
                for _ in 0..count {
                    let k = *list.get(i)? as usize;
                    let face = list.get(i + 1..i + 1 + k)?;
                    if face.iter().any(|&v| v as usize >= vertices) {
                        return None;
                    }
                    faces.push(face.to_vec());
                    i += 1 + k;
                }
                CellVertices::Polyhedron(faces)
            }
            _ => return None,
        }))
    };
    let placeholder = CellVertices::Tetrahedron([0; 4]);
    if types.par_iter().all(|&t| t > 9) {
        // Volume cells only (the common case): filled in place.
        return super::stream::try_map(types.len(), placeholder, |c| cell(starts[c], types[c])?);
    }
    let cells: Vec<Option<CellVertices>> =
        super::stream::try_map(types.len(), None, |c| cell(starts[c], types[c]))?;
    Some(cells.into_par_iter().flatten().collect())
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
/// [`VolumeIoError::File`] when the file cannot be written.
pub fn write(path: &Path, mesh: &CellMesh, binary: bool) -> Result<(), VolumeIoError> {
    write_field(path, mesh, None, binary)
}

/// [`write()`], with `field` (one value per position, checked by the
/// caller: `super::write_volume_field`) as `POINT_DATA` `SCALARS` of
/// type `float`, whitespace in its name written as `_` (a legacy name is
/// one word).
///
/// The layout is `vtkio`'s (which wrote these files before, and reads
/// them): the positions as `float`, `CELLS` in the legacy layout (each
/// cell's vertex count, then its vertices; a polyhedron's face stream),
/// `CELL_TYPES`, then `POINT_DATA` and an empty `CELL_DATA`; binary files
/// big-endian, ASCII files with each array on one line (the cell types
/// one per line). Each array is formatted or filled in parallel pieces
/// and streamed in order into the temporary file.
///
/// # Errors
/// As [`write()`].
pub fn write_field(
    path: &Path,
    mesh: &CellMesh,
    field: Option<&PointField>,
    binary: bool,
) -> Result<(), VolumeIoError> {
    write_streamed(path, |out| encode(out, mesh, field, binary))
}

/// Streams the file [`write_field`] writes into `out`.
pub(super) fn encode(
    out: &mut Out<'_>,
    mesh: &CellMesh,
    field: Option<&PointField>,
    binary: bool,
) -> std::io::Result<()> {
    let (positions, cells) = (&mesh.positions, &mesh.cells);
    let (n, m) = (positions.len(), cells.len());
    // The numbers of CELLS: per cell its list's length and the list.
    let numbers: usize = cells.par_iter().map(|c| 1 + list_len(c)).sum();
    let name = field.map(|f| {
        let name: String = f
            .name
            .chars()
            .map(|c| if c.is_whitespace() { '_' } else { c })
            .collect();
        if name.is_empty() {
            "field".into()
        } else {
            name
        }
    });

    write!(
        out,
        "# vtk DataFile Version 4.2\ncavity volumetric mesh\n{}\n\nDATASET UNSTRUCTURED_GRID\nPOINTS {n} float\n",
        if binary { "BINARY" } else { "ASCII" }
    )?;
    // An array: in binary its big-endian values, in ASCII the values
    // separated by spaces; a line break after it.
    write_elements(out, n, |r, buf| {
        if binary {
            buf.reserve(12 * r.len());
            for p in &positions[r] {
                let mut record = Record::<12>::new();
                p.iter().for_each(|x| record.put(x.to_be_bytes()));
                record.append_to(buf);
            }
            return;
        }
        for i in r {
            for (k, x) in positions[i].into_iter().enumerate() {
                if i + k > 0 {
                    buf.push(b' ');
                }
                push_f32(buf, x);
            }
        }
    })?;
    write!(out, "\n\nCELLS {} {numbers}\n", m as u32)?;
    write_elements(out, m, |r, buf| {
        for i in r {
            let cell = &cells[i];
            match (binary, fixed_list(cell)) {
                (true, Some((v, len))) => {
                    let mut record = Record::<36>::new();
                    record.put((len as u32).to_be_bytes());
                    v[..len].iter().for_each(|x| record.put(x.to_be_bytes()));
                    record.append_to(buf);
                }
                (true, None) => for_each_number(cell, |x| buf.extend_from_slice(&x.to_be_bytes())),
                (false, _) => {
                    let mut first = i == 0;
                    for_each_number(cell, |x| {
                        if !first {
                            buf.push(b' ');
                        }
                        first = false;
                        push_int(buf, x);
                    });
                }
            }
        }
    })?;
    write!(out, "\n\nCELL_TYPES {m}\n")?;
    write_elements(out, m, |r, buf| {
        for i in r {
            let ty = cell_type(&cells[i]) as u8;
            if binary {
                buf.extend_from_slice(&i32::from(ty).to_be_bytes());
            } else {
                push_int(buf, ty);
                buf.push(b'\n');
            }
        }
    })?;
    write!(out, "\n\nPOINT_DATA {n}\n")?;
    if let (Some(f), Some(name)) = (field, &name) {
        write!(out, "\nSCALARS {name} float 1\nLOOKUP_TABLE default\n")?;
        let values = &f.values;
        write_elements(out, values.len(), |r, buf| {
            for i in r {
                if binary {
                    buf.extend_from_slice(&values[i].to_be_bytes());
                } else {
                    if i > 0 {
                        buf.push(b' ');
                    }
                    push_f32(buf, values[i]);
                }
            }
        })?;
        out.write_all(b"\n")?;
    }
    write!(out, "\nCELL_DATA {m}\n\n")
}

/// The VTK cell type of a cell.
fn cell_type(cell: &CellVertices) -> VtkCell {
    match cell {
        CellVertices::Tetrahedron(_) => VtkCell::Tetra,
        CellVertices::Hexahedron(_) => VtkCell::Hexahedron,
        CellVertices::Prism(_) => VtkCell::Wedge,
        CellVertices::Pyramid(_) => VtkCell::Pyramid,
        CellVertices::Polyhedron(_) => VtkCell::Polyhedron,
    }
}

/// The length of a cell's list in `CELLS`: its vertices, or a
/// polyhedron's face stream (the face count, then per face its vertex
/// count and vertices).
fn list_len(cell: &CellVertices) -> usize {
    match cell {
        CellVertices::Polyhedron(faces) => 1 + faces.iter().map(|f| 1 + f.len()).sum::<usize>(),
        fixed => listed(fixed).map_or(0, <[u32]>::len),
    }
}

/// The vertices of a cell of a fixed type in VTK's order (a wedge's
/// mirrored) and their number; `None` for a polyhedron.
fn fixed_list(cell: &CellVertices) -> Option<([u32; 8], usize)> {
    let mut v = [0u32; 8];
    let list: &[u32] = match cell {
        CellVertices::Prism(p) => &mirror_prism(*p),
        CellVertices::Polyhedron(_) => return None,
        fixed => listed(fixed)?,
    };
    v[..list.len()].copy_from_slice(list);
    Some((v, list.len()))
}

/// Calls `f` with each number of a cell's entry in `CELLS`: the list's
/// length ([`list_len`]), then the list (a wedge's mirrored).
fn for_each_number(cell: &CellVertices, mut f: impl FnMut(u32)) {
    f(list_len(cell) as u32);
    match cell {
        CellVertices::Prism(v) => mirror_prism(*v).into_iter().for_each(f),
        CellVertices::Polyhedron(faces) => {
            f(faces.len() as u32);
            for face in faces {
                f(face.len() as u32);
                face.iter().copied().for_each(&mut f);
            }
        }
        fixed => listed(fixed).into_iter().flatten().copied().for_each(f),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a reader made of a file: the mesh and fields (as their debug
    /// text, in which NaN equals NaN), or the error's words.
    fn outcome(read: Result<(CellMesh, Vec<PointField>), VolumeIoError>) -> Result<String, String> {
        read.map(|r| format!("{r:?}")).map_err(|e| e.to_string())
    }

    /// The fixtures of the writers, and a large mixed mesh with a
    /// polyhedron and a field, ASCII and binary.
    fn files() -> Vec<(String, Vec<u8>)> {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/written");
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&data)
            .expect("fixtures")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "vtk"))
            .map(|p| (p.display().to_string(), std::fs::read(&p).expect("fixture")))
            .collect();
        files.sort();
        let positions: Vec<[f32; 3]> = (0..5000)
            .map(|i| [i as f32, (i % 13) as f32 * 0.5, -(i as f32) / 7.0])
            .collect();
        let mut cells = super::super::stream::mixed_cells(5000, 20_000);
        cells.push(CellVertices::Polyhedron(vec![
            vec![1, 2, 3],
            vec![4, 5, 6, 7],
        ]));
        let mesh = CellMesh { positions, cells };
        let field = PointField {
            name: "f".into(),
            values: (0..5000).map(|i| i as f32 * 0.125).collect(),
        };
        let dir = tempfile::tempdir().expect("tempdir");
        for (name, binary) in [("big.vtk", true), ("big-ascii.vtk", false)] {
            let path = dir.path().join(name);
            write_field(&path, &mesh, Some(&field), binary).expect("written");
            files.push((name.into(), std::fs::read(&path).expect("written")));
        }
        files
    }

    #[test]
    fn files_of_the_writer_are_read_in_parallel_as_vtkio_reads_them() {
        let path = Path::new("x.vtk");
        for (name, bytes) in files() {
            // `vtkio` reads no infinite value in an ASCII file (the
            // fixtures' fields hold some): neither reads those.
            let ascii = !name.ends_with("binary.vtk") && name != "big.vtk";
            if ascii && bytes.windows(3).any(|w| w == b"inf") {
                assert!(read_parallel(&bytes).is_none(), "{name}");
                assert!(read_vtkio(path, &bytes).is_err(), "{name}");
                continue;
            }
            let slow = read_vtkio(path, &bytes).expect("read by vtkio");
            let fast = read_parallel(&bytes).unwrap_or_else(|| panic!("{name}: read in parallel"));
            assert!(fast == slow, "{name}");
        }
    }

    #[test]
    fn broken_files_read_as_vtkio_reads_them() {
        let path = Path::new("x.vtk");
        let mut next = crate::io::stream::xorshift(0x9e37_79b9_7f4a_7c15);
        for (name, bytes) in files() {
            // The large file's changes land mostly in its arrays: fewer.
            let changes = if name.starts_with("big") { 100 } else { 400 };
            for k in 0..changes {
                let mut broken = bytes.clone();
                let at = (next() % bytes.len() as u64) as usize;
                match k % 3 {
                    0 => broken.truncate(at),
                    1 => broken[at] = next() as u8,
                    _ => broken[at] ^= 1 << (next() % 8),
                }
                let new = outcome(read_bytes_fields(path, &broken));
                let old = outcome(read_vtkio(path, &broken));
                assert!(
                    new == old,
                    "{name}, change {k} at byte {at}: {:?} against {:?}",
                    new.as_ref().err(),
                    old.as_ref().err()
                );
            }
        }
    }
}

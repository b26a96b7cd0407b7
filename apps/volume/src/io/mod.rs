//! Reading and writing volumetric meshes, one module per format:
//!
//! - [`medit`]: MEDIT `.mesh` (ASCII; vertices, tetrahedra, prisms,
//!   pyramids, hexahedra; the surface sections skipped);
//! - [`tetgen`]: TetGen `.node` / `.ele` (tetrahedra; either file names
//!   the pair);
//! - [`vtk`]: legacy VTK `.vtk` unstructured grids (ASCII or binary;
//!   tetrahedra, hexahedra, wedges, pyramids and polyhedra), for viewers
//!   such as ParaView (read through the `vtkio` crate, common files in
//!   parallel here);
//! - [`gmsh`]: Gmsh `.msh`, versions 2.2 and 4.1, ASCII or binary (4.1
//!   read through the `mshio` crate, common files in parallel here);
//!   the volume elements are read, the lower-dimensional ones skipped.
//!
//! VTK and Gmsh files also carry per-vertex scalar fields
//! ([`PointField`]: VTK's `POINT_DATA` `SCALARS` and one-component
//! `FIELD` arrays, Gmsh's one-component `$NodeData`), read by
//! [`read_volume_fields`] and written by [`write_volume_field`]; MEDIT and
//! TetGen files hold none here.
//!
//! Errors name the file, and the line or the element. Writes go to a
//! temporary file beside the destination and are renamed over it once
//! complete; the body of every format is formatted (or, binary, filled)
//! in parallel pieces and streamed in order into that file, the next
//! pieces formatted while the last are written, without a copy of the
//! whole file in memory. Binary bodies of fixed-size records are parsed
//! in parallel, and so are the counted sections of ASCII files laid out
//! as the writers write them ([`cavity::io::parse_records`],
//! [`cavity::io::parse_lines`]; the serial readers take every other file,
//! for their errors); large files are read in parallel pieces.

pub mod gmsh;
pub mod medit;
#[cfg(test)]
mod reference;
mod stream;
pub mod tetgen;
pub mod vtk;

use std::path::Path;

use cavity::io::MeshIoError;
use rayon::prelude::*;

use crate::mesh::CellVertices;

/// Errors of reading and writing volumetric meshes; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum VolumeIoError {
    /// The extension is not a volumetric format: use `.mesh`, `.node`,
    /// `.ele`, `.vtk` or `.msh`.
    #[error("{0}: unknown volumetric mesh format (expected .mesh, .node, .ele, .vtk or .msh)")]
    UnknownFormat(String),
    /// The file could not be read or written, or a line is malformed
    /// (`MeshIoError::Io`, `MeshIoError::Syntax`: the file, and the line).
    #[error(transparent)]
    File(#[from] MeshIoError),
    /// The file is not what its format says: the message names the node,
    /// element or cell and what is wrong, or gives the parser's words
    /// (`vtkio`, `mshio`) where it cannot tell the line.
    #[error("{file}: {message}")]
    Malformed {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// Something the format cannot hold (a polyhedron in MEDIT or Gmsh,
    /// another cell than a tetrahedron in TetGen), or a file holding
    /// something this reader does not (another cell type, a data set other
    /// than an unstructured grid, higher-order elements): the message says
    /// what; choose another format.
    #[error("{file}: {message}")]
    Unsupported {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
}

/// The volumetric formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VolumeFormat {
    /// MEDIT `.mesh`, ASCII.
    Medit,
    /// TetGen `.node` and `.ele` (the path names either; the other has the
    /// same stem).
    TetGen,
    /// Legacy VTK `.vtk`, an unstructured grid.
    Vtk,
    /// Gmsh `.msh`.
    Gmsh,
}

impl VolumeFormat {
    /// The format of `path` by its extension.
    ///
    /// # Errors
    /// [`VolumeIoError::UnknownFormat`].
    pub fn of(path: &Path) -> Result<VolumeFormat, VolumeIoError> {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("mesh") => Ok(VolumeFormat::Medit),
            Some(e) if e.eq_ignore_ascii_case("node") || e.eq_ignore_ascii_case("ele") => {
                Ok(VolumeFormat::TetGen)
            }
            Some(e) if e.eq_ignore_ascii_case("vtk") => Ok(VolumeFormat::Vtk),
            Some(e) if e.eq_ignore_ascii_case("msh") => Ok(VolumeFormat::Gmsh),
            _ => Err(VolumeIoError::UnknownFormat(path.display().to_string())),
        }
    }

    /// Whether the format holds per-vertex scalar fields
    /// ([`PointField`]): VTK and Gmsh.
    pub fn holds_point_fields(self) -> bool {
        matches!(self, VolumeFormat::Vtk | VolumeFormat::Gmsh)
    }
}

/// A per-vertex scalar field of a file: its name (VTK's array name,
/// Gmsh's view name) and one value per vertex, in the order of
/// [`CellMesh::positions`] (in the file's units, as `f32`; not checked
/// for finiteness).
#[derive(Clone, Debug, PartialEq)]
pub struct PointField {
    /// The field's name.
    pub name: String,
    /// One value per vertex.
    pub values: Vec<f32>,
}

/// A volumetric mesh as read: positions and cells (vertex indices from 0).
#[derive(Clone, Debug, PartialEq)]
pub struct CellMesh {
    /// Vertex positions.
    pub positions: Vec<[f32; 3]>,
    /// The cells.
    pub cells: Vec<CellVertices>,
}

impl CellMesh {
    /// The mesh with every cell facing out ([`CellVertices::oriented`]),
    /// the cells in parallel.
    pub fn oriented(self) -> CellMesh {
        let CellMesh { positions, cells } = self;
        let cells = cells
            .into_par_iter()
            .map(|c| c.oriented(&positions))
            .collect();
        CellMesh { positions, cells }
    }
}

/// Whitespace-separated tokens of a text file with their 1-based lines;
/// `#` starts a comment to the end of its line.
pub(super) struct Tokens<'a> {
    file: String,
    text: &'a str,
    lines: std::iter::Enumerate<std::str::Lines<'a>>,
    /// The rest of the current line's tokens, and its number.
    current: (std::str::SplitWhitespace<'a>, usize),
    peeked: Option<(usize, &'a str)>,
    pub(super) last_line: usize,
    /// The byte offset just past the last token [`Tokens::next`] gave.
    end: usize,
}

impl<'a> Tokens<'a> {
    pub(super) fn new(file: &Path, text: &'a str) -> Self {
        Tokens {
            file: file.display().to_string(),
            text,
            lines: text.lines().enumerate(),
            current: ("".split_whitespace(), 0),
            peeked: None,
            last_line: 0,
            end: 0,
        }
    }

    /// The next token and its line, read lazily line by line.
    fn advance(&mut self) -> Option<(usize, &'a str)> {
        if let Some(item) = self.peeked.take() {
            return Some(item);
        }
        loop {
            if let Some(t) = self.current.0.next() {
                return Some((self.current.1, t));
            }
            let (i, l) = self.lines.next()?;
            let l = l.split('#').next().unwrap_or("");
            self.current = (l.split_whitespace(), i + 1);
        }
    }

    pub(super) fn error(&self, line: usize, message: String) -> VolumeIoError {
        MeshIoError::Syntax {
            file: self.file.clone(),
            line,
            message,
        }
        .into()
    }

    pub(super) fn next(&mut self, what: &str) -> Result<(usize, &'a str), VolumeIoError> {
        let item = self.advance();
        match item {
            Some((line, t)) => {
                self.last_line = line;
                // Every token is a slice of `text`.
                self.end = t.as_ptr() as usize - self.text.as_ptr() as usize + t.len();
                Ok((line, t))
            }
            None => Err(self.error(self.last_line, format!("the file ends before {what}"))),
        }
    }

    pub(super) fn number<T: std::str::FromStr>(&mut self, what: &str) -> Result<T, VolumeIoError> {
        let (line, t) = self.next(what)?;
        t.parse()
            .map_err(|_| self.error(line, format!("{what}: {t:?} is not a number")))
    }

    /// A count of records of `tokens` tokens each ([`count_fits`]): the
    /// next number, no larger than the bytes after it can hold.
    ///
    /// # Errors
    /// The file's line when the token is not a number or the count cannot
    /// fit in the rest of the file.
    pub(super) fn count(&mut self, what: &str, tokens: usize) -> Result<usize, VolumeIoError> {
        let n: usize = self.number(what)?;
        let left = self.text.len() - self.end;
        count_fits(n, tokens, left).map_err(|m| self.error(self.last_line, format!("{what}: {m}")))
    }

    pub(super) fn line_of_next(&mut self) -> Option<usize> {
        let item = self.advance();
        self.peeked = item;
        item.map(|(l, _)| l)
    }
}

/// Checks a count of records read from a file header against the `left`
/// bytes of the file after it, before anything is allocated for them: a
/// record of `tokens` whitespace-separated tokens takes at least
/// `2 * tokens` bytes (each token a character and a separator).
///
/// # Errors
/// The message (for the caller to place in the file) when `n` records
/// cannot fit.
pub(super) fn count_fits(n: usize, tokens: usize, left: usize) -> Result<usize, String> {
    let least = tokens.max(1).saturating_mul(2);
    if n > left / least {
        return Err(format!(
            "{n} announced, but the {left} bytes after it hold at most {} (each takes at least {least})",
            left / least
        ));
    }
    Ok(n)
}

/// The next word of `bytes` from `*at`, `*at` moved past it, for the
/// parallel readers: `None` at the end, at a comment (`#`) or for a word
/// that is not ASCII, which they leave to their token readers
/// ([`Tokens`] takes Unicode whitespace and comments); `*at` moves past
/// the blanks and the word on `None` too.
pub(super) fn next_word<'a>(bytes: &'a [u8], at: &mut usize) -> Option<&'a [u8]> {
    cavity::io::next_word(bytes, at).filter(|w| w.is_ascii() && !w.contains(&b'#'))
}

/// `n` records of `per` words of `bytes` from `*at` on, parsed in
/// parallel ([`cavity::io::parse_records`]), `*at` moved past them: the
/// arrays of the parallel VTK and Gmsh readers' ASCII files.
pub(super) fn records_from<T: Clone + Send>(
    bytes: &[u8],
    at: &mut usize,
    n: usize,
    per: usize,
    placeholder: T,
    record: impl Fn(&[&[u8]]) -> Option<T> + Sync,
) -> Option<Vec<T>> {
    let (out, end) = cavity::io::parse_records(bytes, *at, n, per, placeholder, |_, w| record(w))?;
    *at = end;
    Some(out)
}

/// Whether `bytes` are UTF-8 text, checked in parallel pieces of about a
/// megabyte, each starting at a character's first byte.
pub(super) fn is_text(bytes: &[u8]) -> bool {
    const PIECE: usize = 1 << 20;
    // The first character boundary at or after `i` (a character has at
    // most three continuation bytes; after more, `i`, where the check of
    // the piece then fails).
    let boundary = |i: usize| {
        let end = bytes.len().min(i + 4);
        (i.min(end)..end)
            .find(|&j| bytes[j] & 0xC0 != 0x80)
            .unwrap_or(if end == bytes.len() { end } else { i })
    };
    (0..bytes.len().div_ceil(PIECE)).into_par_iter().all(|k| {
        let start = if k == 0 { 0 } else { boundary(k * PIECE) };
        std::str::from_utf8(&bytes[start..boundary((k + 1) * PIECE)]).is_ok()
    })
}

/// The text of a file's bytes.
///
/// # Errors
/// [`VolumeIoError::File`] naming `path` and the line of the first byte
/// that is not UTF-8.
pub(super) fn text_of<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a str, VolumeIoError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        MeshIoError::Syntax {
            file: path.display().to_string(),
            line: 1 + bytes[..at].iter().filter(|&&b| b == b'\n').count(),
            message: format!("byte {at} is not UTF-8 text"),
        }
        .into()
    })
}

/// The bytes of the file at `path`, a large one read in parallel pieces
/// ([`cavity::io::read_file`]).
///
/// # Errors
/// [`VolumeIoError::File`] naming `path`: the operating system's error.
pub(super) fn read_file(path: &Path) -> Result<Vec<u8>, VolumeIoError> {
    cavity::io::read_file(path).map_err(|source| {
        MeshIoError::Io {
            file: path.display().to_string(),
            source,
        }
        .into()
    })
}

/// Reads the mesh at `path` ([`VolumeFormat::of`]), without its fields
/// ([`read_volume_fields`]).
///
/// # Errors
/// As [`read_volume_fields`].
pub fn read_volume(path: &Path) -> Result<CellMesh, VolumeIoError> {
    read_volume_fields(path).map(|(mesh, _)| mesh)
}

/// Reads the mesh at `path` ([`VolumeFormat::of`]) and the per-vertex
/// scalar fields it carries, in file order ([`PointField`]; see
/// [`vtk::read_bytes_fields`] and [`gmsh::read_bytes_fields`] for which
/// arrays count; none for MEDIT and TetGen).
///
/// # Errors
/// [`VolumeIoError`] naming the file and the line (or the element): an
/// unknown section, a token that is not a number, a vertex index out of
/// range, a non-finite coordinate, a file that ends early, a cell type the
/// reader does not take, a field whose values do not match the vertices.
pub fn read_volume_fields(path: &Path) -> Result<(CellMesh, Vec<PointField>), VolumeIoError> {
    match VolumeFormat::of(path)? {
        VolumeFormat::Medit => Ok((medit::read(path)?, Vec::new())),
        VolumeFormat::TetGen => Ok((tetgen::read(path)?, Vec::new())),
        VolumeFormat::Vtk => vtk::read_fields(path),
        VolumeFormat::Gmsh => gmsh::read_fields(path),
    }
}

/// How [`write_volume_with`] encodes a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct WriteOptions {
    /// Binary rather than ASCII (VTK and Gmsh; MEDIT and TetGen files are
    /// ASCII).
    pub binary: bool,
    /// The Gmsh version.
    pub msh_version: gmsh::MshVersion,
}

/// Writes `mesh` to `path` ([`VolumeFormat::of`]) as ASCII (Gmsh 4.1).
///
/// # Errors
/// As [`write_volume_with`].
pub fn write_volume(path: &Path, mesh: &CellMesh) -> Result<(), VolumeIoError> {
    write_volume_with(path, mesh, WriteOptions::default())
}

/// Writes `mesh` to `path` ([`VolumeFormat::of`]) encoded as `options`
/// say: MEDIT with each cell type in its section, TetGen as a `.node` and
/// an `.ele` file (numbered from 0), VTK as an unstructured grid, Gmsh
/// with the cells as volume elements of one entity.
///
/// # Errors
/// [`VolumeIoError::Unsupported`] for a polyhedron (MEDIT, Gmsh, TetGen)
/// or another cell than a tetrahedron (TetGen); [`VolumeIoError::File`]
/// when the file cannot be written.
pub fn write_volume_with(
    path: &Path,
    mesh: &CellMesh,
    options: WriteOptions,
) -> Result<(), VolumeIoError> {
    write_volume_field(path, mesh, None, options)
}

/// [`write_volume_with`], with the per-vertex scalar `field` (one value
/// per position of `mesh`) where given: VTK as `POINT_DATA` `SCALARS`
/// (whitespace in the name written as `_`, which the format cannot
/// hold), Gmsh as a one-component `$NodeData` view at time 0.
///
/// # Errors
/// As [`write_volume_with`]; [`VolumeIoError::Unsupported`] for a field
/// in a format that holds none ([`VolumeFormat::holds_point_fields`]:
/// write `.vtk` or `.msh`) or a field whose length is not the number of
/// positions.
pub fn write_volume_field(
    path: &Path,
    mesh: &CellMesh,
    field: Option<&PointField>,
    options: WriteOptions,
) -> Result<(), VolumeIoError> {
    match checked_format(path, mesh, field)? {
        VolumeFormat::Medit => medit::write(path, mesh),
        VolumeFormat::TetGen => tetgen::write(path, mesh),
        VolumeFormat::Vtk => vtk::write_field(path, mesh, field, options.binary),
        VolumeFormat::Gmsh => gmsh::write_field(path, mesh, field, options),
    }
}

/// Streams into `out` the bytes [`write_volume_field`] writes to `path`
/// (for TetGen, the `.node` file's, then the `.ele` file's), after the
/// same checks, without a file: the encoding alone, which
/// [`crate::bench::io_bench`] times apart from the file system.
///
/// # Errors
/// As [`write_volume_field`]; a failed write to `out` is
/// [`VolumeIoError::File`] naming `path`.
pub fn encode_volume(
    out: &mut (dyn std::io::Write + Send),
    path: &Path,
    mesh: &CellMesh,
    field: Option<&PointField>,
    options: WriteOptions,
) -> Result<(), VolumeIoError> {
    let format = checked_format(path, mesh, field)?;
    let io = |source| -> VolumeIoError {
        MeshIoError::Io {
            file: path.display().to_string(),
            source,
        }
        .into()
    };
    match format {
        VolumeFormat::Medit => {
            medit::check(path, mesh)?;
            medit::encode(out, mesh).map_err(io)
        }
        VolumeFormat::TetGen => {
            tetgen::check(path, mesh)?;
            tetgen::encode_node(out, mesh).map_err(io)?;
            tetgen::encode_ele(out, mesh).map_err(io)
        }
        VolumeFormat::Vtk => vtk::encode(out, mesh, field, options.binary).map_err(io),
        VolumeFormat::Gmsh => {
            gmsh::check(path, mesh)?;
            gmsh::encode(out, mesh, field, options).map_err(io)
        }
    }
}

/// The format of `path`, checked to hold `field` (one value per vertex of
/// `mesh`).
///
/// # Errors
/// As [`write_volume_field`], for the format and the field.
fn checked_format(
    path: &Path,
    mesh: &CellMesh,
    field: Option<&PointField>,
) -> Result<VolumeFormat, VolumeIoError> {
    let format = VolumeFormat::of(path)?;
    if let Some(f) = field {
        if !format.holds_point_fields() {
            return Err(unsupported(
                path,
                format!(
                    "the format holds no per-vertex field (field {:?}): write .vtk or .msh",
                    f.name
                ),
            ));
        }
        if f.values.len() != mesh.positions.len() {
            return Err(unsupported(
                path,
                format!(
                    "field {:?} has {} values for {} vertices: a per-vertex field has one value per vertex",
                    f.name,
                    f.values.len(),
                    mesh.positions.len()
                ),
            ));
        }
    }
    Ok(format)
}

/// An error naming `file` and what it cannot hold.
pub(super) fn unsupported(file: &Path, message: String) -> VolumeIoError {
    VolumeIoError::Unsupported {
        file: file.display().to_string(),
        message,
    }
}

/// A cell's vertex indices checked against the vertex count, made 0-based.
pub(super) fn indices<const N: usize>(
    t: &mut Tokens<'_>,
    base: u32,
    vertices: usize,
    what: &str,
) -> Result<[u32; N], VolumeIoError> {
    let mut out = [0u32; N];
    for x in &mut out {
        let line = t.line_of_next().unwrap_or(t.last_line);
        let v: u32 = t.number(what)?;
        if v < base || (v - base) as usize >= vertices {
            return Err(t.error(line, format!("{what} names vertex {v}, but there are {vertices} vertices (numbered from {base})")));
        }
        *x = v - base;
    }
    Ok(out)
}

/// The vertices a cell of a fixed type lists, in its order (none for a
/// polyhedron).
pub(super) fn listed(cell: &CellVertices) -> Option<&[u32]> {
    match cell {
        CellVertices::Tetrahedron(v) => Some(v),
        CellVertices::Hexahedron(v) => Some(v),
        CellVertices::Prism(v) => Some(v),
        CellVertices::Pyramid(v) => Some(v),
        CellVertices::Polyhedron(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_checked_in_parallel_as_utf8() {
        let text: Vec<u8> = "vertex é 1.5 ∂ 𝄞\n".repeat(200_000).into_bytes();
        assert!(is_text(&text) && is_text(b"") && is_text(b"a"));
        let mut next = stream::xorshift(0x2545_f491_4f6c_dd1d);
        for k in 0..300 {
            let mut broken = text.clone();
            let at = match k % 3 {
                0 => 0,
                1 => (next() as usize % 4) * (1 << 20) + next() as usize % 4,
                _ => next() as usize % text.len(),
            };
            broken[at] = [0x80, 0xBF, 0xC3, 0xF0, 0xFF, b'a'][next() as usize % 6];
            if k % 5 == 0 {
                // A run of continuation bytes across a piece's start.
                broken[(1 << 20) - 2..(1 << 20) + 5].fill(0x80);
            }
            assert_eq!(
                is_text(&broken),
                std::str::from_utf8(&broken).is_ok(),
                "{k}: {at}"
            );
        }
    }

    #[test]
    fn a_large_file_is_read_in_parallel_as_it_is() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("large");
        // Past `cavity::io::read_file`'s threshold (16 MiB), in pieces of
        // 4 MiB and a partial one.
        let len = (56 << 20) + 12_345;
        let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + i / 4096) as u8).collect();
        std::fs::write(&path, &bytes).expect("written");
        assert!(cavity::io::read_file(&path).is_ok_and(|read| read == bytes));
        assert!(read_file(&path).is_ok_and(|read| read == bytes));
        // Small files, directories and missing files as `std::fs::read`.
        std::fs::write(&path, b"small").expect("written");
        assert_eq!(read_file(&path).expect("read"), b"small");
        assert!(read_file(dir.path()).is_err());
        let missing = read_file(&dir.path().join("missing")).expect_err("missing");
        assert!(missing.to_string().contains("missing"), "{missing}");
    }
}

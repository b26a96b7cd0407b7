//! Reading and writing triangle meshes: PLY (ascii, binary little and big
//! endian), OBJ, OFF and STL (ascii and binary). Polygons are triangulated
//! as fans with a warning; bad input is an error naming the file and the
//! line or element, never a panic. Files are read whole into memory and
//! text is parsed in parallel chunks; text output is formatted in parallel.
//! Writes go to a temporary file in the destination directory that is
//! renamed into place only after a complete write; the result has the mode
//! of the file it replaces, or that of a new file under the umask. A
//! signal handler removes the temporary files of unfinished writes
//! ([`remove_temporary_files`]); errors name the destination, never the
//! temporary file.

mod mapped;
mod obj;
mod off;
mod ply;
mod records;
mod stl;
mod temporary;
mod text;

pub use records::{MAX_WORDS, next_word, parse_lines, parse_records};
pub use temporary::{PAUSE_BEFORE_RENAME, TemporaryFilesRemoved, remove_temporary_files};
pub use text::{
    format_lines, is_space, parse_f32, parse_f64, parse_i64, parse_u32, parse_usize, push_float,
    push_int, words, write_pieces,
};

use temporary::Temporary;

use std::io::{BufRead, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::TriMesh;

/// PLY payload encodings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlyEncoding {
    /// Text.
    Ascii,
    /// Binary, little endian.
    BinaryLittleEndian,
    /// Binary, big endian.
    BinaryBigEndian,
}

/// STL encodings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StlEncoding {
    /// Text (`solid` ... `endsolid`).
    Ascii,
    /// Binary: 80-byte header, `u32` facet count, 50 bytes per facet.
    Binary,
}

/// Mesh file formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Stanford PLY (the encoding is used when writing; reading detects it).
    Ply(PlyEncoding),
    /// Wavefront OBJ.
    Obj,
    /// Object File Format.
    Off,
    /// STL, triangles without shared vertices: reading merges corners at
    /// bitwise-equal positions and drops facets whose corners coincide;
    /// writing computes facet normals and ignores vertex normals. The
    /// encoding is used when writing; reading detects it.
    Stl(StlEncoding),
}

/// Errors of mesh reading and writing. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum MeshIoError {
    /// The extension is not a known mesh format.
    #[error("{file}: unknown mesh format (expected .ply, .obj, .off or .stl)")]
    UnknownFormat {
        /// The file.
        file: String,
    },
    /// An operating-system error.
    #[error("{file}: {source}")]
    Io {
        /// The file.
        file: String,
        /// The error.
        source: std::io::Error,
    },
    /// A malformed line of a text format.
    #[error("{file}:{line}: {message}")]
    Syntax {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A bad element (vertex, face, or STL facet) in any format.
    #[error("{file}: {element} {index}: {message}")]
    Element {
        /// The file.
        file: String,
        /// "vertex", "face" or "facet".
        element: &'static str,
        /// 0-based element number.
        index: usize,
        /// What is wrong.
        message: String,
    },
    /// Anything else wrong with the file as a whole.
    #[error("{file}: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
}

/// A mesh read from a file, with the warnings the reader gave.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadMesh {
    /// The mesh.
    pub mesh: TriMesh,
    /// Warnings (e.g. polygons triangulated, degenerate STL facets dropped,
    /// bytes after a binary STL ignored).
    pub warnings: Vec<String>,
}

impl Format {
    /// The format of `path` by its extension (`.ply`, `.obj`, `.off`,
    /// `.stl`, in any case); PLY is written as binary little endian, STL as
    /// binary.
    ///
    /// # Errors
    ///
    /// [`MeshIoError::UnknownFormat`] for any other extension.
    pub fn from_path(path: &Path) -> Result<Format, MeshIoError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase());
        match ext.as_deref() {
            Some("ply") => Ok(Format::Ply(PlyEncoding::BinaryLittleEndian)),
            Some("obj") => Ok(Format::Obj),
            Some("off") => Ok(Format::Off),
            Some("stl") => Ok(Format::Stl(StlEncoding::Binary)),
            _ => Err(MeshIoError::UnknownFormat {
                file: path.display().to_string(),
            }),
        }
    }
}

/// Reads the mesh at `path` (format by extension; PLY and STL encodings
/// are detected from the content).
///
/// # Errors
///
/// [`MeshIoError`] naming `path`: unknown extension, the file cannot be
/// read, or its content is malformed (with the line or element).
pub fn read_mesh(path: &Path) -> Result<ReadMesh, MeshIoError> {
    let format = Format::from_path(path)?;
    let name = path.display().to_string();
    let data = read_file(path).map_err(|source| MeshIoError::Io {
        file: name.clone(),
        source,
    })?;
    read_bytes(&data, format, &name)
}

/// Files at least this long are read by [`read_file`] in parallel pieces.
const PARALLEL_READ_BYTES: u64 = 16 << 20;

/// Bytes [`read_file`] reads per call.
const READ_PIECE: usize = 4 << 20;

/// The whole content of the file at `path`, as `std::fs::read` gives it; a
/// regular file of 16 MiB or more is read in 4 MiB pieces at their offsets
/// by all of rayon's threads, so that the copy from the page cache (and
/// the zeroing of the fresh pages it fills) runs at the speed of memory
/// rather than of one core. A file whose length changes meanwhile is read
/// again by `std::fs::read`. For any reader of large files, the
/// volumetric ones too.
///
/// # Errors
///
/// The operating system's error.
pub fn read_file(path: &Path) -> std::io::Result<Vec<u8>> {
    #[cfg(unix)]
    return read_in_pieces(path);
    #[cfg(not(unix))]
    std::fs::read(path)
}

/// [`read_file`] on Unix, where a file is read at an offset.
#[cfg(unix)]
fn read_in_pieces(path: &Path) -> std::io::Result<Vec<u8>> {
    use rayon::prelude::*;
    use std::os::unix::fs::FileExt;
    let file = std::fs::File::open(path)?;
    let metadata = file.metadata()?;
    let len = metadata.len();
    if !metadata.is_file() || len < PARALLEL_READ_BYTES {
        return std::fs::read(path);
    }
    let Ok(len) = usize::try_from(len) else {
        return std::fs::read(path);
    };
    let mut data = vec![0u8; len];
    let read = data
        .par_chunks_mut(READ_PIECE)
        .enumerate()
        .try_for_each(|(k, piece)| file.read_exact_at(piece, (k * READ_PIECE) as u64));
    match read {
        // Nothing after the length the metadata gave.
        Ok(()) if file.read_at(&mut [0u8], len as u64)? == 0 => Ok(data),
        Ok(()) => std::fs::read(path),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => std::fs::read(path),
        Err(e) => Err(e),
    }
}

/// Reads a mesh of `format` from `reader` (read to its end first); `name`
/// is used in errors.
///
/// # Errors
///
/// [`MeshIoError`] naming `name`: a read error, or malformed content.
pub fn read_mesh_from(
    mut reader: impl BufRead,
    format: Format,
    name: &str,
) -> Result<ReadMesh, MeshIoError> {
    let mut data = Vec::new();
    reader
        .read_to_end(&mut data)
        .map_err(|source| MeshIoError::Io {
            file: name.to_string(),
            source,
        })?;
    read_bytes(&data, format, name)
}

/// Reads a mesh of `format` from the whole content of a file.
fn read_bytes(data: &[u8], format: Format, name: &str) -> Result<ReadMesh, MeshIoError> {
    let mut polygons = 0usize;
    let mut warnings = Vec::new();
    let mesh = match format {
        Format::Ply(_) => ply::read(data, name, &mut polygons)?,
        Format::Obj => obj::read(data, name, &mut polygons)?,
        Format::Off => off::read(data, name, &mut polygons)?,
        Format::Stl(_) => stl::read(data, name, &mut polygons, &mut warnings)?,
    };
    validate(&mesh, name)?;
    if polygons > 0 {
        warnings.insert(
            0,
            format!(
                "{name}: {polygons} polygons with more than 3 vertices were triangulated as fans"
            ),
        );
    }
    Ok(ReadMesh { mesh, warnings })
}

/// The directory a file at `path` is created in.
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// `path` with `suffix` before its extension (`out.ply` and `-rejected`
/// give `out-rejected.ply`; a path without an extension gets the suffix
/// at its end).
pub fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    match path.extension() {
        Some(ext) => path.with_file_name(format!("{stem}{suffix}.{}", ext.to_string_lossy())),
        None => path.with_file_name(format!("{stem}{suffix}")),
    }
}

/// Whether `a` and `b` name the same existing file (links and relative
/// parts resolved): the check that keeps an output from replacing its
/// input.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Checks, before any work, that a mesh can be written to `path`: its
/// extension is a known format, and [`check_writable_file`]. Returns the
/// format, as [`Format::from_path`] does.
///
/// # Errors
///
/// [`MeshIoError::UnknownFormat`] or [`MeshIoError::Io`] naming `path`.
pub fn check_writable(path: &Path) -> Result<Format, MeshIoError> {
    let format = Format::from_path(path)?;
    check_writable_file(path)?;
    Ok(format)
}

/// Checks, before any work, that a file of any kind can be written to
/// `path` as the writers of this module write it (a temporary file beside
/// it, renamed over it): `path` is not a directory; its directory exists,
/// is a directory and lets a file be created (one is created and removed);
/// and a file already at `path` is writable by this user (a rename would
/// replace a read-only file without asking). Every output of a command
/// goes through it, whatever its format.
///
/// # Errors
///
/// [`MeshIoError::Io`] naming `path` (and the directory where it is the
/// directory's fault).
pub fn check_writable_file(path: &Path) -> Result<(), MeshIoError> {
    let io = |kind, message: String| MeshIoError::Io {
        file: path.display().to_string(),
        source: std::io::Error::new(kind, message),
    };
    if path.is_dir() {
        return Err(io(
            std::io::ErrorKind::IsADirectory,
            "is a directory".into(),
        ));
    }
    let dir = parent_dir(path);
    check_directory(dir).map_err(|e| io(e.kind(), e.to_string()))?;
    if let Ok(metadata) = std::fs::metadata(path)
        && metadata.is_file()
    {
        let read_only = metadata.permissions().readonly()
            || std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .is_err_and(|e| e.kind() == std::io::ErrorKind::PermissionDenied);
        if read_only {
            return Err(io(
                std::io::ErrorKind::PermissionDenied,
                "exists and is read-only (make it writable, or choose another output)".into(),
            ));
        }
    }
    Temporary::new_in(&tempfile::Builder::new(), dir).map_err(|e| {
        io(
            e.kind(),
            format!("cannot create a file in directory {}: {e}", dir.display()),
        )
    })?;
    Ok(())
}

/// Errors unless `dir` exists and is a directory, in words that name it.
fn check_directory(dir: &Path) -> std::io::Result<()> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            format!("{} is not a directory", dir.display()),
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("directory {} does not exist", dir.display()),
        )),
        Err(e) => Err(std::io::Error::new(
            e.kind(),
            format!("directory {}: {e}", dir.display()),
        )),
    }
}

/// A temporary file in `dir` for replacing `path`: created with the
/// permission bits of `path` when it exists (narrowed by the umask, so never
/// wider than the final mode, until [`set_mode`] restores them exactly),
/// else with `0o666` under the umask, as `File::create` would. Registered
/// for [`remove_temporary_files`] while it lives.
fn temp_file(dir: &Path, path: &Path) -> std::io::Result<Temporary> {
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = existing_mode(path).map_or(0o666, |m| m & 0o777);
        builder.permissions(std::fs::Permissions::from_mode(mode));
    }
    #[cfg(not(unix))]
    let _ = path;
    check_directory(dir)?;
    Temporary::new_in(&builder, dir)
}

/// The permission bits of the file at `path`, if it exists.
#[cfg(unix)]
fn existing_mode(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.permissions().mode() & 0o7777)
}

/// Gives `file` (about to replace `path`) the exact mode of `path` when it
/// exists, which the umask may have narrowed at creation.
fn set_mode(file: &std::fs::File, path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    if let Some(mode) = existing_mode(path) {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    #[cfg(not(unix))]
    let _ = (file, path);
    Ok(())
}

/// Per-vertex data written with a mesh, one entry per vertex each.
#[derive(Clone, Copy, Debug, Default)]
pub struct VertexData<'a> {
    /// Normals: PLY `nx ny nz`, OBJ `vn`, OFF `NOFF`; STL ignores them
    /// (it writes facet normals).
    pub normals: Option<&'a [[f32; 3]]>,
    /// A named scalar, written as a `float` vertex property of that name
    /// in PLY (infinity and NaN as they are: `inf`, `-inf`, `NaN` in
    /// ASCII). The other formats have no place for it ([`write_column`]
    /// writes it beside them). The name is letters, digits and `_`, and not a
    /// property the mesh has already (`x`, `y`, `z`, `nx`, `ny`, `nz`).
    pub scalar: Option<(&'a str, &'a [f32])>,
}

/// Writes `mesh` (with per-vertex normals when given, one per vertex; STL
/// ignores them) to `path` in `format`, atomically: a temporary file in the
/// same directory is renamed over `path` only after the whole mesh was
/// written and flushed. An existing file keeps its permissions; a new one
/// gets those of `File::create` (`0o666` less the umask).
///
/// # Errors
///
/// [`MeshIoError::Invalid`] when the normals do not match the vertices,
/// [`MeshIoError::Io`] naming `path` when writing fails (the destination is
/// then unchanged).
pub fn write_mesh(
    path: &Path,
    mesh: &TriMesh,
    vertex_normals: Option<&[[f32; 3]]>,
    format: Format,
) -> Result<(), MeshIoError> {
    let data = VertexData {
        normals: vertex_normals,
        scalar: None,
    };
    write_mesh_with(path, mesh, data, format)
}

/// [`write_mesh`] with any [`VertexData`].
///
/// # Errors
///
/// As [`write_mesh`]; [`MeshIoError::Invalid`] too for a scalar that does
/// not match the vertices, a bad scalar name, or a scalar in a format
/// other than PLY.
pub fn write_mesh_with(
    path: &Path,
    mesh: &TriMesh,
    data: VertexData<'_>,
    format: Format,
) -> Result<(), MeshIoError> {
    stage_mesh_with(path, mesh, data, format)?.commit()
}

/// Writes one value per line (`inf`, `-inf` and `NaN` as such; shortest
/// text that reads back to the same `f32`) to `path`, atomically as
/// [`write_mesh`] does: the column of a per-vertex scalar beside a mesh
/// format that has no place for it.
///
/// # Errors
///
/// [`MeshIoError::Io`] naming `path` when writing fails (the destination
/// is then unchanged).
pub fn write_column(path: &Path, values: &[f32]) -> Result<(), MeshIoError> {
    write_streamed(path, |out| {
        text::write_chunked(out, values.len(), |r, buf| {
            for &x in &values[r] {
                text::push_float(buf, x);
                buf.push(b'\n');
            }
        })
    })
}

/// Writes `bytes` to `path` atomically as [`write_mesh`] does (a
/// temporary file beside it, flushed, given the mode of the file it
/// replaces or that of `File::create`, renamed over it): for formats
/// written by other crates, such as the volumetric ones.
///
/// # Errors
///
/// [`MeshIoError::Io`] naming `path` when writing fails (the destination
/// is then unchanged).
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), MeshIoError> {
    // A write as large as the buffer goes to the file directly.
    write_streamed(path, |out| out.write_all(bytes))
}

/// Writes the file at `path` atomically as [`write_bytes`] does (a
/// temporary file beside it, flushed, synced, given the mode of the file
/// it replaces or that of `File::create`, renamed over it), its bytes
/// streamed in order by `write` into a buffered writer of the temporary
/// file: for large outputs of other crates (the volumetric formats),
/// written without the whole file in memory. The writer is `Send`, so
/// that `write` may hand it to a thread of rayon's pool while others
/// format the next part.
///
/// # Errors
///
/// [`MeshIoError::Io`] naming `path` when the temporary file cannot be
/// created, `write` fails or the rename fails (the destination is then
/// unchanged and the temporary file removed).
pub fn write_streamed(
    path: &Path,
    write: impl FnOnce(&mut (dyn Write + Send + '_)) -> std::io::Result<()>,
) -> Result<(), MeshIoError> {
    let name = path.display().to_string();
    let io = |source| MeshIoError::Io {
        file: name.clone(),
        source,
    };
    let tmp = temp_file(parent_dir(path), path).map_err(io)?;
    {
        let mut out = BufWriter::with_capacity(1 << 20, tmp.as_file());
        write(&mut out).map_err(io)?;
        out.flush().map_err(io)?;
    }
    StagedMesh::finish(tmp, path).map_err(io)?.commit()
}

/// A mesh written in full to a temporary file beside its destination,
/// not yet in place: [`StagedMesh::commit`] renames it over the
/// destination; dropping it deletes the temporary file and leaves the
/// destination as it was.
pub struct StagedMesh {
    file: Temporary,
    path: PathBuf,
}

impl StagedMesh {
    /// `tmp`, written in full, given the mode `path` should have and
    /// synced, staged to replace `path`.
    fn finish(tmp: Temporary, path: &Path) -> std::io::Result<StagedMesh> {
        set_mode(tmp.as_file(), path)?;
        tmp.as_file().sync_all()?;
        Ok(StagedMesh {
            file: tmp,
            path: path.to_path_buf(),
        })
    }

    /// Renames the written mesh over its destination.
    ///
    /// # Errors
    ///
    /// [`MeshIoError::Io`] naming the destination when the rename fails
    /// (the destination is then unchanged).
    pub fn commit(self) -> Result<(), MeshIoError> {
        let path = self.path;
        self.file.persist(&path).map_err(|source| MeshIoError::Io {
            file: path.display().to_string(),
            source,
        })
    }
}

/// The first half of [`write_mesh`]: the mesh written, flushed and given
/// its mode in a temporary file beside `path`, so that a caller can check
/// the mesh meanwhile and then commit it or drop it.
///
/// # Errors
///
/// As [`write_mesh`].
pub fn stage_mesh(
    path: &Path,
    mesh: &TriMesh,
    vertex_normals: Option<&[[f32; 3]]>,
    format: Format,
) -> Result<StagedMesh, MeshIoError> {
    let data = VertexData {
        normals: vertex_normals,
        scalar: None,
    };
    stage_mesh_with(path, mesh, data, format)
}

/// [`stage_mesh`] with any [`VertexData`].
///
/// # Errors
///
/// As [`write_mesh_with`].
pub fn stage_mesh_with(
    path: &Path,
    mesh: &TriMesh,
    data: VertexData<'_>,
    format: Format,
) -> Result<StagedMesh, MeshIoError> {
    let name = path.display().to_string();
    let invalid = |message| MeshIoError::Invalid {
        file: name.clone(),
        message,
    };
    let nv = mesh.positions.len();
    if let Some(n) = data.normals
        && n.len() != nv
    {
        return Err(invalid(format!("{} normals for {nv} vertices", n.len())));
    }
    if let Some((property, values)) = data.scalar {
        if values.len() != nv {
            return Err(invalid(format!(
                "{} values of {property:?} for {nv} vertices",
                values.len()
            )));
        }
        let taken = ["x", "y", "z", "nx", "ny", "nz"];
        if property.is_empty()
            || !property
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
            || taken.contains(&property)
        {
            return Err(invalid(format!(
                "{property:?} is not a vertex property name: use letters, digits and _, other than x, y, z, nx, ny, nz"
            )));
        }
        if !matches!(format, Format::Ply(_)) {
            return Err(invalid(format!(
                "only PLY has a place for the vertex property {property:?}: write a .ply, or the values beside the mesh (write_column)"
            )));
        }
    }
    let io = |source| MeshIoError::Io {
        file: name.clone(),
        source,
    };
    let tmp = temp_file(parent_dir(path), path).map_err(io)?;
    // A binary PLY file is written mapped, in parallel, where it can be.
    if let Format::Ply(enc @ (PlyEncoding::BinaryLittleEndian | PlyEncoding::BinaryBigEndian)) =
        format
        && ply::write_binary_mapped(tmp.as_file(), mesh, data, enc).map_err(io)?
    {
        return StagedMesh::finish(tmp, path).map_err(io);
    }
    {
        let mut out = BufWriter::with_capacity(1 << 20, tmp.as_file());
        match format {
            Format::Ply(enc) => ply::write(&mut out, mesh, data, enc).map_err(io)?,
            Format::Obj => obj::write(&mut out, mesh, data.normals).map_err(io)?,
            Format::Off => off::write(&mut out, mesh, data.normals).map_err(io)?,
            Format::Stl(enc) => stl::write(&mut out, mesh, enc).map_err(io)?,
        }
        out.flush().map_err(io)?;
    }
    StagedMesh::finish(tmp, path).map_err(io)
}

/// Checks indices, degenerate faces and coordinates (in parallel; the
/// first bad element is named).
fn validate(mesh: &TriMesh, name: &str) -> Result<(), MeshIoError> {
    use rayon::prelude::*;
    let element = |element, index, message| MeshIoError::Element {
        file: name.to_string(),
        element,
        index,
        message,
    };
    let bad = |p: &[f32; 3]| p.iter().any(|c| !c.is_finite());
    if let Some(v) = mesh.positions.par_iter().position_first(bad) {
        let c = mesh.positions[v].into_iter().find(|c| !c.is_finite());
        let c = c.expect("a non-finite coordinate");
        return Err(element("vertex", v, format!("non-finite coordinate ({c})")));
    }
    let nv = mesh.positions.len();
    let bad = |t: &[u32; 3]| (0..3).any(|k| t[k] as usize >= nv || t[k] == t[(k + 1) % 3]);
    if let Some(f) = mesh.faces.par_iter().position_first(bad) {
        let t = mesh.faces[f];
        for k in 0..3 {
            if t[k] as usize >= nv {
                return Err(element(
                    "face",
                    f,
                    format!("index {} out of range (mesh has {nv} vertices)", t[k]),
                ));
            }
            if t[k] == t[(k + 1) % 3] {
                return Err(element("face", f, format!("repeats vertex {}", t[k])));
            }
        }
    }
    Ok(())
}

/// Fan-triangulates a polygon; counts polygons with more than 3 corners.
fn push_polygon(
    faces: &mut Vec<[u32; 3]>,
    poly: &[u32],
    polygons: &mut usize,
) -> Result<(), String> {
    if poly.len() < 3 {
        return Err(format!(
            "face with {} vertices (at least 3 needed)",
            poly.len()
        ));
    }
    if poly.len() > 3 {
        *polygons += 1;
    }
    for k in 1..poly.len() - 1 {
        faces.push([poly[0], poly[k], poly[k + 1]]);
    }
    Ok(())
}

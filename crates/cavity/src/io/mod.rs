//! Reading and writing triangle meshes: PLY (ascii, binary little and big
//! endian, through ply-rs), OBJ and OFF. Polygons are triangulated as fans
//! with a warning; bad input is an error naming the file and the line or
//! element; writes go to a temporary file in the destination directory that
//! is renamed into place only after a complete write.

mod obj;
mod off;
mod ply;

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;

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

/// Mesh file formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Stanford PLY (the encoding is used when writing).
    Ply(PlyEncoding),
    /// Wavefront OBJ.
    Obj,
    /// Object File Format.
    Off,
}

/// Errors of mesh reading and writing. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum MeshIoError {
    /// The extension is not a known mesh format.
    #[error("{file}: unknown mesh format (expected .ply, .obj or .off)")]
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
    /// A bad element (vertex or face) in any format.
    #[error("{file}: {element} {index}: {message}")]
    Element {
        /// The file.
        file: String,
        /// "vertex" or "face".
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
    /// Warnings (e.g. polygons triangulated).
    pub warnings: Vec<String>,
}

impl Format {
    /// The format of `path` by its extension (case-insensitive); PLY is
    /// written as binary little endian.
    pub fn from_path(path: &Path) -> Result<Format, MeshIoError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase());
        match ext.as_deref() {
            Some("ply") => Ok(Format::Ply(PlyEncoding::BinaryLittleEndian)),
            Some("obj") => Ok(Format::Obj),
            Some("off") => Ok(Format::Off),
            _ => Err(MeshIoError::UnknownFormat {
                file: path.display().to_string(),
            }),
        }
    }
}

/// Reads the mesh at `path` (format by extension).
pub fn read_mesh(path: &Path) -> Result<ReadMesh, MeshIoError> {
    let format = Format::from_path(path)?;
    let name = path.display().to_string();
    let file = File::open(path).map_err(|source| MeshIoError::Io {
        file: name.clone(),
        source,
    })?;
    read_mesh_from(BufReader::new(file), format, &name)
}

/// Reads a mesh of `format` from `reader`; `name` is used in errors.
pub fn read_mesh_from(
    reader: impl BufRead,
    format: Format,
    name: &str,
) -> Result<ReadMesh, MeshIoError> {
    let mut polygons = 0usize;
    let mesh = match format {
        Format::Ply(_) => ply::read(reader, name, &mut polygons)?,
        Format::Obj => obj::read(reader, name, &mut polygons)?,
        Format::Off => off::read(reader, name, &mut polygons)?,
    };
    validate(&mesh, name)?;
    let mut warnings = Vec::new();
    if polygons > 0 {
        warnings.push(format!(
            "{name}: {polygons} polygons with more than 3 vertices were triangulated as fans"
        ));
    }
    Ok(ReadMesh { mesh, warnings })
}

/// Writes `mesh` (with per-vertex normals when given) to `path` in
/// `format`, atomically: a temporary file in the same directory is renamed
/// over `path` only after the whole mesh was written and flushed.
pub fn write_mesh(
    path: &Path,
    mesh: &TriMesh,
    vertex_normals: Option<&[[f32; 3]]>,
    format: Format,
) -> Result<(), MeshIoError> {
    let name = path.display().to_string();
    let io = |source| MeshIoError::Io {
        file: name.clone(),
        source,
    };
    if let Some(n) = vertex_normals
        && n.len() != mesh.positions.len()
    {
        return Err(MeshIoError::Invalid {
            file: name,
            message: format!("{} normals for {} vertices", n.len(), mesh.positions.len()),
        });
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    {
        let mut out = BufWriter::new(tmp.as_file());
        match format {
            Format::Ply(enc) => ply::write(&mut out, mesh, vertex_normals, enc).map_err(io)?,
            Format::Obj => obj::write(&mut out, mesh, vertex_normals).map_err(io)?,
            Format::Off => off::write(&mut out, mesh, vertex_normals).map_err(io)?,
        }
        out.flush().map_err(io)?;
    }
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

/// Checks indices, degenerate faces and coordinates.
fn validate(mesh: &TriMesh, name: &str) -> Result<(), MeshIoError> {
    let element = |element, index, message| MeshIoError::Element {
        file: name.to_string(),
        element,
        index,
        message,
    };
    for (v, p) in mesh.positions.iter().enumerate() {
        if let Some(c) = p.iter().find(|c| !c.is_finite()) {
            return Err(element("vertex", v, format!("non-finite coordinate ({c})")));
        }
    }
    let nv = mesh.positions.len();
    for (f, t) in mesh.faces.iter().enumerate() {
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

/// Shortest round-tripping text of an f32.
fn num(x: f32) -> String {
    format!("{x}")
}

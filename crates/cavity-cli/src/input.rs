//! Reading the input mesh: a file or the bundled one
//! (`cavity::input::InputMesh`), its warnings printed.

use std::path::Path;

use cavity::TriMesh;
use cavity::input::{InputDefects, InputMesh, Source};
use cavity::io::Format;

use crate::Result;

/// The mesh used when no MESH argument is given.
pub(crate) const BUNDLED_NAME: &str = "assets/dragon.obj";
const BUNDLED: &[u8] = include_bytes!("../../../assets/dragon.obj");

/// Where the mesh of `path` comes from: the file, or the bundled mesh
/// (saying so).
pub(crate) fn source(path: Option<&Path>) -> Source<'_> {
    match path {
        Some(p) => Source::File(p),
        None => {
            eprintln!("no mesh given: using the bundled {BUNDLED_NAME}");
            Source::Bytes(BUNDLED, Format::Obj, BUNDLED_NAME)
        }
    }
}

/// Prints `warnings`.
pub(crate) fn warn(warnings: &[String]) {
    for w in warnings {
        eprintln!("warning: {w}");
    }
}

/// Reads the mesh at `path`, or the bundled one (saying so).
pub(crate) fn load(path: Option<&Path>) -> Result<TriMesh> {
    let read = match source(path) {
        Source::File(p) => cavity::io::read_mesh(p)?,
        Source::Bytes(bytes, format, name) => cavity::io::read_mesh_from(bytes, format, name)?,
    };
    warn(&read.warnings);
    Ok(read.mesh)
}

/// A mesh read for an operation that writes a mesh: duplicate faces
/// removed, with the defects its output is checked against.
pub(crate) struct Input {
    pub(crate) mesh: TriMesh,
    pub(crate) defects: InputDefects,
}

/// Reads the mesh at `path` (or the bundled one) for an operation, removes
/// its duplicate faces and analyses its defects, printing the warnings.
pub(crate) fn load_input(path: Option<&Path>) -> Result<Input> {
    let read = InputMesh::read(source(path))?;
    warn(&read.warnings);
    let (defects, warning) = read.defects();
    warn(warning.as_slice());
    Ok(Input {
        defects,
        mesh: read.mesh,
    })
}

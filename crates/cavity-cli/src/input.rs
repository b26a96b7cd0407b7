//! Reading the input mesh: a file or the bundled one ([`source`]; the
//! commands that write a mesh read and analyse it on the backend,
//! `commands::read_on`), its warnings printed; a file that is no surface
//! mesh named with the command that reads it ([`check_input`]).

use std::io::BufRead;
use std::path::Path;

use cavity::TriMesh;
use cavity::input::{InputDefects, InputMesh, Source};
use cavity::io::{Format, MeshIoError};
use cavity_volume::io::VolumeFormat;

use crate::Result;

/// Errors, naming `path` and the command that reads it, unless `path` has
/// the extension of a surface mesh format (`cavity::io::Format`): a
/// volumetric mesh points to `cavity tet`, a 2D point set (a Triangle
/// `.node`) to `cavity polylla`; a missing surface mesh file or a
/// directory is an error naming it.
pub(crate) fn check_input(path: &Path) -> Result<()> {
    let Err(unknown) = Format::from_path(path) else {
        // A missing input or a directory is named before a device starts
        // (whose start may say something first); nothing is opened, so a
        // pipe is read once, by the reader.
        let file = path.display().to_string();
        let metadata = std::fs::metadata(path).map_err(|source| MeshIoError::Io {
            file: file.clone(),
            source,
        })?;
        if metadata.is_dir() {
            return Err(format!("{file}: a directory, not a mesh file").into());
        }
        return Ok(());
    };
    let name = path.display();
    let volume = |what: &str| {
        format!(
            "{name}: {what}, not a surface mesh: `cavity tet info {name}` reads it, `cavity tet boundary {name} -o surface.ply` gives its boundary surface"
        )
    };
    let message = match VolumeFormat::of(path) {
        Ok(VolumeFormat::Medit) => volume("a volumetric mesh (MEDIT .mesh)"),
        Ok(VolumeFormat::Gmsh) => volume("a volumetric mesh (Gmsh .msh)"),
        Ok(VolumeFormat::Vtk) => {
            volume("a VTK file, which cavity reads as a volumetric mesh (unstructured grid)")
        }
        Ok(VolumeFormat::TetGen) => match node_dimension(path) {
            Some(2) => format!(
                "{name}: a 2D point set or triangulation (Triangle .node/.ele), not a surface mesh: `cavity polylla {name} -o polygons.off` reads it (a .node alone is triangulated)"
            ),
            Some(3) => volume("a volumetric mesh (TetGen .node/.ele)"),
            _ => format!(
                "{name}: a .node/.ele file holds points and cells, not a surface mesh: `cavity polylla` reads Triangle's 2D pairs, `cavity tet` TetGen's 3D ones"
            ),
        },
        Err(_) => return Err(unknown.into()),
    };
    Err(message.into())
}

/// The dimension in the header of the `.node` file of a Triangle or TetGen
/// pair named by `path` (`.node` or `.ele`): the second number of its first
/// line that is not a comment; `None` when it cannot be read.
fn node_dimension(path: &Path) -> Option<u32> {
    let file = std::fs::File::open(path.with_extension("node")).ok()?;
    let line = std::io::BufReader::new(file)
        .lines()
        .map_while(std::result::Result::ok)
        .map(|l| l.split('#').next().unwrap_or_default().trim().to_string())
        .find(|l| !l.is_empty())?;
    line.split_whitespace().nth(1)?.parse().ok()
}

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
    if let Some(path) = path {
        check_input(path)?;
    }
    let read = match source(path) {
        Source::File(p) => cavity::io::read_mesh(p)?,
        Source::Bytes(bytes, format, name) => cavity::io::read_mesh_from(bytes, format, name)?,
    };
    warn(&read.warnings);
    Ok(read.mesh)
}

/// Reads the mesh at `path` (or the bundled one) with the host's
/// analysis, for the benchmarks that time the host's path: duplicate faces
/// removed, its topology built on the host, the reader's warnings
/// printed. Its defects come from [`analyse`].
pub(crate) fn load_input(path: Option<&Path>) -> Result<InputMesh> {
    if let Some(path) = path {
        check_input(path)?;
    }
    let read = InputMesh::read(source(path))?;
    warn(&read.warnings);
    Ok(read)
}

/// The defects of `input` (topology statistics, zero-area faces), their
/// warning printed.
pub(crate) fn analyse(input: &InputMesh) -> InputDefects {
    let (defects, warning) = input.defects();
    warn(warning.as_slice());
    defects
}

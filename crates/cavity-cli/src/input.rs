//! Reading the input mesh: a file or the bundled one, duplicate faces
//! removed, with the defects its output is checked against.

use std::path::Path;
use std::time::Instant;

use cavity::TriMesh;
use cavity::defects::{count_zero_area, remove_duplicate_faces_with_topology};
use cavity::io::{Format, read_mesh, read_mesh_from};
use cavity::stats::MeshStats;
use cavity::stats::topology_stats_with;
use cavity::topology::Topology;

use crate::Result;

/// The mesh used when no MESH argument is given.
pub(crate) const BUNDLED_NAME: &str = "assets/dragon.obj";
const BUNDLED: &[u8] = include_bytes!("../../../assets/dragon.obj");

/// Reads the mesh at `path`, or the bundled one (saying so).
pub(crate) fn load(path: Option<&Path>) -> Result<TriMesh> {
    let read = match path {
        Some(p) => read_mesh(p)?,
        None => {
            eprintln!("no mesh given: using the bundled {BUNDLED_NAME}");
            read_mesh_from(BUNDLED, Format::Obj, BUNDLED_NAME)?
        }
    };
    for w in &read.warnings {
        eprintln!("warning: {w}");
    }
    Ok(read.mesh)
}

/// A mesh read for an operation that writes a mesh: duplicate faces
/// removed, with the defects its output is checked against.
pub(crate) struct Input {
    pub(crate) mesh: TriMesh,
    pub(crate) defects: InputDefects,
}

/// What the output of an operation is checked against: the input's
/// topology statistics and its zero-area faces.
pub(crate) struct InputDefects {
    pub(crate) stats: MeshStats,
    /// Faces of zero area (`cavity::defects::is_zero_area`).
    pub(crate) zero_area_faces: usize,
}

/// A mesh as read for an operation: duplicate faces removed (with a
/// warning giving their number) and its topology; its defects not yet
/// analysed ([`Read::defects`]).
pub(crate) struct Read {
    pub(crate) mesh: TriMesh,
    /// `Topology::new(&mesh)`.
    pub(crate) topology: Topology,
    /// The file's name in messages.
    name: String,
    /// Seconds reading the file (or the bundled mesh).
    pub(crate) read_seconds: f64,
    /// Seconds removing duplicate faces and taking the topology.
    pub(crate) analysis_seconds: f64,
}

/// Reads the mesh at `path` (or the bundled one) for an operation and
/// removes duplicate faces, with a warning that gives their number.
pub(crate) fn read_input(path: Option<&Path>) -> Result<Read> {
    let reading = Instant::now();
    let mut mesh = load(path)?;
    let read_seconds = reading.elapsed().as_secs_f64();
    let analysis = Instant::now();
    let name = path.map_or(BUNDLED_NAME.into(), |p| p.display().to_string());
    let (removed, topology) = remove_duplicate_faces_with_topology(&mut mesh);
    if removed > 0 {
        eprintln!(
            "warning: {name}: removed {removed} duplicate faces (the same three vertices as an earlier face)"
        );
    }
    Ok(Read {
        mesh,
        topology,
        name,
        read_seconds,
        analysis_seconds: analysis.elapsed().as_secs_f64(),
    })
}

impl Read {
    /// The topology statistics and zero-area faces of the mesh; warns
    /// about non-manifold edges and vertices, which the operations leave
    /// as they are (the output check makes sure of it).
    pub(crate) fn defects(&self) -> InputDefects {
        let stats = topology_stats_with(&self.mesh, &self.topology);
        if stats.non_manifold_edges + stats.non_manifold_vertices > 0 {
            eprintln!(
                "warning: {}: {} non-manifold edges (more than two faces) and {} non-manifold vertices (several fans) are kept as they are",
                self.name, stats.non_manifold_edges, stats.non_manifold_vertices
            );
        }
        InputDefects {
            stats,
            zero_area_faces: count_zero_area(&self.mesh),
        }
    }
}

/// Reads the mesh at `path` (or the bundled one) for an operation
/// ([`read_input`]) and analyses its defects ([`Read::defects`]).
pub(crate) fn load_input(path: Option<&Path>) -> Result<Input> {
    let read = read_input(path)?;
    let defects = read.defects();
    Ok(Input {
        defects,
        mesh: read.mesh,
    })
}

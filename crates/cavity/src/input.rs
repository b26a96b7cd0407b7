//! A mesh read for an operation that writes a mesh ([`InputMesh`]): read
//! from a file or from bytes, its duplicate faces removed, its topology
//! built (on the host, or on a backend: [`ReadInput::analyse_on`],
//! [`InputOn`]), the reading timed, what a user should hear of kept as
//! warnings;
//! then its defects ([`InputDefects`]: the topology statistics and the
//! zero-area faces), against which the operation's output is checked
//! before it replaces its destination ([`InputDefects::check`]).

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::TriMesh;
use crate::backend::{Backend, BackendError, TopologyOn};
use crate::defects::{
    Keeps, Measured, OutputError, ZERO_HEIGHT, check_output, check_output_with, count_zero_area,
    remove_duplicate_faces_with_topology,
};
use crate::io::{Format, MeshIoError, read_mesh, read_mesh_from, with_suffix, write_mesh};
use crate::stats::{MeshStats, topology_stats_with};
use crate::topology::Topology;

/// Where an input comes from.
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    /// A mesh file.
    File(&'a Path),
    /// A mesh in memory (a bundled one): its bytes, format and name in
    /// messages.
    Bytes(&'a [u8], Format, &'a str),
}

impl Source<'_> {
    /// The name of the input in messages.
    pub fn name(&self) -> String {
        match self {
            Source::File(path) => path.display().to_string(),
            Source::Bytes(_, _, name) => name.to_string(),
        }
    }
}

/// A mesh as read for an operation: duplicate faces removed, its topology
/// built; its defects not yet analysed ([`InputMesh::defects`]).
pub struct InputMesh {
    /// The mesh.
    pub mesh: TriMesh,
    /// `Topology::new(&mesh)`.
    pub topology: Topology,
    /// The input's name in messages.
    pub name: String,
    /// What the reader and the analysis have to say (polygons
    /// triangulated, duplicate faces removed, non-manifold elements kept).
    pub warnings: Vec<String>,
}

/// A mesh read for an operation, not yet analysed: [`InputMesh::read`]
/// analyses it on the host, [`ReadInput::analyse_on`] on a backend.
pub struct ReadInput {
    /// The mesh as read (triangulated).
    pub mesh: TriMesh,
    /// The input's name in messages.
    pub name: String,
    /// What the reader has to say (polygons triangulated).
    pub warnings: Vec<String>,
    /// Seconds reading the input.
    pub read_seconds: f64,
}

impl ReadInput {
    /// Reads `source`.
    ///
    /// # Errors
    /// The reader's, naming the file and the line or element.
    pub fn read(source: Source<'_>) -> Result<ReadInput, MeshIoError> {
        let reading = Instant::now();
        let read = match source {
            Source::File(path) => read_mesh(path)?,
            Source::Bytes(bytes, format, name) => read_mesh_from(bytes, format, name)?,
        };
        Ok(ReadInput {
            mesh: read.mesh,
            name: source.name(),
            warnings: read.warnings,
            read_seconds: reading.elapsed().as_secs_f64(),
        })
    }

    /// The mesh with its duplicate faces removed (a warning gives their
    /// number) and its topology built on `b`
    /// ([`Backend::without_duplicate_faces`]: on the GPU both on the
    /// device).
    ///
    /// # Errors
    /// The backend's (a failed allocation, launch or copy).
    pub fn analyse_on(self, b: &Backend) -> Result<InputOn, BackendError> {
        let ReadInput {
            mut mesh,
            name,
            mut warnings,
            read_seconds,
        } = self;
        let (removed, topology) = b.without_duplicate_faces(&mut mesh)?;
        warnings.extend(removed_warning(&name, removed));
        Ok(InputOn {
            mesh,
            topology,
            name,
            warnings,
            read_seconds,
        })
    }
}

/// The warning for `removed` duplicate faces of input `name`, if any.
fn removed_warning(name: &str, removed: usize) -> Option<String> {
    (removed > 0).then(|| {
        format!(
            "{name}: removed {removed} duplicate faces (the same three vertices as an earlier face)"
        )
    })
}

impl InputMesh {
    /// Reads `source` and removes duplicate faces (a warning gives their
    /// number).
    ///
    /// # Errors
    /// The reader's, naming the file and the line or element.
    pub fn read(source: Source<'_>) -> Result<InputMesh, MeshIoError> {
        let ReadInput {
            mut mesh,
            name,
            mut warnings,
            ..
        } = ReadInput::read(source)?;
        let (removed, topology) = remove_duplicate_faces_with_topology(&mut mesh);
        warnings.extend(removed_warning(&name, removed));
        Ok(InputMesh {
            mesh,
            topology,
            name,
            warnings,
        })
    }

    /// The mesh's topology statistics and zero-area faces, with a warning
    /// about non-manifold edges and vertices, which the operations leave
    /// as they are (the output check makes sure of it).
    pub fn defects(&self) -> (InputDefects, Option<String>) {
        InputDefects::with_stats(
            &self.name,
            topology_stats_with(&self.mesh, &self.topology),
            count_zero_area(&self.mesh),
        )
    }
}

/// A mesh read for an operation, its duplicate faces removed and its
/// topology built on a backend ([`ReadInput::analyse_on`]).
pub struct InputOn {
    /// The mesh.
    pub mesh: TriMesh,
    /// Its topology where the backend builds it (`Backend::topology_on`).
    pub topology: TopologyOn<'static>,
    /// The input's name in messages.
    pub name: String,
    /// What the reader and the analysis have to say.
    pub warnings: Vec<String>,
    /// Seconds reading the input.
    pub read_seconds: f64,
}

impl InputOn {
    /// The input's defects ([`InputDefects`], with the warning about its
    /// non-manifold edges and vertices, as [`InputMesh::defects`] gives
    /// them): where its topology lies on the backend (the GPU's analysis,
    /// [`ReadInput::analyse_on`]) surveyed there from it
    /// ([`Backend::survey_topology`], the faces of zero area counted there
    /// too), else (the CPU backend's) from the topology on the host. The
    /// input comes back with its topology.
    ///
    /// # Errors
    /// The backend's (a failed allocation, launch or copy).
    pub fn with_defects(
        self,
        b: &Backend,
    ) -> Result<(InputOn, InputDefects, Option<String>), BackendError> {
        let InputOn {
            mesh,
            topology,
            name,
            warnings,
            read_seconds,
        } = self;
        let (topology, stats, zero_area) = match topology.relations() {
            Some(_) => {
                let survey = b.survey_topology(&mesh, topology)?;
                let zero_area = survey.zero_area_faces(b, ZERO_HEIGHT)?;
                let stats = survey.stats().clone();
                (survey.into_topology(), stats, zero_area)
            }
            None => {
                let stats = topology_stats_with(&mesh, &*topology.host(b)?);
                (topology, stats, count_zero_area(&mesh))
            }
        };
        let (defects, warning) = InputDefects::with_stats(&name, stats, zero_area);
        let input = InputOn {
            mesh,
            topology,
            name,
            warnings,
            read_seconds,
        };
        Ok((input, defects, warning))
    }
}

/// What the output of an operation is checked against: the input's
/// topology statistics and its zero-area faces.
#[derive(Clone, Debug)]
pub struct InputDefects {
    /// The input's topology statistics.
    pub stats: MeshStats,
    /// Faces of zero area (`crate::defects::is_zero_area`).
    pub zero_area_faces: usize,
}

/// An output that failed its check: the check's error and where the
/// rejected mesh went for inspection.
#[derive(Debug, thiserror::Error)]
#[error("{error}; {}", match (rejected, unwritten) {
    (Some(r), _) => format!("{} was not written (the rejected result is in {})", destination.display(), r.display()),
    (None, Some(w)) => format!("nothing was written ({w})"),
    (None, None) => "nothing was written".into(),
})]
pub struct Rejected {
    /// What the check found.
    pub error: OutputError,
    /// The output's destination, left as it was.
    pub destination: PathBuf,
    /// Where the rejected mesh was written, if it could be.
    pub rejected: Option<PathBuf>,
    /// Why it could not be, if not.
    pub unwritten: Option<MeshIoError>,
}

impl InputDefects {
    /// The defects of input `name`, whose topology statistics are `stats`
    /// and whose faces of zero area number `zero_area_faces`, with a
    /// warning about its non-manifold edges and vertices, as
    /// [`InputMesh::defects`] gives them: for a caller that measured them
    /// (the remeshing of an [`InputOn`], with the input's statistics).
    pub fn with_stats(
        name: &str,
        stats: MeshStats,
        zero_area_faces: usize,
    ) -> (InputDefects, Option<String>) {
        let warning = (stats.non_manifold_edges + stats.non_manifold_vertices > 0).then(|| {
            format!(
                "{name}: {} non-manifold edges (more than two faces) and {} non-manifold vertices (several fans) are kept as they are",
                stats.non_manifold_edges, stats.non_manifold_vertices
            )
        });
        let defects = InputDefects {
            stats,
            zero_area_faces,
        };
        (defects, warning)
    }

    /// Checks `output` (with what the check reads of it measured by the
    /// caller, [`Measured`], or taken here when not given) against the
    /// input as `keeps` says, before it is written to
    /// `destination`; a failed check writes the rejected mesh to
    /// `destination` with "-rejected" before the extension instead, for
    /// inspection.
    ///
    /// # Errors
    /// [`Rejected`] when the check fails.
    pub fn check(
        &self,
        output: &TriMesh,
        measured: Option<Measured<'_>>,
        keeps: Keeps,
        destination: &Path,
        format: Format,
    ) -> Result<(), Box<Rejected>> {
        let checked = match measured {
            Some(measured) => check_output_with(&self.stats, output, measured, keeps),
            None => check_output(&self.stats, output, keeps),
        };
        let Err(error) = checked else {
            return Ok(());
        };
        let rejected = rejected_name(destination);
        let (rejected, unwritten) = match write_mesh(&rejected, output, None, format) {
            Ok(()) => (Some(rejected), None),
            Err(w) => (None, Some(w)),
        };
        Err(Box::new(Rejected {
            error,
            destination: destination.to_path_buf(),
            rejected,
            unwritten,
        }))
    }
}

/// `path` with "-rejected" before the extension.
pub fn rejected_name(path: &Path) -> PathBuf {
    with_suffix(path, "-rejected")
}

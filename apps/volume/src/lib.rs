//! Volumetric meshes stored as ternary sparse boundary operators
//! (Mueller-Roemer, Stork and Fellner, "Ternary Sparse Matrix
//! Representation for Volumetric Mesh Subdivision and Processing on
//! GPUs", sections 3-4):
//!
//! - [`ternary`]: a ternary CSR matrix ([`TernaryCsr`]: entries -1, 0, +1,
//!   the sign kept in the column index) and its serial transpose;
//! - [`mesh`]: a polyhedral mesh ([`VolumeMesh`]) as its operators ∂1
//!   (edges as ordered vertex pairs), ∂2 (faces to oriented edges) and ∂3
//!   (cells to oriented faces), built from cell-vertex lists
//!   ([`CellVertices`]: tetrahedra, hexahedra, prisms, pyramids, general
//!   polyhedra; non-manifold meshes allowed) with consistent orientation;
//! - [`cells`]: the operators built on a backend from cell-vertex lists
//!   ([`ResidentMesh::from_cells`]), and the lists formed there;
//! - [`device`]: the transposes on a backend, by count, scan, fill and a
//!   per-row sort (the paper's Algorithm 1; kernels in
//!   `cavity-volume-kernels`, their PTX this crate's [`PTX`]);
//! - [`bench`](mod@bench): `cavity bench tet` and the volumetric rows of
//!   `cavity bench io`;
//! - [`boundary`]: boundary extraction and Laplacian smoothing of inner
//!   vertices;
//! - [`io`]: MEDIT `.mesh`, TetGen `.node`/`.ele`, legacy VTK and Gmsh
//!   2.2/4.1 files, ASCII and binary, written in parallel pieces streamed
//!   to a temporary file, binary files read in parallel;
//! - [`relations`]: the indirect relations (face-vertices, cell-edges,
//!   cell-vertices) on a backend, by count, scan and fill;
//! - [`resident`]: a mesh kept on a backend ([`ResidentMesh`]) with its
//!   relations computed there on demand and cached;
//! - [`quality`]: the scaled Jacobian, dihedral angles, and the
//!   relaxation that keeps cells valid;
//! - [`subdivide`]: volumetric Catmull-Clark subdivision (with the
//!   validity pass and the memory plan of its levels).

pub mod bench;
pub mod boundary;
pub mod cells;
pub mod device;
pub mod io;
pub mod mesh;
pub mod quality;
pub mod relations;
pub mod resident;
pub mod subdivide;
pub mod ternary;

pub use cavity_volume_kernels::signed;
pub use device::transpose;
pub use mesh::{CellType, CellVertices, VolumeMesh, check_cells};
pub use resident::{Operator, Relation, ResidentMesh};
pub use ternary::TernaryCsr;

use cavity::backend::BackendError;
use cavity::settings::{NamesSettings, OutOfRange, Setting};

cavity::kernel_module!("cavity_volume_kernels.ptx");

/// The settings of the volumetric operations, as their errors name them.
pub mod setting {
    use cavity::settings::Setting;

    /// Levels of Catmull-Clark subdivision.
    pub const LEVELS: Setting = Setting::new("levels", "the subdivision levels");
    /// Steps of Laplacian smoothing.
    pub const ITERATIONS: Setting = Setting::new("iterations", "the smoothing iterations");
}

/// Checks the levels of a subdivision and the steps of a smoothing: at
/// least 1 each (0 would copy the input).
///
/// # Errors
/// [`VolumeError::Settings`] naming the setting.
pub fn check_count(setting: Setting, count: u32) -> Result<(), VolumeError> {
    if count == 0 {
        return Err(OutOfRange::new(setting, "must be at least 1 (0 would copy the input)").into());
    }
    Ok(())
}

/// Errors of volumetric meshes.
#[derive(Debug, thiserror::Error)]
pub enum VolumeError {
    /// A cell names a vertex that does not exist: fix the cell list or
    /// the positions.
    #[error("cell {cell} names vertex {vertex}, but the mesh has {vertices} vertices")]
    VertexOutOfRange {
        /// The cell, in input order.
        cell: usize,
        /// The vertex it names.
        vertex: u32,
        /// Vertices in the mesh.
        vertices: usize,
    },
    /// A cell names one vertex twice, or has a face of fewer than three
    /// distinct vertices: such a cell has no volume; remove it.
    #[error("cell {cell} is degenerate: {what}")]
    DegenerateCell {
        /// The cell, in input order.
        cell: usize,
        /// What is wrong, in words.
        what: String,
    },
    /// A matrix's offsets or entries do not describe a ternary CSR matrix
    /// (the message says how).
    #[error("not a ternary CSR matrix: {0}")]
    Matrix(String),
    /// More elements than the 31-bit indices of the ternary entries hold.
    #[error("{what}: {count} elements, more than the 2^31 - 1 a ternary entry indexes")]
    TooLarge {
        /// Which elements.
        what: &'static str,
        /// How many.
        count: usize,
    },
    /// The backend failed (no kernels, a launch, a copy).
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// A setting out of range: change the setting it names.
    #[error(transparent)]
    Settings(#[from] OutOfRange),
    /// The levels of subdivision asked for would not fit (the elements'
    /// indices, or the memory there is: the message gives the estimate):
    /// lower the levels.
    #[error("{levels} level(s) of subdivision: {why}; lower the levels")]
    Oversized {
        /// The levels asked for.
        levels: u32,
        /// What would not fit, with the estimate.
        why: String,
    },
}

impl NamesSettings for VolumeError {
    fn settings(&self) -> Vec<Setting> {
        match self {
            VolumeError::Settings(e) => e.settings(),
            VolumeError::Oversized { .. } => vec![setting::LEVELS],
            _ => Vec::new(),
        }
    }
}

cavity::names_settings!(VolumeError);

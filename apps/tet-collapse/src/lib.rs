//! Adaptive edge collapse of tetrahedral meshes (Ströter, Mueller-Roemer,
//! Weber and Fellner, "Massively Parallel Adaptive Collapsing of Edges in
//! Unstructured Tetrahedral Meshes", Eurographics Symposium on Parallel
//! Graphics and Visualization 2023; issue 54).
//!
//! - [`bench`](mod@bench): `cavity bench tet-simplify`;
//! - [`mesh`]: the mesh the collapse works on ([`TetMesh`]);
//! - [`boundary`]: the classes of the boundary vertices (face, ridge,
//!   corner; section 3.1) and the sharp edges;
//! - [`parallel`]: the parallel collapse on a backend (Algorithm 1), the
//!   GPU or the CPU backend running the same kernels;
//! - [`operators`]: the collapsed mesh's boundary operators ∂1-∂3 built on
//!   the device, handed over as a `cavity_volume::ResidentMesh`;
//! - [`sequential`]: the sequential priority-queue collapse (the paper's
//!   "CPU-sequential" baseline, section 4), the oracle of the parallel
//!   one;
//! - [`simplify`](mod@simplify): the target loop a user runs (a share of the cells, a
//!   cell count or a target edge length; the criterion's bound grown
//!   until the target is met), on top of [`parallel`];
//! - [`quality`]: the quality measures printed for input and output;
//! - [`checks`]: the robustness checks of section 4.1.
//!
//! The predicates the parallel kernels and the sequential version share
//! (trial volumes, link condition, boundary rules, criteria) live in
//! `cavity-tet-collapse-kernels`, written once for both.

pub mod bench;
pub mod boundary;
pub mod checks;
pub mod mesh;
pub mod operators;
pub mod parallel;
pub mod quality;
pub mod sequential;
pub mod simplify;

pub use cavity_tet_collapse_kernels as kernels;
pub use mesh::TetMesh;
pub use simplify::{Simplified, SimplifySettings, simplify};

use cavity::backend::BackendError;
use cavity::settings::{NamesSettings, OutOfRange, Setting};
use cavity_volume::CellType;

cavity::kernel_module!("cavity_tet_collapse_kernels.ptx");

/// The settings of a simplification ([`SimplifySettings`]), as its errors
/// name them; each key is the field's name and the command line's option
/// (`ratio` for `--ratio`).
pub mod setting {
    use cavity::settings::Setting;

    /// [`crate::simplify::Target::Ratio`]: the share of the tetrahedra
    /// kept, in (0, 1].
    pub const RATIO: Setting = Setting::new("ratio", "the target ratio");
    /// [`crate::simplify::Target::Cells`]: the tetrahedra kept, at least 1.
    pub const CELLS: Setting = Setting::new("cells", "the target cell count");
    /// [`crate::simplify::Target::Length`]: the target edge length,
    /// positive and finite.
    pub const LENGTH: Setting = Setting::new("length", "the target edge length");
    /// The field criterion's largest error
    /// ([`crate::simplify::Criterion::Field`]), positive and finite.
    pub const MAX_ERROR: Setting = Setting::new("max_error", "the largest field error");
    /// The per-vertex field the collapse carries (and the field criterion
    /// reads).
    pub const FIELD: Setting = Setting::new("field", "the field");
    /// The criterion ([`crate::simplify::Criterion`]).
    pub const CRITERION: Setting = Setting::new("criterion", "the criterion");
}

/// Errors of the tetrahedral collapse.
#[derive(Debug, thiserror::Error)]
pub enum CollapseError {
    /// A cell of another type than a tetrahedron: the collapse takes
    /// tetrahedral meshes only (tetrahedralize the mesh first).
    #[error("cell {cell} is a {cell_type:?}: the collapse takes tetrahedra only")]
    NotTetrahedron {
        /// The cell, in input order.
        cell: usize,
        /// Its type.
        cell_type: CellType,
    },
    /// A tetrahedron names a vertex that does not exist: fix the cell
    /// list or the positions.
    #[error("tetrahedron {cell} names vertex {vertex}, but the mesh has {vertices} vertices")]
    VertexOutOfRange {
        /// The tetrahedron, in input order.
        cell: usize,
        /// The vertex it names.
        vertex: u32,
        /// The number of vertices.
        vertices: usize,
    },
    /// A cell of a mesh on the device has no volume (its four vertices
    /// are coplanar), so it has no orientation to keep: remove or fix it.
    #[error("cell {cell} has no volume (its four vertices are coplanar): remove or fix it")]
    FlatCell {
        /// The cell.
        cell: usize,
    },
    /// A tetrahedron names a vertex twice (no volume): remove it.
    #[error("tetrahedron {cell} names a vertex twice: {vertices:?}")]
    RepeatedVertex {
        /// The tetrahedron, in input order.
        cell: usize,
        /// Its vertices.
        vertices: [u32; 4],
    },
    /// A setting of a simplification out of its range
    /// ([`SimplifySettings::check`]): change the setting `source` names to
    /// a value in the range its message gives.
    #[error("{source} (given {value})")]
    Setting {
        /// The setting and its range.
        source: OutOfRange,
        /// The value given, in words.
        value: String,
    },
    /// The field criterion without a field: give a per-vertex field, or
    /// choose another criterion.
    #[error(
        "the field criterion needs a per-vertex scalar field, and none was given: give one or choose another criterion"
    )]
    NoField,
    /// A per-vertex field whose length is not the number of vertices:
    /// give one value per vertex (or none).
    #[error("the field has {values} values for {vertices} vertices: give one value per vertex")]
    FieldLength {
        /// Its values.
        values: usize,
        /// The mesh's vertices.
        vertices: usize,
    },
    /// A value of the field the field criterion reads is not finite
    /// (NaN or infinite): its error bound and costs would be meaningless.
    #[error(
        "the field's value at vertex {vertex} is {value}: the field criterion needs finite values"
    )]
    NonFiniteField {
        /// The first such vertex.
        vertex: usize,
        /// Its value.
        value: f32,
    },
    /// The backend failed (no kernels, a launch, a copy).
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// The collapsed mesh's boundary operators could not be built or
    /// handed to the volumetric structure (`crate::operators`): the
    /// volume crate's error says what did not add up. A valid tetrahedral
    /// mesh does not get it: check the input with `checks::check_valid`.
    #[error("the collapsed mesh's operators: {0}")]
    Operators(#[from] cavity_volume::VolumeError),
}

impl NamesSettings for CollapseError {
    fn settings(&self) -> Vec<Setting> {
        match self {
            CollapseError::Setting { source, .. } => source.settings(),
            CollapseError::NoField => vec![setting::FIELD, setting::CRITERION],
            CollapseError::FieldLength { .. } | CollapseError::NonFiniteField { .. } => {
                vec![setting::FIELD]
            }
            _ => Vec::new(),
        }
    }
}

cavity::names_settings!(CollapseError);

/// What a collapse run does beyond its criterion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// The trial volumes' bound: a tetrahedron a collapse leaves must have
    /// a volume of at least this times its longest edge cubed
    /// (`kernels::geometry::is_valid_tet`; scale-free).
    pub volume_ratio: f64,
    /// The trial's quality bound (`kernels::collapse::Trial::quality_bound`):
    /// above it a collapse may not make the worst tetrahedron around it
    /// worse.
    pub quality_bound: f64,
    /// `ε_F` of the boundary classes (`kernels::boundary`).
    pub epsilon_f: f64,
    /// `ε_R` of the boundary classes.
    pub epsilon_r: f64,
    /// Stop after an iteration that collapses at most this many edges
    /// (the paper's `ε_c`).
    pub epsilon_c: usize,
    /// Stop once at most this many tetrahedra are left.
    pub target_cells: Option<usize>,
    /// Stop after this many iterations.
    pub max_iterations: u32,
    /// How the parallel collapse resolves conflicts (the sequential one
    /// has none).
    pub conflicts: Conflicts,
}

/// How the parallel collapse chooses the collapses of an iteration among
/// the admissible candidates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Conflicts {
    /// The paper's two passes (section 3.3): the cheapest candidate among
    /// the edges at its vertices wins, then each tetrahedron keeps the
    /// cheapest of the winners around it (in rounds, until every winner
    /// is decided).
    #[default]
    TwoPass,
    /// Gautron and Kanzler's atomic propagation of edge descriptors over
    /// the tetrahedra around both vertices (the paper's baseline; one
    /// round of `kernels::greedy`).
    Gautron,
    /// The greedy maximal independent set of the candidates by cost, in
    /// rounds of that propagation (`kernels::greedy`): the collapses the
    /// sequential order would take among this iteration's candidates.
    Greedy,
}

impl Settings {
    /// The trial's bounds of these settings.
    pub fn trial(&self) -> kernels::collapse::Trial {
        kernels::collapse::Trial {
            volume_ratio: self.volume_ratio,
            quality_bound: self.quality_bound,
        }
    }
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            volume_ratio: kernels::geometry::MIN_VOLUME_RATIO,
            quality_bound: kernels::collapse::QUALITY_BOUND,
            epsilon_f: kernels::boundary::EPSILON_F,
            epsilon_r: kernels::boundary::EPSILON_R,
            epsilon_c: 0,
            target_cells: None,
            max_iterations: 1000,
            conflicts: Conflicts::TwoPass,
        }
    }
}

/// One iteration of a collapse run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Iteration {
    /// Edges collapsed.
    pub collapses: usize,
    /// Tetrahedra left.
    pub cells: usize,
}

//! Polylla polygonal meshes from triangulations (Salinas-Fernández,
//! Hitschfeld-Kahler, Navarro and others; the GPU version: "GPolylla:
//! Fully GPU-accelerated polygonal mesh generator"): the triangles of each
//! terminal-edge region (those whose longest-edge propagation paths end at
//! the same terminal edge) are joined into one polygon, and polygons with
//! barrier edges are split at the barrier tips and then at the barrier
//! edges no tip ends (issue 52), so that no polygon walks an edge twice
//! (a polygon may touch itself at a vertex: [`sequential`]).
//!
//! - [`halfedge`]: the half-edge structure of a 2D triangulation;
//! - [`sequential`]: sequential Polylla (label, traversal, repair), the
//!   baseline and oracle;
//! - [`bench`](mod@bench): `cavity bench polylla`;
//! - [`device`]: GPolylla on a backend (the GPU, or the CPU backend
//!   running the same kernels), each step timed;
//! - [`generate`]: Delaunay triangulations of random points and of grids
//!   (with `spade`);
//! - [`blocks`]: the Delaunay triangulation of many points in blocks, in
//!   parallel, joined at their borders;
//! - `points`: the distinct points of a triangulation's input, shared by
//!   the two;
//! - [`lists`]: polygons as vertex lists, what the writers take;
//! - [`io`]: Triangle `.node`/`.ele`/`.neigh` and 2D OFF input, OFF
//!   polygons and SVG output.

pub mod bench;
pub mod blocks;
pub mod device;
pub mod generate;
pub mod halfedge;
pub mod io;
pub mod lists;
mod points;
pub mod sequential;

pub use halfedge::HalfEdges;
pub use sequential::{Polylla, polylla_sequential};

cavity::kernel_module!("cavity_polylla_kernels.ptx");

/// A 2D triangulation: vertex positions and triangles (vertex indices,
/// either orientation).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Triangulation {
    /// Vertex positions.
    pub positions: Vec<[f64; 2]>,
    /// Triangles.
    pub triangles: Vec<[u32; 3]>,
    /// Each triangle's neighbours across the edges opposite its corners
    /// (`halfedge::NONE` on the boundary), when the input lists them
    /// (Triangle's `.neigh`).
    pub neighbours: Option<Vec<[u32; 3]>>,
}

/// Errors of Polylla.
#[derive(Debug, thiserror::Error)]
pub enum PolyllaError {
    /// The triangulation cannot be a Polylla input (the message names the
    /// triangle or vertex and what is wrong, or why the points hold no
    /// triangle), or an output's name has no format Polylla writes: fix
    /// the input or the name.
    #[error("{0}")]
    Input(String),
    /// A file could not be read or written, or is malformed (the file and
    /// the line).
    #[error(transparent)]
    File(#[from] cavity::io::MeshIoError),
    /// The backend failed (no kernels, a launch, a copy; out of memory).
    #[error(transparent)]
    Backend(#[from] cavity::backend::BackendError),
    /// Spade could not triangulate the points (a coordinate not finite or
    /// past spade's range, the first such point named).
    #[error("triangulating the points: {0}")]
    Triangulation(String),
}

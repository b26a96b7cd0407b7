//! cavity: triangle meshes split into patches that live in a GPU block's shared
//! memory, with block-cooperative first-order queries on the GPU and on a CPU
//! backend that runs the same kernels.

pub mod backend;
pub mod bench;
pub mod components;
pub mod defects;
pub mod delaunay;
pub mod directed_edges;
pub mod dynamic;
pub mod io;
pub mod mesh;
pub mod normalize;
pub mod normals;
pub mod patched;
pub mod patcher;
pub mod reference;
pub mod remesh;
pub mod rounds;
pub mod serial_delaunay;
pub mod settings;
pub mod topology;
pub mod track;

pub use cavity_device::layout::Kind;
pub use cavity_device::query::Query;
pub use mesh::TriMesh;
pub use patched::{PatchStats, PatchedMesh};

//! cavity: triangle meshes split into patches that live in a GPU block's shared
//! memory, with block-cooperative first-order queries on the GPU and on a CPU
//! backend that runs the same kernels (RXMesh, Mahmoud et al. 2021), and
//! dynamic updates through the cavity operator (Mahmoud et al. 2024).
//!
//! The pieces, by concept:
//!
//! - [`TriMesh`] and [`io`]: an indexed triangle mesh, read and written as
//!   OBJ, PLY, OFF or STL; [`input`] reads a user's mesh with its warnings
//!   and checks an output against it; [`defects`], [`components`] and
//!   [`stats`] for dirty input; [`normalize`] for odd scales.
//! - [`PatchedMesh`] ([`patcher`], [`patched`]): the static patch layout
//!   the query kernels read, partitioned by the host's patcher or on the
//!   device ([`backend::Backend::partition`], [`backend::Backend::patched`]); [`dynamic::DynamicMesh`]: the per-patch layout
//!   with spare slots that the cavity operator updates; [`attributes`]:
//!   typed values on its vertices, edges and faces.
//! - [`backend`]: where kernels run. [`backend::Backend`] is the GPU
//!   (PTX through cudarc) or the CPU backend (the same kernels on host
//!   blocks, one per rayon task); the first-order [`Query`]s, typed device
//!   buffers and checked kernels ([`backend::buffer`]), kernel crates of
//!   your own (`Backend::add_kernels`, [`kernel_module!`]) and the dynamic
//!   rounds ([`rounds`]: sweeps of update rounds of any cavity
//!   application, per-element and patch computations; [`rings`]) run on
//!   either.
//! - Applications live in their own crates, written on the public model
//!   (`apps/`): Delaunay edge flips (`cavity_delaunay`), vertex normals
//!   (`cavity_normals`), isotropic remeshing (`cavity_remesh`), surface
//!   tracking (`cavity_track`), mean curvature flow (`cavity_mcf`),
//!   geodesic distance (`cavity_geodesic`), bilateral denoising
//!   (`cavity_denoise`), volumetric meshes as ternary boundary operators
//!   (`cavity_volume`) and Polylla polygonal meshes (`cavity_polylla`).
//! - Errors name the library's settings ([`settings::Setting`]); a front
//!   end maps them to its own options.
//!
//! A grid of two triangles per square, patched, and its VV query on the
//! CPU backend (`Backend::select(DeviceChoice::Auto)` takes the GPU when
//! there is one):
//!
//! ```
//! use cavity::backend::Backend;
//! use cavity::backend::cpu::CpuBackend;
//! use cavity::{Kind, PatchedMesh, Query, TriMesh};
//!
//! // A 3 × 3 grid of vertices, 8 triangles.
//! let mut mesh = TriMesh::default();
//! for j in 0..3 {
//!     for i in 0..3 {
//!         mesh.positions.push([i as f32, j as f32, 0.0]);
//!     }
//! }
//! for j in 0..2u32 {
//!     for i in 0..2u32 {
//!         let v = j * 3 + i;
//!         mesh.faces.push([v, v + 1, v + 4]);
//!         mesh.faces.push([v, v + 4, v + 3]);
//!     }
//! }
//! let patched = PatchedMesh::new(&mesh, 4)?;
//! let backend = Backend::Cpu(CpuBackend::new());
//! let vv = backend.query(&patched, Query::VV)?;
//! // The centre vertex (input index 4) has six neighbours.
//! let centre = patched.to_handle(Kind::Vertex)[4];
//! let mut ring: Vec<u32> = vv
//!     .row(centre)
//!     .iter()
//!     .map(|&h| patched.to_input(Kind::Vertex)[h as usize])
//!     .collect();
//! ring.sort();
//! assert_eq!(ring, [0, 1, 3, 5, 7, 8]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod attributes;
pub mod backend;
pub mod components;
pub mod computation;
pub mod defects;
pub mod dynamic;
pub mod input;
pub mod io;
pub mod memory;
pub mod mesh;
pub mod normalize;
pub mod patched;
pub mod patcher;
pub mod query_result;
pub mod rings;
pub mod rounds;
pub mod settings;
pub mod stats;
pub mod topology;
pub mod units;

pub use cavity_device::layout::Kind;
pub use cavity_device::query::Query;
pub use mesh::{MeshError, TriMesh};
pub use patched::{PatchStats, PatchSummary, PatchedMesh};
pub use query_result::QueryResult;

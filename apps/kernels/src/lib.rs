//! The project's application kernel crates, linked together: building this
//! crate to PTX (`cavity-app-ptx`'s build script) gives one module with
//! every application's entry points, so that the applications cost one
//! PTX build, not one each (a kernel crate's entry points come with it
//! into the PTX of a crate that depends on it).
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

pub use cavity_delaunay_kernels as delaunay;
pub use cavity_denoise_kernels as denoise;
pub use cavity_geodesic_kernels as geodesic;
pub use cavity_mcf_kernels as mcf;
pub use cavity_normals_kernels as normals;
pub use cavity_polylla_kernels as polylla;
pub use cavity_remesh_kernels as remesh;
pub use cavity_track_kernels as track;
pub use cavity_volume_kernels as volume;

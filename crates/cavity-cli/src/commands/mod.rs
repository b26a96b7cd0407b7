//! The subcommands, one module each (`bench` holds all benchmarks).

pub(crate) mod bench;
pub(crate) mod delaunay;
pub(crate) mod denoise;
pub(crate) mod geodesic;
pub(crate) mod info;
pub(crate) mod normals;
pub(crate) mod remesh;
pub(crate) mod smooth;
pub(crate) mod track;

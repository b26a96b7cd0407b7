//! Benchmarks: first-order queries ([`queries`]), Delaunay edge flips
//! ([`delaunay`]), isotropic remeshing ([`remesh`]) and surface tracking
//! ([`track`]), each printing a table of our times, the comparisons
//! measured in the same run, their ratios, the device and bytes per face.

pub mod delaunay;
mod queries;
pub mod remesh;
pub mod track;

pub use queries::*;

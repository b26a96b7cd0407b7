//! Benchmarks: first-order queries ([`queries`]), isotropic remeshing
//! ([`remesh`]) and surface tracking ([`track`]), each printing a table of
//! our times, the comparisons measured in the same run, their ratios, the
//! device and bytes per face (application crates keep their own, with the
//! helpers here: Delaunay's in `apps/delaunay`).

mod queries;

pub use queries::*;

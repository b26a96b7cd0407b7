//! Benchmarks: first-order queries ([`queries`]) and Delaunay edge flips
//! ([`delaunay`]), each printing a table of our times, the comparisons
//! measured in the same run, their ratios, the device and bytes per face.

pub mod delaunay;
mod queries;

pub use queries::*;

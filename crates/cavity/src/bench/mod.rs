//! Benchmarks: first-order queries ([`queries`]), printing a table of our
//! times, the comparisons measured in the same run, their ratios, the
//! device and bytes per face; and the helpers the application crates'
//! benchmarks share (`cavity_delaunay::bench`, `cavity_remesh::bench`,
//! `cavity_track::bench`, `cavity_mcf::bench`), among them running a CPU
//! peer's script ([`run_peer_script`]).

mod peers;
mod queries;

pub use peers::*;
pub use queries::*;

use crate::backend::Backend;

/// The GPU a benchmark ran on, for its table's header: the device's name,
/// or "no GPU used" on the CPU backend.
pub fn gpu_name(backend: &Backend) -> String {
    match backend {
        Backend::Cuda(g) => g.name(),
        Backend::Cpu(_) => "no GPU used".into(),
    }
}

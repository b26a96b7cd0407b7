//! The benchmarks' shared harness and the core's own benchmark, kept out of
//! the library crates (`cavity`, `cavity-device`), which ship without them:
//!
//! - [`harness`]: timed runs (warm-ups, medians), the devices, the
//!   Markdown table and the interface of a benchmark over meshes that
//!   every application's benchmark shares; [`median`], [`gpu_name`],
//!   [`attribute`]; [`peers`]: running a CPU peer's script
//!   (`xtask/peers/*.py`);
//! - [`queries`](fn@queries): the first-order query benchmark (`cavity bench
//!   queries`), our patch kernels against the global-memory baselines of
//!   RXMesh section 7 ([`launch`], [`directed_edges`]) and the CPU backend;
//! - [`patching`]: the partition and the patch structures on the device
//!   against the host's build (`cavity bench patching`).
//!
//! The applications' benchmarks (`cavity_remesh::bench`, ...) are built
//! on the harness.

pub mod directed_edges;
pub mod harness;
pub mod launch;
pub mod patching;
pub mod peers;
mod queries;

pub use peers::*;
pub use queries::*;

use cavity::backend::Backend;

/// The GPU a benchmark ran on, for its table's header: the device's name,
/// or "no GPU used" on the CPU backend.
pub fn gpu_name(backend: &Backend) -> String {
    match backend {
        Backend::Cuda(g) => g.name(),
        Backend::Cpu(_) => "no GPU used".into(),
    }
}

/// The median of `v` (the upper one of an even count).
///
/// # Panics
/// For an empty `v`.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The median wall-clock seconds of `reps` runs of `f` (at least one)
/// after one warm-up run, for work timed from the host (file I/O, whole
/// operations).
///
/// # Errors
/// The first error of `f`.
pub fn median_seconds<T, E>(reps: usize, mut f: impl FnMut() -> Result<T, E>) -> Result<f64, E> {
    f()?;
    let mut times = Vec::with_capacity(reps.max(1));
    for _ in 0..reps.max(1) {
        let start = std::time::Instant::now();
        f()?;
        times.push(start.elapsed().as_secs_f64());
    }
    Ok(median(times))
}

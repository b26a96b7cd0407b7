//! The GPU backend: the device crate's kernels as PTX embedded at build
//! time, loaded and launched through cudarc (thread blocks over patches:
//! one per patch, or for the dynamic updates as many as the device holds
//! at once, each taking queued patches; dynamic shared memory sized to the
//! largest patch). One concept a module:
//!
//! - [`context`]: the device, its modules and kernels, launches, timing;
//! - [`memory`]: copies to and from the device ([`staging`]: the pinned
//!   buffers of large uploads); [`kernel_args`]: parameters on their way
//!   to a launch; [`cubin_cache`]: the compiled kernels kept between runs;
//! - [`queries`]: the static first-order queries;
//! - [`rounds`]: the dynamic mesh on the device and its update rounds,
//!   reductions and exports; [`computations`]: per-element and ring
//!   computations on it; [`snapshot`]: its transfers.

pub mod computations;
pub mod context;
pub mod cubin_cache;
pub mod kernel_args;
pub mod memory;
pub mod queries;
pub mod rounds;
pub mod snapshot;
pub mod staging;

pub use context::{CudaBackend, Loaded, LoadedKernel, PTX, PTX_MISSING};
pub use queries::DeviceMesh;
pub use rounds::CudaRounds;
pub use snapshot::GpuSeconds;

//! The PTX of the project's applications (`apps/kernels`: every
//! application's kernel crate in one module), and [`add_to`], which an
//! application calls before it runs on a backend.

use cavity::backend::{Backend, BackendError};

/// The applications' PTX (empty when the build had no NVPTX toolchain).
pub const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/cavity_app_kernels.ptx"));

/// Adds the applications' kernels to `backend` (once; later calls find
/// them loaded). Nothing on the CPU backend.
///
/// # Errors
/// On the GPU, `BackendError::NoKernels` when the build had no NVPTX
/// toolchain, or a driver error when the module does not load.
pub fn add_to(backend: &Backend) -> Result<(), BackendError> {
    backend.add_kernels(PTX)
}

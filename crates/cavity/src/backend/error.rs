//! The backends' errors, each naming its fix.

use crate::settings::{NamesSettings, Setting};

/// Errors of the backends.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// No usable CUDA driver or device.
    #[error("no CUDA device available: {0}")]
    NoCuda(String),
    /// This build has no GPU kernels: the toolchain that built it could not
    /// build PTX (the reason says what it lacked). Fix: install what it
    /// names, then rebuild (`cargo clean -p cavity` first, or touch
    /// `crates/cavity-device`).
    #[error("this build has no GPU kernels: {0}; then rebuild (cargo clean -p cavity)")]
    NoKernels(&'static str),
    /// No loaded PTX module has the kernel. Fix: add the PTX of the kernel
    /// crate that declares it (`CudaBackend::add_kernels`); the device
    /// crate's own kernels are in its PTX only with its `core-entries`
    /// feature (the default).
    #[error(
        "no loaded PTX has kernel {0}: add the PTX of the kernel crate that declares it (the device crate's own kernels need its core-entries feature)"
    )]
    NoSuchKernel(&'static str),
    /// A kernel of the loaded PTX takes other parameters than its
    /// declaration (`cavity_device::kernel!`) in this build says: the PTX
    /// was built from other sources. Fix: rebuild the kernel crate's PTX
    /// with this build (`cargo clean -p cavity`, or the crate's own build).
    #[error(
        "kernel {kernel} of the PTX takes parameters of {found:?} bytes, its declaration {declared:?}: the PTX was built from other sources; rebuild it"
    )]
    KernelSignature {
        /// The kernel's entry name.
        kernel: &'static str,
        /// The declared parameters' sizes in bytes (zero-sized ones left out).
        declared: Vec<usize>,
        /// The entry point's parameter sizes in bytes.
        found: Vec<usize>,
    },
    /// A CUDA driver call failed.
    #[error("CUDA error while {what}: {source}")]
    Driver {
        /// What was being done.
        what: &'static str,
        /// The driver's error.
        source: cudarc::driver::DriverError,
    },
    /// A patch needs more shared memory than the device gives a block.
    #[error(
        "a patch needs {needed} bytes of shared memory for kernel {kernel}, the device allows {limit}; lower the patch size"
    )]
    SharedMemory {
        /// Bytes needed by the largest patch.
        needed: usize,
        /// The device's per-block limit.
        limit: usize,
        /// The kernel (its entry name).
        kernel: &'static str,
    },
    /// A buffer of the other backend was given to this one (a GPU buffer
    /// to the CPU backend, or a host one to the GPU). Fix: make the buffer
    /// with the backend that uses it.
    #[error("a buffer of another backend was given to this one")]
    BufferBackend,
    /// A buffer of more elements than a kernel's 32-bit indices reach.
    /// Fix: split the work into parts of at most `u32::MAX` elements.
    #[error("a buffer of {0} elements is past the 32-bit indices of the kernels")]
    TooLarge(usize),
    /// A device procedure found its own counts inconsistent (a bug: the
    /// message says where). Fix: report it with the input; the host's
    /// procedure (the CPU backend) gives the result meanwhile.
    #[error("the device's work went wrong: {0}; please report it (the CPU backend avoids it)")]
    Inconsistent(&'static str),
    /// An element past a buffer's end was asked for.
    #[error("element {0} of a buffer of {1}")]
    Index(usize, usize),
}

impl BackendError {
    /// Whether the device ran out of memory (a driver error that a
    /// caller may answer by doing the work another way).
    pub fn is_out_of_memory(&self) -> bool {
        matches!(
            self,
            BackendError::Driver { source, .. }
                if source.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY
        )
    }
}

impl NamesSettings for BackendError {
    fn settings(&self) -> Vec<Setting> {
        match self {
            BackendError::SharedMemory { .. } => vec![Setting::PATCH_SIZE],
            _ => Vec::new(),
        }
    }
}

crate::names_settings!(BackendError);

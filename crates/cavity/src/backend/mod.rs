//! Backends that run the patch kernels: the GPU (embedded PTX through
//! cudarc) and the CPU backend (the same kernels, one patch per rayon worker).
//! `--device auto|cuda|cpu`: auto takes the GPU when a driver and a device
//! exist and says which it chose.

pub mod cpu;
pub mod cubin_cache;
pub mod cuda;
pub mod kernel_args;
pub mod staging;
pub mod territories;

use std::fmt;
use std::str::FromStr;

use cavity_device::dynamic::cavity::CavityApp;
use cavity_device::dynamic::compute::ElementComputation;
use cavity_device::dynamic::layout::Capacity;
use cavity_device::layout::Kind;
use cavity_device::query::Query;

use crate::dynamic::DynamicMesh;
use crate::patched::PatchedMesh;
use crate::rounds::{AnyRounds, CpuRounds, RunError};
use crate::settings::{NamesSettings, Setting};

/// Which backend to use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeviceChoice {
    /// The GPU when one is usable, else the CPU backend.
    #[default]
    Auto,
    /// The GPU; an error when none is usable.
    Cuda,
    /// The CPU backend (deterministic dynamic rounds).
    Cpu,
    /// The CPU backend with racing dynamic rounds, as on the GPU
    /// ([`cpu::Schedule::Racing`]).
    CpuRacing,
}

impl FromStr for DeviceChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(DeviceChoice::Auto),
            "cuda" | "gpu" => Ok(DeviceChoice::Cuda),
            "cpu" => Ok(DeviceChoice::Cpu),
            "cpu-racing" => Ok(DeviceChoice::CpuRacing),
            _ => Err(format!(
                "unknown device '{s}': use auto, cuda, cpu or cpu-racing"
            )),
        }
    }
}

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
}

impl NamesSettings for BackendError {
    fn settings(&self) -> Vec<Setting> {
        match self {
            BackendError::SharedMemory { .. } => vec![Setting::PATCH_SIZE],
            _ => Vec::new(),
        }
    }
}

/// A backend ready to run kernels.
pub enum Backend {
    /// The CPU backend.
    Cpu(cpu::CpuBackend),
    /// The GPU backend.
    Cuda(Box<cuda::CudaBackend>),
}

impl fmt::Debug for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Backend({})", self.name())
    }
}

/// What a driver run on a backend's rounds gave (see
/// [`Backend::run_rounds`]).
#[derive(Clone, Debug)]
pub struct OnRounds<T> {
    /// The driver's result.
    pub value: T,
    /// The device that ran it.
    pub device: String,
    /// On the GPU, where the time went.
    pub gpu_seconds: Option<GpuSeconds>,
}

/// Where the time of a GPU run of rounds went, in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GpuSeconds {
    /// In the update, calibration and compaction kernels of all rounds
    /// (CUDA events around each launch).
    pub kernels: [f64; 3],
    /// Allocating the dynamic mesh on the device and uploading it (wall
    /// clock).
    pub upload: f64,
    /// Copying the mesh back, summed over every copy (wall clock).
    pub copy_back: f64,
}

/// A query's result over all owned source elements, by source handle:
/// row `h` is `values[offsets[h]..offsets[h + 1]]`, in global handles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryResult {
    /// `n + 1` row offsets.
    pub offsets: Vec<u32>,
    /// Concatenated rows.
    pub values: Vec<u32>,
}

impl QueryResult {
    /// Row of source handle `h`.
    pub fn row(&self, h: u32) -> &[u32] {
        &self.values[self.offsets[h as usize] as usize..self.offsets[h as usize + 1] as usize]
    }

    /// Builds offsets from per-source counts.
    pub(crate) fn offsets_of(counts: &[u32]) -> Vec<u32> {
        let mut offsets = Vec::with_capacity(counts.len() + 1);
        let mut sum = 0u32;
        offsets.push(0);
        for &c in counts {
            sum += c;
            offsets.push(sum);
        }
        offsets
    }
}

/// `note` followed by the GPU kernels' compilation when it happened in
/// this run (the first run on a device and driver takes that long).
fn with_origin(note: String, gpu: &cuda::CudaBackend) -> String {
    match gpu.kernel_origin().note() {
        Some(compiled) => format!("{note}; {compiled}"),
        None => note,
    }
}

impl Backend {
    /// Runs `f`, timed: by CUDA events around the work it enqueues on the
    /// GPU ([`cuda::CudaBackend::timed`]), by the wall clock on the CPU
    /// backend (whose kernels run before their launch returns). Returns
    /// its result and the milliseconds.
    ///
    /// # Errors
    /// `f`'s; [`BackendError::Driver`] when the GPU's events fail.
    pub fn timed<T, E: From<BackendError>>(
        &self,
        f: impl FnOnce() -> Result<T, E>,
    ) -> Result<(T, f64), E> {
        match self {
            Backend::Cuda(gpu) => gpu.timed(f),
            Backend::Cpu(_) => {
                let t = std::time::Instant::now();
                let out = f()?;
                Ok((out, t.elapsed().as_secs_f64() * 1e3))
            }
        }
    }

    /// Runs `driver` on this backend's rounds over `mesh` and leaves the
    /// result in `mesh` (the GPU copies it back; `copy_back` turns a failed
    /// copy into the driver's error). When the driver fails, `mesh` still
    /// holds what the rounds left (the GPU copies it back then too, so that
    /// the caller can validate it).
    ///
    /// # Errors
    /// The driver's error (before a failed copy back after it), a failed
    /// upload, or the failed copy back.
    pub fn run_rounds<T, E: From<BackendError>>(
        &self,
        mesh: &mut DynamicMesh,
        driver: impl FnOnce(&mut AnyRounds<'_>) -> Result<T, E>,
        copy_back: impl FnOnce(RunError) -> E,
    ) -> Result<OnRounds<T>, E> {
        match self {
            Backend::Cpu(cpu) => {
                let mut r = AnyRounds::Cpu(CpuRounds::with_backend(mesh, cpu.clone()));
                let value = driver(&mut r)?;
                Ok(OnRounds {
                    value,
                    device: crate::rounds::Rounds::device(&r),
                    gpu_seconds: None,
                })
            }
            Backend::Cuda(gpu) => {
                let mut r = AnyRounds::Cuda(Box::new(cuda::CudaRounds::new(gpu, mesh)?));
                let ran = driver(&mut r);
                let copied = crate::rounds::Rounds::mesh(&mut r).map(|_| ());
                let value = ran?;
                copied.map_err(copy_back)?;
                let gpu_seconds = match &r {
                    AnyRounds::Cuda(r) => Some(r.seconds()),
                    AnyRounds::Cpu(_) => None,
                };
                Ok(OnRounds {
                    value,
                    device: crate::rounds::Rounds::device(&r),
                    gpu_seconds,
                })
            }
        }
    }

    /// Picks a backend. Returns it and a sentence saying what was chosen and
    /// why (for auto without a GPU: the reason and the fallback).
    pub fn select(choice: DeviceChoice) -> Result<(Backend, String), BackendError> {
        Backend::select_with(choice, &|| {})
    }

    /// [`Backend::select`], calling `before_compile` when a GPU is opened
    /// whose kernels are not in the cache yet, before they are compiled
    /// (see [`cuda::CudaBackend::with_notice`]).
    ///
    /// # Errors
    /// As [`Backend::select`].
    pub fn select_with(
        choice: DeviceChoice,
        before_compile: &dyn Fn(),
    ) -> Result<(Backend, String), BackendError> {
        match choice {
            DeviceChoice::Cpu => {
                let b = Backend::Cpu(cpu::CpuBackend::new());
                let note = format!("using {} (--device cpu)", b.name());
                Ok((b, note))
            }
            DeviceChoice::CpuRacing => {
                let b = Backend::Cpu(cpu::CpuBackend::with_schedule(cpu::Schedule::Racing));
                let note = format!("using {} (--device cpu-racing)", b.name());
                Ok((b, note))
            }
            DeviceChoice::Cuda => {
                let c = cuda::CudaBackend::with_notice(before_compile)?;
                let note = with_origin(format!("using {} (--device cuda)", c.name()), &c);
                Ok((Backend::Cuda(Box::new(c)), note))
            }
            DeviceChoice::Auto => match cuda::CudaBackend::with_notice(before_compile) {
                Ok(c) => {
                    let note = with_origin(format!("using {} (auto: GPU found)", c.name()), &c);
                    Ok((Backend::Cuda(Box::new(c)), note))
                }
                Err(e) => {
                    let b = Backend::Cpu(cpu::CpuBackend::new());
                    let note = format!("using {} (auto: {e})", b.name());
                    Ok((b, note))
                }
            },
        }
    }

    /// Whether the update kernel of `A` can run at capacity `cap`: on the
    /// GPU its shared memory must fit a block (the largest patch decides);
    /// the CPU backend has no such limit.
    pub fn fits_update<A: CavityApp>(&self, cap: &Capacity) -> bool {
        match self {
            Backend::Cpu(_) => true,
            Backend::Cuda(c) => c.fits_update::<A>(cap),
        }
    }

    /// Whether the kernel of per-element computation `C` can run at
    /// capacity `cap` (as [`Backend::fits_update`]).
    pub fn fits_for_each<C: ElementComputation>(&self, cap: &Capacity) -> bool {
        match self {
            Backend::Cpu(_) => true,
            Backend::Cuda(c) => c.fits_for_each::<C>(cap),
        }
    }

    /// Human-readable device name.
    pub fn name(&self) -> String {
        match self {
            Backend::Cpu(c) => c.name(),
            Backend::Cuda(c) => c.name(),
        }
    }

    /// Runs `query` on every owned element and returns all results in
    /// global handles.
    pub fn query(&self, mesh: &PatchedMesh, query: Query) -> Result<QueryResult, BackendError> {
        match self {
            Backend::Cpu(c) => Ok(c.query(mesh, query)),
            Backend::Cuda(c) => c.query(mesh, query),
        }
    }

    /// Adds the kernels of a kernel crate (its PTX, built by
    /// `cavity_ptx_builder`), so that this backend runs them: the GPU loads
    /// the module ([`cuda::CudaBackend::add_kernels`]); the CPU backend
    /// runs every declared kernel's body from its type and needs nothing.
    ///
    /// # Errors
    /// On the GPU, as [`cuda::CudaBackend::add_kernels`].
    pub fn add_kernels(&self, ptx: &str) -> Result<(), BackendError> {
        match self {
            Backend::Cpu(_) => Ok(()),
            Backend::Cuda(gpu) => gpu.add_kernels(ptx).map(|_| ()),
        }
    }
}

/// Largest shared-memory size `query` needs over the patches with
/// `block_dim` threads.
pub fn max_shared_bytes(mesh: &PatchedMesh, query: Query, block_dim: u32) -> usize {
    mesh.patches
        .iter()
        .map(|p| cavity_device::query::shared_bytes(p, query, block_dim))
        .max()
        .unwrap_or(0)
}

/// Element count of the query's source kind.
fn sources(mesh: &PatchedMesh, query: Query) -> usize {
    mesh.count(query.source())
}

/// Vertex positions of `mesh` in vertex-handle order (3 floats each).
pub fn positions_by_handle(mesh: &PatchedMesh, positions: &[[f32; 3]]) -> Vec<f32> {
    mesh.to_input(Kind::Vertex)
        .iter()
        .flat_map(|&v| positions[v as usize])
        .collect()
}

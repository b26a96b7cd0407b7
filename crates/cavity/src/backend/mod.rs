//! Backends that run the patch kernels: the GPU ([`cuda`]: embedded PTX
//! through cudarc) and the CPU backend ([`cpu`]: the same kernels, one
//! patch per rayon worker), behind [`Backend`]; [`AnyRounds`] is the
//! dynamic rounds of either ([`rounds`]). `--device auto|cuda|cpu`: auto
//! takes the GPU when a driver and a device exist and says which it chose.

pub mod buffer;
pub mod cpu;
pub mod cuda;
pub mod error;
pub mod export;
pub mod landing;
pub mod partition;
pub mod patch_build;
pub mod patches;
pub mod placed;
pub mod rounds;
pub mod survey;
pub mod topology;

pub use cuda::GpuSeconds;
pub use error::BackendError;
pub use export::{Exported, FacesOn};
pub use landing::Landing;
pub use partition::{PartitionError, PartitionRounds};
pub use placed::{PlaceError, PlacedMesh};
pub use rounds::AnyRounds;
pub use survey::{EdgeLengths, SurveyOn, Valences};
pub use topology::{TopologyOn, VertexFacesOn};

use std::fmt;
use std::str::FromStr;

use cavity_device::dynamic::cavity::CavityApp;
use cavity_device::dynamic::compute::ElementComputation;
use cavity_device::dynamic::layout::Capacity;
use cavity_device::query::Query;

use crate::dynamic::DynamicMesh;
use crate::patched::PatchedMesh;
use crate::query_result::QueryResult;
use crate::rounds::RunError;
use cpu::CpuRounds;

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

/// Runs `driver` on the GPU's rounds `r`, then copies the mesh back
/// (also after a failed driver; a failed copy is `copy_back`'s error after
/// the driver's): [`Backend::run_rounds`]'s GPU half.
fn drive<T, E>(
    mut r: AnyRounds<'_>,
    driver: impl FnOnce(&mut AnyRounds<'_>) -> Result<T, E>,
    copy_back: impl FnOnce(RunError) -> E,
) -> Result<OnRounds<T>, E> {
    let ran = driver(&mut r);
    let copied = crate::rounds::Rounds::mesh(&mut r).map(|_| ());
    let value = ran?;
    copied.map_err(copy_back)?;
    Ok(on_rounds(&r, value))
}

/// What the rounds `r` gave: `value`, with the device and, on the GPU,
/// where the time went.
fn on_rounds<T>(r: &AnyRounds<'_>, value: T) -> OnRounds<T> {
    let gpu_seconds = match r {
        AnyRounds::Cuda(r) => Some(r.seconds()),
        AnyRounds::Cpu(_) => None,
    };
    OnRounds {
        value,
        device: crate::rounds::Rounds::device(r),
        gpu_seconds,
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

/// A point in a backend's queued work ([`Backend::mark`]).
pub struct Mark(MarkAt);

/// Where a [`Mark`] was taken.
enum MarkAt {
    /// A CUDA event on the backend's stream.
    Event(cudarc::driver::CudaEvent),
    /// The wall clock.
    Clock(std::time::Instant),
}

impl Mark {
    /// Seconds from `earlier` to this mark: on the GPU the time between
    /// the two events (waiting for this one to complete), on the CPU
    /// backend between the two clock readings.
    ///
    /// # Errors
    /// [`BackendError::Driver`] when the events cannot be timed (marks of
    /// two GPUs, or a failed launch before them).
    ///
    /// # Panics
    /// When one mark is the GPU's and the other the CPU backend's (marks of
    /// two backends).
    pub fn seconds_since(&self, earlier: &Mark) -> Result<f64, BackendError> {
        match (&earlier.0, &self.0) {
            (MarkAt::Event(a), MarkAt::Event(b)) => a
                .elapsed_ms(b)
                .map(|ms| f64::from(ms) * 1e-3)
                .map_err(cuda::context::driver("timing two events")),
            (MarkAt::Clock(a), MarkAt::Clock(b)) => Ok(b.duration_since(*a).as_secs_f64()),
            _ => panic!("the two marks are of two backends"),
        }
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

    /// A mark of this backend's work so far, for timing the stages of
    /// work the host does not wait for: on the GPU a CUDA event recorded
    /// on the stream (it completes when the work queued before it does),
    /// on the CPU backend the wall clock (whose kernels run before their
    /// launch returns). Two marks' difference is
    /// [`Mark::seconds_since`].
    ///
    /// # Errors
    /// [`BackendError::Driver`] when the GPU's event cannot be recorded.
    pub fn mark(&self) -> Result<Mark, BackendError> {
        Ok(Mark(match self {
            Backend::Cuda(gpu) => MarkAt::Event(gpu.record()?),
            Backend::Cpu(_) => MarkAt::Clock(std::time::Instant::now()),
        }))
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
                let r = AnyRounds::Cuda(Box::new(cuda::CudaRounds::new(gpu, mesh)?));
                drive(r, driver, copy_back)
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

    /// Bytes of device memory free now on the GPU
    /// ([`cuda::CudaBackend::free_memory`]: the driver's `cuMemGetInfo`
    /// once the memory pool gave back what it kept); `None` on the CPU
    /// backend, whose memory is the host's
    /// (`crate::memory::available_host_bytes`).
    ///
    /// # Errors
    /// [`BackendError::Driver`] when the driver cannot say.
    pub fn free_device_memory(&self) -> Result<Option<u64>, BackendError> {
        match self {
            Backend::Cpu(_) => Ok(None),
            Backend::Cuda(c) => c.free_memory().map(Some),
        }
    }

    /// Bytes of device memory held at once at most since the backend
    /// opened (the device memory pool's high-water mark:
    /// [`cuda::CudaBackend::peak_memory`]); `None` on the CPU backend and
    /// on a GPU without memory pools.
    ///
    /// # Errors
    /// [`BackendError::Driver`] when the driver cannot say.
    pub fn peak_device_memory(&self) -> Result<Option<u64>, BackendError> {
        match self {
            Backend::Cpu(_) => Ok(None),
            Backend::Cuda(c) => c.peak_memory(),
        }
    }

    /// Has the GPU pin larger staging buffers for copies of gigabytes
    /// ([`cuda::CudaBackend::stage_larger`]), well before them; nothing on
    /// the CPU backend.
    pub fn stage_larger(&self) {
        if let Backend::Cuda(gpu) = self {
            gpu.stage_larger();
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

/// Declares a kernel crate's PTX module in the host crate whose build script
/// builds it (`cavity_ptx_builder::build_into_out_dir("kernels", FILE)`):
/// `pub const PTX` (the text, empty when the build had no NVPTX toolchain)
/// and `pub fn add_kernels(&Backend)`, which loads the module the first
/// time an application runs on the GPU (once per backend: later calls find
/// it loaded) and does nothing on the CPU backend. Each application ships
/// its own module this way, so that a program loads only the kernels of
/// the applications it runs.
///
/// `add_kernels`'s errors: [`BackendError::NoKernels`] when the build had
/// no NVPTX toolchain, a driver error when the module does not load.
#[macro_export]
macro_rules! kernel_module {
    ($file:literal) => {
        /// This crate's kernels as PTX, built from its kernel crate by the
        /// build script (empty when the build had no NVPTX toolchain).
        pub const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/", $file));

        /// Adds this crate's kernels to `backend`: the GPU loads their PTX
        /// module at the first call; nothing on the CPU backend.
        ///
        /// # Errors
        /// `BackendError::NoKernels` when the build had no NVPTX toolchain;
        /// a driver error when the module does not load.
        pub fn add_kernels(
            backend: &$crate::backend::Backend,
        ) -> ::std::result::Result<(), $crate::backend::BackendError> {
            backend.add_kernels(PTX)
        }
    };
}

/// Runs `work` on this thread and `during` on another at the same time;
/// what both returned. A panic of `during` is resumed on this thread.
pub fn beside<W, D: Send>(work: impl FnOnce() -> W, during: impl FnOnce() -> D + Send) -> (W, D) {
    std::thread::scope(|scope| {
        let other = scope.spawn(during);
        let done = work();
        let during = other
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (done, during)
    })
}

/// A backend being given back on another thread ([`Backend::give_back`]):
/// its device memory freed and its CUDA context destroyed (0.03-0.1 s on
/// an H200) while the caller goes on, writing its output; waited for by
/// [`GivenBack::wait`], or when dropped.
pub struct GivenBack(Option<std::thread::JoinHandle<()>>);

impl Backend {
    /// This backend released on another thread (see [`GivenBack`]).
    pub fn give_back(self) -> GivenBack {
        GivenBack(Some(std::thread::spawn(move || drop(self))))
    }
}

impl GivenBack {
    /// Waits for the release to end; `false` where it failed (a panic in
    /// the driver's teardown, which touches no output).
    pub fn wait(mut self) -> bool {
        self.join()
    }

    /// Joins the releasing thread, once.
    fn join(&mut self) -> bool {
        self.0.take().is_none_or(|h| h.join().is_ok())
    }
}

impl Drop for GivenBack {
    fn drop(&mut self) {
        self.join();
    }
}

//! The CUDA context: device 0 opened through cudarc, the device crate's
//! PTX loaded (from the kernels' cache, [`super::cubin_cache`]), kernel
//! crates' modules added, declared kernels loaded by type and launched on
//! the one stream all work is queued on, and timing by CUDA events.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use cudarc::driver::sys::{self, CUdevice_attribute, CUevent_flags, CUfunction_attribute};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaStream, DriverError, LaunchConfig,
};

use cavity_device::dynamic::cavity::CavityApp;
use cavity_device::dynamic::compute::{self, ElementComputation, FOR_EACH_BOUNDS};
use cavity_device::dynamic::layout::Capacity;
use cavity_device::dynamic::update;
use cavity_device::kernel::{DYNAMIC_BOUNDS, Kernel};

use super::cubin_cache::{self, KernelOrigin};
use super::kernel_args::KernelArgs;
use super::staging::{FIRST_PIECE, PIECE, Staging};
use crate::backend::error::BackendError;

/// The device crate compiled to PTX by `build.rs` (sm_90 unless
/// `CAVITY_CUDA_ARCH` said otherwise at build time).
pub const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/cavity_device.ptx"));

/// A hash of [`PTX`] taken at build time: the key of its compiled form in
/// the kernels' cache ([`super::cubin_cache`]).
const PTX_HASH: u64 = include!(concat!(env!("OUT_DIR"), "/ptx_hash.rs"));

/// Why this build has no PTX ([`PTX`] is empty): the build script's
/// toolchain could not build it (`cavity_ptx_builder::Outcome::Skipped`).
pub const PTX_MISSING: Option<&str> = include!(concat!(env!("OUT_DIR"), "/ptx_missing.rs"));

pub(crate) fn driver(what: &'static str) -> impl Fn(DriverError) -> BackendError + Copy {
    move |source| BackendError::Driver { what, source }
}

/// A CUDA context on device 0 with the kernels loaded.
pub struct CudaBackend {
    pub(super) ctx: Arc<CudaContext>,
    pub(super) stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    /// Modules of kernel crates added with [`CudaBackend::add_kernels`],
    /// with their PTX's hash.
    added: RwLock<Vec<(u64, Arc<CudaModule>)>>,
    /// The kernels found so far ([`CudaBackend::load`]), their parameters
    /// checked, each with the most dynamic shared memory its launches were
    /// allowed: a launch finds its kernel here without asking the driver
    /// (a search of the modules and of the parameters took about 0.1 ms a
    /// launch, which searches launching a level at a time repeat
    /// thousands of times).
    loaded: RwLock<HashMap<&'static str, (CudaFunction, i32)>>,
    name: String,
    smem_limit: usize,
    origin: KernelOrigin,
    /// Pinned buffers for large copies: allocated on a thread of their
    /// own as the backend opens ([`CudaBackend::stage_beside`]), or at the
    /// first copy that needs them if that comes first; replaced by larger
    /// ones on request ([`CudaBackend::stage_larger`]).
    pub(super) staging: Arc<Mutex<Option<Staging>>>,
    /// Whether [`CudaBackend::stage_larger`] was called.
    staged_larger: AtomicBool,
    /// The threads allocating the staging buffers, joined as the backend
    /// closes.
    stagers: Mutex<Vec<std::thread::JoinHandle<()>>>,
}

/// A declared kernel ([`cavity_device::kernel`](mod@cavity_device::kernel)) loaded from the module,
/// with the dynamic shared memory of its launches; `P` is its parameter
/// tuple, so that a launch takes exactly the parameters the kernel
/// declares. Made by [`CudaBackend::load`] only.
pub struct Loaded<P> {
    pub(super) f: CudaFunction,
    smem: u32,
    pub(super) threads: u32,
    _params: PhantomData<fn(P)>,
}

/// Kernel `K` loaded ([`Loaded`] of its parameters).
pub type LoadedKernel<K> = Loaded<<K as Kernel>::Params>;

impl<P> Loaded<P> {
    /// Threads per block of its launches (the kernel's declared bounds).
    pub fn threads(&self) -> u32 {
        self.threads
    }
}

impl CudaBackend {
    /// Opens device 0 and loads the PTX. Errors (never panics) when the
    /// driver library is missing, no device exists or the PTX does not load.
    pub fn new() -> Result<CudaBackend, BackendError> {
        CudaBackend::with_notice(&|| {})
    }

    /// [`CudaBackend::new`], calling `before_compile` when the kernels are
    /// not in the cache and are about to be compiled for this device
    /// ([`super::cubin_cache`]; up to about 35 s on an H100). With the cache
    /// off (`CUDA_CACHE_DISABLE=1`, or no cache directory) the driver loads
    /// the PTX itself and nothing is called.
    ///
    /// # Errors
    /// As [`CudaBackend::new`].
    pub fn with_notice(before_compile: &dyn Fn()) -> Result<CudaBackend, BackendError> {
        if let Some(reason) = PTX_MISSING {
            return Err(BackendError::NoKernels(reason));
        }
        // cudarc's dynamic loading panics when libcuda is absent: turn that
        // into an error, silencing the panic message.
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let ctx = std::panic::catch_unwind(|| CudaContext::new(0));
        std::panic::set_hook(hook);
        let ctx = match ctx {
            Err(_) => {
                return Err(BackendError::NoCuda(
                    "the CUDA driver library (libcuda.so) could not be loaded".into(),
                ));
            }
            Ok(Err(e)) => return Err(BackendError::NoCuda(format!("driver error {e}"))),
            Ok(Ok(ctx)) => ctx,
        };
        // The memory pool is opened (its first allocation, 10-25 ms) while
        // the module loads (issue 55: the first upload of patching waited
        // for it). A pool that could not be opened is opened by the first
        // allocation instead, and may give freed memory back at every
        // synchronisation: slower, never wrong.
        let pool = ctx
            .has_async_alloc()
            .then(|| {
                let ctx = Arc::clone(&ctx);
                std::thread::Builder::new()
                    .spawn(move || open_pool(&ctx))
                    .ok()
            })
            .flatten();
        let loaded = (|| {
            let name = ctx.name().map_err(driver("reading the device name"))?;
            let smem_limit =
                ctx.attribute(
                    CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                )
                .map_err(driver("reading the shared-memory limit"))? as usize;
            let (module, origin) = cubin_cache::load(&ctx, PTX, PTX_HASH, before_compile)
                .map_err(driver("loading the PTX (built for sm_90 by default; set CAVITY_CUDA_ARCH at build time for other GPUs)"))?;
            Ok::<_, BackendError>((name, smem_limit, module, origin))
        })();
        // Joined on every path: the thread holds the context.
        if let Some(pool) = pool {
            let _ = pool.join();
        }
        let (name, smem_limit, module, origin) = loaded?;
        let stream = ctx.default_stream();
        let backend = CudaBackend {
            ctx,
            stream,
            module,
            added: RwLock::new(Vec::new()),
            loaded: RwLock::new(HashMap::new()),
            name,
            smem_limit,
            origin,
            staging: Arc::new(Mutex::new(None)),
            stagers: Mutex::new(Vec::new()),
            staged_larger: AtomicBool::new(false),
        };
        // A reset the driver refuses leaves the mark counting from the
        // pool's creation: the peak is then too high, never a failed start.
        let _ = backend.reset_peak_memory();
        let first = backend.stage_beside();
        backend
            .stagers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(first);
        Ok(backend)
    }

    /// Where the kernels came from (the cache, or compiled in this run).
    pub fn kernel_origin(&self) -> &KernelOrigin {
        &self.origin
    }

    /// Bytes of device memory free now: the driver's count, once the
    /// memory pool gave back the memory it kept of freed buffers (the pool
    /// keeps it for the next allocations), so that the count is what one
    /// allocation can take, and other processes can take it too.
    ///
    /// # Errors
    /// [`BackendError::Driver`] when the driver cannot say.
    pub fn free_memory(&self) -> Result<u64, BackendError> {
        self.trim_pool()?;
        let (free, _total) = self
            .ctx
            .mem_get_info()
            .map_err(driver("reading the free device memory"))?;
        Ok(free as u64)
    }

    /// Allocates the staging buffers on a thread of its own (the pair of
    /// [`FIRST_PIECE`] bytes: page-locking 16 MB takes a few milliseconds,
    /// which the host's work before the first large copy hides); the first
    /// copy that needs them waits for them, or allocates them itself when
    /// the thread has not started yet. A failed allocation there is left
    /// for that copy to meet and report.
    fn stage_beside(&self) -> std::thread::JoinHandle<()> {
        let (ctx, staging) = (Arc::clone(&self.ctx), Arc::clone(&self.staging));
        std::thread::spawn(move || {
            let mut guard = staging.lock().unwrap_or_else(|e| e.into_inner());
            if guard.is_none() {
                *guard = Staging::new(&ctx, FIRST_PIECE).ok();
            }
        })
    }

    /// Replaces the staging buffers with a pair of [`PIECE`] bytes, pinned
    /// on a thread of its own without holding the staging (copies go on
    /// through the first pair meanwhile): for a command that copies
    /// gigabytes, called well before (Polylla, while the host
    /// triangulates). Page-locking them takes 20-35 ms, during which the
    /// driver's other calls wait (issue 55: the remeshing's patch stage at
    /// 6.39 M faces 0.073-0.076 s → 0.103-0.107 s with the pair pinned
    /// beside it), which is why the backend does not do it by itself. A
    /// failed allocation leaves the first pair in place. Only the first
    /// call does anything.
    pub fn stage_larger(&self) {
        if self.staged_larger.swap(true, Ordering::AcqRel) {
            return;
        }
        let (ctx, staging) = (Arc::clone(&self.ctx), Arc::clone(&self.staging));
        let grow = std::thread::spawn(move || {
            if let Ok(larger) = Staging::new(&ctx, PIECE) {
                let first = staging
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .replace(larger);
                // Dropped out of the lock: it waits for its copies.
                drop(first);
            }
        });
        self.stagers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(grow);
    }

    /// Gives the memory the pool keeps unused back to the driver
    /// (`cuMemPoolTrimTo`).
    ///
    /// # Errors
    /// [`BackendError::Driver`] when the driver refuses.
    fn trim_pool(&self) -> Result<(), BackendError> {
        if !self.ctx.has_async_alloc() {
            return Ok(());
        }
        let pool = memory_pool(&self.ctx)?;
        // SAFETY: `pool` is the device's default pool; trimming frees only
        // memory no allocation holds.
        unsafe { sys::cuMemPoolTrimTo(pool, 0) }
            .result()
            .map_err(driver("giving the memory pool's unused memory back"))
    }

    /// Bytes of device memory held at once at most since the backend
    /// opened: the high-water mark (`CU_MEMPOOL_ATTR_USED_MEM_HIGH`) of the
    /// device's default memory pool, which every buffer here comes from
    /// (cudarc allocates stream-ordered, `cuMemAllocAsync`, where the
    /// device has memory pools). Kernel code and the driver's own memory
    /// are not counted. `None` where the device has no memory pools (the
    /// buffers then bypass the pool, so its mark says nothing).
    ///
    /// # Errors
    /// [`BackendError::Driver`] when the driver cannot say.
    pub fn peak_memory(&self) -> Result<Option<u64>, BackendError> {
        if !self.ctx.has_async_alloc() {
            return Ok(None);
        }
        self.pool_attribute(sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH)
            .map(Some)
    }

    /// A byte count of the device's default memory pool (`attribute` one of
    /// its `cuuint64_t` attributes).
    fn pool_attribute(&self, attribute: sys::CUmemPool_attribute) -> Result<u64, BackendError> {
        let mut value: u64 = 0;
        let pool = memory_pool(&self.ctx)?;
        // SAFETY: `pool` is the device's default pool and the attribute's
        // value is a `cuuint64_t`, which `value` is.
        let r = unsafe { sys::cuMemPoolGetAttribute(pool, attribute, (&raw mut value).cast()) };
        r.result()
            .map_err(driver("reading an attribute of the memory pool"))?;
        Ok(value)
    }

    /// Starts [`CudaBackend::peak_memory`]'s count again from the memory
    /// held now (the pool is the device's, shared with any other context of
    /// the process).
    fn reset_peak_memory(&self) -> Result<(), BackendError> {
        // Setting the mark to 0 resets it to the memory held now.
        set_pool_attribute(
            &self.ctx,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH,
            0,
            "resetting the memory pool's high-water mark",
        )
    }

    /// The device name, e.g. "NVIDIA H100 80GB HBM3".
    pub fn name(&self) -> String {
        self.name.clone()
    }

    /// Whether the update kernel of `A` gets the shared memory it needs at
    /// capacity `cap`.
    pub fn fits_update<A: CavityApp>(&self, cap: &Capacity) -> bool {
        update::shared_bytes::<A>(cap, DYNAMIC_BOUNDS.threads) <= self.smem_limit
    }

    /// Whether the kernel of per-element computation `C` gets the shared
    /// memory it needs at capacity `cap`.
    pub fn fits_for_each<C: ElementComputation>(&self, cap: &Capacity) -> bool {
        compute::shared_bytes::<C>(cap, FOR_EACH_BOUNDS.threads) <= self.smem_limit
    }

    /// The stream all work is queued on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Adds the kernels of a kernel crate: `ptx`, built by
    /// `cavity_ptx_builder` from a crate whose kernels are declared with
    /// `cavity_device::kernel!` or `cavity_kernels!` (and that depends on
    /// `cavity-device` without its default `core-entries` feature, so that
    /// its PTX holds its own kernels only). [`CudaBackend::load`] then
    /// finds them, and the dynamic rounds find a cavity application's
    /// update and survey kernels there. The compiled module goes to the
    /// kernels' cache as the device crate's does.
    ///
    /// The same PTX twice (or the device crate's own) is loaded once: the
    /// second call returns [`KernelOrigin::Loaded`]. The module loads with
    /// no lock held, so that kernels already loaded launch meanwhile (the
    /// remeshing loads its module beside the input's analysis); of two
    /// calls loading the same PTX at once, the first to finish is kept.
    ///
    /// # Errors
    /// [`BackendError::NoKernels`] for an empty `ptx` (the kernel crate's
    /// build skipped the PTX step); a driver error when it does not load.
    pub fn add_kernels(&self, ptx: &str) -> Result<KernelOrigin, BackendError> {
        if ptx.is_empty() {
            return Err(BackendError::NoKernels(
                "the kernel crate's PTX is empty: its build skipped the PTX step",
            ));
        }
        let mut hasher = std::hash::DefaultHasher::new();
        std::hash::Hash::hash(ptx, &mut hasher);
        let hash = std::hash::Hasher::finish(&hasher);
        let held = |added: &[(u64, Arc<CudaModule>)]| {
            hash == PTX_HASH || added.iter().any(|(h, _)| *h == hash)
        };
        if held(&self.added.read().unwrap_or_else(|e| e.into_inner())) {
            return Ok(KernelOrigin::Loaded);
        }
        let (module, origin) = cubin_cache::load(&self.ctx, ptx, hash, &|| {})
            .map_err(driver("loading a kernel crate's PTX"))?;
        let mut added = self.added.write().unwrap_or_else(|e| e.into_inner());
        if held(&added) {
            return Ok(KernelOrigin::Loaded);
        }
        added.push((hash, module));
        Ok(origin)
    }

    /// The function `name` of the device crate's module or of an added
    /// one (the first that has it).
    fn function(&self, name: &'static str) -> Result<CudaFunction, BackendError> {
        use cudarc::driver::sys::CUresult;
        let added = self.added.read().unwrap_or_else(|e| e.into_inner());
        for module in std::iter::once(&self.module).chain(added.iter().map(|(_, m)| m)) {
            match module.load_function(name) {
                Ok(f) => return Ok(f),
                Err(e) if e.0 == CUresult::CUDA_ERROR_NOT_FOUND => {}
                Err(e) => return Err(driver("finding a kernel in the PTX")(e)),
            }
        }
        Err(BackendError::NoSuchKernel(name))
    }

    /// Kernel `K`'s function, its parameters checked against the
    /// declaration, with its dynamic shared-memory limit now.
    ///
    /// # Errors
    /// As [`CudaBackend::load`].
    fn checked_function<K: Kernel>(&self) -> Result<(CudaFunction, i32), BackendError>
    where
        K::Params: KernelArgs,
    {
        let f = self.function(K::NAME)?;
        let declared = K::Params::sizes();
        if let Some(found) = param_sizes(&f)
            && found != declared
        {
            return Err(BackendError::KernelSignature {
                kernel: K::NAME,
                declared,
                found,
            });
        }
        let attr = CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
        let limit = f
            .get_attribute(attr)
            .map_err(driver("reading the kernel's shared-memory limit"))?;
        Ok((f, limit))
    }

    /// Kernel `K` from the module, its launches with `smem` bytes of
    /// dynamic shared memory per block.
    ///
    /// # Errors
    /// [`BackendError::SharedMemory`] when `smem` exceeds the device's
    /// per-block limit; [`BackendError::NoSuchKernel`] when no loaded
    /// module has it; [`BackendError::KernelSignature`] when its entry
    /// point takes other parameters than the declaration says.
    pub fn load<K: Kernel>(&self, smem: usize) -> Result<Loaded<K::Params>, BackendError>
    where
        K::Params: KernelArgs,
    {
        if smem > self.smem_limit {
            return Err(BackendError::SharedMemory {
                needed: smem,
                limit: self.smem_limit,
                kernel: K::NAME,
            });
        }
        let cached = self
            .loaded
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(K::NAME)
            .cloned();
        let f = match cached {
            Some((f, limit)) if smem as i32 <= limit => f,
            _ => {
                // Found, and its limit raised, under the lock: the driver's
                // limit is the one kept.
                let mut loaded = self.loaded.write().unwrap_or_else(|e| e.into_inner());
                let entry = match loaded.entry(K::NAME) {
                    Entry::Occupied(e) => e.into_mut(),
                    Entry::Vacant(e) => e.insert(self.checked_function::<K>()?),
                };
                // The function's limit is shared by every `Loaded` of it:
                // it only grows.
                if smem as i32 > entry.1 {
                    let attr =
                        CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
                    entry
                        .0
                        .set_attribute(attr, smem as i32)
                        .map_err(driver("raising the kernel's shared-memory limit"))?;
                    entry.1 = smem as i32;
                }
                entry.0.clone()
            }
        };
        Ok(Loaded {
            f,
            smem: smem as u32,
            threads: K::BOUNDS.threads,
            _params: PhantomData,
        })
    }

    /// Kernel `K` as [`CudaBackend::load`] loads it, with all of the
    /// multiprocessor's unified memory as shared memory, so that as many
    /// blocks fit as its launch bounds ask for (the dynamic kernels).
    ///
    /// # Errors
    /// As [`CudaBackend::load`].
    pub fn load_carved<K: Kernel>(&self, smem: usize) -> Result<Loaded<K::Params>, BackendError>
    where
        K::Params: KernelArgs,
    {
        let k = self.load::<K>(smem)?;
        k.f.set_attribute(
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
            100,
        )
        .map_err(driver("setting the kernel's shared-memory carveout"))?;
        Ok(k)
    }

    /// Launches `kernel` on `grid` blocks (at least one) of its declared
    /// threads per block, with `params`.
    ///
    /// # Safety
    /// `params` keep the kernel's contract (its declaration's `# Safety`):
    /// the memory they address is live and stays so until the kernel
    /// completes on the stream; `kernel` was loaded with the dynamic shared
    /// memory that contract asks for, and `grid` is the grid it names.
    ///
    /// # Errors
    /// A driver error when the launch fails.
    pub unsafe fn launch<P: KernelArgs>(
        &self,
        kernel: &Loaded<P>,
        grid: u32,
        params: P,
    ) -> Result<(), BackendError> {
        let mut b = self.stream.launch_builder(&kernel.f);
        params.push(&mut b);
        let cfg = LaunchConfig {
            grid_dim: (grid.max(1), 1, 1),
            block_dim: (kernel.threads, 1, 1),
            shared_mem_bytes: kernel.smem,
        };
        // SAFETY: `params` is the kernel's parameter tuple (`Loaded<P>`
        // comes from the kernel's declaration); the caller keeps its
        // contract.
        unsafe { b.launch(cfg) }.map_err(driver("launching a kernel"))?;
        Ok(())
    }

    /// Times `launch` with CUDA events: `warmup` untimed runs, then `reps`
    /// timed ones; returns each run's milliseconds.
    pub fn time(
        &self,
        warmup: usize,
        reps: usize,
        mut launch: impl FnMut() -> Result<(), BackendError>,
    ) -> Result<Vec<f64>, BackendError> {
        for _ in 0..warmup {
            launch()?;
        }
        (0..reps).map(|_| Ok(self.timed(&mut launch)?.1)).collect()
    }

    /// Runs `f` between two CUDA events recorded on the stream; returns
    /// its result and the milliseconds between the events (the GPU work
    /// `f` enqueues, and whatever `f` waits for on the host meanwhile).
    ///
    /// # Errors
    /// `f`'s; [`BackendError::Driver`] when an event cannot be recorded or
    /// timed.
    pub fn timed<T, E: From<BackendError>>(
        &self,
        f: impl FnOnce() -> Result<T, E>,
    ) -> Result<(T, f64), E> {
        let start = self.record()?;
        let out = f()?;
        let end = self.record()?;
        let ms = start.elapsed_ms(&end).map_err(driver("timing"))?;
        Ok((out, f64::from(ms)))
    }

    /// A CUDA event recorded on the stream now: it completes when the
    /// work queued before it does ([`crate::backend::Mark`]).
    ///
    /// # Errors
    /// [`BackendError::Driver`] when the event cannot be recorded.
    pub fn record(&self) -> Result<cudarc::driver::CudaEvent, BackendError> {
        let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
        self.stream
            .record_event(flags)
            .map_err(driver("recording an event"))
    }

    /// Waits for all queued work.
    pub fn synchronize(&self) -> Result<(), BackendError> {
        self.ctx.synchronize().map_err(driver("synchronizing"))
    }
}

impl Drop for CudaBackend {
    /// Waits for the staging buffers' threads, then gives the memory the
    /// pool kept back to the driver (errors are ignored: the context is
    /// closing).
    fn drop(&mut self) {
        let stagers = self.stagers.get_mut().unwrap_or_else(|e| e.into_inner());
        for stager in stagers.drain(..) {
            let _ = stager.join();
        }
        let _ = self.trim_pool();
    }
}

/// The device's default memory pool.
fn memory_pool(ctx: &CudaContext) -> Result<sys::CUmemoryPool, BackendError> {
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    ctx.bind_to_thread()
        .map_err(driver("binding the context to this thread"))?;
    // SAFETY: `pool` is written by the driver; the device handle is the
    // context's own.
    let r = unsafe { sys::cuDeviceGetDefaultMemPool(&raw mut pool, ctx.cu_device()) };
    r.result()
        .map_err(driver("reading the device's memory pool"))?;
    Ok(pool)
}

/// Sets the 64-bit attribute `attribute` of the device's default memory
/// pool to `value` (nothing without memory pools); `what` names the step
/// in a driver error.
fn set_pool_attribute(
    ctx: &CudaContext,
    attribute: sys::CUmemPool_attribute,
    mut value: u64,
    what: &'static str,
) -> Result<(), BackendError> {
    if !ctx.has_async_alloc() {
        return Ok(());
    }
    let pool = memory_pool(ctx)?;
    // SAFETY: `pool` is the device's default pool, and both attributes set
    // here (the release threshold, the high-water mark) take a
    // `cuuint64_t`, which `value` is.
    let r = unsafe { sys::cuMemPoolSetAttribute(pool, attribute, (&raw mut value).cast()) };
    r.result().map_err(driver(what))
}

/// Opens the device's default memory pool for the backend: has it keep
/// the memory of freed buffers for the next allocations (its release
/// threshold set to the most; by default the pool gives it back to the
/// driver at every synchronisation, and the next allocation maps it
/// again: at 6.4 M faces a command's allocations and frees repeat
/// hundreds of times), and makes its first allocation, which costs
/// 10-25 ms on an H200 whatever its size. The memory goes back when
/// [`CudaBackend::free_memory`] is asked and when the backend closes.
///
/// # Errors
/// [`BackendError::Driver`] when the driver refuses.
fn open_pool(ctx: &Arc<CudaContext>) -> Result<(), BackendError> {
    set_pool_attribute(
        ctx,
        sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
        u64::MAX,
        "setting the memory pool's release threshold",
    )?;
    let stream = ctx.default_stream();
    // SAFETY: the byte is neither read nor written.
    let first = unsafe { stream.alloc::<u8>(1) }.map_err(driver("allocating on the GPU"))?;
    drop(first);
    stream.synchronize().map_err(driver("synchronizing"))
}

/// The byte sizes of `f`'s parameters, where the driver tells them (CUDA
/// 12.4 and newer; `None` otherwise).
fn param_sizes(f: &CudaFunction) -> Option<Vec<usize>> {
    use cudarc::driver::sys;
    let mut version = 0;
    // SAFETY: writes one integer.
    let known = unsafe { sys::cuDriverGetVersion(&mut version) };
    if known != sys::CUresult::CUDA_SUCCESS || version < 12040 {
        return None;
    }
    let mut sizes = Vec::new();
    loop {
        let (mut offset, mut size) = (0usize, 0usize);
        // SAFETY: `f` is a live function of a loaded module; the call
        // writes two integers, or fails past the last parameter.
        let r = unsafe {
            sys::cuFuncGetParamInfo(f.cu_function(), sizes.len(), &mut offset, &mut size)
        };
        if r != sys::CUresult::CUDA_SUCCESS {
            return Some(sizes);
        }
        sizes.push(size);
    }
}

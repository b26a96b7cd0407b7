//! The GPU backend: the device crate's kernels as PTX embedded at build
//! time, loaded and launched through cudarc (thread blocks over patches:
//! one per patch, or for the dynamic updates as many as the device holds
//! at once, each taking queued patches; dynamic shared memory sized to the
//! largest patch).

use std::any::{Any, TypeId};
use std::collections::{HashMap, VecDeque};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use cudarc::driver::sys::{CUdevice_attribute, CUevent_flags, CUfunction_attribute};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr,
    DevicePtrMut, DeviceRepr, DriverError, LaunchConfig, PinnedHostSlice,
};

use cavity_device::attribute::Reduction;
use cavity_device::baseline::{BaselineCsrSum, BaselinePdeSum, RawDirectedEdges};
use cavity_device::dynamic::cavity::CavityApp;
use cavity_device::dynamic::cleanup::{self, Calibrate, Compact};
use cavity_device::dynamic::compute::{
    self, ElementComputation, ElementKernels, ExportQuery, FOR_EACH_BOUNDS, ForEachKernel,
};
use cavity_device::dynamic::layout::{Capacity, RawDynamicMesh};
use cavity_device::dynamic::reduce::{self, Reduce};
use cavity_device::dynamic::ring::{self, ExportRing, RingKernel, RingKernels, RingScratch};
use cavity_device::dynamic::scheduler::{self, Refill};
use cavity_device::dynamic::slice::{self, Slice};
use cavity_device::dynamic::smooth::{self, SmoothApply, SmoothRings, SmoothStep, Smoothing};
use cavity_device::dynamic::update;
use cavity_device::kernel::{
    CavityKernels, DYNAMIC_BOUNDS, ELEMENT_BOUNDS, Kernel, SurveyKernel, UpdateKernel,
};
use cavity_device::layout::{Kind, RawPatchMesh};
use cavity_device::query::Query;
use cavity_device::workload::{
    Exports, ForQuery, NeighborSumParams, NeighborSums, PerQuery, for_query,
};

use super::cubin_cache::{self, KernelOrigin};
use super::kernel_args::KernelArgs;
use super::staging::{STAGED_FROM, Staging};
use super::{BackendError, GpuSeconds, QueryResult, max_shared_bytes, sources};
use crate::attributes::{self, AttributeLayout};
use crate::directed_edges::DirectedEdgesMesh;
use crate::dynamic::DynamicMesh;
use crate::patched::PatchedMesh;
use crate::rings::{ForEachRing, RingRoom};
use crate::rounds::{
    ForEach, Rounds, RunError, SlotRows, Status, Update, check_patch_list, status_of, take_marks,
};

/// The device crate compiled to PTX by `build.rs` (sm_90 unless
/// `CAVITY_CUDA_ARCH` said otherwise at build time).
pub const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/cavity_device.ptx"));

/// A hash of [`PTX`] taken at build time: the key of its compiled form in
/// the kernels' cache ([`super::cubin_cache`]).
const PTX_HASH: u64 = include!(concat!(env!("OUT_DIR"), "/ptx_hash.rs"));

/// Why this build has no PTX ([`PTX`] is empty): the build script's
/// toolchain could not build it (`cavity_ptx_builder::Outcome::Skipped`).
pub const PTX_MISSING: Option<&str> = include!(concat!(env!("OUT_DIR"), "/ptx_missing.rs"));

fn driver(what: &'static str) -> impl Fn(DriverError) -> BackendError + Copy {
    move |source| BackendError::Driver { what, source }
}

/// A CUDA context on device 0 with the kernels loaded.
pub struct CudaBackend {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    /// Modules of kernel crates added with [`CudaBackend::add_kernels`],
    /// with their PTX's hash.
    added: RwLock<Vec<(u64, Arc<CudaModule>)>>,
    name: String,
    smem_limit: usize,
    origin: KernelOrigin,
    /// Pinned buffers for large copies, allocated at the first.
    staging: Mutex<Option<Staging>>,
}

/// A patched mesh resident in GPU memory.
pub struct DeviceMesh {
    patches: CudaSlice<u8>,
    fe: CudaSlice<u16>,
    ev: CudaSlice<u16>,
    ribbon: CudaSlice<u32>,
    stash: CudaSlice<u32>,
    masks: CudaSlice<u32>,
    raw: RawPatchMesh,
    /// Per query (by discriminant): the neighbour-sum kernel, prepared
    /// once so that launches do no host work; `None` where the query's
    /// shared memory exceeds the device's limit.
    neighbor_sum: Vec<Option<Loaded<NeighborSumParams>>>,
}

/// A declared kernel ([`cavity_device::kernel`](mod@cavity_device::kernel)) loaded from the module,
/// with the dynamic shared memory of its launches; `P` is its parameter
/// tuple, so that a launch takes exactly the parameters the kernel
/// declares. Made by [`CudaBackend::load`] only.
pub struct Loaded<P> {
    f: CudaFunction,
    smem: u32,
    threads: u32,
    _params: PhantomData<fn(P)>,
}

/// Kernel `K` loaded ([`Loaded`] of its parameters).
pub type LoadedKernel<K> = Loaded<<K as Kernel>::Params>;

/// Directed Edges arrays resident in GPU memory (the PDE baseline's input).
pub struct DeviceDirectedEdges {
    fv: CudaSlice<u32>,
    twin: CudaSlice<u32>,
    edge: CudaSlice<u32>,
    outgoing: CudaSlice<u32>,
    edge_half: CudaSlice<u32>,
    max_valence: u32,
}

impl DeviceMesh {
    /// The arrays' device addresses and lengths, the kernels' parameter.
    pub fn raw(&self) -> RawPatchMesh {
        self.raw
    }

    /// Bytes of patch data on the device.
    pub fn bytes(&self) -> usize {
        self.patches.len()
            + 2 * (self.fe.len() + self.ev.len())
            + 4 * (self.ribbon.len() + self.stash.len() + self.masks.len())
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
        let name = ctx.name().map_err(driver("reading the device name"))?;
        let smem_limit = ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
            .map_err(driver("reading the shared-memory limit"))? as usize;
        let (module, origin) = cubin_cache::load(&ctx, PTX, PTX_HASH, before_compile)
            .map_err(driver("loading the PTX (built for sm_90 by default; set CAVITY_CUDA_ARCH at build time for other GPUs)"))?;
        let stream = ctx.default_stream();
        Ok(CudaBackend {
            ctx,
            stream,
            module,
            added: RwLock::new(Vec::new()),
            name,
            smem_limit,
            origin,
            staging: Mutex::new(None),
        })
    }

    /// Where the kernels came from (the cache, or compiled in this run).
    pub fn kernel_origin(&self) -> &KernelOrigin {
        &self.origin
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
    /// second call returns [`KernelOrigin::Loaded`].
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
        let mut added = self.added.write().unwrap_or_else(|e| e.into_inner());
        if hash == PTX_HASH || added.iter().any(|(h, _)| *h == hash) {
            return Ok(KernelOrigin::Loaded);
        }
        let (module, origin) = cubin_cache::load(&self.ctx, ptx, hash, &|| {})
            .map_err(driver("loading a kernel crate's PTX"))?;
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
        // The function's limit is shared by every `Loaded` of it: it only
        // grows.
        let attr = CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
        let limit = f
            .get_attribute(attr)
            .map_err(driver("reading the kernel's shared-memory limit"))?;
        if smem as i32 > limit {
            f.set_attribute(attr, smem as i32)
                .map_err(driver("raising the kernel's shared-memory limit"))?;
        }
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

    /// The device address of `slice`, a kernel parameter: for a buffer
    /// of this backend's stream that no other stream uses (cudarc's event
    /// tracking is not kept up).
    pub fn address<T>(&self, slice: &CudaSlice<T>) -> u64 {
        slice.device_ptr(&self.stream).0
    }

    /// Copies a host slice to the device (at least one element, so empty
    /// meshes get valid pointers); from [`STAGED_FROM`] bytes through
    /// pinned buffers ([`super::staging`]).
    pub fn upload<T: cudarc::driver::DeviceRepr + bytemuck::Pod>(
        &self,
        data: &[T],
    ) -> Result<CudaSlice<T>, BackendError> {
        if std::mem::size_of_val(data) >= STAGED_FROM {
            // SAFETY: the copy below writes every element before any use.
            let mut dst = unsafe { self.stream.alloc::<T>(data.len()) }
                .map_err(driver("allocating on the GPU"))?;
            {
                let (ptr, _record) = dst.device_ptr_mut(&self.stream);
                // SAFETY: `dst` holds `data`'s bytes and is used only on
                // this stream, after the copies.
                self.with_staging("copying to the GPU", |staging| unsafe {
                    staging.upload(&self.stream, bytemuck::cast_slice(data), ptr)
                })?;
            }
            return Ok(dst);
        }
        let padded;
        let src = if data.is_empty() {
            padded = vec![T::zeroed()];
            &padded[..]
        } else {
            data
        };
        self.stream
            .clone_htod(src)
            .map_err(driver("copying to the GPU"))
    }

    /// Copies a device slice back, keeping its first `len` elements (all
    /// of it when shorter), after the work enqueued so far. Through pageable
    /// memory, the driver's way: through the staging buffers of
    /// [`CudaBackend::upload`] it was slower (367 against 280 ms for
    /// GPolylla's 2.2 GB at 44 M points, docs/benchmarks.md).
    pub fn download<T: cudarc::driver::DeviceRepr + bytemuck::Pod>(
        &self,
        data: &CudaSlice<T>,
        len: usize,
    ) -> Result<Vec<T>, BackendError> {
        let mut v = self
            .stream
            .clone_dtoh(data)
            .map_err(driver("copying from the GPU"))?;
        v.truncate(len);
        Ok(v)
    }

    /// Runs `f` (doing `what`) on the staging buffers, allocated at the
    /// first use.
    fn with_staging<R>(
        &self,
        what: &'static str,
        f: impl FnOnce(&mut Staging) -> Result<R, cudarc::driver::DriverError>,
    ) -> Result<R, BackendError> {
        let mut guard = self.staging.lock().unwrap_or_else(|e| e.into_inner());
        let staging = match &mut *guard {
            Some(s) => s,
            empty => empty
                .insert(Staging::new(&self.ctx).map_err(driver("allocating pinned host memory"))?),
        };
        f(staging).map_err(driver(what))
    }

    pub fn upload_mesh(&self, mesh: &PatchedMesh) -> Result<DeviceMesh, BackendError> {
        let patches = self.upload(bytemuck::cast_slice::<_, u8>(&mesh.patches))?;
        let fe = self.upload(&mesh.fe)?;
        let ev = self.upload(&mesh.ev)?;
        let ribbon = self.upload(&mesh.ribbon)?;
        let stash = self.upload(&mesh.stash)?;
        let masks = self.upload(&mesh.masks)?;
        let raw = mesh.raw_at([
            self.address(&patches),
            self.address(&fe),
            self.address(&ev),
            self.address(&ribbon),
            self.address(&stash),
            self.address(&masks),
        ]);
        let neighbor_sum = Query::ALL
            .iter()
            .map(|&query| self.query_kernel::<NeighborSums>(mesh, query).ok())
            .collect();
        Ok(DeviceMesh {
            patches,
            fe,
            ev,
            ribbon,
            stash,
            masks,
            raw,
            neighbor_sum,
        })
    }

    /// The kernel of family `F` for `query`, with the query's shared
    /// memory for the largest patch of `mesh`.
    fn query_kernel<F: PerQuery>(
        &self,
        mesh: &PatchedMesh,
        query: Query,
    ) -> Result<Loaded<F::Params>, BackendError>
    where
        F::Params: KernelArgs,
    {
        /// Loads the member of `F` of one query.
        struct Load<'a, F>(&'a CudaBackend, &'a PatchedMesh, Query, PhantomData<F>);
        impl<F: PerQuery> ForQuery for Load<'_, F>
        where
            F::Params: KernelArgs,
        {
            type Output = Result<Loaded<F::Params>, BackendError>;
            fn visit<const Q: u8>(self) -> Self::Output {
                let Load(gpu, mesh, query, _) = self;
                let threads = <F::Kernel<Q> as Kernel>::BOUNDS.threads;
                gpu.load::<F::Kernel<Q>>(max_shared_bytes(mesh, query, threads))
            }
        }
        for_query(query, Load::<F>(self, mesh, query, PhantomData))
    }

    /// All results of `query` in global handles (two launches: counts, then
    /// values at the scanned offsets).
    pub fn query(&self, mesh: &PatchedMesh, query: Query) -> Result<QueryResult, BackendError> {
        let dm = self.upload_mesh(mesh)?;
        let export = self.query_kernel::<Exports>(mesh, query)?;
        let grid = mesh.num_patches();
        let n = sources(mesh, query) as u32;
        let counts = self.upload(&vec![0u32; n as usize])?;
        let dummy = self.upload(&[0u32])?;
        let (c, d) = (self.address(&counts), self.address(&dummy));
        // SAFETY: counts holds `n` entries, the counting pass writes no
        // values (`out` has length 0) and reads no offsets (address 0).
        unsafe { self.launch(&export, grid, (dm.raw, 0, 0, c, n, d, 0))? };
        let counts = self.download(&counts, n as usize)?;
        let offsets = QueryResult::offsets_of(&counts);
        let total = *offsets.last().unwrap_or(&0);
        let d_offsets = self.upload(&offsets)?;
        let d_counts = self.upload(&counts)?;
        let values = self.upload(&vec![0u32; total as usize])?;
        let (o, c, v) = (
            self.address(&d_offsets),
            self.address(&d_counts),
            self.address(&values),
        );
        // SAFETY: offsets has `n + 1` entries, counts `n`, values `total`,
        // the scanned counts' sum.
        unsafe { self.launch(&export, grid, (dm.raw, o, n + 1, c, n, v, total))? };
        let values = self.download(&values, total as usize)?;
        Ok(QueryResult { offsets, values })
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
        let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
        let event = || {
            self.stream
                .record_event(flags)
                .map_err(driver("recording an event"))
        };
        let start = event()?;
        let out = f()?;
        let end = event()?;
        let ms = start.elapsed_ms(&end).map_err(driver("timing"))?;
        Ok((out, f64::from(ms)))
    }

    /// Launches the neighbour-sum workload of `query` on `mesh`, resident
    /// as `dm` (kernel prepared by `upload_mesh`, so the launch does no
    /// host-side work). Errors when the query's shared memory exceeds the
    /// device's limit.
    pub fn neighbor_sum(
        &self,
        mesh: &PatchedMesh,
        dm: &DeviceMesh,
        query: Query,
        attr: &CudaSlice<f32>,
        out: &mut CudaSlice<f32>,
    ) -> Result<(), BackendError> {
        let prepared;
        let kernel = match &dm.neighbor_sum[query as usize] {
            Some(kernel) => kernel,
            None => {
                prepared = self.query_kernel::<NeighborSums>(mesh, query)?;
                &prepared
            }
        };
        let (na, no) = (attr.len() as u32, out.len() as u32);
        // The guards record the slices' use behind the launch when dropped.
        let (a, _read) = attr.device_ptr(&self.stream);
        let (o, _written) = out.device_ptr_mut(&self.stream);
        // SAFETY: `attr` and `out` hold the lengths passed; `dm` is `mesh`.
        unsafe { self.launch(kernel, mesh.num_patches(), (dm.raw, a, na, o, no)) }
    }

    /// Launches the naive CSR baseline: `out[i] = Σ attr[adj[k]]`.
    pub fn baseline_sum(
        &self,
        n: u32,
        offsets: &CudaSlice<u32>,
        adj: &CudaSlice<u32>,
        attr: &CudaSlice<f32>,
        out: &mut CudaSlice<f32>,
    ) -> Result<(), BackendError> {
        let kernel = self.load::<BaselineCsrSum>(0)?;
        let s = &self.stream;
        let (nadj, nattr) = (adj.len() as u32, attr.len() as u32);
        // The guards record the slices' use behind the launch when dropped.
        let ((o, _r0), (a, _r1), (t, _r2)) =
            (offsets.device_ptr(s), adj.device_ptr(s), attr.device_ptr(s));
        let (w, _written) = out.device_ptr_mut(s);
        let params = (n, o, a, nadj, t, nattr, w);
        // SAFETY: `offsets` holds `n + 1` entries and `out` `n` (the
        // caller's CSR); the other lengths are the slices'.
        unsafe { self.launch(&kernel, element_grid(&kernel, n), params) }
    }

    /// Launches the PDE baseline of `query` over `n` source elements on
    /// uploaded Directed Edges arrays.
    pub fn baseline_pde(
        &self,
        query: Query,
        n: u32,
        de: &DeviceDirectedEdges,
        attr: &CudaSlice<f32>,
        out: &mut CudaSlice<f32>,
    ) -> Result<(), BackendError> {
        let kernel = self.load::<BaselinePdeSum>(0)?;
        let s = &self.stream;
        let nattr = attr.len() as u32;
        // The guards record the slices' use behind the launch when dropped.
        let (a, _read) = attr.device_ptr(s);
        let (o, _written) = out.device_ptr_mut(s);
        let mesh = RawDirectedEdges {
            fv: self.address(&de.fv),
            twin: self.address(&de.twin),
            edge: self.address(&de.edge),
            outgoing: self.address(&de.outgoing),
            edge_half: self.address(&de.edge_half),
            n_half: de.fv.len() as u32,
            n_vertices: de.outgoing.len() as u32,
            n_edges: de.edge_half.len() as u32,
            max_valence: de.max_valence,
        };
        let params = (query as u32, n, mesh, a, nattr, o);
        // SAFETY: the three half-edge arrays have one length; `out` holds
        // `n` entries (the caller's source count).
        unsafe { self.launch(&kernel, element_grid(&kernel, n), params) }
    }

    /// Uploads Directed Edges arrays for [`CudaBackend::baseline_pde`].
    pub fn upload_directed_edges(
        &self,
        de: &DirectedEdgesMesh,
    ) -> Result<DeviceDirectedEdges, BackendError> {
        Ok(DeviceDirectedEdges {
            fv: self.upload(&de.fv)?,
            twin: self.upload(&de.twin)?,
            edge: self.upload(&de.edge)?,
            outgoing: self.upload(&de.outgoing)?,
            edge_half: self.upload(&de.edge_half)?,
            max_valence: de.max_valence,
        })
    }

    /// Waits for all queued work.
    pub fn synchronize(&self) -> Result<(), BackendError> {
        self.ctx.synchronize().map_err(driver("synchronizing"))
    }
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

/// Blocks of element-wise kernel `kernel` over `n` elements (grid-stride).
fn element_grid<P>(kernel: &Loaded<P>, n: u32) -> u32 {
    n.div_ceil(kernel.threads).clamp(1, 65535 * 4)
}

/// Device copies of a [`DynamicMesh`]'s arrays.
struct DynamicBuffers {
    counts: CudaSlice<u32>,
    fe: CudaSlice<u16>,
    ev: CudaSlice<u16>,
    masks: CudaSlice<u32>,
    hash: CudaSlice<u32>,
    stash: CudaSlice<u32>,
    locks: CudaSlice<u32>,
    flags: CudaSlice<u32>,
    declined: CudaSlice<u32>,
    vertex_attrs: CudaSlice<u32>,
    edge_attrs: CudaSlice<u32>,
    face_attrs: CudaSlice<u32>,
    queue: CudaSlice<u32>,
    queue_state: CudaSlice<u32>,
    stats: CudaSlice<u32>,
}

/// A cavity application's update or survey kernel with the most blocks
/// the device holds at once: the most an update round launches (each
/// block takes patches until the round's share is taken).
struct CavityKernel<P> {
    loaded: Loaded<P>,
    resident: u32,
}

/// The smoothing's kernels.
struct SmoothKernels {
    rings: LoadedKernel<SmoothRings>,
    step: LoadedKernel<SmoothStep>,
    apply: LoadedKernel<SmoothApply>,
}

/// Update rounds of dynamic applications on the GPU (see
/// [`crate::rounds`]): the mesh lives on the device from [`CudaRounds::new`]
/// on; [`Rounds::mesh`] copies it back.
pub struct CudaRounds<'a> {
    gpu: &'a CudaBackend,
    mesh: &'a mut DynamicMesh,
    bufs: DynamicBuffers,
    raw: RawDynamicMesh,
    /// Each application's update and survey kernels (a [`CavityKernel`]
    /// of their parameters) and each computation's kernel (a
    /// [`LoadedKernel`]), by kernel type, prepared at first use.
    updates: HashMap<TypeId, Box<dyn Any>>,
    calibrate: LoadedKernel<Calibrate>,
    compact: LoadedKernel<Compact>,
    refill: LoadedKernel<Refill>,
    slice: LoadedKernel<Slice>,
    /// The smoothing's rings, step and apply kernels.
    smooth: SmoothKernels,
    reduce: LoadedKernel<Reduce>,
    /// One `f64` per patch slot for the reductions' partials, allocated at
    /// the first reduction.
    partials: Option<CudaSlice<f64>>,
    scratch: Option<CudaSlice<u32>>,
    /// The rings' scratch (`crate::rings`), grown as needed.
    rings: Option<CudaSlice<u32>>,
    /// The last patch list of `for_each_in` (at least a word per patch).
    patch_list: Option<CudaSlice<u32>>,
    /// The room the rings needed so far.
    ring_room: RingRoom,
    seconds: GpuSeconds,
    /// Update rounds launched (the next round's salt).
    rounds: u32,
    /// The statuses taken after launched rounds and not read yet, oldest
    /// first (`Rounds::round_status`).
    pending: VecDeque<Snapshot>,
    /// Snapshots read, whose host buffers are reused.
    spare: Vec<Snapshot>,
}

/// The scheduler's state (queue state, counters, patch flags) copied to
/// page-locked host memory behind the work launched before it, so that
/// the host reads it without stopping the stream.
struct Snapshot {
    queue_state: PinnedHostSlice<u32>,
    stats: PinnedHostSlice<u32>,
    flags: PinnedHostSlice<u32>,
    /// Recorded behind the copies: the buffers hold the state once it
    /// completed.
    done: Option<CudaEvent>,
    /// A round's events before its update kernel and after the update,
    /// calibration and compaction kernels ([`GpuSeconds::kernels`]).
    timing: Option<[CudaEvent; 4]>,
}

impl Snapshot {
    /// Host buffers for `stats` counters and `patches` patch flags.
    fn new(ctx: &Arc<CudaContext>, stats: usize, patches: usize) -> Result<Self, DriverError> {
        // SAFETY: any bit pattern is a valid u32, and a buffer is read only
        // after `done`, recorded behind the copy that fills it, completed.
        let alloc = |len: usize| unsafe { ctx.alloc_pinned_with_flags::<u32>(len, 0) };
        Ok(Snapshot {
            queue_state: alloc(scheduler::STATE_WORDS as usize)?,
            stats: alloc(stats)?,
            flags: alloc(patches)?,
            done: None,
            timing: None,
        })
    }

    /// Waits for the copies, adds the round's kernel times to `seconds`
    /// and reads the status.
    fn read(&mut self, seconds: &mut GpuSeconds) -> Result<Status, DriverError> {
        if let Some(done) = &self.done {
            done.synchronize()?;
        }
        self.done = None;
        self.add_timing(seconds)?;
        Ok(status_of(
            self.queue_state.as_slice()?,
            self.stats.as_slice()?,
            self.flags.as_slice()?,
        ))
    }

    /// Adds the kernel times of the round (if any) to `seconds`; the
    /// events must have completed.
    fn add_timing(&mut self, seconds: &mut GpuSeconds) -> Result<(), DriverError> {
        if let Some(t) = self.timing.take() {
            for (i, pair) in t.windows(2).enumerate() {
                seconds.kernels[i] += pair[0].elapsed_ms(&pair[1])? as f64 / 1e3;
            }
        }
        Ok(())
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        // The host buffers are freed only once no copy writes them.
        if let Some(done) = &self.done {
            // A failure is the context's, and its next call reports it.
            let _ = done.synchronize();
        }
    }
}

impl<'a> CudaRounds<'a> {
    /// Uploads `mesh` and prepares the cleanup, slicing and smoothing
    /// kernels. Errors when a kernel's shared memory exceeds the device's
    /// limit (lower the capacity factor or the patch size); an
    /// application's update kernel is checked at its first round, a
    /// per-element computation's at its first `for_each`.
    pub fn new(gpu: &'a CudaBackend, mesh: &'a mut DynamicMesh) -> Result<Self, BackendError> {
        let start = Instant::now();
        let used = PatchPrefix::of(mesh);
        let bufs = DynamicBuffers {
            counts: used.upload(gpu, &mesh.counts, 0)?,
            fe: used.upload(gpu, &mesh.fe, 0)?,
            ev: used.upload(gpu, &mesh.ev, 0)?,
            masks: used.upload(gpu, &mesh.masks, 0)?,
            hash: used.upload(gpu, &mesh.hash, 0xff)?,
            stash: used.upload(gpu, &mesh.stash, 0xff)?,
            locks: gpu.upload(&mesh.locks)?,
            flags: gpu.upload(&mesh.flags)?,
            declined: used.upload(gpu, &mesh.declined, 0)?,
            vertex_attrs: used.upload(gpu, &mesh.vertex_attrs, 0)?,
            edge_attrs: used.upload(gpu, &mesh.edge_attrs, 0)?,
            face_attrs: used.upload(gpu, &mesh.face_attrs, 0)?,
            queue: gpu.upload(&mesh.queue)?,
            queue_state: gpu.upload(&mesh.queue_state)?,
            stats: gpu.upload(&mesh.stats)?,
        };
        gpu.stream
            .synchronize()
            .map_err(driver("copying to the GPU"))?;
        let upload = start.elapsed().as_secs_f64();
        let s = &gpu.stream;
        let raw = RawDynamicMesh {
            cap: mesh.cap,
            num_patches: mesh.num_patches,
            reserved: 0,
            counts: bufs.counts.device_ptr(s).0,
            fe: bufs.fe.device_ptr(s).0,
            ev: bufs.ev.device_ptr(s).0,
            masks: bufs.masks.device_ptr(s).0,
            hash: bufs.hash.device_ptr(s).0,
            stash: bufs.stash.device_ptr(s).0,
            locks: bufs.locks.device_ptr(s).0,
            flags: bufs.flags.device_ptr(s).0,
            declined: bufs.declined.device_ptr(s).0,
            vertex_attrs: bufs.vertex_attrs.device_ptr(s).0,
            edge_attrs: bufs.edge_attrs.device_ptr(s).0,
            face_attrs: bufs.face_attrs.device_ptr(s).0,
            queue: bufs.queue.device_ptr(s).0,
            queue_state: bufs.queue_state.device_ptr(s).0,
            stats: bufs.stats.device_ptr(s).0,
        };
        let threads = DYNAMIC_BOUNDS.threads;
        let smooth_smem = smooth::shared_bytes(&mesh.cap, threads);
        let compact =
            gpu.load_carved::<Compact>(cleanup::compact_shared_bytes(&mesh.cap, threads))?;
        let refill = gpu.load_carved::<Refill>(scheduler::refill_shared_bytes(threads))?;
        let slice = gpu.load_carved::<Slice>(slice::shared_bytes(&mesh.cap, threads))?;
        let calibrate = gpu.load::<Calibrate>(0)?;
        let smooth = SmoothKernels {
            rings: gpu.load_carved::<SmoothRings>(smooth_smem)?,
            step: gpu.load::<SmoothStep>(0)?,
            apply: gpu.load::<SmoothApply>(0)?,
        };
        Ok(CudaRounds {
            gpu,
            mesh,
            bufs,
            raw,
            updates: HashMap::new(),
            calibrate,
            compact,
            refill,
            slice,
            smooth,
            reduce: gpu.load::<Reduce>(reduce::shared_bytes(ELEMENT_BOUNDS.threads))?,
            partials: None,
            scratch: None,
            rings: None,
            patch_list: None,
            ring_room: RingRoom::default(),
            rounds: 0,
            pending: VecDeque::new(),
            spare: Vec::new(),
            seconds: GpuSeconds {
                upload,
                ..GpuSeconds::default()
            },
        })
    }

    /// Where the time went so far.
    pub fn seconds(&self) -> GpuSeconds {
        self.seconds
    }

    /// The cleanup kernels over the `n` patches in use: calibration, then
    /// compaction.
    fn cleanup(&self, n: u32) -> Result<(), BackendError> {
        // SAFETY: the buffers behind `raw` live as long as `self`; nothing
        // else runs on the mesh meanwhile (one stream).
        unsafe {
            self.gpu.launch(&self.calibrate, n, (self.raw,))?;
            self.gpu.launch(&self.compact, n, (self.raw,))
        }
    }

    /// Application `A`'s kernel `K` (update or survey), loaded at first use.
    fn cavity_kernel<A: CavityKernels, K: Kernel<Params = (RawDynamicMesh, u32, A)>>(
        &mut self,
    ) -> Result<&CavityKernel<K::Params>, BackendError> {
        let smem = update::shared_bytes::<A>(&self.mesh.cap, K::BOUNDS.threads);
        self.resident_kernel::<K>(smem)
    }

    /// Kernel `K` with `smem` bytes of shared memory and the most blocks
    /// the device holds at once, loaded at first use.
    fn resident_kernel<K: Kernel>(
        &mut self,
        smem: usize,
    ) -> Result<&CavityKernel<K::Params>, BackendError>
    where
        K::Params: KernelArgs,
    {
        let id = TypeId::of::<K>();
        if !self.updates.contains_key(&id) {
            let threads = K::BOUNDS.threads;
            let loaded = self.gpu.load_carved::<K>(smem)?;
            let per_sm = loaded
                .f
                .occupancy_max_active_blocks_per_multiprocessor(threads, smem, None)
                .map_err(driver("reading a kernel's occupancy"))?;
            let sms = self
                .gpu
                .ctx
                .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
                .map_err(driver("reading the multiprocessor count"))?;
            let resident = (per_sm * sms.max(1) as u32).max(1);
            self.updates
                .insert(id, Box::new(CavityKernel { loaded, resident }));
        }
        Ok(self.updates[&id]
            .downcast_ref()
            .expect("kernels are stored under their own type"))
    }

    /// Copies the scheduler's state to a snapshot behind the work launched
    /// so far, with the events of the round it ends (if any).
    fn take_snapshot(&mut self, timing: Option<[CudaEvent; 4]>) -> Result<Snapshot, BackendError> {
        let e = driver("reading the scheduler's state");
        let mut snap = match self.spare.pop() {
            Some(snap) => snap,
            None => Snapshot::new(&self.gpu.ctx, self.mesh.stats.len(), self.mesh.flags.len())
                .map_err(e)?,
        };
        let s = &self.gpu.stream;
        let copied = s
            .memcpy_dtoh(&self.bufs.queue_state, &mut snap.queue_state)
            .and_then(|()| s.memcpy_dtoh(&self.bufs.stats, &mut snap.stats))
            .and_then(|()| s.memcpy_dtoh(&self.bufs.flags, &mut snap.flags))
            .and_then(|()| s.record_event(None));
        match copied {
            Ok(done) => {
                snap.done = Some(done);
                snap.timing = timing;
                Ok(snap)
            }
            Err(err) => {
                // A copy may still be under way: the buffers are freed only
                // after the stream (a failure here is the same context's).
                let _ = s.synchronize();
                Err(e(err))
            }
        }
    }

    /// Reads snapshot `snap` and keeps its buffers for reuse.
    fn read_snapshot(&mut self, mut snap: Snapshot) -> Result<Status, RunError> {
        let status = snap
            .read(&mut self.seconds)
            .map_err(driver("reading the scheduler's state"))?;
        self.spare.push(snap);
        Ok(status)
    }

    /// Copies the mesh back: the used patch slots of the per-patch arrays,
    /// the whole of the others.
    fn copy_back(&mut self) -> Result<(), BackendError> {
        let start = Instant::now();
        let s = &self.gpu.stream;
        let b = &self.bufs;
        let used = PatchPrefix::of(self.mesh);
        let m = &mut *self.mesh;
        let e = driver("copying the dynamic mesh back");
        used.download(s, &b.counts, &mut m.counts).map_err(e)?;
        used.download(s, &b.fe, &mut m.fe).map_err(e)?;
        used.download(s, &b.ev, &mut m.ev).map_err(e)?;
        used.download(s, &b.masks, &mut m.masks).map_err(e)?;
        used.download(s, &b.hash, &mut m.hash).map_err(e)?;
        used.download(s, &b.stash, &mut m.stash).map_err(e)?;
        s.memcpy_dtoh(&b.locks, &mut m.locks[..]).map_err(e)?;
        s.memcpy_dtoh(&b.flags, &mut m.flags[..]).map_err(e)?;
        used.download(s, &b.vertex_attrs, &mut m.vertex_attrs)
            .map_err(e)?;
        used.download(s, &b.edge_attrs, &mut m.edge_attrs)
            .map_err(e)?;
        used.download(s, &b.face_attrs, &mut m.face_attrs)
            .map_err(e)?;
        s.memcpy_dtoh(&b.queue, &mut m.queue[..]).map_err(e)?;
        s.memcpy_dtoh(&b.queue_state, &mut m.queue_state[..])
            .map_err(e)?;
        s.memcpy_dtoh(&b.stats, &mut m.stats[..]).map_err(e)?;
        s.synchronize().map_err(e)?;
        self.seconds.copy_back += start.elapsed().as_secs_f64();
        Ok(())
    }
}

/// The used part of a per-patch array of the dynamic layout (every patch
/// slot has the same stride): the slots of the first `num_patches` patches.
/// The other slots hold the array's empty value, so only the used part
/// travels.
#[derive(Clone, Copy)]
struct PatchPrefix {
    num_patches: usize,
    slots: usize,
}

impl PatchPrefix {
    fn of(mesh: &DynamicMesh) -> Self {
        PatchPrefix {
            num_patches: mesh.num_patches as usize,
            slots: mesh.cap.patches as usize,
        }
    }

    /// Elements of the used part of an array of `len` elements.
    fn len(&self, len: usize) -> usize {
        len / self.slots.max(1) * self.num_patches.min(self.slots)
    }

    /// A device copy of `data` of which only the used part is copied; the
    /// rest is set to bytes `fill`, the array's empty value (0 or 0xff:
    /// `EMPTY` and `NO_PATCH` are `u32::MAX`).
    fn upload<T: DeviceRepr + Default + bytemuck::Pod>(
        &self,
        gpu: &CudaBackend,
        data: &[T],
        fill: u8,
    ) -> Result<CudaSlice<T>, BackendError> {
        let used = self.len(data.len());
        if data.is_empty() || used == data.len() {
            return gpu.upload(data);
        }
        let s = &gpu.stream;
        let e = driver("copying to the GPU");
        // SAFETY: every element is written below, the used part by the copy
        // and the rest by the memset, before any kernel reads it.
        let mut buf = unsafe { s.alloc::<T>(data.len()) }.map_err(e)?;
        s.memcpy_htod(&data[..used], &mut buf.slice_mut(..used))
            .map_err(e)?;
        {
            let mut rest = buf.slice_mut(used..);
            let bytes = (data.len() - used) * size_of::<T>();
            let (ptr, _record) = rest.device_ptr_mut(s);
            // SAFETY: `ptr` points at `bytes` bytes of `buf`, allocated on
            // stream `s`; every byte pattern is a valid `T` (`Pod`).
            unsafe { cudarc::driver::result::memset_d8_async(ptr, fill, bytes, s.cu_stream()) }
                .map_err(e)?;
        }
        Ok(buf)
    }

    /// Copies the used part of `src` into `dst` (same length).
    fn download<T: DeviceRepr>(
        &self,
        s: &Arc<CudaStream>,
        src: &CudaSlice<T>,
        dst: &mut [T],
    ) -> Result<(), DriverError> {
        let used = self.len(dst.len());
        if used == 0 {
            return Ok(());
        }
        s.memcpy_dtoh(&src.slice(..used), &mut dst[..used])
    }
}

impl<C: ElementKernels> ForEach<C> for CudaRounds<'_> {
    fn for_each(&mut self, c: &C) -> Result<(), RunError> {
        self.launch_for_each(c, None)
    }

    fn for_each_in(&mut self, c: &C, patches: &[u32]) -> Result<(), RunError> {
        check_patch_list(patches, self.mesh.num_patches)?;
        if patches.is_empty() {
            return Ok(());
        }
        let s = &self.gpu.stream;
        let e = driver("copying a patch list to the GPU");
        if self
            .patch_list
            .as_ref()
            .is_none_or(|b| b.len() < patches.len())
        {
            self.patch_list = None;
            let len = patches.len().max(self.mesh.num_patches as usize);
            self.patch_list = Some(s.alloc_zeros::<u32>(len).map_err(e)?);
        }
        let list = self.patch_list.as_mut().expect("allocated above");
        s.memcpy_htod(patches, &mut list.slice_mut(..patches.len()))
            .map_err(e)?;
        let at = list.device_ptr(s).0;
        self.launch_for_each(c, Some((at, patches.len() as u32)))
    }
}

impl CudaRounds<'_> {
    /// Computation `C`'s kernel (loaded at first use) on every patch slot
    /// in use, or on the `(list, length)` of patch slots in device memory.
    fn launch_for_each<C: ElementKernels>(
        &mut self,
        c: &C,
        list: Option<(u64, u32)>,
    ) -> Result<(), RunError> {
        let id = TypeId::of::<ForEachKernel<C>>();
        if !self.updates.contains_key(&id) {
            let threads = FOR_EACH_BOUNDS.threads;
            let smem = compute::shared_bytes::<C>(&self.mesh.cap, threads);
            let loaded = self.gpu.load_carved::<ForEachKernel<C>>(smem)?;
            self.updates.insert(id, Box::new(loaded));
        }
        let loaded: &LoadedKernel<ForEachKernel<C>> = self.updates[&id]
            .downcast_ref()
            .expect("kernels are stored under their own type");
        let (at, grid) = list.unwrap_or((0, self.mesh.num_patches));
        // SAFETY: the buffers behind `raw` live as long as `self`; one
        // block per patch slot in use, or per entry of the list, which
        // holds `grid` distinct patch slots in use (`check_patch_list`),
        // copied before the launch on the same stream; the shared memory
        // the kernel was loaded with.
        unsafe { self.gpu.launch(loaded, grid, (self.raw, *c, at))? };
        Ok(())
    }
}

impl CudaRounds<'_> {
    /// Runs ring kernel `K` (loaded with the rings' shared memory) over
    /// the mesh with `params(scratch)` until no ring overflows
    /// ([`RingRoom::run`]); returns the room it took. Waits for the
    /// launch to read the status word.
    fn launch_rings<K: Kernel>(
        &mut self,
        params: impl Fn(RingScratch) -> K::Params,
    ) -> Result<RingRoom, RunError>
    where
        K::Params: KernelArgs,
    {
        let smem = ring::shared_bytes(&self.mesh.cap, K::BOUNDS.threads);
        let resident = self.resident_kernel::<K>(smem)?.resident;
        let mut room = self.ring_room;
        let taken = room.run(|room| {
            let grid = room.grid(&self.mesh.cap, self.mesh.num_patches, resident);
            let (scratch, at) = self.ring_scratch(room, grid)?;
            let kernel: &CavityKernel<K::Params> = self.updates[&TypeId::of::<K>()]
                .downcast_ref()
                .expect("kernels are stored under their own type");
            // SAFETY: the scratch holds the words `scratch_words` gives for
            // the grid and the overflow word; the mesh's buffers and the
            // scratch live in `self`; the parameters' arrays are the
            // caller's.
            unsafe { self.gpu.launch(&kernel.loaded, grid, params(scratch))? };
            let s = &self.gpu.stream;
            let mut word = [0u32];
            let rings = self.rings.as_ref().expect("allocated by ring_scratch");
            s.memcpy_dtoh(&rings.slice(at..at + 1), &mut word)
                .and_then(|()| s.synchronize())
                .map_err(driver("reading the rings' status word"))?;
            Ok((room, word[0]))
        })?;
        self.ring_room = taken;
        Ok(taken)
    }

    /// The rings' scratch for `room` and `grid` blocks (grown when too
    /// small), with its status word zeroed, and that word's index.
    fn ring_scratch(
        &mut self,
        room: RingRoom,
        grid: u32,
    ) -> Result<(RingScratch, usize), RunError> {
        let at = ring::scratch_words(&self.mesh.cap, grid, room.capacity()) as usize;
        let s = &self.gpu.stream;
        let e = driver("allocating the rings' scratch");
        if self.rings.as_ref().is_none_or(|b| b.len() <= at) {
            self.rings = None;
            self.rings = Some(s.alloc_zeros::<u32>(at + 1).map_err(e)?);
        }
        let rings = self.rings.as_mut().expect("allocated above");
        s.memset_zeros(&mut rings.slice_mut(at..at + 1))
            .map_err(e)?;
        let base = rings.device_ptr(s).0;
        let scratch = RingScratch {
            entries: base,
            overflow: base + 4 * at as u64,
            capacity: room.capacity(),
            pad: 0,
        };
        Ok((scratch, at))
    }
}

impl<C: RingKernels> ForEachRing<C> for CudaRounds<'_> {
    fn for_each_ring(&mut self, c: &C) -> Result<(), RunError> {
        let (raw, c) = (self.raw, *c);
        self.launch_rings::<RingKernel<C>>(|scratch| (raw, c, scratch))?;
        Ok(())
    }
}

impl<A: CavityKernels> Update<A> for CudaRounds<'_> {
    fn survey(&mut self, app: &A) -> Result<(), RunError> {
        let (raw, salt, grid) = (self.raw, self.rounds, self.mesh.num_patches);
        let gpu = self.gpu;
        let survey = self.cavity_kernel::<A, SurveyKernel<A>>()?;
        // SAFETY: the buffers behind `raw` live as long as `self`; the
        // shared memory is the application's (`cavity_kernel`).
        unsafe { gpu.launch(&survey.loaded, grid, (raw, salt, *app))? };
        Ok(())
    }

    fn round(&mut self, app: &A, blocks: u32) -> Result<(), RunError> {
        let salt = self.rounds;
        self.rounds = self.rounds.wrapping_add(1);
        let (raw, gpu) = (self.raw, self.gpu);
        let update = self.cavity_kernel::<A, UpdateKernel<A>>()?;
        let blocks = blocks.min(update.resident);
        let s = &gpu.stream;
        let e = driver("timing a dynamic kernel");
        let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
        let t0 = s.record_event(flags).map_err(e)?;
        // SAFETY: the buffers behind `raw` live as long as `self`; the
        // shared memory is the application's (`cavity_kernel`).
        unsafe { gpu.launch(&update.loaded, blocks, (raw, salt, *app))? };
        let t1 = s.record_event(flags).map_err(e)?;
        let n = self.mesh.num_patches;
        // SAFETY: as for `cleanup`.
        unsafe { gpu.launch(&self.calibrate, n, (raw,))? };
        let t2 = s.record_event(flags).map_err(e)?;
        // SAFETY: as above.
        unsafe { gpu.launch(&self.compact, n, (raw,))? };
        let t3 = s.record_event(flags).map_err(e)?;
        let snap = self.take_snapshot(Some([t0, t1, t2, t3]))?;
        self.pending.push_back(snap);
        Ok(())
    }
}

impl Rounds for CudaRounds<'_> {
    fn refill(&mut self, changed_only: bool) -> Result<(), RunError> {
        // SAFETY: the buffers behind `raw` live as long as `self`.
        unsafe {
            self.gpu
                .launch(&self.refill, 1, (self.raw, changed_only as u32))?
        };
        Ok(())
    }

    fn slice(&mut self, seed: Kind) -> Result<(), RunError> {
        let grid = self.mesh.num_patches;
        // SAFETY: as above.
        unsafe {
            self.gpu
                .launch(&self.slice, grid, (self.raw, seed as u32))?
        };
        let s = &self.gpu.stream;
        let e = driver("reading the patch count");
        let mut queue_state = [0u32; scheduler::STATE_WORDS as usize];
        s.memcpy_dtoh(&self.bufs.queue_state, &mut queue_state[..])
            .map_err(e)?;
        s.synchronize().map_err(e)?;
        let n = queue_state[scheduler::PATCHES as usize];
        self.mesh.num_patches = n;
        self.raw.num_patches = n;
        self.cleanup(n)?;
        Ok(())
    }

    fn smooth(&mut self, params: &Smoothing, steps: u32) -> Result<(), RunError> {
        if steps == 0 {
            return Ok(());
        }
        let [a, b, headers, entries, _] = smooth::scratch_layout(&self.mesh.cap);
        let words = crate::rounds::smoothing_words(&self.mesh.cap)?;
        let s = &self.gpu.stream;
        let scratch = match self.scratch.take() {
            Some(buf) => buf,
            None => s
                .alloc_zeros::<u32>(words)
                .map_err(driver("allocating the smoothing's buffers"))?,
        };
        let base = scratch.device_ptr(s).0;
        self.scratch = Some(scratch);
        let at = |word: u64| base + 4 * word;
        let (headers, entries) = (at(headers), at(entries));
        let (grid, raw, p, gpu) = (self.mesh.num_patches, self.raw, *params, self.gpu);
        let SmoothKernels { rings, step, apply } = &self.smooth;
        // SAFETY: the buffers lie inside the scratch (`scratch_layout`),
        // which lives in `self`, as do the mesh's.
        unsafe { gpu.launch(rings, grid, (raw, headers, entries, at(a), p))? };
        let (mut from, mut to) = (at(a), at(b));
        for _ in 0..steps {
            // SAFETY: as above, after the rings; `from` and `to` are the
            // two disjoint position buffers.
            unsafe { gpu.launch(step, grid, (raw, headers, entries, from, to, p))? };
            (from, to) = (to, from);
        }
        // SAFETY: as above; `from` holds the last step's positions.
        unsafe { gpu.launch(apply, grid, (raw, from))? };
        Ok(())
    }

    fn attributes(&self) -> &AttributeLayout {
        self.mesh.attributes()
    }

    fn export_query(&mut self, query: Query) -> Result<SlotRows, RunError> {
        let cap = self.mesh.cap;
        let slots = (cap.patches * cap.of(query.source())) as usize;
        let smem = compute::shared_bytes_of(query, &cap, FOR_EACH_BOUNDS.threads);
        let kernel = self.gpu.load_carved::<ExportQuery>(smem)?;
        let (gpu, s) = (self.gpu, &self.gpu.stream);
        let e = driver("exporting a query");
        let counts = s.alloc_zeros::<u32>(slots.max(1)).map_err(e)?;
        let (grid, raw, q) = (self.mesh.num_patches, self.raw, query as u32);
        let at = |b: &CudaSlice<u32>| b.device_ptr(s).0;
        // SAFETY: `counts` holds one entry per source slot; the counting
        // pass writes no values; the mesh's buffers live in `self`.
        unsafe { gpu.launch(&kernel, grid, (raw, q, at(&counts), 0u64, 0u64))? };
        let mut host = gpu.download(&counts, slots)?;
        let mut offsets = QueryResult::offsets_of(&host);
        let total = offsets.pop().unwrap_or(0);
        let dev_offsets = gpu.upload(&offsets)?;
        let values = s.alloc_zeros::<u32>(total.max(1) as usize).map_err(e)?;
        // SAFETY: as above; `values` holds the rows `offsets` place.
        unsafe {
            gpu.launch(
                &kernel,
                grid,
                (raw, q, at(&counts), at(&dev_offsets), at(&values)),
            )?
        };
        let values = gpu.download(&values, total as usize)?;
        host.truncate(slots);
        Ok(SlotRows {
            counts: host,
            offsets,
            values,
        })
    }

    fn export_ring(&mut self, k: u32) -> Result<SlotRows, RunError> {
        let cap = self.mesh.cap;
        let slots = (cap.patches * cap.vertices) as usize;
        let e = driver("exporting the k-rings");
        let counts = self
            .gpu
            .stream
            .alloc_zeros::<u32>(slots.max(1))
            .map_err(e)?;
        let at = |b: &CudaSlice<u32>| b.device_ptr(&self.gpu.stream).0;
        let (raw, counted) = (self.raw, at(&counts));
        self.launch_rings::<ExportRing>(|scratch| (raw, k, scratch, counted, 0, 0))?;
        let mut host = self.gpu.download(&counts, slots)?;
        let mut offsets = QueryResult::offsets_of(&host);
        let total = offsets.pop().unwrap_or(0);
        let dev_offsets = self.gpu.upload(&offsets)?;
        let values = self
            .gpu
            .stream
            .alloc_zeros::<u32>(total.max(1) as usize)
            .map_err(e)?;
        let (placed, filled) = (at(&dev_offsets), at(&values));
        // The same rings fit the room the counting pass found.
        self.launch_rings::<ExportRing>(|scratch| (raw, k, scratch, counted, placed, filled))?;
        let values = self.gpu.download(&values, total as usize)?;
        host.truncate(slots);
        Ok(SlotRows {
            counts: host,
            offsets,
            values,
        })
    }

    fn take_count(&mut self) -> Result<u64, RunError> {
        let s = &self.gpu.stream;
        let e = driver("taking the computations' count");
        let at = cavity_device::dynamic::layout::stat::COUNTED as usize;
        let mut counted = [0u32];
        let mut word = self.bufs.stats.slice_mut(at..at + 1);
        s.memcpy_dtoh(&word, &mut counted)
            .and_then(|()| s.memset_zeros(&mut word))
            .and_then(|()| s.synchronize())
            .map_err(e)?;
        Ok(u64::from(counted[0]))
    }

    fn take_marked_patches(&mut self) -> Result<Vec<u32>, RunError> {
        let s = &self.gpu.stream;
        let e = driver("taking the marked patches");
        let patches = self.mesh.num_patches as usize;
        let mut flags = vec![0u32; patches];
        let mut on_device = self.bufs.flags.slice_mut(..patches);
        s.memcpy_dtoh(&on_device, &mut flags)
            .and_then(|()| s.synchronize())
            .map_err(e)?;
        let marked = take_marks(&mut flags);
        if !marked.is_empty() {
            // Nothing else runs on the stream: the flags go back with the
            // marks cleared.
            s.memcpy_htod(&flags, &mut on_device)
                .and_then(|()| s.synchronize())
                .map_err(e)?;
        }
        Ok(marked)
    }

    fn reduce(&mut self, r: &Reduction) -> Result<f64, RunError> {
        attributes::check_reduction(r, &self.mesh.cap)?;
        let s = &self.gpu.stream;
        let e = driver("running a reduction");
        let partials = match self.partials.take() {
            Some(buf) => buf,
            None => s
                .alloc_zeros::<f64>(self.mesh.cap.patches.max(1) as usize)
                .map_err(e)?,
        };
        let grid = self.mesh.num_patches;
        let out = partials.device_ptr(s).0;
        // SAFETY: the buffers behind `raw` live as long as `self`, and
        // `partials` holds one `f64` per patch slot.
        let launched = unsafe { self.gpu.launch(&self.reduce, grid, (self.raw, *r, out)) };
        let mut host = vec![0f64; grid as usize];
        let copied = launched.map_err(RunError::from).and_then(|()| {
            s.memcpy_dtoh(&partials.slice(..grid as usize), &mut host[..])
                .and_then(|()| s.synchronize())
                .map_err(|err| RunError::from(e(err)))
        });
        self.partials = Some(partials);
        copied?;
        Ok(attributes::combine_partials(r, &host))
    }

    fn status(&mut self) -> Result<Status, RunError> {
        let last = self.take_snapshot(None)?;
        let status = self.read_snapshot(last)?;
        // The earlier snapshots completed before the last one.
        while let Some(mut snap) = self.pending.pop_front() {
            snap.done = None;
            snap.add_timing(&mut self.seconds)
                .map_err(driver("timing a dynamic kernel"))?;
            self.spare.push(snap);
        }
        Ok(status)
    }

    fn round_status(&mut self) -> Result<Status, RunError> {
        match self.pending.pop_front() {
            Some(snap) => self.read_snapshot(snap),
            None => self.status(),
        }
    }

    fn runs_ahead(&self) -> bool {
        true
    }

    fn mesh(&mut self) -> Result<&DynamicMesh, RunError> {
        self.copy_back()?;
        Ok(self.mesh)
    }

    fn device(&self) -> String {
        self.gpu.name()
    }
}

//! The GPU backend: the device crate's kernels as PTX embedded at build
//! time, loaded and launched through cudarc (thread blocks over patches:
//! one per patch, or for the dynamic updates as many as the device holds
//! at once, each taking queued patches; dynamic shared memory sized to the
//! largest patch).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::sys::{CUdevice_attribute, CUevent_flags, CUfunction_attribute};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr,
    DevicePtrMut, DeviceRepr, DriverError, LaunchConfig, PinnedHostSlice, PushKernelArg,
};

use cavity_device::delaunay::Delaunay;
use cavity_device::dynamic::cavity::CavityApp;
use cavity_device::dynamic::layout::{Capacity, RawDynamicMesh};
use cavity_device::dynamic::smooth::{self, Smoothing};
use cavity_device::dynamic::{cleanup, scheduler, slice, update};
use cavity_device::layout::{Kind, RawPatchMesh};
use cavity_device::operations::{
    CollapseShortEdges, DeleteEdgesInBall, DeleteFacesInBall, DeleteVerticesInBall,
    RefineFaceNeighbourhood, SplitLargeFaces, SplitLongEdges,
};
use cavity_device::query::Query;
use cavity_device::remesh::{CollapseShortEdgesSafely, ImproveValence};
use cavity_device::track::{Advection, ShorterDiagonal};

use super::cubin_cache::{self, KernelOrigin};
use super::{BackendError, GpuSeconds, QueryResult, max_shared_bytes, sources};
use crate::directed_edges::DirectedEdgesMesh;
use crate::dynamic::DynamicMesh;
use crate::patched::PatchedMesh;
use crate::rounds::{Rounds, RunError, Status, Update, status_of};

/// The device crate compiled to PTX by `build.rs` (sm_90 unless
/// `CAVITY_CUDA_ARCH` said otherwise at build time).
pub const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/cavity_device.ptx"));

/// A hash of [`PTX`] taken at build time: the key of its compiled form in
/// the kernels' cache ([`super::cubin_cache`]).
const PTX_HASH: u64 = include!(concat!(env!("OUT_DIR"), "/ptx_hash.rs"));

/// Why this build has no PTX ([`PTX`] is empty): the build script's
/// toolchain could not build it (`cavity_ptx_builder::Outcome::Skipped`).
pub const PTX_MISSING: Option<&str> = include!(concat!(env!("OUT_DIR"), "/ptx_missing.rs"));

/// Threads per block of the element-wise kernels.
const ELEMENT_BLOCK_DIM: u32 = 256;

fn driver(what: &'static str) -> impl Fn(DriverError) -> BackendError + Copy {
    move |source| BackendError::Driver { what, source }
}

/// A CUDA context on device 0 with the kernels loaded.
pub struct CudaBackend {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    name: String,
    smem_limit: usize,
    origin: KernelOrigin,
}

/// A patched mesh resident in GPU memory.
pub struct DeviceMesh {
    patches: CudaSlice<u8>,
    fe: CudaSlice<u16>,
    ev: CudaSlice<u16>,
    ribbon: CudaSlice<u32>,
    stash: CudaSlice<u32>,
    masks: CudaSlice<u32>,
    raw: KernelMesh,
    /// Per query (by discriminant): the neighbour-sum kernel and its launch
    /// configuration, prepared once so that launches do no host work;
    /// `None` where the query's shared memory exceeds the device's limit.
    neighbor_sum: Vec<Option<(CudaFunction, LaunchConfig)>>,
}

/// The patched mesh's addresses as the kernels' by-value parameter.
#[repr(transparent)]
#[derive(Clone, Copy)]
struct KernelMesh(RawPatchMesh);

// SAFETY: `RawPatchMesh` is `repr(C)` plain data (addresses and lengths),
// the layout of the kernels' `RawPatchMesh` parameter.
unsafe impl cudarc::driver::DeviceRepr for KernelMesh {}

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
            name,
            smem_limit,
            origin,
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
        update::shared_bytes::<A>(cap, DYNAMIC_BLOCK_DIM) <= self.smem_limit
    }

    /// The stream all work is queued on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    fn function(&self, name: &str) -> Result<CudaFunction, BackendError> {
        self.module
            .load_function(name)
            .map_err(driver("finding a kernel in the PTX"))
    }

    /// Copies a host slice to the device (at least one element, so empty
    /// meshes get valid pointers).
    pub fn upload<T: cudarc::driver::DeviceRepr + Default + Clone>(
        &self,
        data: &[T],
    ) -> Result<CudaSlice<T>, BackendError> {
        let padded;
        let src = if data.is_empty() {
            padded = vec![T::default()];
            &padded[..]
        } else {
            data
        };
        self.stream
            .clone_htod(src)
            .map_err(driver("copying to the GPU"))
    }

    /// Copies a device slice back.
    pub fn download<T: cudarc::driver::DeviceRepr + Default + Clone>(
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

    /// Uploads the patched mesh.
    pub fn upload_mesh(&self, mesh: &PatchedMesh) -> Result<DeviceMesh, BackendError> {
        let patches = self.upload(bytemuck::cast_slice::<_, u8>(&mesh.patches))?;
        let fe = self.upload(&mesh.fe)?;
        let ev = self.upload(&mesh.ev)?;
        let ribbon = self.upload(&mesh.ribbon)?;
        let stash = self.upload(&mesh.stash)?;
        let masks = self.upload(&mesh.masks)?;
        let raw = KernelMesh(RawPatchMesh {
            patches: patches.device_ptr(&self.stream).0,
            fe: fe.device_ptr(&self.stream).0,
            ev: ev.device_ptr(&self.stream).0,
            ribbon: ribbon.device_ptr(&self.stream).0,
            stash: stash.device_ptr(&self.stream).0,
            masks: masks.device_ptr(&self.stream).0,
            lens: [
                mesh.patches.len() as u32,
                mesh.fe.len() as u32,
                mesh.ev.len() as u32,
                mesh.ribbon.len() as u32,
                mesh.stash.len() as u32,
                mesh.masks.len() as u32,
            ],
        });
        let neighbor_sum = Query::ALL
            .iter()
            .map(|&query| self.neighbor_sum_kernel(mesh, query).ok())
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

    /// Launch configuration of a patch kernel for `query`: one block per
    /// patch, the largest patch's shared memory. Errors when it exceeds the
    /// device's limit.
    fn patch_config(
        &self,
        f: &CudaFunction,
        mesh: &PatchedMesh,
        query: Query,
    ) -> Result<LaunchConfig, BackendError> {
        let (threads, _) = query.launch_bounds();
        let smem = max_shared_bytes(mesh, query, threads);
        if smem > self.smem_limit {
            return Err(BackendError::SharedMemory {
                needed: smem,
                limit: self.smem_limit,
                query: query.name(),
            });
        }
        f.set_attribute(
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            smem as i32,
        )
        .map_err(driver("raising the kernel's shared-memory limit"))?;
        Ok(LaunchConfig {
            grid_dim: (mesh.num_patches().max(1), 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: smem as u32,
        })
    }

    /// All results of `query` in global handles (two launches: counts, then
    /// values at the scanned offsets).
    pub fn query(&self, mesh: &PatchedMesh, query: Query) -> Result<QueryResult, BackendError> {
        let dm = self.upload_mesh(mesh)?;
        let f = self.function(&format!("query_export_{}", query.name().to_lowercase()))?;
        let cfg = self.patch_config(&f, mesh, query)?;
        let n = sources(mesh, query);
        let mut counts = self.upload(&vec![0u32; n])?;
        let mut dummy = self.upload(&[0u32])?;
        let null = 0u64;
        let (n32, zero) = (n as u32, 0u32);
        let mut b = self.stream.launch_builder(&f);
        b.arg(&dm.raw).arg(&null).arg(&zero);
        b.arg(&mut counts).arg(&n32).arg(&mut dummy).arg(&zero);
        // SAFETY: argument types and lengths match `query_export`'s contract.
        unsafe { b.launch(cfg) }.map_err(driver("launching a query export kernel"))?;
        let counts = self.download(&counts, n)?;
        let offsets = QueryResult::offsets_of(&counts);
        let total = *offsets.last().unwrap_or(&0);
        let d_offsets = self.upload(&offsets)?;
        let mut d_counts = self.upload(&counts)?;
        let mut values = self.upload(&vec![0u32; total as usize])?;
        let n1 = n32 + 1;
        let mut b = self.stream.launch_builder(&f);
        b.arg(&dm.raw).arg(&d_offsets).arg(&n1);
        b.arg(&mut d_counts).arg(&n32).arg(&mut values).arg(&total);
        // SAFETY: as above.
        unsafe { b.launch(cfg) }.map_err(driver("launching a query export kernel"))?;
        let values = self.download(&values, total as usize)?;
        Ok(QueryResult { offsets, values })
    }

    /// Area-weighted unit vertex normals (`3 * vertices` floats by handle).
    pub fn vertex_normals(
        &self,
        mesh: &PatchedMesh,
        positions: &[f32],
    ) -> Result<Vec<f32>, BackendError> {
        let dm = self.upload_mesh(mesh)?;
        let pos = self.upload(positions)?;
        let mut normals = self.upload(&vec![0u32; positions.len()])?;
        let f = self.function("vertex_normals")?;
        let cfg = self.patch_config(&f, mesh, Query::FV)?;
        let (np, nn) = (positions.len() as u32, positions.len() as u32);
        let mut b = self.stream.launch_builder(&f);
        b.arg(&dm.raw).arg(&pos).arg(&np).arg(&mut normals).arg(&nn);
        // SAFETY: matches `vertex_normals`'s contract; normals zeroed.
        unsafe { b.launch(cfg) }.map_err(driver("launching vertex_normals"))?;
        let g = self.function("normalize_normals")?;
        let vertices = np / 3;
        let mut b = self.stream.launch_builder(&g);
        b.arg(&mut normals).arg(&vertices);
        // SAFETY: `normals` holds 3 * vertices entries.
        unsafe { b.launch(element_config(vertices)) }
            .map_err(driver("launching normalize_normals"))?;
        let bits = self.download(&normals, positions.len())?;
        Ok(bits.into_iter().map(f32::from_bits).collect())
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
        let mut times = Vec::with_capacity(reps);
        for _ in 0..reps {
            let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
            let start = self
                .stream
                .record_event(flags)
                .map_err(driver("recording an event"))?;
            launch()?;
            let end = self
                .stream
                .record_event(flags)
                .map_err(driver("recording an event"))?;
            times.push(start.elapsed_ms(&end).map_err(driver("timing"))? as f64);
        }
        Ok(times)
    }

    /// The neighbour-sum kernel of `query` and its launch configuration.
    fn neighbor_sum_kernel(
        &self,
        mesh: &PatchedMesh,
        query: Query,
    ) -> Result<(CudaFunction, LaunchConfig), BackendError> {
        let f = self.function(&format!(
            "query_neighbor_sum_{}",
            query.name().to_lowercase()
        ))?;
        let cfg = self.patch_config(&f, mesh, query)?;
        Ok((f, cfg))
    }

    /// Launches the neighbour-sum workload of `query` on `mesh`, resident
    /// as `dm` (kernel and launch configuration prepared by `upload_mesh`,
    /// so the launch does no host-side work). Errors when the query's
    /// shared memory exceeds the device's limit.
    pub fn neighbor_sum(
        &self,
        mesh: &PatchedMesh,
        dm: &DeviceMesh,
        query: Query,
        attr: &CudaSlice<f32>,
        out: &mut CudaSlice<f32>,
    ) -> Result<(), BackendError> {
        let prepared;
        let (f, cfg) = match &dm.neighbor_sum[query as usize] {
            Some((f, cfg)) => (f, cfg),
            None => {
                prepared = self.neighbor_sum_kernel(mesh, query)?;
                (&prepared.0, &prepared.1)
            }
        };
        let (na, no) = (attr.len() as u32, out.len() as u32);
        let mut b = self.stream.launch_builder(f);
        b.arg(&dm.raw).arg(attr).arg(&na).arg(out).arg(&no);
        // SAFETY: matches `query_neighbor_sum`'s contract.
        unsafe { b.launch(*cfg) }.map_err(driver("launching a neighbour-sum kernel"))?;
        Ok(())
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
        let f = self.function("baseline_csr_sum")?;
        let (nadj, nattr) = (adj.len() as u32, attr.len() as u32);
        let mut b = self.stream.launch_builder(&f);
        b.arg(&n)
            .arg(offsets)
            .arg(adj)
            .arg(&nadj)
            .arg(attr)
            .arg(&nattr)
            .arg(out);
        // SAFETY: matches `baseline_csr_sum`'s contract.
        unsafe { b.launch(element_config(n)) }.map_err(driver("launching baseline_csr_sum"))?;
        Ok(())
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
        let f = self.function("baseline_pde_sum")?;
        let code = query as u32;
        let lens = [
            de.fv.len() as u32,
            de.outgoing.len() as u32,
            de.edge_half.len() as u32,
            attr.len() as u32,
        ];
        let mut b = self.stream.launch_builder(&f);
        b.arg(&code).arg(&n).arg(&de.fv).arg(&de.twin).arg(&de.edge);
        b.arg(&lens[0]).arg(&de.outgoing).arg(&lens[1]);
        b.arg(&de.edge_half).arg(&lens[2]).arg(&de.max_valence);
        b.arg(attr).arg(&lens[3]).arg(out);
        // SAFETY: matches `baseline_pde_sum`'s contract (the three half-edge
        // arrays have one length).
        unsafe { b.launch(element_config(n)) }.map_err(driver("launching baseline_pde_sum"))?;
        Ok(())
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

/// One thread per element, grid-stride.
fn element_config(n: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n.div_ceil(ELEMENT_BLOCK_DIM).clamp(1, 65535 * 4), 1, 1),
        block_dim: (ELEMENT_BLOCK_DIM, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The dynamic mesh's addresses as the dynamic kernels' by-value parameter.
#[repr(transparent)]
#[derive(Clone, Copy)]
struct KernelDynMesh(RawDynamicMesh);

// SAFETY: `RawDynamicMesh` is `repr(C)` plain data (capacities and
// addresses), the layout of the kernels' `RawDynamicMesh` parameter.
unsafe impl cudarc::driver::DeviceRepr for KernelDynMesh {}

/// Smoothing parameters as a kernel argument.
#[repr(transparent)]
#[derive(Clone, Copy)]
struct KernelSmoothing(Smoothing);

// SAFETY: `Smoothing` is `repr(C)` plain data, the layout of the smoothing
// kernel's `params` parameter.
unsafe impl cudarc::driver::DeviceRepr for KernelSmoothing {}

/// The advection field as a kernel argument.
#[repr(transparent)]
#[derive(Clone, Copy)]
struct KernelAdvection(Advection);

// SAFETY: `Advection` is `repr(C)` plain data, the layout of
// `dynamic_advect`'s `field` parameter.
unsafe impl cudarc::driver::DeviceRepr for KernelAdvection {}

/// Threads per block of the dynamic kernels.
const DYNAMIC_BLOCK_DIM: u32 = 256;

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
    queue: CudaSlice<u32>,
    queue_state: CudaSlice<u32>,
    stats: CudaSlice<u32>,
}

/// A dynamic application with an update kernel in the PTX module.
///
/// # Safety
/// The implementor must be `repr(C)` plain data (or zero-sized), laid out
/// as the `app` parameter of kernel [`CudaApp::KERNEL`], which takes
/// `(RawDynamicMesh, u32)` and, unless the type is zero-sized, the
/// application by value.
pub unsafe trait CudaApp: CavityApp + Copy {
    /// Name of the update kernel.
    const KERNEL: &'static str;
    /// Name of the survey kernel (`dynamic::update::survey`), with the
    /// update kernel's parameters.
    const SURVEY: &'static str;
}

// SAFETY: zero-sized; `dynamic_delaunay` and its survey take no
// application argument.
unsafe impl CudaApp for Delaunay {
    const KERNEL: &'static str = "dynamic_delaunay";
    const SURVEY: &'static str = "dynamic_delaunay_survey";
}

/// Implements [`CudaApp`] for the mesh operations of
/// `cavity_device::operations`.
macro_rules! operation_apps {
    ($($app:ident: $kernel:literal),* $(,)?) => {$(
        // SAFETY: `repr(C)` plain data, the kernels' `app` parameter.
        unsafe impl CudaApp for $app {
            const KERNEL: &'static str = $kernel;
            const SURVEY: &'static str = concat!($kernel, "_survey");
        }
    )*};
}

operation_apps! {
    SplitLongEdges: "dynamic_split_long_edges",
    SplitLargeFaces: "dynamic_split_large_faces",
    CollapseShortEdges: "dynamic_collapse_short_edges",
    DeleteVerticesInBall: "dynamic_delete_vertices_in_ball",
    DeleteEdgesInBall: "dynamic_delete_edges_in_ball",
    DeleteFacesInBall: "dynamic_delete_faces_in_ball",
    RefineFaceNeighbourhood: "dynamic_refine_face_neighbourhood",
    ImproveValence: "dynamic_improve_valence",
    CollapseShortEdgesSafely: "dynamic_collapse_short_edges_safely",
    ShorterDiagonal: "dynamic_shorter_diagonal",
}

/// An application as a kernel argument.
#[repr(transparent)]
#[derive(Clone, Copy)]
struct KernelApp<A>(A);

// SAFETY: `CudaApp` implementors are `repr(C)` plain data laid out as the
// kernel's parameter.
unsafe impl<A: CudaApp> cudarc::driver::DeviceRepr for KernelApp<A> {}

/// Update rounds of dynamic applications on the GPU (see
/// [`crate::rounds`]): the mesh lives on the device from [`CudaRounds::new`]
/// on; [`Rounds::mesh`] copies it back.
pub struct CudaRounds<'a> {
    gpu: &'a CudaBackend,
    mesh: &'a mut DynamicMesh,
    bufs: DynamicBuffers,
    raw: KernelDynMesh,
    /// Each application's update and survey kernels (by name) with their
    /// shared bytes, prepared at first use.
    updates: HashMap<&'static str, (CudaFunction, u32)>,
    /// Per update kernel (by name): the most blocks the device holds at
    /// once, the most a round launches (each block takes patches until the
    /// round's share is taken).
    resident: HashMap<&'static str, u32>,
    calibrate: CudaFunction,
    compact: (CudaFunction, u32),
    refill: (CudaFunction, u32),
    slice: (CudaFunction, u32),
    /// The smoothing's rings (with their shared memory), step and apply
    /// kernels.
    smooth: ((CudaFunction, u32), CudaFunction, CudaFunction),
    valences: (CudaFunction, u32),
    advect: CudaFunction,
    scratch: Option<CudaSlice<u32>>,
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
    /// Uploads `mesh` and prepares the cleanup, slicing, smoothing and advection
    /// kernels. Errors when a kernel's shared memory exceeds the device's
    /// limit (lower --capacity-factor or --patch-size); an application's
    /// update kernel is checked at its first round.
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
            queue: gpu.upload(&mesh.queue)?,
            queue_state: gpu.upload(&mesh.queue_state)?,
            stats: gpu.upload(&mesh.stats)?,
        };
        gpu.stream
            .synchronize()
            .map_err(driver("copying to the GPU"))?;
        let upload = start.elapsed().as_secs_f64();
        let s = &gpu.stream;
        let raw = KernelDynMesh(RawDynamicMesh {
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
            queue: bufs.queue.device_ptr(s).0,
            queue_state: bufs.queue_state.device_ptr(s).0,
            stats: bufs.stats.device_ptr(s).0,
        });
        let with_smem = |name: &str, smem: usize| dynamic_kernel(gpu, name, smem);
        let compact = with_smem(
            "dynamic_compact",
            cleanup::compact_shared_bytes(&mesh.cap, DYNAMIC_BLOCK_DIM),
        )?;
        let refill = with_smem(
            "dynamic_refill",
            scheduler::refill_shared_bytes(DYNAMIC_BLOCK_DIM),
        )?;
        let slice = with_smem(
            "dynamic_slice",
            slice::shared_bytes(&mesh.cap, DYNAMIC_BLOCK_DIM),
        )?;
        let calibrate = gpu.function("dynamic_calibrate")?;
        let smooth = (
            with_smem(
                "dynamic_smooth_rings",
                smooth::shared_bytes(&mesh.cap, DYNAMIC_BLOCK_DIM),
            )?,
            gpu.function("dynamic_smooth_step")?,
            gpu.function("dynamic_smooth_apply")?,
        );
        let valences = with_smem(
            "dynamic_store_valences",
            smooth::shared_bytes(&mesh.cap, DYNAMIC_BLOCK_DIM),
        )?;
        Ok(CudaRounds {
            gpu,
            mesh,
            bufs,
            raw,
            updates: HashMap::new(),
            resident: HashMap::new(),
            calibrate,
            compact,
            refill,
            slice,
            smooth,
            valences,
            advect: gpu.function("dynamic_advect")?,
            scratch: None,
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

    /// Launches update kernel `f` of `app` on `blocks` blocks.
    fn launch_update<A: CudaApp>(
        &self,
        f: &CudaFunction,
        blocks: u32,
        smem: u32,
        salt: u32,
        app: &A,
    ) -> Result<(), BackendError> {
        let app = KernelApp(*app);
        let mut b = self.gpu.stream.launch_builder(f);
        b.arg(&self.raw).arg(&salt);
        if size_of::<A>() > 0 {
            b.arg(&app);
        }
        // SAFETY: `(RawDynamicMesh, u32[, app])` is an update kernel's
        // parameter list (`CudaApp`); the buffers behind `raw` live as long
        // as `self`.
        unsafe { b.launch(dynamic_config(blocks, smem)) }
            .map_err(driver("launching a dynamic kernel"))?;
        Ok(())
    }

    /// Launches `f`, a dynamic kernel taking the mesh only, on `grid`
    /// blocks.
    fn launch_plain(&self, f: &CudaFunction, grid: u32, smem: u32) -> Result<(), BackendError> {
        let mut b = self.gpu.stream.launch_builder(f);
        b.arg(&self.raw);
        // SAFETY: the kernel takes `(RawDynamicMesh)`; the buffers behind
        // `raw` live as long as `self`.
        unsafe { b.launch(dynamic_config(grid, smem)) }
            .map_err(driver("launching a dynamic kernel"))?;
        Ok(())
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
        s.memcpy_dtoh(&src.slice(..used), &mut dst[..used])
    }
}

/// The launch shape of the dynamic kernels: `grid` blocks (at least one)
/// of [`DYNAMIC_BLOCK_DIM`] threads with `smem` bytes of shared memory.
fn dynamic_config(grid: u32, smem: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid.max(1), 1, 1),
        block_dim: (DYNAMIC_BLOCK_DIM, 1, 1),
        shared_mem_bytes: smem,
    }
}

/// A dynamic kernel `name` with `smem` bytes of dynamic shared memory, the
/// carveout set to all shared memory. Errors when `smem` exceeds the
/// device's limit.
fn dynamic_kernel(
    gpu: &CudaBackend,
    name: &str,
    smem: usize,
) -> Result<(CudaFunction, u32), BackendError> {
    if smem > gpu.smem_limit {
        return Err(BackendError::SharedMemory {
            needed: smem,
            limit: gpu.smem_limit,
            query: "the dynamic update",
        });
    }
    let f = gpu.function(name)?;
    f.set_attribute(
        CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        smem as i32,
    )
    .map_err(driver("raising the kernel's shared-memory limit"))?;
    // All of the SM's unified memory as shared memory, so that as many
    // blocks fit as the launch bounds ask for (two per SM).
    f.set_attribute(
        CUfunction_attribute::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
        100,
    )
    .map_err(driver("setting the kernel's shared-memory carveout"))?;
    Ok((f, smem as u32))
}

impl<A: CudaApp> Update<A> for CudaRounds<'_> {
    fn survey(&mut self, app: &A) -> Result<(), RunError> {
        if !self.updates.contains_key(A::SURVEY) {
            let smem = update::shared_bytes::<A>(&self.mesh.cap, DYNAMIC_BLOCK_DIM);
            let kernel = dynamic_kernel(self.gpu, A::SURVEY, smem)?;
            self.updates.insert(A::SURVEY, kernel);
        }
        let (survey, smem) = &self.updates[A::SURVEY];
        self.launch_update(survey, self.mesh.num_patches, *smem, self.rounds, app)?;
        Ok(())
    }

    fn round(&mut self, app: &A, blocks: u32) -> Result<(), RunError> {
        let salt = self.rounds;
        self.rounds = self.rounds.wrapping_add(1);
        if !self.updates.contains_key(A::KERNEL) {
            let smem = update::shared_bytes::<A>(&self.mesh.cap, DYNAMIC_BLOCK_DIM);
            let kernel = dynamic_kernel(self.gpu, A::KERNEL, smem)?;
            let per_sm = kernel
                .0
                .occupancy_max_active_blocks_per_multiprocessor(DYNAMIC_BLOCK_DIM, smem, None)
                .map_err(driver("reading the update kernel's occupancy"))?;
            let sms = self
                .gpu
                .ctx
                .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
                .map_err(driver("reading the multiprocessor count"))?;
            self.resident
                .insert(A::KERNEL, (per_sm * sms.max(1) as u32).max(1));
            self.updates.insert(A::KERNEL, kernel);
        }
        let blocks = blocks.min(self.resident[A::KERNEL]);
        let (update, smem) = &self.updates[A::KERNEL];
        let n = self.mesh.num_patches;
        let s = &self.gpu.stream;
        let e = driver("timing a dynamic kernel");
        let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
        let t0 = s.record_event(flags).map_err(e)?;
        self.launch_update(update, blocks, *smem, salt, app)?;
        let t1 = s.record_event(flags).map_err(e)?;
        self.launch_plain(&self.calibrate, n, 0)?;
        let t2 = s.record_event(flags).map_err(e)?;
        self.launch_plain(&self.compact.0, n, self.compact.1)?;
        let t3 = s.record_event(flags).map_err(e)?;
        let snap = self.take_snapshot(Some([t0, t1, t2, t3]))?;
        self.pending.push_back(snap);
        Ok(())
    }
}

impl Rounds for CudaRounds<'_> {
    fn refill(&mut self, changed_only: bool) -> Result<(), RunError> {
        let (f, smem) = &self.refill;
        let mut b = self.gpu.stream.launch_builder(f);
        let changed_only = changed_only as u32;
        b.arg(&self.raw).arg(&changed_only);
        // SAFETY: the refill kernel takes `(RawDynamicMesh, u32)`; the
        // buffers behind `raw` live as long as `self`.
        unsafe { b.launch(dynamic_config(1, *smem)) }
            .map_err(driver("launching the refill kernel"))?;
        Ok(())
    }

    fn slice(&mut self, seed: Kind) -> Result<(), RunError> {
        let mut b = self.gpu.stream.launch_builder(&self.slice.0);
        let seed = seed as u32;
        b.arg(&self.raw).arg(&seed);
        // SAFETY: the slicing kernel takes `(RawDynamicMesh, u32)`; the
        // buffers behind `raw` live as long as `self`.
        unsafe { b.launch(dynamic_config(self.mesh.num_patches, self.slice.1)) }
            .map_err(driver("launching the slicing kernel"))?;
        let s = &self.gpu.stream;
        let e = driver("reading the patch count");
        let mut queue_state = [0u32; scheduler::STATE_WORDS as usize];
        s.memcpy_dtoh(&self.bufs.queue_state, &mut queue_state[..])
            .map_err(e)?;
        s.synchronize().map_err(e)?;
        let n = queue_state[scheduler::PATCHES as usize];
        self.mesh.num_patches = n;
        self.raw.0.num_patches = n;
        self.launch_plain(&self.calibrate, n, 0)?;
        self.launch_plain(&self.compact.0, n, self.compact.1)?;
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
        let grid = self.mesh.num_patches;
        let ((rings, smem), step, apply) = &self.smooth;
        let params = KernelSmoothing(*params);
        let e = driver("launching a smoothing kernel");
        let first = at(a);
        let mut l = s.launch_builder(rings);
        l.arg(&self.raw)
            .arg(&headers)
            .arg(&entries)
            .arg(&first)
            .arg(&params);
        // SAFETY: the arguments match `dynamic_smooth_rings`; the buffers
        // lie inside the scratch (`scratch_layout`), which lives in `self`.
        unsafe { l.launch(dynamic_config(grid, *smem)) }.map_err(e)?;
        let (mut from, mut to) = (at(a), at(b));
        for _ in 0..steps {
            let mut l = s.launch_builder(step);
            l.arg(&self.raw)
                .arg(&headers)
                .arg(&entries)
                .arg(&from)
                .arg(&to)
                .arg(&params);
            // SAFETY: the arguments match `dynamic_smooth_step`, after the
            // rings; `from` and `to` are the two disjoint position buffers.
            unsafe { l.launch(dynamic_config(grid, 0)) }.map_err(e)?;
            (from, to) = (to, from);
        }
        let mut l = s.launch_builder(apply);
        l.arg(&self.raw).arg(&from);
        // SAFETY: the arguments match `dynamic_smooth_apply`; `from` holds
        // the last step's positions.
        unsafe { l.launch(dynamic_config(grid, 0)) }.map_err(e)?;
        Ok(())
    }

    fn advect(&mut self, field: &Advection) -> Result<(), RunError> {
        let field = KernelAdvection(*field);
        let mut b = self.gpu.stream.launch_builder(&self.advect);
        b.arg(&self.raw).arg(&field);
        // SAFETY: the arguments match `dynamic_advect`; the buffers behind
        // `raw` live as long as `self`.
        unsafe { b.launch(dynamic_config(self.mesh.num_patches, 0)) }
            .map_err(driver("launching the advection kernel"))?;
        Ok(())
    }

    fn store_valences(&mut self) -> Result<(), RunError> {
        let (f, smem) = &self.valences;
        self.launch_plain(f, self.mesh.num_patches, *smem)?;
        Ok(())
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

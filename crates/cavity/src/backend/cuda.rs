//! The GPU backend: the device crate's kernels as PTX embedded at build
//! time, loaded and launched through cudarc (one thread block per patch,
//! dynamic shared memory sized to the largest patch).

use std::sync::Arc;

use cudarc::driver::sys::{CUdevice_attribute, CUevent_flags, CUfunction_attribute};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DriverError,
    LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::Ptx;

use cavity_device::layout::RawPatchMesh;
use cavity_device::query::Query;

use super::{BackendError, QueryResult, max_shared_bytes, sources};
use crate::directed_edges::DirectedEdgesMesh;
use crate::patched::PatchedMesh;

/// The device crate compiled to PTX by `build.rs` (sm_90 unless
/// `CAVITY_CUDA_ARCH` said otherwise at build time).
pub const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/cavity_device.ptx"));

/// Threads per block of the element-wise kernels.
const ELEMENT_BLOCK_DIM: u32 = 256;

fn driver(what: &'static str) -> impl FnOnce(DriverError) -> BackendError {
    move |source| BackendError::Driver { what, source }
}

/// A CUDA context on device 0 with the kernels loaded.
pub struct CudaBackend {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    name: String,
    smem_limit: usize,
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
        let module = ctx
            .load_module(Ptx::from_src(PTX))
            .map_err(driver("loading the PTX (built for sm_90 by default; set CAVITY_CUDA_ARCH at build time for other GPUs)"))?;
        let stream = ctx.default_stream();
        Ok(CudaBackend {
            ctx,
            stream,
            module,
            name,
            smem_limit,
        })
    }

    /// The device name, e.g. "NVIDIA H100 80GB HBM3".
    pub fn name(&self) -> String {
        self.name.clone()
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

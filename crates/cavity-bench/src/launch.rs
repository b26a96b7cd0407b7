//! The query benchmark's launches: the neighbour-sum workload through the
//! patch kernels on either backend, and the global-memory baselines
//! (stored CSR, Parallel Directed Edges) on the GPU
//! ([`cavity_bench_kernels`]).

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

use cavity::PatchedMesh;
use cavity::backend::BackendError;
use cavity::backend::cpu::CpuBackend;
use cavity::backend::cuda::{CudaBackend, DeviceMesh, Loaded};
use cavity_bench_kernels::baseline::{BaselineCsrSum, BaselinePdeSum, RawDirectedEdges};
use cavity_bench_kernels::neighbor_sum::{NeighborSumParams, NeighborSums};
use cavity_device::query::Query;

use crate::directed_edges::DirectedEdgesMesh;

/// The benchmark kernels' PTX (empty when the build had no NVPTX
/// toolchain).
pub const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/cavity_bench_kernels.ptx"));

/// `out[src] = Σ attr[n]` over `query`'s results on the CPU backend.
pub fn cpu_neighbor_sum(
    cpu: &CpuBackend,
    mesh: &PatchedMesh,
    query: Query,
    attr: &[f32],
    out: &mut [f32],
) {
    let params = (
        mesh.raw(),
        attr.as_ptr() as u64,
        attr.len() as u32,
        out.as_mut_ptr() as u64,
        out.len() as u32,
    );
    // SAFETY: the arrays hold the lengths passed and live through the
    // launch, which returns when the blocks have run.
    unsafe { cpu.launch_query::<NeighborSums>(mesh, query, params) };
}

/// A patched mesh resident on the GPU with the neighbour-sum kernel of
/// every query loaded, so that a timed launch does no host work.
pub struct GpuWorkload<'a> {
    gpu: &'a CudaBackend,
    mesh: &'a PatchedMesh,
    resident: DeviceMesh,
    /// Per query (by discriminant); `None` where the query's shared
    /// memory exceeds the device's limit (its launch reports that).
    kernels: Vec<Option<Loaded<NeighborSumParams>>>,
}

impl<'a> GpuWorkload<'a> {
    /// Uploads `mesh` and loads the kernels (the benchmark's PTX added to
    /// `gpu` first).
    ///
    /// # Errors
    /// A driver error, or [`BackendError::NoKernels`] when this build has
    /// no PTX.
    pub fn new(gpu: &'a CudaBackend, mesh: &'a PatchedMesh) -> Result<Self, BackendError> {
        gpu.add_kernels(PTX)?;
        let resident = gpu.upload_mesh(mesh)?;
        let kernels = Query::ALL
            .iter()
            .map(|&q| gpu.query_kernel::<NeighborSums>(mesh, q).ok())
            .collect();
        Ok(GpuWorkload {
            gpu,
            mesh,
            resident,
            kernels,
        })
    }

    /// Launches the neighbour sum of `query` from `attr` into `out`.
    ///
    /// # Errors
    /// [`BackendError::SharedMemory`] when the query's patches do not fit
    /// a block; a driver error when the launch fails.
    pub fn neighbor_sum(
        &self,
        query: Query,
        attr: &CudaSlice<f32>,
        out: &mut CudaSlice<f32>,
    ) -> Result<(), BackendError> {
        let prepared;
        let kernel = match &self.kernels[query as usize] {
            Some(kernel) => kernel,
            None => {
                prepared = self.gpu.query_kernel::<NeighborSums>(self.mesh, query)?;
                &prepared
            }
        };
        let (na, no) = (attr.len() as u32, out.len() as u32);
        let s = self.gpu.stream();
        // The guards record the slices' use behind the launch when dropped.
        let (a, _read) = attr.device_ptr(s);
        let (o, _written) = out.device_ptr_mut(s);
        let params = (self.resident.raw(), a, na, o, no);
        // SAFETY: `attr` and `out` hold the lengths passed; the resident
        // mesh is `self.mesh`'s.
        unsafe { self.gpu.launch(kernel, self.mesh.num_patches(), params) }
    }
}

/// Directed Edges arrays resident in GPU memory (the PDE baseline's input).
pub struct DeviceDirectedEdges {
    fv: CudaSlice<u32>,
    twin: CudaSlice<u32>,
    edge: CudaSlice<u32>,
    outgoing: CudaSlice<u32>,
    edge_half: CudaSlice<u32>,
    max_valence: u32,
}

impl DeviceDirectedEdges {
    /// Uploads `de`.
    ///
    /// # Errors
    /// A driver error when an allocation or copy fails.
    pub fn upload(gpu: &CudaBackend, de: &DirectedEdgesMesh) -> Result<Self, BackendError> {
        Ok(DeviceDirectedEdges {
            fv: gpu.upload(&de.fv)?,
            twin: gpu.upload(&de.twin)?,
            edge: gpu.upload(&de.edge)?,
            outgoing: gpu.upload(&de.outgoing)?,
            edge_half: gpu.upload(&de.edge_half)?,
            max_valence: de.max_valence,
        })
    }
}

/// Blocks of an element-wise kernel of `threads` threads a block over `n`
/// elements (grid-stride).
fn element_grid(threads: u32, n: u32) -> u32 {
    n.div_ceil(threads).clamp(1, 65535 * 4)
}

/// Launches the naive CSR baseline: `out[i] = Σ attr[adj[k]]`.
///
/// # Errors
/// A driver error, or [`BackendError::NoSuchKernel`] when the benchmark's
/// PTX was not added ([`GpuWorkload::new`] adds it).
pub fn baseline_sum(
    gpu: &CudaBackend,
    n: u32,
    offsets: &CudaSlice<u32>,
    adj: &CudaSlice<u32>,
    attr: &CudaSlice<f32>,
    out: &mut CudaSlice<f32>,
) -> Result<(), BackendError> {
    assert!(offsets.len() > n as usize && out.len() >= n as usize);
    let kernel = gpu.load::<BaselineCsrSum>(0)?;
    let s = gpu.stream();
    let (nadj, nattr) = (adj.len() as u32, attr.len() as u32);
    // The guards record the slices' use behind the launch when dropped.
    let ((o, _r0), (a, _r1), (t, _r2)) =
        (offsets.device_ptr(s), adj.device_ptr(s), attr.device_ptr(s));
    let (w, _written) = out.device_ptr_mut(s);
    let params = (n, o, a, nadj, t, nattr, w);
    // SAFETY: `offsets` holds `n + 1` entries and `out` `n` (checked); the
    // other lengths are the slices'.
    unsafe { gpu.launch(&kernel, element_grid(kernel.threads(), n), params) }
}

/// Launches the PDE baseline of `query` over `n` source elements on
/// uploaded Directed Edges arrays.
///
/// # Errors
/// As [`baseline_sum`].
pub fn baseline_pde(
    gpu: &CudaBackend,
    query: Query,
    n: u32,
    de: &DeviceDirectedEdges,
    attr: &CudaSlice<f32>,
    out: &mut CudaSlice<f32>,
) -> Result<(), BackendError> {
    assert!(out.len() >= n as usize);
    let kernel = gpu.load::<BaselinePdeSum>(0)?;
    let s = gpu.stream();
    let nattr = attr.len() as u32;
    // The guards record the slices' use behind the launch when dropped.
    let (a, _read) = attr.device_ptr(s);
    let (o, _written) = out.device_ptr_mut(s);
    let mesh = RawDirectedEdges {
        fv: gpu.address(&de.fv),
        twin: gpu.address(&de.twin),
        edge: gpu.address(&de.edge),
        outgoing: gpu.address(&de.outgoing),
        edge_half: gpu.address(&de.edge_half),
        n_half: de.fv.len() as u32,
        n_vertices: de.outgoing.len() as u32,
        n_edges: de.edge_half.len() as u32,
        max_valence: de.max_valence,
    };
    let params = (query as u32, n, mesh, a, nattr, o);
    // SAFETY: the three half-edge arrays have one length; `out` holds `n`
    // entries (checked).
    unsafe { gpu.launch(&kernel, element_grid(kernel.threads(), n), params) }
}

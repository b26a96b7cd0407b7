//! The static first-order queries on the GPU: a patched mesh uploaded
//! ([`DeviceMesh`]) and a query's whole result exported in two launches
//! (counts, then values at the scanned offsets).

use std::marker::PhantomData;

use cudarc::driver::CudaSlice;

use cavity_device::export::{Exports, ForQuery, PerQuery, for_query};
use cavity_device::kernel::Kernel;
use cavity_device::layout::RawPatchMesh;
use cavity_device::query::Query;

use super::context::{CudaBackend, Loaded};
use super::kernel_args::KernelArgs;
use crate::backend::error::BackendError;
use crate::patched::PatchedMesh;
use crate::query_result::QueryResult;

/// A patched mesh resident in GPU memory.
pub struct DeviceMesh {
    patches: CudaSlice<u8>,
    fe: CudaSlice<u16>,
    ev: CudaSlice<u16>,
    ribbon: CudaSlice<u32>,
    stash: CudaSlice<u32>,
    masks: CudaSlice<u32>,
    raw: RawPatchMesh,
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
    /// Uploads the patch arrays of `mesh`.
    ///
    /// # Errors
    /// A driver error when an allocation or copy fails.
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
        Ok(DeviceMesh {
            patches,
            fe,
            ev,
            ribbon,
            stash,
            masks,
            raw,
        })
    }

    /// The kernel of family `F` for `query`, with the query's shared
    /// memory for the largest patch of `mesh`.
    ///
    /// # Errors
    /// As [`CudaBackend::load`].
    pub fn query_kernel<F: PerQuery>(
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
                gpu.load::<F::Kernel<Q>>(mesh.query_shared_bytes(query, threads))
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
        let n = mesh.count(query.source()) as u32;
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
}

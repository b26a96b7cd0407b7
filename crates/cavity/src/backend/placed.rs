//! A dynamic mesh placed where a backend's update rounds run ([`PlacedMesh`]): on
//! the GPU the mesh is patched on the device ([`Backend::patch_buffers`])
//! and its dynamic layout (Mahmoud et al. 2024, section 5.1) is made there
//! from the patches by the kernels of `cavity_device::dynamic::fill`
//! ([`PatchBuffers::to_dynamic`]), so that nothing of it crosses to the
//! host before the rounds copy their result back; on the CPU backend, and
//! where the device's build falls back to the host's, it is the host's
//! [`DynamicMesh::from_patched_with`]. Both give the same arrays.

use std::sync::Arc;

use cudarc::driver::CudaSlice;

use cavity_device::dynamic::fill::{
    FAILED_HEADER, FAILED_TABLE, FillAttributes, FillSlots, failed_table,
};
use cavity_device::dynamic::layout::{COUNT_WORDS, Capacity, STASH_SIZE};
use cavity_device::layout::Kind;

use super::AnyRounds;
use super::buffer::Buffer;
use super::cpu::CpuRounds;
use super::error::BackendError;
use super::partition::PartitionError;
use super::patch_build::halves;
use super::patches::{PatchBuffers, Patches};
use super::topology::TopologyOn;
use super::{Backend, OnRounds, beside, cuda, drive, on_rounds};
use crate::TriMesh;
use crate::attributes::AttributeLayout;
use crate::dynamic::{CapacityFactors, DynamicError, DynamicMesh, Shape};
use crate::normalize::Normalization;
use crate::patcher::PatchError;
use crate::rounds::RunError;
use crate::settings::{NamesSettings, Setting};
use crate::topology::Topology;

/// A dynamic mesh ready for a backend's rounds ([`Backend::place`]): on
/// the host, or made on the device and kept there until
/// [`Backend::run_placed`] copies the rounds' result back (or
/// [`PlacedMesh::into_host`] copies it as made).
pub struct PlacedMesh {
    /// The mesh; while the layout is on the device, its shell (the
    /// capacities and counts, no arrays).
    mesh: DynamicMesh,
    /// The layout on the device: counts, FE and EV (words of two 16-bit
    /// entries), masks, tables, stashes, and the attribute words of
    /// vertices, edges and faces.
    resident: Option<[Buffer<u32>; 9]>,
}

impl std::fmt::Debug for PlacedMesh {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlacedMesh")
            .field("cap", &self.mesh.cap())
            .field("num_patches", &self.mesh.num_patches())
            .field("resident", &self.is_resident())
            .finish_non_exhaustive()
    }
}

impl From<DynamicMesh> for PlacedMesh {
    fn from(mesh: DynamicMesh) -> PlacedMesh {
        PlacedMesh {
            mesh,
            resident: None,
        }
    }
}

impl PlacedMesh {
    /// The capacities of every patch slot.
    pub fn cap(&self) -> Capacity {
        self.mesh.cap()
    }

    /// Patch slots in use.
    pub fn num_patches(&self) -> u32 {
        self.mesh.num_patches()
    }

    /// Bytes of the layout's arrays ([`DynamicMesh::bytes`]).
    pub fn bytes(&self) -> usize {
        self.mesh.bytes()
    }

    /// [`PlacedMesh::bytes`] per face (every input face is owned once
    /// before the rounds: [`DynamicMesh::bytes_per_face`]).
    pub fn bytes_per_face(&self) -> f64 {
        self.bytes() as f64 / self.mesh.input_faces.max(1) as f64
    }

    /// Whether the layout is on the device.
    pub fn is_resident(&self) -> bool {
        self.resident.is_some()
    }

    /// The mesh as `b`'s rounds take it: its shell with the layout's
    /// arrays where they lie on the GPU (as `b` is), else the mesh on the
    /// host ([`PlacedMesh::into_host`]).
    ///
    /// # Errors
    /// A failed copy.
    #[allow(clippy::type_complexity)]
    pub(super) fn into_rounds(
        self,
        b: &Backend,
    ) -> Result<(DynamicMesh, Option<[CudaSlice<u32>; 9]>), BackendError> {
        match (b, self.resident) {
            (Backend::Cuda(_), Some(arrays)) if arrays.iter().all(Buffer::is_on_gpu) => {
                let slices = arrays.map(|a| a.into_gpu().expect("checked on the GPU above"));
                Ok((self.mesh, Some(slices)))
            }
            (_, resident) => {
                let placed = PlacedMesh {
                    mesh: self.mesh,
                    resident,
                };
                Ok((placed.into_host(b)?, None))
            }
        }
    }

    /// The mesh on the host: the layout copied back from the device where
    /// it was made there (`b` the backend that made it).
    ///
    /// # Errors
    /// A failed copy.
    pub fn into_host(self, b: &Backend) -> Result<DynamicMesh, BackendError> {
        let PlacedMesh { mut mesh, resident } = self;
        let Some(arrays) = resident else {
            return Ok(mesh);
        };
        let cap = mesh.cap();
        let n = cap.patches as usize;
        let [counts, fe, ev, masks, hash, stash, v, e, f] = arrays;
        let attrs = |kind: Kind| cap.attr_words(kind) as usize * n;
        mesh.counts = b.download(counts, COUNT_WORDS as usize * n)?;
        mesh.fe = halves(&b.download(fe, cap.fe_stride() as usize * n / 2)?);
        mesh.ev = halves(&b.download(ev, cap.ev_stride() as usize * n / 2)?);
        mesh.masks = b.download(masks, cap.mask_stride() as usize * n)?;
        mesh.hash = b.download(hash, cap.hash_stride() as usize * n)?;
        mesh.stash = b.download(stash, STASH_SIZE as usize * n)?;
        mesh.vertex_attrs = b.download(v, attrs(Kind::Vertex))?;
        mesh.edge_attrs = b.download(e, attrs(Kind::Edge))?;
        mesh.face_attrs = b.download(f, attrs(Kind::Face))?;
        mesh.allocate_state();
        Ok(mesh)
    }
}

/// Why [`Backend::place`] failed.
#[derive(Debug, thiserror::Error)]
pub enum PlaceError {
    /// The patches do not fit the dynamic layout, or patching failed.
    #[error(transparent)]
    Dynamic(#[from] DynamicError),
    /// A launch, allocation or copy failed.
    #[error(transparent)]
    Backend(#[from] BackendError),
}

impl From<PartitionError> for PlaceError {
    fn from(e: PartitionError) -> PlaceError {
        e.into_either()
    }
}

impl From<PatchError> for PlaceError {
    fn from(e: PatchError) -> PlaceError {
        DynamicError::Patch(e).into()
    }
}

impl NamesSettings for PlaceError {
    fn settings(&self) -> Vec<Setting> {
        match self {
            PlaceError::Dynamic(e) => e.settings(),
            PlaceError::Backend(e) => e.settings(),
        }
    }
}

crate::names_settings!(PlaceError);

impl PlaceError {
    /// The error as one of a caller whose errors wrap the dynamic mesh's
    /// and the backend's.
    pub fn into_either<E: From<DynamicError> + From<BackendError>>(self) -> E {
        match self {
            PlaceError::Dynamic(e) => e.into(),
            PlaceError::Backend(e) => e.into(),
        }
    }
}

impl PatchBuffers {
    /// The dynamic layout of these patches of `mesh` (the mesh patched)
    /// made on the backend: [`DynamicMesh::from_patched_with`]'s arrays
    /// with the room of `factors` and the attributes of `layout`, made by
    /// [`FillSlots`] and [`FillAttributes`] and left on the backend.
    ///
    /// # Errors
    /// As [`DynamicMesh::from_patched_with`];
    /// [`BackendError::Inconsistent`] for a header over the capacities it
    /// planned (a bug); a driver error from a launch, an allocation or a
    /// copy.
    pub fn to_dynamic(
        &self,
        b: &Backend,
        mesh: &TriMesh,
        factors: CapacityFactors,
        layout: &AttributeLayout,
    ) -> Result<PlacedMesh, PlaceError> {
        let [input_vertices, input_edges, input_faces] = self.counts;
        let shape = Shape {
            patch_size: self.patch_size,
            input_vertices,
            input_edges,
            input_faces,
        };
        let shell = DynamicMesh::planned(&self.infos, shape, factors, layout)?;
        let cap = shell.cap();
        let n = cap.patches as usize;
        let needed = shell.bytes() as u64;
        if let Some(available) = b.free_device_memory()?
            && needed > available
        {
            return Err(DynamicError::Memory {
                needed,
                slots: n as u64,
                per_slot: needed / n.max(1) as u64,
                available,
                memory: "GPU",
            }
            .into());
        }
        let mut counts = b.zeros::<u32>(COUNT_WORDS as usize * n)?;
        let mut fe = b.zeros::<u32>(cap.fe_stride() as usize * n / 2)?;
        let mut ev = b.zeros::<u32>(cap.ev_stride() as usize * n / 2)?;
        let mut masks = b.zeros::<u32>(cap.mask_stride() as usize * n)?;
        let mut hash = b.zeros::<u32>(cap.hash_stride() as usize * n)?;
        let mut stash = b.zeros::<u32>(STASH_SIZE as usize * n)?;
        let mut failed = b.zeros::<u32>(2)?;
        let statics = [
            &self.header_words,
            &self.fe_words,
            &self.ev_words,
            &self.ribbon,
            &self.stash,
        ];
        let params = (
            statics,
            shell.num_patches(),
            cap,
            &mut counts,
            &mut fe,
            &mut ev,
            &mut masks,
            &mut hash,
            &mut stash,
            &mut failed,
        );
        b.launch::<FillSlots>(cap.patches, (0, 0), params)?;
        let failed = b.read_back(&failed, 2)?;
        if failed[FAILED_HEADER as usize] != 0 {
            return Err(BackendError::Inconsistent(
                "a patch header outgrew the capacities planned from it",
            )
            .into());
        }
        if let Some((patch, kind)) = failed_table(failed[FAILED_TABLE as usize]) {
            let info = &self.infos[patch as usize];
            return Err(DynamicError::HashFull {
                patch,
                kind,
                slots: cap.hash_slots(kind),
                entries: info.count(kind) - info.owned(kind),
                factor: factors.elements,
            }
            .into());
        }

        let attrs = |kind: Kind| b.zeros::<u32>(cap.attr_words(kind) as usize * n);
        let (mut v, mut e, mut f) = (attrs(Kind::Vertex)?, attrs(Kind::Edge)?, attrs(Kind::Face)?);
        let positions = b.upload(bytemuck::cast_slice::<f32, u32>(
            mesh.positions.as_flattened(),
        ))?;
        let to_input = self.maps.each_ref().map(|[to_input, _]| to_input);
        let params = (
            [&self.header_words, &self.ribbon, &self.stash],
            to_input,
            &positions,
            cap,
            &mut v,
            &mut e,
            &mut f,
        );
        b.launch::<FillAttributes>(shell.num_patches(), (0, 0), params)?;
        Ok(PlacedMesh {
            mesh: shell,
            resident: Some([counts, fe, ev, masks, hash, stash, v, e, f]),
        })
    }
}

impl Backend {
    /// The dynamic mesh of `mesh` (whose topology is `topo`) for this
    /// backend's rounds: patched as [`Backend::patched`] patches (at most
    /// `patch_size` faces a patch), with the room of `factors` and the
    /// attributes of `layout`, all zero ([`DynamicMesh::from_patched_with`]);
    /// on the GPU made on the device from the device's patches and left
    /// there (see the [module](self)), or converted on the host where the
    /// device's conversion finds a header over the capacities it planned
    /// (`BackendError::Inconsistent`, a bug).
    ///
    /// # Errors
    /// As [`Backend::patched`] (a patch error as [`DynamicError::Patch`])
    /// and [`PatchBuffers::to_dynamic`].
    pub fn place(
        &self,
        mesh: &TriMesh,
        topo: &Topology,
        patch_size: u32,
        factors: CapacityFactors,
        layout: &AttributeLayout,
    ) -> Result<PlacedMesh, PlaceError> {
        self.place_on(
            mesh,
            &TopologyOn::of(self, topo)?,
            patch_size,
            factors,
            layout,
        )
    }

    /// [`Backend::place`] from `mesh`'s topology made for this backend
    /// ([`Backend::topology_on`], [`TopologyOn::of`]); one that keeps its
    /// patches ([`TopologyOn::keeping_patches`]) places `mesh` on those of
    /// an earlier placement at the same patch size.
    ///
    /// # Errors
    /// As [`Backend::place`].
    pub fn place_on(
        &self,
        mesh: &TriMesh,
        topo: &TopologyOn<'_>,
        patch_size: u32,
        factors: CapacityFactors,
        layout: &AttributeLayout,
    ) -> Result<PlacedMesh, PlaceError> {
        let patches = self.kept_or_new_patches(mesh, topo, patch_size)?;
        self.placed_from(&patches, mesh, topo, factors, layout)
    }

    /// [`Backend::place`] of `input` moved into the unit box by
    /// `normalization` ([`Normalization::apply`]), from its topology
    /// `topo` made for this backend ([`Backend::topology_on`] or
    /// [`TopologyOn::of`]): the placed mesh and the normalized mesh. On the
    /// GPU the host normalizes the positions while the device patches the
    /// mesh (patching reads the faces alone); the result is
    /// [`Backend::place`]'s of the normalized mesh.
    ///
    /// # Errors
    /// As [`Backend::place`].
    pub fn place_normalized(
        &self,
        input: &TriMesh,
        normalization: &Normalization,
        topo: &TopologyOn<'_>,
        patch_size: u32,
        (factors, layout): (CapacityFactors, &AttributeLayout),
    ) -> Result<(PlacedMesh, TriMesh), PlaceError> {
        if let Backend::Cpu(_) = self {
            let normalized = normalization.apply(input);
            let patches = self.kept_or_new_patches(&normalized, topo, patch_size)?;
            let placed = self.placed_from(&patches, &normalized, topo, factors, layout)?;
            return Ok((placed, normalized));
        }
        let (patches, normalized) = beside(
            || self.kept_or_new_patches(input, topo, patch_size),
            || normalization.apply(input),
        );
        let placed = self.placed_from(&*patches?, &normalized, topo, factors, layout)?;
        Ok((placed, normalized))
    }

    /// The patches `topo` keeps at `patch_size` ([`TopologyOn::keeping_patches`]),
    /// else `mesh` patched anew ([`Backend::patches`]), kept where `topo`
    /// keeps patches.
    fn kept_or_new_patches(
        &self,
        mesh: &TriMesh,
        topo: &TopologyOn<'_>,
        patch_size: u32,
    ) -> Result<Arc<Patches>, PartitionError> {
        if let Some(kept) = topo.kept_patches(patch_size) {
            return Ok(kept);
        }
        let patches = Arc::new(self.patches(mesh, topo, patch_size)?);
        topo.keep_patches(patch_size, &patches);
        Ok(patches)
    }

    /// The dynamic mesh of `mesh` from its `patches` ([`Backend::place`]'s
    /// second half).
    fn placed_from(
        &self,
        patches: &Patches,
        mesh: &TriMesh,
        topo: &TopologyOn<'_>,
        factors: CapacityFactors,
        layout: &AttributeLayout,
    ) -> Result<PlacedMesh, PlaceError> {
        match patches {
            Patches::OnBackend(buffers) => match buffers.to_dynamic(self, mesh, factors, layout) {
                // The host's conversion of the device's patches, as
                // `Backend::patched` falls back to the host's build.
                Err(PlaceError::Backend(BackendError::Inconsistent(_))) => {
                    let patched = buffers.download(self, &*topo.host(self)?)?;
                    Ok(DynamicMesh::from_patched_with(mesh, &patched, factors, layout)?.into())
                }
                placed => placed,
            },
            Patches::Host(patched) => {
                Ok(DynamicMesh::from_patched_with(mesh, patched, factors, layout)?.into())
            }
        }
    }

    /// [`Backend::run_rounds`] on a placed mesh: a layout on the device
    /// is taken by the GPU's rounds as it lies (no upload). Returns the
    /// driver's result with the mesh the rounds left, on the host.
    ///
    /// # Errors
    /// As [`Backend::run_rounds`]; the mesh is dropped then (run
    /// [`Backend::run_rounds`] on [`PlacedMesh::into_host`]'s mesh to keep
    /// it).
    pub fn run_placed<T, E: From<BackendError>>(
        &self,
        placed: PlacedMesh,
        driver: impl FnOnce(&mut AnyRounds<'_>) -> Result<T, E>,
        copy_back: impl FnOnce(RunError) -> E,
    ) -> Result<(OnRounds<T>, DynamicMesh), E> {
        match (self, placed.into_rounds(self)?) {
            (Backend::Cuda(gpu), (mut mesh, Some(slices))) => {
                let rounds = cuda::CudaRounds::with_resident(gpu, &mut mesh, slices, true)?;
                let ran = drive(AnyRounds::Cuda(Box::new(rounds)), driver, copy_back)?;
                Ok((ran, mesh))
            }
            (_, (mut mesh, _)) => {
                let ran = self.run_rounds(&mut mesh, driver, copy_back)?;
                Ok((ran, mesh))
            }
        }
    }

    /// [`Backend::run_placed`] for a driver that reads back what it needs
    /// (`Rounds::owned_values`, `Rounds::vertex_positions`, reductions): on
    /// the GPU the mesh is not copied back, nor its host arrays made.
    ///
    /// # Errors
    /// The driver's error; a failed allocation of the rounds' arrays.
    pub fn run_placed_without_mesh<T, E: From<BackendError> + From<RunError>>(
        &self,
        placed: PlacedMesh,
        driver: impl FnOnce(&mut AnyRounds<'_>) -> Result<T, E>,
    ) -> Result<OnRounds<T>, E> {
        let (mut mesh, resident) = placed.into_rounds(self)?;
        let mut r = self.rounds_on(&mut mesh, resident)?;
        let value = driver(&mut r)?;
        Ok(on_rounds(&r, value))
    }

    /// This backend's rounds on `mesh` ([`PlacedMesh::into_rounds`]'s
    /// parts): on the GPU on the layout's arrays where they lie on it
    /// (`resident`), else uploaded; the host's arrays allocated for a copy
    /// back only when one is asked for.
    ///
    /// # Errors
    /// A failed upload or allocation.
    pub(super) fn rounds_on<'m>(
        &'m self,
        mesh: &'m mut DynamicMesh,
        resident: Option<[CudaSlice<u32>; 9]>,
    ) -> Result<AnyRounds<'m>, BackendError> {
        Ok(match (self, resident) {
            (Backend::Cuda(gpu), Some(slices)) => AnyRounds::Cuda(Box::new(
                cuda::CudaRounds::with_resident(gpu, mesh, slices, false)?,
            )),
            (Backend::Cuda(gpu), None) => {
                AnyRounds::Cuda(Box::new(cuda::CudaRounds::new(gpu, mesh)?))
            }
            (Backend::Cpu(cpu), _) => AnyRounds::Cpu(CpuRounds::with_backend(mesh, cpu.clone())),
        })
    }
}

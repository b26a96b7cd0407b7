//! The rounds' result exported where it lies ([`Backend::run_placed_exported`]):
//! the dynamic mesh written as indexed faces by the kernels of
//! `cavity_device::dynamic::indexed`, on the GPU or the CPU backend from
//! one source, with only the output read back, not the dynamic layout
//! (Mahmoud et al. 2024, section 5.1). The result is the host's
//! [`DynamicMesh::to_mesh_with_sources`], which stays the reference; the
//! host's export takes over after a copy back where an input index is
//! held twice (a fill-in's copy, whose order the host sorts) and where the
//! device has no memory left for the export's arrays.

use std::time::Instant;

use cavity_device::dynamic::indexed::{
    CountExported, PlaceExported, WriteExportedCorners, place_shared_bytes,
};
use cavity_device::dynamic::layout::{RawDynamicMesh, input_index_word};
use cavity_device::kernel::ELEMENT_BOUNDS;
use cavity_device::layout::Kind;

use super::buffer::Buffer;
use super::error::BackendError;
use super::{AnyRounds, Backend, OnRounds, on_rounds};
use crate::TriMesh;
use crate::dynamic::DynamicMesh;
use crate::rounds::{Rounds, RunError};

use super::placed::PlacedMesh;

/// The rounds' mesh exported ([`Backend::run_placed_exported`]).
pub struct Exported {
    /// The mesh in element order, as [`DynamicMesh::to_mesh`] gives it.
    pub mesh: TriMesh,
    /// The input index of each of its vertices (`NEW_ELEMENT` for one a
    /// fill-in added), as [`DynamicMesh::to_mesh_with_sources`].
    pub sources: Vec<u32>,
    /// Its faces where the backend that exported them holds them, for
    /// work that reads them there next (`Backend::survey_with`); `None`
    /// where the host exported the mesh.
    pub faces_on: Option<FacesOn>,
    /// Wall seconds of the export, its copies to the host included.
    pub seconds: f64,
}

/// The faces of an [`Exported`] mesh on the backend that exported them:
/// three words a face, in the mesh's order; made only by the export, so
/// that what reads them (`Backend::survey_with`) gets the faces of the
/// mesh exported with them.
pub struct FacesOn(pub(crate) Buffer<u32>);

impl FacesOn {
    /// The faces' words, three a face.
    pub fn as_buffer(&self) -> &Buffer<u32> {
        &self.0
    }
}

/// The places of one kind's active owned elements ([`Backend::place_owned`]).
struct Places {
    /// Each element's place in element order, by slot.
    places: Buffer<u32>,
    /// The input index of each place.
    sources: Buffer<u32>,
    /// Elements exported.
    count: u32,
    /// Three words a place: a vertex's position (vertices only).
    positions: Option<Buffer<f32>>,
}

impl Backend {
    /// [`Backend::run_placed`] that exports the mesh the rounds left as
    /// indexed faces where it lies (see the [module](self)): on the GPU
    /// the dynamic layout is not copied back, only the output. Returns the
    /// driver's result with the export.
    ///
    /// # Errors
    /// As [`Backend::run_placed`]; a failed export or copy back, and
    /// [`BackendError::Inconsistent`] for a face corner without an owner
    /// (a mesh `DynamicMesh::validate` rejects); `copy_back` makes them
    /// the caller's error.
    pub fn run_placed_exported<T, E: From<BackendError>>(
        &self,
        placed: PlacedMesh,
        driver: impl FnOnce(&mut AnyRounds<'_>) -> Result<T, E>,
        copy_back: impl FnOnce(RunError) -> E,
    ) -> Result<(OnRounds<T>, Exported), E> {
        let (mut mesh, resident) = placed.into_rounds(self)?;
        let mut r = self.rounds_on(&mut mesh, resident)?;
        let value = driver(&mut r)?;
        let exported = r.export(self).map_err(copy_back)?;
        Ok((on_rounds(&r, value), exported))
    }

    /// The places of the active owned elements of `kind` of `raw`, whose
    /// input indices run below `inputs` (passes 1 and 2 of
    /// `cavity_device::dynamic::indexed`), with their positions for
    /// vertices; `None` when an input index is held twice.
    ///
    /// # Safety
    /// `raw` describes the live arrays of a dynamic mesh on this backend
    /// that nothing writes until the work launched here completes.
    unsafe fn place_owned(
        &self,
        raw: RawDynamicMesh,
        kind: Kind,
        inputs: u32,
    ) -> Result<Option<Places>, BackendError> {
        let cap = raw.cap;
        // A kind without input indices is in patch order.
        let inputs = if cap.attr_stride(kind) > input_index_word(kind) {
            inputs
        } else {
            0
        };
        let n = raw.num_patches;
        let mut present = self.zeros::<u32>(inputs as usize + 1)?;
        let mut added = self.zeros::<u32>(n as usize + 1)?;
        let mut shared = self.zeros::<u32>(1)?;
        let params = (
            raw,
            kind as u32,
            inputs,
            present.raw_addr(),
            added.raw_addr(),
            shared.raw_addr(),
        );
        // SAFETY: the caller's contract for `raw`; `present`, `added` and
        // `shared` are zeroed and as long as the kernel's contract asks,
        // and live until the launch completes (read back below; on the
        // GPU a buffer is freed on the stream, after the work queued).
        unsafe { self.launch_raw::<CountExported>(n, (0, 0), params)? };
        if self.element(&shared, 0)? != 0 {
            return Ok(None);
        }
        self.exclusive_scan(&mut present, inputs + 1)?;
        self.exclusive_scan(&mut added, n + 1)?;
        let kept = self.element(&present, inputs as usize)?;
        // Three words an element (a position, a face's corners) are
        // indexed with 32 bits.
        let count = u64::from(kept) + u64::from(self.element(&added, n as usize)?);
        let count = u32::try_from(3 * count)
            .map(|_| count as u32)
            .map_err(|_| BackendError::TooLarge(count as usize))?;
        let mut places = self.zeros::<u32>(cap.patches as usize * cap.of(kind) as usize)?;
        let mut sources = self.zeros::<u32>(count as usize)?;
        let mut positions = match kind {
            Kind::Vertex => Some(self.zeros::<f32>(3 * count as usize)?),
            Kind::Edge | Kind::Face => None,
        };
        let smem = (
            place_shared_bytes(&cap, kind, ELEMENT_BOUNDS.threads),
            place_shared_bytes(&cap, kind, 1),
        );
        let params = (
            raw,
            kind as u32,
            inputs,
            present.raw_addr(),
            kept,
            added.raw_addr(),
            places.raw_addr(),
            sources.raw_addr(),
            positions.as_mut().map_or(0, Buffer::raw_addr),
        );
        // SAFETY: as above; no input index is held twice (checked above);
        // `present` and `added` are scanned, `places` holds a word a slot,
        // `sources` and `positions` one and three words a place; `present`
        // and `added`, dropped on return, are freed on the GPU's stream
        // after the launch.
        unsafe { self.launch_raw::<PlaceExported>(n, smem, params)? };
        Ok(Some(Places {
            places,
            sources,
            count,
            positions,
        }))
    }

    /// The mesh `raw` (of `inputs` input vertices, edges and faces)
    /// exported as indexed faces on this backend (see the
    /// [module](self)), with its faces kept there; `None` where the host
    /// must export it (an input index held twice).
    ///
    /// # Errors
    /// [`BackendError::Inconsistent`] for a face corner without an active
    /// owned owner; [`BackendError::TooLarge`] past 32-bit indices; a
    /// failed launch, allocation or copy.
    ///
    /// # Safety
    /// As [`Backend::place_owned`].
    unsafe fn export_raw(
        &self,
        raw: RawDynamicMesh,
        inputs: [u32; 3],
    ) -> Result<Option<Exported>, BackendError> {
        let start = Instant::now();
        // SAFETY: the caller's contract.
        let Some(vertices) = (unsafe { self.place_owned(raw, Kind::Vertex, inputs[0])? }) else {
            return Ok(None);
        };
        // The host's memory for the output is faulted in while the device
        // places the faces and writes their corners.
        let nv = vertices.count as usize;
        let landings = (self.landing(3 * nv), self.landing(nv));
        // SAFETY: as above.
        let Some(mut faces) = (unsafe { self.place_owned(raw, Kind::Face, inputs[2])? }) else {
            return Ok(None);
        };
        let nf = faces.count as usize;
        let corners_landing = self.landing(3 * nf);
        let mut corners = self.zeros::<u32>(3 * faces.count as usize)?;
        let mut strays = self.zeros::<u32>(1)?;
        let mut vertex_places = vertices.places;
        let params = (
            raw,
            vertex_places.raw_addr(),
            faces.places.raw_addr(),
            corners.raw_addr(),
            strays.raw_addr(),
        );
        // SAFETY: the caller's contract for `raw`; the places are
        // `place_owned`'s, `corners` holds three words a face; the places,
        // dropped next, are freed on the GPU's stream after the launch.
        unsafe { self.launch_raw::<WriteExportedCorners>(raw.num_patches, (0, 0), params)? };
        drop((vertex_places, faces.places));
        if self.element(&strays, 0)? != 0 {
            return Err(BackendError::Inconsistent(
                "a face's corner has no active owned vertex: the dynamic mesh fails validation",
            ));
        }
        let positions = vertices
            .positions
            .expect("place_owned gives vertices their positions");
        let (positions, sources, corners_host) = (
            self.download_into(positions, 3 * nv, landings.0)?,
            self.download_into(vertices.sources, nv, landings.1)?,
            self.read_back_into(&corners, 3 * nf, corners_landing)?,
        );
        let mesh = TriMesh {
            positions: triples(positions),
            faces: triples(corners_host),
        };
        Ok(Some(Exported {
            mesh,
            sources,
            faces_on: Some(FacesOn(corners)),
            seconds: start.elapsed().as_secs_f64(),
        }))
    }
}

impl AnyRounds<'_> {
    /// The mesh of these rounds exported where it lies on `b` (the
    /// backend running them), else on the host
    /// ([`DynamicMesh::to_mesh_with_sources`]) after a copy back: where an
    /// input index is held twice, or the device has no memory left for
    /// the export (see the [module](self)).
    ///
    /// # Errors
    /// As [`AnyRounds::export_on`] but for running out of memory; a
    /// failed copy back.
    pub(crate) fn export(&mut self, b: &Backend) -> Result<Exported, RunError> {
        let start = Instant::now();
        match self.export_on(b) {
            Ok(Some(exported)) => return Ok(exported),
            Ok(None) => {}
            Err(e) if e.is_out_of_memory() => {}
            Err(e) => return Err(e.into()),
        }
        let (mesh, sources) = self.mesh()?.to_mesh_with_sources();
        Ok(Exported {
            mesh,
            sources,
            faces_on: None,
            seconds: start.elapsed().as_secs_f64(),
        })
    }

    /// The export on `b` alone: `None` where the host must export the mesh
    /// (see [`Backend::export_raw`]), or where `b` is not the backend of
    /// these rounds.
    ///
    /// # Errors
    /// As [`Backend::export_raw`].
    pub(crate) fn export_on(&mut self, b: &Backend) -> Result<Option<Exported>, BackendError> {
        let (raw, inputs) = match (&mut *self, b) {
            (AnyRounds::Cpu(r), Backend::Cpu(_)) => (r.raw(), r.inputs()),
            (AnyRounds::Cuda(r), Backend::Cuda(gpu)) if r.runs_on(gpu) => (r.raw(), r.inputs()),
            _ => return Ok(None),
        };
        // SAFETY: `raw` describes the rounds' arrays on `b` (matched
        // above), which nothing writes while `self` is borrowed mutably.
        unsafe { b.export_raw(raw, inputs) }
    }
}

/// The input counts of vertices, edges and faces of `mesh`.
pub(crate) fn input_counts(mesh: &DynamicMesh) -> [u32; 3] {
    Kind::ALL.map(|kind| mesh.input_count(kind))
}

/// `words` as triples, in place where its capacity allows.
fn triples<T: bytemuck::Pod>(words: Vec<T>) -> Vec<[T; 3]> {
    bytemuck::allocation::try_cast_vec(words)
        .unwrap_or_else(|(_, words)| words.as_chunks::<3>().0.to_vec())
}

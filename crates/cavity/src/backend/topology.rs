//! The mesh's topology where a backend patches from it ([`TopologyOn`]):
//! on the GPU its relations in device buffers, built there from the faces
//! by the kernels of `cavity_device::topology` ([`Backend::topology_on`])
//! or uploaded from a host [`Topology`] ([`TopologyOn::of`]); on the CPU
//! backend the host's [`Topology`] itself. The device's build equals
//! [`Topology::new`] entry for entry, so either serves the patching alike.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use rayon::prelude::*;

use cavity_device::array::{blocks, partial_launch_bytes};
use cavity_device::survey::{EdgeMeasure, measure};
use cavity_device::topology::{
    CountCorners, CountSides, FillEdges, FillSides, FillVertexFaces, MarkDuplicateFaces,
    SortVertexFaces,
};

use super::Backend;
use super::buffer::Buffer;
use super::error::BackendError;
use super::patches::Patches;
use crate::TriMesh;
use crate::defects::{remove_duplicate_faces_with_topology, remove_faces};
use crate::topology::{Topology, mean_edge_length_with};

/// A mesh's relations in a backend's buffers (flattened as in
/// [`Topology`]).
pub(crate) struct Relations {
    /// Three vertices a face, where the relations were built from them
    /// ([`Backend::topology_on`]).
    pub(crate) fv: Option<Buffer<u32>>,
    /// Three edges a face.
    pub(crate) fe: Buffer<u32>,
    /// Two vertices an edge, the lower first.
    pub(crate) ev: Buffer<u32>,
    /// The vertex-face rows: offsets (`vertices + 1`) and faces.
    pub(crate) vf_offsets: Buffer<u32>,
    pub(crate) vf: Buffer<u32>,
    /// The edge-face rows: offsets (`edges + 1`) and faces.
    pub(crate) ef_offsets: Buffer<u32>,
    pub(crate) ef: Buffer<u32>,
}

impl Relations {
    /// Measure `what` ([`EdgeMeasure`], the `measure` constants) over
    /// the `edges` edges with `positions` (three `f32` a vertex), the band
    /// `band` and the zero length `zero` where the measure reads them:
    /// its partials written to `partials` (two words a block, at least
    /// `2 × blocks(edges)`), combined in block order.
    ///
    /// # Errors
    /// A failed launch or copy.
    pub(crate) fn edge_measure(
        &self,
        b: &Backend,
        (positions, edges): (&Buffer<f32>, u32),
        what: u32,
        (band, zero): ((f64, f64), f64),
        partials: &mut Buffer<u32>,
    ) -> Result<f64, BackendError> {
        let grid = blocks(edges);
        let params = (
            &self.ev,
            &self.ef_offsets,
            positions,
            edges,
            what,
            band.0,
            band.1,
            zero,
            &mut *partials,
        );
        b.launch::<EdgeMeasure>(grid, partial_launch_bytes(), params)?;
        combined(b, partials, grid, what)
    }
}

/// The reduction of measure `what` (`cavity_device::survey::measure`)
/// over `grid` blocks' partials (in block order).
///
/// # Errors
/// A failed copy.
pub(crate) fn combined(
    b: &Backend,
    partials: &Buffer<u32>,
    grid: u32,
    what: u32,
) -> Result<f64, BackendError> {
    Ok(b.read_partials(partials, grid)?
        .into_iter()
        .fold(measure::neutral(what), |a, x| measure::combine(what, a, x)))
}

/// Patches kept for later placements, with their patch size.
type KeptPatches = (u32, Arc<Patches>);

/// The vertex-face relation of a [`TopologyOn`] on its backend
/// ([`TopologyOn::vertex_faces_on`]).
pub struct VertexFacesOn<'a> {
    /// Each vertex's first place in `faces`, and the end: `V + 1` words.
    pub offsets: &'a Buffer<u32>,
    /// The faces of each vertex, in increasing order: `3F` words.
    pub faces: &'a Buffer<u32>,
    /// The faces' vertices (`3F` words), where the topology was built
    /// from them.
    pub corners: Option<&'a Buffer<u32>>,
}

/// A mesh's topology for a backend: the host's [`Topology`], the
/// relations on the device, or both (see the [module](self)).
pub struct TopologyOn<'a> {
    host: Option<Cow<'a, Topology>>,
    device: Option<Relations>,
    num_edges: usize,
    /// The patches of the last placement and their patch size, where
    /// they are kept ([`TopologyOn::keeping_patches`]).
    kept: Option<Mutex<Option<KeptPatches>>>,
    /// The patchings kept so far ([`TopologyOn::patchings`]).
    patchings: AtomicU32,
}

impl<'a> TopologyOn<'a> {
    /// `topo` for backend `b`: on the GPU its relations uploaded
    /// ([`TopologyOn::uploaded`]), on the CPU backend (which patches on
    /// the host) `topo` alone.
    ///
    /// # Errors
    /// A failed allocation or copy.
    pub fn of(b: &Backend, topo: &'a Topology) -> Result<Self, BackendError> {
        match b {
            Backend::Cpu(_) => Ok(TopologyOn {
                host: Some(Cow::Borrowed(topo)),
                device: None,
                num_edges: topo.ev.len(),
                kept: None,
                patchings: AtomicU32::new(0),
            }),
            Backend::Cuda(_) => Self::uploaded(b, topo),
        }
    }

    /// `topo` on the host alone, owned: what the CPU backend patches from.
    fn owning(topo: Topology) -> TopologyOn<'static> {
        TopologyOn {
            num_edges: topo.ev.len(),
            host: Some(Cow::Owned(topo)),
            device: None,
            kept: None,
            patchings: AtomicU32::new(0),
        }
    }

    /// [`TopologyOn::of`] owning `topo`.
    ///
    /// # Errors
    /// As [`TopologyOn::of`].
    pub fn of_owned(b: &Backend, topo: Topology) -> Result<TopologyOn<'static>, BackendError> {
        let device = TopologyOn::of(b, &topo)?.device;
        Ok(TopologyOn {
            num_edges: topo.ev.len(),
            host: Some(Cow::Owned(topo)),
            device,
            kept: None,
            patchings: AtomicU32::new(0),
        })
    }

    /// This topology keeping the patches a placement makes from it
    /// (`Backend::place_normalized`, `Backend::place_on`), so that the
    /// next placement at the same patch size reuses them (a resident mesh patched once: the
    /// patches are connectivity only, the positions come with each
    /// placement). Without it (the default) the patches are dropped once
    /// placed, as they hold device memory.
    #[must_use]
    pub fn keeping_patches(mut self) -> Self {
        self.kept = Some(Mutex::new(None));
        self
    }

    /// The patch size of the patches kept ([`TopologyOn::keeping_patches`]),
    /// once a placement has made them.
    pub fn kept_patch_size(&self) -> Option<u32> {
        let kept = self
            .kept
            .as_ref()?
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        kept.as_ref().map(|(size, _)| *size)
    }

    /// How many times a placement patched the mesh from this topology and
    /// kept the patches ([`TopologyOn::keeping_patches`]): once per patch
    /// size change, so that a caller can see the patches reused.
    pub fn patchings(&self) -> u32 {
        self.patchings.load(Ordering::Relaxed)
    }

    /// The patches kept at `patch_size`, where this topology keeps them.
    pub(crate) fn kept_patches(&self, patch_size: u32) -> Option<Arc<Patches>> {
        let kept = self
            .kept
            .as_ref()?
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        kept.as_ref()
            .filter(|(size, _)| *size == patch_size)
            .map(|(_, p)| Arc::clone(p))
    }

    /// Keeps `patches` (made at `patch_size`) where this topology keeps
    /// patches, in place of those before.
    pub(crate) fn keep_patches(&self, patch_size: u32, patches: &Arc<Patches>) {
        if let Some(kept) = &self.kept {
            *kept.lock().unwrap_or_else(|e| e.into_inner()) =
                Some((patch_size, Arc::clone(patches)));
            self.patchings.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// `topo` with its relations uploaded to `b`, on either backend (the
    /// device's partition runs on the CPU backend too).
    ///
    /// # Errors
    /// A failed allocation or copy.
    pub fn uploaded(b: &Backend, topo: &'a Topology) -> Result<Self, BackendError> {
        Ok(TopologyOn {
            host: Some(Cow::Borrowed(topo)),
            device: Some(Relations {
                fv: None,
                fe: b.upload(topo.fe.as_flattened())?,
                ev: b.upload(topo.ev.as_flattened())?,
                vf_offsets: b.upload(&topo.vf_offsets)?,
                vf: b.upload(&topo.vf)?,
                ef_offsets: b.upload(&topo.ef_offsets)?,
                ef: b.upload(&topo.ef)?,
            }),
            num_edges: topo.ev.len(),
            kept: None,
            patchings: AtomicU32::new(0),
        })
    }

    /// The unique edges.
    pub fn num_edges(&self) -> usize {
        self.num_edges
    }

    /// The vertex-face relation (VF) where this topology holds it on its
    /// backend: each vertex's first place in the faces (one a vertex, and
    /// the end) and the faces there, each vertex's in increasing order;
    /// with the faces' vertices (three a face) where it was built from
    /// them ([`Backend::build_topology`]). `None` for a topology on the
    /// host only (the CPU backend's [`Backend::topology_on`]).
    pub fn vertex_faces_on(&self) -> Option<VertexFacesOn<'_>> {
        self.device.as_ref().map(|d| VertexFacesOn {
            offsets: &d.vf_offsets,
            faces: &d.vf,
            corners: d.fv.as_ref(),
        })
    }

    /// The relations on the device, where they are.
    pub(crate) fn relations(&self) -> Option<&Relations> {
        self.device.as_ref()
    }

    /// The topology on the host: the one given, or a copy of the device's.
    ///
    /// # Errors
    /// A failed copy.
    pub fn host(&self, b: &Backend) -> Result<Cow<'_, Topology>, BackendError> {
        if let Some(host) = &self.host {
            return Ok(Cow::Borrowed(host.as_ref()));
        }
        let d = self
            .device
            .as_ref()
            .expect("a topology is on the host or the device");
        let pairs = |words: Vec<u32>| -> Vec<[u32; 2]> { words.as_chunks().0.to_vec() };
        let triples = |words: Vec<u32>| -> Vec<[u32; 3]> { words.as_chunks().0.to_vec() };
        Ok(Cow::Owned(Topology {
            ev: pairs(b.read_back(&d.ev, d.ev.len())?),
            fe: triples(b.read_back(&d.fe, d.fe.len())?),
            vf_offsets: b.read_back(&d.vf_offsets, d.vf_offsets.len())?,
            vf: b.read_back(&d.vf, d.vf.len())?,
            ef_offsets: b.read_back(&d.ef_offsets, d.ef_offsets.len())?,
            ef: b.read_back(&d.ef, d.ef.len())?,
        }))
    }

    /// The mean length of the unique edges of `mesh` (whose topology this
    /// is), in its units: [`mean_edge_length_with`] on the host's
    /// topology, else summed on the device (`cavity_device::survey::EdgeMeasure`, `mesh`'s
    /// positions uploaded), both in `f64` (they may differ in the last
    /// bits: their sums run in different orders). 0 for no edges.
    ///
    /// # Errors
    /// A failed allocation, launch or copy.
    pub fn mean_edge_length(&self, b: &Backend, mesh: &TriMesh) -> Result<f64, BackendError> {
        let d = match (&self.host, &self.device) {
            (Some(host), _) => return Ok(mean_edge_length_with(mesh, host)),
            (None, Some(d)) => d,
            (None, None) => unreachable!("a topology is on the host or the device"),
        };
        let edges = u32::try_from(self.num_edges).map_err(|_| too_large(self.num_edges))?;
        if edges == 0 {
            return Ok(0.0);
        }
        let positions = b.upload(mesh.positions.as_flattened())?;
        let mut partials = b.zeros::<u32>(2 * blocks(edges) as usize)?;
        let none = ((0.0, 0.0), 0.0);
        let sum = d.edge_measure(
            b,
            (&positions, edges),
            measure::LENGTH_SUM,
            none,
            &mut partials,
        )?;
        Ok(sum / f64::from(edges))
    }
}

impl TopologyOn<'_> {
    /// For every face of the mesh whose relations these are (built from
    /// its faces on `b`, [`Backend::build_topology`]), whether an earlier
    /// face has the same vertices, found on the device among the faces of
    /// its first edge ([`MarkDuplicateFaces`], as
    /// `cavity::defects::remove_duplicate_faces_with_topology` finds them
    /// on the host); `None` when there is none (one word read back).
    ///
    /// # Errors
    /// A failed allocation, launch or copy.
    ///
    /// # Panics
    /// When the relations were not built from the faces on a backend.
    pub fn duplicate_faces(&self, b: &Backend) -> Result<Option<Vec<bool>>, BackendError> {
        let (marks, total) = self.mark_duplicate_faces(b)?;
        if total == 0 {
            return Ok(None);
        }
        let marks = b.read_back(&marks, marks.len())?;
        Ok(Some(marks.into_par_iter().map(|m| m != 0).collect()))
    }

    /// The number of faces [`TopologyOn::duplicate_faces`] marks (one
    /// word read back), as `cavity::defects::Defects` counts them.
    ///
    /// # Errors
    /// As [`TopologyOn::duplicate_faces`].
    ///
    /// # Panics
    /// As [`TopologyOn::duplicate_faces`].
    pub fn count_duplicate_faces(&self, b: &Backend) -> Result<usize, BackendError> {
        Ok(self.mark_duplicate_faces(b)?.1)
    }

    /// [`MarkDuplicateFaces`]' marks (a word a face) and their count.
    fn mark_duplicate_faces(&self, b: &Backend) -> Result<(Buffer<u32>, usize), BackendError> {
        let d = self
            .device
            .as_ref()
            .expect("relations built by Backend::build_topology");
        let fv = d.fv.as_ref().expect("relations built from the faces");
        let faces = fv.len() / 3;
        let count = u32::try_from(faces).map_err(|_| too_large(faces))?;
        let mut marks = b.zeros::<u32>(faces)?;
        let mut total = b.zeros::<u32>(1)?;
        let params = (
            fv,
            &d.fe,
            [&d.ef_offsets, &d.ef],
            count,
            &mut marks,
            &mut total,
        );
        b.launch::<MarkDuplicateFaces>(blocks(count), (0, 0), params)?;
        let total = b.element(&total, 0)? as usize;
        Ok((marks, total))
    }
}

/// [`BackendError::Index`] for the highest vertex index of `mesh`'s faces
/// when it is past its vertices (one parallel pass).
pub(crate) fn indices_in_range(mesh: &TriMesh) -> Result<(), BackendError> {
    let nv = mesh.num_vertices();
    let highest = mesh
        .faces
        .as_flattened()
        .par_chunks(1 << 16)
        .filter_map(|chunk| chunk.iter().max().copied())
        .max();
    match highest {
        Some(index) if index as usize >= nv => Err(BackendError::Index(index as usize, nv)),
        _ => Ok(()),
    }
}

/// [`BackendError::TooLarge`] for `n` elements past 32-bit indices.
fn too_large(n: usize) -> BackendError {
    BackendError::TooLarge(n)
}

impl Backend {
    /// The topology of `mesh` where this backend builds it best: on the
    /// GPU on the device from the faces (the kernels of
    /// `cavity_device::topology`: counts, scans and fills, with one read
    /// of the edge count), nothing on the host; on the CPU backend
    /// [`Topology::new`] on the host. Either equals [`Topology::new`].
    ///
    /// # Errors
    /// [`BackendError::Index`] for a face's vertex past the vertices (on
    /// either backend); [`BackendError::TooLarge`] past 32-bit corner
    /// counts; a failed allocation, launch or copy.
    pub fn topology_on(&self, mesh: &TriMesh) -> Result<TopologyOn<'static>, BackendError> {
        if let Backend::Cpu(_) = self {
            indices_in_range(mesh)?;
            return Ok(TopologyOn::owning(Topology::new(mesh)));
        }
        self.build_topology(mesh)
    }

    /// [`Backend::topology_on`]'s build on the device, on either backend
    /// (the CPU backend runs the same kernels: the tests compare their
    /// result with [`Topology::new`]).
    ///
    /// # Errors
    /// As [`Backend::topology_on`]; [`BackendError::Index`] for a face's
    /// vertex past the mesh's vertices.
    pub fn build_topology(&self, mesh: &TriMesh) -> Result<TopologyOn<'static>, BackendError> {
        // An index past the vertices would be counted into the offsets'
        // last word and go unnoticed until positions are read.
        indices_in_range(mesh)?;
        self.build_topology_in_range(mesh, None)
    }

    /// [`Backend::build_topology`] of a mesh whose indices were checked
    /// ([`indices_in_range`]), from `faces_on`, its faces on this backend
    /// (three words a face), where they lie there already (else they are
    /// uploaded).
    pub(crate) fn build_topology_in_range(
        &self,
        mesh: &TriMesh,
        faces_on: Option<Buffer<u32>>,
    ) -> Result<TopologyOn<'static>, BackendError> {
        let nv = mesh.num_vertices();
        let corners = mesh.num_faces() * 3;
        let c = u32::try_from(corners).map_err(|_| too_large(corners))?;
        let v = u32::try_from(nv)
            .ok()
            .filter(|&v| v < u32::MAX)
            .ok_or_else(|| too_large(nv))?;
        let fv = match faces_on {
            Some(fv) if fv.len() == corners => fv,
            _ => self.upload(mesh.faces.as_flattened())?,
        };
        // VF: counts, their scan, the fill, each row sorted.
        let mut vf_offsets = self.zeros::<u32>(nv + 1)?;
        self.launch::<CountCorners>(blocks(c), (0, 0), (&fv, c, &mut vf_offsets))?;
        self.exclusive_scan(&mut vf_offsets, v + 1)?;
        let mut cursor = self.zeros::<u32>(nv + 1)?;
        let mut vf = self.zeros::<u32>(corners)?;
        let params = (&fv, c, &vf_offsets, &mut cursor, &mut vf);
        self.launch::<FillVertexFaces>(blocks(c), (0, 0), params)?;
        self.launch::<SortVertexFaces>(blocks(v), (0, 0), (&vf_offsets, v, &mut vf))?;
        // Sides: three a face, each at its lower end, sorted; their runs
        // are the edges. (The cursor, one word longer, holds their counts.)
        let mut side_offsets = cursor;
        let params = (&fv, [&vf_offsets, &vf], v, &mut side_offsets);
        self.launch::<CountSides>(blocks(v), (0, 0), params)?;
        self.exclusive_scan(&mut side_offsets, v + 1)?;
        let (mut upper, mut corner) = (self.zeros::<u32>(corners)?, self.zeros::<u32>(corners)?);
        let mut edge_offsets = self.zeros::<u32>(nv + 1)?;
        let params = (
            &fv,
            [&vf_offsets, &vf],
            &side_offsets,
            v,
            &mut upper,
            &mut corner,
            &mut edge_offsets,
        );
        self.launch::<FillSides>(blocks(v), (0, 0), params)?;
        self.exclusive_scan(&mut edge_offsets, v + 1)?;
        let edges = self.element(&edge_offsets, nv)? as usize;
        let mut ev = self.zeros::<u32>(2 * edges)?;
        let mut ef_offsets = self.zeros::<u32>(edges + 1)?;
        let (mut ef, mut fe) = (self.zeros::<u32>(corners)?, self.zeros::<u32>(corners)?);
        let params = (
            [&side_offsets, &upper, &corner],
            &edge_offsets,
            v,
            &mut ev,
            &mut ef_offsets,
            &mut ef,
            &mut fe,
        );
        self.launch::<FillEdges>(blocks(v), (0, 0), params)?;
        Ok(TopologyOn {
            host: None,
            device: Some(Relations {
                fv: Some(fv),
                fe,
                ev,
                vf_offsets,
                vf,
                ef_offsets,
                ef,
            }),
            num_edges: edges,
            kept: None,
            patchings: AtomicU32::new(0),
        })
    }

    /// `cavity::defects::remove_duplicate_faces_with_topology` on this
    /// backend: removes from `mesh` (indices in range) every face with the
    /// vertices of an earlier one and returns how many, with the topology
    /// of what is left where this backend builds it best
    /// ([`Backend::topology_on`]): on the GPU the duplicates are found on
    /// the device ([`TopologyOn::duplicate_faces`]) and the topology built
    /// again only when there were any; on the CPU backend on the host.
    ///
    /// # Errors
    /// As [`Backend::build_topology`].
    pub fn without_duplicate_faces(
        &self,
        mesh: &mut TriMesh,
    ) -> Result<(usize, TopologyOn<'static>), BackendError> {
        if let Backend::Cpu(_) = self {
            let (removed, topo) = remove_duplicate_faces_with_topology(mesh);
            return Ok((removed, TopologyOn::owning(topo)));
        }
        let topology = self.build_topology(mesh)?;
        match topology.duplicate_faces(self)? {
            None => Ok((0, topology)),
            Some(repeated) => {
                drop(topology);
                let removed = remove_faces(mesh, &repeated);
                Ok((removed, self.build_topology(mesh)?))
            }
        }
    }
}

//! The patch structures built on the device ([`Backend::build_patches`]):
//! [`PatchedMesh::from_partition`]'s result made by the kernels of
//! `cavity_device::patch_build` (RXMesh, Mahmoud et al. 2021, section 6.3:
//! the patches' structures by scan and scatter after the partition), on
//! the GPU or, the same kernels, on the CPU backend. The host's build stays
//! the reference; the two give the same arrays.
//!
//! The host uploads the mesh's relations and the partition, reads back the
//! per-patch counts between the stages (a few words a patch) to size the
//! next stage's shared windows and bounds, makes the patch headers from
//! the counts (checking the local limits), and downloads the layout
//! ([`PatchBuffers::download`]) or leaves it on the device for the dynamic
//! layout (`crate::backend::placed`). [`Backend::patched`] patches as the
//! backend patches best: the partition and this build on the GPU, the
//! host's patcher on the CPU backend; [`Backend::patch_summary`] gives the
//! statistics of those patches from their headers alone
//! ([`PatchBuffers::summary`]: `cavity info` copies nothing else back).

use rayon::prelude::*;

use cavity_device::array::{BOUNDS, blocks};
use cavity_device::kernel::Kernel;
use cavity_device::layout::{MAX_LOCAL_EDGES, MAX_LOCAL_ELEMENTS, MAX_LOCAL_FACES, PatchInfo};
use cavity_device::patch_build::{
    CountFaceCandidates, CountOwned, FillPatch, MAX_WINDOW, MajorityOwner, PatchStash, RibbonBelow,
    RibbonFaces, ScatterOwned, SortOwned, fill_shared_bytes, gather_shared_bytes,
    sort_owned_shared_bytes,
};

use super::Backend;
use super::buffer::Buffer;
use super::error::BackendError;
use super::partition::{Labels, PartitionError, PartitionRounds};
pub use super::patches::PatchBuffers;
use super::patches::Patches;
use super::topology::{Relations, TopologyOn};
use crate::TriMesh;
use crate::patched::{PatchSummary, PatchedMesh, layout_bytes, patch_stats};
use crate::patcher::{self, Partition, PatchError};
use crate::topology::Topology;

impl PatchBuffers {
    /// [`PatchedMesh::summary`] of these patches, from their headers and
    /// lengths (nothing copied back).
    pub fn summary(&self) -> PatchSummary {
        let [fe, ev, ribbon, stash, masks] = self.lens.map(|n| n as usize);
        let bytes = layout_bytes(self.infos.len(), [fe, ev], [ribbon, stash, masks]);
        PatchSummary {
            stats: patch_stats(&self.infos, bytes),
            patch_bytes: bytes,
            lloyd_iterations: self.lloyd_iterations,
        }
    }

    /// The layout copied to the host: [`PatchedMesh::from_partition`]'s
    /// result (`topo` the topology patched).
    ///
    /// # Errors
    /// A failed copy.
    pub fn download(&self, b: &Backend, topo: &Topology) -> Result<PatchedMesh, BackendError> {
        let [fe, ev, ribbon, stash, masks] = self.lens.map(|n| n as usize);
        let fe = halves(&b.read_back(&self.fe_words, fe / 2)?);
        let ev = halves(&b.read_back(&self.ev_words, ev / 2)?);
        let ribbon = b.read_back(&self.ribbon, ribbon)?;
        let stash = b.read_back(&self.stash, stash)?;
        let masks = b.read_back(&self.masks, masks)?;
        let mut maps = Vec::with_capacity(6);
        for ([members, handles], n) in self.maps.iter().zip(self.counts) {
            maps.push(b.read_back(members, n as usize)?);
            maps.push(b.read_back(handles, n as usize)?);
        }
        let [
            vertex_to_input,
            input_to_vertex,
            edge_to_input,
            input_to_edge,
            face_to_input,
            input_to_face,
        ]: [Vec<u32>; 6] = maps.try_into().expect("two maps a kind");
        Ok(PatchedMesh {
            patches: self.infos.clone(),
            fe,
            ev,
            ribbon,
            stash,
            masks,
            vertex_to_input,
            input_to_vertex,
            edge_to_input,
            input_to_edge,
            face_to_input,
            input_to_face,
            input_edges: topo.ev.clone(),
            patch_size: self.patch_size,
            lloyd_iterations: self.lloyd_iterations,
        })
    }
}

/// One kind's owned lists on the backend, with their offsets on the host.
struct OwnedLists {
    /// The owned elements, patch after patch, each patch's increasing
    /// (handle → input element).
    members: Buffer<u32>,
    /// Each patch's first handle, `patches + 1` words.
    offsets: Buffer<u32>,
    /// Input element → handle.
    handles: Buffer<u32>,
    /// `offsets` on the host.
    host_offsets: Vec<u32>,
}

/// The gathers' grouped inputs on the backend: the topology, the owners
/// and the owned lists (as `cavity_device::patch_build` groups them).
type Inputs<'a> = (
    [&'a Buffer<u32>; 7],
    [&'a Buffer<u32>; 3],
    [&'a Buffer<u32>; 9],
);

/// One gathering stage's arrays: each patch's bound in its list (on the
/// host and the backend), the shared window and its bytes, the list, and
/// the counts the stage writes (`stride` a patch) with their host copy.
struct Stage {
    offsets: Vec<u32>,
    bounds: Buffer<u32>,
    cap: u32,
    smem: (usize, usize),
    list: Buffer<u32>,
    counts: Buffer<u32>,
    stride: usize,
    host_counts: Vec<u32>,
}

impl Stage {
    /// A stage of gathers bounded by `offsets` (`bounds` on the backend),
    /// its window the largest gather's.
    fn new(
        b: &Backend,
        offsets: Vec<u32>,
        bounds: Buffer<u32>,
        (stride, kernel): (usize, &'static str),
    ) -> Result<Stage, BackendError> {
        let patches = offsets.len() - 1;
        let cap = window(max_gap(&offsets), kernel)?;
        Ok(Stage {
            list: b.zeros::<u32>(offsets[patches] as usize)?,
            counts: b.zeros::<u32>(stride * patches)?,
            smem: gather_smem(cap),
            offsets,
            bounds,
            cap,
            stride,
            host_counts: Vec::new(),
        })
    }

    /// Reads the stage's counts back.
    fn read_counts(&mut self, b: &Backend) -> Result<(), BackendError> {
        let n = self.stride * (self.offsets.len() - 1);
        self.host_counts = b.read_back(&self.counts, n)?;
        Ok(())
    }
}

/// The smallest power of two at least `n` and 1: the shared window of a
/// gather of `n` entries by `kernel`.
///
/// # Errors
/// [`BackendError::SharedMemory`] past [`MAX_WINDOW`] entries (on the GPU
/// the block's shared memory is smaller still; the host's build has no
/// such limit).
fn window(n: u32, kernel: &'static str) -> Result<u32, BackendError> {
    let cap = n.max(1).next_power_of_two();
    if n > MAX_WINDOW {
        return Err(BackendError::SharedMemory {
            needed: 4 * n as usize,
            limit: 4 * MAX_WINDOW as usize,
            kernel,
        });
    }
    Ok(cap)
}

/// The exclusive prefix sums of `counts` with the total appended.
///
/// # Errors
/// [`BackendError::TooLarge`] when the total passes 32 bits.
fn offsets_of(counts: impl Iterator<Item = u32>) -> Result<Vec<u32>, BackendError> {
    let mut sum = 0u64;
    let mut out: Vec<u32> = Vec::new();
    for c in counts {
        out.push(u32::try_from(sum).map_err(|_| past_32_bits())?);
        sum += u64::from(c);
    }
    out.push(u32::try_from(sum).map_err(|_| past_32_bits())?);
    Ok(out)
}

/// [`BackendError::TooLarge`] for a list past 32-bit indices.
fn past_32_bits() -> BackendError {
    BackendError::TooLarge(u32::MAX as usize + 1)
}

impl Backend {
    /// [`PatchedMesh::from_partition`] on this backend: `mesh` (whose
    /// topology is `topo`) patched along `part` (patches
    /// `0..part.num_patches`, none empty) with `patch_size` the limit it
    /// kept; the same arrays as the host's build, made by the kernels of
    /// `cavity_device::patch_build` (see the [module](self)).
    ///
    /// # Errors
    /// [`PatchError::LocalOverflow`] when a patch with its ribbon exceeds
    /// the local limits (the first found: a patch's owned elements alone
    /// are checked for every kind before the ribbons; the host's build may
    /// name another patch, with its whole local count);
    /// [`BackendError::SharedMemory`] on the GPU when a patch's gather needs
    /// more shared memory than a block has (a vertex of huge valence: the
    /// host's build has no such limit; on either backend past
    /// `cavity_device::patch_build::MAX_WINDOW` entries);
    /// [`BackendError::TooLarge`] past 32-bit counts;
    /// [`BackendError::Inconsistent`] when the device's counts disagree
    /// (a bug); a driver error from a launch, an allocation or a copy.
    pub fn build_patches(
        &self,
        mesh: &TriMesh,
        topo: &Topology,
        part: &Partition,
        patch_size: u32,
    ) -> Result<PatchedMesh, PartitionError> {
        Ok(self
            .patch_buffers(mesh, topo, part, patch_size)?
            .download(self, topo)?)
    }

    /// [`Backend::build_patches`] without the download: the layout left
    /// in the backend's buffers, for the dynamic layout to be made from
    /// there ([`PatchBuffers::to_dynamic`]).
    ///
    /// # Errors
    /// As [`Backend::build_patches`].
    pub fn patch_buffers(
        &self,
        mesh: &TriMesh,
        topo: &Topology,
        part: &Partition,
        patch_size: u32,
    ) -> Result<PatchBuffers, PartitionError> {
        let topo = TopologyOn::uploaded(self, topo)?;
        let labels = Labels {
            face_patch: self.upload(&part.face_patch)?,
            num_patches: part.num_patches,
            iterations: part.iterations,
        };
        self.patch_buffers_on(mesh, &topo, &labels, patch_size)
    }

    /// [`Backend::patch_buffers`] from the relations (`topo`'s, on the
    /// backend) and the partition on the backend.
    ///
    /// # Errors
    /// As [`Backend::build_patches`].
    fn patch_buffers_on(
        &self,
        mesh: &TriMesh,
        topo: &TopologyOn<'_>,
        part: &Labels,
        patch_size: u32,
    ) -> Result<PatchBuffers, PartitionError> {
        let b = self;
        let count = |n: usize| u32::try_from(n).map_err(|_| BackendError::TooLarge(n));
        let (nv, ne, nf) = (
            count(mesh.num_vertices())?,
            count(topo.num_edges())?,
            count(mesh.num_faces())?,
        );
        let np = part.num_patches;
        let npu = np as usize;
        let relations = topo.relations().ok_or(BackendError::Inconsistent(
            "the patches' relations are not on the backend",
        ))?;
        let uploaded;
        let fv = match &relations.fv {
            Some(fv) => fv,
            None => {
                uploaded = b.upload(mesh.faces.as_flattened())?;
                &uploaded
            }
        };
        let Relations {
            fe,
            ev,
            vf_offsets,
            vf,
            ef_offsets,
            ef,
            ..
        } = relations;
        let face_patch = &part.face_patch;
        let topology = [fv, fe, ev, vf_offsets, vf, ef_offsets, ef];

        let mut owner_v = b.zeros::<u32>(nv as usize)?;
        let rows = [vf_offsets, vf];
        b.launch::<MajorityOwner>(blocks(nv), (0, 0), (rows, face_patch, nv, &mut owner_v))?;
        let mut owner_e = b.zeros::<u32>(ne as usize)?;
        let rows = [ef_offsets, ef];
        b.launch::<MajorityOwner>(blocks(ne), (0, 0), (rows, face_patch, ne, &mut owner_e))?;
        let owners = [&owner_v, &owner_e, face_patch];

        let mut failed = b.zeros::<u32>(1)?;
        let limits = [
            (MAX_LOCAL_ELEMENTS, "vertices"),
            (MAX_LOCAL_EDGES, "edges"),
            (MAX_LOCAL_FACES, "faces"),
        ];
        let mut lists = Vec::with_capacity(3);
        for ((owner, n), limit) in owners.iter().zip([nv, ne, nf]).zip(limits) {
            lists.push(self.owned_lists(owner, n, np, (limit, patch_size), &mut failed)?);
        }
        let [v, e, f] = [&lists[0], &lists[1], &lists[2]];
        let owned = [
            &v.members, &e.members, &f.members, &v.offsets, &e.offsets, &f.offsets, &v.handles,
            &e.handles, &f.handles,
        ];

        // Ribbon faces: the gathers' sizes counted, then gathered.
        let mut face_bounds = b.zeros::<u32>(npu + 1)?;
        let threads = count(mesh.num_vertices() + mesh.num_faces())?;
        let params = (topology, owners, threads, nv, &mut face_bounds);
        b.launch::<CountFaceCandidates>(blocks(threads), (0, 0), params)?;
        b.exclusive_scan(&mut face_bounds, np + 1)?;
        let face_offsets = b.read_back(&face_bounds, npu + 1)?;
        // The device's scan wraps: a total past 32 bits shows as a fall.
        if face_offsets.windows(2).any(|w| w[1] < w[0]) {
            return Err(past_32_bits().into());
        }
        let mut faces = Stage::new(b, face_offsets, face_bounds, (3, RibbonFaces::NAME))?;
        let params = (
            topology,
            owners,
            owned,
            &faces.bounds,
            faces.cap,
            &mut faces.list,
            &mut faces.counts,
            &mut failed,
        );
        b.launch::<RibbonFaces>(np, faces.smem, params)?;
        faces.read_counts(b)?;

        // Ribbon edges, then vertices.
        let inputs = (topology, owners, owned);
        let edges = self.ribbon_below(1, inputs, &faces, &mut failed)?;
        let vertices = self.ribbon_below(0, inputs, &edges, &mut failed)?;
        let host_face_counts = &faces.host_counts;
        let host_edge_counts = &edges.host_counts;
        let host_vertex_counts = &vertices.host_counts;

        // Stashes.
        let ribbon_len = |p: usize| {
            host_vertex_counts[2 * p] + host_edge_counts[2 * p] + host_face_counts[3 * p]
        };
        let cap = window(
            (0..npu).map(ribbon_len).max().unwrap_or(0),
            PatchStash::NAME,
        )?;
        let stash_bound = [&faces, &edges, &vertices]
            .iter()
            .map(|stage| stage.offsets[npu] as usize)
            .sum();
        let mut stashes = b.zeros::<u32>(stash_bound)?;
        let mut stash_counts = b.zeros::<u32>(npu)?;
        let ribbons = ribbon_lists([&vertices, &edges, &faces]);
        let smem = gather_smem(cap);
        let params = (
            owners,
            ribbons,
            cap,
            &mut stashes,
            &mut stash_counts,
            &mut failed,
        );
        b.launch::<PatchStash>(np, smem, params)?;
        let host_stash_counts = b.read_back(&stash_counts, npu)?;
        if b.element(&failed, 0)? != 0 {
            return Err(BackendError::Inconsistent(
                "a patch's gather outgrew the window its counts sized",
            )
            .into());
        }

        // The headers, from the counts.
        let mut infos = Vec::with_capacity(npu);
        let mut ends = [0u32; 5];
        for p in 0..npu {
            let owned_count = |l: &OwnedLists| l.host_offsets[p + 1] - l.host_offsets[p];
            let (ov, oe, of) = (owned_count(v), owned_count(e), owned_count(f));
            let (rv, re, rf) = (
                host_vertex_counts[2 * p],
                host_edge_counts[2 * p],
                host_face_counts[3 * p],
            );
            let (cv, ce, cf) = (ov + rv, oe + re, of + rf);
            for (n, (limit, what)) in [cv, ce, cf].into_iter().zip(limits) {
                if n > limit {
                    return Err(
                        local_overflow(p as u32, n as usize, what, limit, patch_size).into(),
                    );
                }
            }
            let info = PatchInfo {
                num_vertices: cv,
                num_edges: ce,
                num_faces: cf,
                owned_vertices: ov,
                owned_edges: oe,
                owned_faces: of,
                fe_offset: ends[0],
                ev_offset: ends[1],
                ribbon_offset: ends[2],
                stash_offset: ends[3],
                stash_len: host_stash_counts[p],
                mask_offset: ends[4],
                vertex_base: v.host_offsets[p],
                edge_base: e.host_offsets[p],
                face_base: f.host_offsets[p],
                ff_entries: host_face_counts[3 * p + 2],
            };
            let lens = [
                (3 * cf).next_multiple_of(8),
                (2 * ce).next_multiple_of(8),
                rv + re + rf,
                info.stash_len,
                2 * (cv.div_ceil(32) + ce.div_ceil(32) + cf.div_ceil(32)),
            ];
            for (end, len) in ends.iter_mut().zip(lens) {
                *end = end
                    .checked_add(len)
                    .ok_or(BackendError::TooLarge(*end as usize + len as usize))?;
            }
            infos.push(info);
        }
        let header_words = b.upload(bytemuck::cast_slice::<PatchInfo, u32>(&infos))?;

        // The layout.
        let cap = (0..npu)
            .map(|p| {
                host_vertex_counts[2 * p]
                    .max(host_edge_counts[2 * p])
                    .max(host_stash_counts[p])
            })
            .max()
            .unwrap_or(0)
            .max(1);
        let mut fe_words = b.zeros::<u32>(ends[0] as usize / 2)?;
        let mut ev_words = b.zeros::<u32>(ends[1] as usize / 2)?;
        let mut ribbon = b.zeros::<u32>(ends[2] as usize)?;
        let mut stash = b.zeros::<u32>(ends[3] as usize)?;
        let mut masks = b.zeros::<u32>(ends[4] as usize)?;
        let ribbons = ribbon_lists([&vertices, &edges, &faces]);
        let rest: [&Buffer<u32>; 11] = std::array::from_fn(|i| match i {
            0..9 => ribbons[i],
            9 => &stashes,
            _ => &header_words,
        });
        let smem = (fill_shared_bytes(cap), fill_shared_bytes(cap));
        let params = (
            topology,
            owners,
            owned,
            rest,
            cap,
            &mut fe_words,
            &mut ev_words,
            &mut ribbon,
            &mut stash,
            &mut masks,
            &mut failed,
        );
        b.launch::<FillPatch>(np, smem, params)?;
        if b.element(&failed, 0)? != 0 {
            return Err(
                BackendError::Inconsistent("a patch's header disagreed with its lists").into(),
            );
        }

        let mut maps = lists.into_iter().map(|l| [l.members, l.handles]);
        Ok(PatchBuffers {
            infos,
            header_words,
            fe_words,
            ev_words,
            ribbon,
            stash,
            masks,
            lens: ends,
            maps: std::array::from_fn(|_| maps.next().expect("an owned list a kind")),
            counts: [nv, ne, nf],
            patch_size,
            lloyd_iterations: part.iterations,
        })
    }

    /// The ribbon elements of `kind` (1 edges, 0 vertices) of every patch
    /// from the ribbon of the kind above (`above`, whose counts hold the
    /// sizes of this stage's gathers second), by [`RibbonBelow`]: the
    /// stage, its counts read back.
    fn ribbon_below(
        &self,
        kind: u32,
        (topology, owners, owned): Inputs<'_>,
        above: &Stage,
        failed: &mut Buffer<u32>,
    ) -> Result<Stage, BackendError> {
        let sizes = above.host_counts.chunks(above.stride).map(|c| c[1]);
        let offsets = offsets_of(sizes)?;
        let bounds = self.upload(&offsets)?;
        let mut stage = Stage::new(self, offsets, bounds, (2, RibbonBelow::NAME))?;
        let np = (stage.offsets.len() - 1) as u32;
        let sources = [&above.list, &above.bounds, &above.counts, &stage.bounds];
        let params = (
            topology,
            owners,
            owned,
            sources,
            kind,
            stage.cap,
            &mut stage.list,
            &mut stage.counts,
            failed,
        );
        self.launch::<RibbonBelow>(np, stage.smem, params)?;
        stage.read_counts(self)?;
        Ok(stage)
    }

    /// The owned lists of the `n` elements of one kind whose owners are
    /// `owner` (`np` patches): counted, scattered and each patch's sorted
    /// ([`CountOwned`], a scan, [`ScatterOwned`], [`SortOwned`]).
    ///
    /// # Errors
    /// [`PatchError::LocalOverflow`] for the lowest patch that owns more
    /// than the kind's local limit (`((limit, what), patch_size)`); as
    /// [`Backend::launch`].
    fn owned_lists(
        &self,
        owner: &Buffer<u32>,
        n: u32,
        np: u32,
        ((limit, what), patch_size): ((u32, &'static str), u32),
        failed: &mut Buffer<u32>,
    ) -> Result<OwnedLists, PartitionError> {
        let b = self;
        let mut offsets = b.zeros::<u32>(np as usize + 1)?;
        let mut handles = b.zeros::<u32>(n as usize)?;
        b.launch::<CountOwned>(blocks(n), (0, 0), (owner, n, &mut offsets, &mut handles))?;
        b.exclusive_scan(&mut offsets, np + 1)?;
        let mut members = b.zeros::<u32>(n as usize)?;
        let params = (owner, &handles, &offsets, n, &mut members);
        b.launch::<ScatterOwned>(blocks(n), (0, 0), params)?;
        let host_offsets = b.read_back(&offsets, np as usize + 1)?;
        let gaps = host_offsets.windows(2).map(|w| w[1].wrapping_sub(w[0]));
        if let Some((p, count)) = gaps.enumerate().find(|&(_, count)| count > limit) {
            return Err(local_overflow(p as u32, count as usize, what, limit, patch_size).into());
        }
        let cap = window(max_gap(&host_offsets), SortOwned::NAME)?;
        let smem = sort_owned_shared_bytes(cap);
        let params = (&offsets, cap, &mut members, &mut handles, failed);
        b.launch::<SortOwned>(np, (smem, smem), params)?;
        Ok(OwnedLists {
            members,
            offsets,
            handles,
            host_offsets,
        })
    }
}

/// The ribbon lists of the vertex, edge and face stages as the kernels
/// group them: `[lists v, e, f, bounds v, e, f, counts v, e, f]`.
fn ribbon_lists([v, e, f]: [&Stage; 3]) -> [&Buffer<u32>; 9] {
    [
        &v.list, &e.list, &f.list, &v.bounds, &e.bounds, &f.bounds, &v.counts, &e.counts, &f.counts,
    ]
}

/// A gathering launch's shared memory with windows of `cap` entries: on
/// the GPU's blocks and on the CPU backend's one-thread blocks.
fn gather_smem(cap: u32) -> (usize, usize) {
    (
        gather_shared_bytes(cap, BOUNDS.threads),
        gather_shared_bytes(cap, 1),
    )
}

/// FE or EV as the device packs them (two 16-bit entries a word, the
/// first in the low half) unpacked, in parallel.
pub(crate) fn halves(words: &[u32]) -> Vec<u16> {
    let mut out = vec![0u16; 2 * words.len()];
    out.par_chunks_mut(2).zip(words).for_each(|(pair, &w)| {
        pair[0] = w as u16;
        pair[1] = (w >> 16) as u16;
    });
    out
}

/// The largest difference of consecutive `offsets`.
fn max_gap(offsets: &[u32]) -> u32 {
    offsets
        .windows(2)
        .map(|w| w[1].wrapping_sub(w[0]))
        .max()
        .unwrap_or(0)
}

/// [`PatchError::LocalOverflow`] of patch `patch`.
fn local_overflow(
    patch: u32,
    count: usize,
    what: &'static str,
    limit: u32,
    patch_size: u32,
) -> PatchError {
    PatchError::LocalOverflow {
        patch,
        count,
        what,
        limit,
        patch_size,
    }
}

impl Backend {
    /// `mesh` (whose topology is `topo`) patched with at most
    /// `patch_size` faces a patch as this backend patches best (see
    /// [`Backend::patched`]), the device's build left on the device; on
    /// the GPU from `topo`'s relations on the device (uploaded first where
    /// `topo` has none), on the CPU backend from its host topology.
    ///
    /// # Errors
    /// As [`Backend::patched`].
    pub(crate) fn patches(
        &self,
        mesh: &TriMesh,
        topo: &TopologyOn<'_>,
        patch_size: u32,
    ) -> Result<Patches, PartitionError> {
        match self {
            Backend::Cuda(_) => {
                if topo.relations().is_none() {
                    let host = topo.host(self)?;
                    return self.patches(mesh, &TopologyOn::uploaded(self, &host)?, patch_size);
                }
                // The partition stays on the device for the build.
                let seed = patcher::DEFAULT_SEED;
                let rounds = PartitionRounds::default();
                let faces = mesh.num_faces();
                let part = self.partition_on(topo, faces, patch_size, seed, rounds)?;
                match self.patch_buffers_on(mesh, topo, &part, patch_size) {
                    Err(PartitionError::Backend(
                        BackendError::SharedMemory { .. } | BackendError::Inconsistent(_),
                    )) => {
                        let part = Partition {
                            face_patch: self.read_back(&part.face_patch, faces)?,
                            num_patches: part.num_patches,
                            iterations: part.iterations,
                        };
                        let host = topo.host(self)?;
                        let patched = PatchedMesh::from_partition(mesh, &host, &part, patch_size)?;
                        Ok(Patches::Host(Box::new(patched)))
                    }
                    built => built.map(|b| Patches::OnBackend(Box::new(b))),
                }
            }
            Backend::Cpu(_) => Ok(Patches::Host(Box::new(PatchedMesh::with_topology(
                mesh,
                &*topo.host(self)?,
                patch_size,
            )?))),
        }
    }

    /// `mesh` (whose topology is `topo`) patched with at most `patch_size`
    /// faces a patch as this backend patches best: on the GPU by
    /// [`Backend::partition`] and [`Backend::build_patches`] (the host's
    /// build where a patch's gather needs more shared memory than a block
    /// has, or where the device's counts disagree), on the CPU backend by
    /// the host's patcher and build ([`crate::patcher::partition`],
    /// [`PatchedMesh::from_partition`], faster there than the device's
    /// kernels run one block a worker); the same seed either way
    /// ([`patcher::DEFAULT_SEED`]).
    ///
    /// # Errors
    /// [`PatchError`] for a patch size out of range or a patch over the
    /// local limits; a backend error from the GPU.
    pub fn patched(
        &self,
        mesh: &TriMesh,
        topo: &Topology,
        patch_size: u32,
    ) -> Result<PatchedMesh, PartitionError> {
        match self.patches(mesh, &TopologyOn::of(self, topo)?, patch_size)? {
            Patches::OnBackend(buffers) => Ok(buffers.download(self, topo)?),
            Patches::Host(patched) => Ok(*patched),
        }
    }

    /// The [`PatchSummary`] of [`Backend::patched`]'s patches of `mesh`
    /// from its topology made for this backend ([`Backend::topology_on`]),
    /// taken where they were built: on the GPU from the relations on the
    /// device, nothing but the patches' headers copied back (`cavity
    /// info`).
    ///
    /// # Errors
    /// As [`Backend::patched`].
    pub fn patch_summary(
        &self,
        mesh: &TriMesh,
        topo: &TopologyOn<'_>,
        patch_size: u32,
    ) -> Result<PatchSummary, PartitionError> {
        Ok(match self.patches(mesh, topo, patch_size)? {
            Patches::OnBackend(buffers) => buffers.summary(),
            Patches::Host(patched) => patched.summary(),
        })
    }
}

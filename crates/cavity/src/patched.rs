//! The patched mesh: per-patch FE/EV in 16-bit local indices, owned and
//! not-owned (ribbon) elements, bitmasks, patch stash, and the maps between
//! input indices and global handles (RXMesh section 5-6; dynamic paper
//! section 5.1, appendix A).
//!
//! Ownership: a face is owned by its patch; a vertex or an edge by the patch
//! holding most of its incident faces (ties to the lower patch id); isolated
//! vertices by patch 0. The ribbon of a patch is every face incident to one
//! of its owned vertices or edges or sharing an edge with one of its owned
//! faces, with those faces' edges and vertices: enough to answer every
//! first-order query of every owned element inside the patch.

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

use cavity_device::layout::{
    FE_REVERSED, Kind, MAX_LOCAL_EDGES, MAX_LOCAL_ELEMENTS, MAX_LOCAL_FACES, PatchInfo, PatchMesh,
    RawPatchMesh, ribbon_entry,
};
use cavity_device::query::Query;

use crate::TriMesh;
use crate::patcher::{self, Partition, PatchError};
use crate::topology::{Topology, split_lengths};

/// A mesh split into patches, ready for the query kernels.
///
/// Handles: the owned elements of patch `p` of each kind are numbered
/// `base(p)..base(p) + owned(p)`; `*_to_input` and `input_to_*` map between
/// handles and input indices (edges are input edges numbered as in
/// [`Topology`]).
#[derive(Clone, Debug)]
pub struct PatchedMesh {
    /// One header per patch.
    pub(crate) patches: Vec<PatchInfo>,
    /// FE of every patch, `(local edge << 1) | reversed`.
    pub(crate) fe: Vec<u16>,
    /// EV of every patch.
    pub(crate) ev: Vec<u16>,
    /// Ribbon tables.
    pub(crate) ribbon: Vec<u32>,
    /// Patch stashes.
    pub(crate) stash: Vec<u32>,
    /// Owned and active bitmasks.
    pub(crate) masks: Vec<u32>,
    /// Vertex handle → input vertex.
    pub(crate) vertex_to_input: Vec<u32>,
    /// Input vertex → vertex handle.
    pub(crate) input_to_vertex: Vec<u32>,
    /// Edge handle → input edge.
    pub(crate) edge_to_input: Vec<u32>,
    /// Input edge → edge handle.
    pub(crate) input_to_edge: Vec<u32>,
    /// Face handle → input face.
    pub(crate) face_to_input: Vec<u32>,
    /// Input face → face handle.
    pub(crate) input_to_face: Vec<u32>,
    /// Input edges as vertex pairs.
    pub(crate) input_edges: Vec<[u32; 2]>,
    /// Maximum faces per patch used.
    pub(crate) patch_size: u32,
    /// Lloyd iterations the patcher ran.
    pub(crate) lloyd_iterations: u32,
}

/// Patch statistics (RXMesh section 7; dynamic paper appendix A).
#[derive(Clone, Debug, PartialEq)]
pub struct PatchStats {
    /// Number of patches.
    pub patches: usize,
    /// Smallest, mean and largest owned face count.
    pub min_faces: u32,
    /// Mean owned faces per patch.
    pub mean_faces: f64,
    /// Largest owned face count.
    pub max_faces: u32,
    /// Not-owned (ribbon) faces over owned faces.
    pub ribbon_ratio: f64,
    /// Bytes of patch data (headers, FE, EV, ribbon tables, stashes,
    /// bitmasks) per input face.
    pub bytes_per_face: f64,
}

/// Per-patch pieces before concatenation.
struct Piece {
    info: PatchInfo,
    fe: Vec<u16>,
    ev: Vec<u16>,
    ribbon: Vec<u32>,
    stash: Vec<u32>,
    masks: Vec<u32>,
}

/// Elements of one kind per patch: owner, position in the owner's sorted
/// owned list, and the owned lists of all patches one after the other (in
/// patch order, each increasing), which is also the handle → input map.
struct Owners {
    owner: Vec<u32>,
    local: Vec<u32>,
    /// Patch `p` owns `members[offsets[p]..offsets[p + 1]]`; `offsets[p]`
    /// is its handle base.
    offsets: Vec<u32>,
    members: Vec<u32>,
}

/// Elements per block when grouping elements by owner in parallel.
const OWNER_BLOCK: usize = 1 << 16;

impl Owners {
    fn new(owner: Vec<u32>, patches: usize) -> Owners {
        // Per block of elements, its count of each patch; then where each
        // block's elements of each patch start among that patch's owned
        // elements.
        let mut starts: Vec<Vec<u32>> = owner
            .par_chunks(OWNER_BLOCK)
            .map(|block| {
                let mut counts = vec![0u32; patches];
                for &p in block {
                    counts[p as usize] += 1;
                }
                counts
            })
            .collect();
        let mut offsets = vec![0u32; patches + 1];
        for (p, total) in offsets[1..].iter_mut().enumerate() {
            let mut sum = 0;
            for block in &mut starts {
                (block[p], sum) = (sum, sum + block[p]);
            }
            *total = sum;
        }
        for p in 0..patches {
            offsets[p + 1] += offsets[p];
        }
        let mut local = vec![0u32; owner.len()];
        local
            .par_chunks_mut(OWNER_BLOCK)
            .zip(owner.par_chunks(OWNER_BLOCK))
            .zip(starts)
            .for_each(|((local, block), mut cursor)| {
                for (l, &p) in local.iter_mut().zip(block) {
                    *l = cursor[p as usize];
                    cursor[p as usize] += 1;
                }
            });
        let handles: Vec<u32> = owner
            .par_iter()
            .zip(&local)
            .map(|(&p, &l)| offsets[p as usize] + l)
            .collect();
        let members = invert(&handles);
        Owners {
            owner,
            local,
            offsets,
            members,
        }
    }

    /// The owned elements of patch `p`, increasing.
    fn owned(&self, p: u32) -> &[u32] {
        &self.members[self.offsets[p as usize] as usize..self.offsets[p as usize + 1] as usize]
    }

    /// The local index of element `x` in patch `p`, whose not-owned
    /// elements of this kind are `ribbon` (sorted).
    fn local_in(&self, p: u32, x: u32, ribbon: &[u32]) -> u32 {
        if self.owner[x as usize] == p {
            self.local[x as usize]
        } else {
            let r = ribbon.binary_search(&x).expect("element in patch");
            (self.owned(p).len() + r) as u32
        }
    }

    /// Handles `offsets[owner] + local` (the owned elements numbered patch
    /// by patch); returns (handle → input, input → handle).
    fn into_handles(self) -> (Vec<u32>, Vec<u32>) {
        let to_handle = self
            .owner
            .par_iter()
            .zip(&self.local)
            .map(|(&p, &l)| self.offsets[p as usize] + l)
            .collect();
        (self.members, to_handle)
    }
}

/// The inverse of the permutation `perm` of `0..perm.len()`.
fn invert(perm: &[u32]) -> Vec<u32> {
    let inverse: Vec<AtomicU32> = (0..perm.len())
        .into_par_iter()
        .map(|_| AtomicU32::new(0))
        .collect();
    perm.par_iter().enumerate().for_each(|(i, &j)| {
        inverse[j as usize].store(i as u32, Ordering::Relaxed);
    });
    inverse.into_par_iter().map(AtomicU32::into_inner).collect()
}

/// The owner of an element incident to `faces`: the patch with most of them.
fn majority(faces: &[u32], face_patch: &[u32]) -> u32 {
    let mut best = (0usize, u32::MAX);
    for &f in faces {
        let p = face_patch[f as usize];
        let n = faces
            .iter()
            .filter(|&&g| face_patch[g as usize] == p)
            .count();
        if n > best.0 || (n == best.0 && p < best.1) {
            best = (n, p);
        }
    }
    if best.1 == u32::MAX { 0 } else { best.1 }
}

impl PatchedMesh {
    /// Patches `mesh` (indices must be in range, faces non-degenerate) with
    /// at most `patch_size` faces per patch.
    pub fn new(mesh: &TriMesh, patch_size: u32) -> Result<PatchedMesh, PatchError> {
        Self::with_topology(mesh, &Topology::new(mesh), patch_size)
    }

    /// [`PatchedMesh::new`] with the topology of `mesh` given
    /// (`Topology::new(mesh)`), for a caller that has it.
    ///
    /// # Errors
    /// As [`PatchedMesh::new`].
    pub fn with_topology(
        mesh: &TriMesh,
        topo: &Topology,
        patch_size: u32,
    ) -> Result<PatchedMesh, PatchError> {
        let part = patcher::partition(topo, mesh.num_faces(), patch_size, patcher::DEFAULT_SEED)?;
        Self::from_partition(mesh, topo, &part, patch_size)
    }

    /// Patches `mesh` along a given face partition (`face_patch[f]`, any
    /// patch numbers; empty ones are dropped): the static layout of the
    /// patches a dynamic run left, to time static queries on them (dynamic
    /// paper, table 3).
    ///
    /// # Errors
    /// As [`PatchedMesh::new`] when a patch exceeds the local limits.
    pub fn with_partition(
        mesh: &TriMesh,
        face_patch: &[u32],
        patch_size: u32,
    ) -> Result<PatchedMesh, PatchError> {
        let topo = Topology::new(mesh);
        let mut renumber = std::collections::HashMap::new();
        let face_patch: Vec<u32> = face_patch
            .iter()
            .map(|&p| {
                let n = renumber.len() as u32;
                *renumber.entry(p).or_insert(n)
            })
            .collect();
        let part = Partition {
            num_patches: (renumber.len() as u32).max(1),
            face_patch,
            iterations: 0,
        };
        Self::from_partition(mesh, &topo, &part, patch_size)
    }

    /// Patches `mesh` (whose topology is `topo`) along the partition
    /// `part` of its faces (patches numbered `0..part.num_patches`, none
    /// empty), made by [`patcher::partition`] or on a device
    /// (`Backend::partition`), with `patch_size` the limit it kept.
    ///
    /// # Errors
    /// [`PatchError::LocalOverflow`] when a patch with its ribbon exceeds
    /// the local limits.
    pub fn from_partition(
        mesh: &TriMesh,
        topo: &Topology,
        part: &Partition,
        patch_size: u32,
    ) -> Result<PatchedMesh, PatchError> {
        let np = part.num_patches as usize;
        let fp = &part.face_patch;
        let vertex_owner: Vec<u32> = (0..mesh.num_vertices() as u32)
            .into_par_iter()
            .map(|v| majority(topo.vertex_faces(v), fp))
            .collect();
        let edge_owner: Vec<u32> = (0..topo.ev.len() as u32)
            .into_par_iter()
            .map(|e| majority(topo.edge_faces(e), fp))
            .collect();
        let verts = Owners::new(vertex_owner, np);
        let edges = Owners::new(edge_owner, np);
        let faces = Owners::new(fp.clone(), np);

        let mut pieces: Vec<Piece> = (0..np as u32)
            .into_par_iter()
            .map(|p| build_patch(p, mesh, topo, &verts, &edges, &faces, patch_size))
            .collect::<Result<_, _>>()?;

        // Offsets and handle bases (the owners' group offsets), then every
        // piece copied into its place in the flat arrays. Each patch's FE
        // and EV start 16-byte aligned (multiples of 8 entries) so blocks
        // copy them in 16-byte pieces.
        let mut ends = [0usize; 5];
        for (p, piece) in pieces.iter_mut().enumerate() {
            let info = &mut piece.info;
            info.fe_offset = ends[0] as u32;
            info.ev_offset = ends[1] as u32;
            info.ribbon_offset = ends[2] as u32;
            info.stash_offset = ends[3] as u32;
            info.mask_offset = ends[4] as u32;
            info.vertex_base = verts.offsets[p];
            info.edge_base = edges.offsets[p];
            info.face_base = faces.offsets[p];
            ends[0] += piece.fe.len().next_multiple_of(8);
            ends[1] += piece.ev.len().next_multiple_of(8);
            ends[2] += piece.ribbon.len();
            ends[3] += piece.stash.len();
            ends[4] += piece.masks.len();
        }
        let mut fe = vec![0u16; ends[0]];
        let mut ev = vec![0u16; ends[1]];
        let mut ribbon = vec![0u32; ends[2]];
        let mut stash = vec![0u32; ends[3]];
        let mut masks = vec![0u32; ends[4]];
        let fe_parts = split_lengths(
            &mut fe,
            pieces.iter().map(|x| x.fe.len().next_multiple_of(8)),
        );
        let ev_parts = split_lengths(
            &mut ev,
            pieces.iter().map(|x| x.ev.len().next_multiple_of(8)),
        );
        let ribbon_parts = split_lengths(&mut ribbon, pieces.iter().map(|x| x.ribbon.len()));
        let stash_parts = split_lengths(&mut stash, pieces.iter().map(|x| x.stash.len()));
        let mask_parts = split_lengths(&mut masks, pieces.iter().map(|x| x.masks.len()));
        let patches: Vec<PatchInfo> = pieces
            .into_par_iter()
            .zip(fe_parts)
            .zip(ev_parts)
            .zip(ribbon_parts)
            .zip(stash_parts)
            .zip(mask_parts)
            .map(|(((((piece, fe), ev), ribbon), stash), masks)| {
                fe[..piece.fe.len()].copy_from_slice(&piece.fe);
                ev[..piece.ev.len()].copy_from_slice(&piece.ev);
                ribbon.copy_from_slice(&piece.ribbon);
                stash.copy_from_slice(&piece.stash);
                masks.copy_from_slice(&piece.masks);
                piece.info
            })
            .collect();
        let (vertex_to_input, input_to_vertex) = verts.into_handles();
        let (edge_to_input, input_to_edge) = edges.into_handles();
        let (face_to_input, input_to_face) = faces.into_handles();
        Ok(PatchedMesh {
            patches,
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
            patch_size,
            lloyd_iterations: part.iterations,
        })
    }

    /// The borrowed view the kernels read.
    pub fn view(&self) -> PatchMesh<'_> {
        PatchMesh {
            patches: &self.patches,
            fe: &self.fe,
            ev: &self.ev,
            ribbon: &self.ribbon,
            stash: &self.stash,
            masks: &self.masks,
        }
    }

    /// The host arrays' addresses and lengths as a kernel parameter (the
    /// CPU backend's launches; valid while `self` lives unchanged).
    pub fn raw(&self) -> RawPatchMesh {
        let addr = |p: *const u8| p as u64;
        self.raw_at([
            addr(self.patches.as_ptr().cast()),
            addr(self.fe.as_ptr().cast()),
            addr(self.ev.as_ptr().cast()),
            addr(self.ribbon.as_ptr().cast()),
            addr(self.stash.as_ptr().cast()),
            addr(self.masks.as_ptr().cast()),
        ])
    }

    /// The arrays' lengths with copies of them at `addresses` (patches,
    /// FE, EV, ribbon, stash, masks) as a kernel parameter.
    pub fn raw_at(&self, addresses: [u64; 6]) -> RawPatchMesh {
        let [patches, fe, ev, ribbon, stash, masks] = addresses;
        RawPatchMesh {
            patches,
            fe,
            ev,
            ribbon,
            stash,
            masks,
            lens: [
                self.patches.len() as u32,
                self.fe.len() as u32,
                self.ev.len() as u32,
                self.ribbon.len() as u32,
                self.stash.len() as u32,
                self.masks.len() as u32,
            ],
        }
    }

    /// The patch headers, one per patch.
    pub fn patches(&self) -> &[PatchInfo] {
        &self.patches
    }

    /// FE of every patch (`(local edge << 1) | reversed`, at each
    /// header's `fe_offset`).
    pub fn fe(&self) -> &[u16] {
        &self.fe
    }

    /// EV of every patch (two local vertices per edge, at each header's
    /// `ev_offset`).
    pub fn ev(&self) -> &[u16] {
        &self.ev
    }

    /// The ribbon tables of every patch.
    pub fn ribbon(&self) -> &[u32] {
        &self.ribbon
    }

    /// The patch stashes.
    pub fn stash(&self) -> &[u32] {
        &self.stash
    }

    /// The owned and active bitmasks of every patch.
    pub fn masks(&self) -> &[u32] {
        &self.masks
    }

    /// The input edges as vertex pairs, numbered as in [`Topology`].
    pub fn input_edges(&self) -> &[[u32; 2]] {
        &self.input_edges
    }

    /// The largest number of faces a patch was allowed.
    pub fn patch_size(&self) -> u32 {
        self.patch_size
    }

    /// The Lloyd iterations the patcher ran.
    pub fn lloyd_iterations(&self) -> u32 {
        self.lloyd_iterations
    }

    /// Number of patches.
    pub fn num_patches(&self) -> u32 {
        self.patches.len() as u32
    }

    /// The dynamic shared memory `query`'s kernels need for the largest
    /// patch with `block_dim` threads per block, in bytes.
    pub fn query_shared_bytes(&self, query: Query, block_dim: u32) -> usize {
        self.patches
            .iter()
            .map(|p| cavity_device::query::shared_bytes(p, query, block_dim))
            .max()
            .unwrap_or(0)
    }

    /// Element count of `kind`.
    pub fn count(&self, kind: Kind) -> usize {
        match kind {
            Kind::Vertex => self.vertex_to_input.len(),
            Kind::Edge => self.edge_to_input.len(),
            Kind::Face => self.face_to_input.len(),
        }
    }

    /// Handle → input index for `kind`.
    pub fn to_input(&self, kind: Kind) -> &[u32] {
        match kind {
            Kind::Vertex => &self.vertex_to_input,
            Kind::Edge => &self.edge_to_input,
            Kind::Face => &self.face_to_input,
        }
    }

    /// Input index → handle for `kind`.
    pub fn to_handle(&self, kind: Kind) -> &[u32] {
        match kind {
            Kind::Vertex => &self.input_to_vertex,
            Kind::Edge => &self.input_to_edge,
            Kind::Face => &self.input_to_face,
        }
    }

    /// Bytes of patch data: headers, FE, EV, ribbon tables, stashes and
    /// bitmasks.
    pub fn patch_bytes(&self) -> usize {
        let entries = [&self.fe, &self.ev].map(Vec::len);
        let words = [&self.ribbon, &self.stash, &self.masks].map(Vec::len);
        layout_bytes(self.patches.len(), entries, words)
    }

    /// Patch statistics.
    pub fn stats(&self) -> PatchStats {
        patch_stats(&self.patches, self.patch_bytes())
    }

    /// The statistics, bytes and Lloyd iterations `cavity info` reports.
    pub fn summary(&self) -> PatchSummary {
        PatchSummary {
            stats: self.stats(),
            patch_bytes: self.patch_bytes(),
            lloyd_iterations: self.lloyd_iterations,
        }
    }
}

/// What `cavity info` reports of a mesh's patches
/// ([`PatchedMesh::summary`]; `Backend::patch_summary` takes it from the
/// patches where the backend built them).
#[derive(Clone, Debug, PartialEq)]
pub struct PatchSummary {
    /// The patch statistics.
    pub stats: PatchStats,
    /// Bytes of patch data ([`PatchedMesh::patch_bytes`]).
    pub patch_bytes: usize,
    /// The partition's Lloyd iterations.
    pub lloyd_iterations: u32,
}

/// Bytes of the patch data of `patches` patches with `entries` FE and EV
/// entries (16 bits each) and `words` ribbon, stash and bitmask words.
pub(crate) fn layout_bytes(patches: usize, entries: [usize; 2], words: [usize; 3]) -> usize {
    patches * size_of::<PatchInfo>()
        + 2 * entries.iter().sum::<usize>()
        + 4 * words.iter().sum::<usize>()
}

/// The statistics of the patches with headers `patches` and
/// `patch_bytes` bytes of patch data.
pub(crate) fn patch_stats(patches: &[PatchInfo], patch_bytes: usize) -> PatchStats {
    let sizes: Vec<u32> = patches.iter().map(|p| p.owned_faces).collect();
    let owned: u64 = sizes.iter().map(|&s| s as u64).sum();
    let ribbon: u64 = patches
        .iter()
        .map(|p| (p.num_faces - p.owned_faces) as u64)
        .sum();
    PatchStats {
        patches: patches.len(),
        min_faces: sizes.iter().copied().min().unwrap_or(0),
        mean_faces: owned as f64 / sizes.len().max(1) as f64,
        max_faces: sizes.iter().copied().max().unwrap_or(0),
        ribbon_ratio: ribbon as f64 / owned.max(1) as f64,
        bytes_per_face: patch_bytes as f64 / owned.max(1) as f64,
    }
}

/// `v` sorted, without repeats.
fn sorted_unique(mut v: Vec<u32>) -> Vec<u32> {
    v.sort_unstable();
    v.dedup();
    v
}

/// Bitmask words: the first `set` of `n` bits set.
fn mask(n: usize, set: usize) -> impl Iterator<Item = u32> {
    (0..n.div_ceil(32)).map(move |w| {
        let lo = 32 * w;
        let k = set.saturating_sub(lo).min(32);
        if k == 32 { u32::MAX } else { (1u32 << k) - 1 }
    })
}

/// The static layout of patch `p`: its ribbon (the faces incident to its
/// owned vertices and edges or sharing an edge with its owned faces, with
/// their edges and vertices), local FE and EV, stash, ribbon entries and
/// masks. Offsets and bases are left for the caller.
fn build_patch(
    p: u32,
    mesh: &TriMesh,
    topo: &Topology,
    verts: &Owners,
    edges: &Owners,
    faces: &Owners,
    patch_size: u32,
) -> Result<Piece, PatchError> {
    let own_f = faces.owned(p);
    let own_e = edges.owned(p);
    let own_v = verts.owned(p);
    let mut rib_f: Vec<u32> = Vec::new();
    let mut take_faces = |incident: &[u32]| {
        rib_f.extend(incident.iter().filter(|&&f| faces.owner[f as usize] != p));
    };
    for &v in own_v {
        take_faces(topo.vertex_faces(v));
    }
    // The faces of the owned edges come with the owned faces' edges: an
    // edge's owner holds one of its faces.
    for &f in own_f {
        for &e in &topo.fe[f as usize] {
            take_faces(topo.edge_faces(e));
        }
    }
    let rib_f = sorted_unique(rib_f);
    let all_f = || own_f.iter().chain(&rib_f).copied();
    let rib_e = sorted_unique(
        all_f()
            .flat_map(|f| topo.fe[f as usize])
            .filter(|&e| edges.owner[e as usize] != p)
            .collect(),
    );
    let all_e = || own_e.iter().chain(&rib_e).copied();
    let rib_v = sorted_unique(
        all_e()
            .flat_map(|e| topo.ev[e as usize])
            .filter(|&v| verts.owner[v as usize] != p)
            .collect(),
    );
    let (nv, ne, nf) = (
        own_v.len() + rib_v.len(),
        own_e.len() + rib_e.len(),
        own_f.len() + rib_f.len(),
    );
    let overflow = |count: usize, what: &'static str, limit: u32| PatchError::LocalOverflow {
        patch: p,
        count,
        what,
        limit,
        patch_size,
    };
    if nv > MAX_LOCAL_ELEMENTS as usize {
        return Err(overflow(nv, "vertices", MAX_LOCAL_ELEMENTS));
    }
    if ne > MAX_LOCAL_EDGES as usize {
        return Err(overflow(ne, "edges", MAX_LOCAL_EDGES));
    }
    if nf > MAX_LOCAL_FACES as usize {
        return Err(overflow(nf, "faces", MAX_LOCAL_FACES));
    }

    let mut fe = Vec::with_capacity(3 * nf);
    for f in all_f() {
        let t = mesh.faces[f as usize];
        for (k, &e) in topo.fe[f as usize].iter().enumerate() {
            let local = edges.local_in(p, e, &rib_e) as u16;
            let reversed = if topo.ev[e as usize][0] == t[k] {
                0
            } else {
                FE_REVERSED
            };
            fe.push((local << 1) | reversed);
        }
    }
    let mut ev = Vec::with_capacity(2 * ne);
    for e in all_e() {
        for v in topo.ev[e as usize] {
            ev.push(verts.local_in(p, v, &rib_v) as u16);
        }
    }
    let stash = sorted_unique(
        rib_v
            .iter()
            .map(|&v| verts.owner[v as usize])
            .chain(rib_e.iter().map(|&e| edges.owner[e as usize]))
            .chain(rib_f.iter().map(|&f| faces.owner[f as usize]))
            .collect(),
    );
    let entry = |owners: &Owners, x: u32| {
        let q = owners.owner[x as usize];
        let s = stash.binary_search(&q).expect("owner in stash") as u32;
        ribbon_entry(s, owners.local[x as usize])
    };
    let ribbon: Vec<u32> = rib_v
        .iter()
        .map(|&v| entry(verts, v))
        .chain(rib_e.iter().map(|&e| entry(edges, e)))
        .chain(rib_f.iter().map(|&f| entry(faces, f)))
        .collect();
    let mut masks = Vec::new();
    for (n, owned) in [(nv, own_v.len()), (ne, own_e.len()), (nf, own_f.len())] {
        masks.extend(mask(n, owned));
        masks.extend(mask(n, n));
    }
    let mut adjacent: Vec<u32> = Vec::new();
    let ff_entries = own_f
        .iter()
        .map(|&f| {
            adjacent.clear();
            for &e in &topo.fe[f as usize] {
                adjacent.extend(topo.edge_faces(e).iter().filter(|&&g| g != f));
            }
            adjacent.sort_unstable();
            adjacent.dedup();
            adjacent.len() as u32
        })
        .sum();
    let info = PatchInfo {
        num_vertices: nv as u32,
        num_edges: ne as u32,
        num_faces: nf as u32,
        owned_vertices: own_v.len() as u32,
        owned_edges: own_e.len() as u32,
        owned_faces: own_f.len() as u32,
        stash_len: stash.len() as u32,
        ff_entries,
        ..PatchInfo::default()
    };
    Ok(Piece {
        info,
        fe,
        ev,
        ribbon,
        stash,
        masks,
    })
}

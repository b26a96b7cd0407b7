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

use rayon::prelude::*;

use cavity_device::layout::{
    FE_REVERSED, Kind, MAX_LOCAL_EDGES, MAX_LOCAL_ELEMENTS, MAX_LOCAL_FACES, PatchInfo, PatchMesh,
    ribbon_entry,
};

use crate::TriMesh;
use crate::patcher::{self, Partition, PatchError};
use crate::topology::Topology;

/// A mesh split into patches, ready for the query kernels.
///
/// Handles: the owned elements of patch `p` of each kind are numbered
/// `base(p)..base(p) + owned(p)`; `*_to_input` and `input_to_*` map between
/// handles and input indices (edges are input edges numbered as in
/// [`Topology`]).
#[derive(Clone, Debug)]
pub struct PatchedMesh {
    /// One header per patch.
    pub patches: Vec<PatchInfo>,
    /// FE of every patch, `(local edge << 1) | reversed`.
    pub fe: Vec<u16>,
    /// EV of every patch.
    pub ev: Vec<u16>,
    /// Ribbon tables.
    pub ribbon: Vec<u32>,
    /// Patch stashes.
    pub stash: Vec<u32>,
    /// Owned and active bitmasks.
    pub masks: Vec<u32>,
    /// Vertex handle → input vertex.
    pub vertex_to_input: Vec<u32>,
    /// Input vertex → vertex handle.
    pub input_to_vertex: Vec<u32>,
    /// Edge handle → input edge.
    pub edge_to_input: Vec<u32>,
    /// Input edge → edge handle.
    pub input_to_edge: Vec<u32>,
    /// Face handle → input face.
    pub face_to_input: Vec<u32>,
    /// Input face → face handle.
    pub input_to_face: Vec<u32>,
    /// Input edges as vertex pairs.
    pub input_edges: Vec<[u32; 2]>,
    /// Maximum faces per patch used.
    pub patch_size: u32,
    /// Lloyd iterations the patcher ran.
    pub lloyd_iterations: u32,
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
/// owned list, and the owned lists.
struct Owners {
    owner: Vec<u32>,
    local: Vec<u32>,
    owned: Vec<Vec<u32>>,
}

impl Owners {
    fn new(owner: Vec<u32>, patches: usize) -> Owners {
        let mut owned = vec![Vec::new(); patches];
        let mut local = vec![0u32; owner.len()];
        for (i, &p) in owner.iter().enumerate() {
            local[i] = owned[p as usize].len() as u32;
            owned[p as usize].push(i as u32);
        }
        Owners {
            owner,
            local,
            owned,
        }
    }

    /// Handles `base(p) + local`, given per-patch bases; returns
    /// (handle → input, input → handle).
    fn handles(&self, bases: &[u32]) -> (Vec<u32>, Vec<u32>) {
        let to_handle: Vec<u32> = (0..self.owner.len())
            .map(|i| bases[self.owner[i] as usize] + self.local[i])
            .collect();
        let mut to_input = vec![0u32; to_handle.len()];
        for (i, &h) in to_handle.iter().enumerate() {
            to_input[h as usize] = i as u32;
        }
        (to_input, to_handle)
    }
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
        let topo = Topology::new(mesh);
        let part = patcher::partition(&topo, mesh.num_faces(), patch_size, 0x5eed)?;
        Self::from_partition(mesh, &topo, &part, patch_size)
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

    fn from_partition(
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

        let pieces: Vec<Piece> = (0..np as u32)
            .into_par_iter()
            .map(|p| build_patch(p, mesh, topo, &verts, &edges, &faces, patch_size))
            .collect::<Result<_, _>>()?;

        let mut out = PatchedMesh {
            patches: Vec::with_capacity(np),
            fe: Vec::new(),
            ev: Vec::new(),
            ribbon: Vec::new(),
            stash: Vec::new(),
            masks: Vec::new(),
            vertex_to_input: Vec::new(),
            input_to_vertex: Vec::new(),
            edge_to_input: Vec::new(),
            input_to_edge: Vec::new(),
            face_to_input: Vec::new(),
            input_to_face: Vec::new(),
            input_edges: topo.ev.clone(),
            patch_size,
            lloyd_iterations: part.iterations,
        };
        let mut bases = [0u32; 3];
        let mut base_of = [Vec::new(), Vec::new(), Vec::new()];
        for piece in pieces {
            let mut info = piece.info;
            info.fe_offset = out.fe.len() as u32;
            info.ev_offset = out.ev.len() as u32;
            info.ribbon_offset = out.ribbon.len() as u32;
            info.stash_offset = out.stash.len() as u32;
            info.mask_offset = out.masks.len() as u32;
            info.vertex_base = bases[0];
            info.edge_base = bases[1];
            info.face_base = bases[2];
            for (k, kind) in [Kind::Vertex, Kind::Edge, Kind::Face]
                .into_iter()
                .enumerate()
            {
                base_of[k].push(bases[k]);
                bases[k] += info.owned(kind);
            }
            // Each patch's FE and EV start 16-byte aligned (multiples of 8
            // entries) so blocks copy them in 16-byte pieces.
            out.fe.extend(piece.fe);
            out.fe.resize(out.fe.len().next_multiple_of(8), 0);
            out.ev.extend(piece.ev);
            out.ev.resize(out.ev.len().next_multiple_of(8), 0);
            out.ribbon.extend(piece.ribbon);
            out.stash.extend(piece.stash);
            out.masks.extend(piece.masks);
            out.patches.push(info);
        }
        (out.vertex_to_input, out.input_to_vertex) = verts.handles(&base_of[0]);
        (out.edge_to_input, out.input_to_edge) = edges.handles(&base_of[1]);
        (out.face_to_input, out.input_to_face) = faces.handles(&base_of[2]);
        Ok(out)
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

    /// Number of patches.
    pub fn num_patches(&self) -> u32 {
        self.patches.len() as u32
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
        self.patches.len() * size_of::<PatchInfo>()
            + 2 * (self.fe.len() + self.ev.len())
            + 4 * (self.ribbon.len() + self.stash.len() + self.masks.len())
    }

    /// Patch statistics.
    pub fn stats(&self) -> PatchStats {
        let sizes: Vec<u32> = self.patches.iter().map(|p| p.owned_faces).collect();
        let owned: u64 = sizes.iter().map(|&s| s as u64).sum();
        let ribbon: u64 = self
            .patches
            .iter()
            .map(|p| (p.num_faces - p.owned_faces) as u64)
            .sum();
        PatchStats {
            patches: self.patches.len(),
            min_faces: sizes.iter().copied().min().unwrap_or(0),
            mean_faces: owned as f64 / sizes.len().max(1) as f64,
            max_faces: sizes.iter().copied().max().unwrap_or(0),
            ribbon_ratio: ribbon as f64 / owned.max(1) as f64,
            bytes_per_face: self.patch_bytes() as f64 / owned.max(1) as f64,
        }
    }
}

/// Local index of global element `x` in a patch whose owned elements are
/// `owned` and not-owned ones `ribbon` (both sorted).
fn local_of(x: u32, owned: &[u32], ribbon: &[u32]) -> u32 {
    match owned.binary_search(&x) {
        Ok(i) => i as u32,
        Err(_) => (owned.len() + ribbon.binary_search(&x).expect("element in patch")) as u32,
    }
}

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

fn build_patch(
    p: u32,
    mesh: &TriMesh,
    topo: &Topology,
    verts: &Owners,
    edges: &Owners,
    faces: &Owners,
    patch_size: u32,
) -> Result<Piece, PatchError> {
    let own_f = &faces.owned[p as usize];
    let own_e = &edges.owned[p as usize];
    let own_v = &verts.owned[p as usize];
    let mut need_f: Vec<u32> = Vec::new();
    for &v in own_v {
        need_f.extend_from_slice(topo.vertex_faces(v));
    }
    for &e in own_e {
        need_f.extend_from_slice(topo.edge_faces(e));
    }
    for &f in own_f {
        for &e in &topo.fe[f as usize] {
            need_f.extend_from_slice(topo.edge_faces(e));
        }
    }
    let rib_f: Vec<u32> = sorted_unique(need_f)
        .into_iter()
        .filter(|&f| faces.owner[f as usize] != p)
        .collect();
    let all_f: Vec<u32> = own_f.iter().chain(&rib_f).copied().collect();
    let rib_e: Vec<u32> = sorted_unique(all_f.iter().flat_map(|&f| topo.fe[f as usize]).collect())
        .into_iter()
        .filter(|&e| edges.owner[e as usize] != p)
        .collect();
    let all_e: Vec<u32> = own_e.iter().chain(&rib_e).copied().collect();
    let rib_v: Vec<u32> = sorted_unique(all_e.iter().flat_map(|&e| topo.ev[e as usize]).collect())
        .into_iter()
        .filter(|&v| verts.owner[v as usize] != p)
        .collect();
    let (nv, ne, nf) = (own_v.len() + rib_v.len(), all_e.len(), all_f.len());
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
    for &f in &all_f {
        let t = mesh.faces[f as usize];
        for k in 0..3 {
            let e = topo.fe[f as usize][k];
            let local = local_of(e, own_e, &rib_e) as u16;
            let reversed = if topo.ev[e as usize][0] == t[k] {
                0
            } else {
                FE_REVERSED
            };
            fe.push((local << 1) | reversed);
        }
    }
    let mut ev = Vec::with_capacity(2 * ne);
    for &e in &all_e {
        for v in topo.ev[e as usize] {
            ev.push(local_of(v, own_v, &rib_v) as u16);
        }
    }
    let mut stash: Vec<u32> = rib_v
        .iter()
        .map(|&v| verts.owner[v as usize])
        .chain(rib_e.iter().map(|&e| edges.owner[e as usize]))
        .chain(rib_f.iter().map(|&f| faces.owner[f as usize]))
        .collect();
    stash = sorted_unique(stash);
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
    let info = PatchInfo {
        num_vertices: nv as u32,
        num_edges: ne as u32,
        num_faces: nf as u32,
        owned_vertices: own_v.len() as u32,
        owned_edges: own_e.len() as u32,
        owned_faces: own_f.len() as u32,
        stash_len: stash.len() as u32,
        ff_entries: own_f
            .iter()
            .map(|&f| {
                let mut adj: Vec<u32> = topo.fe[f as usize]
                    .iter()
                    .flat_map(|&e| topo.edge_faces(e).iter().copied())
                    .filter(|&g| g != f)
                    .collect();
                adj.sort_unstable();
                adj.dedup();
                adj.len() as u32
            })
            .sum(),
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

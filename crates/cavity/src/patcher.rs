//! Partitioning the faces into small, connected patches: Lloyd's k-means
//! over the face graph with splitting of oversized patches (RXMesh
//! section 6.3 and appendix C), started from a greedy partition.
//!
//! Faces are graph nodes, faces sharing an edge are neighbours, all weights
//! are 1 (so non-manifold inputs need no special case).
//!
//! 1. Seeding: greedy graph growing (Karypis and Kumar, "A fast and high
//!    quality multilevel scheme for partitioning irregular graphs", 1998,
//!    section 4.1) cuts each connected component into connected chunks of
//!    at most four fifths of the size limit (`CHUNK_FRACTION`). The seeds
//!    are the chunk centers (faces farthest from the chunk boundary),
//!    small leftover chunks excepted: already spread at about the right
//!    density.
//! 2. One Lloyd iteration: every face joins its nearest seed by a
//!    multi-source breadth-first search (so every patch is one connected
//!    component). Moving the seeds to the new centers and assigning again
//!    changes the patch count and the ribbon ratio by under 1% on the
//!    scans and bundled meshes, so it stops there.
//! 3. Splitting instead of seed addition: each patch over the size limit
//!    is partitioned on its own the same way (chunks, their centers,
//!    nearest-seed assignment within the patch, up to three
//!    (`SPLIT_ROUNDS`) Lloyd iterations until every part fits), falling
//!    back to the chunks themselves, which never exceed the limit.
//!
//! The searches run in linear time on one FIFO queue each, except the
//! nearest-seed search, which expands large levels in parallel and gives
//! the labels of one FIFO queue; the face graph, the centers and the splits
//! run in parallel (rayon) without affecting the result, which does not
//! depend on the thread count. The greedy chunking is serial (issue 24).

mod graph;

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

use crate::settings::{NamesSettings, Setting};
use crate::topology::Topology;
use graph::{Chunks, Graph, Groups, NONE};

/// The seed of the partitions `PatchedMesh::new` and `Backend::patched`
/// make (where the host's greedy sweep starts; how the device draws its
/// seeds).
pub const DEFAULT_SEED: u64 = 0x5eed;

/// Default maximum faces per patch (the dynamic paper's static setting).
pub const DEFAULT_PATCH_SIZE: u32 = 512;
/// Largest accepted maximum patch size: beyond it a patch's local edges
/// overflow the 15-bit FE index.
pub const MAX_PATCH_SIZE: u32 = 8192;

/// Greedy chunk size as a fraction (numerator, denominator) of the size
/// limit: Voronoi cells of the chunk centers vary in size, and this margin
/// keeps most of them under the limit.
const CHUNK_FRACTION: (u32, u32) = (4, 5);

/// Nearest-seed assignments tried when splitting an oversized patch
/// before falling back to its greedy chunks.
const SPLIT_ROUNDS: u32 = 3;

/// Errors of the patcher.
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    /// The requested patch size is outside `1..=MAX_PATCH_SIZE`.
    #[error("patch size {0} is out of range: use a patch size between 1 and {MAX_PATCH_SIZE}")]
    PatchSize(u32),
    /// A patch with its ribbon holds more local elements than the patch
    /// layout's local indices allow (`cavity_device::layout::MAX_LOCAL_*`).
    #[error(
        "patch {patch} needs {count} local {what} (its own and its ribbon's), more than {limit}; lower the patch size (now {patch_size}); if that does not help, a vertex's one-ring alone is too large"
    )]
    LocalOverflow {
        /// Patch id.
        patch: u32,
        /// Element count needed.
        count: usize,
        /// "vertices", "edges" or "faces".
        what: &'static str,
        /// The limit.
        limit: u32,
        /// The patch size in use.
        patch_size: u32,
    },
}

impl NamesSettings for PatchError {
    fn settings(&self) -> Vec<Setting> {
        match self {
            PatchError::PatchSize(_) | PatchError::LocalOverflow { .. } => {
                vec![Setting::PATCH_SIZE]
            }
        }
    }
}

crate::names_settings!(PatchError);

/// A face → patch assignment.
#[derive(Clone, Debug)]
pub struct Partition {
    /// Patch of each face.
    pub face_patch: Vec<u32>,
    /// Number of patches (at least 1).
    pub num_patches: u32,
    /// Lloyd iterations run.
    pub iterations: u32,
}

/// Partitions the faces of `topo` into connected patches of at most
/// `max_patch_size` faces (see the module documentation for the method).
/// `seed` picks the face where the greedy sweep starts; the result is
/// reproducible for a given seed. Patches are numbered in the order of
/// their lowest face.
pub fn partition(
    topo: &Topology,
    num_faces: usize,
    max_patch_size: u32,
    seed: u64,
) -> Result<Partition, PatchError> {
    if max_patch_size == 0 || max_patch_size > MAX_PATCH_SIZE {
        return Err(PatchError::PatchSize(max_patch_size));
    }
    if num_faces == 0 {
        return Ok(Partition {
            face_patch: Vec::new(),
            num_patches: 1,
            iterations: 0,
        });
    }
    let graph = Graph::faces(topo);
    let start = (mix(seed) % num_faces as u64) as usize;
    let chunks = graph.chunks(chunk_target(max_patch_size), start);
    let (mut label, seeds) = seeded(&graph, chunks);
    split_oversized(&graph, &mut label, seeds.len() as u32, max_patch_size);
    let num_patches = renumber(&mut label);
    Ok(Partition {
        face_patch: label,
        num_patches,
        iterations: 1,
    })
}

/// Greedy chunk size for a size limit.
pub(crate) fn chunk_target(max_patch_size: u32) -> u32 {
    (max_patch_size * CHUNK_FRACTION.0 / CHUNK_FRACTION.1).max(1)
}

/// SplitMix64's output function: spreads `seed` over all bits.
fn mix(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The centers of the kept chunks as seeds, and each node's nearest seed:
/// the labels and the seeds.
fn seeded(graph: &Graph, chunks: Chunks) -> (Vec<u32>, Vec<u32>) {
    let centers = graph.centers(&chunks.label, &chunks.groups);
    drop(chunks.label);
    let seeds: Vec<u32> = centers
        .into_iter()
        .zip(&chunks.keep)
        .filter_map(|(c, &k)| k.then_some(c))
        .collect();
    (graph.assign(&seeds), seeds)
}

/// Splits every patch of `label` (`count` connected patches of the faces
/// of `topo`) with more than `max_patch_size` faces into connected patches
/// within the limit, numbered from `count` on: what the device's
/// partition (`Backend::partition`) leaves oversized after its rounds of
/// seed addition.
pub(crate) fn split_oversized_patches(
    topo: &Topology,
    label: &mut [u32],
    count: u32,
    max_patch_size: u32,
) {
    split_oversized(&Graph::faces(topo), label, count, max_patch_size);
}

/// Splits every patch of `label` (`count` patches) with more than
/// `max_patch_size` faces into connected patches within the limit,
/// numbered from `count` on.
fn split_oversized(graph: &Graph, label: &mut [u32], count: u32, max_patch_size: u32) {
    let mut sizes = vec![0u32; count as usize];
    for &p in label.iter() {
        sizes[p as usize] += 1;
    }
    // Oversized patches get slots 0.. in `faces`, in patch order.
    let mut slot = vec![NONE; count as usize];
    let mut faces: Vec<Vec<u32>> = Vec::new();
    for (p, &s) in sizes.iter().enumerate() {
        if s > max_patch_size {
            slot[p] = faces.len() as u32;
            faces.push(Vec::with_capacity(s as usize));
        }
    }
    if faces.is_empty() {
        return;
    }
    let local: Vec<AtomicU32> = (0..label.len()).map(|_| AtomicU32::new(0)).collect();
    for (f, &p) in label.iter().enumerate() {
        let s = slot[p as usize];
        if s != NONE {
            let list = &mut faces[s as usize];
            local[f].store(list.len() as u32, Ordering::Relaxed);
            list.push(f as u32);
        }
    }
    let parts: Vec<(Vec<u32>, u32)> = faces
        .par_iter()
        .map(|nodes| {
            let p = label[nodes[0] as usize];
            split(&graph.sub(nodes, label, p, &local), max_patch_size)
        })
        .collect();
    let mut next = count;
    for (nodes, (part, n)) in faces.iter().zip(&parts) {
        // Part 0 keeps the patch's number.
        for (&f, &q) in nodes.iter().zip(part) {
            if q != 0 {
                label[f as usize] = next + q - 1;
            }
        }
        next += n - 1;
    }
}

/// Partitions a connected graph of more than `max_patch_size` nodes into
/// connected parts within the limit: the labels and the part count.
fn split(sub: &Graph, max_patch_size: u32) -> (Vec<u32>, u32) {
    let n = sub.len() as u32;
    let target = n.div_ceil(n.div_ceil(chunk_target(max_patch_size)));
    let chunks = sub.chunks(target, 0);
    let fallback = (chunks.label.clone(), chunks.keep.len() as u32);
    let (mut label, mut seeds) = seeded(sub, chunks);
    for round in 0..SPLIT_ROUNDS {
        if round > 0 {
            seeds = sub.centers(&label, &Groups::of(&label, seeds.len()));
            label = sub.assign(&seeds);
        }
        if fits(&label, seeds.len(), max_patch_size) {
            return (label, seeds.len() as u32);
        }
    }
    fallback
}

/// Whether each of the `count` labels has at most `max` nodes.
fn fits(label: &[u32], count: usize, max: u32) -> bool {
    let mut sizes = vec![0u32; count];
    label.iter().all(|&p| {
        sizes[p as usize] += 1;
        sizes[p as usize] <= max
    })
}

/// Renumbers the labels in the order of their lowest node; returns the
/// label count.
pub(crate) fn renumber(label: &mut [u32]) -> u32 {
    let count = label.iter().max().map_or(0, |&m| m + 1);
    let mut new = vec![NONE; count as usize];
    let mut n = 0;
    for p in label.iter_mut() {
        if new[*p as usize] == NONE {
            new[*p as usize] = n;
            n += 1;
        }
        *p = new[*p as usize];
    }
    n
}

//! Export: the dynamic mesh back to an indexed [`TriMesh`], in patch order
//! or in the input's vertex order.

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

use cavity_device::layout::Kind;

use crate::TriMesh;

use super::{DynamicMesh, INPUT_INDEX_ATTR, Id};

impl DynamicMesh {
    /// The mesh as indexed faces: vertices are the active owned vertices in
    /// patch then local order with their stored positions, faces the active
    /// owned faces in the same order with corners resolved to the owners of
    /// their vertices; the second value is the owner patch of each face.
    ///
    /// # Panics
    /// When a face's vertex does not resolve to an active owned vertex (a
    /// mesh that [`DynamicMesh::validate`] rejects).
    pub fn export(&self) -> (TriMesh, Vec<u32>) {
        let ex = self.collect();
        (ex.mesh, ex.face_patch)
    }

    /// The mesh in the input's vertex order: the input vertices that remain,
    /// in input order (all of them, with their indices, when nothing was
    /// deleted), then the vertices fill-ins added, in patch order; faces in
    /// patch order.
    pub fn to_mesh(&self) -> TriMesh {
        self.to_mesh_with_sources().0
    }

    /// [`DynamicMesh::to_mesh`] with the input index of every vertex
    /// (`u32::MAX` for a vertex a fill-in added). In parallel, the same
    /// result for any number of workers.
    pub fn to_mesh_with_sources(&self) -> (TriMesh, Vec<u32>) {
        let ex = self.collect();
        let input_of = |i: usize| {
            let (p, v) = ex.vertex_ids[i];
            let at = (p * self.cap.vertices + v) * self.cap.vertex_attrs + INPUT_INDEX_ATTR;
            self.vertex_attrs[at as usize]
        };
        let mut kept: Vec<(u32, u32)> = (0..ex.vertex_ids.len())
            .into_par_iter()
            .map(|i| (input_of(i), i as u32))
            .collect();
        // Input vertices first by input index; added ones (NEW_VERTEX) after,
        // in export order (the export index makes every key distinct).
        kept.par_sort_unstable_by_key(|&(input, i)| {
            if input < self.input_vertices {
                (0, input, i)
            } else {
                (1, i, i)
            }
        });
        let order = invert(kept.par_iter().map(|&(_, i)| i));
        let positions = kept
            .par_iter()
            .map(|&(_, i)| ex.mesh.positions[i as usize])
            .collect();
        let faces = ex
            .mesh
            .faces
            .par_iter()
            .map(|f| f.map(|v| order[v as usize]))
            .collect();
        let sources = kept
            .par_iter()
            .map(|&(input, _)| {
                if input < self.input_vertices {
                    input
                } else {
                    u32::MAX
                }
            })
            .collect();
        (TriMesh { positions, faces }, sources)
    }

    /// The export with the identities of its vertices and faces, built
    /// patch by patch in parallel (the same for any number of workers).
    pub(super) fn collect(&self) -> Exported {
        let patches = 0..self.num_patches;
        let owned_vertices: Vec<Vec<u32>> = patches
            .clone()
            .into_par_iter()
            .map(|p| self.owned_active(p, Kind::Vertex).collect())
            .collect();
        // Each patch's first export index, then every local vertex's
        // export index in its patch (`u32::MAX`: not owned and active).
        let mut first = Vec::with_capacity(owned_vertices.len());
        let mut next = 0u32;
        for owned in &owned_vertices {
            first.push(next);
            next += owned.len() as u32;
        }
        let index: Vec<Vec<u32>> = owned_vertices
            .par_iter()
            .zip(&first)
            .enumerate()
            .map(|(p, (owned, &first))| {
                let mut row = vec![u32::MAX; self.count(p as u32, Kind::Vertex) as usize];
                for (k, &v) in owned.iter().enumerate() {
                    row[v as usize] = first + k as u32;
                }
                row
            })
            .collect();
        let vertex_ids: Vec<Id> = owned_vertices
            .par_iter()
            .enumerate()
            .flat_map_iter(|(p, owned)| owned.iter().map(move |&v| (p as u32, v)))
            .collect();
        let positions = vertex_ids
            .par_iter()
            .map(|&(p, v)| self.position(p, v))
            .collect();
        let face_ids: Vec<Id> = patches
            .into_par_iter()
            .flat_map_iter(|p| self.owned_active(p, Kind::Face).map(move |f| (p, f)))
            .collect();
        let faces = face_ids
            .par_iter()
            .map(|&(p, f)| {
                let table = self.frozen_table(p, Kind::Vertex);
                self.face_vertices(p, f).map(|v| {
                    let (q, l) = self
                        .owner_in(&table, p, Kind::Vertex, v)
                        .expect("every face vertex resolves to its owner (see validate)");
                    index[q as usize][l as usize]
                })
            })
            .collect();
        Exported {
            mesh: TriMesh { positions, faces },
            face_patch: face_ids.par_iter().map(|&(p, _)| p).collect(),
            vertex_ids,
            face_ids,
        }
    }
}

/// The export with identities: what validation's global checks read.
#[derive(Default)]
pub(super) struct Exported {
    /// The exported mesh.
    pub(super) mesh: TriMesh,
    /// Owner patch of each exported face.
    face_patch: Vec<u32>,
    /// Identity of each exported vertex.
    pub(super) vertex_ids: Vec<Id>,
    /// Identity of each exported face.
    pub(super) face_ids: Vec<Id>,
}

/// The inverse of the permutation `perm` of `0..n` (given in order).
fn invert(perm: impl IndexedParallelIterator<Item = u32>) -> Vec<u32> {
    let inverse: Vec<AtomicU32> = (0..perm.len())
        .into_par_iter()
        .map(|_| AtomicU32::new(0))
        .collect();
    perm.enumerate().for_each(|(i, j)| {
        inverse[j as usize].store(i as u32, Ordering::Relaxed);
    });
    inverse.into_par_iter().map(AtomicU32::into_inner).collect()
}

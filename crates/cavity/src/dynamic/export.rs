//! Export: the dynamic mesh back to an indexed [`TriMesh`], in patch order
//! or in the input's vertex order.

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

use cavity_device::layout::Kind;

use cavity_device::query::Query;

use crate::TriMesh;
use crate::query_result::QueryResult;

use cavity_device::dynamic::layout::input_index_word;

use super::{DynamicMesh, Id, NEW_ELEMENT};

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

    /// The mesh in the input's element order: the input vertices that
    /// remain, in input order (all of them, with their indices, when
    /// nothing was deleted), then the vertices fill-ins added, in patch
    /// order; the faces in the same order ([`DynamicMesh::sources`]), which
    /// is patch order unless the mesh carries face attributes (only then
    /// does it keep the faces' input indices).
    pub fn to_mesh(&self) -> TriMesh {
        self.to_mesh_with_sources().0
    }

    /// [`DynamicMesh::to_mesh`] with the input index of every vertex
    /// ([`NEW_ELEMENT`] for a vertex a fill-in added). In parallel, the
    /// same result for any number of workers: the vertices' element order
    /// is found first, so that each face's corners are resolved to it at
    /// once.
    pub fn to_mesh_with_sources(&self) -> (TriMesh, Vec<u32>) {
        let (owned, first) = self.owned_vertices();
        let vertex_ids = flat_ids(&owned);
        let kept = self.element_order(Kind::Vertex, &vertex_ids);
        // Each vertex's place in element order, by its place in patch
        // order.
        let order = invert(kept.par_iter().map(|&(_, i)| i));
        let index = self.index_rows(&owned, &first, |i| order[i as usize]);
        let positions = kept
            .par_iter()
            .map(|&(_, i)| {
                let (p, v) = vertex_ids[i as usize];
                self.position(p, v)
            })
            .collect();
        let face_ids = self.owned_ids(Kind::Face);
        let faces = self.face_corners(&face_ids, &index);
        let faces = if self.cap.attr_stride(Kind::Face) == 0 {
            // No input indices: element order is patch order.
            faces
        } else {
            self.element_order(Kind::Face, &face_ids)
                .par_iter()
                .map(|&(_, i)| faces[i as usize])
                .collect()
        };
        let sources = kept.par_iter().map(|&(input, _)| input).collect();
        (TriMesh { positions, faces }, sources)
    }

    /// The positions of [`DynamicMesh::to_mesh_with_sources`]'s vertices
    /// and their input indices, without its faces: what an operation that
    /// only moves vertices (smoothing, denoising) reads back. In parallel,
    /// the same result for any number of workers.
    pub fn vertex_positions(&self) -> (Vec<[f32; 3]>, Vec<u32>) {
        self.elements(Kind::Vertex)
            .into_par_iter()
            .map(|((p, v), input)| (self.position(p, v), input))
            .unzip()
    }

    /// The input index of every active owned element of `kind`, in element
    /// order: the order of [`DynamicMesh::to_mesh`]'s vertices and faces,
    /// of [`DynamicMesh::edges`], and of the values of
    /// [`DynamicMesh::attribute`]. Surviving input elements come first, in
    /// input order; [`NEW_ELEMENT`] marks the ones fill-ins added (and
    /// every edge and face of a kind without attributes, which keeps no
    /// input index), in patch order.
    pub fn sources(&self, kind: Kind) -> Vec<u32> {
        let ids = self.owned_ids(kind);
        self.element_order(kind, &ids)
            .into_iter()
            .map(|(input, _)| input)
            .collect()
    }

    /// The patch slot that owns each active owned element of `kind`, in
    /// element order ([`DynamicMesh::sources`]): where an element's
    /// computation runs, for the patch lists of
    /// `rounds::ForEach::for_each_in`.
    pub fn owner_patches(&self, kind: Kind) -> Vec<u32> {
        self.elements(kind)
            .into_par_iter()
            .map(|((p, _), _)| p)
            .collect()
    }

    /// The active owned edges as pairs of [`DynamicMesh::to_mesh`]'s
    /// vertex indices (in the edge's stored direction), in element order
    /// ([`DynamicMesh::sources`]).
    ///
    /// # Panics
    /// When an edge's vertex does not resolve to an active owned vertex (a
    /// mesh that [`DynamicMesh::validate`] rejects).
    pub fn edges(&self) -> Vec<[u32; 2]> {
        // The owned vertices in patch order (sorted by identity), and where
        // each goes in element order.
        let vertex_ids = self.owned_ids(Kind::Vertex);
        let kept = self.element_order(Kind::Vertex, &vertex_ids);
        let order = invert(kept.par_iter().map(|&(_, i)| i));
        let ids = self.owned_ids(Kind::Edge);
        self.element_order(Kind::Edge, &ids)
            .par_iter()
            .map(|&(_, i)| {
                let (p, e) = ids[i as usize];
                let table = self.frozen_table(p, Kind::Vertex);
                self.directed_edge(p, e, false).map(|v| {
                    let owner = self
                        .owner_in(&table, p, Kind::Vertex, v)
                        .expect("every edge vertex resolves to its owner (see validate)");
                    let at = vertex_ids
                        .binary_search(&owner)
                        .expect("owners are exported");
                    order[at]
                })
            })
            .collect()
    }

    /// A query's result in element order ([`DynamicMesh::sources`] of the
    /// source and the target kind) from the export kernel's slot-indexed
    /// arrays (`cavity_device::dynamic::compute::export`): `counts` and
    /// `offsets` per slot of the source kind, `values` the owners' slots of
    /// the target kind.
    pub(crate) fn rows_in_element_order(
        &self,
        query: Query,
        counts: &[u32],
        offsets: &[u32],
        values: &[u32],
    ) -> QueryResult {
        let (source, target) = (query.source(), query.target());
        let sources = self.elements(source);
        let targets = if target == source {
            None
        } else {
            Some(self.elements(target))
        };
        let mut index = vec![u32::MAX; (self.cap.patches * self.cap.of(target)) as usize];
        for (i, &((p, l), _)) in targets.as_ref().unwrap_or(&sources).iter().enumerate() {
            index[(p * self.cap.of(target) + l) as usize] = i as u32;
        }
        let mut result = QueryResult {
            offsets: vec![0],
            values: Vec::new(),
        };
        for &((p, l), _) in &sources {
            let slot = (p * self.cap.of(source) + l) as usize;
            let start = offsets[slot] as usize;
            let row = &values[start..start + counts[slot] as usize];
            result.values.extend(row.iter().map(|&x| index[x as usize]));
            result.offsets.push(result.values.len() as u32);
        }
        result
    }

    /// The active owned elements of `kind` in element order
    /// ([`DynamicMesh::sources`]), with their input indices.
    pub(super) fn elements(&self, kind: Kind) -> Vec<(Id, u32)> {
        let ids = self.owned_ids(kind);
        self.element_order(kind, &ids)
            .into_par_iter()
            .map(|(input, i)| (ids[i as usize], input))
            .collect()
    }

    /// Element order of `ids` (active owned elements of `kind` in patch
    /// order): `(input index, position in ids)`, input elements first by
    /// input index, then the others ([`NEW_ELEMENT`]) in patch order.
    ///
    /// In linear time: each input element's position in `ids` is placed
    /// at its input index, and the places held are kept in order, then the
    /// others follow in patch order (`ids`' own). Where two elements share
    /// an input index (a fill-in's copy), the order is sorted instead,
    /// ties by the position in `ids`.
    fn element_order(&self, kind: Kind, ids: &[Id]) -> Vec<(u32, u32)> {
        let kept: Vec<(u32, u32)> = ids
            .par_iter()
            .enumerate()
            .map(|(i, &(p, l))| (self.input_index(kind, p, l), i as u32))
            .collect();
        if self.cap.attr_stride(kind) == 0 {
            // No input indices: patch order.
            return kept;
        }
        let inputs = self.input_count(kind) as usize;
        // Position in `ids` + 1 at each input index (0: not held).
        let place: Vec<AtomicU32> = (0..inputs)
            .into_par_iter()
            .map(|_| AtomicU32::new(0))
            .collect();
        let shared = kept
            .par_iter()
            .filter(|&&(input, _)| input != NEW_ELEMENT)
            .any(|&(input, i)| place[input as usize].swap(i + 1, Ordering::Relaxed) != 0);
        if shared {
            let mut kept = kept;
            // The position in `ids` makes every key distinct.
            kept.par_sort_unstable_by_key(|&(input, i)| {
                if input == NEW_ELEMENT {
                    (1, i, i)
                } else {
                    (0, input, i)
                }
            });
            return kept;
        }
        let held = place.into_par_iter().enumerate().filter_map(|(input, at)| {
            let at = at.into_inner();
            (at != 0).then(|| (input as u32, at - 1))
        });
        let added = kept
            .par_iter()
            .copied()
            .filter(|&(input, _)| input == NEW_ELEMENT);
        held.chain(added).collect()
    }

    /// The input index of local element `l` of `kind` in patch `p`:
    /// [`NEW_ELEMENT`] for an element a fill-in added, and for every edge
    /// and face of a kind without attribute words.
    pub(super) fn input_index(&self, kind: Kind, p: u32, l: u32) -> u32 {
        if self.cap.attr_stride(kind) == 0 {
            return NEW_ELEMENT;
        }
        let inputs = self.input_count(kind);
        let at = self.cap.attr_index(kind, (p, l), input_index_word(kind));
        let input = self.attr_words(kind)[at as usize];
        if input < inputs { input } else { NEW_ELEMENT }
    }

    /// The active owned elements of `kind` in patch order.
    fn owned_ids(&self, kind: Kind) -> Vec<Id> {
        (0..self.num_patches)
            .into_par_iter()
            .flat_map_iter(|p| self.owned_active(p, kind).map(move |l| (p, l)))
            .collect()
    }

    /// The export with the identities of its vertices and faces, built
    /// patch by patch in parallel (the same for any number of workers).
    pub(super) fn collect(&self) -> Exported {
        let (owned, first) = self.owned_vertices();
        let index = self.index_rows(&owned, &first, |i| i);
        let vertex_ids = flat_ids(&owned);
        let positions = vertex_ids
            .par_iter()
            .map(|&(p, v)| self.position(p, v))
            .collect();
        let face_ids = self.owned_ids(Kind::Face);
        let faces = self.face_corners(&face_ids, &index);
        Exported {
            mesh: TriMesh { positions, faces },
            face_patch: face_ids.par_iter().map(|&(p, _)| p).collect(),
            vertex_ids,
            face_ids,
        }
    }
}

impl DynamicMesh {
    /// The active owned vertices of each patch (local indices, in order)
    /// and each patch's first place among them all (patch order).
    fn owned_vertices(&self) -> (Vec<Vec<u32>>, Vec<u32>) {
        let owned: Vec<Vec<u32>> = (0..self.num_patches)
            .into_par_iter()
            .map(|p| self.owned_active(p, Kind::Vertex).collect())
            .collect();
        let mut first = Vec::with_capacity(owned.len());
        let mut next = 0u32;
        for row in &owned {
            first.push(next);
            next += row.len() as u32;
        }
        (owned, first)
    }

    /// Per patch, every local vertex's index: `place(i)` of its place `i`
    /// in patch order among the active owned vertices (`owned`, `first`:
    /// [`DynamicMesh::owned_vertices`]); `u32::MAX` where the local vertex
    /// is not owned and active.
    fn index_rows(
        &self,
        owned: &[Vec<u32>],
        first: &[u32],
        place: impl Fn(u32) -> u32 + Sync,
    ) -> Vec<Vec<u32>> {
        owned
            .par_iter()
            .zip(first)
            .enumerate()
            .map(|(p, (owned, &first))| {
                let mut row = vec![u32::MAX; self.count(p as u32, Kind::Vertex) as usize];
                for (k, &v) in owned.iter().enumerate() {
                    row[v as usize] = place(first + k as u32);
                }
                row
            })
            .collect()
    }

    /// The corners of the faces `face_ids`, each resolved to its owner and
    /// given that owner's index in `index` ([`DynamicMesh::index_rows`]).
    ///
    /// # Panics
    /// When a face's vertex does not resolve to an active owned vertex (a
    /// mesh that [`DynamicMesh::validate`] rejects).
    fn face_corners(&self, face_ids: &[Id], index: &[Vec<u32>]) -> Vec<[u32; 3]> {
        face_ids
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
            .collect()
    }
}

/// The identities of `owned` (each patch's active owned vertices), in
/// patch order.
fn flat_ids(owned: &[Vec<u32>]) -> Vec<Id> {
    owned
        .par_iter()
        .enumerate()
        .flat_map_iter(|(p, owned)| owned.iter().map(move |&v| (p as u32, v)))
        .collect()
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

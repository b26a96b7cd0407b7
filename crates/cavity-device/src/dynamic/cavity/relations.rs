//! The relations of the working copy in shared memory: cached vertex
//! positions, edge → faces (EF) and vertex → edges (VE).

use crate::block::{Block, Shared};
use crate::layout::Kind;

use super::super::patch::{DynMesh, PatchCopy};
use super::Work;

/// Reads the positions of the working copy's active vertices into
/// [`Work::positions`] (a ribbon vertex's from its owner), so that
/// predicates and fill-ins read shared memory instead of resolving the
/// owner and loading global memory at every use. Call after loading the
/// patch and after every expansion (which adds local vertices); the
/// positions a processing sees do not change under it (another block
/// moves only the vertices it deletes, and deleting one of ours needs our
/// lock).
#[inline(always)]
pub fn cache_positions<B: Block>(block: &B, mesh: &DynMesh, copy: &PatchCopy, work: &Work) {
    block.for_each(copy.count(Kind::Vertex), |v| {
        if copy.is_active(Kind::Vertex, v) {
            let owner = copy.owner_or_self(block, Kind::Vertex, v);
            for i in 0..3 {
                let at = mesh.attr_at(Kind::Vertex, owner, i);
                work.positions.set(3 * v + i, mesh.vertex_attrs.load(at));
            }
        }
    });
    block.sync();
}

/// Builds EF of the active faces: `ef_count[e]` faces per edge, the first
/// two of them at `ef[2e..2e + 2]`.
#[inline(always)]
pub fn build_edge_faces<B: Block>(
    block: &B,
    copy: &PatchCopy,
    ef_count: Shared<u32>,
    ef: Shared<u16>,
) {
    let ne = copy.count(Kind::Edge);
    let nf = copy.count(Kind::Face);
    block.for_each(ne, |e| ef_count.set(e, 0));
    block.sync();
    block.for_each(nf, |f| {
        if copy.is_active(Kind::Face, f) {
            for i in 0..3 {
                let (e, _) = copy.face_edge(f, i);
                let k = block.shared_fetch_add(ef_count, e, 1);
                if k < 2 {
                    ef.set(2 * e + k, f as u16);
                }
            }
        }
    });
    block.sync();
}

/// Builds the relations of the working copy that the cavity stage reads:
/// EF ([`build_edge_faces`] into `work.ef_count` and `work.ef`) and VE
/// ([`build_vertex_edges`]). Returns after a barrier.
#[inline(always)]
pub fn build_relations<B: Block>(block: &B, copy: &PatchCopy, work: &Work) {
    build_edge_faces(block, copy, work.ef_count, work.ef);
    build_vertex_edges(block, copy, work);
}

/// Builds vertex → incident active edges (a block-cooperative transpose of
/// EV: count, scan, scatter).
#[inline(always)]
pub fn build_vertex_edges<B: Block>(block: &B, copy: &PatchCopy, work: &Work) {
    let nv = copy.count(Kind::Vertex);
    let ne = copy.count(Kind::Edge);
    block.for_each(nv + 1, |v| work.ve_offsets.set(v, 0));
    block.sync();
    block.for_each(ne, |e| {
        if copy.is_active(Kind::Edge, e) {
            for v in copy.edge_vertices(e) {
                block.shared_fetch_add(work.ve_offsets, v, 1);
            }
        }
    });
    block.sync();
    block.scan(work.ve_offsets, nv + 1, work.scan, false);
    block.sync();
    block.for_each(ne, |e| {
        if copy.is_active(Kind::Edge, e) {
            for v in copy.edge_vertices(e) {
                // Each placement advances the row's start: afterwards
                // `ve_offsets[v]` is the end of row `v` (the start of
                // `v + 1`), and row `v` begins at `ve_offsets[v - 1]`.
                let at = block.shared_fetch_add(work.ve_offsets, v, 1);
                work.ve.set(at, e as u16);
            }
        }
    });
    block.sync();
}

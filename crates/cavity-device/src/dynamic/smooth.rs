//! Tangential smoothing of the dynamic mesh (Botsch and Kobbelt 2004,
//! section 4; the dynamic paper's remeshing, section 6.3): every owned
//! vertex moves towards the area-weighted centroid of its one-ring, along
//! the tangent plane (the move's component along the vertex normal is
//! dropped). Jacobi-style in two kernels: [`relax`] writes the new
//! positions to a scratch array, [`apply`] copies them over the positions,
//! so every vertex sees its neighbours' old positions. Boundary vertices
//! (an edge with one face, or more than two) and vertices on a feature
//! edge stay.

use crate::block::{Block, SharedArena};
use crate::layout::Kind;
use crate::operations::{dot, norm, normal, parameters};

use super::cavity::{self, Ctx, Work};
use super::global::GlobalU32;
use super::layout::Capacity;
use super::patch::{DynMesh, PatchCopy};

parameters! {
    /// Parameters of one smoothing step.
    pub struct Smoothing {
        /// Fraction of the tangential move taken (1: all the way to the
        /// centroid's projection).
        pub step: f32,
        /// Vertices on an edge whose dihedral-angle cosine is below this
        /// stay (-1 or less: no features).
        pub feature_cos: f32,
    }
}

fn windows(arena: &mut SharedArena, cap: &Capacity, threads: u32) -> (Work, PatchCopy) {
    let work = Work::alloc(arena, cap, Kind::Vertex, threads);
    let copy = PatchCopy::alloc(arena, *cap, 0);
    (work, copy)
}

/// Shared memory of [`relax`] for capacity `cap` and `threads` threads per
/// block, in bytes.
pub fn shared_bytes(cap: &Capacity, threads: u32) -> usize {
    let mut arena = SharedArena::measuring();
    windows(&mut arena, cap, threads);
    arena.used()
}

/// First kernel, one block per patch `p`: the new position of every owned
/// vertex of `p` into `scratch[3 (p × V + v)..]` (`f32` bits; `V` =
/// `cap.vertices`), its old one where it stays.
#[inline(always)]
pub fn relax<B: Block>(
    block: &B,
    arena: &mut SharedArena,
    mesh: &DynMesh,
    p: u32,
    scratch: GlobalU32,
    params: &Smoothing,
) {
    for_each_owned_vertex(block, arena, mesh, p, |ctx, v| {
        let at = ctx.position(v);
        let moved = relaxed(ctx, v, at, params).unwrap_or(at);
        for (k, x) in moved.iter().enumerate() {
            scratch.store(3 * (p * mesh.cap.vertices + v) + k as u32, x.to_bits());
        }
    });
}

/// Loads patch `p` into shared memory with its edge-face and vertex-edge
/// relations and calls `f` with the context for every active vertex the
/// patch owns (one thread per vertex). Shared memory as for
/// [`shared_bytes`].
#[inline(always)]
pub fn for_each_owned_vertex<B: Block>(
    block: &B,
    arena: &mut SharedArena,
    mesh: &DynMesh,
    p: u32,
    f: impl Fn(&Ctx<'_, B>, u32),
) {
    let (work, mut copy) = windows(arena, &mesh.cap, block.block_dim());
    arena.check();
    copy.p = p;
    copy.load(block, mesh);
    block.sync();
    cavity::build_edge_faces(block, &copy, work.ef_count, work.ef);
    cavity::build_vertex_edges(block, &copy, &work);
    let ctx = Ctx {
        block,
        mesh,
        copy: &copy,
        work: &work,
    };
    block.for_each(copy.count(Kind::Vertex), |v| {
        if copy.is_owned(Kind::Vertex, v) && copy.is_active(Kind::Vertex, v) {
            f(&ctx, v);
        }
    });
}

/// The smoothed position of owned vertex `v` at `at`; `None` when it stays.
fn relaxed<B: Block>(
    ctx: &Ctx<'_, B>,
    v: u32,
    at: [f32; 3],
    params: &Smoothing,
) -> Option<[f32; 3]> {
    // Each face around `v` is met once per edge of `v` it holds (twice):
    // the weights cancel.
    let mut centre = [0.0f32; 3];
    let mut weight = 0.0f32;
    let mut n = [0.0f32; 3];
    for e in ctx.vertex_edges(v) {
        let (count, faces) = ctx.edge_faces(e);
        if count != 2 {
            return None;
        }
        let [f0, f1] = faces;
        let normals = [f0, f1].map(|f| {
            let [a, b, c] = ctx.face_vertices(f).map(|x| ctx.position(x));
            (normal(a, b, c), [a, b, c])
        });
        let l = norm(normals[0].0) * norm(normals[1].0);
        if l <= 0.0 || dot(normals[0].0, normals[1].0) < params.feature_cos * l {
            return None;
        }
        for (fnormal, [a, b, c]) in normals {
            let area = norm(fnormal);
            for k in 0..3 {
                centre[k] += area * (a[k] + b[k] + c[k]) / 3.0;
                n[k] += fnormal[k];
            }
            weight += area;
        }
    }
    let ln = norm(n);
    if weight <= 0.0 || ln <= 0.0 {
        return None;
    }
    let d = [0, 1, 2].map(|k| centre[k] / weight - at[k]);
    let u = [0, 1, 2].map(|k| n[k] / ln);
    let along = dot(d, u);
    Some([0, 1, 2].map(|k| at[k] + params.step * (d[k] - along * u[k])))
}

/// Second kernel, one block per patch `p`: copies the scratch positions of
/// `p`'s owned vertices over their positions.
#[inline(always)]
pub fn apply<B: Block>(block: &B, mesh: &DynMesh, p: u32, scratch: GlobalU32) {
    let cap = mesh.cap;
    block.for_each(mesh.count(p, Kind::Vertex), |v| {
        if mesh.bit(p, Kind::Vertex, false, v) && mesh.bit(p, Kind::Vertex, true, v) {
            for k in 0..3 {
                let x = scratch.load(3 * (p * cap.vertices + v) + k);
                mesh.vertex_attrs
                    .store((p * cap.vertices + v) * cap.vertex_attrs + k, x);
            }
        }
    });
}

//! Smoothing of the dynamic mesh: every owned vertex moves towards the
//! area-weighted centroid of its one-ring, keeping only part of the move:
//!
//! - tangential smoothing (Botsch and Kobbelt 2004, section 4; the dynamic
//!   paper's remeshing, section 6.3): the move's component along the
//!   vertex normal is dropped;
//! - null-space smoothing (Jiao 2007; Brochu and Bridson 2009, section 4,
//!   as El Topo; the dynamic paper's surface tracking, section 6.4): the
//!   move is projected on the null space of the vertex's normal quadric
//!   `Σ area · n nᵀ` over its faces (the eigenvectors whose eigenvalues are
//!   below `rank_ratio` times the largest), so a vertex on a smooth patch
//!   moves in its tangent plane, one on a crease along the crease, and a
//!   corner stays.
//!
//! Jacobi-style in two kernels: [`relax`] writes the new positions to a
//! scratch array, [`apply`] copies them over the positions, so every vertex
//! sees its neighbours' old positions. Vertices on a feature edge stay, so
//! do those whose faces fold onto each other;
//! boundary vertices (an edge with one face, or more than two) stay, or
//! slide along the boundary polyline (see [`Smoothing::boundary_cos`]).

use crate::block::{Block, SharedArena};
use crate::eigen::symmetric_eigen;
use crate::layout::Kind;
use crate::operations::{dot, norm, normal, parameters};
use crate::remesh::BoundaryStar;

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
        /// 0: tangential smoothing; above 0: null-space smoothing, the
        /// null space being spanned by the quadric's eigenvectors whose
        /// eigenvalues are below this fraction of the largest (El Topo:
        /// 0.03).
        pub rank_ratio: f32,
        /// A plain boundary vertex (two boundary edges, no non-manifold
        /// one) whose turning angle has a cosine of at least this moves
        /// along the boundary polyline, towards the midpoint of its two
        /// boundary neighbours, as CGAL's `isotropic_remeshing` relaxes
        /// its border; other boundary vertices (corners) stay. Above 1:
        /// every boundary vertex stays.
        pub boundary_cos: f32,
    }
}

fn windows(arena: &mut SharedArena, cap: &Capacity, threads: u32) -> (Work, PatchCopy) {
    let work = Work::alloc_relations(arena, cap, threads);
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
    cavity::build_relations(block, &copy, &work);
    cavity::cache_positions(block, mesh, &copy, &work);
    let ctx = Ctx::new(block, mesh, &copy, &work);
    block.for_each(copy.count(Kind::Vertex), |v| {
        if copy.is_owned(Kind::Vertex, v) && copy.is_active(Kind::Vertex, v) {
            f(&ctx, v);
        }
    });
}

/// The share of the summed lengths of the face normals around a vertex
/// below which their sum means the faces fold onto each other.
const FOLDED: f32 = 0.5;

/// The smoothed position of owned vertex `v` at `at`; `None` when it stays.
fn relaxed<B: Block>(
    ctx: &Ctx<'_, B>,
    v: u32,
    at: [f32; 3],
    params: &Smoothing,
) -> Option<[f32; 3]> {
    let star = BoundaryStar::of(ctx, v);
    if star.on_boundary() {
        return star
            .movable(ctx, at, params.boundary_cos)
            .then(|| along_boundary(ctx, &star, at, params.step))
            .flatten();
    }
    // Each face around `v` is met once per edge of `v` it holds (twice):
    // the weights cancel.
    let mut centre = [0.0f32; 3];
    let mut weight = 0.0f32;
    let mut n = [0.0f32; 3];
    let mut quadric = [[0.0f32; 3]; 3];
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
                for j in 0..3 {
                    // area · n̂ n̂ᵀ = n nᵀ / |n| (up to the common factor 2).
                    quadric[k][j] += fnormal[k] * fnormal[j] / area;
                }
            }
            weight += area;
        }
    }
    // Faces around `v` that fold onto each other (their normals sum to
    // less than half their length) leave it without a tangent plane: it
    // stays. Two folded faces whose other vertices lie on one line would
    // otherwise take it almost onto that line, making caps no repair could
    // take (a generated dirty mesh; issue 24).
    let ln = norm(n);
    if weight <= 0.0 || ln <= FOLDED * weight {
        return None;
    }
    let d = [0, 1, 2].map(|k| centre[k] / weight - at[k]);
    let kept = if params.rank_ratio > 0.0 {
        null_space_part(&quadric, d, params.rank_ratio)
    } else {
        let u = [0, 1, 2].map(|k| n[k] / ln);
        let along = dot(d, u);
        [0, 1, 2].map(|k| d[k] - along * u[k])
    };
    Some([0, 1, 2].map(|k| at[k] + params.step * kept[k]))
}

/// Where boundary vertex `v` at `at`, with boundary neighbours
/// `star.ends`, moves: `step` times the component of its move to their
/// midpoint along the chord between them, taken along the boundary edge on
/// that side, so that it stays on the old polyline; at most a quarter of
/// that edge, so that two neighbours moving towards each other in the same
/// step never meet.
fn along_boundary<B: Block>(
    ctx: &Ctx<'_, B>,
    star: &BoundaryStar,
    at: [f32; 3],
    step: f32,
) -> Option<[f32; 3]> {
    let [u, w] = star.ends.map(|x| ctx.position(x));
    let chord = [0, 1, 2].map(|k| w[k] - u[k]);
    let lc = norm(chord);
    if lc <= 0.0 {
        return None;
    }
    let d = [0, 1, 2].map(|k| 0.5 * (u[k] + w[k]) - at[k]);
    let s = step * dot(d, chord) / lc;
    let to = if s >= 0.0 { w } else { u };
    let side = [0, 1, 2].map(|k| to[k] - at[k]);
    let ls = norm(side);
    if ls <= 0.0 {
        return None;
    }
    let t = (s.abs() / ls).min(0.25);
    Some([0, 1, 2].map(|k| at[k] + t * side[k]))
}

/// The part of `d` in the null space of `quadric`: its projection on the
/// eigenvectors whose eigenvalues are below `ratio` times the largest.
fn null_space_part(quadric: &[[f32; 3]; 3], d: [f32; 3], ratio: f32) -> [f32; 3] {
    let (values, vectors) = symmetric_eigen(*quadric);
    let largest = values[0].max(values[1]).max(values[2]);
    let mut kept = [0.0f32; 3];
    for (value, u) in values.into_iter().zip(vectors) {
        if value < ratio * largest {
            let along = dot(d, u);
            for k in 0..3 {
                kept[k] += along * u[k];
            }
        }
    }
    kept
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

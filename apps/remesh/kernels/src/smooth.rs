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
//! Jacobi-style, in three patch computations
//! (`cavity_device::dynamic::patch_computation`) over one scratch array
//! ([`scratch_layout`]): [`SmoothRings`] stores the one-ring of every
//! owned vertex once (the connectivity does not change while smoothing)
//! with the positions; each [`SmoothStep`] reads the positions of one
//! buffer and writes the new ones to the other, so every vertex sees its
//! neighbours' old positions; [`SmoothApply`] copies the last ones over the
//! mesh's positions. The host runs them with `cavity_remesh::smooth`. Vertices on a feature edge stay, so
//! do those whose faces fold onto each other;
//! boundary vertices (an edge with one face, or more than two) stay, or
//! slide along the boundary polyline (see [`Smoothing::boundary_cos`]).

use cavity_device::block::{Block, SharedArena};
use cavity_device::dynamic::layout::Capacity;
use cavity_device::dynamic::patch::DynMesh;
use cavity_device::dynamic::patch_computation::{
    PatchComputation, Scratch, for_each_owned_vertex, owned_vertex_shared_bytes,
};
use cavity_device::geometry::{dot, norm, normal};
use cavity_device::layout::Kind;
use cavity_device::parameters;

use crate::boundary::{BoundaryStar, turns_gently};
use crate::eigen::symmetric_eigen;

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

/// Words of a vertex slot's ring header: the vertex's kind
/// ([`STAYS`], [`ALONG_BOUNDARY`] or [`INTERIOR`]) in the low two bits and
/// its number of entries above them, then the scratch index of its first
/// entry's word.
pub const HEADER_WORDS: u32 = 2;
/// Words of one ring entry.
pub const ENTRY_WORDS: u32 = 3;
/// The vertex stays in every step (a corner, a non-manifold or isolated
/// vertex; no entries).
pub const STAYS: u32 = 0;
/// A plain boundary vertex that may slide along the boundary polyline: one
/// entry, the slots of its two boundary neighbours.
pub const ALONG_BOUNDARY: u32 = 1;
/// A vertex whose every edge has two faces: one entry per edge, the slot
/// of its other end `x`, then for each of its two faces the slot of the
/// face's third vertex `y` with bit 31 set when the face runs `v, y, x`
/// (clear: `v, x, y`).
pub const INTERIOR: u32 = 2;
const FLIPPED: u32 = 1 << 31;

/// Ring entry words per patch slot: one entry per face corner at most
/// (an interior vertex has as many edges as faces, a boundary one takes one
/// entry and has a face).
pub fn entry_words(cap: &Capacity) -> u32 {
    ENTRY_WORDS * 3 * cap.faces
}

/// Word offsets, in one scratch array, of the smoothing's buffers for
/// capacity `cap`: the two position buffers (`3 × cap.patches ×
/// cap.vertices` words each, [`SmoothStep`] reads one and writes the other),
/// the ring headers ([`HEADER_WORDS`] per vertex slot), the ring
/// entries ([`entry_words`] per patch slot), then the array's length.
pub fn scratch_layout(cap: &Capacity) -> [u64; 5] {
    let slots = u64::from(cap.patches) * u64::from(cap.vertices);
    let positions = 3 * slots;
    let headers = 2 * positions;
    let entries = headers + u64::from(HEADER_WORDS) * slots;
    let end = entries + u64::from(cap.patches) * u64::from(entry_words(cap));
    [0, positions, headers, entries, end]
}

/// The smoothing's first computation: one block per patch stores the
/// rings and positions of the patch's owned active vertices in the
/// scratch ([`scratch_layout`]): for vertex slot `g = p × cap.vertices +
/// v`, its header's [`HEADER_WORDS`] words at `headers + HEADER_WORDS ×
/// g`, patch `p`'s entries from `entries + p × entry_words(cap)`, its
/// position's `f32` bits at `3 × g` (the first position buffer). Every
/// vertex a ring names is a slot of its owner, where the steps read its
/// position.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    not(target_arch = "nvptx64"),
    derive(bytemuck::Pod, bytemuck::Zeroable)
)]
pub struct SmoothRings {
    /// The smoothing.
    pub params: Smoothing,
}

impl PatchComputation for SmoothRings {
    fn scratch_words(&self, cap: &Capacity) -> u64 {
        scratch_layout(cap)[4]
    }

    fn shared_bytes(&self, cap: &Capacity, threads: u32) -> usize {
        owned_vertex_shared_bytes(cap, threads, 1)
    }

    #[inline(always)]
    fn run<B: Block>(
        &self,
        block: &B,
        arena: &mut SharedArena,
        mesh: &DynMesh,
        p: u32,
        scratch: &Scratch,
    ) {
        let cursor = arena.alloc::<u32>(1);
        if block.thread_idx() == 0 {
            cursor.set(0, 0);
        }
        let cap = mesh.cap;
        let [_, _, headers, entries, _] = scratch_layout(&cap).map(|w| w as u32);
        let base = entries + p * entry_words(&cap);
        let room = entry_words(&cap) / ENTRY_WORDS;
        let params = &self.params;
        // The loading's barrier orders the cursor's reset before its use.
        for_each_owned_vertex(block, arena, mesh, p, |ctx, v| {
            let slot = |x: u32| {
                let (q, l) = ctx.copy.owner_or_self(block, Kind::Vertex, x);
                q * cap.vertices + l
            };
            let g = p * cap.vertices + v;
            for (k, x) in ctx.position(v).iter().enumerate() {
                scratch.set(3 * g + k as u32, x.to_bits());
            }
            let star = BoundaryStar::of(ctx, v);
            let (kind, count) = if !star.on_boundary() {
                (INTERIOR, ctx.vertex_edges(v).count() as u32)
            } else if star.edges == 2 && !star.non_manifold && params.boundary_cos <= 1.0 {
                (ALONG_BOUNDARY, 1)
            } else {
                (STAYS, 0)
            };
            let first = block.shared_fetch_add(cursor, 0, count);
            // At most `room` entries a patch (`entry_words`); a vertex past
            // it would stay rather than write out of its patch's entries.
            let (kind, count) = if first + count <= room {
                (kind, count)
            } else {
                (STAYS, 0)
            };
            let at = base + ENTRY_WORDS * first;
            scratch.set(headers + HEADER_WORDS * g, kind | count << 2);
            scratch.set(headers + HEADER_WORDS * g + 1, at);
            match kind {
                ALONG_BOUNDARY => {
                    scratch.set(at, slot(star.ends[0]));
                    scratch.set(at + 1, slot(star.ends[1]));
                }
                INTERIOR => {
                    for (i, e) in ctx.vertex_edges(v).enumerate() {
                        let w = at + ENTRY_WORDS * i as u32;
                        let [a, b] = ctx.edge_vertices(e);
                        let x = if a == v { b } else { a };
                        scratch.set(w, slot(x));
                        let (_, faces) = ctx.edge_faces(e);
                        for (j, f) in faces.into_iter().enumerate() {
                            let [c0, c1, c2] = ctx.face_vertices(f);
                            // The face from `v` on: `v, next, last`.
                            let (next, last) = if c0 == v {
                                (c1, c2)
                            } else if c1 == v {
                                (c2, c0)
                            } else {
                                (c0, c1)
                            };
                            let third = if next == x {
                                slot(last)
                            } else {
                                slot(next) | FLIPPED
                            };
                            scratch.set(w + 1 + j as u32, third);
                        }
                    }
                }
                _ => {}
            }
        });
    }
}

/// A smoothing step, after [`SmoothRings`]: one block per patch moves its
/// owned active vertices from the positions of buffer `from` (0 or 1 of
/// [`scratch_layout`]) into the other buffer (the old position where a
/// vertex stays). Jacobi-style: every vertex sees its neighbours'
/// positions of the step before.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    not(target_arch = "nvptx64"),
    derive(bytemuck::Pod, bytemuck::Zeroable)
)]
pub struct SmoothStep {
    /// The smoothing.
    pub params: Smoothing,
    /// The position buffer read (0 or 1); the other is written.
    pub from: u32,
}

impl PatchComputation for SmoothStep {
    fn scratch_words(&self, cap: &Capacity) -> u64 {
        scratch_layout(cap)[4]
    }

    #[inline(always)]
    fn run<B: Block>(
        &self,
        block: &B,
        _: &mut SharedArena,
        mesh: &DynMesh,
        p: u32,
        scratch: &Scratch,
    ) {
        let cap = mesh.cap;
        let [a, b, headers, _, _] = scratch_layout(&cap).map(|w| w as u32);
        let (from, to) = if self.from == 0 { (a, b) } else { (b, a) };
        // SAFETY (for every `get_unshared` below): a step writes only the
        // `to` buffer; the rings and the `from` buffer are only read.
        let read = |i: u32| unsafe { scratch.get_unshared(i) };
        let position = |g: u32| [0, 1, 2].map(|k| f32::from_bits(read(from + 3 * g + k)));
        block.for_each(mesh.count(p, Kind::Vertex), |v| {
            if !mesh.owns_active(p, Kind::Vertex, v) {
                return;
            }
            let g = p * cap.vertices + v;
            let at = position(g);
            let header = read(headers + HEADER_WORDS * g);
            let first = read(headers + HEADER_WORDS * g + 1);
            let entry = |i: u32, w: u32| read(first + ENTRY_WORDS * i + w);
            let moved = match header & 3 {
                ALONG_BOUNDARY => {
                    let [u, w] = [entry(0, 0), entry(0, 1)].map(position);
                    turns_gently(at, u, w, self.params.boundary_cos)
                        .then(|| along_boundary(u, w, at, self.params.step))
                        .flatten()
                }
                INTERIOR => relaxed(
                    at,
                    header >> 2,
                    |i| {
                        let x = position(entry(i, 0));
                        [1, 2].map(|j| {
                            let third = entry(i, j);
                            let y = position(third & !FLIPPED);
                            if third & FLIPPED == 0 {
                                [at, x, y]
                            } else {
                                [at, y, x]
                            }
                        })
                    },
                    &self.params,
                ),
                _ => None,
            };
            for (k, x) in moved.unwrap_or(at).iter().enumerate() {
                scratch.set(to + 3 * g + k as u32, x.to_bits());
            }
        });
    }
}

/// The share of the summed lengths of the face normals around a vertex
/// below which their sum means the faces fold onto each other.
const FOLDED: f32 = 0.5;

/// The smoothed position of an interior vertex at `at` with `edges` edges,
/// edge `i`'s two faces being `faces(i)` (each from the vertex on, in its
/// orientation); `None` when it stays.
fn relaxed(
    at: [f32; 3],
    edges: u32,
    faces: impl Fn(u32) -> [[[f32; 3]; 3]; 2],
    params: &Smoothing,
) -> Option<[f32; 3]> {
    // Each face around `v` is met once per edge of `v` it holds (twice):
    // the weights cancel.
    let mut centre = [0.0f32; 3];
    let mut weight = 0.0f32;
    let mut n = [0.0f32; 3];
    let mut quadric = [[0.0f32; 3]; 3];
    for i in 0..edges {
        let normals = faces(i).map(|[a, b, c]| (normal(a, b, c), [a, b, c]));
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
            if params.rank_ratio > 0.0 {
                for (k, row) in quadric.iter_mut().enumerate() {
                    for (j, q) in row.iter_mut().enumerate() {
                        // area · n̂ n̂ᵀ = n nᵀ / |n| (up to the common factor 2).
                        *q += fnormal[k] * fnormal[j] / area;
                    }
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

/// Where a boundary vertex at `at`, with boundary neighbours at `u` and
/// `w`, moves: `step` times the component of its move to their midpoint
/// along the chord between them, taken along the boundary edge on that
/// side, so that it stays on the old polyline; at most a quarter of that
/// edge, so that two neighbours moving towards each other in the same step
/// never meet.
fn along_boundary(u: [f32; 3], w: [f32; 3], at: [f32; 3], step: f32) -> Option<[f32; 3]> {
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

/// The smoothing's last computation: one block per patch copies the
/// positions of buffer `from` (0 or 1 of [`scratch_layout`], the last
/// step's output) over its owned active vertices' positions.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    not(target_arch = "nvptx64"),
    derive(bytemuck::Pod, bytemuck::Zeroable)
)]
pub struct SmoothApply {
    /// The position buffer copied (0 or 1).
    pub from: u32,
}

impl PatchComputation for SmoothApply {
    fn scratch_words(&self, cap: &Capacity) -> u64 {
        scratch_layout(cap)[4]
    }

    #[inline(always)]
    fn run<B: Block>(
        &self,
        block: &B,
        _: &mut SharedArena,
        mesh: &DynMesh,
        p: u32,
        scratch: &Scratch,
    ) {
        let cap = mesh.cap;
        let from = scratch_layout(&cap)[self.from.min(1) as usize] as u32;
        block.for_each(mesh.count(p, Kind::Vertex), |v| {
            if mesh.owns_active(p, Kind::Vertex, v) {
                for k in 0..3 {
                    let x = scratch.get(from + 3 * (p * cap.vertices + v) + k);
                    mesh.vertex_attrs
                        .store(mesh.attr_at(Kind::Vertex, (p, v), k), x);
                }
            }
        });
    }
}

cavity_device::patch_kernels!(SmoothRings, SmoothStep, SmoothApply);

//! What the remeshing's cavities judge an edge and its faces by: features
//! (dihedral angles), valences and their stored form, folds, zero-area
//! faces, caps and small angles.

use cavity_device::attribute::Attr;
use cavity_device::block::Block;
use cavity_device::dynamic::cavity::Ctx;
use cavity_device::geometry::{dot, norm, normal, smallest_angle_sin, sub};
use cavity_device::layout::Kind;

/// Sine of 10°: remeshing operations create no face whose smallest angle
/// is below both this and the smallest angle of the faces they replace.
pub const SLIVER_SIN: f32 = 0.173_648_18;

/// Cosine of the dihedral angle at interior edge `e` (1 when flat), from
/// the normals of its two faces; `None` when one is degenerate.
pub fn dihedral_cos<B: Block>(ctx: &Ctx<'_, B>, e: u32) -> Option<f32> {
    let (_, [f0, f1]) = ctx.edge_faces(e);
    let n = [f0, f1].map(|f| {
        let [a, b, c] = ctx.face_vertices(f).map(|v| ctx.position(v));
        normal(a, b, c)
    });
    let l = norm(n[0]) * norm(n[1]);
    (l > 0.0).then(|| dot(n[0], n[1]) / l)
}

/// Whether interior edge `e` is smooth enough to change (not a feature).
pub fn smooth<B: Block>(ctx: &Ctx<'_, B>, e: u32, feature_cos: f32) -> bool {
    dihedral_cos(ctx, e).is_some_and(|c| c >= feature_cos)
}

/// Whether edge `g` has two faces here and is a feature (never when
/// `feature_cos` is -1 or less: no features).
pub(crate) fn is_feature<B: Block>(ctx: &Ctx<'_, B>, g: u32, feature_cos: f32) -> bool {
    feature_cos > -1.0 && ctx.edge_faces(g).0 == 2 && !smooth(ctx, g, feature_cos)
}

/// The feature edges at vertex `v` (exact when the patch owns `v`; a
/// lower bound at a ribbon vertex).
pub(crate) fn feature_edges<B: Block>(ctx: &Ctx<'_, B>, v: u32, feature_cos: f32) -> u32 {
    ctx.vertex_edges(v)
        .filter(|&g| is_feature(ctx, g, feature_cos))
        .count() as u32
}

/// Valence of `v` and its target: 4 on the mesh boundary (an edge with one
/// face), 6 inside (exact when the patch owns `v`).
pub fn valence<B: Block>(ctx: &Ctx<'_, B>, v: u32) -> (i32, i32) {
    let mut n = 0;
    let mut boundary = false;
    for e in ctx.vertex_edges(v) {
        n += 1;
        boundary |= ctx.edge_faces(e).0 == 1;
    }
    (n, if boundary { 4 } else { 6 })
}

/// The stored form of a valence: the edge count in the low 16 bits, bit
/// 16 on the mesh boundary (target 4), bit 31 set; 0 (a new vertex's
/// value) is unknown.
pub fn encode((n, target): (i32, i32)) -> u32 {
    (n as u32 & 0xffff) | ((target == 4) as u32) << 16 | 1 << 31
}

/// The valence and target a stored value holds (`None` when unknown).
pub fn decode(x: u32) -> Option<(i32, i32)> {
    (x >> 31 != 0).then_some(((x & 0xffff) as i32, if x & 1 << 16 != 0 { 4 } else { 6 }))
}

/// The valence and target of vertex `v`: counted when the patch owns it,
/// else the stored value of its owner (`None` when not stored).
#[inline(always)]
pub(crate) fn known_valence<B: Block>(
    ctx: &Ctx<'_, B>,
    v: u32,
    stored: &Attr<u32, 1>,
) -> Option<(i32, i32)> {
    if ctx.is_owned(Kind::Vertex, v) {
        return Some(valence(ctx, v));
    }
    decode(ctx.attr(stored, v)[0])
}

/// Whether flipping `ab` to `cd` may lower `Σ (valence - target)²` over
/// the four vertices (the flip takes an edge from `a` and `b` and gives
/// one to `c` and `d`; squared, as in Botsch's PMP library, so that a
/// vertex far from its target gives an edge away even to neighbours at
/// theirs: with the plain distance a vertex of valence 11 among vertices of
/// valence 6 kept all of its edges). Exact when the patch owns all four
/// vertices (so in the fill-in); before the patch expands for the flip,
/// with the stored valence of a vertex it does not own (exact unless its
/// owner flipped since: the fill-in decides on the real ones). Without a
/// stored valence, the valence `n` seen here may be short and the target
/// unknown, so the change is bounded hopefully: a vertex that gains an
/// edge adds at least `2 (n - 6) + 1`, one that loses an edge may gain
/// any amount.
#[inline(always)]
pub(crate) fn may_improve<B: Block>(ctx: &Ctx<'_, B>, q: [u32; 4], stored: &Attr<u32, 1>) -> bool {
    /// Stands for an unbounded improvement.
    const ANY: i32 = -1 << 16;
    let change = [-1, -1, 1, 1];
    let mut sum = 0;
    for (&v, dv) in q.iter().zip(change) {
        sum += match known_valence(ctx, v, stored) {
            Some((n, target)) => 2 * dv * (n - target) + 1,
            None if dv > 0 => 2 * (valence(ctx, v).0 - 6) + 1,
            None => ANY,
        };
    }
    sum < 0
}

/// Whether the faces `cda` and `dcb` of the flipped edge face the same way
/// (the quadrilateral is convex enough: the flip folds nothing over) and
/// their smallest angle is at least 10° or the smallest of `abc` and `bad`
/// (the flip makes no sliver).
pub fn unfolded<B: Block>(ctx: &Ctx<'_, B>, [a, b, c, d]: [u32; 4]) -> bool {
    let [pa, pb, pc, pd] = [a, b, c, d].map(|v| ctx.position(v));
    let old = pair_angle_sin([pa, pb, pc, pd]);
    let new = pair_angle_sin([pc, pd, pa, pb]);
    dot(normal(pc, pd, pa), normal(pd, pc, pb)) > 0.0 && new >= old.min(SLIVER_SIN)
}

/// Height over the longest edge, as a multiple of that edge, at or below
/// which a face has zero area (as `cavity::defects::ZERO_HEIGHT` on the
/// host; well above the rounding of the `f32` cross product).
pub const ZERO_HEIGHT: f32 = 1e-6;

/// Whether the triangle `a, b, c` has zero area: a cap, a needle or a
/// point (see [`ZERO_HEIGHT`]).
pub fn zero_area([a, b, c]: [[f32; 3]; 3]) -> bool {
    let sq = |u: [f32; 3]| dot(u, u);
    let longest = sq(sub(b, a)).max(sq(sub(c, b))).max(sq(sub(a, c)));
    norm(normal(a, b, c)) <= ZERO_HEIGHT * longest
}

/// Cosine of the angle above which a face is a cap (about 160°): its
/// longest edge is flipped away whatever the valences.
pub const CAP_COS: f32 = -0.94;

/// Whether the angle at `c` of the triangle `a, b, c` is a cap's.
pub(crate) fn cap_at(a: [f32; 3], b: [f32; 3], c: [f32; 3]) -> bool {
    let (u, v) = (sub(a, c), sub(b, c));
    dot(u, v) < CAP_COS * norm(u) * norm(v)
}

/// Whether one of the faces `abc` and `bad` of edge `ab` is a cap with its
/// large angle opposite `ab` (at `c` or `d`).
pub(crate) fn is_cap<B: Block>(ctx: &Ctx<'_, B>, [a, b, c, d]: [u32; 4]) -> bool {
    let [pa, pb, pc, pd] = [a, b, c, d].map(|v| ctx.position(v));
    cap_at(pa, pb, pc) || cap_at(pa, pb, pd)
}

/// Sine of the smallest angle a remeshed face is held to (15°: the
/// acceptance criterion of issue 24, `cavity_remesh::Quality::min_angle_away`).
pub const SMALL_ANGLE_SIN: f32 = 0.258_819_04;

/// Whether one of the faces `abc` and `bad` of edge `ab` has an angle
/// below 15° ([`SMALL_ANGLE_SIN`]).
pub(crate) fn has_small_angle<B: Block>(ctx: &Ctx<'_, B>, [a, b, c, d]: [u32; 4]) -> bool {
    let [pa, pb, pc, pd] = [a, b, c, d].map(|v| ctx.position(v));
    pair_angle_sin([pa, pb, pc, pd]) < SMALL_ANGLE_SIN
}

/// Sine of the smallest angle of the faces `abc` and `bad` on edge `ab`.
pub(crate) fn pair_angle_sin([a, b, c, d]: [[f32; 3]; 4]) -> f32 {
    smallest_angle_sin(a, b, c).min(smallest_angle_sin(b, a, d))
}

/// Whether flipping `ab` to `cd` removes a cap well: the new faces `cda`
/// and `dcb` face the same way, neither has zero area, and their smallest
/// angle is larger than the old faces' (so no later flip undoes it).
pub(crate) fn removes_cap<B: Block>(ctx: &Ctx<'_, B>, [a, b, c, d]: [u32; 4]) -> bool {
    let [pa, pb, pc, pd] = [a, b, c, d].map(|v| ctx.position(v));
    let old = pair_angle_sin([pa, pb, pc, pd]);
    let new = pair_angle_sin([pc, pd, pa, pb]);
    dot(normal(pc, pd, pa), normal(pd, pc, pb)) > 0.0
        && !zero_area([pc, pd, pa])
        && !zero_area([pd, pc, pb])
        && new > old
}

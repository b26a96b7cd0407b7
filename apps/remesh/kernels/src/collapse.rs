//! The collapse of short edges that keeps every new edge short and no face
//! folded, features and boundaries in place ([`CollapseShortEdgesSafely`]),
//! and the separation of degenerate edges it cannot collapse.

use crate::shape::{SLIVER_SIN, ZERO_HEIGHT, feature_edges, is_feature, zero_area};

use cavity_device::block::Block;
use cavity_device::dynamic::cavity::criteria::{length, shortest_first};
use cavity_device::dynamic::cavity::fills::{MAX_LOOP, collapsible, simple_chain, star_fill};
use cavity_device::dynamic::cavity::{CavityApp, Ctx, FillIn, HalfEdge, Template};
use cavity_device::geometry::{cross, dot, midpoint, norm, normal, smallest_angle_sin, sub};

use crate::boundary::BoundaryStar;

cavity_device::parameters! {
    /// Edge collapse for remeshing (template `EdgeStar`): an interior edge
    /// shorter than `min_length` becomes a vertex on it, at the point whose
    /// farthest neighbour is nearest (`balanced_point`; at its vertex on a
    /// feature edge when one is; not collapsed when both are) when the
    /// topology stays ([`collapsible`]), no new edge is longer than `max_length`,
    /// and every new face replaces the old face on the same loop edge
    /// well (same side, smallest angle at least 10° or the old face's).
    /// Shorter edges go first. An edge shorter than `degenerate_length` is
    /// degenerate (zero or near-zero length, in scans): its collapse moves
    /// every face by less than that, so it is taken even when a new edge
    /// is longer than `max_length`, and a new face need only not face
    /// against the old one (against the cavity's summed normals when the
    /// old one has zero area, [`zero_area`]; not at all when both have
    /// zero area: the normals are rounding), whatever its angles: the
    /// repair of degenerate input (issue 24). A degenerate edge that may
    /// not collapse (it would pinch the surface or move a non-manifold
    /// vertex) is separated instead: one of its vertices moves along an
    /// edge or off the line of its faces of zero area, and the cavity gets
    /// its old faces back (`separate`). With `flat_caps` (the final
    /// repair), the apex of a face of zero area without a degenerate edge
    /// is moved off the line of its long edge the same way (`flat_apex`).
    pub struct CollapseShortEdgesSafely {
        /// Shortest edge left alone.
        pub min_length: f32,
        /// Edges shorter than this are degenerate (see above).
        pub degenerate_length: f32,
        /// Longest edge a collapse may create.
        pub max_length: f32,
        /// Feature threshold, as for [`ImproveValence`](crate::ImproveValence).
        pub feature_cos: f32,
        /// Boundary vertices whose turning angle has a cosine below this
        /// are corners and stay; above 1: the whole boundary stays (no
        /// collapse touches a boundary vertex).
        pub boundary_cos: f32,
        /// Distance (model units) within which a boundary edge between two
        /// corners may collapse: when both of its vertices lie this close
        /// to the boundary polyline the collapse leaves, their turnings are
        /// noise at the scale of L (the staircase rims of scanned holes),
        /// not corners (0: corners always stay).
        pub corner_tolerance: f32,
        /// 1: the final repair of `cavity_remesh`: the apex of a face of
        /// zero area with no degenerate edge (a cap whose long edge a flip
        /// cannot take: a boundary or non-manifold edge, or a fold) is
        /// separated from the line of that edge too (`flat_apex`); 0: only
        /// short edges are cavities.
        pub flat_caps: u32,
    }
}

/// Whether triangle `new` may replace `old`: it faces the same way and its
/// smallest angle is at least 10° or `old`'s (no fold, no new sliver).
fn replaces_well([p, q, r]: [[f32; 3]; 3], [x, y, z]: [[f32; 3]; 3]) -> bool {
    dot(normal(x, y, z), normal(p, q, r)) > 0.0
        && smallest_angle_sin(x, y, z) >= smallest_angle_sin(p, q, r).min(SLIVER_SIN)
}

/// Distance from `p` to the segment from `s` to `t` (model units).
fn segment_distance(p: [f32; 3], s: [f32; 3], t: [f32; 3]) -> f32 {
    let (d, r) = (sub(t, s), sub(p, s));
    let dd = dot(d, d);
    let k = if dd > 0.0 {
        (dot(r, d) / dd).clamp(0.0, 1.0)
    } else {
        0.0
    };
    norm(sub(r, [k * d[0], k * d[1], k * d[2]]))
}

/// Where edge `e` collapses to, so that features stay: its
/// [`balanced_point`] when neither vertex is on a feature edge; the feature
/// vertex when one is;
/// along a feature edge between two feature vertices, the one that is a
/// corner (not two feature edges), or the midpoint when neither is (it
/// lies on the feature line). `None` otherwise: both vertices are on
/// features but `e` is not one, or both are corners.
fn collapse_target<B: Block>(ctx: &Ctx<'_, B>, e: u32, feature_cos: f32) -> Option<[f32; 3]> {
    let [a, b] = ctx.edge_vertices(e);
    let [pa, pb] = [a, b].map(|v| ctx.position(v));
    let [fa, fb] = [a, b].map(|v| feature_edges(ctx, v, feature_cos));
    match (fa, fb) {
        (0, 0) => Some(balanced_point(ctx, e, pa, pb)),
        (_, 0) => Some(pa),
        (0, _) => Some(pb),
        _ if !is_feature(ctx, e, feature_cos) => None,
        (2, 2) => Some(midpoint(pa, pb)),
        (_, 2) => Some(pa),
        (2, _) => Some(pb),
        _ => None,
    }
}

/// Where an edge `e` from `pa` to `pb` with no feature vertex collapses
/// to: of the nine points `pa + k/8 (pb - pa)`, the one whose farthest
/// vertex around `e`'s two vertices (as far as the patch holds them) is
/// nearest; of tied points, the one nearest the midpoint (`pa`'s side
/// first). Where one side's neighbours lie farther
/// than the other's, the midpoint makes an edge longer than 4/3 L that a
/// point nearer them does not (Botsch and Kobbelt collapse to the
/// midpoint). One pass over the neighbours: the squared distance from
/// `pa + t d` to `w` is `|pa - w|² + 2t (pa - w)·d + t²|d|²`, whose last
/// term all neighbours share.
fn balanced_point<B: Block>(ctx: &Ctx<'_, B>, e: u32, pa: [f32; 3], pb: [f32; 3]) -> [f32; 3] {
    const STEPS: usize = 8;
    let [a, b] = ctx.edge_vertices(e);
    let d = sub(pb, pa);
    let mut far = [f32::NEG_INFINITY; STEPS + 1];
    for v in [a, b] {
        for g in ctx.vertex_edges(v) {
            let [x, y] = ctx.edge_vertices(g);
            let w = if x == v { y } else { x };
            if w != a && w != b {
                let r = sub(pa, ctx.position(w));
                let (c, s) = (dot(r, r), 2.0 * dot(r, d));
                for (k, f) in far.iter_mut().enumerate() {
                    *f = f.max(c + s * (k as f32 / STEPS as f32));
                }
            }
        }
    }
    let dd = dot(d, d);
    let cost = |k: usize| {
        let t = k as f32 / STEPS as f32;
        far[k] + dd * t * t
    };
    let mut best = STEPS / 2;
    for k in [3, 5, 2, 6, 1, 7, 0, 8] {
        if cost(k) < cost(best) {
            best = k;
        }
    }
    let t = best as f32 / STEPS as f32;
    [0, 1, 2].map(|c| pa[c] + t * d[c])
}

/// Whether the collapse of `e` to `m` visibly makes an edge
/// longer than `max_length` or a face that does not replace its old one
/// well ([`replaces_well`]), judged on the edges and
/// faces at its two vertices that the patch holds (all of them for an
/// owned vertex, some for a ribbon one), so that the collapse is turned
/// down before the patch expands for it (the fill-in checks the whole
/// stars, at its own [`balanced_point`]). Every edge and face seen is one
/// of the mesh, so a long edge seen is real: `m` is the candidate point
/// nearest its farthest seen neighbour, so every candidate has one as far.
/// A bad face seen is real when the patch owns both vertices (it holds
/// their whole stars, so the fill-in computes the same `m`); at a ribbon
/// vertex the fill-in's point may differ, and a collapse this turns down
/// might have passed there (it waits for a later processing).
fn visibly_bad<B: Block>(ctx: &Ctx<'_, B>, e: u32, m: [f32; 3], max_length: f32) -> bool {
    let [a, b] = ctx.edge_vertices(e);
    [a, b].into_iter().any(|v| {
        ctx.vertex_edges(v).any(|g| {
            let [x, y] = ctx.edge_vertices(g);
            let w = if x == v { y } else { x };
            if w == a || w == b {
                return false;
            }
            if norm(sub(m, ctx.position(w))) > max_length {
                return true;
            }
            // Each face at `v` once: through its edge leaving `v`.
            let (n, faces) = ctx.edge_faces(g);
            faces[..n.min(2) as usize].iter().any(|&f| {
                let corners = ctx.face_vertices(f);
                let i = corners.iter().position(|&u| u == v).unwrap_or(0);
                if corners[(i + 1) % 3] != w || corners.contains(&a) && corners.contains(&b) {
                    return false;
                }
                let old = corners.map(|u| ctx.position(u));
                let new = corners.map(|u| if u == v { m } else { ctx.position(u) });
                !replaces_well(old, new)
            })
        })
    })
}

/// Whether edge `e` runs from the apex of a face of zero area
/// ([`zero_area`]) with no edge shorter than `degenerate_length` (a cap:
/// the apex lies on the line of the longest edge) to the face's next
/// corner: the one seed per cap whose cavity (the apex's star) can move
/// the apex off that line (`CollapseShortEdgesSafely::separate`).
fn flat_apex<B: Block>(ctx: &Ctx<'_, B>, e: u32, degenerate_length: f32) -> bool {
    let (n, faces) = ctx.edge_faces(e);
    let [a, b] = ctx.edge_vertices(e);
    let shortest = degenerate_length * degenerate_length;
    faces[..n.min(2) as usize].iter().any(|&f| {
        let corners = ctx.face_vertices(f);
        let p = corners.map(|v| ctx.position(v));
        if !zero_area(p) {
            return false;
        }
        // Side i runs from corner i to corner i + 1.
        let sq = [0, 1, 2].map(|i| {
            let d = sub(p[(i + 1) % 3], p[i]);
            dot(d, d)
        });
        if sq.iter().any(|&l| l < shortest) {
            return false;
        }
        let i = if sq[0] >= sq[1] && sq[0] >= sq[2] {
            0
        } else if sq[1] >= sq[2] {
            1
        } else {
            2
        };
        let (apex, next) = (corners[(i + 2) % 3], corners[i]);
        (a, b) == (apex, next) || (b, a) == (apex, next)
    })
}

/// Most faces on the seed edge of a separation in the final repair
/// (`CollapseShortEdgesSafely::max_new`): a non-manifold seed edge.
const SEPARATE_SEED_FACES: u32 = 8;

/// Most faces a separation reproduces (`CollapseShortEdgesSafely::separate`).
const SEPARATE_FACES: usize = (MAX_LOOP + SEPARATE_SEED_FACES) as usize;

/// Most edges a separation reproduces: the seed and two per face.
const SEPARATE_EDGES: usize = 2 * SEPARATE_FACES + 1;

/// The moves of a separation: one vertex of the seed edge to a point, and
/// perhaps the other one too (`NO_MOVE` where not).
#[derive(Clone, Copy)]
struct Moves([(u32, [f32; 3]); 2]);

/// No vertex (the unused second move of [`Moves`]).
const NO_MOVE: u32 = u32::MAX;

impl Moves {
    /// Vertex `v` moved to `at`.
    fn one(v: u32, at: [f32; 3]) -> Moves {
        Moves([(v, at), (NO_MOVE, at)])
    }

    /// Where vertex `u` goes, if it moves.
    fn to(&self, u: u32) -> Option<[f32; 3]> {
        self.0
            .iter()
            .find(|m| m.0 == u && u != NO_MOVE)
            .map(|m| m.1)
    }

    /// The vertices that move.
    fn vertices(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().map(|m| m.0).filter(|&u| u != NO_MOVE)
    }
}

/// The smallest angle's sine of the cavity's faces at the vertices that
/// `moves` moves, moved; `None` when one of them has zero area and had
/// area, or
/// faces against the old face (against `up` where the old one has zero
/// area), or when the move repairs nothing. A face of zero area that
/// keeps zero area (its other two vertices coincide: only a later
/// separation of those can give it area) makes the score [`NO_BETTER`]. A
/// face of zero area whose neighbour across the edge opposite `v` has
/// area must face as that neighbour (`across_side`); any other one as
/// `up`, or either way when `up` is `None` or `free` (the cavity has faces
/// with area, which `up` sums, but none next to this one: a fin on a
/// boundary edge).
///
/// A move repairs something when it leaves fewer edges at the moved
/// vertices shorter than `degenerate_length` or fewer faces of zero area
/// at them, and no more of either. Only the edges and faces at the moved
/// vertices move, so every separation lowers the mesh's count of
/// degenerate edges and faces of zero area, and a sweep of separations
/// ends: one that left its seed
/// degenerate could be taken again and again (seen on the GPU: a patch
/// queued for 10,000 rounds, separating 4 edges a round; issue 24).
fn moved_score<B: Block>(
    fill: &FillIn<'_, B>,
    moves: Moves,
    (up, free): (Option<[f32; 3]>, bool),
    degenerate_length: f32,
) -> Option<f32> {
    let ctx = fill.ctx;
    let to = |u: u32| moves.to(u).unwrap_or_else(|| ctx.position(u));
    let (mut short, mut now_short) = (0, 0);
    for v in moves.vertices() {
        for g in ctx.vertex_edges(v) {
            let [x, y] = ctx.edge_vertices(g);
            let w = if x == v { y } else { x };
            short += (norm(sub(ctx.position(w), ctx.position(v))) < degenerate_length) as u32;
            now_short += (norm(sub(to(w), to(v))) < degenerate_length) as u32;
        }
    }
    let (mut flat, mut now_flat) = (0, 0);
    let mut score = f32::INFINITY;
    for f in fill.deleted_faces() {
        let corners = ctx.face_vertices(f);
        let Some(v) = corners.into_iter().find(|&u| moves.to(u).is_some()) else {
            continue;
        };
        let old = corners.map(|u| ctx.position(u));
        let new = corners.map(to);
        let was_zero = zero_area(old);
        flat += was_zero as u32;
        if zero_area(new) {
            if !was_zero {
                return None;
            }
            now_flat += 1;
            score = NO_BETTER;
            continue;
        }
        let side = if !was_zero {
            normal(old[0], old[1], old[2])
        } else if let Some(side) = across_side(ctx, f, v) {
            side
        } else {
            match up {
                Some(up) if !free => up,
                _ => normal(new[0], new[1], new[2]),
            }
        };
        if dot(normal(new[0], new[1], new[2]), side) <= 0.0 {
            return None;
        }
        score = score.min(smallest_angle_sin(new[0], new[1], new[2]));
    }
    (now_short <= short && now_short + now_flat < short + flat).then_some(score)
}

/// The score of a move that leaves a face of zero area as it was (see
/// `moved_score`): taken only when no pass of
/// `CollapseShortEdgesSafely::separate` finds a move that gives every
/// face area.
const NO_BETTER: f32 = -1.0;

/// The side the cavity's faces face, and whether it is a guess: the
/// summed normals of those that have area ([`zero_area`]); when none has,
/// the normal of the plane of two sides of its faces that are not
/// parallel (so that faces lifted off their lines within that plane
/// face one way), or where all of them lie on one line a direction
/// across it (the coordinate axis least along it); zero when the
/// cavity's vertices all coincide.
fn cavity_side<B: Block>(fill: &FillIn<'_, B>) -> ([f32; 3], bool) {
    let ctx = fill.ctx;
    let mut up = [0f32; 3];
    let mut line = [0f32; 3];
    let mut plane = [0f32; 3];
    for f in fill.deleted_faces() {
        let p = ctx.face_vertices(f).map(|v| ctx.position(v));
        if zero_area(p) {
            if dot(line, line) == 0.0 {
                line = longest_side(p);
            }
            for i in 0..3 {
                let n = cross(line, sub(p[(i + 1) % 3], p[i]));
                if dot(n, n) > dot(plane, plane) {
                    plane = n;
                }
            }
        } else {
            let n = normal(p[0], p[1], p[2]);
            up = [up[0] + n[0], up[1] + n[1], up[2] + n[2]];
        }
    }
    if dot(up, up) > 0.0 {
        return (up, false);
    }
    // Sides that are parallel up to rounding span no plane.
    if dot(plane, plane) > ZERO_HEIGHT * ZERO_HEIGHT * dot(line, line) * dot(line, line) {
        return (plane, true);
    }
    (across_line(line), true)
}

/// A direction across `line` (perpendicular to it): towards the
/// coordinate axis least along it.
fn across_line(line: [f32; 3]) -> [f32; 3] {
    let [x, y, z] = line.map(f32::abs);
    let axis = if x <= y && x <= z {
        [1.0, 0.0, 0.0]
    } else if y <= z {
        [0.0, 1.0, 0.0]
    } else {
        [0.0, 0.0, 1.0]
    };
    cross(cross(line, axis), line)
}

/// The longest side of triangle `p`, as a vector.
fn longest_side(p: [[f32; 3]; 3]) -> [f32; 3] {
    let mut side = [0f32; 3];
    for i in 0..3 {
        let d = sub(p[(i + 1) % 3], p[i]);
        if dot(d, d) > dot(side, side) {
            side = d;
        }
    }
    side
}

/// Heights, as fractions of the opposite edge, that `lift` tries.
const LIFTS: [f32; 3] = [0.25, 0.05, 0.01];

/// Where vertex `v` goes to lift its faces of zero area in the cavity off
/// their lines: across each such face's edge opposite `v`, on the side
/// that makes the face face as its neighbour across that edge
/// (`across_side`), or `up` where no neighbour tells (for the face
/// `v, p, q`, moving `v` by `d` gives it the normal `d × (p - q)`, so `d`
/// runs along `(p - q) × up`, or any way across `p - q` where that runs
/// along `up`), the directions of the faces a neighbour
/// tells summed (of the others where none does), by `t` times the
/// shortest of those edges.
/// `None` when `v` has no such face with an opposite edge of length, or
/// the directions cancel.
fn lift<B: Block>(fill: &FillIn<'_, B>, v: u32, up: [f32; 3], t: f32) -> Option<[f32; 3]> {
    let ctx = fill.ctx;
    // Faces whose side their neighbour tells, and faces free to face `up`.
    let mut dir = [0f32; 3];
    let mut free = [0f32; 3];
    let mut reach = f32::INFINITY;
    for (f, base) in flat_faces_at(fill, v) {
        let side = across_side(ctx, f, v);
        let toward = side.unwrap_or(up);
        let mut d = cross(base, toward);
        // A free face whose line runs along `up` may face any way across
        // it (the summed normals of a book's pages can lie along its
        // spine).
        if side.is_none() && norm(d) <= ZERO_HEIGHT * norm(base) * norm(toward) {
            d = across_line(base);
        }
        let n = norm(d);
        if n > 0.0 {
            let sum = if side.is_some() { &mut dir } else { &mut free };
            *sum = [0, 1, 2].map(|c| sum[c] + d[c] / n);
            reach = reach.min(norm(base));
        }
    }
    if dot(dir, dir) == 0.0 {
        dir = free;
    }
    let n = norm(dir);
    let pv = ctx.position(v);
    (n > 0.0 && reach.is_finite()).then(|| [0, 1, 2].map(|c| pv[c] + t * reach * dir[c] / n))
}

/// The cavity's faces of zero area ([`zero_area`]) at vertex `v`, each
/// with its edge opposite `v` as a vector.
fn flat_faces_at<'a, B: Block>(
    fill: &'a FillIn<'_, B>,
    v: u32,
) -> impl Iterator<Item = (u32, [f32; 3])> + 'a {
    let ctx = fill.ctx;
    fill.deleted_faces().filter_map(move |f| {
        let corners = ctx.face_vertices(f);
        let i = corners.iter().position(|&u| u == v)?;
        let p = corners.map(|u| ctx.position(u));
        zero_area(p).then(|| (f, sub(p[(i + 1) % 3], p[(i + 2) % 3])))
    })
}

/// The side face `f` of zero area should face once its corner `v` moves
/// off the line: as the face with area across its edge opposite `v` does
/// (reversed where both traverse that edge the same way); `None` when
/// that edge has no such single neighbour (a boundary edge, a
/// non-manifold one, or a neighbour of zero area).
fn across_side<B: Block>(ctx: &Ctx<'_, B>, f: u32, v: u32) -> Option<[f32; 3]> {
    let e = (0..3)
        .map(|j| ctx.copy.face_edge(f, j).0)
        .find(|&e| !ctx.edge_vertices(e).contains(&v))?;
    let (n, [f0, f1]) = ctx.edge_faces(e);
    if n != 2 {
        return None;
    }
    let g = if f0 == f { f1 } else { f0 };
    let p = ctx.face_vertices(g).map(|u| ctx.position(u));
    if g == f || zero_area(p) {
        return None;
    }
    let side = normal(p[0], p[1], p[2]);
    Some(
        if ctx.traverses_forward(f, e) != ctx.traverses_forward(g, e) {
            side
        } else {
            side.map(|c| -c)
        },
    )
}

/// The `i`-th direction (scaled to the shortest such edge) across the
/// plane of the edge opposite `v` in the first face of zero area at `v`
/// in the cavity and the one opposite `v` in the `i + 1`-th such face
/// (`None` past the last one); parallel edges give a zero direction.
fn across<B: Block>(fill: &FillIn<'_, B>, v: u32, i: u32) -> Option<[f32; 3]> {
    let mut first = None;
    let mut k = 0;
    for (_, base) in flat_faces_at(fill, v) {
        let Some(b0) = first else {
            first = Some(base);
            continue;
        };
        if k == i {
            let d = cross(b0, base);
            let n = norm(d);
            let reach = norm(b0).min(norm(base));
            return Some(if n > 0.0 {
                d.map(|c| c * reach / n)
            } else {
                [0.0; 3]
            });
        }
        k += 1;
    }
    None
}

/// Fills an edge-star cavity with its old faces again, the seed's two
/// vertices replaced by new ones at their positions, moved as `moves`
/// says: the same topology, one or both seed vertices moved. False when
/// the cavity has more than [`SEPARATE_FACES`] faces or
/// [`SEPARATE_EDGES`] edges at the seed's vertices, or slots run out.
fn reproduce<B: Block>(fill: &mut FillIn<'_, B>, moves: Moves) -> bool {
    let ctx = fill.ctx;
    let [a, b] = ctx.edge_vertices(fill.seed());
    let mut faces = [0u32; SEPARATE_FACES];
    let mut n = 0;
    for f in fill.deleted_faces() {
        if n == SEPARATE_FACES {
            return false;
        }
        faces[n] = f;
        n += 1;
    }
    let [pa, pb] = [a, b].map(|u| moves.to(u).unwrap_or_else(|| ctx.position(u)));
    let (Some(na), Some(nb)) = (fill.add_vertex(&pa), fill.add_vertex(&pb)) else {
        return false;
    };
    let map = |u: u32| match u {
        _ if u == a => na,
        _ if u == b => nb,
        _ => u,
    };
    let mut old_edges = [u32::MAX; SEPARATE_EDGES];
    let mut new_edges = [0u32; SEPARATE_EDGES];
    let mut edges = 0;
    for &f in &faces[..n] {
        let mut h = [HalfEdge {
            edge: 0,
            reversed: false,
        }; 3];
        for (j, slot) in h.iter_mut().enumerate() {
            let (e, reversed) = ctx.copy.face_edge(f, j as u32);
            let [x, y] = ctx.edge_vertices(e);
            let edge = if [x, y].iter().any(|&u| u == a || u == b) {
                match old_edges[..edges].iter().position(|&o| o == e) {
                    Some(k) => new_edges[k],
                    None => {
                        if edges == SEPARATE_EDGES {
                            return false;
                        }
                        let Some(ne) = fill.add_edge(map(x), map(y)) else {
                            return false;
                        };
                        old_edges[edges] = e;
                        new_edges[edges] = ne;
                        edges += 1;
                        ne
                    }
                }
            } else {
                e
            };
            *slot = HalfEdge { edge, reversed };
        }
        if fill.add_face(h).is_none() {
            return false;
        }
    }
    true
}

impl CollapseShortEdgesSafely {
    /// Where edge `e` collapses to, `None` when it may not. Away from the
    /// mesh boundary: [`collapse_target`]. An edge with a vertex on the
    /// boundary (issue 24; CGAL's `isotropic_remeshing` does the same):
    /// a boundary edge collapses to a point of itself (so onto the boundary
    /// polyline: its [`balanced_point`], or the vertex that is a corner; not
    /// when both are), an interior edge with one boundary vertex to that
    /// vertex (not when the other is on a feature), an interior edge
    /// between two boundary vertices not at all (it would pinch the
    /// surface). Nothing touches a boundary vertex with a non-manifold
    /// edge, and nothing touches the boundary when `boundary_cos` is above
    /// 1. Exact when the patch owns both vertices (in the fill-in).
    fn target<B: Block>(&self, ctx: &Ctx<'_, B>, e: u32) -> Option<[f32; 3]> {
        let faces = ctx.edge_faces(e).0;
        let [a, b] = ctx.edge_vertices(e);
        let [sa, sb] = [a, b].map(|v| BoundaryStar::of(ctx, v));
        if faces == 2 && !sa.on_boundary() && !sb.on_boundary() {
            return collapse_target(ctx, e, self.feature_cos);
        }
        if self.boundary_cos > 1.0 || sa.non_manifold || sb.non_manifold {
            return None;
        }
        let [pa, pb] = [a, b].map(|v| ctx.position(v));
        match faces {
            1 => match (
                sa.movable(ctx, pa, self.boundary_cos),
                sb.movable(ctx, pb, self.boundary_cos),
            ) {
                (true, true) => Some(balanced_point(ctx, e, pa, pb)),
                (false, true) => Some(pa),
                (true, false) => Some(pb),
                (false, false) => self.between_corners(ctx, e, [sa, sb]),
            },
            2 => {
                let smooth = |v| feature_edges(ctx, v, self.feature_cos) == 0;
                match (sa.on_boundary(), sb.on_boundary()) {
                    (true, false) if smooth(b) => Some(pa),
                    (false, true) if smooth(a) => Some(pb),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Where boundary edge `e` between two corners with boundary stars
    /// `stars` collapses to: its [`balanced_point`] `m` (on the edge, so
    /// onto the polyline) when both corners are plain boundary vertices
    /// and lie within `corner_tolerance` of the polyline `u, m, w` that
    /// replaces `u, a, b, w` (`u`, `w`: their other boundary neighbours):
    /// a step of a jagged rim much shorter than L, whose corners would
    /// keep faces with all three vertices on the boundary and small angles
    /// between them (issue 24). A step as long as the tolerance or longer
    /// is a corner of the shape at the scale of L and stays. `None` when
    /// the stars are unknown (a ribbon vertex) or `u` is `w` (a hole of
    /// three edges, which the collapse would close).
    fn between_corners<B: Block>(
        &self,
        ctx: &Ctx<'_, B>,
        e: u32,
        [sa, sb]: [BoundaryStar; 2],
    ) -> Option<[f32; 3]> {
        let [a, b] = ctx.edge_vertices(e);
        let plain = |s: BoundaryStar| s.known && s.edges == 2 && !s.non_manifold;
        if !plain(sa) || !plain(sb) {
            return None;
        }
        let other = |s: BoundaryStar, x: u32| if s.ends[0] == x { s.ends[1] } else { s.ends[0] };
        let (u, w) = (other(sa, b), other(sb, a));
        if u == w {
            return None;
        }
        let [pa, pb, pu, pw] = [a, b, u, w].map(|v| ctx.position(v));
        let m = balanced_point(ctx, e, pa, pb);
        let off = |p| segment_distance(p, pu, m).min(segment_distance(p, m, pw));
        (off(pa).max(off(pb)) <= self.corner_tolerance).then_some(m)
    }

    /// Separates the two vertices of degenerate seed edge `ab` that may
    /// not collapse (the collapse would pinch the surface, join a vertex
    /// to a non-manifold one, or break the link condition), or moves the
    /// apex of a cap that no flip removes off its line (a seed from
    /// `flat_apex`): one of the seed's vertices moves and the cavity is
    /// filled in with its old faces again (`reproduce`), so the topology
    /// stays by construction. Three passes, each only when the one before
    /// found no move:
    ///
    /// 1. a vertex with no non-manifold edge and zero or two boundary
    ///    edges moves a quarter or half of the way along one of its edges:
    ///    a boundary vertex along a boundary edge (onto the polyline, and
    ///    not when `boundary_cos` keeps the boundary), an interior vertex
    ///    on a feature along a feature edge, any other along any edge;
    /// 2. the same vertices move along any edge, towards their
    ///    neighbours' centroid (two faces folded onto each other need it),
    ///    off the lines of their faces of zero area (`lift`), or, when
    ///    the vertex lies on all its neighbours, towards the cavity's
    ///    vertex farthest from it;
    /// 3. any vertex (a non-manifold one too; not one on the boundary when
    ///    `boundary_cos` keeps it) is lifted: where every move along the
    ///    edges stays on one line, or the other vertex may not move.
    ///
    /// In a cavity whose faces all have zero area, when none of these
    /// gives every face area, both seed vertices may move
    /// ([`Self::lift_and_recentre`]).
    ///
    /// Of the moves whose faces at the moved vertex all have area
    /// ([`zero_area`]) and face as the old ones did (as the cavity's summed
    /// normals where an old one has zero area, `cavity_side`) and that
    /// repair something (`moved_score`), the one with the largest
    /// smallest angle is taken; none: false (issue 24).
    fn separate<B: Block>(&self, fill: &mut FillIn<'_, B>) -> bool {
        let ctx = fill.ctx;
        let [a, b] = ctx.edge_vertices(fill.seed());
        let (side, arbitrary) = cavity_side(fill);
        let mut best: Option<(f32, Moves)> = None;
        // Scores the moves (`moved_score`, faces facing `side`) and keeps
        // the best.
        let view: &FillIn<'_, B> = fill;
        let consider = |best: &mut Option<(f32, Moves)>, moves, side| {
            if let Some(score) = moved_score(view, moves, side, self.degenerate_length)
                && best.is_none_or(|(s, _)| score > s)
            {
                *best = Some((score, moves));
            }
        };
        // Where no face of the cavity has area, its side is a guess: both
        // are tried, each through the three passes.
        let sides = if arbitrary { 2 } else { 1 };
        for (pass, up) in (0..sides).flat_map(|s| {
            [0u32, 1, 2].map(|pass| (pass, if s == 0 { side } else { side.map(|c| -c) }))
        }) {
            for (v, w) in [(a, b), (b, a)] {
                let star = BoundaryStar::of(ctx, v);
                let boundary = star.edges == 2;
                let kept = star.on_boundary() && self.boundary_cos > 1.0;
                let plain = !star.non_manifold && (star.edges == 0 || boundary) && !kept;
                if kept || pass < 2 && !plain || pass == 2 && plain {
                    continue;
                }
                let pv = ctx.position(v);
                if pass > 0 {
                    for t in LIFTS {
                        if let Some(at) = lift(fill, v, up, t) {
                            consider(&mut best, Moves::one(v, at), (Some(up), !arbitrary));
                        }
                    }
                }
                if pass == 1
                    && ctx
                        .vertex_edges(v)
                        .all(|g| length(ctx, g) < self.degenerate_length)
                {
                    // A vertex on all its neighbours (a face whose corners
                    // coincide) has no edge or face line to move along: it
                    // moves towards the cavity's vertex farthest from it.
                    let mut far = pv;
                    for f in fill.deleted_faces() {
                        for p in ctx.face_vertices(f).map(|u| ctx.position(u)) {
                            if norm(sub(p, pv)) > norm(sub(far, pv)) {
                                far = p;
                            }
                        }
                    }
                    let d = sub(far, pv);
                    for t in LIFTS {
                        let at = [0, 1, 2].map(|c| pv[c] + t * d[c]);
                        consider(&mut best, Moves::one(v, at), (Some(up), !arbitrary));
                    }
                }
                if pass == 2 {
                    // Zero-area faces around a non-manifold edge (pages of
                    // a book) face no common side: lifted across the plane
                    // of two of their lines, they get area either way.
                    for i in 0..SEPARATE_FACES as u32 {
                        let Some(d) = across(fill, v, i) else {
                            break;
                        };
                        for t in LIFTS {
                            for sign in [1.0f32, -1.0] {
                                let at = [0, 1, 2].map(|c| pv[c] + sign * t * d[c]);
                                consider(&mut best, Moves::one(v, at), (None, true));
                            }
                        }
                    }
                    continue;
                }
                let anywhere = pass == 1;
                let on_feature = feature_edges(ctx, v, self.feature_cos) > 0;
                // The neighbours' centroid, as a last direction.
                let (mut sum, mut k) = ([0f32; 3], 0.0f32);
                for g in ctx.vertex_edges(v) {
                    let [x, y] = ctx.edge_vertices(g);
                    let p = ctx.position(if x == v { y } else { x });
                    sum = [sum[0] + p[0], sum[1] + p[1], sum[2] + p[2]];
                    k += 1.0;
                }
                let centroid = sum.map(|c| c / k.max(1.0));
                let ends = ctx.vertex_edges(v).map(|g| {
                    let [x, y] = ctx.edge_vertices(g);
                    (Some(g), ctx.position(if x == v { y } else { x }), x ^ y ^ v)
                });
                let last = anywhere.then_some((None, centroid, v));
                for (g, end, u) in ends.chain(last) {
                    let along = if anywhere {
                        true
                    } else if let Some(g) = g.filter(|_| boundary) {
                        ctx.edge_faces(g).0 == 1
                    } else {
                        g.is_some_and(|g| !on_feature || is_feature(ctx, g, self.feature_cos))
                    };
                    let d = sub(end, pv);
                    if u == w || !along || norm(d) < self.degenerate_length {
                        continue;
                    }
                    for t in [0.25f32, 0.5] {
                        let at = [0, 1, 2].map(|c| pv[c] + t * d[c]);
                        consider(&mut best, Moves::one(v, at), (Some(up), !arbitrary));
                    }
                }
            }
            if best.is_some_and(|(s, _)| s > NO_BETTER) {
                break;
            }
        }
        if arbitrary && best.is_none_or(|(s, _)| s <= NO_BETTER) {
            self.lift_and_recentre(fill, side, &consider, &mut best);
        }
        best.is_some_and(|(_, moves)| reproduce(fill, moves))
    }

    /// The last resort of [`Self::separate`] in a cavity of faces that all
    /// have zero area (a component of them, or one of scan debris): a disk
    /// whose boundary loop lies on one line has no triangulation without
    /// zero area or a fold while its boundary stays on the line, and a
    /// lift of any one vertex gives its faces area facing both ways (a
    /// generated mesh kept three such faces: an interior vertex and three
    /// boundary vertices on a line). So a plain vertex `v` of the seed is
    /// lifted across the line (along `side`, both ways, by the fractions
    /// [`LIFTS`] of its mean edge; not a boundary vertex when
    /// `boundary_cos` keeps the boundary) and the other one, when it is an
    /// interior vertex, goes to its neighbours' centroid with `v` lifted:
    /// inside the lifted boundary, so that all faces face one way (either
    /// way along the normal of the plane of the line and `side`: the
    /// cavity has no side of its own).
    fn lift_and_recentre<B: Block>(
        &self,
        fill: &FillIn<'_, B>,
        side: [f32; 3],
        consider: &impl Fn(&mut Option<(f32, Moves)>, Moves, (Option<[f32; 3]>, bool)),
        best: &mut Option<(f32, Moves)>,
    ) {
        let ctx = fill.ctx;
        let across = norm(side);
        // The line the cavity lies on, and the normal of the plane the
        // lift spans with it: the side the faces get.
        let mut line = [0f32; 3];
        for f in fill.deleted_faces() {
            let d = longest_side(ctx.face_vertices(f).map(|v| ctx.position(v)));
            if dot(d, d) > dot(line, line) {
                line = d;
            }
        }
        let up = cross(line, side);
        if across == 0.0 || dot(up, up) == 0.0 {
            return;
        }
        let [a, b] = ctx.edge_vertices(fill.seed());
        for (v, w) in [(a, b), (b, a)] {
            let [sv, sw] = [v, w].map(|u| BoundaryStar::of(ctx, u));
            let plain = !sv.non_manifold && (sv.edges == 0 || sv.edges == 2);
            let kept = sv.on_boundary() && self.boundary_cos > 1.0;
            if !plain || kept || !sw.known || sw.on_boundary() {
                continue;
            }
            let pv = ctx.position(v);
            let (mut reach, mut k) = (0.0f32, 0.0f32);
            for g in ctx.vertex_edges(v) {
                reach += length(ctx, g);
                k += 1.0;
            }
            let reach = reach / k.max(1.0);
            for t in LIFTS {
                for sign in [1.0f32, -1.0] {
                    let at = [0, 1, 2].map(|c| pv[c] + sign * t * reach * side[c] / across);
                    let (mut sum, mut n) = ([0f32; 3], 0.0f32);
                    for g in ctx.vertex_edges(w) {
                        let [x, y] = ctx.edge_vertices(g);
                        let u = if x == w { y } else { x };
                        let p = if u == v { at } else { ctx.position(u) };
                        sum = [sum[0] + p[0], sum[1] + p[1], sum[2] + p[2]];
                        n += 1.0;
                    }
                    let centroid = sum.map(|c| c / n.max(1.0));
                    // The faces face one way, not known which.
                    for up in [up, up.map(|c| -c)] {
                        consider(best, Moves([(v, at), (w, centroid)]), (Some(up), false));
                    }
                }
            }
        }
    }

    /// Whether the collapse keeps the topology: [`collapsible`] away from
    /// the boundary; at the boundary, both vertices are plain boundary or
    /// interior vertices (two boundary edges or none) and the cavity is a
    /// half-disk bounded by an open chain through distinct vertices (the
    /// link condition) with as many faces as the chain has half-edges, plus
    /// one per face of the seed edge.
    fn collapsible<B: Block>(&self, fill: &FillIn<'_, B>) -> bool {
        let ctx = fill.ctx;
        let seed = fill.seed();
        let [sa, sb] = ctx.edge_vertices(seed).map(|v| BoundaryStar::of(ctx, v));
        if !sa.on_boundary() && !sb.on_boundary() {
            return collapsible(fill);
        }
        let plain = |s: BoundaryStar| !s.non_manifold && (s.edges == 0 || s.edges == 2);
        plain(sa)
            && plain(sb)
            && simple_chain(fill)
            && fill.deleted_faces().count() as u32 == fill.boundary_len() + ctx.edge_faces(seed).0
            && fill.boundary_len() >= 2
    }
}

impl CavityApp for CollapseShortEdgesSafely {
    const TEMPLATE: Template = Template::EdgeStar;
    const MAX_NEW: [u32; 3] = [2, SEPARATE_EDGES as u32, SEPARATE_FACES as u32];
    const JOINS_BOUNDARY: bool = false;
    fn max_new(&self, boundary: u32) -> [u32; 3] {
        // A collapse: one vertex and a spoke per chain vertex (an open
        // chain, at the mesh boundary, has one vertex more), a face per
        // half-edge. A separation of two boundary vertices (two half-disks
        // sharing the seed's two faces) reproduces two vertices, their
        // `boundary + 5` edges and `boundary + 2` faces. In the final
        // repair a separation may meet non-manifold vertices: a face per
        // boundary half-edge and per face of the seed edge (at most
        // `SEPARATE_SEED_FACES`), and at most two edges to other vertices
        // per face, so that the reservation of the iterations' collapses
        // stays small.
        if self.flat_caps != 0 {
            let seed = SEPARATE_SEED_FACES;
            [2, 2 * (boundary + seed) + 1, boundary + seed]
        } else {
            [2, boundary + 5, boundary + 2]
        }
    }
    const SCREENS: bool = true;
    fn screen<B: Block>(&self, ctx: &Ctx<'_, B>, e: u32) -> bool {
        // A NaN length passes: `create` does not turn it down either.
        let len = length(ctx, e);
        self.flat_caps != 0 || len < self.min_length || len.is_nan()
    }
    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, e: u32) -> bool {
        let len = length(ctx, e);
        if len >= self.min_length {
            return self.flat_caps != 0 && flat_apex(ctx, e, self.degenerate_length);
        }
        match self.target(ctx, e) {
            Some(m) => len < self.degenerate_length || !visibly_bad(ctx, e, m, self.max_length),
            // A degenerate edge that may not collapse is separated.
            None => len < self.degenerate_length,
        }
    }
    fn priority<B: Block>(&self, ctx: &Ctx<'_, B>, e: u32, _: u32) -> u32 {
        shortest_first(length(ctx, e))
    }
    fn fill<B: Block>(&self, fill: &mut FillIn<'_, B>) -> bool {
        let ctx = fill.ctx;
        let len = length(ctx, fill.seed());
        if len >= self.min_length {
            // A cap's apex edge (`flat_apex`): the apex moves off the line.
            return self.flat_caps != 0
                && flat_apex(ctx, fill.seed(), self.degenerate_length)
                && self.separate(fill);
        }
        let degenerate = len < self.degenerate_length;
        let Some(m) = self
            .target(ctx, fill.seed())
            .filter(|_| self.collapsible(fill))
        else {
            return degenerate && self.separate(fill);
        };
        // The cavity's side: its faces' summed normals (a new face that
        // replaces one of zero area must not face against it).
        let mut up = [0f32; 3];
        if degenerate {
            for f in fill.deleted_faces() {
                let [p, q, r] = ctx.face_vertices(f).map(|v| ctx.position(v));
                let n = normal(p, q, r);
                up = [up[0] + n[0], up[1] + n[1], up[2] + n[2]];
            }
        }
        let n = fill.boundary_len();
        let keeps_shape = (0..n).all(|i| {
            let h = fill.boundary_edge(i);
            let [x, y] = [fill.boundary_vertex(i), fill.boundary_end(i)].map(|v| ctx.position(v));
            // The old face on this boundary half-edge (it runs the same way
            // there) and the new one, x → y → m.
            let old = fill
                .deleted_faces()
                .find(|&f| (0..3).any(|j| ctx.copy.face_edge(f, j) == (h.edge, h.reversed)));
            let Some(f) = old else {
                return false;
            };
            let old = ctx.face_vertices(f).map(|v| ctx.position(v));
            if degenerate {
                // `m` is within `degenerate_length` of both vertices: the new
                // face is the old one barely moved, so only its side is
                // checked (an angle test could turn down a rounding-level
                // change of an old sliver, and leave the edge). A new face
                // of zero area that replaces one of zero area faces no way:
                // its normal is rounding. Where three vertices lie at one
                // point, the collapse of two of them leaves needles to the
                // third (the next collapse takes them) whose rounding
                // normals could face against `up`: the collapse was turned
                // down, and as the topology allows it, it was not
                // separated either (a generated mesh kept four faces of
                // zero area around a valence-4 vertex with two such edges).
                let [p, q, r] = old;
                let new = [x, y, m];
                if zero_area(old) {
                    zero_area(new) || dot(normal(x, y, m), up) >= 0.0
                } else {
                    dot(normal(x, y, m), normal(p, q, r)) >= 0.0
                }
            } else {
                norm(sub(m, x)) <= self.max_length && replaces_well(old, [x, y, m])
            }
        });
        // An open chain's last vertex gets a new edge too.
        let last = fill.boundary_end(n - 1);
        let last_short =
            fill.is_closed() || degenerate || norm(sub(m, ctx.position(last))) <= self.max_length;
        keeps_shape && last_short && star_fill(fill, m)
    }
}

cavity_device::cavity_kernels!(CollapseShortEdgesSafely);

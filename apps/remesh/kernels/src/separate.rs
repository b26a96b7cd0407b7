//! The separation of a degenerate edge that may not collapse (it would
//! pinch the surface or move a non-manifold vertex), and of the apex of a
//! cap in the final repair: one vertex moves along an edge or off the line
//! of its faces of zero area, and the cavity gets its old faces back
//! (issue 24).

use crate::boundary::BoundaryStar;
use crate::shape::{ZERO_HEIGHT, feature_edges, is_feature, zero_area};
use cavity_device::block::Block;
use cavity_device::dynamic::cavity::criteria::length;
use cavity_device::dynamic::cavity::fills::MAX_LOOP;
use cavity_device::dynamic::cavity::{Ctx, FillIn, HalfEdge};
use cavity_device::geometry::{cross, dot, norm, normal, smallest_angle_sin, sub};

/// Whether edge `e` runs from the apex of a face of zero area
/// ([`zero_area`]) with no edge shorter than `degenerate_length` (a cap:
/// the apex lies on the line of the longest edge) to the face's next
/// corner: the one seed per cap whose cavity (the apex's star) can move
/// the apex off that line (`CollapseShortEdgesSafely::separate`).
pub(crate) fn flat_apex<B: Block>(ctx: &Ctx<'_, B>, e: u32, degenerate_length: f32) -> bool {
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
pub(crate) const SEPARATE_SEED_FACES: u32 = 8;

/// Most faces a separation reproduces (`CollapseShortEdgesSafely::separate`).
pub(crate) const SEPARATE_FACES: usize = (MAX_LOOP + SEPARATE_SEED_FACES) as usize;

/// Most edges a separation reproduces: the seed and two per face.
pub(crate) const SEPARATE_EDGES: usize = 2 * SEPARATE_FACES + 1;

/// The moves of a separation: one vertex of the seed edge to a point, and
/// perhaps the other one too (`NO_MOVE` where not).
#[derive(Clone, Copy)]
pub(crate) struct Moves([(u32, [f32; 3]); 2]);

/// No vertex (the unused second move of [`Moves`]).
pub(crate) const NO_MOVE: u32 = u32::MAX;

impl Moves {
    /// Vertex `v` moved to `at`.
    pub(crate) fn one(v: u32, at: [f32; 3]) -> Moves {
        Moves([(v, at), (NO_MOVE, at)])
    }

    /// Where vertex `u` goes, if it moves.
    pub(crate) fn to(&self, u: u32) -> Option<[f32; 3]> {
        self.0
            .iter()
            .find(|m| m.0 == u && u != NO_MOVE)
            .map(|m| m.1)
    }

    /// The vertices that move.
    pub(crate) fn vertices(&self) -> impl Iterator<Item = u32> + '_ {
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
pub(crate) fn moved_score<B: Block>(
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
pub(crate) const NO_BETTER: f32 = -1.0;

/// The side the cavity's faces face, and whether it is a guess: the
/// summed normals of those that have area ([`zero_area`]); when none has,
/// the normal of the plane of two sides of its faces that are not
/// parallel (so that faces lifted off their lines within that plane
/// face one way), or where all of them lie on one line a direction
/// across it (the coordinate axis least along it); zero when the
/// cavity's vertices all coincide.
pub(crate) fn cavity_side<B: Block>(fill: &FillIn<'_, B>) -> ([f32; 3], bool) {
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
pub(crate) fn across_line(line: [f32; 3]) -> [f32; 3] {
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
pub(crate) fn longest_side(p: [[f32; 3]; 3]) -> [f32; 3] {
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
pub(crate) const LIFTS: [f32; 3] = [0.25, 0.05, 0.01];

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
pub(crate) fn lift<B: Block>(
    fill: &FillIn<'_, B>,
    v: u32,
    up: [f32; 3],
    t: f32,
) -> Option<[f32; 3]> {
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
pub(crate) fn flat_faces_at<'a, B: Block>(
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
pub(crate) fn across_side<B: Block>(ctx: &Ctx<'_, B>, f: u32, v: u32) -> Option<[f32; 3]> {
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
pub(crate) fn across<B: Block>(fill: &FillIn<'_, B>, v: u32, i: u32) -> Option<[f32; 3]> {
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
pub(crate) fn reproduce<B: Block>(fill: &mut FillIn<'_, B>, moves: Moves) -> bool {
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

/// The limits a separation keeps: those of the collapse it stands in for
/// (`CollapseShortEdgesSafely`'s fields of the same names).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Separation {
    /// Edges shorter than this are degenerate.
    pub(crate) degenerate_length: f32,
    /// Boundary vertices whose turning angle has a cosine below this are
    /// corners and stay.
    pub(crate) boundary_cos: f32,
    /// Feature threshold (dihedral angle cosine).
    pub(crate) feature_cos: f32,
}

impl Separation {
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
    pub(crate) fn separate<B: Block>(&self, fill: &mut FillIn<'_, B>) -> bool {
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
    pub(crate) fn lift_and_recentre<B: Block>(
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
}

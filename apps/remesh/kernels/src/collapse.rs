//! The collapse of short edges that keeps every new edge short and no face
//! folded, features and boundaries in place ([`CollapseShortEdgesSafely`]),
//! and the separation of degenerate edges it cannot collapse (in
//! [`separate`](crate::separate)).

use cavity_device::block::Block;
use cavity_device::dynamic::cavity::criteria::{length, shortest_first};
use cavity_device::dynamic::cavity::fills::{collapsible, simple_chain, star_fill};
use cavity_device::dynamic::cavity::{CavityApp, Ctx, FillIn, Template};
use cavity_device::geometry::{dot, midpoint, norm, normal, smallest_angle_sin, sub};

use crate::boundary::BoundaryStar;
use crate::separate::{SEPARATE_EDGES, SEPARATE_FACES, SEPARATE_SEED_FACES, Separation, flat_apex};
use crate::shape::{SLIVER_SIN, feature_edges, is_feature, zero_area};

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

impl CollapseShortEdgesSafely {
    /// The separation standing in for this collapse where it may not
    /// collapse a degenerate edge.
    #[inline(always)]
    fn separation(&self) -> Separation {
        Separation {
            degenerate_length: self.degenerate_length,
            boundary_cos: self.boundary_cos,
            feature_cos: self.feature_cos,
        }
    }

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
                && self.separation().separate(fill);
        }
        let degenerate = len < self.degenerate_length;
        let Some(m) = self
            .target(ctx, fill.seed())
            .filter(|_| self.collapsible(fill))
        else {
            return degenerate && self.separation().separate(fill);
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

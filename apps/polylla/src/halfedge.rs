//! The half-edge structure of a 2D triangulation (GPolylla, section 4):
//! arrays of `origin`, `twin`, `next` and `prev` per half-edge, with the
//! interior half-edges first, `3f + i` running from corner `i` to corner
//! `i + 1` of triangle `f` (counter-clockwise; the incident half-edge of
//! face `f` is `3f`), then one border half-edge per boundary edge, on the
//! exterior face, linked around the boundary loops. The queries:
//!
//! - `cw_vertex_edge(h) = next(twin(h))`: the half-edge out of
//!   `origin(h)` next clockwise;
//! - `ccw_vertex_edge(h) = twin(prev(h))`: next counter-clockwise;
//! - `is_border(h)`: `h` lies on the exterior face (`h >= interior`).
//!
//! Turning around a vertex by either query passes every half-edge out of
//! it once, the border one included.

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

use crate::PolyllaError;

/// No half-edge.
pub const NONE: u32 = u32::MAX;

/// A triangulation as half-edges, with its vertex positions.
#[derive(Clone, Debug, PartialEq)]
pub struct HalfEdges {
    /// Vertex positions, two coordinates each.
    pub positions: Vec<[f64; 2]>,
    /// The vertex each half-edge leaves.
    pub origin: Vec<u32>,
    /// The opposite half-edge.
    pub twin: Vec<u32>,
    /// The next half-edge around its face.
    pub next: Vec<u32>,
    /// The previous half-edge around its face.
    pub prev: Vec<u32>,
    /// A half-edge out of each vertex (`NONE` for a vertex of no triangle).
    pub edge_of_vertex: Vec<u32>,
    /// Interior half-edges (three per triangle); the border ones follow.
    pub interior: u32,
}

impl HalfEdges {
    /// The half-edges of `triangles` over `positions`. Triangles listed
    /// clockwise are turned counter-clockwise; twins are found by their
    /// vertex pairs.
    ///
    /// # Errors
    /// [`PolyllaError::Input`] for no triangles, a triangle naming a
    /// vertex that does not exist, a degenerate triangle (a repeated vertex or no area), or an
    /// edge of more than two triangles or of two triangles on one side.
    pub fn from_triangles(
        positions: Vec<[f64; 2]>,
        triangles: &[[u32; 3]],
    ) -> Result<HalfEdges, PolyllaError> {
        Self::from_triangles_with(positions, triangles, None)
    }

    /// [`HalfEdges::from_triangles`] with each triangle's neighbours given
    /// (Triangle's `.neigh`: neighbour `j` across the edge opposite corner
    /// `j`, [`NONE`] on the boundary), twins read off them instead of
    /// matched by vertex pairs.
    ///
    /// # Errors
    /// As [`HalfEdges::from_triangles`]; [`PolyllaError::Input`] too for a
    /// neighbour that does not exist or does not share the edge, or
    /// neighbours that do not name each other.
    pub fn from_triangles_with(
        positions: Vec<[f64; 2]>,
        triangles: &[[u32; 3]],
        neighbours: Option<&[[u32; 3]]>,
    ) -> Result<HalfEdges, PolyllaError> {
        if triangles.is_empty() {
            return Err(PolyllaError::Input(format!(
                "no triangles ({} vertices): Polylla needs at least one",
                positions.len()
            )));
        }
        let bad = |t: usize, what: String| PolyllaError::Input(format!("triangle {t}: {what}"));
        let n = positions.len();
        let mut tris = Vec::with_capacity(triangles.len());
        let mut across = Vec::new();
        for (t, &[a, b, c]) in triangles.iter().enumerate() {
            if let Some(v) = [a, b, c].into_iter().find(|&v| v as usize >= n) {
                return Err(bad(t, format!("vertex {v}, but there are {n} vertices")));
            }
            // The exact sign (Shewchuk's adaptive predicate): a nearly flat
            // triangle of a Delaunay triangulation is not taken for a
            // degenerate one, nor turned over, by rounding.
            let point = |v: u32| {
                let [x, y] = positions[v as usize];
                robust::Coord { x, y }
            };
            let area = robust::orient2d(point(a), point(b), point(c));
            if a == b || b == c || a == c || area == 0.0 {
                return Err(bad(t, "degenerate (no area)".into()));
            }
            tris.push(if area > 0.0 { [a, b, c] } else { [a, c, b] });
            if let Some(nb) = neighbours {
                let [n0, n1, n2] = *nb
                    .get(t)
                    .ok_or_else(|| bad(t, "no neighbours listed".into()))?;
                across.push(if area > 0.0 {
                    [n0, n1, n2]
                } else {
                    [n0, n2, n1]
                });
            }
        }
        let interior = 3 * tris.len();
        let mut origin = Vec::with_capacity(interior);
        let mut next = Vec::with_capacity(interior);
        let mut prev = Vec::with_capacity(interior);
        for (f, t) in tris.iter().enumerate() {
            for (i, &corner) in t.iter().enumerate() {
                origin.push(corner);
                next.push((3 * f + (i + 1) % 3) as u32);
                prev.push((3 * f + (i + 2) % 3) as u32);
            }
        }
        // The target of interior half-edge `h`: the origin of the next.
        let targets: Vec<u32> = (0..interior).map(|h| origin[next[h] as usize]).collect();
        let mut twin = if neighbours.is_some() {
            twins_of_neighbours(&origin, &targets, &across)?
        } else {
            twins_by_pairs(&origin, &targets)?
        };
        add_border(&mut origin, &mut twin, &mut next, &mut prev).ok_or_else(|| {
            PolyllaError::Input("the triangles around a boundary vertex do not close".into())
        })?;
        Ok(HalfEdges::of_parts(
            positions,
            [origin, twin, next, prev],
            interior as u32,
        ))
    }

    /// The half-edges of their arrays (`origin`, `twin`, `next`, `prev`,
    /// the first `interior` of them three per triangle), with a half-edge
    /// out of each vertex found, in parallel: the smallest.
    pub(crate) fn of_parts(
        positions: Vec<[f64; 2]>,
        [origin, twin, next, prev]: [Vec<u32>; 4],
        interior: u32,
    ) -> HalfEdges {
        let smallest: Vec<AtomicU32> = (0..positions.len())
            .into_par_iter()
            .map(|_| AtomicU32::new(NONE))
            .collect();
        origin.par_iter().enumerate().for_each(|(h, &v)| {
            smallest[v as usize].fetch_min(h as u32, Ordering::Relaxed);
        });
        let edge_of_vertex = smallest
            .into_par_iter()
            .map(AtomicU32::into_inner)
            .collect();
        HalfEdges {
            positions,
            origin,
            twin,
            next,
            prev,
            edge_of_vertex,
            interior,
        }
    }

    /// Half-edges, interior and border.
    pub fn len(&self) -> usize {
        self.origin.len()
    }

    /// Whether there are no half-edges.
    pub fn is_empty(&self) -> bool {
        self.origin.is_empty()
    }

    /// Triangles.
    pub fn triangles(&self) -> usize {
        self.interior as usize / 3
    }

    /// The vertex `h` points to.
    pub fn target(&self, h: u32) -> u32 {
        self.origin[self.twin[h as usize] as usize]
    }

    /// Whether `h` lies on the exterior face.
    pub fn is_border(&self, h: u32) -> bool {
        h >= self.interior
    }

    /// Whether the edge of `h` is on the boundary (`h` or its twin on the
    /// exterior face).
    pub fn is_border_edge(&self, h: u32) -> bool {
        self.is_border(h) || self.is_border(self.twin[h as usize])
    }

    /// The half-edge out of `origin(h)` next clockwise.
    pub fn cw_vertex_edge(&self, h: u32) -> u32 {
        self.next[self.twin[h as usize] as usize]
    }

    /// The half-edge out of `origin(h)` next counter-clockwise.
    pub fn ccw_vertex_edge(&self, h: u32) -> u32 {
        self.twin[self.prev[h as usize] as usize]
    }

    /// The squared length of `h`'s edge.
    pub fn length2(&self, h: u32) -> f64 {
        let [ax, ay] = self.positions[self.origin[h as usize] as usize];
        let [bx, by] = self.positions[self.target(h) as usize];
        let (dx, dy) = (bx - ax, by - ay);
        dx * dx + dy * dy
    }

    /// The area of the triangles.
    pub fn area(&self) -> f64 {
        (0..self.triangles())
            .map(|f| {
                let p = |i: usize| self.positions[self.origin[3 * f + i] as usize];
                orient(p(0), p(1), p(2)) / 2.0
            })
            .sum()
    }
}

/// Adds a border half-edge for each interior half-edge without a twin
/// (`origin`, `twin`, `next`, `prev` of the interior half-edges, three a
/// triangle) and links the border half-edges around the boundary loops.
/// `None` where the walk around a boundary vertex does not reach the
/// boundary (twins that do not fit). The arrays grow by the border
/// half-edges: room made for them beforehand saves a copy.
pub(crate) fn add_border(
    origin: &mut Vec<u32>,
    twin: &mut Vec<u32>,
    next: &mut Vec<u32>,
    prev: &mut Vec<u32>,
) -> Option<()> {
    let interior = origin.len();
    let open: Vec<usize> = (0..interior)
        .into_par_iter()
        .filter(|&h| twin[h] == NONE)
        .collect();
    for h in open {
        let g = origin.len() as u32;
        origin.push(origin[next[h] as usize]);
        twin.push(h as u32);
        twin[h] = g;
        next.push(NONE);
        prev.push(NONE);
    }
    // A border half-edge `b` (a to v) continues with the border half-edge
    // out of v across the triangles at v from `twin(b)`.
    for b in interior..origin.len() {
        let mut h = twin[b] as usize;
        for _ in 0..=interior {
            let t = twin[prev[h] as usize] as usize;
            if t >= interior {
                next[b] = t as u32;
                prev[t] = b as u32;
                break;
            }
            h = t;
        }
        if next[b] == NONE {
            return None;
        }
    }
    Some(())
}

/// Twice the signed area of triangle `(a, b, c)`: positive when
/// counter-clockwise.
pub fn orient(a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> f64 {
    (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
}

/// The twins of the interior half-edges (`origin`, `targets`) matched by
/// their vertex pairs ([`NONE`] on the boundary): the half-edges sorted
/// by their edge's vertex pair in parallel, each run of one pair the two
/// half-edges of an edge (or one, on the boundary).
fn twins_by_pairs(origin: &[u32], targets: &[u32]) -> Result<Vec<u32>, PolyllaError> {
    let key = |h: usize| {
        let (a, b) = (origin[h], targets[h]);
        (u64::from(a.min(b)) << 32 | u64::from(a.max(b)), h as u32)
    };
    let mut keys: Vec<(u64, u32)> = (0..origin.len()).into_par_iter().map(key).collect();
    keys.par_sort_unstable();
    let mut twin = vec![NONE; origin.len()];
    let mut at = 0;
    while at < keys.len() {
        let run = keys[at..].iter().take_while(|k| k.0 == keys[at].0).count();
        let (h, g) = (keys[at].1 as usize, keys[at + run - 1].1 as usize);
        if run > 2 || (run == 2 && origin[h] == origin[g]) {
            let (a, b) = (origin[h], targets[h]);
            return Err(PolyllaError::Input(format!(
                "triangle {}: edge ({a}, {b}) is used the same way by another triangle (overlap or a non-manifold edge)",
                h / 3
            )));
        }
        if run == 2 {
            twin[h] = g as u32;
            twin[g] = h as u32;
        }
        at += run;
    }
    Ok(twin)
}

/// The twins of the interior half-edges (`origin`, `targets`) read off
/// each triangle's neighbours across its corners' opposite edges
/// (`across`), checked: the neighbour shares the edge, and the two name
/// each other.
fn twins_of_neighbours(
    origin: &[u32],
    targets: &[u32],
    across: &[[u32; 3]],
) -> Result<Vec<u32>, PolyllaError> {
    let bad = |t: usize, what: String| PolyllaError::Input(format!("triangle {t}: {what}"));
    let mut twin = vec![NONE; origin.len()];
    for (h, t) in twin.iter_mut().enumerate() {
        let (f, i) = (h / 3, h % 3);
        let u = across[f][(i + 2) % 3];
        if u == NONE {
            continue;
        }
        let (a, b) = (origin[h], targets[h]);
        let found = (3 * u as usize..3 * u as usize + 3)
            .filter(|&g| g < origin.len())
            .find(|&g| origin[g] == b && targets[g] == a);
        *t = match found {
            Some(g) if across[g / 3][(g % 3 + 2) % 3] == f as u32 => g as u32,
            _ => {
                return Err(bad(
                    f,
                    format!("neighbour {u} across edge ({a}, {b}) does not share it back"),
                ));
            }
        };
    }
    Ok(twin)
}

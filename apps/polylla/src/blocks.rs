//! The Delaunay triangulation of many points in blocks, in parallel
//! (Funke and Sanders, "Parallel d-D Delaunay Triangulations in Shared
//! and Distributed Memory", ALENEX 2017, section 3, in two dimensions):
//!
//! 1. the distinct points, sorted by `(x, y)`, are cut into columns of
//!    equal counts, each column's points, sorted by `(y, x)`, into blocks
//!    of equal counts ([`blocks_for`]); each block is triangulated by
//!    spade, in parallel;
//! 2. a block's triangle is *final* when its circumcircle lies strictly
//!    inside the block's *box*: between the neighbouring columns' points
//!    in x and the neighbouring blocks' of its column in y (in floating
//!    point, with a margin of 1e-12 times a bound of the centre's and the
//!    radius' rounding). No point of another block is in or on it, so it
//!    is a Delaunay triangle of all the points;
//! 3. the *border* vertices, those of the other triangles and of the
//!    blocks' hulls, are triangulated once more, serially (about `3 √n`
//!    points a cut for uniform points);
//! 4. of the border triangulation, the triangles on the far side of the
//!    final triangles' *walls* (their edges to a triangle that is not
//!    final, or to the block's outside), and those reached from them
//!    without crossing a wall, fill the rest.
//!
//! Why the join is a Delaunay triangulation: a wall has no point on the
//! final triangle's circle beyond it (such a point would make the
//! neighbour across it a triangle of the same circle, final too), so a
//! circle through its ends slightly tilted away from the final triangle
//! holds no other point; the wall is then an edge of every Delaunay
//! triangulation of the border vertices, and the fill tiles what the
//! final triangles leave. Every edge of the join is then locally Delaunay
//! (inside a block, inside the fill, and across a wall, where the final
//! triangle's circle holds no point), so the join is a Delaunay
//! triangulation; for points in general position, the one.
//!
//! The join is checked (twins and next/prev consistent, every vertex in a
//! triangle, one boundary loop, Euler's count, and by exact predicates
//! every edge locally Delaunay and the boundary convex: the result is the
//! Delaunay triangulation whatever the rounding did); where a check
//! fails, [`delaunay_half_edges_in_blocks`] says so and the caller
//! triangulates serially. The blocks depend on the points' count alone,
//! so the result is the same on any number of threads.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};

use cavity::topology::split_lengths;
use rayon::prelude::*;
use spade::Triangulation as _;
use spade::handles::{FaceHandle, InnerTag};

use crate::PolyllaError;
use crate::halfedge::{HalfEdges, NONE, add_border};
use crate::points::{Distinct, Site, SiteTriangulation};

/// The fewest points [`delaunay_half_edges`](crate::generate::delaunay_half_edges)
/// triangulates in blocks; below, spade's serial triangulation is as
/// fast.
pub const PARALLEL_POINTS: usize = 1 << 19;

/// Points a block ([`blocks_for`]): small enough that a block's
/// triangulation stays in the caches.
pub const POINTS_PER_BLOCK: usize = 1 << 15;

/// The most columns and blocks a column: each cut adds its border to the
/// serial part.
pub const MAX_SIDE: usize = 16;

/// The `[columns, blocks a column]` `points` points are cut into: `[1,
/// 1]` below [`PARALLEL_POINTS`], else about [`POINTS_PER_BLOCK`] points a
/// block, as many columns as rows, at least 2 by 2 and at most
/// [`MAX_SIDE`] by [`MAX_SIDE`]. A function of the count alone, not of the
/// threads.
pub fn blocks_for(points: usize) -> [usize; 2] {
    if points < PARALLEL_POINTS {
        return [1, 1];
    }
    let side = ((points / POINTS_PER_BLOCK) as f64).sqrt().ceil() as usize;
    let side = side.clamp(2, MAX_SIDE);
    [side, side]
}

/// A directed edge `(a, b)` as one word.
fn key(a: u32, b: u32) -> u64 {
    u64::from(a) << 32 | u64::from(b)
}

/// Inner face `f` (from 0) of `t`.
fn face(t: &SiteTriangulation, f: usize) -> FaceHandle<'_, InnerTag, Site, (), (), ()> {
    t.inner_faces().nth(f).expect("an inner face")
}

/// A block's box: no point of another block lies strictly inside
/// `(x[0], x[1]) × (y[0], y[1])`.
#[derive(Clone, Copy, Debug)]
struct Bounds {
    x: [f64; 2],
    y: [f64; 2],
}

impl Bounds {
    /// Whether the circumcircle of `(a, b, c)` lies strictly inside the
    /// box, with a margin for the rounding of its centre and radius:
    /// conservative (a circle this says is inside is), and false for a
    /// flat triangle.
    fn holds_circle(&self, a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> bool {
        let (bx, by) = (b[0] - a[0], b[1] - a[1]);
        let (cx, cy) = (c[0] - a[0], c[1] - a[1]);
        let cross = bx * cy - by * cx;
        let (b2, c2) = (bx * bx + by * by, cx * cx + cy * cy);
        let ux = (cy * b2 - by * c2) / (2.0 * cross);
        let uy = (bx * c2 - cx * b2) / (2.0 * cross);
        let r = ux.hypot(uy);
        let (x, y) = (a[0] + ux, a[1] + uy);
        // A bound, far above the rounding (1e-12 against the unit
        // roundoff's 1.1e-16), on the error of the centre and the radius:
        // the numerators' terms over the cross product (the numerators'
        // rounding), the centre times the cross product's condition (its
        // cancellation), and the coordinates (the subtractions).
        let numerators =
            ((cy * b2).abs() + (by * c2).abs() + (bx * c2).abs() + (cx * b2).abs()) / cross.abs();
        let condition = ((bx * cy).abs() + (by * cx).abs()) / cross.abs();
        let slack = 1e-12
            * (numerators
                + (r + ux.abs() + uy.abs()) * (1.0 + condition)
                + a[0].abs()
                + a[1].abs());
        let reach = r + slack;
        x - reach > self.x[0]
            && x + reach < self.x[1]
            && y - reach > self.y[0]
            && y + reach < self.y[1]
    }
}

/// What the join takes of a block's triangulation.
struct Block {
    /// The final triangles' half-edges, numbered in the block from 0 (3 a
    /// triangle, in spade's order): `origin`, `twin` (`NONE` across a
    /// wall), `next`, `prev`.
    half_edges: [Vec<u32>; 4],
    /// The border vertices.
    border: Vec<Site>,
    /// The walls: each one's key and its half-edge in the block.
    walls: Vec<(u64, u32)>,
    /// The block's hull edges: as many as its hull vertices, whose
    /// sum bounds the hull's edges of all the points.
    hull: usize,
}

impl Block {
    /// Triangulates the vertices `ids` and finds the final triangles (as
    /// half-edges, written while spade's structure is in the caches), the
    /// border vertices and the walls.
    fn new(distinct: &Distinct, ids: &[u32], bounds: Bounds) -> Result<Block, PolyllaError> {
        let t = SiteTriangulation::bulk_load(distinct.sites(ids))
            .map_err(|e| PolyllaError::Triangulation(format!("{e:?}")))?;
        let faces = t.num_inner_faces();
        let flags: Vec<bool> = (0..faces)
            .into_par_iter()
            .map(|f| {
                let [a, b, c] = face(&t, f)
                    .vertices()
                    .map(|v| [v.position().x, v.position().y]);
                bounds.holds_circle(a, b, c)
            })
            .collect();
        let finals: Vec<u32> = (0..faces as u32).filter(|&f| flags[f as usize]).collect();
        let mut half_edges = [(); 4].map(|()| filled(3 * finals.len(), 3 * finals.len()));
        write_faces(
            (&t, &finals),
            0,
            &HashMap::new(),
            half_edges.each_mut().map(|a| a.as_mut_slice()),
        );
        let mut on_border = vec![false; t.num_vertices()];
        for (f, &is) in flags.iter().enumerate() {
            if !is {
                for v in face(&t, f).vertices() {
                    on_border[v.fix().index()] = true;
                }
            }
        }
        let mut hull = 0;
        for e in t.directed_edges().filter(|e| e.is_outer_edge()) {
            on_border[e.from().fix().index()] = true;
            hull += 1;
        }
        let border = t
            .vertices()
            .filter(|v| on_border[v.fix().index()])
            .map(|v| *v.data())
            .collect();
        let [origin, twin, next, _] = &half_edges;
        let walls = (0..twin.len())
            .filter(|&h| twin[h] == NONE)
            .map(|h| (key(origin[h], origin[next[h] as usize]), h as u32))
            .collect();
        Ok(Block {
            half_edges,
            border,
            walls,
            hull,
        })
    }

    /// Triangles.
    fn triangles(&self) -> usize {
        self.half_edges[0].len() / 3
    }
}

/// `len` words of `NONE`, room for `capacity`, written in parallel (the
/// pages touched by many threads).
fn filled(len: usize, capacity: usize) -> Vec<u32> {
    let mut v = Vec::with_capacity(capacity.max(len));
    v.par_extend(rayon::iter::repeat_n(NONE, len));
    v
}

/// The blocks of [`delaunay_half_edges_in_blocks`]: each block's vertices
/// and box, column by column, each column's from the bottom.
fn cut(distinct: &Distinct, [columns, rows]: [usize; 2]) -> Vec<(Vec<u32>, Bounds)> {
    let m = distinct.by_x.len();
    let at = |v: u32| distinct.positions[v as usize];
    // The bounds along `axis` of the run `sorted[start..end]` of vertices
    // sorted along it: the neighbouring runs' nearest coordinates,
    // infinite past the ends.
    let between = |sorted: &[u32], start: usize, end: usize, axis: usize| {
        [
            start
                .checked_sub(1)
                .map_or(f64::NEG_INFINITY, |k| at(sorted[k])[axis]),
            sorted.get(end).map_or(f64::INFINITY, |&v| at(v)[axis]),
        ]
    };
    let column_start = |i: usize| i * m / columns;
    (0..columns)
        .into_par_iter()
        .flat_map_iter(|i| {
            let (start, end) = (column_start(i), column_start(i + 1));
            let x = between(&distinct.by_x, start, end, 0);
            let mut by_y = distinct.by_x[start..end].to_vec();
            by_y.sort_unstable_by(|&a, &b| {
                let (p, q) = (at(a), at(b));
                p[1].total_cmp(&q[1]).then(p[0].total_cmp(&q[0]))
            });
            let n = by_y.len();
            let row_start = move |j: usize| j * n / rows;
            (0..rows)
                .map(|j| {
                    let (lo, hi) = (row_start(j), row_start(j + 1));
                    let y = between(&by_y, lo, hi, 1);
                    (by_y[lo..hi].to_vec(), Bounds { x, y })
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The half-edges of the Delaunay triangulation of `points` triangulated
/// in `[columns, blocks a column]` blocks in parallel and joined (see the
/// [module](self)): the blocks' final triangles first, block by block in
/// spade's order, then the border triangulation's, then the boundary;
/// the vertices are the distinct points in input order. For points in
/// general position the triangles are those of
/// [`delaunay_half_edges_serial`](crate::generate::delaunay_half_edges_serial);
/// with cocircular points, a Delaunay triangulation.
///
/// `Ok(None)` where the blocks do not apply: a single block, fewer than
/// 3 distinct points a block, or a join that fails its check (the caller
/// triangulates serially then; no input known fails it).
///
/// # Errors
/// [`PolyllaError::Triangulation`] for a coordinate spade refuses (not
/// finite, or too large or small).
pub fn delaunay_half_edges_in_blocks(
    points: &[[f64; 2]],
    blocks: [usize; 2],
) -> Result<Option<HalfEdges>, PolyllaError> {
    Ok(join(points, blocks)?.map(|(half_edges, _)| half_edges))
}

/// [`delaunay_half_edges_in_blocks`], with the number of the blocks'
/// final triangles (the rest are the serial fill's).
fn join(
    points: &[[f64; 2]],
    [columns, rows]: [usize; 2],
) -> Result<Option<(HalfEdges, usize)>, PolyllaError> {
    let distinct = Distinct::of(points)?;
    let count = columns.max(1).saturating_mul(rows.max(1));
    if count < 2 || distinct.by_x.len() < 3 * count {
        return Ok(None);
    }
    let blocks: Vec<Block> = cut(&distinct, [columns.max(1), rows.max(1)])
        .into_par_iter()
        .map(|(ids, bounds)| Block::new(&distinct, &ids, bounds))
        .collect::<Result<_, _>>()?;
    let mut firsts = Vec::with_capacity(blocks.len());
    let mut finals = 0u32;
    for block in &blocks {
        firsts.push(finals);
        finals += block.triangles() as u32;
    }
    // The walls by their keys, with their half-edges' numbers.
    let walls: HashMap<u64, u32> = blocks
        .iter()
        .zip(&firsts)
        .flat_map(|(block, &first)| block.walls.iter().map(move |&(k, h)| (k, 3 * first + h)))
        .collect();
    let border: Vec<Site> = blocks
        .iter()
        .flat_map(|block| block.border.iter().copied())
        .collect();
    let b = SiteTriangulation::bulk_load(border)
        .map_err(|e| PolyllaError::Triangulation(format!("{e:?}")))?;
    let fill = fill_faces(&b, &walls);
    let interior = 3 * (finals as usize + fill.len());
    let hull: usize = blocks.iter().map(|block| block.hull).sum();
    let [mut origin, mut twin, mut next, mut prev] =
        [(); 4].map(|()| filled(interior, interior + hull));
    let rest = 3 * finals as usize;
    // The blocks' half-edges, renumbered.
    for (k, array) in [&mut origin, &mut twin, &mut next, &mut prev]
        .into_iter()
        .enumerate()
    {
        let lengths = blocks.iter().map(|block| 3 * block.triangles());
        split_lengths(&mut array[..rest], lengths)
            .into_par_iter()
            .zip(&blocks)
            .zip(&firsts)
            .for_each(|((to, block), &first)| {
                // Vertex numbers are kept, half-edge numbers moved.
                let shift = if k == 0 { 0 } else { 3 * first };
                to.par_iter_mut()
                    .zip(&block.half_edges[k])
                    .for_each(|(to, &h)| *to = if h == NONE { NONE } else { h + shift });
            });
    }
    drop(blocks);
    // The fill, whose walls' twins are the blocks' walls' too.
    write_faces(
        (&b, &fill),
        finals,
        &walls,
        [
            &mut origin[rest..],
            &mut twin[rest..],
            &mut next[rest..],
            &mut prev[rest..],
        ],
    );
    drop(b);
    for h in rest..interior {
        let g = twin[h] as usize;
        if g < rest {
            twin[g] = h as u32;
        }
    }
    if add_border(&mut origin, &mut twin, &mut next, &mut prev).is_none() {
        return Ok(None);
    }
    let half_edges = HalfEdges::of_parts(
        distinct.positions,
        [origin, twin, next, prev],
        interior as u32,
    );
    Ok(joined(&half_edges).then_some((half_edges, finals as usize)))
}

/// The inner faces of the border triangulation `b` that fill the space
/// the final triangles leave, in spade's order: those on the far side of
/// a wall, and those reached from them without crossing one (all of them
/// where there are no walls: no final triangle).
fn fill_faces(b: &SiteTriangulation, walls: &HashMap<u64, u32>) -> Vec<u32> {
    let faces = b.num_inner_faces();
    let beyond_wall = |e: &spade::handles::DirectedEdgeHandle<'_, Site, (), (), ()>| {
        walls.contains_key(&key(e.to().data().id, e.from().data().id))
    };
    let mut stack: Vec<usize> = (0..faces)
        .into_par_iter()
        .filter(|&f| face(b, f).adjacent_edges().iter().any(beyond_wall))
        .collect();
    let mut in_fill = vec![walls.is_empty(); faces];
    for &f in &stack {
        in_fill[f] = true;
    }
    while let Some(f) = stack.pop() {
        for e in face(b, f).adjacent_edges() {
            if beyond_wall(&e) {
                continue;
            }
            if let Some(g) = e.rev().face().as_inner() {
                let g = g.fix().index() - 1;
                if !in_fill[g] {
                    in_fill[g] = true;
                    stack.push(g);
                }
            }
        }
    }
    (0..faces as u32).filter(|&f| in_fill[f as usize]).collect()
}

/// Writes `faces` of `t` (inner faces), numbered from `first`, into the
/// arrays' slices (`3 *` the faces each): a twin among them from spade's
/// reversed edge, otherwise the half-edge `across` holds for the reversed
/// edge (`NONE`: none, or not yet known).
///
/// Two passes: each half-edge's reversed spade edge is kept in its twin's
/// place while each spade edge's half-edge is scattered, then the twins
/// are gathered; spade's structure is read once a face.
fn write_faces(
    (t, faces): (&SiteTriangulation, &[u32]),
    first: u32,
    across: &HashMap<u64, u32>,
    [origin, twin, next, prev]: [&mut [u32]; 4],
) {
    let half_edge: Vec<AtomicU32> = (0..t.num_directed_edges())
        .into_par_iter()
        .map(|_| AtomicU32::new(NONE))
        .collect();
    origin
        .par_chunks_mut(3)
        .zip(twin.par_chunks_mut(3))
        .zip(next.par_chunks_mut(3))
        .zip(prev.par_chunks_mut(3))
        .zip(faces)
        .enumerate()
        .for_each(|(c, ((((origin, twin), next), prev), &f))| {
            let h0 = 3 * (first + c as u32);
            for (i, e) in face(t, f as usize).adjacent_edges().iter().enumerate() {
                origin[i] = e.from().data().id;
                next[i] = h0 + (i as u32 + 1) % 3;
                prev[i] = h0 + (i as u32 + 2) % 3;
                twin[i] = e.fix().rev().index() as u32;
                half_edge[e.fix().index()].store(h0 + i as u32, Ordering::Relaxed);
            }
        });
    let origin = &*origin;
    let next = &*next;
    twin.par_iter_mut().enumerate().for_each(|(k, twin)| {
        let g = half_edge[*twin as usize].load(Ordering::Relaxed);
        *twin = if g != NONE {
            g
        } else {
            let (a, z) = (origin[k], origin[(next[k] - 3 * first) as usize]);
            across.get(&key(z, a)).copied().unwrap_or(NONE)
        };
    });
}

/// The join's check: every half-edge its twin's twin and its previous
/// one's next, every vertex in a triangle, one boundary loop, Euler's
/// count of triangles for a triangulated disk (`2 V - B - 2`; a hole or a
/// missing triangle breaks it); then, by Shewchuk's exact predicates,
/// every triangle counter-clockwise, every interior edge locally
/// Delaunay, and the boundary convex: the Delaunay triangulation of the
/// points (a triangulation of their hull whose edges are all locally
/// Delaunay), whatever the rounding of the final triangles' test did.
fn joined(h: &HalfEdges) -> bool {
    let consistent = (0..h.len()).into_par_iter().all(|e| {
        let (t, p) = (h.twin[e], h.prev[e]);
        t != NONE
            && p != NONE
            && h.twin[t as usize] as usize == e
            && h.next[p as usize] as usize == e
            && h.origin[t as usize] == h.origin[h.next[e] as usize]
    });
    if !consistent || h.edge_of_vertex.par_iter().any(|&e| e == NONE) {
        return false;
    }
    let (interior, border) = (h.interior as usize, h.len() - h.interior as usize);
    let mut loop_length = 0;
    if border > 0 {
        let mut e = h.interior;
        loop {
            loop_length += 1;
            e = h.next[e as usize];
            if e == h.interior || loop_length > border {
                break;
            }
        }
    }
    if loop_length != border || 2 * h.positions.len() != h.triangles() + border + 2 {
        return false;
    }
    let at = |v: u32| {
        let [x, y] = h.positions[v as usize];
        robust::Coord { x, y }
    };
    let delaunay = (0..h.triangles()).into_par_iter().all(|f| {
        let [a, b, c] = [0, 1, 2].map(|i| at(h.origin[3 * f + i]));
        robust::orient2d(a, b, c) > 0.0
            && (0..3).all(|i| {
                let (e, t) = (3 * f + i, h.twin[3 * f + i] as usize);
                // Each interior edge once, from its smaller half-edge.
                t >= interior
                    || t < e
                    || robust::incircle(a, b, c, at(h.origin[h.prev[t] as usize])) <= 0.0
            })
    });
    // The boundary runs clockwise: no turn to the left.
    let convex = (interior..h.len()).into_par_iter().all(|e| {
        let n = h.next[e] as usize;
        let turn = [e, n, h.next[n] as usize].map(|k| at(h.origin[k]));
        robust::orient2d(turn[0], turn[1], turn[2]) <= 0.0
    });
    delaunay && convex
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{delaunay, delaunay_half_edges_serial, random_points};

    #[test]
    fn most_triangles_of_uniform_points_are_final() {
        let points = random_points(40_000, 9);
        let (half_edges, finals) = join(&points, [4, 4]).unwrap().unwrap();
        assert!(
            finals * 10 > 9 * half_edges.triangles(),
            "{finals} of {}",
            half_edges.triangles()
        );
    }

    /// The triangles of spade's triangulation of `points` with `change`
    /// made to them, as half-edges.
    fn changed(points: &[[f64; 2]], change: impl FnOnce(&mut Vec<[u32; 3]>)) -> HalfEdges {
        let mut t = delaunay(points).unwrap();
        change(&mut t.triangles);
        HalfEdges::from_triangles(t.positions, &t.triangles).unwrap()
    }

    #[test]
    fn the_check_refuses_what_is_not_the_delaunay_triangulation() {
        let points = random_points(2000, 4);
        assert!(joined(&delaunay_half_edges_serial(&points).unwrap()));
        let h = changed(&points, |_| ());
        assert!(joined(&h));
        let at = |v: u32| {
            let [x, y] = h.positions[v as usize];
            robust::Coord { x, y }
        };
        // An interior edge of a convex quadrilateral flipped: not
        // locally Delaunay.
        let flip = (0..h.interior as usize)
            .find_map(|e| {
                let t = h.twin[e] as usize;
                if t >= h.interior as usize {
                    return None;
                }
                let (a, b) = (h.origin[e], h.origin[t]);
                let (c, d) = (h.origin[h.prev[e] as usize], h.origin[h.prev[t] as usize]);
                let convex = robust::orient2d(at(a), at(d), at(c)) > 0.0
                    && robust::orient2d(at(d), at(b), at(c)) > 0.0;
                convex.then_some(((e / 3, t / 3), [[a, d, c], [d, b, c]]))
            })
            .unwrap();
        let flipped = changed(&points, |t| {
            t[flip.0.0] = flip.1[0];
            t[flip.0.1] = flip.1[1];
        });
        assert!(!joined(&flipped));
        // A triangle on the hull left out: the boundary is not convex.
        let on_hull = h.twin[h.interior as usize] as usize / 3;
        assert!(!joined(&changed(&points, |t| {
            t.remove(on_hull);
        })));
        // An inner triangle left out: a hole, two boundary loops.
        let inner = (0..h.triangles())
            .find(|&f| (0..3).all(|i| !h.is_border_edge((3 * f + i) as u32)))
            .unwrap();
        assert!(!joined(&changed(&points, |t| {
            t.remove(inner);
        })));
        // A point in no triangle.
        let mut t = delaunay(&points).unwrap();
        t.positions.push([0.5, 0.5 + 1e-9]);
        assert!(!joined(
            &HalfEdges::from_triangles(t.positions, &t.triangles).unwrap()
        ));
        // Two triangulations apart: two boundary loops.
        let far: Vec<[f64; 2]> = points.iter().map(|&[x, y]| [x + 10.0, y]).collect();
        let (mut near, apart) = (delaunay(&points).unwrap(), delaunay(&far).unwrap());
        let shift = near.positions.len() as u32;
        near.positions.extend(apart.positions);
        near.triangles
            .extend(apart.triangles.iter().map(|t| t.map(|v| v + shift)));
        assert!(!joined(
            &HalfEdges::from_triangles(near.positions, &near.triangles).unwrap()
        ));
        // Twins that do not name each other.
        let mut broken = h.clone();
        broken.twin.swap(0, 1);
        assert!(!joined(&broken));
    }
}

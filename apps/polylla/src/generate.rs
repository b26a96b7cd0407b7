//! Delaunay triangulations of points (by `spade`: serially, or in blocks
//! in parallel by [`crate::blocks`] for large inputs; the vertices are the
//! distinct points in input order) and the generated inputs of GPolylla's
//! section 7.1: `n` uniformly random points in the unit square (its
//! corners included, so that the square is the domain) and a uniform
//! `n × n` grid of points (many cocircular quadruples: the triangulation
//! splits each square by one diagonal).

use rand::{RngExt, SeedableRng};
use rand_xorshift::XorShiftRng;
use std::collections::HashMap;

use rayon::prelude::*;
use spade::Triangulation as _;
use spade::handles::DirectedEdgeHandle;

use crate::blocks::{blocks_for, delaunay_half_edges_in_blocks};
use crate::halfedge::{HalfEdges, NONE};
pub use crate::points::MOST_POINTS;
use crate::points::{Distinct, Site, SiteTriangulation};
use crate::{PolyllaError, Triangulation};

/// Spade's Delaunay triangulation of the distinct points of `points`,
/// which must hold a triangle.
///
/// # Errors
/// [`PolyllaError::Triangulation`] for a non-finite coordinate;
/// [`PolyllaError::Input`] when no triangle can be formed (fewer than
/// three distinct points, or all of them on one line), naming the counts.
fn triangulate(points: &[[f64; 2]]) -> Result<(Distinct, SiteTriangulation), PolyllaError> {
    let distinct = Distinct::of(points)?;
    let t = SiteTriangulation::bulk_load(distinct.sites(&distinct.by_x))
        .map_err(|e| PolyllaError::Triangulation(format!("{e:?}")))?;
    if t.num_inner_faces() == 0 {
        let (n, distinct) = (points.len(), t.num_vertices());
        return Err(PolyllaError::Input(if distinct < 3 {
            format!(
                "no triangle can be formed: {n} points, {distinct} distinct (a triangle needs 3)"
            )
        } else {
            format!(
                "no triangle can be formed: all {distinct} distinct points (of {n}) lie on one line"
            )
        }));
    }
    Ok((distinct, t))
}

/// The Delaunay triangulation of `points` by spade, serially: its
/// vertices (the distinct points in input order) and its triangles,
/// counter-clockwise.
///
/// # Errors
/// [`PolyllaError::Triangulation`] for a non-finite coordinate;
/// [`PolyllaError::Input`] when the points hold no triangle (fewer than
/// three distinct, or all collinear).
pub fn delaunay(points: &[[f64; 2]]) -> Result<Triangulation, PolyllaError> {
    let (distinct, t) = triangulate(points)?;
    let triangles = t
        .inner_faces()
        .map(|f| f.vertices().map(|v| v.data().id))
        .collect();
    Ok(Triangulation {
        positions: distinct.positions,
        triangles,
        neighbours: None,
    })
}

/// The half-edges of the Delaunay triangulation of `points`; its vertices
/// are the distinct points in input order.
///
/// From [`PARALLEL_POINTS`](crate::blocks::PARALLEL_POINTS) points on, the
/// points are triangulated in blocks in parallel and the blocks' borders
/// joined ([`delaunay_half_edges_in_blocks`], Funke and Sanders 2017);
/// below that, or where the join's check fails, by spade serially
/// ([`delaunay_half_edges_serial`]). The two give the same triangles for
/// points in general position (no four on a circle); with cocircular
/// points either is a Delaunay triangulation.
///
/// # Errors
/// As [`delaunay`].
pub fn delaunay_half_edges(points: &[[f64; 2]]) -> Result<HalfEdges, PolyllaError> {
    let blocks = blocks_for(points.len());
    if blocks != [1, 1]
        && let Some(half_edges) = delaunay_half_edges_in_blocks(points, blocks)?
    {
        return Ok(half_edges);
    }
    delaunay_half_edges_serial(points)
}

/// The half-edges of the Delaunay triangulation of `points` by spade
/// serially, read off spade's own half-edge structure (no twins to
/// match): spade's inner faces in its order, each face's edges as spade
/// lists them, then the edges of the outer face. Its interior half-edges
/// are those of [`HalfEdges::from_triangles`] of [`delaunay`]'s triangles;
/// its border half-edges may come in another order.
///
/// Read in parallel (rayon), each face's three half-edges written in
/// place: a half-edge's number follows from its face and its place in it
/// (the border's, a few, are looked up), so no table of spade's edges is
/// kept.
///
/// # Errors
/// As [`delaunay`].
pub fn delaunay_half_edges_serial(points: &[[f64; 2]]) -> Result<HalfEdges, PolyllaError> {
    let (distinct, t) = triangulate(points)?;
    let interior = 3 * t.num_inner_faces();
    // Spade's inner faces are its faces 1.. (0 is the outer face), in the
    // order `inner_faces` lists them.
    let inner = |f: usize| t.inner_faces().nth(f).expect("an inner face");
    let border: Vec<_> = t.directed_edges().filter(|e| e.is_outer_edge()).collect();
    let border_id: HashMap<usize, u32> = border
        .iter()
        .enumerate()
        .map(|(k, e)| (e.fix().index(), (interior + k) as u32))
        .collect();
    let id = |e: DirectedEdgeHandle<'_, Site, (), (), ()>| -> u32 {
        match e.face().as_inner() {
            Some(face) => {
                let f = face.fix().index() - 1;
                let i = face
                    .adjacent_edges()
                    .iter()
                    .position(|x| x.fix() == e.fix())
                    .expect("an edge of its face");
                (3 * f + i) as u32
            }
            None => border_id[&e.fix().index()],
        }
    };
    let total = interior + border.len();
    let (mut origin, mut twin) = (vec![NONE; total], vec![NONE; total]);
    let (mut next, mut prev) = (vec![NONE; total], vec![NONE; total]);
    origin[..interior]
        .par_chunks_mut(3)
        .zip(twin[..interior].par_chunks_mut(3))
        .zip(next[..interior].par_chunks_mut(3))
        .zip(prev[..interior].par_chunks_mut(3))
        .enumerate()
        .for_each(|(f, (((origin, twin), next), prev))| {
            for (i, e) in inner(f).adjacent_edges().iter().enumerate() {
                origin[i] = e.from().data().id;
                twin[i] = id(e.rev());
                next[i] = (3 * f + (i + 1) % 3) as u32;
                prev[i] = (3 * f + (i + 2) % 3) as u32;
            }
        });
    for (k, e) in border.iter().enumerate() {
        let h = interior + k;
        origin[h] = e.from().data().id;
        twin[h] = id(e.rev());
        next[h] = id(e.next());
        prev[h] = id(e.prev());
    }
    Ok(HalfEdges::of_parts(
        distinct.positions,
        [origin, twin, next, prev],
        interior as u32,
    ))
}

/// `n` random points in the unit square (seeded by `seed`), the four
/// corners among them.
pub fn random_points(n: usize, seed: u64) -> Vec<[f64; 2]> {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let mut points = vec![[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]];
    while points.len() < n.max(4) {
        points.push([rng.random_range(0.0..1.0), rng.random_range(0.0..1.0)]);
    }
    points.truncate(n.max(3));
    points
}

/// The points of an `n × n` grid over the unit square (`n` at least 2).
pub fn grid_points(n: usize) -> Vec<[f64; 2]> {
    let n = n.max(2);
    let step = 1.0 / (n - 1) as f64;
    (0..n * n)
        .map(|i| [(i % n) as f64 * step, (i / n) as f64 * step])
        .collect()
}

//! Generated inputs as in GPolylla's section 7.1: the Delaunay
//! triangulations (by `spade`) of `n` uniformly random points in the unit
//! square (its corners included, so that the square is the domain) and of
//! a uniform `n × n` grid of points (many cocircular quadruples: the
//! triangulation splits each square by one diagonal).

use rand::{RngExt, SeedableRng};
use rand_xorshift::XorShiftRng;
use spade::{DelaunayTriangulation, Point2, Triangulation as _};

use crate::{PolyllaError, Triangulation};

/// The Delaunay triangulation of `points`: its vertices (in spade's
/// order, duplicates merged) and its triangles, counter-clockwise.
///
/// # Errors
/// [`PolyllaError::Triangulation`] for a non-finite coordinate.
pub fn delaunay(points: &[[f64; 2]]) -> Result<Triangulation, PolyllaError> {
    let vertices: Vec<Point2<f64>> = points.iter().map(|p| Point2::new(p[0], p[1])).collect();
    let t = DelaunayTriangulation::<Point2<f64>>::bulk_load(vertices)
        .map_err(|e| PolyllaError::Triangulation(format!("{e:?}")))?;
    let positions = t
        .vertices()
        .map(|v| [v.position().x, v.position().y])
        .collect();
    let triangles = t
        .inner_faces()
        .map(|f| f.vertices().map(|v| v.fix().index() as u32))
        .collect();
    Ok(Triangulation {
        positions,
        triangles,
    })
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

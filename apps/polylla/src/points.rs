//! The distinct points of a triangulation's input (its vertices, in input
//! order) and the sites spade triangulates: shared by the serial
//! triangulation ([`crate::generate`]) and the one in blocks
//! ([`crate::blocks`]).

use cavity::QueryResult;
use rayon::prelude::*;
use spade::{DelaunayTriangulation, HasPosition, Point2};

use crate::PolyllaError;
use crate::halfedge::NONE;

/// A point as spade triangulates it, with its vertex number: its place
/// among the distinct points in input order ([`Distinct`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Site {
    /// Where the point is.
    pub(crate) at: Point2<f64>,
    /// Its vertex number.
    pub(crate) id: u32,
}

impl HasPosition for Site {
    type Scalar = f64;

    fn position(&self) -> Point2<f64> {
        self.at
    }
}

/// A Delaunay triangulation of [`Site`]s.
pub(crate) type SiteTriangulation = DelaunayTriangulation<Site>;

/// The most points a triangulation takes: its half-edges (about 6 a
/// point) are numbered in 32 bits.
pub const MOST_POINTS: usize = (u32::MAX / 7) as usize;

/// The distinct points of an input: the triangulation's vertices.
pub(crate) struct Distinct {
    /// The distinct points in input order (each at its first occurrence):
    /// vertex `v` is at `positions[v]`.
    pub(crate) positions: Vec<[f64; 2]>,
    /// The vertices sorted by `(x, y)`.
    pub(crate) by_x: Vec<u32>,
}

impl Distinct {
    /// The distinct points of `points`, found in parallel: the points
    /// sorted by `(x, y, index)` (coordinates in their total order, `-0`
    /// taken for `0`), each run of equal points kept at its first index,
    /// the kept ones numbered in input order.
    ///
    /// # Errors
    /// [`PolyllaError::Triangulation`] for the first point with a
    /// coordinate spade refuses (not finite, or past its range), naming
    /// it; [`PolyllaError::Input`] for more points than the half-edges'
    /// 32-bit numbers reach ([`MOST_POINTS`]).
    pub(crate) fn of(points: &[[f64; 2]]) -> Result<Distinct, PolyllaError> {
        if points.len() > MOST_POINTS {
            return Err(PolyllaError::Input(format!(
                "{} points: at most {MOST_POINTS} can be triangulated (about 6 half-edges a point, numbered in 32 bits)",
                points.len()
            )));
        }
        let refused = |p: &[f64; 2]| {
            spade::validate_coordinate(p[0])
                .and(spade::validate_coordinate(p[1]))
                .err()
        };
        if let Some(i) = points.par_iter().position_first(|p| refused(p).is_some()) {
            let [x, y] = points[i];
            let why = refused(&points[i])
                .map(|e| format!("{e:?}"))
                .unwrap_or_default();
            return Err(PolyllaError::Triangulation(format!(
                "point {i} ({x}, {y}): a coordinate spade cannot take ({why})"
            )));
        }
        // A coordinate as a word in its total order (`f64::total_cmp`),
        // `-0` as `0`.
        let word = |x: f64| {
            let b = (x + 0.0).to_bits();
            if b >> 63 == 1 { !b } else { b | 1 << 63 }
        };
        let mut order: Vec<(u64, u64, u32)> = points
            .par_iter()
            .enumerate()
            .map(|(i, p)| (word(p[0]), word(p[1]), i as u32))
            .collect();
        order.par_sort_unstable();
        let same = |i: usize| order[i - 1].0 == order[i].0 && order[i - 1].1 == order[i].1;
        if !(1..order.len()).into_par_iter().any(same) {
            // No point repeats (the common case): no numbering to do.
            return Ok(Distinct {
                positions: points.par_iter().copied().collect(),
                by_x: order.par_iter().map(|o| o.2).collect(),
            });
        }
        let first = |i: usize| i == 0 || !same(i);
        let mut kept = vec![false; points.len()];
        for (i, o) in order.iter().enumerate() {
            if first(i) {
                kept[o.2 as usize] = true;
            }
        }
        // Vertex numbers: the kept points before each one, by chunks.
        const CHUNK: usize = 1 << 16;
        let counts: Vec<u32> = kept
            .par_chunks(CHUNK)
            .map(|c| c.iter().filter(|&&k| k).count() as u32)
            .collect();
        let starts = QueryResult::offsets_of(&counts);
        let mut number = vec![NONE; points.len()];
        number
            .par_chunks_mut(CHUNK)
            .zip(kept.par_chunks(CHUNK))
            .zip(starts)
            .for_each(|((number, kept), mut at)| {
                for (n, &k) in number.iter_mut().zip(kept) {
                    if k {
                        *n = at;
                        at += 1;
                    }
                }
            });
        let positions = points
            .par_iter()
            .zip(&kept)
            .filter(|(_, k)| **k)
            .map(|(p, _)| *p)
            .collect();
        let by_x = (0..order.len())
            .into_par_iter()
            .filter(|&i| first(i))
            .map(|i| number[order[i].2 as usize])
            .collect();
        Ok(Distinct { positions, by_x })
    }

    /// The sites of the vertices `ids`, in that order.
    pub(crate) fn sites(&self, ids: &[u32]) -> Vec<Site> {
        ids.par_iter()
            .map(|&id| {
                let [x, y] = self.positions[id as usize];
                Site {
                    at: Point2::new(x, y),
                    id,
                }
            })
            .collect()
    }
}

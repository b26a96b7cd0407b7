//! Scale-free processing: positions are moved to the bounding-box centre
//! and scaled to a box of half-size about 1 before any kernel sees them,
//! and moved back on output, so that every operation gives the same result
//! for a mesh in metres, in nanometres or in light years (the kernels work
//! in `f32`, whose products overflow at about 1e19 and underflow at about
//! 1e-19 per factor). The scale is a power of two, so scaling and its
//! inverse are exact; only the translation rounds.

use glam::DVec3;
use rayon::prelude::*;

use crate::TriMesh;
use crate::defects::bounds;

/// The similarity that maps a mesh into the unit box: `(p - centre) / scale`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Normalization {
    /// Bounding-box centre (model units).
    pub centre: DVec3,
    /// A power of two within a factor of two of the largest half-extent of
    /// the bounding box (1 for a mesh without extent).
    pub scale: f64,
}

impl Normalization {
    /// The normalization of `mesh`'s bounding box (the identity without
    /// vertices or extent).
    pub fn of(mesh: &TriMesh) -> Normalization {
        if mesh.positions.is_empty() {
            return Normalization::IDENTITY;
        }
        let (lo, hi) = bounds(mesh);
        let half = 0.5 * (hi - lo).max_element();
        let scale = if half > 0.0 && half.is_finite() {
            2f64.powi(half.log2().round() as i32)
        } else {
            1.0
        };
        Normalization {
            centre: 0.5 * (lo + hi),
            scale,
        }
    }

    /// The identity.
    pub const IDENTITY: Normalization = Normalization {
        centre: DVec3::ZERO,
        scale: 1.0,
    };

    /// `mesh` with its positions normalized (faces unchanged).
    pub fn apply(&self, mesh: &TriMesh) -> TriMesh {
        TriMesh {
            positions: mesh
                .positions
                .par_iter()
                .map(|p| {
                    let q = (DVec3::from(p.map(f64::from)) - self.centre) / self.scale;
                    q.to_array().map(|c| c as f32)
                })
                .collect(),
            // Copied in parallel: a fresh array's pages are first touched
            // by many threads (at 6.4 M faces a serial clone took 20-30 ms).
            faces: mesh.faces.par_iter().copied().collect(),
        }
    }

    /// Moves the normalized `output` back to model units, in place; a vertex
    /// that came from input vertex `sources[v]` (`u32::MAX`: a new vertex)
    /// and still stands where `normalized` (this normalization of
    /// `original`) put it gets `original`'s position bit for bit, so that
    /// what an operation did not move comes back exactly.
    pub fn restore_from(
        &self,
        output: &mut TriMesh,
        sources: &[u32],
        original: &TriMesh,
        normalized: &TriMesh,
    ) {
        output
            .positions
            .par_iter_mut()
            .zip(sources)
            .for_each(|(p, &s)| {
                let s = s as usize;
                *p = if s < original.positions.len() && normalized.positions[s] == *p {
                    original.positions[s]
                } else {
                    self.restore(*p)
                };
            });
    }

    /// `original` with its vertex `sources[i]` moved to the normalized
    /// `positions[i]` (back in model units as [`Normalization::restore_from`]
    /// brings them: a vertex still where `normalized` put it keeps its
    /// position bit for bit), its faces unchanged: the output of an
    /// operation that only moves vertices (smoothing, denoising).
    ///
    /// # Panics
    /// When a source is not a vertex of `original` (a vertex an operation
    /// added).
    pub fn moved(
        &self,
        original: &TriMesh,
        normalized: &TriMesh,
        positions: Vec<[f32; 3]>,
        sources: &[u32],
    ) -> TriMesh {
        // Each input vertex's place in `positions`, then every vertex in
        // parallel: moved back where it was moved, else the input's.
        let mut slot = vec![u32::MAX; original.positions.len()];
        for (i, &s) in sources.iter().enumerate().take(positions.len()) {
            slot[s as usize] = i as u32;
        }
        let positions = slot
            .par_iter()
            .enumerate()
            .map(|(v, &i)| match positions.get(i as usize) {
                Some(&p) if normalized.positions[v] == p => original.positions[v],
                Some(&p) => self.restore(p),
                None => original.positions[v],
            })
            .collect();
        TriMesh {
            positions,
            faces: original.faces.par_iter().copied().collect(),
        }
    }

    /// A normalized point in model units.
    pub fn restore(&self, p: [f32; 3]) -> [f32; 3] {
        let q = DVec3::from(p.map(f64::from)) * self.scale + self.centre;
        q.to_array().map(|c| c as f32)
    }

    /// A length in model units, normalized.
    pub fn length(&self, model: f64) -> f64 {
        model / self.scale
    }
}

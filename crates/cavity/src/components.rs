//! Connected components on the host in parallel: disjoint sets whose
//! parents are atomics, joined from every rayon worker at once (Anderson
//! and Woll, "Wait-free parallel algorithms for the union-find problem",
//! STOC 1991: a root is linked by compare-and-swap, paths are halved).
//!
//! Roots are always linked to the smaller index, so a set's root is its
//! smallest member and every result is the same for any number of workers.
//! The statistics of the operations' outputs use these; the reference mesh
//! (`cavity-reference`) keeps its own serial sets as the oracle.

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

/// Disjoint sets over `0..n` that any number of threads join at once.
pub struct ConcurrentSets {
    parent: Vec<AtomicU32>,
}

impl ConcurrentSets {
    /// `n` singleton sets (`n` below `u32::MAX`).
    pub fn new(n: usize) -> ConcurrentSets {
        ConcurrentSets {
            parent: (0..n as u32).into_par_iter().map(AtomicU32::new).collect(),
        }
    }

    /// The root of `x`'s set: its smallest member once no thread joins
    /// sets any more.
    pub fn find(&self, mut x: u32) -> u32 {
        loop {
            let p = self.parent[x as usize].load(Ordering::Relaxed);
            if p == x {
                return x;
            }
            let g = self.parent[p as usize].load(Ordering::Relaxed);
            if g == p {
                // `x` already points at the root: no write, so the lines
                // near a large set's root are only read by every worker.
                return p;
            }
            // Parents only ever point to smaller members of the same set,
            // so the smaller of two ancestors is the one further up.
            self.parent[x as usize].fetch_min(g, Ordering::Relaxed);
            x = g;
        }
    }

    /// Joins the sets of `a` and `b`.
    pub fn union(&self, a: u32, b: u32) {
        let (mut a, mut b) = (a, b);
        loop {
            a = self.find(a);
            b = self.find(b);
            if a == b {
                return;
            }
            let (low, high) = (a.min(b), a.max(b));
            // Only a root's parent is itself: the swap fails when another
            // thread linked `high` first, and the roots are found again.
            if self.parent[high as usize]
                .compare_exchange(high, low, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
            {
                return;
            }
        }
    }

    /// Every member's root (its set's smallest member).
    pub fn roots(&self) -> Vec<u32> {
        (0..self.parent.len() as u32)
            .into_par_iter()
            .map(|x| self.find(x))
            .collect()
    }
}

/// The vertices `0..nv` in sets joined through the corners of `faces`
/// (indices below `nv`): the components of the mesh, isolated vertices
/// each on their own.
pub fn vertex_sets(nv: usize, faces: &[[u32; 3]]) -> ConcurrentSets {
    let sets = ConcurrentSets::new(nv);
    faces.par_iter().for_each(|t| {
        sets.union(t[0], t[1]);
        sets.union(t[1], t[2]);
    });
    sets
}

/// The number of sets of `roots` (as [`ConcurrentSets::roots`] gives).
pub fn count_roots(roots: &[u32]) -> usize {
    roots
        .par_iter()
        .enumerate()
        .filter(|&(x, &r)| r == x as u32)
        .count()
}

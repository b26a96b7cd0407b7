//! How [`VolumeMesh::from_cells`](super::VolumeMesh::from_cells) numbers
//! faces and edges in parallel: every cell's faces keyed by their sorted
//! vertices, sorted, numbered by runs of equal keys (a face is stored
//! once, in the order the first cell that has it sees it), then the same
//! for the faces' edges.

use crate::signed::encode;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering};

use super::same_turn;

/// One face of one cell, keyed by its sorted vertices (faces of at most
/// four vertices; `len` 0 for a longer one), with its place among all
/// cells' faces in cell order (its entry of ∂3).
#[derive(Clone, Copy)]
pub(super) struct Occurrence {
    pub(super) key: [u32; 4],
    pub(super) face: [u32; 4],
    pub(super) len: u32,
    pub(super) at: u32,
}

impl Occurrence {
    pub(super) fn new(face: &[u32], at: u32) -> Self {
        let (mut key, mut loop_) = ([u32::MAX; 4], [u32::MAX; 4]);
        let len = if face.len() <= 4 {
            face.len() as u32
        } else {
            0
        };
        if len > 0 {
            key[..face.len()].copy_from_slice(face);
            loop_[..face.len()].copy_from_slice(face);
            key.sort_unstable();
        }
        Occurrence {
            key,
            face: loop_,
            len,
            at,
        }
    }

    pub(super) fn face(&self) -> &[u32] {
        &self.face[..self.len as usize]
    }
}

/// The exclusive prefix sum of `counts`, one more word for the total.
pub(super) fn exclusive_scan(counts: &[u32]) -> Vec<u32> {
    let sums = counts.iter().scan(0u32, |sum, &c| {
        *sum += c;
        Some(*sum)
    });
    std::iter::once(0).chain(sums).collect()
}

/// The ids of the runs of equal keys of a sorted list (`starts`, as
/// [`runs`] gives), numbered in the order of their first elements' places
/// (`at`, below `n`): an exclusive scan over the `n` places of marks at
/// the first places.
pub(super) fn number_runs(
    starts: &[usize],
    at: impl Fn(usize) -> u32 + Sync,
    n: usize,
) -> Vec<u32> {
    let first: Vec<AtomicU32> = (0..n).into_par_iter().map(|_| AtomicU32::new(0)).collect();
    starts[..starts.len() - 1]
        .par_iter()
        .for_each(|&p| first[at(p) as usize].store(1, Ordering::Relaxed));
    let marks: Vec<u32> = first.into_par_iter().map(AtomicU32::into_inner).collect();
    let ids = exclusive_scan(&marks);
    starts[..starts.len() - 1]
        .par_iter()
        .map(|&p| ids[at(p) as usize])
        .collect()
}

/// `items` cut into the consecutive pieces `offsets` delimits (`offsets`
/// from 0 to at most `items.len()`), to fill them in parallel.
pub(crate) fn split_by<'a, T>(items: &'a mut [T], offsets: &[u32]) -> Vec<&'a mut [T]> {
    let mut rest = items;
    offsets
        .windows(2)
        .map(|w| {
            let (piece, tail) = std::mem::take(&mut rest).split_at_mut((w[1] - w[0]) as usize);
            rest = tail;
            piece
        })
        .collect()
}

/// Words written at distinct places from parallel threads.
pub(super) struct Scatter(Vec<AtomicU32>);

impl Scatter {
    pub(super) fn new(n: usize) -> Self {
        Scatter((0..n).into_par_iter().map(|_| AtomicU32::new(0)).collect())
    }

    pub(super) fn set(&self, i: usize, value: u32) {
        self.0[i].store(value, Ordering::Relaxed);
    }

    pub(super) fn into_vec(self) -> Vec<u32> {
        self.0.into_par_iter().map(AtomicU32::into_inner).collect()
    }
}

/// Each face's vertex loop, flat: face `f` is
/// `vertices[offsets[f]..offsets[f + 1]]`.
pub(super) struct FaceLoops {
    pub(super) offsets: Vec<u32>,
    pub(super) vertices: Vec<u32>,
    pub(super) count: usize,
}

/// The faces numbered in the order the cells first name them, each with
/// the loop of that first occurrence, and ∂3's entries (each cell's faces
/// in its local order).
pub(super) fn number_faces(mut occ: Vec<Occurrence>) -> (FaceLoops, Vec<u32>) {
    occ.par_sort_unstable_by_key(|o| (o.key, o.at));
    let starts = runs(&occ, |o| o.key);
    let ids = number_runs(&starts, |p| occ[p].at, occ.len());
    let faces = ids.len();
    let first = Scatter::new(faces);
    let entries = Scatter::new(occ.len());
    (0..faces).into_par_iter().for_each(|g| {
        let (a, b) = (starts[g], starts[g + 1]);
        first.set(ids[g] as usize, a as u32);
        let loop_ = occ[a].face();
        for o in &occ[a..b] {
            entries.set(o.at as usize, encode(ids[g], !same_turn(loop_, o.face())));
        }
    });
    let first = first.into_vec();
    let lens: Vec<u32> = first.par_iter().map(|&p| occ[p as usize].len).collect();
    let vertices = first
        .par_iter()
        .flat_map_iter(|&p| occ[p as usize].face().iter().copied())
        .collect();
    let loops = FaceLoops {
        offsets: exclusive_scan(&lens),
        vertices,
        count: faces,
    };
    (loops, entries.into_vec())
}

/// The edges numbered in the order the faces (in order) first name them,
/// each stored as that first occurrence's ordered pair, and ∂2's entries
/// (each face's edges in its loop's order).
pub(super) fn number_edges(faces: &FaceLoops) -> (Vec<[u32; 2]>, Vec<u32>) {
    // (sorted pair, place in ∂2, the pair as the face runs).
    let mut occ = vec![([0u32; 2], 0u32, [0u32; 2]); faces.vertices.len()];
    split_by(&mut occ, &faces.offsets)
        .into_par_iter()
        .enumerate()
        .for_each(|(f, out)| {
            let a = faces.offsets[f] as usize;
            let face = &faces.vertices[a..a + out.len()];
            for (i, o) in out.iter_mut().enumerate() {
                let (u, v) = (face[i], face[(i + 1) % face.len()]);
                *o = ([u.min(v), u.max(v)], (a + i) as u32, [u, v]);
            }
        });
    occ.par_sort_unstable_by_key(|o| (o.0, o.1));
    let starts = runs(&occ, |o| o.0);
    let ids = number_runs(&starts, |p| occ[p].1, occ.len());
    let edges = Scatter::new(2 * ids.len());
    let entries = Scatter::new(occ.len());
    (0..ids.len()).into_par_iter().for_each(|g| {
        let (a, b) = (starts[g], starts[g + 1]);
        let pair = occ[a].2;
        let e = ids[g];
        edges.set(2 * e as usize, pair[0]);
        edges.set(2 * e as usize + 1, pair[1]);
        for o in &occ[a..b] {
            entries.set(o.1 as usize, encode(e, o.2 != pair));
        }
    });
    let edges = edges.into_vec();
    let (pairs, _) = edges.as_chunks::<2>();
    (pairs.to_vec(), entries.into_vec())
}

/// Starts of the runs of equal `key`s in `sorted`, and its length.
pub(super) fn runs<T: Sync, K: PartialEq>(
    sorted: &[T],
    key: impl Fn(&T) -> K + Sync,
) -> Vec<usize> {
    let mut starts: Vec<usize> = (0..sorted.len())
        .into_par_iter()
        .filter(|&i| i == 0 || key(&sorted[i]) != key(&sorted[i - 1]))
        .collect();
    starts.push(sorted.len());
    starts
}

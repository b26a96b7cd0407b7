//! Global connectivity of an indexed triangle mesh, built once on the host
//! as the patcher's input: unique edges (EV), per-face edges (FE with
//! orientation), and the CSR incidences VF and EF.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use rayon::prelude::*;

use crate::TriMesh;

/// Input-order connectivity. Edges are the unique unordered vertex pairs,
/// numbered in increasing `(min, max)` order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    /// `ev[e] = [a, b]` with `a < b` (input vertex indices).
    pub ev: Vec<[u32; 2]>,
    /// `fe[f][k]` = edge from corner `k` to corner `k + 1` of face `f`.
    pub fe: Vec<[u32; 3]>,
    /// VF: faces of vertex `v` are `vf[vf_offsets[v]..vf_offsets[v + 1]]`.
    pub vf_offsets: Vec<u32>,
    /// VF values.
    pub vf: Vec<u32>,
    /// EF: faces of edge `e` are `ef[ef_offsets[e]..ef_offsets[e + 1]]`.
    pub ef_offsets: Vec<u32>,
    /// EF values.
    pub ef: Vec<u32>,
}

impl Topology {
    /// Builds the connectivity of `mesh`, whose indices must be in range.
    ///
    /// In parallel: VF first; then, per vertex `a`, the face sides
    /// `(a, b)` with `b >= a` around it sorted by `b`, whose runs are the
    /// edges (numbered in `(min, max)` order) with their faces (EF) and
    /// corners (FE).
    pub fn new(mesh: &TriMesh) -> Topology {
        let faces = &mesh.faces;
        let (vf_offsets, vf) = transpose3(mesh.num_vertices(), faces);
        let vertex_faces = |v: usize| &vf[vf_offsets[v] as usize..vf_offsets[v + 1] as usize];
        // The sides of the faces around each vertex `a` whose lower end is
        // `a`, as (upper end, corner `3 f + k` starting the side), sorted:
        // runs of one edge each, its faces in increasing order (once per
        // side).
        let (side_offsets, sides) = par_csr(mesh.num_vertices(), |a, out: &mut Vec<[u32; 2]>| {
            let start = out.len();
            for f in distinct(vertex_faces(a)) {
                let t = faces[f as usize];
                for k in 0..3 {
                    let (x, y) = (t[k], t[(k + 1) % 3]);
                    if x.min(y) == a as u32 {
                        out.push([x.max(y), 3 * f + k as u32]);
                    }
                }
            }
            out[start..].sort_unstable();
        });
        // Each run's edge and where its faces start.
        let (_, runs) = par_csr(mesh.num_vertices(), |a, out: &mut Vec<([u32; 2], u32)>| {
            let first = side_offsets[a] as usize;
            for i in first..side_offsets[a + 1] as usize {
                if i == first || sides[i - 1][0] != sides[i][0] {
                    out.push(([a as u32, sides[i][0]], i as u32));
                }
            }
        });
        let ev: Vec<[u32; 2]> = runs.par_iter().map(|run| run.0).collect();
        let ef_offsets: Vec<u32> = runs
            .par_iter()
            .map(|run| run.1)
            .chain(rayon::iter::once(sides.len() as u32))
            .collect();
        let ef: Vec<u32> = sides.par_iter().map(|side| side[1] / 3).collect();
        let corner_edge: Vec<AtomicU32> = (0..sides.len())
            .into_par_iter()
            .map(|_| AtomicU32::new(0))
            .collect();
        ef_offsets.par_windows(2).enumerate().for_each(|(e, run)| {
            for side in &sides[run[0] as usize..run[1] as usize] {
                corner_edge[side[1] as usize].store(e as u32, Ordering::Relaxed);
            }
        });
        let corner_edge: Vec<u32> = corner_edge
            .into_par_iter()
            .map(AtomicU32::into_inner)
            .collect();
        let fe: Vec<[u32; 3]> = corner_edge
            .par_chunks_exact(3)
            .map(|c| [c[0], c[1], c[2]])
            .collect();
        Topology {
            ev,
            fe,
            vf_offsets,
            vf,
            ef_offsets,
            ef,
        }
    }

    /// Faces incident to vertex `v`.
    pub fn vertex_faces(&self, v: u32) -> &[u32] {
        &self.vf[self.vf_offsets[v as usize] as usize..self.vf_offsets[v as usize + 1] as usize]
    }

    /// Faces incident to edge `e`.
    pub fn edge_faces(&self, e: u32) -> &[u32] {
        &self.ef[self.ef_offsets[e as usize] as usize..self.ef_offsets[e as usize + 1] as usize]
    }
}

/// The values of the sorted `values` without repeats.
fn distinct(values: &[u32]) -> impl Iterator<Item = u32> + '_ {
    values
        .iter()
        .enumerate()
        .filter(|&(i, &x)| i == 0 || values[i - 1] != x)
        .map(|(_, &x)| x)
}

/// Targets per bucket of [`transpose3`].
const TRANSPOSE_BUCKET: usize = 1 << 10;

/// Rows per chunk of [`transpose3`].
const TRANSPOSE_CHUNK: usize = 1 << 15;

/// Rows per block of [`par_csr`].
const ROW_BLOCK: usize = 1 << 12;

/// A CSR of `rows` rows built in parallel in blocks of rows: row `i` holds
/// what `row(i, out)` appends to `out`. Returns the offsets (`rows + 1`)
/// and the values.
pub fn par_csr<T: Copy + Default + Send + Sync>(
    rows: usize,
    row: impl Fn(usize, &mut Vec<T>) + Sync,
) -> (Vec<u32>, Vec<T>) {
    let blocks: Vec<(Vec<u32>, Vec<T>)> = (0..rows.div_ceil(ROW_BLOCK))
        .into_par_iter()
        .map(|b| {
            let range = b * ROW_BLOCK..(b * ROW_BLOCK + ROW_BLOCK).min(rows);
            let mut ends = Vec::with_capacity(range.len());
            let mut values = Vec::new();
            for i in range {
                row(i, &mut values);
                ends.push(values.len() as u32);
            }
            (ends, values)
        })
        .collect();
    let mut starts = Vec::with_capacity(blocks.len());
    let mut total = 0u32;
    for (_, values) in &blocks {
        starts.push(total);
        total += values.len() as u32;
    }
    let mut offsets = vec![0u32; rows + 1];
    let mut values = vec![T::default(); total as usize];
    let parts = split_lengths(&mut values, blocks.iter().map(|(_, v)| v.len()));
    blocks
        .into_par_iter()
        .zip(offsets[1..].par_chunks_mut(ROW_BLOCK))
        .zip(parts)
        .zip(starts)
        .for_each(|((((ends, block), offsets), part), start)| {
            for (offset, end) in offsets.iter_mut().zip(ends) {
                *offset = start + end;
            }
            part.copy_from_slice(&block);
        });
    (offsets, values)
}

/// Splits `out` into consecutive pieces of the given lengths.
pub fn split_lengths<T>(mut out: &mut [T], lengths: impl Iterator<Item = usize>) -> Vec<&mut [T]> {
    lengths
        .map(|n| {
            let (head, tail) = std::mem::take(&mut out).split_at_mut(n);
            out = tail;
            head
        })
        .collect()
}

/// Transposes rows of three targets each into a CSR over `targets`:
/// row `t` of the result lists, in increasing order, the rows containing `t`
/// (twice a row containing `t` twice). Built in parallel without atomic
/// counters, a two-pass radix scatter: the rows in chunks count their
/// entries per bucket of 1024 consecutive targets, a scan
/// gives every chunk its place in each bucket, the chunks scatter their
/// (target, row) pairs there (each bucket's pairs in row order), and each
/// bucket counts and places its pairs by target.
pub fn transpose3(targets: usize, rows: &[[u32; 3]]) -> (Vec<u32>, Vec<u32>) {
    let buckets = targets.div_ceil(TRANSPOSE_BUCKET).max(1);
    let bucket = |t: u32| t as usize / TRANSPOSE_BUCKET;
    let chunks: Vec<&[[u32; 3]]> = rows.chunks(TRANSPOSE_CHUNK).collect();
    // Entries of each chunk per bucket, then (bucket-major) where each
    // chunk's entries of each bucket start.
    let mut starts: Vec<Vec<u32>> = chunks
        .par_iter()
        .map(|chunk| {
            let mut counts = vec![0u32; buckets];
            for &t in chunk.iter().flatten() {
                counts[bucket(t)] += 1;
            }
            counts
        })
        .collect();
    let mut bucket_offsets = vec![0u32; buckets + 1];
    let mut sum = 0u32;
    for b in 0..buckets {
        bucket_offsets[b] = sum;
        for chunk in &mut starts {
            (chunk[b], sum) = (sum, sum + chunk[b]);
        }
    }
    bucket_offsets[buckets] = sum;
    // The pairs, target in the high word, row in the low, at disjoint places.
    let pairs: Vec<AtomicU64> = (0..sum as usize)
        .into_par_iter()
        .map(|_| AtomicU64::new(0))
        .collect();
    chunks
        .par_iter()
        .zip(starts)
        .enumerate()
        .for_each(|(c, (chunk, mut cursor))| {
            let first = (c * TRANSPOSE_CHUNK) as u64;
            for (i, row) in chunk.iter().enumerate() {
                for &t in row {
                    let at = &mut cursor[bucket(t)];
                    pairs[*at as usize]
                        .store(u64::from(t) << 32 | (first + i as u64), Ordering::Relaxed);
                    *at += 1;
                }
            }
        });
    let mut offsets = vec![0u32; targets + 1];
    let mut values = vec![0u32; sum as usize];
    let lengths = (0..buckets).map(|b| (bucket_offsets[b + 1] - bucket_offsets[b]) as usize);
    let target_lengths = (0..buckets)
        .map(|b| (b * TRANSPOSE_BUCKET..((b + 1) * TRANSPOSE_BUCKET).min(targets)).len());
    split_lengths(&mut values, lengths)
        .into_par_iter()
        .zip(split_lengths(&mut offsets[1..], target_lengths))
        .enumerate()
        .for_each(|(b, (part, ends))| {
            let base = bucket_offsets[b];
            let first_target = b * TRANSPOSE_BUCKET;
            let pairs = &pairs[base as usize..base as usize + part.len()];
            // Counts per target, then their ends (the next target's start).
            for pair in pairs {
                let t = (pair.load(Ordering::Relaxed) >> 32) as usize;
                ends[t - first_target] += 1;
            }
            let mut cursor = vec![0u32; ends.len()];
            let mut at = 0;
            for (end, start) in ends.iter_mut().zip(&mut cursor) {
                *start = at;
                at += *end;
                *end = base + at;
            }
            for pair in pairs {
                let p = pair.load(Ordering::Relaxed);
                let slot = &mut cursor[(p >> 32) as usize - first_target];
                part[*slot as usize] = p as u32;
                *slot += 1;
            }
        });
    (offsets, values)
}

/// Mean edge length of `mesh` over its unique edges (0 without edges): the
/// scale remeshing's target length and the flow's time step are given
/// against.
pub fn mean_edge_length(mesh: &TriMesh) -> f64 {
    mean_edge_length_with(mesh, &Topology::new(mesh))
}

/// [`mean_edge_length`] with the topology of `mesh` given
/// (`Topology::new(mesh)`). The same value for any number of rayon
/// workers: the lengths are summed in fixed chunks of [`SUM_CHUNK`] edges,
/// the chunk sums in order.
pub fn mean_edge_length_with(mesh: &TriMesh, topology: &Topology) -> f64 {
    let point = |v: u32| glam::DVec3::from(mesh.positions[v as usize].map(f64::from));
    let sum = chunked_sum(&topology.ev, |&[a, b]| point(a).distance(point(b)));
    sum / topology.ev.len().max(1) as f64
}

/// Items per chunk of [`chunked_sum`].
pub const SUM_CHUNK: usize = 4096;

/// The sum of `value` over `items`, in parallel but independent of the
/// number of rayon workers: each chunk of [`SUM_CHUNK`] items is summed in
/// order, then the chunk sums in order.
pub fn chunked_sum<T: Sync>(items: &[T], value: impl Fn(&T) -> f64 + Sync) -> f64 {
    let chunks: Vec<f64> = items
        .par_chunks(SUM_CHUNK)
        .map(|chunk| chunk.iter().map(&value).sum::<f64>())
        .collect();
    chunks.into_iter().sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The transpose written out: for each target, the rows holding it, in
    /// row order, once per occurrence.
    fn naive(targets: usize, rows: &[[u32; 3]]) -> (Vec<u32>, Vec<u32>) {
        let mut lists = vec![Vec::new(); targets];
        for (r, row) in rows.iter().enumerate() {
            for &t in row {
                lists[t as usize].push(r as u32);
            }
        }
        let mut offsets = vec![0u32];
        for list in &lists {
            offsets.push(offsets.last().unwrap() + list.len() as u32);
        }
        (offsets, lists.concat())
    }

    proptest! {
        /// Any rows over any number of targets (buckets and chunks cut
        /// anywhere, targets repeated in a row or never used).
        #[test]
        fn transpose3_is_the_transpose(
            targets in 1usize..3000,
            picks in prop::collection::vec(any::<[u32; 3]>(), 0..40_000),
        ) {
            let rows: Vec<[u32; 3]> = picks
                .iter()
                .map(|r| r.map(|t| t % targets as u32))
                .collect();
            prop_assert_eq!(transpose3(targets, &rows), naive(targets, &rows));
        }
    }

    #[test]
    fn transpose3_of_no_rows_and_no_targets() {
        assert_eq!(transpose3(0, &[]), (vec![0], vec![]));
        assert_eq!(transpose3(5, &[]), (vec![0; 6], vec![]));
    }
}

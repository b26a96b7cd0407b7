//! Global connectivity of an indexed triangle mesh, built once on the host
//! as the patcher's input: unique edges (EV), per-face edges (FE with
//! orientation), and the CSR incidences VF and EF.

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

use crate::TriMesh;

/// Input-order connectivity. Edges are the unique unordered vertex pairs,
/// numbered in increasing `(min, max)` order.
#[derive(Clone, Debug)]
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

    /// The vertices of the edges with one face, in edge order (in
    /// parallel).
    pub fn boundary_edges(&self) -> Vec<[u32; 2]> {
        (0..self.ev.len())
            .into_par_iter()
            .filter(|&e| self.ef_offsets[e + 1] - self.ef_offsets[e] == 1)
            .map(|e| self.ev[e])
            .collect()
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
/// (twice a row containing `t` twice). Built in parallel: counts and
/// placement by atomic counters, then each target's rows sorted.
pub fn transpose3(targets: usize, rows: &[[u32; 3]]) -> (Vec<u32>, Vec<u32>) {
    let counts: Vec<AtomicU32> = (0..targets + 1)
        .into_par_iter()
        .map(|_| AtomicU32::new(0))
        .collect();
    rows.par_iter().flatten().for_each(|&t| {
        counts[t as usize + 1].fetch_add(1, Ordering::Relaxed);
    });
    let mut offsets: Vec<u32> = counts.into_par_iter().map(AtomicU32::into_inner).collect();
    for i in 0..targets {
        offsets[i + 1] += offsets[i];
    }
    let cursor: Vec<AtomicU32> = offsets[..targets]
        .par_iter()
        .map(|&o| AtomicU32::new(o))
        .collect();
    let placed: Vec<AtomicU32> = (0..offsets[targets])
        .into_par_iter()
        .map(|_| AtomicU32::new(0))
        .collect();
    rows.par_iter().enumerate().for_each(|(r, row)| {
        for &t in row {
            let at = cursor[t as usize].fetch_add(1, Ordering::Relaxed);
            placed[at as usize].store(r as u32, Ordering::Relaxed);
        }
    });
    let mut values: Vec<u32> = placed.into_par_iter().map(AtomicU32::into_inner).collect();
    let block_ends = (ROW_BLOCK..targets)
        .step_by(ROW_BLOCK)
        .chain([targets])
        .map(|end| offsets[end] as usize);
    let mut previous = 0;
    let lengths = block_ends.map(|end| {
        let n = end - previous;
        previous = end;
        n
    });
    split_lengths(&mut values, lengths)
        .into_par_iter()
        .enumerate()
        .for_each(|(b, part)| {
            let first = offsets[b * ROW_BLOCK] as usize;
            for t in b * ROW_BLOCK..(b * ROW_BLOCK + ROW_BLOCK).min(targets) {
                let range = offsets[t] as usize - first..offsets[t + 1] as usize - first;
                part[range].sort_unstable();
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

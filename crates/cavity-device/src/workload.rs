//! Per-element computations run through the query model by the tests and
//! benchmarks: exporting a query's full result, and summing an attribute
//! over each element's neighbours.

use crate::block::{Block, Scatter, SharedArena};
use crate::layout::PatchMesh;
use crate::query::{self, Query};

/// Where a query export writes: pass 1 (`offsets == None`) writes
/// `counts[src] = len`; pass 2 writes the results of `src` to
/// `out[offsets[src]..]` (offsets: exclusive prefix sum of the counts).
pub struct ExportTarget<'a> {
    /// Row starts by source handle (pass 2) or `None` (pass 1).
    pub offsets: Option<&'a [u32]>,
    /// Result counts by source handle.
    pub counts: &'a Scatter<u32>,
    /// Concatenated results.
    pub out: &'a Scatter<u32>,
}

/// Exports `query` for the owned elements of `patch` in global handles.
#[inline(always)]
pub fn export<B: Block>(
    block: &B,
    arena: &mut SharedArena,
    mesh: &PatchMesh,
    patch: u32,
    query: Query,
    target: &ExportTarget,
) {
    let (offsets, counts, out) = (target.offsets, target.counts, target.out);
    query::for_each(
        block,
        arena,
        mesh,
        patch,
        query,
        |_| true,
        |src, n| match offsets {
            None => counts.write(src as usize, n.len()),
            Some(offsets) => {
                let start = offsets[src as usize] as usize;
                for i in 0..n.len() {
                    out.write(start + i as usize, n.get(i));
                }
            }
        },
    );
}

/// `out[src] = Σ attr[n]` over the results `n` of `query` for each owned
/// element `src` of `patch`: the query benchmark's workload.
#[inline(always)]
pub fn neighbor_sum<B: Block>(
    block: &B,
    arena: &mut SharedArena,
    mesh: &PatchMesh,
    patch: u32,
    query: Query,
    attr: &[f32],
    out: &Scatter<f32>,
) {
    query::for_each(
        block,
        arena,
        mesh,
        patch,
        query,
        |_| true,
        |src, n| {
            let mut sum = 0.0;
            for i in 0..n.len() {
                sum += attr[n.get(i) as usize];
            }
            out.write(src as usize, sum);
        },
    );
}

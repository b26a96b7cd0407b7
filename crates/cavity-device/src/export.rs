//! A query's whole result exported from the static patch layout (RXMesh,
//! section 6): [`export`] and its kernels [`QueryExport`], one per query
//! (the query fixed at compile time, so that each gets its own register
//! allocation), and the machinery to pick a kernel family's member by a
//! query chosen at run time ([`PerQuery`], [`for_query`]), which kernel
//! crates use for families of their own.

use crate::block::{Block, Scatter, SharedArena};
use crate::kernel::{Kernel, Launch, LaunchBounds, slice_at};
use crate::layout::{PatchMesh, RawPatchMesh};
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

/// The parameters of [`QueryExport`]: the mesh, then the addresses and
/// lengths of `offsets` (address 0 in the counting pass), `counts` and
/// `out` ([`ExportTarget`]).
pub type ExportParams = (RawPatchMesh, u64, u32, u64, u32, u64, u32);

/// The export kernel of query `Query::ALL[Q]` ([`export`]), one block per
/// patch, `Query::launch_bounds` threads.
///
/// # Safety
/// The mesh describes live arrays; each address is valid for its length
/// (`counts` and `out` for writes); dynamic shared memory is the query's
/// for the largest patch.
pub struct QueryExport<const Q: u8>;

crate::kernel!(
    @per_query [all(target_arch = "nvptx64", feature = "core-entries")]
    EXPORT_NAMES,
    QueryExport,
    (mesh: RawPatchMesh, offsets: u64, n_offsets: u32,
     counts: u64, n_counts: u32, out: u64, n_out: u32)
);

// SAFETY: `kernel!(@per_query ..)` above declares the entry named `NAME`
// with these parameters and body.
unsafe impl<const Q: u8> Kernel for QueryExport<Q> {
    const NAME: &'static str = EXPORT_NAMES[Q as usize];
    const BOUNDS: LaunchBounds = Query::ALL[Q as usize].launch_bounds();
    const HOST_ZEROED_SHARED: bool = false;
    type Params = ExportParams;

    #[inline(always)]
    unsafe fn run<B: Block>(launch: &mut Launch<'_, B>, params: ExportParams) {
        let (mesh, offsets, n_offsets, counts, n_counts, out, n_out) = params;
        // SAFETY: the kernel's contract.
        unsafe {
            let mesh = mesh.view();
            let offsets = (offsets != 0).then(|| slice_at(offsets, n_offsets));
            let counts = Scatter::from_raw(counts as *mut u32, n_counts as usize);
            let out = Scatter::from_raw(out as *mut u32, n_out as usize);
            let target = ExportTarget {
                offsets,
                counts: &counts,
                out: &out,
            };
            let query = Query::ALL[Q as usize];
            export(
                launch.block,
                launch.arena,
                &mesh,
                launch.block_idx,
                query,
                &target,
            );
        }
    }
}

/// A family of kernels with one member per query, all with the same
/// parameters (such as [`Exports`]).
pub trait PerQuery {
    /// The members' parameters.
    type Params;
    /// The member of query `Query::ALL[Q]`.
    type Kernel<const Q: u8>: Kernel<Params = Self::Params>;
}

/// The [`QueryExport`] kernels.
pub enum Exports {}

impl PerQuery for Exports {
    type Params = ExportParams;
    type Kernel<const Q: u8> = QueryExport<Q>;
}

/// What to do with the kernels of one query, chosen at run time
/// ([`for_query`]).
pub trait ForQuery {
    /// The result.
    type Output;
    /// Called with the query as `Q` (its index in `Query::ALL`).
    fn visit<const Q: u8>(self) -> Self::Output;
}

/// Calls `v.visit::<Q>()` with `query`'s index as the constant `Q`.
pub fn for_query<V: ForQuery>(query: Query, v: V) -> V::Output {
    match query {
        Query::VV => v.visit::<0>(),
        Query::VE => v.visit::<1>(),
        Query::VF => v.visit::<2>(),
        Query::EV => v.visit::<3>(),
        Query::EF => v.visit::<4>(),
        Query::FV => v.visit::<5>(),
        Query::FE => v.visit::<6>(),
        Query::FF => v.visit::<7>(),
    }
}

//! The query benchmark's workload: `out[src] = Σ attr[n]` over the results
//! `n` of a query for each owned source element, through the patch kernels
//! ([`QueryNeighborSum`], one per query, as `cavity_device::export`'s
//! export kernels).

use cavity_device::block::{Block, Scatter, SharedArena};
use cavity_device::export::PerQuery;
use cavity_device::kernel::{Kernel, Launch, LaunchBounds, slice_at};
use cavity_device::layout::{PatchMesh, RawPatchMesh};
use cavity_device::query::{self, Query};

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

/// The parameters of [`QueryNeighborSum`]: the mesh, then the addresses
/// and lengths of `attr` and `out`.
pub type NeighborSumParams = (RawPatchMesh, u64, u32, u64, u32);

/// The neighbour-sum kernel of query `Query::ALL[Q]` ([`neighbor_sum`]),
/// one block per patch.
///
/// # Safety
/// The mesh describes live arrays; `attr` is valid for `n_attr` reads,
/// `out` for `n_out` writes; dynamic shared memory is the query's for the
/// largest patch.
pub struct QueryNeighborSum<const Q: u8>;

cavity_device::kernel!(
    @per_query [target_arch = "nvptx64"]
    SUM_NAMES,
    QueryNeighborSum,
    (mesh: RawPatchMesh, attr: u64, n_attr: u32, out: u64, n_out: u32)
);

// SAFETY: `kernel!(@per_query ..)` above declares the entry named `NAME`
// with these parameters and body.
unsafe impl<const Q: u8> Kernel for QueryNeighborSum<Q> {
    const NAME: &'static str = SUM_NAMES[Q as usize];
    const BOUNDS: LaunchBounds = Query::ALL[Q as usize].launch_bounds();
    const HOST_ZEROED_SHARED: bool = false;
    type Params = NeighborSumParams;

    #[inline(always)]
    unsafe fn run<B: Block>(launch: &mut Launch<'_, B>, params: NeighborSumParams) {
        let (mesh, attr, n_attr, out, n_out) = params;
        // SAFETY: the kernel's contract.
        unsafe {
            let mesh = mesh.view();
            let attr = slice_at(attr, n_attr);
            let out = Scatter::from_raw(out as *mut f32, n_out as usize);
            let query = Query::ALL[Q as usize];
            neighbor_sum(
                launch.block,
                launch.arena,
                &mesh,
                launch.block_idx,
                query,
                attr,
                &out,
            );
        }
    }
}

/// The [`QueryNeighborSum`] kernels.
pub enum NeighborSums {}

impl PerQuery for NeighborSums {
    type Params = NeighborSumParams;
    type Kernel<const Q: u8> = QueryNeighborSum<Q>;
}

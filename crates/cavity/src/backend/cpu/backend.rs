//! The CPU backend's launches: declared kernels run on the host, one block
//! per rayon task, each worker with its own shared-memory buffer; the
//! static queries, and the dynamic kernels of a round on host arrays.

use rayon::prelude::*;

use cavity_device::attribute::Reduction;
use cavity_device::block::{HostBlock, SharedArena};
use cavity_device::dynamic::cavity::CavityApp;
use cavity_device::dynamic::cleanup::{self, Calibrate, Compact};
use cavity_device::dynamic::layout::RawDynamicMesh;
use cavity_device::dynamic::patch::DynMesh;
use cavity_device::dynamic::reduce::{self, Reduce};
use cavity_device::dynamic::scheduler::{self, Refill};
use cavity_device::dynamic::slice::{self, Slice};
use cavity_device::dynamic::update;
use cavity_device::export::{Exports, ForQuery, PerQuery, for_query};
use cavity_device::kernel::{Kernel, Launch};
use cavity_device::layout::Kind;
use cavity_device::query::{self, Neighbors, Query};

use crate::patched::PatchedMesh;
use crate::query_result::QueryResult;

/// How the CPU backend schedules the patches of a dynamic update round.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Schedule {
    /// The host picks each round's patches, far enough apart that no two
    /// blocks touch the same patch (`backend::territories`): the same
    /// output whatever the number of workers, at the cost of more rounds.
    #[default]
    Deterministic,
    /// A block per worker, each taking queued patches until the round's
    /// share is taken, all racing for the queue and the patch locks, each
    /// round launched before the previous one's status is read
    /// (`rounds::Rounds::runs_ahead`): what the GPU's blocks do, on the host
    /// (the tests run it too); the output depends on timing.
    Racing,
}

/// The CPU backend over rayon's global thread pool.
#[derive(Clone, Debug, Default)]
pub struct CpuBackend {
    schedule: Schedule,
}

impl CpuBackend {
    /// A CPU backend with the deterministic schedule.
    pub fn new() -> Self {
        CpuBackend::default()
    }

    /// A CPU backend with the given schedule of dynamic rounds.
    pub fn with_schedule(schedule: Schedule) -> Self {
        CpuBackend { schedule }
    }

    /// How dynamic rounds are scheduled.
    pub fn schedule(&self) -> Schedule {
        self.schedule
    }

    /// "CPU backend (N threads)", with "racing" for the racing schedule.
    pub fn name(&self) -> String {
        let racing = match self.schedule {
            Schedule::Deterministic => "",
            Schedule::Racing => ", racing",
        };
        format!(
            "CPU backend ({} threads{racing})",
            rayon::current_num_threads()
        )
    }

    /// Runs `kernel(block, arena, patch)` for every patch in parallel with
    /// `smem` bytes of per-worker shared memory.
    pub fn run_patches(
        &self,
        mesh: &PatchedMesh,
        smem: usize,
        kernel: impl Fn(&HostBlock, &mut SharedArena, u32) + Sync,
    ) {
        self.run_blocks(mesh.num_patches(), smem, kernel);
    }

    /// The programming model on the CPU backend: calls `f(source, neighbors)`
    /// for every owned source element of `query` whose handle passes
    /// `active`, from many threads.
    pub fn for_each(
        &self,
        mesh: &PatchedMesh,
        query: Query,
        active: impl Fn(u32) -> bool + Sync,
        f: impl Fn(u32, Neighbors) + Sync,
    ) {
        let view = mesh.view();
        self.run_patches(
            mesh,
            mesh.query_shared_bytes(query, 1),
            |block, arena, p| {
                query::for_each(block, arena, &view, p, query, &active, &f);
            },
        );
    }

    /// Runs declared kernel `K` on `grid` blocks, in parallel on the
    /// workers, each block with `smem` bytes of shared memory (zeroed first
    /// when [`Kernel::HOST_ZEROED_SHARED`]): the CPU backend's launch.
    ///
    /// # Safety
    /// `params` keep `K`'s contract, their addresses pointing at host
    /// memory that lives through the call.
    pub unsafe fn launch<K: Kernel>(&self, grid: u32, smem: usize, params: K::Params) {
        self.blocks_on(grid, smem, K::HOST_ZEROED_SHARED, |block, arena, i| {
            // SAFETY: the caller's contract.
            unsafe { run_kernel::<K>(block, arena, i, grid, params) }
        });
    }

    /// [`CpuBackend::launch`] with the blocks one after another, in order.
    ///
    /// # Safety
    /// As for [`CpuBackend::launch`].
    unsafe fn launch_serial<K: Kernel>(&self, grid: u32, smem: usize, params: K::Params) {
        let mut buf = shared_buffer(smem);
        for i in 0..grid {
            run_block(
                &mut buf,
                smem,
                K::HOST_ZEROED_SHARED,
                i,
                &|block, arena, i| {
                    // SAFETY: the caller's contract.
                    unsafe { run_kernel::<K>(block, arena, i, grid, params) }
                },
            );
        }
    }

    /// Runs the kernel of family `F` for `query` on every patch of `mesh`.
    ///
    /// # Safety
    /// As for [`CpuBackend::launch`].
    pub unsafe fn launch_query<F: PerQuery>(
        &self,
        mesh: &PatchedMesh,
        query: Query,
        params: F::Params,
    ) where
        F::Params: Copy + Send + Sync,
    {
        /// Launches the member of `F` of one query.
        struct Run<'a, F: PerQuery> {
            cpu: &'a CpuBackend,
            grid: u32,
            smem: usize,
            params: F::Params,
        }
        impl<F: PerQuery> ForQuery for Run<'_, F> {
            type Output = ();
            fn visit<const Q: u8>(self) {
                // SAFETY: `launch_query`'s contract.
                unsafe {
                    self.cpu
                        .launch::<F::Kernel<Q>>(self.grid, self.smem, self.params)
                }
            }
        }
        let run = Run::<F> {
            cpu: self,
            grid: mesh.num_patches(),
            smem: mesh.query_shared_bytes(query, 1),
            params,
        };
        for_query(query, run);
    }

    /// All results of `query` in global handles.
    pub fn query(&self, mesh: &PatchedMesh, query: Query) -> QueryResult {
        let raw = mesh.raw();
        let mut counts = vec![0u32; mesh.count(query.source())];
        let n = counts.len() as u32;
        let params = (raw, 0, 0, addr_mut(&mut counts), n, 0, 0);
        // SAFETY: `counts` holds `n` entries; the counting pass reads no
        // offsets and writes no values.
        unsafe { self.launch_query::<Exports>(mesh, query, params) };
        let offsets = QueryResult::offsets_of(&counts);
        let total = *offsets.last().unwrap_or(&0);
        let mut values = vec![0u32; total as usize];
        let params = (
            raw,
            addr(&offsets),
            n + 1,
            addr_mut(&mut counts),
            n,
            addr_mut(&mut values),
            total,
        );
        // SAFETY: the arrays hold the lengths passed.
        unsafe { self.launch_query::<Exports>(mesh, query, params) };
        QueryResult { offsets, values }
    }

    /// Runs `kernel(block, arena, i)` for `i` in `0..n` on the workers, each
    /// with `smem` bytes of its own shared memory.
    fn run_blocks(
        &self,
        n: u32,
        smem: usize,
        kernel: impl Fn(&HostBlock, &mut SharedArena, u32) + Sync,
    ) {
        self.blocks_on(n, smem, false, kernel);
    }

    /// [`CpuBackend::run_blocks`] for kernels that store whole shared-memory
    /// windows back to the mesh (the update round; the declared kernels say
    /// so with `Kernel::HOST_ZEROED_SHARED`): each block's shared memory is
    /// zeroed first (see [`run_block`]).
    fn run_storing_blocks(
        &self,
        n: u32,
        smem: usize,
        kernel: impl Fn(&HostBlock, &mut SharedArena, u32) + Sync,
    ) {
        self.blocks_on(n, smem, true, kernel);
    }

    fn blocks_on(
        &self,
        n: u32,
        smem: usize,
        zeroed: bool,
        kernel: impl Fn(&HostBlock, &mut SharedArena, u32) + Sync,
    ) {
        (0..n).into_par_iter().for_each_init(
            || shared_buffer(smem),
            |buf, i| run_block(buf, smem, zeroed, i, &kernel),
        );
    }

    /// One update round of `app` over the dynamic mesh at `raw` with
    /// `blocks` blocks. In the deterministic schedule each block takes one
    /// patch (the round's picks: one block per picked patch). In the
    /// racing one at most one block per worker runs, each taking patches
    /// until the round's share is taken, reusing its shared memory from
    /// one patch to the next as the GPU's blocks do: patch locks, the
    /// queue and expansions race as on the GPU.
    ///
    /// # Safety
    /// `raw` must describe live host arrays of a dynamic mesh (see
    /// [`RawDynamicMesh`]) that nothing else accesses during the call.
    pub unsafe fn update_round<A: CavityApp + Sync>(
        &self,
        raw: &RawDynamicMesh,
        app: &A,
        blocks: u32,
        salt: u32,
    ) {
        let smem = update::shared_bytes::<A>(&raw.cap, 1);
        let racing = self.schedule == Schedule::Racing;
        let blocks = if racing {
            blocks.min(rayon::current_num_threads() as u32)
        } else {
            blocks
        };
        self.run_storing_blocks(blocks, smem, |b, arena, _| {
            // SAFETY: the caller's contract; blocks only share the mesh
            // through its atomic words and patch locks.
            let mesh = unsafe { DynMesh::new(raw) };
            while update::update(b, arena, &mesh, app, salt) && racing {
                // SAFETY: the windows of the patch just processed are not
                // used again.
                unsafe { arena.reset() };
            }
        });
    }

    /// The survey between sweeps of `app` (`dynamic::update::survey`, one
    /// block per patch slot in use; each block writes only its own
    /// patch's flags, so the outcome does not depend on the schedule).
    ///
    /// # Safety
    /// As for [`CpuBackend::update_round`].
    pub unsafe fn survey<A: CavityApp + Sync>(&self, raw: &RawDynamicMesh, app: &A, salt: u32) {
        let smem = update::shared_bytes::<A>(&raw.cap, 1);
        self.run_blocks(raw.num_patches, smem, |b, arena, p| {
            // SAFETY: the caller's contract.
            let mesh = unsafe { DynMesh::new(raw) };
            update::survey(b, arena, &mesh, app, p, salt);
        });
    }

    /// Slices every patch flagged `SLICE` (`dynamic::slice`, one block per
    /// patch slot in use) by a round of an application with seeds of kind
    /// `seed`. With the deterministic schedule the blocks run one after
    /// another in patch order, so that the halves take the free slots in
    /// that order.
    ///
    /// # Safety
    /// As for [`CpuBackend::update_round`].
    pub unsafe fn slice(&self, raw: &RawDynamicMesh, seed: Kind) {
        let smem = slice::shared_bytes(&raw.cap, 1);
        let (grid, params) = (raw.num_patches, (*raw, seed as u32));
        // SAFETY: the caller's contract; each block writes only its own
        // patch and the slot it claims.
        unsafe {
            match self.schedule {
                Schedule::Racing => self.launch::<Slice>(grid, smem, params),
                Schedule::Deterministic => self.launch_serial::<Slice>(grid, smem, params),
            }
        }
    }

    /// The per-patch partials of reduction `r` (applied, for `Axpy`) over
    /// `raw`'s patches in use (`cavity_device::dynamic::reduce`).
    ///
    /// # Safety
    /// As for [`CpuBackend::update_round`].
    pub unsafe fn reduce(&self, raw: &RawDynamicMesh, r: &Reduction) -> Vec<f64> {
        let mut partials = vec![0f64; raw.num_patches as usize];
        let out = partials.as_mut_ptr() as u64;
        // SAFETY: the caller's contract; each block writes only its own
        // patch's elements and partial, and `partials` holds one per block.
        unsafe { self.launch::<Reduce>(raw.num_patches, reduce::shared_bytes(1), (*raw, *r, out)) };
        partials
    }

    /// Queues the patches for a sweep (`scheduler::refill`, one block).
    ///
    /// # Safety
    /// As for [`CpuBackend::update_round`].
    pub unsafe fn refill(&self, raw: &RawDynamicMesh, changed_only: bool) {
        let smem = scheduler::refill_shared_bytes(1);
        // SAFETY: the caller's contract.
        unsafe { self.launch::<Refill>(1, smem, (*raw, changed_only as u32)) };
    }

    /// The cleanup kernels over every patch: calibration, then compaction.
    ///
    /// # Safety
    /// As for [`CpuBackend::update_round`].
    pub unsafe fn cleanup(&self, raw: &RawDynamicMesh) {
        let smem = cleanup::compact_shared_bytes(&raw.cap, 1);
        // SAFETY: the caller's contract.
        unsafe {
            self.launch::<Calibrate>(raw.num_patches, 0, (*raw,));
            self.launch::<Compact>(raw.num_patches, smem, (*raw,));
        }
    }
}

/// Runs `K`'s body as block `i` of `grid` on `block` and `arena`.
///
/// # Safety
/// `params` keep `K`'s contract.
#[inline(always)]
unsafe fn run_kernel<K: Kernel>(
    block: &HostBlock,
    arena: &mut SharedArena,
    i: u32,
    grid: u32,
    params: K::Params,
) {
    let mut launch = Launch {
        block,
        arena,
        block_idx: i,
        grid_dim: grid,
    };
    // SAFETY: forwarded.
    unsafe { K::run(&mut launch, params) }
}

/// The address of a host array as a kernel parameter.
fn addr<T>(slice: &[T]) -> u64 {
    slice.as_ptr() as u64
}

/// The address of a host array a kernel writes.
fn addr_mut<T>(slice: &mut [T]) -> u64 {
    slice.as_mut_ptr() as u64
}

/// A worker's shared memory: at least `smem` bytes, 16-byte aligned.
fn shared_buffer(smem: usize) -> Vec<u128> {
    vec![0u128; smem.div_ceil(16)]
}

/// Runs `kernel` as block `i` on `buf` (from [`shared_buffer`] for `smem`
/// bytes, used by this block alone during the call), `zeroed` first: a
/// kernel that stores whole windows (a patch's FE rows up to its
/// high-water mark, free slots included) must not carry what a previous
/// block left in the free slots into the mesh, or the arrays would depend
/// on which worker ran which block before.
fn run_block(
    buf: &mut [u128],
    smem: usize,
    zeroed: bool,
    i: u32,
    kernel: &impl Fn(&HostBlock, &mut SharedArena, u32),
) {
    assert!(buf.len() * 16 >= smem);
    if zeroed {
        buf.fill(0);
    }
    // SAFETY: `buf` is 16-byte aligned, holds at least `smem` bytes (checked
    // above) and is borrowed mutably for the call: no other block uses it.
    let mut arena = unsafe { SharedArena::new(buf.as_mut_ptr() as *mut u8, smem) };
    kernel(&HostBlock, &mut arena, i);
}

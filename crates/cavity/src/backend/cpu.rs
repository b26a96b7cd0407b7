//! The CPU backend: the device crate's patch kernels run on the host, one
//! patch per rayon worker, each worker with its own shared-memory buffer
//! ([`cavity_device::block::HostBlock`]).

use std::sync::atomic::AtomicU32;

use rayon::prelude::*;

use cavity_device::block::{HostBlock, Scatter, SharedArena};
use cavity_device::dynamic::cavity::CavityApp;
use cavity_device::dynamic::global::{FrozenU32, GlobalU32};
use cavity_device::dynamic::layout::RawDynamicMesh;
use cavity_device::dynamic::patch::DynMesh;
use cavity_device::dynamic::smooth::{self, Smoothing};
use cavity_device::dynamic::{cleanup, scheduler, slice, update};
use cavity_device::layout::Kind;
use cavity_device::query::{self, Neighbors, Query};
use cavity_device::track::{self, Advection};
use cavity_device::workload::ExportTarget;
use cavity_device::{normals, workload};

use super::{QueryResult, max_shared_bytes, sources};
use crate::patched::PatchedMesh;

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
        self.run_patches(mesh, max_shared_bytes(mesh, query, 1), |block, arena, p| {
            query::for_each(block, arena, &view, p, query, &active, &f);
        });
    }

    /// All results of `query` in global handles.
    pub fn query(&self, mesh: &PatchedMesh, query: Query) -> QueryResult {
        let view = mesh.view();
        let smem = max_shared_bytes(mesh, query, 1);
        let mut counts = vec![0u32; sources(mesh, query)];
        let mut none: [u32; 0] = [];
        {
            let c = Scatter::new(&mut counts);
            let o = Scatter::new(&mut none);
            let target = ExportTarget {
                offsets: None,
                counts: &c,
                out: &o,
            };
            self.run_patches(mesh, smem, |b, a, p| {
                workload::export(b, a, &view, p, query, &target)
            });
        }
        let offsets = QueryResult::offsets_of(&counts);
        let mut values = vec![0u32; *offsets.last().unwrap_or(&0) as usize];
        {
            let c = Scatter::new(&mut counts);
            let o = Scatter::new(&mut values);
            let target = ExportTarget {
                offsets: Some(&offsets),
                counts: &c,
                out: &o,
            };
            self.run_patches(mesh, smem, |b, a, p| {
                workload::export(b, a, &view, p, query, &target)
            });
        }
        QueryResult { offsets, values }
    }

    /// `out[src] = Σ attr[n]` over `query`'s results (the benchmark workload).
    pub fn neighbor_sum(&self, mesh: &PatchedMesh, query: Query, attr: &[f32], out: &mut [f32]) {
        let view = mesh.view();
        let smem = max_shared_bytes(mesh, query, 1);
        let o = Scatter::new(out);
        self.run_patches(mesh, smem, |b, a, p| {
            workload::neighbor_sum(b, a, &view, p, query, attr, &o)
        });
    }

    /// Area-weighted unit vertex normals, `3 * vertices` floats by handle.
    pub fn vertex_normals(&self, mesh: &PatchedMesh, positions: &[f32]) -> Vec<f32> {
        let view = mesh.view();
        let acc: Vec<AtomicU32> = (0..positions.len()).map(|_| AtomicU32::new(0)).collect();
        let smem = max_shared_bytes(mesh, Query::FV, 1);
        self.run_patches(mesh, smem, |b, a, p| {
            normals::accumulate(b, a, &view, p, positions, &acc)
        });
        (0..(positions.len() / 3) as u32)
            .into_par_iter()
            .for_each(|v| normals::normalize(v, &acc));
        acc.into_iter()
            .map(|a| f32::from_bits(a.into_inner()))
            .collect()
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
    /// windows back to the mesh (update, slicing, compaction): each block's
    /// shared memory is zeroed first (see [`run_block`]).
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
        let kernel = |b: &HostBlock, arena: &mut SharedArena, p| {
            // SAFETY: the caller's contract; each block writes only its own
            // patch and the slot it claims.
            let mesh = unsafe { DynMesh::new(raw) };
            slice::slice(b, arena, &mesh, p, seed);
        };
        match self.schedule {
            Schedule::Racing => self.run_storing_blocks(raw.num_patches, smem, kernel),
            Schedule::Deterministic => {
                let mut buf = shared_buffer(smem);
                for p in 0..raw.num_patches {
                    run_block(&mut buf, smem, true, p, &kernel);
                }
            }
        }
    }

    /// `steps` smoothing steps (`dynamic::smooth`): the rings, the steps
    /// between the two position buffers of `scratch`, the copy over the
    /// positions, one block per patch each; nothing when `steps` is 0.
    ///
    /// # Safety
    /// As for [`CpuBackend::update_round`]; `scratch` holds at least
    /// `smooth::scratch_layout(&raw.cap)[4]` words.
    pub unsafe fn smooth(
        &self,
        raw: &RawDynamicMesh,
        scratch: &mut [u32],
        params: &Smoothing,
        steps: u32,
    ) {
        let [a, b, headers, entries, len] = smooth::scratch_layout(&raw.cap);
        assert!(scratch.len() as u64 >= len);
        if steps == 0 {
            return;
        }
        let base = scratch.as_mut_ptr() as u64;
        let at = |word: u64| base + 4 * word;
        // SAFETY: the words are inside `scratch`, which outlives the calls;
        // each block writes only its own patch's slots and entries.
        let view = |word: u64| unsafe { GlobalU32::new(at(word)) };
        // SAFETY: as above; the steps read the rings and one position
        // buffer, which nothing writes while they run.
        let frozen = |word: u64| unsafe { FrozenU32::new(at(word)) };
        let smem = smooth::shared_bytes(&raw.cap, 1);
        self.run_blocks(raw.num_patches, smem, |blk, arena, p| {
            // SAFETY: the caller's contract.
            let mesh = unsafe { DynMesh::new(raw) };
            let rings = smooth::Rings {
                headers: view(headers),
                entries: view(entries),
            };
            smooth::rings(blk, arena, &mesh, p, rings, view(a), params);
        });
        let (mut from, mut to) = (a, b);
        for _ in 0..steps {
            self.run_blocks(raw.num_patches, 0, |blk, _, p| {
                // SAFETY: the caller's contract.
                let mesh = unsafe { DynMesh::new(raw) };
                let rings = smooth::Rings {
                    headers: frozen(headers),
                    entries: frozen(entries),
                };
                smooth::step(blk, &mesh, p, rings, frozen(from), view(to), params);
            });
            (from, to) = (to, from);
        }
        self.run_blocks(raw.num_patches, 0, |blk, _, p| {
            // SAFETY: the caller's contract; each block writes only its own
            // vertices.
            let mesh = unsafe { DynMesh::new(raw) };
            smooth::apply(blk, &mesh, p, view(from));
        });
    }

    /// One advection step of every owned vertex through `field`
    /// (`cavity_device::track::advect`), one block per patch.
    ///
    /// # Safety
    /// As for [`CpuBackend::update_round`].
    pub unsafe fn advect(&self, raw: &RawDynamicMesh, field: &Advection) {
        self.run_blocks(raw.num_patches, 0, |b, _, p| {
            // SAFETY: the caller's contract; each block writes only its own
            // vertices' positions.
            let mesh = unsafe { DynMesh::new(raw) };
            track::advect(b, &mesh, p, field);
        });
    }

    /// Stores every owned vertex's valence in its `VALENCE_ATTR` attribute
    /// (`cavity_device::remesh::store_valences`), one block per patch.
    ///
    /// # Safety
    /// As for [`CpuBackend::update_round`].
    pub unsafe fn store_valences(&self, raw: &RawDynamicMesh) {
        let smem = smooth::shared_bytes(&raw.cap, 1);
        self.run_blocks(raw.num_patches, smem, |b, arena, p| {
            // SAFETY: the caller's contract; each block writes only its own
            // vertices' attributes.
            let mesh = unsafe { DynMesh::new(raw) };
            cavity_device::remesh::store_valences(b, arena, &mesh, p);
        });
    }

    /// Queues the patches for a sweep (`scheduler::refill`, one block).
    ///
    /// # Safety
    /// As for [`CpuBackend::update_round`].
    pub unsafe fn refill(&self, raw: &RawDynamicMesh, changed_only: bool) {
        let smem = scheduler::refill_shared_bytes(1);
        self.run_blocks(1, smem, |b, arena, _| {
            // SAFETY: the caller's contract.
            let mesh = unsafe { DynMesh::new(raw) };
            scheduler::refill(b, arena, &mesh, changed_only);
        });
    }

    /// The cleanup kernels over every patch: calibration, then compaction.
    ///
    /// # Safety
    /// As for [`CpuBackend::update_round`].
    pub unsafe fn cleanup(&self, raw: &RawDynamicMesh) {
        self.run_blocks(raw.num_patches, 0, |b, _, p| {
            // SAFETY: the caller's contract.
            let mesh = unsafe { DynMesh::new(raw) };
            cleanup::calibrate(b, &mesh, p);
        });
        let smem = cleanup::compact_shared_bytes(&raw.cap, 1);
        self.run_storing_blocks(raw.num_patches, smem, |b, arena, p| {
            // SAFETY: the caller's contract.
            let mesh = unsafe { DynMesh::new(raw) };
            cleanup::compact(b, arena, &mesh, p);
        });
    }
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

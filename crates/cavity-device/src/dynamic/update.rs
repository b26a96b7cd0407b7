//! One update round of a dynamic application (dynamic paper, sections 4.3
//! and 5): each block dequeues a patch, locks it, loads it into shared
//! memory, registers the cavities, resolves intra-patch conflicts (maximal
//! independent set), expands the patch over inter-patch ones (in up to
//! [`MAX_EXPANSION_STEPS`] steps, as the stars copied in show more of a
//! cavity), fills the surviving cavities in and commits. Seeds whose
//! fill-in declined are remembered for the sweep. A patch whose cavities
//! lost is enqueued again for the next round; the host runs the cleanup
//! kernels between rounds and relaunches until the queue is empty.

use core::marker::PhantomData;

use crate::block::{Block, SharedArena};
use crate::kernel::{DYNAMIC_BOUNDS, Kernel, Launch, LaunchBounds, PlainData};

use super::cavity::{
    self, CTL_CHANGED, CTL_DEFERRED, CTL_FATAL, CTL_FILLED, CTL_NO_ROOM, CTL_OK, CTL_PATCH,
    CTL_TAKEN, CTL_WAITING, CavityApp, Ctx, NONE, Work,
};
use super::global::fence;
use super::layout::{Capacity, NO_PATCH, RawDynamicMesh, STASH_SIZE, flag, stat};
use super::lock;
use super::migrate::{self, Expansion, Migration, Needs};
use super::patch::{DynMesh, PatchCopy};
use super::queue;
use super::scheduler;

/// Shared memory of [`update`] for capacity `cap`, template seed kind of
/// `A` and `threads` threads per block, in bytes.
pub fn shared_bytes<A: CavityApp>(cap: &Capacity, threads: u32) -> usize {
    let mut arena = SharedArena::measuring();
    windows::<A>(&mut arena, cap, threads);
    arena.used()
}

fn windows<A: CavityApp>(
    arena: &mut SharedArena,
    cap: &Capacity,
    threads: u32,
) -> (Work, PatchCopy, Migration) {
    let work = Work::alloc(arena, cap, A::TEMPLATE.seed_kind(), threads);
    let copy = PatchCopy::alloc(arena, *cap, 0);
    let mig = Migration::alloc(arena, cap);
    (work, copy, mig)
}

/// Raises the working copy's high-water marks over the slots taken so far,
/// so that the next steps see the new elements.
#[inline(always)]
fn raise_counts<B: Block>(block: &B, copy: &PatchCopy, work: &Work) {
    if block.thread_idx() == 0 {
        cavity::commit_counts(copy, work);
    }
    block.sync();
}

/// Most expansion steps per pass.
pub const MAX_EXPANSION_STEPS: u32 = 4;

/// Loads the patch's declined seeds of this sweep into `work.declined`:
/// none when a sweep began since they were stored (`flag::NEW_SWEEP`),
/// and only those whose slot is still active (a slot freed since may hold
/// a new element now). A seed whose fill-in declined is not registered
/// again in the sweep, even after a rollback: otherwise a patch could take
/// a neighbour's elements for a cavity that then declines, the neighbour
/// take them back for one of its own, and so on for ever. Returns whether
/// the stored seeds were stale.
#[inline(always)]
pub fn load_declined<B: Block>(
    block: &B,
    mesh: &DynMesh,
    copy: &PatchCopy,
    work: &Work,
    seed: crate::layout::Kind,
) -> bool {
    let fresh = mesh.flags.load(copy.p) & flag::NEW_SWEEP != 0;
    let base = copy.p * mesh.cap.declined_words();
    block.for_each(mesh.cap.mask_words(seed), |i| {
        let stored = if fresh {
            0
        } else {
            mesh.declined.load(base + i)
        };
        work.declined.set(i, stored & copy.active_word(seed, i));
    });
    block.sync();
    fresh
}

/// Stores `work.declined` as the patch's declined seeds of this sweep and
/// clears `flag::NEW_SWEEP` (the block holds the patch's lock).
#[inline(always)]
fn store_declined<B: Block>(
    block: &B,
    mesh: &DynMesh,
    copy: &PatchCopy,
    work: &Work,
    seed: crate::layout::Kind,
) {
    let base = copy.p * mesh.cap.declined_words();
    block.for_each(mesh.cap.mask_words(seed), |i| {
        mesh.declined.store(base + i, work.declined.get(i))
    });
    if block.thread_idx() == 0 {
        mesh.flags.fetch_and(copy.p, !flag::NEW_SWEEP);
    }
}

/// The survey between the sweeps of an application (one block per patch
/// slot in use, no update running): a patch flagged `CHANGED` registers
/// its cavities on its own view, as the first pass of a processing at the
/// start of a sweep would (no seed declined yet), without locks; when it
/// has none and no predicate deferred a seed, the flag is cleared, so that
/// the sweep queues only patches with work. The sweeps after the first
/// visit the patches a fill-in or expansion touched (`rounds::sweeps`),
/// and on a 0.9 M-face scan most of them have nothing left, yet each
/// still takes a block in a round and makes its queued neighbours wait.
/// Shared memory as for [`update`].
#[inline(always)]
pub fn survey<B: Block, A: CavityApp>(
    block: &B,
    arena: &mut SharedArena,
    mesh: &DynMesh,
    app: &A,
    p: u32,
    salt: u32,
) {
    if mesh.flags.load(p) & flag::CHANGED == 0 {
        return;
    }
    let (work, mut copy, _) = windows::<A>(arena, &mesh.cap, block.block_dim());
    arena.check();
    if block.thread_idx() == 0 {
        work.ctl.set(CTL_DEFERRED, 0);
    }
    copy.p = p;
    copy.load(block, mesh);
    block.fill(work.declined, 0);
    block.fill(work.waiting, 0);
    block.sync();
    cavity::cache_positions(block, mesh, &copy, &work);
    let ctx = Ctx::new(block, mesh, &copy, &work);
    cavity::build_relations(block, &copy, &work);
    cavity::create(block, &ctx, app, salt);
    if block.thread_idx() == 0 && work.cavities() == 0 && work.ctl.get(CTL_DEFERRED) == 0 {
        mesh.flags.fetch_and(p, !flag::CHANGED);
    }
}

/// Most passes of cavity registration, conflict resolution and fill-in
/// that fill something in, per processing of a patch. Passes whose only
/// progress is declined fill-ins do not count: each declines a seed for
/// the rest of the processing, so they end by themselves, and a patch
/// whose cavities lose to a long run of declining ones would otherwise
/// replay the same passes every round. Few, since a round lasts as long
/// as its slowest block: a patch with more to fill is queued again
/// (dragon at 1.28 M faces on an H100: 1.58 s at 4, 1.67 s at 16; see
/// docs/history/2026-11-24-thirteenth-session.md).
pub const MAX_PASSES: u32 = 4;

/// Most passes in a row that neither fill nor decline anything (each
/// leaves the cavities that waited for a neighbour out of the next one).
pub const MAX_IDLE_PASSES: u32 = 2;

/// The update kernel: the block processes at most one patch from the queue
/// and returns whether it took one (none once the queue is empty, the
/// round took its share or a fatal error was recorded). On the GPU, and in
/// the CPU backend's racing schedule, a block calls it until it returns
/// false, so that a round needs no more blocks than run at once; the CPU
/// backend's deterministic schedule runs one call per picked patch.
/// `salt` varies the cavities' random priorities between rounds.
#[inline(always)]
pub fn update<B: Block, A: CavityApp>(
    block: &B,
    arena: &mut SharedArena,
    mesh: &DynMesh,
    app: &A,
    salt: u32,
) -> bool {
    let (work, mut copy, mig) = windows::<A>(arena, &mesh.cap, block.block_dim());
    arena.check();
    let t0 = block.thread_idx() == 0;
    let qlen = mesh.cap.patches;
    if t0 {
        // A round after a fatal error (launched before the host read the
        // status of the round that erred) does nothing.
        let p = if mesh.failed() {
            NONE
        } else {
            queue::pop(mesh.queue, mesh.queue_state, qlen).unwrap_or(NONE)
        };
        work.ctl.set(CTL_PATCH, p);
        for i in [
            CTL_OK,
            CTL_CHANGED,
            CTL_FILLED,
            CTL_NO_ROOM,
            CTL_FATAL,
            CTL_DEFERRED,
            CTL_TAKEN,
            CTL_TAKEN + 1,
            CTL_WAITING,
        ] {
            work.ctl.set(i, 0);
        }
    }
    block.sync();
    let p = work.ctl.get(CTL_PATCH);
    if p == NONE {
        return false;
    }
    // A neighbour that outranks the patch in this round and competes in it
    // goes first: the patch is enqueued again untouched.
    let mut outranked = false;
    block.for_each(STASH_SIZE, |s| {
        let q = mesh.stash.load(p * STASH_SIZE + s);
        outranked |= q != NO_PATCH && q != p && scheduler::outranks(q, p, salt) && mesh.competes(q);
    });
    let outranked = block.sync_any(outranked);
    if t0 {
        let mut ok = false;
        if outranked {
            mesh.enqueue(p);
            mesh.add_stat(stat::OUTRANKED, 1);
        } else {
            mesh.add_stat(stat::SCHEDULED, 1);
            if lock::try_lock(mesh.locks, p, p) {
                ok = mesh.flags.load(p) & flag::DIRTY == 0;
                if ok {
                    mesh.flags.fetch_and(p, !flag::QUEUED);
                } else {
                    lock::unlock(mesh.locks, p);
                }
            }
            if !ok {
                mesh.enqueue(p);
                mesh.add_stat(stat::ROLLED_BACK, 1);
            }
        }
        work.ctl.set(CTL_OK, ok as u32);
    }
    block.sync();
    if work.ctl.get(CTL_OK) == 0 {
        return true;
    }
    fence();
    copy.p = work.ctl.get(CTL_PATCH);
    copy.load(block, mesh);
    block.sync();
    cavity::mark_fresh(
        block,
        &copy,
        &work,
        mesh.flags.load(copy.p) & flag::NAMED != 0,
    );
    let stale = load_declined(block, mesh, &copy, &work, A::TEMPLATE.seed_kind());
    block.fill(work.waiting, 0);
    cavity::cache_positions(block, mesh, &copy, &work);
    let ctx = Ctx::new(block, mesh, &copy, &work);
    let template = A::TEMPLATE;
    // Passes over the patch: cavities that lost only to a cavity whose
    // fill-in then declined get their turn in the next pass, and each pass
    // registers cavities on the topology the previous one left.
    let mut changed = false;
    let mut failed = false;
    let mut lost = 0;
    let mut declined_total = 0;
    let mut filling_passes = 0;
    let mut idle_passes = 0;
    let mut crowded = false;
    for pass in 0u32.. {
        // A pass out of room that filled something freed slots for the
        // next one; only the last pass's shortage counts.
        if t0 {
            work.ctl.set(CTL_NO_ROOM, 0);
        }
        cavity::build_free_lists(block, &copy, &work, A::TEMPLATE.seed_kind());
        cavity::build_relations(block, &copy, &work);
        cavity::create(block, &ctx, app, salt ^ pass.wrapping_mul(0x9e37_79b9));
        if work.cavities() == 0 {
            lost = 0;
            break;
        }
        cavity::propagate(&ctx, app, false);
        if !A::JOINS_BOUNDARY {
            cavity::maximize(&ctx, app);
        }
        cavity::independent_set(block, &copy, &work, template, A::JOINS_BOUNDARY);
        // Expansion steps: the stars copied in may show a cavity more of
        // itself (the whole star of a vertex it deletes), which the next
        // step takes, before another patch can take the first step's
        // elements back for a cavity of its own.
        let mut steps = 0;
        let mut grew = false;
        loop {
            let expansion = migrate::migrate(block, mesh, &copy, &work, &mig, template);
            raise_counts(block, &copy, &work);
            if expansion == Expansion::Unchanged {
                break;
            }
            // The patch grew (or copies came in): derive the relations and
            // cavities again.
            grew |= expansion == Expansion::Changed;
            changed |= grew;
            failed |= expansion == Expansion::Failed;
            cavity::cache_positions(block, mesh, &copy, &work);
            cavity::build_relations(block, &copy, &work);
            cavity::propagate(&ctx, app, true);
            cavity::independent_set(block, &copy, &work, template, A::JOINS_BOUNDARY);
            steps += 1;
            if expansion == Expansion::Failed || steps == MAX_EXPANSION_STEPS {
                // What still needs a neighbour waits.
                migrate::visit_closures(block, &copy, &work, &mig, template, Needs::DropAll);
                break;
            }
        }
        let before = work.ctl.get(CTL_FILLED);
        cavity::fill(block, &ctx, app);
        raise_counts(block, &copy, &work);
        let n = work.cavities();
        let mut mine = [0u32; 2];
        block.for_each(n, |c| {
            let st = work.state.get(c);
            mine[0] += (st == cavity::state::LOST) as u32;
            mine[1] += (st == cavity::state::DECLINED) as u32;
        });
        // Totals through the cavity scratch (free after the fill).
        block.for_each(2, |i| work.scratch.set(i, 0));
        block.sync();
        for (i, &m) in mine.iter().enumerate() {
            if m > 0 {
                block.shared_fetch_add(work.scratch, i as u32, m);
            }
        }
        block.sync();
        lost = work.scratch.get(0);
        let declined = work.scratch.get(1);
        declined_total += declined;
        let filled_now = work.ctl.get(CTL_FILLED) > before;
        crowded |= pass == 0 && work.ctl.get(CTL_NO_ROOM) != 0;
        filling_passes += filled_now as u32;
        // A pass that only dropped cavities for want of a neighbour makes
        // way for the cavities they overlapped, a few times in a row.
        idle_passes = if filled_now || declined > 0 {
            0
        } else {
            idle_passes + 1
        };
        block.sync();
        // Seeds that came in with the expansion of a cavity that then
        // declined are registered in a further pass (unless their old
        // owner declined them: `migrate::carry_declined`): no other patch
        // owns them now, and a sweep that fills nothing is the last.
        let unseen = grew && work.ctl.get(CTL_FILLED) == 0;
        if (lost == 0 && !unseen)
            || idle_passes > MAX_IDLE_PASSES
            || failed
            || (work.ctl.get(CTL_NO_ROOM) != 0 && !filled_now)
            || filling_passes == MAX_PASSES
        {
            break;
        }
    }
    let filled = work.ctl.get(CTL_FILLED);
    let commit = changed || filled > 0;
    if commit {
        copy.store(block, mesh);
    }
    // Unchanged unless this processing declined, took seeds (with their
    // marks: `migrate::carry_declined`) or the stored seeds were stale.
    if stale || declined_total > 0 || changed {
        store_declined(block, mesh, &copy, &work, A::TEMPLATE.seed_kind());
    }
    fence();
    block.sync();
    if t0 {
        mesh.add_stat(stat::LOST, lost);
        mesh.add_stat(stat::DECLINED, declined_total);
        let p = copy.p;
        if commit {
            mesh.flags.fetch_or(p, flag::DIRTY | flag::CHANGED);
        } else if declined_total > 0 || work.ctl.get(CTL_DEFERRED) != 0 {
            mesh.flags.fetch_or(p, flag::CHANGED);
        }
        // A cavity out of room. After fill-ins the cleanup frees the slots
        // this processing deleted (and drops surplus ribbon copies), so the
        // patch tries again; with nothing filled (at most an expansion
        // committed, which the neighbour may take back) it is sliced
        // (slicing enqueues both halves), so that no cavity is dropped and
        // no patch retries for ever. A patch that was full from its first
        // pass on is sliced too where that is cheap (`flag::CROWDED`).
        let no_room = work.ctl.get(CTL_NO_ROOM) != 0;
        let slice = no_room && filled == 0;
        if slice {
            mesh.flags.fetch_or(p, flag::SLICE);
        } else if no_room && crowded {
            mesh.flags.fetch_or(p, flag::CROWDED);
        }
        let fatal = work.ctl.get(CTL_FATAL);
        if fatal != 0 {
            mesh.stats.store(stat::FATAL, fatal);
        }
        mesh.add_stat(stat::FILLED, filled);
        // Cavities left waiting (or lost in the last pass) are retried.
        let retry = lost > 0 || work.ctl.get(CTL_WAITING) != 0;
        if !commit && retry {
            mesh.add_stat(stat::ROLLED_BACK, 1);
        }
        if (retry || no_room) && !slice {
            mesh.enqueue(p);
        }
        lock::unlock(mesh.locks, p);
    }
    true
}

/// A cavity application with GPU kernels: its update round
/// ([`UpdateKernel`]) and survey ([`SurveyKernel`]), parameters
/// `(RawDynamicMesh, salt, application)`.
///
/// # Safety
/// [`CavityKernels::UPDATE`] and [`CavityKernels::SURVEY`] name entry
/// points with those parameters that run those bodies: implement it with
/// [`cavity_kernels!`](macro@crate::cavity_kernels) only.
pub unsafe trait CavityKernels: CavityApp + PlainData + Send + Sync + 'static {
    /// The update kernel's entry name.
    const UPDATE: &'static str;
    /// The survey kernel's entry name.
    const SURVEY: &'static str;
}

/// The update round of cavity application `A` ([`update`]): each
/// block takes queued patches until the round's share is taken.
///
/// # Safety
/// The mesh describes live arrays of a dynamic mesh; dynamic shared memory
/// is [`shared_bytes`]`::<A>(&mesh.cap, threads)`.
pub struct UpdateKernel<A>(PhantomData<fn() -> A>);

/// The survey between sweeps of cavity application `A`: one block per
/// patch slot in use ([`survey`]).
///
/// # Safety
/// As for [`UpdateKernel`].
pub struct SurveyKernel<A>(PhantomData<fn() -> A>);

// SAFETY: `A::UPDATE` is such an entry (`CavityKernels`).
unsafe impl<A: CavityKernels> Kernel for UpdateKernel<A> {
    const NAME: &'static str = A::UPDATE;
    const BOUNDS: LaunchBounds = DYNAMIC_BOUNDS;
    const HOST_ZEROED_SHARED: bool = true;
    type Params = (RawDynamicMesh, u32, A);

    #[inline(always)]
    unsafe fn run<B: Block>(launch: &mut Launch<'_, B>, (mesh, salt, app): Self::Params) {
        // SAFETY: the kernel's contract.
        let m = unsafe { DynMesh::new(&mesh) };
        while update(launch.block, launch.arena, &m, &app, salt) {
            // SAFETY: the windows of the patch just processed are not used
            // again.
            unsafe { launch.arena.reset() };
        }
    }
}

// SAFETY: `A::SURVEY` is such an entry (`CavityKernels`).
unsafe impl<A: CavityKernels> Kernel for SurveyKernel<A> {
    const NAME: &'static str = A::SURVEY;
    const BOUNDS: LaunchBounds = DYNAMIC_BOUNDS;
    const HOST_ZEROED_SHARED: bool = false;
    type Params = (RawDynamicMesh, u32, A);

    #[inline(always)]
    unsafe fn run<B: Block>(launch: &mut Launch<'_, B>, (mesh, salt, app): Self::Params) {
        // SAFETY: the kernel's contract.
        let m = unsafe { DynMesh::new(&mesh) };
        survey(launch.block, launch.arena, &m, &app, launch.block_idx, salt);
    }
}

/// Declares cavity applications' GPU kernels: for each type (a
/// [`CavityApp`], plain `repr(C)` data, `bytemuck::Pod` on the host), the
/// [`CavityKernels`] implementation and, on `nvptx64`, the entry points
/// `CRATE_UpdateName` and `CRATE_SurveyName` of [`UpdateKernel`] and
/// [`SurveyKernel`].
#[macro_export]
macro_rules! cavity_kernels {
    (@core $($app:ident),+ $(,)?) => {
        $crate::cavity_kernels!(
            @declare [all(target_arch = "nvptx64", feature = "core-entries")] $($app),+
        );
    };
    ($($app:ident),+ $(,)?) => {
        $crate::cavity_kernels!(@declare [target_arch = "nvptx64"] $($app),+);
    };
    (@declare [$cfg:meta] $($app:ident),+) => {$(
        // SAFETY: the entry points below take the update and survey
        // kernels' parameters and run their bodies.
        unsafe impl $crate::dynamic::update::CavityKernels for $app {
            const UPDATE: &'static str = $crate::kernel!(@name concat!("Update", stringify!($app)));
            const SURVEY: &'static str = $crate::kernel!(@name concat!("Survey", stringify!($app)));
        }

        $crate::kernel!(
            @entry [$cfg] $crate::kernel!(@name concat!("Update", stringify!($app))),
            $crate::dynamic::update::UpdateKernel<$app>,
            (mesh: $crate::dynamic::layout::RawDynamicMesh, salt: u32, app: $app)
        );
        $crate::kernel!(
            @entry [$cfg] $crate::kernel!(@name concat!("Survey", stringify!($app))),
            $crate::dynamic::update::SurveyKernel<$app>,
            (mesh: $crate::dynamic::layout::RawDynamicMesh, salt: u32, app: $app)
        );
    )+};
}

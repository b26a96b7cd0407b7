//! The host side of the queue scheduler (dynamic paper, sections 4.3 and
//! 5.3): a dynamic application runs in *sweeps*; a sweep enqueues every
//! patch and launches update rounds (the blocks take the queued patches,
//! then the cleanup kernels run) until the queue is empty. On the GPU each
//! round is launched before the previous round's status is read
//! ([`Rounds::runs_ahead`]), so that the device does not wait for the host
//! between rounds. [`Rounds`] is one backend's
//! way of doing that on a [`DynamicMesh`], and [`Update`] its update round
//! of one application (a backend runs any number of applications on the
//! same mesh, one after another, without copying it):
//! `backend::cpu::CpuRounds` runs the kernels on the host arrays,
//! `backend::cuda::CudaRounds` on device copies, `backend::AnyRounds`
//! either.
//!
//! Longer than 700 lines as one file on purpose: most of it is the
//! documented interface of the rounds (`Rounds`, `ForEach`,
//! `ForEachPatch`, `Update`) and the sweep drivers written on it; the
//! implementations live in `backend::cpu` and `backend::cuda`.

use std::time::Instant;

use rayon::prelude::*;

use cavity_device::attribute::{Attr, ReduceOp, Reduction, Scalar};
use cavity_device::dynamic::cavity::CavityApp;
use cavity_device::dynamic::compute::ElementKernels;
use cavity_device::dynamic::layout::{Capacity, POSITION, flag, stat};
use cavity_device::dynamic::patch_computation::PatchKernels;
use cavity_device::dynamic::queue;
use cavity_device::layout::Kind;
use cavity_device::query::Query;

use crate::attributes::{self, AttributeError, AttributeLayout};
use crate::backend::error::BackendError;
use crate::dynamic::{DynamicMesh, values_of};
use crate::query_result::QueryResult;
use crate::settings::{NamesSettings, Setting};

/// Declares the steps of an application's loop (remeshing's phases,
/// tracking's steps): a plain enum with `ALL` (in order), `name()` and
/// `Display`.
#[macro_export]
macro_rules! steps {
    (
        $(#[$meta:meta])*
        pub enum $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $name { $($(#[$vmeta])* $variant),+ }

        impl $name {
            /// All of them, in order.
            pub const ALL: [$name; [$($text),+].len()] = [$($name::$variant),+];

            /// In words.
            pub fn name(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

/// Most update rounds per sweep before the run is declared stuck.
pub const MAX_ROUNDS: u32 = 10_000;
/// Most sweeps.
pub const MAX_SWEEPS: u32 = 1_000;

/// What a run of sweeps did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunReport {
    /// Cavities filled in (operations done).
    pub flips: u64,
    /// Sweeps (the last one filled nothing).
    pub sweeps: u32,
    /// Update rounds (launches of the update kernel).
    pub rounds: u32,
    /// Patches dequeued by blocks (not counting the outranked ones).
    pub scheduled: u64,
    /// Dequeued patches given back untouched because a competing
    /// neighbour outranked them in the round.
    pub outranked: u64,
    /// Dequeued patches given back without a commit (fig. 6's rolled-back
    /// work).
    pub rolled_back: u64,
    /// Cavities that lost a conflict or could not own their closure
    /// (retried).
    pub lost: u64,
    /// Cavities whose fill-in declined (the application's own check failed
    /// on the cavity it was given).
    pub declined: u64,
    /// Slicing launches (rounds after which patches out of room were
    /// split).
    pub slices: u32,
    /// Patch slots in use at the end.
    pub patches: u32,
    /// Wall time in seconds.
    pub seconds: f64,
}

impl RunReport {
    /// Rolled-back patches over scheduled patches.
    pub fn rollback_fraction(&self) -> f64 {
        self.rolled_back as f64 / self.scheduled.max(1) as f64
    }

    /// Adds the counts and time of the later run `r` (the patch count is
    /// `r`'s).
    pub fn add(&mut self, r: &RunReport) {
        self.flips += r.flips;
        self.sweeps += r.sweeps;
        self.rounds += r.rounds;
        self.scheduled += r.scheduled;
        self.outranked += r.outranked;
        self.rolled_back += r.rolled_back;
        self.lost += r.lost;
        self.declined += r.declined;
        self.slices += r.slices;
        self.patches = r.patches;
        self.seconds += r.seconds;
    }
}

/// The patches whose flags carry `flag::MARKED`, ascending, with the mark
/// cleared.
pub(crate) fn take_marks(flags: &mut [u32]) -> Vec<u32> {
    let mut marked = Vec::new();
    for (p, f) in flags.iter_mut().enumerate() {
        if *f & flag::MARKED != 0 {
            *f &= !flag::MARKED;
            marked.push(p as u32);
        }
    }
    marked
}

/// Checks a patch list of [`ForEach::for_each_in`]: every entry a patch
/// slot in use (below `num_patches`), none twice.
pub(crate) fn check_patch_list(patches: &[u32], num_patches: u32) -> Result<(), RunError> {
    let mut seen = vec![false; num_patches as usize];
    for &p in patches {
        match seen.get_mut(p as usize) {
            Some(s) if !*s => *s = true,
            _ => {
                return Err(RunError::Fatal(
                    "a patch list names a patch slot that is not in use, or one twice",
                    &[],
                ));
            }
        }
    }
    Ok(())
}

/// FF from FE and EF (both in element order): row `f` lists, edge by
/// edge of `f`, the other faces of each edge, each face once (as the
/// static FF and the reference mesh's: faces across a non-manifold edge
/// included).
pub fn compose_ff(fe: &QueryResult, ef: &QueryResult) -> QueryResult {
    let faces = fe.offsets.len().saturating_sub(1) as u32;
    let mut offsets = Vec::with_capacity(faces as usize + 1);
    let mut values = Vec::new();
    offsets.push(0);
    for f in 0..faces {
        let start = values.len();
        for &e in fe.row(f) {
            for &g in ef.row(e) {
                if g != f && !values[start..].contains(&g) {
                    values.push(g);
                }
            }
        }
        offsets.push(values.len() as u32);
    }
    QueryResult { offsets, values }
}

/// Runs sweeps of `app` on `runner` until a sweep fills no cavity.
/// With `changed_only`, a sweep after the first visits only the patches
/// flagged `CHANGED` in the previous one that register a cavity on their
/// view ([`Update::survey`]). That is right when whether an element is a
/// candidate depends only on the positions, which no sweep moves, and on
/// the elements its patch holds, as for the Delaunay flips, the splits and
/// the collapses. The valence flips read the valences of vertices another
/// patch owns, so a changed neighbour may make a flip worth doing that no
/// later sweep visits: remeshing accepts that, as [`sweeps_at_most`]
/// says. `after_round` sees the mesh after every
/// round's cleanup when given (on the GPU that copies the mesh back every
/// round).
///
/// # Errors
/// A failed round, no progress after [`MAX_ROUNDS`] rounds of a sweep, or
/// cavities still filled after [`MAX_SWEEPS`] sweeps.
pub fn sweeps<A: CavityApp, R: Update<A> + ?Sized>(
    runner: &mut R,
    app: &A,
    changed_only: bool,
    after_round: Option<&mut dyn FnMut(&DynamicMesh)>,
) -> Result<RunReport, RunError> {
    let options = SweepOptions {
        changed_only,
        after_round,
        ..SweepOptions::default()
    };
    sweeps_with(runner, app, options)
}

/// Runs at most `max` sweeps of `app` on `runner` (fewer when one fills
/// no cavity), each after the first visiting only the patches flagged
/// `CHANGED` (see [`sweeps`]): for operations where one pass over the mesh
/// is the algorithm and later sweeps only mop up, as the collapses and
/// flips of isotropic remeshing (Botsch and Kobbelt 2004 collapse, then
/// flip, in one pass over the edges; a flip that a neighbour's valence
/// change made worth doing and that no later sweep visits waits for the
/// next iteration). The first sweep is such a pass, and more: every patch
/// processes its own candidates until none is left. What a sweep leaves
/// is the candidates a neighbour's fill-in made (a collapse moves a vertex,
/// so edges around it may turn short) after their patch was done. On the
/// bumpy cube at 2.56 M faces the second sweep of an iteration collapsed
/// 4 % of what the first did, each later one under 3 %, at about 23 update
/// rounds a sweep.
///
/// # Errors
/// A failed round or no progress after [`MAX_ROUNDS`] rounds of a sweep.
pub fn sweeps_at_most<A: CavityApp, R: Update<A> + ?Sized>(
    runner: &mut R,
    app: &A,
    max: u32,
) -> Result<RunReport, RunError> {
    let options = SweepOptions {
        changed_only: true,
        max: Some(max),
        ..SweepOptions::default()
    };
    sweeps_with(runner, app, options)
}

/// A hook at the start of every sweep ([`SweepOptions::before_sweep`]).
pub type BeforeSweep<'a, R> = dyn FnMut(&mut R) -> Result<(), RunError> + 'a;

/// How [`sweeps_with`] runs: what [`sweeps`] and [`sweeps_at_most`] set,
/// and a hook at the start of every sweep.
pub struct SweepOptions<'a, 'b, R: ?Sized> {
    /// Whether a sweep after the first visits only the patches that
    /// changed (see [`sweeps`]).
    pub changed_only: bool,
    /// At most this many sweeps (`None`: until one fills nothing, at most
    /// [`MAX_SWEEPS`], past which the run is an error).
    pub max: Option<u32>,
    /// Sees the mesh after every round's cleanup (see [`sweeps`]).
    pub after_round: Option<&'a mut dyn FnMut(&DynamicMesh)>,
    /// Runs on the rounds at the start of every sweep: for an application
    /// whose cavities read values that other patches own and that a
    /// computation refreshes between rounds (the remeshing flips read the
    /// valences a per-vertex computation stores), so that a sweep that
    /// fills nothing decided on current ones.
    pub before_sweep: Option<&'b mut BeforeSweep<'b, R>>,
}

impl<R: ?Sized> Default for SweepOptions<'_, '_, R> {
    /// Every patch in every sweep, until a sweep fills nothing, no hooks.
    fn default() -> Self {
        SweepOptions {
            changed_only: false,
            max: None,
            after_round: None,
            before_sweep: None,
        }
    }
}

/// Runs sweeps of `app` on `runner` as `options` say ([`sweeps`] and
/// [`sweeps_at_most`] are its common cases).
///
/// # Errors
/// A failed round, no progress after [`MAX_ROUNDS`] rounds of a sweep,
/// cavities still filled after [`MAX_SWEEPS`] sweeps (without `max`), or
/// the hook's error.
pub fn sweeps_with<A: CavityApp, R: Update<A> + ?Sized>(
    runner: &mut R,
    app: &A,
    options: SweepOptions<'_, '_, R>,
) -> Result<RunReport, RunError> {
    let SweepOptions {
        changed_only,
        max,
        mut after_round,
        mut before_sweep,
    } = options;
    let start = Instant::now();
    let mut report = RunReport::default();
    let ahead = runner.runs_ahead() && after_round.is_none();
    for sweep in 0..max.unwrap_or(MAX_SWEEPS) {
        if let Some(f) = before_sweep.as_mut() {
            f(runner)?;
        }
        let changed = changed_only && sweep > 0;
        if changed {
            runner.survey(app)?;
        }
        runner.refill(changed)?;
        let mut rounds = 0;
        let mut queued = runner.status()?.queued;
        // Whether the round whose status is read next went out already.
        let mut launched = false;
        let status = loop {
            if rounds >= MAX_ROUNDS {
                return Err(RunError::Stuck(rounds));
            }
            if !launched {
                runner.round(app, queued)?;
            }
            rounds += 1;
            // Running ahead, the next round goes out before this one's
            // status is read, with as many blocks as patches were queued
            // when this one began (this one's share), which bounds the next
            // one's share: a round only shrinks the queue (a block enqueues
            // at most the patch it took), and blocks that find the queue
            // empty return at once.
            launched = ahead;
            if ahead {
                runner.round(app, queued)?;
            }
            let mut status = runner.round_status()?;
            if let Some(e) = status.error() {
                return Err(e);
            }
            if status.slice.is_some() {
                runner.slice(A::TEMPLATE.seed_kind())?;
                report.slices += 1;
                status = runner.status()?;
                // The round launched ahead ran before the slicing.
                if launched {
                    rounds += 1;
                }
                launched = false;
                if let Some(e) = status.error() {
                    return Err(e);
                }
            }
            if let Some(f) = after_round.as_mut() {
                f(runner.mesh()?);
            }
            queued = status.queued;
            if queued == 0 {
                break status;
            }
        };
        let filled = status.stats[stat::FILLED as usize] as u64;
        report.flips += filled;
        report.sweeps += 1;
        report.rounds += rounds;
        report.scheduled += status.stats[stat::SCHEDULED as usize] as u64;
        report.outranked += status.stats[stat::OUTRANKED as usize] as u64;
        report.rolled_back += status.stats[stat::ROLLED_BACK as usize] as u64;
        report.lost += status.stats[stat::LOST as usize] as u64;
        report.declined += status.stats[stat::DECLINED as usize] as u64;
        if filled == 0 {
            break;
        }
        if max.is_none() && sweep + 1 == MAX_SWEEPS {
            return Err(RunError::Endless(MAX_SWEEPS));
        }
    }
    report.patches = runner.status()?.patches;
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}

/// Errors of the dynamic runs.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A capacity no round or slicing can fix was exceeded: the message,
    /// and the settings that give more room.
    #[error("{0}")]
    Fatal(&'static str, &'static [Setting]),
    /// The rounds stopped making progress.
    #[error("no progress after {0} rounds")]
    Stuck(u32),
    /// Every sweep filled cavities, up to [`MAX_SWEEPS`]: the application
    /// never runs out of candidates (its fill-ins recreate them).
    #[error("cavities still filled after {0} sweeps: the operation does not converge")]
    Endless(u32),
    /// The GPU failed.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// An attribute handle or reduction the mesh cannot serve.
    #[error(transparent)]
    Attribute(#[from] AttributeError),
}

impl NamesSettings for RunError {
    fn settings(&self) -> Vec<Setting> {
        match self {
            RunError::Fatal(_, settings) => settings.to_vec(),
            RunError::Backend(e) => e.settings(),
            RunError::Stuck(_) | RunError::Endless(_) | RunError::Attribute(_) => Vec::new(),
        }
    }
}

crate::names_settings!(RunError);

/// The scheduler's state after a round.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// Patches still queued.
    pub queued: u32,
    /// The global counters (`stat`).
    pub stats: Vec<u32>,
    /// A patch flagged for slicing, if any.
    pub slice: Option<u32>,
    /// Patch slots in use.
    pub patches: u32,
}

impl Status {
    /// The error the status reports, if any.
    pub fn error(&self) -> Option<RunError> {
        let (message, settings): (_, &[Setting]) = match self.stats[stat::FATAL as usize] {
            0 => return None,
            stat::FATAL_STASH => (
                "a patch has more than 64 neighbour patches: raise the patch size",
                &[Setting::PATCH_SIZE],
            ),
            stat::FATAL_HASH => (
                "a ribbon hash table is full: raise the capacity factor",
                &[Setting::CAPACITY_FACTOR],
            ),
            stat::FATAL_PATCH_SLOTS => (
                "a patch out of element slots must be sliced, but every patch slot is in use: raise the patch factor",
                &[Setting::PATCH_FACTOR],
            ),
            stat::FATAL_TOO_SMALL => (
                "a patch owning too few faces to be sliced ran out of element slots (the neighbourhoods of its cavities do not fit): raise the capacity factor",
                &[Setting::CAPACITY_FACTOR],
            ),
            _ => ("an ownership chain could not be resolved", &[]),
        };
        Some(RunError::Fatal(message, settings))
    }
}

/// A backend running update rounds on a dynamic mesh it holds.
pub trait Rounds {
    /// Enqueues every patch (`changed_only`: every patch flagged
    /// `CHANGED` in the last sweep), clears those flags and the counters.
    fn refill(&mut self, changed_only: bool) -> Result<(), RunError>;
    /// Slices the patches flagged `SLICE` (`dynamic::slice`) by a round of
    /// an application with seeds of kind `seed`, then runs the cleanup
    /// kernels over all patch slots in use.
    fn slice(&mut self, seed: Kind) -> Result<(), RunError>;
    /// The attributes the mesh carries.
    fn attributes(&self) -> &AttributeLayout;
    /// `query` (not FF) of every owned active element, by slot: per slot
    /// of the source kind the row length and the row's first value, and
    /// the values as the owners' slots of the target kind
    /// (`cavity_device::dynamic::compute::export`). [`Rounds::query`] gives
    /// it in element order.
    fn export_query(&mut self, query: Query) -> Result<SlotRows, RunError>;
    /// The vertex k-ring of every owned active vertex, by slot, as
    /// [`Rounds::export_query`] gives VV (`cavity_device::dynamic::ring`:
    /// the block gathers the patches a ring reaches, RXMesh section 6.2);
    /// each row in the order of the search, by hop. [`Rounds::k_ring`]
    /// gives it in element order.
    fn export_ring(&mut self, k: u32) -> Result<SlotRows, RunError>;
    /// The vertex k-ring (the vertices at most `k` edges away, the vertex
    /// excluded) of every active owned vertex of the mesh as it stands, in
    /// element order (`DynamicMesh::sources`): row `i` lists vertex
    /// indices, nearest hop first. On the GPU the mesh is copied back for
    /// the order.
    ///
    /// # Errors
    /// A failed launch or copy; a ring of more than [`RingRoom::MAX`](crate::rings::RingRoom::MAX)
    /// vertices.
    fn k_ring(&mut self, k: u32) -> Result<QueryResult, RunError>
    where
        Self: Sized,
    {
        let rows = self.export_ring(k)?;
        let mesh = self.mesh()?;
        Ok(mesh.rows_in_element_order(Query::VV, &rows.counts, &rows.offsets, &rows.values))
    }
    /// `query` of every active owned element of the mesh as it stands, in
    /// element order (`DynamicMesh::sources`; `DynamicMesh::edges` for
    /// edges): row `i` lists the element indices of the results of element
    /// `i`. The patches answer VV VE VF EV EF FV FE; FF, which a patch
    /// cannot answer for a face whose neighbour across an edge it does not
    /// hold (`cavity_device::dynamic::compute`), is composed here from FE
    /// and EF ([`compose_ff`]). On the GPU the mesh is copied back for the
    /// order.
    ///
    /// # Errors
    /// A failed launch or copy.
    fn query(&mut self, query: Query) -> Result<QueryResult, RunError>
    where
        Self: Sized,
    {
        if query == Query::FF {
            let fe = self.query(Query::FE)?;
            let ef = self.query(Query::EF)?;
            return Ok(compose_ff(&fe, &ef));
        }
        let rows = self.export_query(query)?;
        let mesh = self.mesh()?;
        Ok(mesh.rows_in_element_order(query, &rows.counts, &rows.offsets, &rows.values))
    }
    /// Runs reduction `r` (`cavity_device::dynamic::reduce`; made by
    /// [`attributes::reduction`]) over the mesh on the device, between
    /// rounds, and returns its value (0 for `Axpy` and `Xpay`). The typed
    /// forms are [`Rounds::dot`], [`Rounds::norm`], [`Rounds::sum`],
    /// [`Rounds::max`], [`Rounds::axpy`] and [`Rounds::xpay`]. A reduction that does not fit the mesh's
    /// attributes is refused ([`attributes::check_reduction`]).
    fn reduce(&mut self, r: &Reduction) -> Result<f64, RunError>;
    /// The elements that per-element computations counted
    /// (`cavity_device::dynamic::compute::Element::count`) since the count
    /// was last taken (or the mesh built), after all the work launched so
    /// far; the count starts again from 0.
    ///
    /// # Errors
    /// A failed copy.
    fn take_count(&mut self) -> Result<u64, RunError>;
    /// The patches that per-element computations marked
    /// (`cavity_device::dynamic::compute::Element::mark_patch`) since the
    /// marks were last taken, ascending, after all the work launched so
    /// far; the marks are cleared.
    ///
    /// # Errors
    /// A failed copy.
    fn take_marked_patches(&mut self) -> Result<Vec<u32>, RunError>;
    /// `Σ x·y` over every component of every active owned element.
    ///
    /// # Errors
    /// [`RunError::Attribute`] for handles that are not the mesh's or are
    /// on different kinds; a failed launch.
    fn dot<T: Scalar, const N: usize>(
        &mut self,
        x: &Attr<T, N>,
        y: &Attr<T, N>,
    ) -> Result<f64, RunError>
    where
        Self: Sized,
    {
        let r = attributes::reduction(self.attributes(), ReduceOp::Dot, x, y, 0.0)?;
        self.reduce(&r)
    }
    /// The Euclidean norm of `x` over every component of every active
    /// owned element.
    ///
    /// # Errors
    /// As [`Rounds::dot`].
    fn norm<T: Scalar, const N: usize>(&mut self, x: &Attr<T, N>) -> Result<f64, RunError>
    where
        Self: Sized,
    {
        Ok(self.dot(x, x)?.sqrt())
    }
    /// `Σ x` over every component of every active owned element.
    ///
    /// # Errors
    /// As [`Rounds::dot`].
    fn sum<T: Scalar, const N: usize>(&mut self, x: &Attr<T, N>) -> Result<f64, RunError>
    where
        Self: Sized,
    {
        let r = attributes::reduction(self.attributes(), ReduceOp::Sum, x, x, 0.0)?;
        self.reduce(&r)
    }
    /// The largest component of `x` over the active owned elements (NaN
    /// ignored; `-inf` when there is none).
    ///
    /// # Errors
    /// As [`Rounds::dot`].
    fn max<T: Scalar, const N: usize>(&mut self, x: &Attr<T, N>) -> Result<f64, RunError>
    where
        Self: Sized,
    {
        let r = attributes::reduction(self.attributes(), ReduceOp::Max, x, x, 0.0)?;
        self.reduce(&r)
    }
    /// `y ← alpha x + y` on every active owned element (computed in `f64`,
    /// stored in `y`'s type); returns `y · y` of the new `y`, as
    /// [`Rounds::dot`] would give it, from the same pass (conjugate
    /// gradients' residual update and its norm, Shewchuk 1994, B2).
    ///
    /// # Errors
    /// As [`Rounds::dot`], and [`RunError::Attribute`] for `u32`
    /// attributes.
    fn axpy<T: Scalar, const N: usize>(
        &mut self,
        alpha: f64,
        x: &Attr<T, N>,
        y: &Attr<T, N>,
    ) -> Result<f64, RunError>
    where
        Self: Sized,
    {
        let r = attributes::reduction(self.attributes(), ReduceOp::Axpy, x, y, alpha)?;
        self.reduce(&r)
    }
    /// `y ← x + alpha y` on every active owned element (computed in `f64`,
    /// stored in `y`'s type): conjugate gradients' direction update
    /// (Shewchuk 1994, B2); `alpha = 0` copies `x` into `y`. Returns `y · y`
    /// of the new `y`, as [`Rounds::axpy`].
    ///
    /// # Errors
    /// As [`Rounds::axpy`].
    fn xpay<T: Scalar, const N: usize>(
        &mut self,
        x: &Attr<T, N>,
        alpha: f64,
        y: &Attr<T, N>,
    ) -> Result<f64, RunError>
    where
        Self: Sized,
    {
        let r = attributes::reduction(self.attributes(), ReduceOp::Xpay, x, y, alpha)?;
        self.reduce(&r)
    }
    /// `y ← alpha x + y` on every active owned element (as
    /// [`Rounds::axpy`]); returns `Σ w |y|²` of the new `y` with the
    /// weight `w`: preconditioned conjugate gradients' residual update
    /// `r ← r - α q` and `rᵀ D⁻¹ r` for the inverse diagonal `w = D⁻¹`
    /// (Shewchuk 1994, B3).
    ///
    /// # Errors
    /// As [`Rounds::axpy`], and [`RunError::Attribute`] for a weight of
    /// another kind.
    fn weighted_axpy<T: Scalar, const N: usize>(
        &mut self,
        alpha: f64,
        x: &Attr<T, N>,
        y: &Attr<T, N>,
        w: &Attr<T, 1>,
    ) -> Result<f64, RunError>
    where
        Self: Sized,
    {
        let layout = self.attributes();
        let r = attributes::weighted_reduction(layout, ReduceOp::WeightedAxpy, x, y, w, alpha)?;
        self.reduce(&r)
    }
    /// `y ← w x + alpha y` on every active owned element (computed in
    /// `f64`, stored in `y`'s type); returns `y · y` of the new `y`, as
    /// [`Rounds::xpay`]: preconditioned conjugate gradients' direction
    /// update `d ← D⁻¹ r + β d` for the inverse diagonal `w = D⁻¹`
    /// (Shewchuk 1994, B3), and with `alpha = 0` its first direction (then
    /// `rᵀ D⁻¹ r` is `r · d`).
    ///
    /// # Errors
    /// As [`Rounds::weighted_axpy`].
    fn weighted_xpay<T: Scalar, const N: usize>(
        &mut self,
        x: &Attr<T, N>,
        alpha: f64,
        y: &Attr<T, N>,
        w: &Attr<T, 1>,
    ) -> Result<f64, RunError>
    where
        Self: Sized,
    {
        let layout = self.attributes();
        let r = attributes::weighted_reduction(layout, ReduceOp::WeightedXpay, x, y, w, alpha)?;
        self.reduce(&r)
    }
    /// The scheduler's state after all the work launched so far. The
    /// statuses of launched rounds not taken yet by
    /// [`Rounds::round_status`] are dropped.
    fn status(&mut self) -> Result<Status, RunError>;
    /// The scheduler's state right after the earliest update round whose
    /// status was not taken yet (each [`Update::round`] keeps a copy of
    /// it; as [`Rounds::status`] when none is left), while later rounds
    /// may still be running.
    fn round_status(&mut self) -> Result<Status, RunError>;
    /// Whether the sweeps launch each round before they read the previous
    /// round's status (when no `after_round` needs the mesh after every
    /// round): on the GPU the host's turn between two rounds (reading the
    /// status, launching) then overlaps the next round instead of leaving
    /// the device idle. A round launched ahead after the queue emptied
    /// does nothing; one launched after a fatal error returns at once
    /// (`dynamic::update::update`).
    fn runs_ahead(&self) -> bool {
        false
    }
    /// The mesh as it is now (copied back from the device if needed).
    fn mesh(&mut self) -> Result<&DynamicMesh, RunError>;
    /// Words `first..first + words` of every active owned element of
    /// `kind` in element order, with the elements' input indices:
    /// [`DynamicMesh::owned_words`] of the mesh as it is now. On the GPU
    /// read back without the mesh while every such element is an input
    /// element (an unchanged mesh's: the words are gathered by input
    /// index), from the mesh copied back otherwise.
    ///
    /// # Errors
    /// [`RunError::Attribute`] past the kind's attribute words; a failed
    /// launch or copy.
    fn owned_words(&mut self, kind: Kind, first: u32, words: u32) -> Result<OwnedWords, RunError> {
        Ok(self.mesh()?.owned_words(kind, first, words)?)
    }
    /// Sets words `first..first + words` of every local element of `kind`
    /// (ribbon copies included) from `values` by input index, `words`
    /// words an input element: [`DynamicMesh::set_words_by_input`] of the
    /// mesh the rounds hold (on the GPU without copying it either way).
    ///
    /// # Errors
    /// [`RunError::Attribute`] past the kind's attribute words, over its
    /// input index word, or for values of another length; a failed launch
    /// or copy.
    fn set_by_input(
        &mut self,
        kind: Kind,
        first: u32,
        words: u32,
        values: &[u32],
    ) -> Result<(), RunError>;
    /// [`Rounds::set_by_input`] of the values of `attr`, one an input
    /// element of its kind.
    ///
    /// # Errors
    /// [`RunError::Attribute`] for a handle that is not one of the mesh's
    /// attributes; as [`Rounds::set_by_input`].
    fn set_values_by_input<T: Scalar, const N: usize>(
        &mut self,
        attr: &Attr<T, N>,
        values: &[[T; N]],
    ) -> Result<(), RunError>
    where
        Self: Sized,
    {
        self.attributes().info(attr)?;
        // Written in place, in parallel (a collect of unknown length
        // gathers pieces and copies them again).
        let per = N * T::WORDS as usize;
        let mut words: Vec<u32> = vec![0; values.len() * per];
        words
            .par_chunks_mut(per.max(1))
            .zip(values)
            .for_each(|(to, v)| {
                for (c, &x) in v.iter().enumerate() {
                    let w = x.to_words();
                    to[c * T::WORDS as usize..][..T::WORDS as usize]
                        .copy_from_slice(&w[..T::WORDS as usize]);
                }
            });
        self.set_by_input(attr.kind(), attr.offset(), N as u32 * T::WORDS, &words)
    }
    /// The input index and the owner patch of every active owned element
    /// of `kind` in element order (`(sources, owners)`:
    /// [`DynamicMesh::sources`] and [`DynamicMesh::owner_patches`]), read
    /// as [`Rounds::owned_words`] reads.
    ///
    /// # Errors
    /// A failed launch or copy.
    fn owner_patches(&mut self, kind: Kind) -> Result<(Vec<u32>, Vec<u32>), RunError> {
        let m = self.mesh()?;
        Ok((m.sources(kind), m.owner_patches(kind)))
    }
    /// The neighbour patches of every patch in use
    /// ([`DynamicMesh::neighbour_patches`]); on the GPU the stashes alone
    /// are read back.
    ///
    /// # Errors
    /// A failed copy.
    fn neighbour_patches(&mut self) -> Result<Vec<Vec<u32>>, RunError> {
        let m = self.mesh()?;
        Ok((0..m.num_patches())
            .map(|p| m.neighbour_patches(p).collect())
            .collect())
    }
    /// The values of `attr` of every active owned element of its kind in
    /// element order, with their input indices (`(sources, values)`:
    /// [`DynamicMesh::sources`] and [`DynamicMesh::attribute`]), read as
    /// [`Rounds::owned_words`] reads.
    ///
    /// # Errors
    /// [`RunError::Attribute`] for a handle that is not one of the mesh's
    /// attributes; as [`Rounds::owned_words`].
    fn owned_values<T: Scalar, const N: usize>(
        &mut self,
        attr: &Attr<T, N>,
    ) -> Result<(Vec<u32>, Vec<[T; N]>), RunError>
    where
        Self: Sized,
    {
        self.attributes().info(attr)?;
        let words = N as u32 * T::WORDS;
        let (sources, all) = self.owned_words(attr.kind(), attr.offset(), words)?;
        Ok((sources, values_of(&all)))
    }
    /// The positions of the vertices in element order, with their input
    /// indices: [`DynamicMesh::vertex_positions`] of the mesh as it is now,
    /// read as [`Rounds::owned_words`] reads.
    ///
    /// # Errors
    /// As [`Rounds::owned_words`].
    fn vertex_positions(&mut self) -> Result<(Vec<[f32; 3]>, Vec<u32>), RunError> {
        let (sources, all) = self.owned_words(Kind::Vertex, POSITION.offset(), 3)?;
        Ok((values_of(&all), sources))
    }
    /// The device, in words.
    fn device(&self) -> String;
}

/// A query exported by slot (see [`Rounds::export_query`]).
#[derive(Clone, Debug, Default)]
pub struct SlotRows {
    /// Row length per slot of the source kind.
    pub counts: Vec<u32>,
    /// Row start per slot of the source kind.
    pub offsets: Vec<u32>,
    /// The owners' slots of the target kind.
    pub values: Vec<u32>,
}

/// A backend's run of per-element computation `C`
/// (`cavity_device::dynamic::compute`) on the mesh it holds, between
/// rounds: the programming model's `for_each` on the one structure that
/// serves static and dynamic work.
pub trait ForEach<C: ElementKernels>: Rounds {
    /// Runs `c` on every owned active element of `C::QUERY`'s source kind
    /// that passes its active set, one block per patch (on the GPU it
    /// returns once the work is launched).
    ///
    /// # Errors
    /// A kernel that cannot be loaded (its kernel crate's PTX was not
    /// added with `Backend::add_kernels`, or its shared memory exceeds the
    /// device's) or a failed launch.
    fn for_each(&mut self, c: &C) -> Result<(), RunError>;
    /// [`ForEach::for_each`] on the patches `patches` lists only (patch
    /// slots, as `DynamicMesh::owner_patches` gives them; each at most
    /// once): when the host knows which patches hold the active elements,
    /// the others are not even visited. Nothing for an empty list.
    ///
    /// # Errors
    /// As [`ForEach::for_each`]; [`RunError::Fatal`] for a list that names
    /// a patch slot not in use, or one twice.
    fn for_each_in(&mut self, c: &C, patches: &[u32]) -> Result<(), RunError>;
}

/// A backend's run of patch computation `C`
/// (`cavity_device::dynamic::patch_computation`) on the mesh it holds,
/// between rounds: one block per patch slot in use, with the rounds'
/// scratch, which lives as long as the rounds and is shared by every patch
/// computation they run (a computation reads what the ones before it left
/// there).
pub trait ForEachPatch<C: PatchKernels>: Rounds {
    /// Runs `c` on every patch slot in use, the scratch grown first to
    /// `c.scratch_words` (its words kept, new ones zero).
    ///
    /// # Errors
    /// [`RunError::Fatal`] when the scratch outgrows 32-bit indices (lower
    /// the patch factor); on the GPU, a shared-memory or driver error.
    fn for_each_patch(&mut self, c: &C) -> Result<(), RunError>;
}

/// The scratch words patch computation `c` needs at capacity `cap`.
///
/// # Errors
/// [`RunError::Fatal`] past `u32::MAX` words (the kernels index it with
/// `u32`).
pub(crate) fn patch_scratch_words<C: PatchKernels>(
    c: &C,
    cap: &Capacity,
) -> Result<usize, RunError> {
    let words = c.scratch_words(cap);
    if words > u64::from(u32::MAX) {
        return Err(RunError::Fatal(
            "a patch computation's scratch outgrows 32-bit indices: lower the patch factor",
            &[Setting::PATCH_FACTOR],
        ));
    }
    Ok(words as usize)
}

/// A backend's update round of application `A`.
pub trait Update<A: CavityApp>: Rounds {
    /// Clears the `CHANGED` flag of every patch that registers no cavity
    /// of `app` on its current view (`dynamic::update::survey`), before a
    /// sweep that visits the changed patches only.
    fn survey(&mut self, app: &A) -> Result<(), RunError>;
    /// One update round of `app` with `blocks` blocks (on the GPU at most
    /// as many as the device holds at once, each taking queued patches
    /// until the round took its share), then the cleanup kernels, keeping
    /// the scheduler's state after them for
    /// [`Rounds::round_status`]; on the GPU it returns once the work is
    /// launched. The round's patch order (`scheduler::outranks`) is
    /// salted with the count of rounds this runner launched before, so
    /// that no two rounds of a run (of any phase or sweep) rank the
    /// patches alike.
    fn round(&mut self, app: &A, blocks: u32) -> Result<(), RunError>;
}

/// Status read from host arrays.
pub fn status_of(queue_state: &[u32], stats: &[u32], flags: &[u32]) -> Status {
    let patches = queue_state[queue::PATCHES as usize];
    Status {
        queued: queue_state[queue::COUNT as usize],
        stats: stats.to_vec(),
        slice: flags[..patches as usize]
            .iter()
            .position(|f| f & flag::SLICE != 0)
            .map(|p| p as u32),
        patches,
    }
}

/// What [`Rounds::owned_words`] reads: the input index of every active
/// owned element of a kind in element order ([`NEW_ELEMENT`] for one a
/// fill-in added), and the elements' words, element after element.
///
/// [`NEW_ELEMENT`]: crate::dynamic::NEW_ELEMENT
pub type OwnedWords = (Vec<u32>, Vec<u32>);

//! One remeshing run on rounds of either backend: the four phases of each
//! iteration (split, collapse, flip, smooth) and the final repair
//! ([`remesh_rounds`]), the attributes the mesh carries for them.

use std::time::Instant;

use cavity::attributes::AttributeLayout;
use cavity::backend::{Backend, PlaceError, PlacedMesh, TopologyOn};
use cavity::dynamic::{CapacityFactors, DynamicError, DynamicMesh};
use cavity::rounds::{
    ForEach, RunError, RunReport, SweepOptions, Update, sweeps, sweeps_at_most, sweeps_with,
};
use cavity::topology::Topology;
use cavity::{PatchedMesh, TriMesh};
use cavity_device::layout::Kind;
use cavity_remesh_kernels::smooth::Smoothing;
use cavity_remesh_kernels::split::SplitLongEdges;
use cavity_remesh_kernels::{CollapseShortEdgesSafely, ImproveValence, StoreValences};

use crate::settings::{
    COLLAPSE_SWEEPS, CORNER_TOLERANCE, DEGENERATE_LENGTH, FLIP_SWEEPS, Phase, RemeshError,
    RemeshSettings, SMOOTHING_STEP,
};
use crate::smooth::{SmoothRounds, smooth};

/// Rounds that run every remeshing operation (the CPU backend's and the
/// GPU's do).
pub trait RemeshRounds:
    Update<SplitLongEdges>
    + Update<CollapseShortEdgesSafely>
    + Update<ImproveValence>
    + ForEach<StoreValences>
    + SmoothRounds
{
}

impl<R> RemeshRounds for R where
    R: Update<SplitLongEdges>
        + Update<CollapseShortEdgesSafely>
        + Update<ImproveValence>
        + ForEach<StoreValences>
        + SmoothRounds
        + ?Sized
{
}

/// The name of the `u32` vertex attribute that holds the stored valences
/// of the flips ([`StoreValences`]).
pub const VALENCE_ATTRIBUTE: &str = "remesh.valence";

/// The attributes a mesh that [`remesh_rounds`] runs on carries: the
/// stored valences ([`VALENCE_ATTRIBUTE`]).
pub fn attributes() -> AttributeLayout {
    let mut layout = AttributeLayout::new();
    layout
        .vertex::<u32, 1>(VALENCE_ATTRIBUTE)
        .expect("one attribute fits any layout");
    layout
}

/// The dynamic mesh of `mesh` (with its `topology`) that remeshing runs
/// on: `patch_size` faces per patch, patched as `backend` patches best
/// and staged for its rounds (`Backend::place`: on the GPU patched by
/// RXMesh's Lloyd iterations and laid out on the device, where it stays)
/// or, without one, by the host's patcher; `factors`, and [`attributes`].
///
/// # Errors
/// As `DynamicMesh::new`; a backend error from patching on the GPU.
pub fn dynamic_mesh(
    mesh: &TriMesh,
    topology: &Topology,
    patch_size: u32,
    factors: CapacityFactors,
    backend: Option<&Backend>,
) -> Result<PlacedMesh, RemeshError> {
    match backend {
        Some(backend) => backend
            .place(mesh, topology, patch_size, factors, &attributes())
            .map_err(PlaceError::into_either::<RemeshError>),
        None => {
            let patched = PatchedMesh::with_topology(mesh, topology, patch_size)
                .map_err(DynamicError::from)?;
            Ok(DynamicMesh::from_patched_with(mesh, &patched, factors, &attributes())?.into())
        }
    }
}

/// [`dynamic_mesh`] of `input` moved into the unit box by
/// `normalization`: the placed mesh and the normalized mesh (on the GPU
/// the host normalizes while the device patches:
/// `Backend::place_normalized`).
///
/// # Errors
/// As [`dynamic_mesh`].
pub fn normalized_dynamic_mesh(
    input: &TriMesh,
    normalization: &cavity::normalize::Normalization,
    topology: &Topology,
    (patch_size, factors): (u32, CapacityFactors),
    backend: Option<&Backend>,
) -> Result<(PlacedMesh, TriMesh), RemeshError> {
    match backend {
        Some(backend) => backend
            .place_normalized(
                input,
                normalization,
                &TopologyOn::of(backend, topology)?,
                patch_size,
                (factors, &attributes()),
            )
            .map_err(PlaceError::into_either::<RemeshError>),
        None => {
            let normalized = normalization.apply(input);
            let placed = dynamic_mesh(&normalized, topology, patch_size, factors, None)?;
            Ok((placed, normalized))
        }
    }
}

/// What each phase did over all iterations.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PhaseTotals {
    /// Seconds per phase, in [`Phase::ALL`] order (the GPU's included: the
    /// rounds wait for it).
    pub seconds: [f64; 4],
    /// The split, collapse and flip runs, summed over iterations.
    pub runs: [RunReport; 3],
}

/// A callback with the iteration (1-based) and the phase.
pub type PhaseHook<'a> = &'a mut dyn FnMut(u32, Phase);

/// A callback with the iteration, the phase and the mesh.
pub type MeshHook<'a> = &'a mut dyn FnMut(u32, Phase, &DynamicMesh);

/// A question asked before each phase: `true` stops the run there.
pub type StopHook<'a> = &'a dyn Fn() -> bool;

/// Callbacks of a remeshing run.
#[derive(Default)]
pub struct Hooks<'a> {
    /// Asked before each phase: `true` stops the run with
    /// [`RemeshError::Stopped`] (a user's interrupt).
    pub stop: Option<StopHook<'a>>,
    /// Called as each phase starts.
    pub progress: Option<PhaseHook<'a>>,
    /// Called with the mesh after each phase (on the GPU that copies the
    /// mesh back); [`remesh`](crate::remesh) runs on the normalized mesh
    /// ([`cavity::normalize`]), so its positions are in the unit box.
    pub after_phase: Option<MeshHook<'a>>,
}

/// Runs `settings.iterations` iterations of the four phases with target
/// length `length` (model units) on `runner`, whose mesh carries
/// [`attributes`] ([`dynamic_mesh`]).
///
/// # Errors
/// The failing phase's [`RunError`] (out of capacity: the message names the
/// setting to raise); before any phase runs, [`RunError::Attribute`]
/// (reported as the first iteration's flip phase, the one that reads it)
/// when the mesh has no [`VALENCE_ATTRIBUTE`].
pub fn remesh_rounds<R: RemeshRounds + ?Sized>(
    runner: &mut R,
    length: f64,
    settings: &RemeshSettings,
    hooks: &mut Hooks<'_>,
) -> Result<PhaseTotals, RemeshError> {
    let valence = runner
        .attributes()
        .find_on::<u32, 1>(Kind::Vertex, VALENCE_ATTRIBUTE)
        .map_err(|e| RemeshError::Run {
            phase: Phase::Flip,
            iteration: 1,
            source: RunError::Attribute(e),
        })?;
    let store = StoreValences { valence };
    let feature_cos = settings.feature_cos();
    let l = length as f32;
    let split = SplitLongEdges {
        max_length: 4.0 / 3.0 * l,
        keep_boundary: settings.keep_boundary as u32,
    };
    let boundary_cos = settings.boundary_cos();
    let collapse = CollapseShortEdgesSafely {
        min_length: 0.8 * l,
        degenerate_length: DEGENERATE_LENGTH * l,
        max_length: 4.0 / 3.0 * l,
        feature_cos,
        boundary_cos,
        corner_tolerance: CORNER_TOLERANCE * l,
        flat_caps: 0,
    };
    let flip = |iteration: u32| ImproveValence {
        feature_cos,
        max_length: last_flips(iteration == settings.iterations, l),
        caps_only: 0,
        valence,
    };
    let smoothing = Smoothing {
        boundary_cos,
        step: SMOOTHING_STEP,
        feature_cos,
        rank_ratio: 0.0,
    };
    let mut totals = PhaseTotals::default();
    for iteration in 1..=settings.iterations {
        for (i, phase) in Phase::ALL.into_iter().enumerate() {
            if hooks.stop.is_some_and(|stop| stop()) {
                return Err(RemeshError::Stopped { iteration, phase });
            }
            if let Some(p) = hooks.progress.as_mut() {
                p(iteration, phase);
            }
            let start = Instant::now();
            let run = match phase {
                Phase::Split => sweeps(runner, &split, true, None).map(Some),
                Phase::Collapse => sweeps_at_most(runner, &collapse, COLLAPSE_SWEEPS).map(Some),
                Phase::Flip => flip_sweeps(runner, &flip(iteration), store).map(Some),
                Phase::Smooth => smooth(runner, &smoothing, settings.smoothing_steps)
                    .and_then(|()| runner.status().map(|_| None)),
            }
            .map_err(|source| RemeshError::Run {
                phase,
                iteration,
                source,
            })?;
            totals.seconds[i] += start.elapsed().as_secs_f64();
            if let Some(r) = run {
                totals.runs[i].add(&r);
            }
            if let Some(f) = hooks.after_phase.as_mut() {
                let mesh = runner.mesh().map_err(|source| RemeshError::Run {
                    phase,
                    iteration,
                    source,
                })?;
                f(iteration, phase, mesh);
            }
        }
    }
    // The final repair: what the last iteration's smoothing or its repairs
    // left degenerate (a degenerate collapse may replace a face of zero
    // area by another, which only a later collapse or cap flip removes).
    let repair_collapse = CollapseShortEdgesSafely {
        min_length: collapse.degenerate_length,
        flat_caps: 1,
        ..collapse
    };
    let repair_flip = ImproveValence {
        caps_only: 1,
        ..flip(settings.iterations)
    };
    for (i, phase) in Phase::ALL.into_iter().enumerate() {
        let start = Instant::now();
        let run = match phase {
            Phase::Collapse => sweeps_at_most(runner, &repair_collapse, REPAIR_COLLAPSE_SWEEPS),
            Phase::Flip => sweeps_at_most(runner, &repair_flip, REPAIR_SWEEPS),
            Phase::Split | Phase::Smooth => continue,
        }
        .map_err(|source| RemeshError::Run {
            phase,
            iteration: settings.iterations,
            source,
        })?;
        totals.seconds[i] += start.elapsed().as_secs_f64();
        totals.runs[i].add(&run);
    }
    if let Some(f) = hooks.after_phase.as_mut() {
        let mesh = runner.mesh().map_err(|source| RemeshError::Run {
            phase: Phase::Flip,
            iteration: settings.iterations,
            source,
        })?;
        f(settings.iterations, Phase::Flip, mesh);
    }
    Ok(totals)
}

/// At most [`FLIP_SWEEPS`] sweeps of the valence flips `flip` on
/// `runner`, each after the first visiting only the patches that changed
/// (`cavity::rounds::sweeps_at_most`), with the valences stored by `store`
/// at the start of every sweep.
///
/// # Errors
/// As `sweeps_at_most`.
pub fn flip_sweeps<R: RemeshRounds + ?Sized>(
    runner: &mut R,
    flip: &ImproveValence,
    store: StoreValences,
) -> Result<RunReport, RunError> {
    let options = SweepOptions {
        changed_only: true,
        max: Some(FLIP_SWEEPS),
        before_sweep: Some(&mut |r: &mut R| r.for_each(&store)),
        ..SweepOptions::default()
    };
    sweeps_with(runner, flip, options)
}

/// Sweeps of the cap and small-angle flips of the final repair after the
/// last iteration.
pub const REPAIR_SWEEPS: u32 = 3;

/// Sweeps of the degenerate collapses and separations of the final repair
/// (`sweeps_at_most`: they end at the first sweep that fills nothing, and
/// each after the first visits only the patches the one before changed,
/// so a mesh without degenerate elements pays one sweep). A separation
/// can leave a neighbouring face of zero area to the next sweep (a vertex
/// that coincides with two others is separated from one of them at a
/// time): on generated dirty meshes (`tests/dirty_generated.rs`), one in
/// a few hundred kept a zero-area face after 3 sweeps, none of 2400 after
/// 8.
pub const REPAIR_COLLAPSE_SWEEPS: u32 = 8;

/// The longest edge a flip may create in an iteration, `last` or not, at
/// target length `l`: 4/3 L in the last iteration (no split phase follows
/// to shorten a longer one), any length before (the next split phase
/// halves it). Botsch and Kobbelt flip on valences alone; limiting every
/// iteration's flips to 4/3 L leaves regular quad-grid regions stuck
/// with their valence-4/8 pairs: the RXMesh torus (9216 faces, local CPU
/// backend) reached 93.3 % of its edges in the band after 3 iterations
/// with the limit in every iteration, 96.4-96.9 % with it in the last only. On
/// the dragon at 1.28 M faces and the bumpy cube at 2.56 M (H100) the band
/// moved by at most 0.1 %.
fn last_flips(last: bool, l: f32) -> f32 {
    if last { 4.0 / 3.0 * l } else { f32::INFINITY }
}

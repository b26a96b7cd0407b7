//! Uniform isotropic remeshing (Botsch and Kobbelt 2004) on the dynamic
//! mesh, as in the dynamic paper, section 6.3: every iteration runs four
//! phases, each a full pass over the mesh before the next starts:
//!
//! 1. split every edge longer than 4/3 L (longest-edge bisection,
//!    `SplitLongEdges`);
//! 2. collapse every edge shorter than 4/5 L unless that makes an edge
//!    longer than 4/3 L, breaks the link condition, folds a face over or
//!    makes the mesh non-manifold (`CollapseShortEdgesSafely`; at most
//!    [`COLLAPSE_SWEEPS`] sweeps, so an edge that a neighbouring collapse
//!    turned short late may wait for the next iteration);
//! 3. flip edges that bring the valences of their four vertices closer to
//!    6 (4 on the boundary), in the sum of squared differences as in
//!    Botsch's PMP library (`ImproveValence`; at most [`FLIP_SWEEPS`]
//!    sweeps); in the last iteration only when the new edge is at most
//!    4/3 L (see `last_flips`);
//! 4. tangential smoothing: area-weighted relaxation projected on the
//!    tangent plane ([`smooth`](mod@smooth)).
//!
//! Open boundaries are remeshed along themselves, as CGAL's
//! `isotropic_remeshing` does: long boundary edges are split, short ones
//! collapse onto the boundary polyline, interior edges with one boundary
//! vertex collapse into it, and boundary vertices slide along the polyline
//! in smoothing; corners (a turning angle above the feature angle, 30° when
//! none is given) and the number of boundary loops stay. With
//! `keep_boundary` no boundary edge or vertex changes. With a feature
//! angle, edges whose dihedral angle exceeds it are kept.
//!
//! Degenerate input (scans: zero-length edges, caps) is repaired in every
//! iteration by the same operations: an edge shorter than
//! [`DEGENERATE_LENGTH`] L collapses past the length and shape limits, and
//! an edge opposite an angle of about 160° or more is flipped whatever the
//! valences; a degenerate edge that may not collapse is separated (one
//! vertex moves along an edge, or off the line of its faces of zero area).
//! After the last iteration a final repair ([`REPAIR_COLLAPSE_SWEEPS`]
//! sweeps of collapses and separations, which there also move the apex of
//! a cap that no flip takes off its line, then [`REPAIR_SWEEPS`] of cap
//! and small-angle flips) removes what the last smoothing left: no face
//! of zero area and no edge of zero length stays where a vertex can move
//! (issue 24).
//! [`remesh`] runs on the mesh moved into the unit box
//! ([`cavity::normalize`]), so that any coordinate scale gives the same
//! result.
//!
//! An application crate on cavity's public model, as RXMesh keeps its
//! `apps/`: the cavity applications and the valence computation are in
//! `cavity-remesh-kernels`, their PTX this crate's own module ([`PTX`]); this crate holds
//! the driver, the quality statistics ([`quality`]) and the benchmark
//! ([`bench`](mod@bench), `cavity bench remesh`). The flips read the valences of
//! vertices their patch does not own from the `u32` vertex attribute
//! [`VALENCE_ATTRIBUTE`] ([`attributes`]), which [`StoreValences`] writes
//! before every flip sweep.

pub mod bench;
pub mod quality;
pub mod smooth;

/// The settings of remeshing that its errors may ask to change
/// (`cavity::settings`; a front end maps them to its options).
pub mod setting {
    use cavity::settings::Setting;

    /// The target edge length ([`crate::RemeshSettings::length`]).
    pub const TARGET_LENGTH: Setting = Setting::new("length", "the target edge length");
    /// The iterations ([`crate::RemeshSettings::iterations`]).
    pub const ITERATIONS: Setting = Setting::new("iterations", "the iteration count");
    /// The feature angle ([`crate::RemeshSettings::feature_angle`]).
    pub const FEATURE_ANGLE: Setting = Setting::new("feature_angle", "the feature angle");
    /// The smoothing steps ([`crate::RemeshSettings::smoothing_steps`]).
    pub const SMOOTHING_STEPS: Setting = Setting::new("smoothing_steps", "the smoothing steps");
}

use std::time::Instant;

use cavity_remesh_kernels::smooth::Smoothing;
use cavity_remesh_kernels::split::SplitLongEdges;
pub use cavity_remesh_kernels::{CollapseShortEdgesSafely, ImproveValence, StoreValences};
pub use quality::{Quality, mean_edge_length, mean_edge_length_with};
use smooth::{SmoothRounds, smooth};

use cavity::TriMesh;
use cavity::attributes::AttributeLayout;
use cavity::backend::{Backend, BackendError, GpuSeconds};
use cavity::dynamic::{CapacityFactors, DynamicError, DynamicMesh};
use cavity::normalize::Normalization;
use cavity::rounds::{
    ForEach, RunError, RunReport, SweepOptions, Update, sweeps, sweeps_at_most, sweeps_with,
};
use cavity::settings::{NamesSettings, Setting};
use cavity::topology::Topology;
use cavity_device::layout::Kind;

cavity::kernel_module!("cavity_remesh_kernels.ptx");

/// The target edge length L.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TargetLength {
    /// L in model units.
    Absolute(f64),
    /// L as a multiple of the input's mean edge length.
    Relative(f64),
}

/// What to remesh to and how long.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RemeshSettings {
    /// Target edge length (default: the input's mean edge length).
    pub length: TargetLength,
    /// Iterations of the four phases (default 3, as in the paper's
    /// table 4).
    pub iterations: u32,
    /// Edges whose dihedral angle (between the two face normals) exceeds
    /// this many degrees are features and kept; `None`: no features.
    pub feature_angle: Option<f64>,
    /// Smoothing steps per iteration, each moving a vertex half way to the
    /// tangential projection of its one-ring's area-weighted centroid
    /// (default [`DEFAULT_SMOOTHING_STEPS`]).
    pub smoothing_steps: u32,
    /// Keep the mesh boundary exactly as it is (no split, collapse or move
    /// changes a boundary edge or vertex); by default the boundary is
    /// remeshed along itself, its corners kept (see
    /// [`RemeshSettings::boundary_cos`]).
    pub keep_boundary: bool,
}

impl Default for RemeshSettings {
    fn default() -> Self {
        RemeshSettings {
            length: TargetLength::Relative(1.0),
            iterations: 3,
            feature_angle: None,
            smoothing_steps: DEFAULT_SMOOTHING_STEPS,
            keep_boundary: false,
        }
    }
}

/// Turning angle in degrees above which a boundary vertex is a corner when
/// no feature angle is given.
pub const DEFAULT_CORNER_ANGLE: f64 = 30.0;

/// The boundary cosine that keeps the whole boundary (above any cosine).
pub const KEEP_BOUNDARY: f32 = 2.0;

/// Distance, as a fraction of L, within which the boundary polyline may
/// move where a boundary edge between two corners collapses
/// (`CollapseShortEdgesSafely::corner_tolerance`): the turnings of a rim
/// that runs in steps much shorter than L are noise, not corners. The
/// holes of the Stanford dragon scan (`dragon_vrip`) have staircase rims:
/// their boundary edges have a median length of 0.41 L and 2526 of their
/// 4270 vertices turn by more than 30°; a step of side s as a corner pair
/// lies about 0.45 s from the polyline without it, so steps up to about
/// half of L go.
pub const CORNER_TOLERANCE: f32 = 0.25;

/// Most iterations accepted.
pub const MAX_ITERATIONS: u32 = 1000;
/// Smoothing steps per iteration by default. A short edge that no
/// collapse can remove without making an edge longer than 4/3 L waits for
/// the smoothing to spread its neighbours. On a jittered torus of the
/// remesh tests (n 46, m 23, jitter 0.36, L = 0.90 × the mean edge, about
/// 3300 edges; local CPU backend, 8 runs each) 10 steps left 94.7-95.6 %
/// of the edges in the band after 3 iterations (the CI's proptest found
/// it), 20 steps 96.3-97.2 %; with 20 steps none of 360 further random
/// tori fell below 95 %.
/// On the GPU (bumpy cube at 2.56 M faces, H100) 20 steps cost 0.04 s
/// more than 10 over 3 iterations and raised the band from 98.7 % to
/// 98.9 %; on the dragon at 1.28 M faces from 96.5 % to 97.9 %, the
/// smallest angle from 7.7° to 13.3°.
pub const DEFAULT_SMOOTHING_STEPS: u32 = 20;

/// Most smoothing steps per iteration accepted.
pub const MAX_SMOOTHING_STEPS: u32 = 100;
/// Fraction of the tangential move one smoothing step takes.
pub const SMOOTHING_STEP: f32 = 0.5;
/// Edges shorter than this fraction of L are degenerate: their collapse
/// moves every face by less than that, so it is taken even when it makes
/// an edge longer than 4/3 L or replaces a face of zero area
/// (`CollapseShortEdgesSafely`): zero-length edges of scans go whatever L
/// is.
pub const DEGENERATE_LENGTH: f32 = 0.01;

/// Sweeps of the collapse phase per iteration (`sweeps_at_most`): the
/// first is the pass over the mesh, the others take the edges that
/// neighbouring collapses made short after their patch was done; what is
/// left goes to the next iteration. Measured on the bumpy cube at 2.56 M
/// faces (H100): 1.54 s instead of 2.62 s for 3 iterations with 3 sweeps
/// instead of running them to the end (up to 16), the same share of
/// edges in the band (98.7 %). Since collapses go to the balanced point
/// (`balanced_point` of `cavity-remesh-kernels`), two sweeps keep the
/// same band as three (H100, 3 iterations, alternating runs: dragon at
/// 1.28 M faces 1.116-1.146 s against 1.170-1.193 s, at 5.12 M 3.438 s
/// against 3.623 s, the bumpy cube at 2.56 M 0.94-1.04 s against
/// 0.98-1.01 s; 99.5 %, 98.7 % and 99.5 % in the band either way).
pub const COLLAPSE_SWEEPS: u32 = 2;
/// Sweeps of the flip phase per iteration (`sweeps_at_most`: the second
/// visits only the patches the first changed). Later sweeps flip about 1 %
/// as many edges as the first, each with every patch queued (the dragon
/// at 320 k faces, iteration 1: 15793, 442, 67, 10, 2, 1, 1 and 0 flips in
/// eight sweeps). Measured on an H100 (3 timed runs each, one run of
/// `cavity bench remesh`): the dragon at 1.28 M faces 1.73 → 1.48 s for 3
/// iterations, the bumpy cube at 2.56 M 1.30 → 1.18 s, with two sweeps
/// instead of running them to the end; both kept the same share of edges
/// in the band (97.8 %, 99.0 %).
pub const FLIP_SWEEPS: u32 = 2;

impl RemeshSettings {
    /// Checks every setting; the error names the command-line flag.
    pub fn check(&self) -> Result<(), RemeshError> {
        let (TargetLength::Absolute(l) | TargetLength::Relative(l)) = self.length;
        if !l.is_finite() || l <= 0.0 {
            return Err(RemeshError::Length(l));
        }
        if !(1..=MAX_ITERATIONS).contains(&self.iterations) {
            return Err(RemeshError::Iterations(self.iterations));
        }
        if let Some(a) = self.feature_angle
            && !(a > 0.0 && a < 180.0)
        {
            return Err(RemeshError::FeatureAngle(a));
        }
        if self.smoothing_steps > MAX_SMOOTHING_STEPS {
            return Err(RemeshError::SmoothingSteps(self.smoothing_steps));
        }
        Ok(())
    }

    /// L in model units for an input whose mean edge length is `mean`.
    pub fn target(&self, mean: f64) -> f64 {
        match self.length {
            TargetLength::Absolute(l) => l,
            TargetLength::Relative(r) => r * mean,
        }
    }

    /// The cosine of the turning angle below which a boundary vertex is a
    /// corner and stays: the feature angle's, 30° when none is given (as
    /// CGAL's `isotropic_remeshing` keeps border corners); [`KEEP_BOUNDARY`]
    /// with `keep_boundary`.
    pub fn boundary_cos(&self) -> f32 {
        if self.keep_boundary {
            KEEP_BOUNDARY
        } else {
            self.feature_angle
                .unwrap_or(DEFAULT_CORNER_ANGLE)
                .to_radians()
                .cos() as f32
        }
    }

    /// The dihedral-angle cosine below which an edge is a feature (-2: no
    /// features).
    pub fn feature_cos(&self) -> f32 {
        self.feature_angle
            .map_or(-2.0, |a| a.to_radians().cos() as f32)
    }
}

/// Errors of a remeshing run.
#[derive(Debug, thiserror::Error)]
pub enum RemeshError {
    /// The target length is not a positive number.
    #[error("target edge length {0}: must be a positive finite number")]
    Length(f64),
    /// The iteration count is out of range.
    #[error("iteration count {0}: must be between 1 and {MAX_ITERATIONS}")]
    Iterations(u32),
    /// The feature angle is not a dihedral angle.
    #[error("feature angle {0}: must be an angle in degrees above 0 and below 180")]
    FeatureAngle(f64),
    /// Too many smoothing steps.
    #[error("smoothing steps {0}: must be at most {MAX_SMOOTHING_STEPS}")]
    SmoothingSteps(u32),
    /// Nothing to remesh.
    #[error("the input has no faces to remesh")]
    Empty,
    /// Every edge of the input has zero length.
    #[error(
        "every edge of the input has zero length (all of its vertices coincide): nothing to remesh"
    )]
    NoExtent,
    /// The target length would make more faces than the dynamic mesh holds.
    #[error(
        "target edge length {}: the remeshed mesh would have about {faces:.3e} faces (the input has {input}), more than {MAX_EXPECTED_FACES:.0e}: give a longer target edge length",
        length_text(*.length)
    )]
    TooShort {
        /// The target length given.
        length: TargetLength,
        /// The expected number of faces: the input's area over an
        /// equilateral triangle of side L.
        faces: f64,
        /// The input's faces.
        input: usize,
    },
    /// Building the dynamic mesh failed.
    #[error(transparent)]
    Dynamic(#[from] DynamicError),
    /// A phase failed (out of capacity, or no progress).
    #[error("{phase} phase of iteration {iteration}: {source}")]
    Run {
        /// The phase.
        phase: Phase,
        /// The iteration (1-based).
        iteration: u32,
        /// What went wrong.
        source: RunError,
    },
    /// The GPU failed.
    #[error(transparent)]
    Backend(#[from] BackendError),
}

impl NamesSettings for RemeshError {
    fn settings(&self) -> Vec<Setting> {
        match self {
            RemeshError::Length(_) | RemeshError::TooShort { .. } => vec![setting::TARGET_LENGTH],
            RemeshError::Iterations(_) => vec![setting::ITERATIONS],
            RemeshError::FeatureAngle(_) => vec![setting::FEATURE_ANGLE],
            RemeshError::SmoothingSteps(_) => vec![setting::SMOOTHING_STEPS],
            RemeshError::Empty | RemeshError::NoExtent => Vec::new(),
            RemeshError::Dynamic(e) => e.settings(),
            RemeshError::Run { source, .. } => source.settings(),
            RemeshError::Backend(e) => e.settings(),
        }
    }
}

cavity::names_settings!(RemeshError);

cavity::steps! {
    /// The four phases of an iteration.
    pub enum Phase {
        /// Split long edges.
        Split => "split",
        /// Collapse short edges.
        Collapse => "collapse",
        /// Flip edges to even valences.
        Flip => "flip",
        /// Tangential smoothing.
        Smooth => "smooth",
    }
}

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
/// on: `patch_size` faces per patch, `factors`, and [`attributes`].
///
/// # Errors
/// As `DynamicMesh::new`.
pub fn dynamic_mesh(
    mesh: &TriMesh,
    topology: &Topology,
    patch_size: u32,
    factors: CapacityFactors,
) -> Result<DynamicMesh, DynamicError> {
    DynamicMesh::with_topology_and_attributes(mesh, topology, patch_size, factors, &attributes())
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

/// Callbacks of a remeshing run.
#[derive(Default)]
pub struct Hooks<'a> {
    /// Called as each phase starts.
    pub progress: Option<PhaseHook<'a>>,
    /// Called with the mesh after each phase (on the GPU that copies the
    /// mesh back); [`remesh`] runs on the normalized mesh
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

/// Faces per patch of remeshing by default. Larger patches expand less
/// often (a cavity meets the patch's boundary less often) and have more
/// room for the collapses of one processing, but at 512 faces only one
/// block of the update kernel fits an SM (about 187 KB of shared memory,
/// against 101 KB at 256). On an H100
/// (docs/history/2026-11-24-fourteenth-session.md), 3 iterations at 256 / 512 faces per patch took:
/// dragon at 1.28 M faces 1.29 / 1.14 s, at 5.12 M 4.26 / 3.48 s; bumpy
/// cube at 2.56 M 0.98 / 1.11 s. The dragon, a scan whose edges are far
/// from the target (45 % in the band), is the harder and more typical
/// input.
pub const DEFAULT_PATCH_SIZE: u32 = 512;

/// Smallest patch size [`remesh`] lowers the patch size to when the
/// largest patch needs more shared memory than the GPU gives a block.
pub const MIN_PATCH_SIZE: u32 = 64;

/// How the dynamic mesh is laid out for a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layout {
    /// Faces per patch when patching ([`remesh`] halves it while the
    /// largest patch's update kernel does not fit the device).
    pub patch_size: u32,
    /// Growth room; the patch factor is raised when the target length
    /// makes the mesh grow (see [`remesh`]).
    pub factors: CapacityFactors,
}

/// Element slots per patch over the largest initial patch when remeshing
/// ([`Layout::default`]): little room, so that the update kernel's shared
/// memory at [`DEFAULT_PATCH_SIZE`] faces (about 108 KB on a 0.9 M-face
/// scan, 177 KB at the dynamic commands' factor of 2) lets two blocks
/// share an SM of an H100; a patch out of room is sliced. On the dragon
/// scan the update kernel takes about 12 % less time than at 2
/// (docs/history/2026-11-25-nineteenth-session.md).
pub const DEFAULT_CAPACITY_FACTOR: f32 = 1.25;

impl Default for Layout {
    /// [`DEFAULT_PATCH_SIZE`] faces per patch, [`DEFAULT_CAPACITY_FACTOR`],
    /// and the default patch factor.
    fn default() -> Layout {
        Layout {
            patch_size: DEFAULT_PATCH_SIZE,
            factors: CapacityFactors {
                elements: DEFAULT_CAPACITY_FACTOR,
                ..CapacityFactors::default()
            },
        }
    }
}

/// What a remeshing run did.
#[derive(Clone, Debug, PartialEq)]
pub struct RemeshReport {
    /// L in model units.
    pub length: f64,
    /// The input's statistics against L.
    pub input: Quality,
    /// The output's statistics against L.
    pub output: Quality,
    /// Per-phase times and counts.
    pub phases: PhaseTotals,
    /// The device that ran it.
    pub device: String,
    /// Seconds of the iterations (without building the dynamic mesh and
    /// exporting the result).
    pub seconds: f64,
    /// The patch factor used.
    pub patch_factor: f32,
    /// The patch size used (see [`Layout::patch_size`]).
    pub patch_size: u32,
    /// Bytes of the dynamic layout (capacity included) per input face.
    pub bytes_per_face: f64,
    /// On the GPU, where the time went.
    pub gpu_seconds: Option<GpuSeconds>,
    /// Seconds of the stages around the iterations.
    pub stages: Stages,
}

/// Seconds of the stages of [`remesh`] around its iterations.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stages {
    /// The input's topology (unless given, see [`remesh_with`]), mean edge
    /// length and area, normalizing, patching and building the dynamic
    /// mesh (again for each halving of the patch size).
    pub patch: f64,
    /// Exporting the result from the patches and moving it back to model
    /// units.
    pub export: f64,
    /// The output's topology and the statistics of input and output
    /// (what [`Rounded::finish`] runs beside them, such as the CLI's write,
    /// shares the cores and can lengthen them).
    pub statistics: f64,
}

/// What [`remesh_with`] gives: the remeshed mesh with its topology.
#[derive(Clone, Debug)]
pub struct Remeshed {
    /// The remeshed mesh, in model units.
    pub mesh: TriMesh,
    /// `Topology::new(&mesh)`, built for the output's statistics: an
    /// output check can take it (`cavity::defects::check_output_with`).
    pub topology: Topology,
    /// What the run did.
    pub report: RemeshReport,
}

/// Remeshes `input` on `backend` and returns the result with its report.
///
/// The patch factor is raised to twice the expected growth when L is
/// short enough for the mesh to grow (expected faces: the input's area over
/// an equilateral triangle of side L). On the GPU the patch size is halved
/// (down to [`MIN_PATCH_SIZE`]) while the largest patch's update kernel
/// needs more shared memory than a block gets.
///
/// # Errors
/// A setting out of range, an input without faces, an input the dynamic
/// mesh rejects, or a failed phase.
pub fn remesh(
    input: &TriMesh,
    settings: &RemeshSettings,
    backend: &Backend,
    layout: Layout,
    hooks: &mut Hooks<'_>,
) -> Result<(TriMesh, RemeshReport), RemeshError> {
    let start = Instant::now();
    let topology = Topology::new(input);
    let topology_seconds = start.elapsed().as_secs_f64();
    let mut run = remesh_with(input, &topology, settings, backend, layout, hooks)?;
    run.report.stages.patch += topology_seconds;
    Ok((run.mesh, run.report))
}

/// [`remesh`] with the topology of `input` given (`Topology::new(input)`),
/// for a caller that has it; returns the output's topology too.
///
/// # Errors
/// As [`remesh`].
pub fn remesh_with(
    input: &TriMesh,
    topology: &Topology,
    settings: &RemeshSettings,
    backend: &Backend,
    layout: Layout,
    hooks: &mut Hooks<'_>,
) -> Result<Remeshed, RemeshError> {
    prepare(input, topology, settings, layout)?.run(input, topology, backend, hooks)
}

/// A remeshing run prepared on the host, before any backend is needed: the
/// target length checked, the mesh normalized (`cavity::normalize`) and
/// patched into its dynamic layout. A caller can prepare while the GPU
/// starts and then [`Prepared::run`] it, or run its two halves
/// ([`Prepared::rounds`], [`Rounded::finish`]) with work of its own beside
/// them (the CLI does).
#[derive(Clone, Debug)]
pub struct Prepared {
    settings: RemeshSettings,
    length: f64,
    factors: CapacityFactors,
    normalization: Normalization,
    normalized: TriMesh,
    patch_size: u32,
    dynamic: DynamicMesh,
    patch_seconds: f64,
}

/// Prepares remeshing `input` (whose topology is `topology`) with
/// `settings` in `layout`: the first half of [`remesh_with`]. The patch
/// factor is raised to twice the expected growth when L is short enough
/// for the mesh to grow (expected faces: the input's area over an
/// equilateral triangle of side L).
///
/// # Errors
/// A setting out of range, an input without faces or without extent, a
/// target length that is not positive or would give more than
/// [`MAX_EXPECTED_FACES`] faces, or an input the dynamic mesh rejects.
pub fn prepare(
    input: &TriMesh,
    topology: &Topology,
    settings: &RemeshSettings,
    layout: Layout,
) -> Result<Prepared, RemeshError> {
    settings.check()?;
    layout.factors.check()?;
    if input.faces.is_empty() {
        return Err(RemeshError::Empty);
    }
    let patching = Instant::now();
    let mean = mean_edge_length_with(input, topology);
    if mean.is_nan() || mean <= 0.0 {
        return Err(RemeshError::NoExtent);
    }
    let length = settings.target(mean);
    if !(length.is_finite() && length > 0.0) {
        return Err(RemeshError::Length(length));
    }
    let expected = area(input) / (3f64.sqrt() / 4.0 * length * length);
    if expected > MAX_EXPECTED_FACES {
        return Err(RemeshError::TooShort {
            length: settings.length,
            faces: expected,
            input: input.num_faces(),
        });
    }
    let growth = expected / input.num_faces() as f64;
    let mut factors = layout.factors;
    factors.patches = factors.patches.max((2.0 * growth) as f32);
    // The kernels work on the mesh in the unit box (`cavity::normalize`).
    let normalization = Normalization::of(input);
    let normalized = normalization.apply(input);
    let dynamic = dynamic_mesh(&normalized, topology, layout.patch_size, factors)?;
    Ok(Prepared {
        settings: *settings,
        length,
        factors,
        normalization,
        normalized,
        patch_size: layout.patch_size,
        dynamic,
        patch_seconds: patching.elapsed().as_secs_f64(),
    })
}

impl Prepared {
    /// Seconds [`prepare`] took (the mean edge length, normalization and
    /// patching): the start of the run's patch stage.
    pub fn patch_seconds(&self) -> f64 {
        self.patch_seconds
    }

    /// [`Prepared::rounds`] then [`Rounded::finish`] with nothing to do
    /// beside them.
    ///
    /// # Errors
    /// As [`Prepared::rounds`].
    pub fn run(
        self,
        input: &TriMesh,
        topology: &Topology,
        backend: &Backend,
        hooks: &mut Hooks<'_>,
    ) -> Result<Remeshed, RemeshError> {
        let rounded = self.rounds(input, topology, backend, hooks, || ())?;
        Ok(rounded.finish(input, |_| (), |_, _, ()| ()).0)
    }

    /// Runs the prepared remeshing of `input` (the mesh given to
    /// [`prepare`], with its `topology`) on `backend` and copies the result
    /// back to the host, the first half of [`Prepared::run`]: the backend
    /// is not needed after it (the CLI gives the GPU back while the output
    /// is written). Calls `during()` on another thread while the rounds run
    /// (the host is idle meanwhile; the CLI analyses the input's defects
    /// there); the input's statistics are taken on another thread too. On
    /// the GPU the patch size is halved first (down to [`MIN_PATCH_SIZE`])
    /// while the largest patch's update kernel needs more shared memory
    /// than a block gets.
    ///
    /// # Errors
    /// An input the dynamic mesh rejects at a smaller patch size, or a
    /// failed phase.
    pub fn rounds<D: Send>(
        self,
        input: &TriMesh,
        topology: &Topology,
        backend: &Backend,
        hooks: &mut Hooks<'_>,
        during: impl FnOnce() -> D + Send,
    ) -> Result<Rounded<D>, RemeshError> {
        let Prepared {
            settings,
            length,
            factors,
            normalization,
            normalized,
            mut patch_size,
            mut dynamic,
            mut patch_seconds,
        } = self;
        add_kernels(backend)?;
        let repatching = Instant::now();
        while patch_size > MIN_PATCH_SIZE && !fits(backend, &dynamic) {
            patch_size = (patch_size / 2).max(MIN_PATCH_SIZE);
            dynamic = dynamic_mesh(&normalized, topology, patch_size, factors)?;
        }
        patch_seconds += repatching.elapsed().as_secs_f64();
        let bytes_per_face = dynamic.bytes_per_face();
        let start = Instant::now();
        // The rounds run on the caller's thread, the input's statistics and
        // `during` on others.
        let (ran, seconds, input_quality, during) = std::thread::scope(|scope| {
            let input_quality = scope.spawn(|| Quality::with_topology(input, topology, length));
            let during = scope.spawn(during);
            let ran = backend.run_rounds(
                &mut dynamic,
                |r| remesh_rounds(r, normalization.length(length), &settings, hooks),
                |source| RemeshError::Run {
                    phase: Phase::Smooth,
                    iteration: settings.iterations,
                    source,
                },
            );
            let seconds = start.elapsed().as_secs_f64();
            let quality = input_quality
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            let during = during
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (ran, seconds, quality, during)
        });
        let ran = ran?;
        // The input's statistics and `during` count where they held the
        // rounds up.
        let input_wait = start.elapsed().as_secs_f64() - seconds;
        Ok(Rounded {
            report: RemeshReport {
                length,
                input: input_quality,
                output: Quality::default(),
                phases: ran.value,
                device: ran.device,
                seconds,
                patch_factor: factors.patches,
                patch_size,
                bytes_per_face,
                gpu_seconds: ran.gpu_seconds,
                stages: Stages {
                    patch: patch_seconds,
                    export: 0.0,
                    statistics: input_wait,
                },
            },
            normalization,
            normalized,
            dynamic,
            during,
        })
    }
}

/// A remeshing whose rounds ran ([`Prepared::rounds`]): the dynamic mesh
/// on the host, the report but the output's statistics, and what `during`
/// returned.
#[derive(Clone, Debug)]
pub struct Rounded<D> {
    report: RemeshReport,
    normalization: Normalization,
    normalized: TriMesh,
    dynamic: DynamicMesh,
    during: D,
}

impl<D: Send> Rounded<D> {
    /// Exports the output (in model units, input vertices first in input
    /// order: `DynamicMesh::to_mesh_with_sources`), then calls
    /// `write(output)` on another thread while the output's topology is
    /// built, and `then(output, output topology, what during returned)`
    /// while the output's statistics are taken: the second half of
    /// [`Prepared::run`]. The CLI writes the output beside its destination
    /// in `write` and checks it in `then`. Returns what both returned.
    /// `input` is the mesh given to [`prepare`].
    ///
    /// # Panics
    /// When `write` or `then` panics (the panic is resumed on the caller's
    /// thread).
    pub fn finish<W: Send, T: Send>(
        self,
        input: &TriMesh,
        write: impl FnOnce(&TriMesh) -> W + Send,
        then: impl FnOnce(&TriMesh, &Topology, D) -> T + Send,
    ) -> (Remeshed, W, T) {
        let Rounded {
            mut report,
            normalization,
            normalized,
            dynamic,
            during,
        } = self;
        let exporting = Instant::now();
        let (mut output, sources) = dynamic.to_mesh_with_sources();
        normalization.restore_from(&mut output, &sources, input, &normalized);
        report.stages.export = exporting.elapsed().as_secs_f64();
        let statistics = Instant::now();
        let length = report.length;
        // The output's topology, its statistics and what `then` returned;
        // the seconds count the topology and the statistics.
        let (output_topology, (output_quality, statistics_seconds), written, checked) =
            std::thread::scope(|scope| {
                let writing = scope.spawn(|| write(&output));
                let output_topology = Topology::new(&output);
                let topology_seconds = statistics.elapsed().as_secs_f64();
                let (quality, checked) = rayon::join(
                    || {
                        let started = Instant::now();
                        let q = Quality::with_topology(&output, &output_topology, length);
                        (q, topology_seconds + started.elapsed().as_secs_f64())
                    },
                    || then(&output, &output_topology, during),
                );
                let written = writing
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                (output_topology, quality, written, checked)
            });
        report.output = output_quality;
        report.stages.statistics += statistics_seconds;
        let remeshed = Remeshed {
            mesh: output,
            topology: output_topology,
            report,
        };
        (remeshed, written, checked)
    }
}

/// Most faces a remeshing may be expected to make (the input's area over
/// an equilateral triangle of side L): beyond about 3e8 the dynamic mesh's
/// arrays outgrow 32-bit indices, and a GPU's memory before that.
pub const MAX_EXPECTED_FACES: f64 = 2e8;

/// `--length` as the user wrote it.
fn length_text(length: TargetLength) -> String {
    match length {
        TargetLength::Absolute(l) => format!("{l}"),
        TargetLength::Relative(r) => format!("{r}x"),
    }
}

/// Whether every update kernel of remeshing and its valence computation
/// can run on `backend` at the capacities of `dynamic`.
fn fits(backend: &Backend, dynamic: &DynamicMesh) -> bool {
    let cap = &dynamic.cap();
    backend.fits_update::<SplitLongEdges>(cap)
        && backend.fits_update::<CollapseShortEdgesSafely>(cap)
        && backend.fits_update::<ImproveValence>(cap)
        && backend.fits_for_each::<StoreValences>(cap)
}

/// Where a GPU run's time went as a report line (empty off the GPU).
pub fn gpu_line(seconds: Option<GpuSeconds>) -> String {
    seconds.map_or(String::new(), |g| {
        let [u, c, k] = g.kernels;
        format!(
            "GPU kernels: update {u:.3} s, calibration {c:.3} s, compaction {k:.3} s; upload {:.3} s, copy back {:.3} s\n",
            g.upload, g.copy_back
        )
    })
}

/// Total face area of `mesh` (model units squared); in parallel, the same
/// for any number of workers (`quality::chunked_sum`).
fn area(mesh: &TriMesh) -> f64 {
    quality::chunked_sum(&mesh.faces, |t| {
        let [a, b, c] = t.map(|v| quality::point(mesh, v));
        0.5 * (b - a).cross(c - a).length()
    })
}

impl Quality {
    /// One table-4 row: faces, min/max edge over L, valence min/max/mean,
    /// smallest angle, share of edges in [4/5 L, 4/3 L].
    pub fn row(&self, name: &str) -> String {
        format!(
            "{name:<8} {:>10} {:>7.3} {:>7.3} {:>4} {:>4} {:>6.2} {:>8.2} {:>7.1} %\n",
            self.faces,
            self.min_edge,
            self.max_edge,
            self.min_valence,
            self.max_valence,
            self.mean_valence,
            self.min_angle,
            100.0 * self.in_band
        )
    }

    /// The header of [`Quality::row`].
    pub fn header() -> String {
        format!(
            "{:<8} {:>10} {:>7} {:>7} {:>4} {:>4} {:>6} {:>8} {:>9}\n",
            "", "faces", "min e/L", "max e/L", "minV", "maxV", "meanV", "min ang", "in band"
        )
    }
}

impl RemeshReport {
    /// The report as text: the table-4 statistics of input and output, then
    /// per-phase times and operation counts.
    pub fn table(&self) -> String {
        let mut s = format!("target length L = {:.6}\n", self.length);
        s += &Quality::header();
        s += &self.input.row("input");
        s += &self.output.row("output");
        for (i, phase) in Phase::ALL.into_iter().enumerate() {
            s += &format!("{:<9} {:>9.3} s", phase.name(), self.phases.seconds[i]);
            if let Some(r) = self.phases.runs.get(i) {
                s += &format!(
                    "  {:>9} done in {:>3} sweeps, {:>5} rounds; rolled back {:.1} %",
                    r.flips,
                    r.sweeps,
                    r.rounds,
                    100.0 * r.rollback_fraction()
                );
            }
            s.push('\n');
        }
        s += &format!(
            "total     {:>9.3} s on {} (patch size {}, patch factor {:.1})\n",
            self.seconds, self.device, self.patch_size, self.patch_factor
        );
        s += &gpu_line(self.gpu_seconds);
        s
    }
}

//! Explicit surface tracking without collision detection, as in the
//! dynamic paper, section 6.4 and fig. 13: a square sheet is advected by a
//! curl-noise velocity field for a number of frames, each frame one
//! advection step followed by one mesh-improvement step that mirrors El
//! Topo's (Brochu and Bridson 2009, section 4; El Topo's `improve_mesh`
//! with collisions and topology changes off), in its order:
//!
//! 1. split edges longer than 3/2 L₀ (`SplitLongEdges`, longest first);
//! 2. flip edges to the shorter diagonal when the enclosed volume changes
//!    by at most 5·10⁻⁴ L₀³ (`ShorterDiagonal`);
//! 3. collapse edges shorter than 1/2 L₀ to their midpoint, unless that
//!    breaks the link condition, folds or slivers a face or makes an edge
//!    longer than 3/2 L₀ (`CollapseShortEdgesSafely`);
//! 4. one step of null-space smoothing (`cavity_remesh::smooth` with
//!    `rank_ratio` 0.03, El Topo's).
//!
//! L₀ is the initial mean edge length. Each of 1-3 runs to convergence.
//! Boundary vertices are advected, but never collapsed or smoothed; the
//! boundary's edges are split.

pub mod bench;

/// The settings of tracking that its errors may ask to change
/// (`cavity::settings`; a front end maps them to its options).
pub mod setting {
    use cavity::settings::Setting;

    /// The grid side ([`crate::TrackSettings::grid`]).
    pub const GRID: Setting = Setting::new("grid", "the grid side");
    /// The frames ([`crate::TrackSettings::frames`]).
    pub const FRAMES: Setting = Setting::new("frames", "the frame count");
    /// The time step ([`crate::TrackSettings::dt`]).
    pub const TIME_STEP: Setting = Setting::new("dt", "the time step");
}

use std::time::Instant;

use cavity_remesh::smooth::{SmoothRounds, smooth};
use cavity_remesh_kernels::CollapseShortEdgesSafely;
use cavity_remesh_kernels::smooth::Smoothing;
use cavity_remesh_kernels::split::SplitLongEdges;
pub use cavity_track_kernels::{Advect, Advection, ShorterDiagonal};

use cavity::TriMesh;
use cavity::attributes::AttributeLayout;
use cavity::backend::{Backend, BackendError, GpuSeconds, PlaceError};
use cavity::dynamic::{DynamicError, DynamicMesh};
use cavity::rounds::{ForEach, RunError, RunReport, Update, sweeps, sweeps_at_most};
use cavity::settings::{NamesSettings, Setting};
use cavity_remesh::KEEP_BOUNDARY;
use cavity_remesh::{Layout, Quality, gpu_line, mean_edge_length};

cavity::kernel_module!("cavity_track_kernels.ptx");

/// What to track and how long.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrackSettings {
    /// Vertices along each side of the square sheet (the paper's grid
    /// dimension): `grid²` vertices, `2 (grid - 1)²` faces.
    pub grid: u32,
    /// Frames, each one advection step and one improvement step.
    pub frames: u32,
    /// Time per frame (El Topo's curl-noise scene: 0.05, 100 frames).
    pub dt: f32,
}

impl Default for TrackSettings {
    fn default() -> Self {
        TrackSettings {
            grid: 100,
            frames: 100,
            dt: 0.05,
        }
    }
}

/// Largest grid accepted: 5·10⁷ faces, whose dynamic layout (about 660
/// bytes per face with the room to grow) takes about 33 GB.
pub const MAX_GRID: u32 = 5_000;
/// Most frames accepted.
pub const MAX_FRAMES: u32 = 100_000;
/// Smallest patch factor a run uses: the sheet's area about doubles over
/// El Topo's 100 frames, and its faces with it.
pub const MIN_PATCH_FACTOR: f32 = 4.0;

/// Largest time step accepted: the field changes over about one length
/// unit and moves at most about one unit per time unit, so longer steps
/// tangle the sheet.
pub const MAX_DT: f32 = 1.0;
/// Sweeps of the collapse step per frame (`sweeps_at_most`): El Topo
/// collapses in one pass per improvement step; an edge that a neighbouring
/// collapse turned short after its patch was done waits for the next
/// frame.
pub const COLLAPSE_SWEEPS: u32 = 3;

impl TrackSettings {
    /// Checks every setting; the error names the command-line flag.
    pub fn check(&self) -> Result<(), TrackError> {
        if !(2..=MAX_GRID).contains(&self.grid) {
            return Err(TrackError::Grid(self.grid));
        }
        if !(1..=MAX_FRAMES).contains(&self.frames) {
            return Err(TrackError::Frames(self.frames));
        }
        if !(self.dt > 0.0 && self.dt <= MAX_DT) {
            return Err(TrackError::Dt(self.dt));
        }
        Ok(())
    }

    /// The curl-noise field of El Topo's open-sheet scene, stepped by
    /// `dt`: noise length scale 1.5, potential gain 0.65, acting in the
    /// ball of radius 4 around (0, 1, 0), which holds the sheet but its
    /// corners.
    pub fn field(&self) -> Advection {
        Advection {
            dt: self.dt,
            length_scale: 1.5,
            gain: 0.65,
            radius: 4.0,
            centre: [0.0, 1.0, 0.0],
        }
    }
}

/// The square sheet `[-3, 3]²` in the plane y = 0 with `n × n` vertices
/// (row-major along x, then z) and every cell split along the same
/// diagonal; faces face +y.
pub fn sheet(n: u32) -> TriMesh {
    let h = 6.0 / (n.max(2) - 1) as f32;
    let positions = (0..n * n)
        .map(|i| [-3.0 + (i % n) as f32 * h, 0.0, -3.0 + (i / n) as f32 * h])
        .collect();
    let faces = (0..n.saturating_sub(1))
        .flat_map(|r| (0..n - 1).map(move |c| r * n + c))
        .flat_map(|v| [[v, v + n, v + 1], [v + 1, v + n, v + n + 1]])
        .collect();
    TriMesh { positions, faces }
}

/// Errors of a tracking run.
#[derive(Debug, thiserror::Error)]
pub enum TrackError {
    /// The grid is too small or too large.
    #[error("grid side {0}: must be between 2 and {MAX_GRID} vertices")]
    Grid(u32),
    /// The frame count is out of range.
    #[error("frame count {0}: must be between 1 and {MAX_FRAMES}")]
    Frames(u32),
    /// The time step is not a positive number up to [`MAX_DT`].
    #[error("time step {0}: must be above 0 and at most {MAX_DT}")]
    Dt(f32),
    /// Building the dynamic mesh failed.
    #[error(transparent)]
    Dynamic(#[from] DynamicError),
    /// A step failed (out of capacity, or no progress).
    #[error("{step} step of frame {frame}: {source}")]
    Run {
        /// The step.
        step: Step,
        /// The frame (1-based).
        frame: u32,
        /// What went wrong.
        source: RunError,
    },
    /// Exporting the final mesh from the dynamic mesh failed (copying it
    /// back, or an inconsistent layout).
    #[error("exporting the final mesh: {0}")]
    Export(RunError),
    /// The per-frame callback failed (writing a frame).
    #[error("after frame {frame}: {source}")]
    Hook {
        /// The frame (1-based).
        frame: u32,
        /// What went wrong.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The GPU failed.
    #[error(transparent)]
    Backend(#[from] BackendError),
}

impl NamesSettings for TrackError {
    fn settings(&self) -> Vec<Setting> {
        match self {
            TrackError::Grid(_) => vec![setting::GRID],
            TrackError::Frames(_) => vec![setting::FRAMES],
            TrackError::Dt(_) => vec![setting::TIME_STEP],
            TrackError::Dynamic(e) => e.settings(),
            TrackError::Run { source, .. } | TrackError::Export(source) => source.settings(),
            TrackError::Backend(e) => e.settings(),
            TrackError::Hook { .. } => Vec::new(),
        }
    }
}

cavity::names_settings!(TrackError);

cavity::steps! {
    /// The steps of a frame.
    pub enum Step {
        /// Move the vertices through the velocity field.
        Advect => "advect",
        /// Split long edges.
        Split => "split",
        /// Flip edges to shorter diagonals.
        Flip => "flip",
        /// Collapse short edges.
        Collapse => "collapse",
        /// Null-space smoothing.
        Smooth => "smooth",
    }
}

/// Rounds that run every tracking operation (the CPU backend's and the
/// GPU's do).
pub trait TrackRounds:
    Update<SplitLongEdges>
    + Update<ShorterDiagonal>
    + Update<CollapseShortEdgesSafely>
    + ForEach<Advect>
    + SmoothRounds
{
}

impl<R> TrackRounds for R where
    R: Update<SplitLongEdges>
        + Update<ShorterDiagonal>
        + Update<CollapseShortEdgesSafely>
        + ForEach<Advect>
        + SmoothRounds
        + ?Sized
{
}

/// What each step did over all frames.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepTotals {
    /// Seconds per step, in [`Step::ALL`] order (the GPU's included).
    pub seconds: [f64; 5],
    /// The split, flip and collapse runs, summed over frames.
    pub runs: [RunReport; 3],
}

/// A callback with the frame (1-based) and the mesh after it.
pub type FrameHook<'a> =
    &'a mut dyn FnMut(u32, &DynamicMesh) -> Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// Callbacks of a tracking run.
#[derive(Default)]
pub struct TrackHooks<'a> {
    /// Called as each frame starts, with the frame.
    pub progress: Option<&'a mut dyn FnMut(u32)>,
    /// Called with the mesh after each frame for which `wants` is true (on
    /// the GPU that copies the mesh back); its error ends the run.
    pub after_frame: Option<FrameHook<'a>>,
    /// Which frames `after_frame` sees (all when `None`).
    pub wants: Option<&'a dyn Fn(u32) -> bool>,
}

/// Runs `settings.frames` frames on `runner` with initial mean edge length
/// `length` (model units).
///
/// # Errors
/// The failing step's [`RunError`] (out of capacity: the message names the
/// setting to raise), or the hook's error.
pub fn track_rounds<R: TrackRounds + ?Sized>(
    runner: &mut R,
    length: f64,
    settings: &TrackSettings,
    hooks: &mut TrackHooks<'_>,
) -> Result<StepTotals, TrackError> {
    let l = length as f32;
    let advect = Advect {
        field: settings.field(),
    };
    let split = SplitLongEdges::new(1.5 * l);
    let flip = ShorterDiagonal {
        max_volume_change: 5e-4 * l * l * l,
        feature_cos: -2.0,
    };
    // The sheet starts clean: no collapse is taken for degeneracy alone.
    let collapse = CollapseShortEdgesSafely {
        min_length: 0.5 * l,
        degenerate_length: 0.0,
        boundary_cos: KEEP_BOUNDARY,
        corner_tolerance: 0.0,
        max_length: 1.5 * l,
        feature_cos: -2.0,
        flat_caps: 0,
    };
    let smoothing = Smoothing {
        boundary_cos: KEEP_BOUNDARY,
        step: 1.0,
        feature_cos: -2.0,
        rank_ratio: 0.03,
    };
    let mut totals = StepTotals::default();
    for frame in 1..=settings.frames {
        if let Some(p) = hooks.progress.as_mut() {
            p(frame);
        }
        for (i, step) in Step::ALL.into_iter().enumerate() {
            let start = Instant::now();
            let run = match step {
                Step::Advect => runner.for_each(&advect).map(|()| None),
                Step::Split => sweeps(runner, &split, true, None).map(Some),
                Step::Flip => sweeps(runner, &flip, true, None).map(Some),
                Step::Collapse => sweeps_at_most(runner, &collapse, COLLAPSE_SWEEPS).map(Some),
                Step::Smooth => smooth(runner, &smoothing, 1).map(|()| None),
            }
            .and_then(|run| runner.status().map(|_| run))
            .map_err(|source| TrackError::Run {
                step,
                frame,
                source,
            })?;
            totals.seconds[i] += start.elapsed().as_secs_f64();
            if let Some(r) = run {
                totals.runs[i - 1].add(&r);
            }
        }
        if let Some(f) = hooks.after_frame.as_mut()
            && hooks.wants.is_none_or(|w| w(frame))
        {
            let mesh = runner.mesh().map_err(|source| TrackError::Run {
                step: Step::Smooth,
                frame,
                source,
            })?;
            f(frame, mesh).map_err(|source| TrackError::Hook { frame, source })?;
        }
    }
    Ok(totals)
}

/// What a tracking run did.
#[derive(Clone, Debug, PartialEq)]
pub struct TrackReport {
    /// The settings run.
    pub settings: TrackSettings,
    /// L₀, the initial mean edge length (model units).
    pub length: f64,
    /// The initial sheet's statistics against L₀.
    pub input: Quality,
    /// The final mesh's statistics against L₀.
    pub output: Quality,
    /// Per-step times and counts.
    pub steps: StepTotals,
    /// The device that ran it.
    pub device: String,
    /// Seconds of the frames (without building the dynamic mesh and
    /// exporting the result).
    pub seconds: f64,
    /// The patch factor used.
    pub patch_factor: f32,
    /// Bytes of the dynamic layout (capacity included) per initial face.
    pub bytes_per_face: f64,
    /// On the GPU, where the time went.
    pub gpu_seconds: Option<GpuSeconds>,
}

/// Tracks the sheet of `settings.grid` on `backend` and returns the final
/// mesh with the report. The patch factor is raised to at least
/// [`MIN_PATCH_FACTOR`]. The sheet is patched and laid out where the
/// backend does it (`Backend::topology_on`, `Backend::place_on`: on the
/// GPU on the device) and exported there
/// (`Backend::run_placed_exported`): on the GPU only the final mesh is
/// copied back, not the dynamic layout (issue 55 item 4), unless a hook
/// asks for a frame's mesh.
///
/// # Errors
/// A setting out of range, a failed placement on the device, or a failed
/// step (out of capacity: the message names the setting to raise).
pub fn track(
    settings: &TrackSettings,
    backend: &Backend,
    layout: Layout,
    hooks: &mut TrackHooks<'_>,
) -> Result<(TriMesh, TrackReport), TrackError> {
    settings.check()?;
    layout.factors.check()?;
    add_kernels(backend)?;
    let input = sheet(settings.grid);
    let length = mean_edge_length(&input);
    let mut factors = layout.factors;
    factors.patches = factors.patches.max(MIN_PATCH_FACTOR);
    // Patched and laid out where the backend does it best (on the GPU on
    // the device, where the layout stays); only the output comes back.
    let topology = backend.topology_on(&input)?;
    let placed = backend
        .place_on(
            &input,
            &topology,
            layout.patch_size,
            factors,
            &AttributeLayout::new(),
        )
        .map_err(PlaceError::into_either::<TrackError>)?;
    drop(topology);
    let bytes_per_face = placed.bytes_per_face();
    let start = Instant::now();
    let (ran, exported) = backend.run_placed_exported(
        placed,
        |r| track_rounds(r, length, settings, hooks),
        TrackError::Export,
    )?;
    let seconds = start.elapsed().as_secs_f64() - exported.seconds;
    let output = exported.mesh;
    let report = TrackReport {
        settings: *settings,
        length,
        input: Quality::of(&input, length),
        output: Quality::of(&output, length),
        steps: ran.value,
        device: ran.device,
        seconds,
        patch_factor: factors.patches,
        bytes_per_face,
        gpu_seconds: ran.gpu_seconds,
    };
    Ok((output, report))
}

impl TrackReport {
    /// The report as text: the statistics of the initial and final mesh
    /// against L₀, then per-step times and operation counts.
    pub fn table(&self) -> String {
        let s = &self.settings;
        let mut t = format!(
            "{}x{} sheet, {} frames of dt {}; L0 = {:.6}; split above 1.5 L0, collapse below 0.5 L0\n",
            s.grid, s.grid, s.frames, s.dt, self.length
        );
        t += &Quality::header();
        t += &self.input.row("initial");
        t += &self.output.row("final");
        for (i, step) in Step::ALL.into_iter().enumerate() {
            t += &format!("{:<9} {:>9.3} s", step.name(), self.steps.seconds[i]);
            if let Some(r) = i.checked_sub(1).and_then(|i| self.steps.runs.get(i)) {
                t += &format!(
                    "  {:>9} done in {:>5} sweeps, {:>6} rounds; rolled back {:.1} %",
                    r.flips,
                    r.sweeps,
                    r.rounds,
                    100.0 * r.rollback_fraction()
                );
            }
            t.push('\n');
        }
        t += &format!(
            "total     {:>9.3} s on {} ({:.1} ms per frame, patch factor {:.1})\n",
            self.seconds,
            self.device,
            1e3 * self.seconds / s.frames.max(1) as f64,
            self.patch_factor
        );
        t += &gpu_line(self.gpu_seconds);
        t
    }
}

//! What remeshing takes: the target length and the settings
//! ([`RemeshSettings`]), how the dynamic mesh is laid out ([`Layout`]),
//! the limits and defaults, and the errors that name the settings to
//! change ([`RemeshError`], [`setting`]).

use cavity::backend::BackendError;
use cavity::dynamic::{CapacityFactors, DynamicError};
use cavity::rounds::RunError;
use cavity::settings::{NamesSettings, Setting};

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
    /// The run was stopped before a phase (`Hooks::stop`: a user's
    /// interrupt); the mesh is dropped.
    #[error("stopped before iteration {iteration}'s {phase} phase")]
    Stopped {
        /// The iteration (from 1).
        iteration: u32,
        /// The phase that did not run.
        phase: Phase,
    },
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
    /// The dynamic mesh with room for the expected output, and on the host
    /// the output itself ([`OUTPUT_BYTES_PER_FACE`]), need more memory than
    /// the host (checked before the dynamic mesh is allocated, and again
    /// before the rounds) or the GPU (before the upload) has available.
    #[error(
        "target edge length {}: the remeshed mesh would have about {faces:.3e} faces (the input has {input}); remeshing needs about {} of {memory} memory ({}), more than the {} available: give a longer target edge length",
        length_text(*.length),
        cavity::units::bytes(.dynamic + .output),
        memory_parts(*.dynamic, *.output),
        cavity::units::bytes(*.available)
    )]
    Memory {
        /// The target length given.
        length: TargetLength,
        /// The expected number of faces (as [`RemeshError::TooShort`]).
        faces: f64,
        /// The input's faces.
        input: usize,
        /// Bytes of the dynamic mesh (0 when the output alone is too
        /// large, refused before the dynamic mesh is laid out).
        dynamic: u64,
        /// Bytes of the output and what is built from it on the host (0 on
        /// the GPU).
        output: u64,
        /// Bytes available.
        available: u64,
        /// Whose memory: "host" or "GPU".
        memory: &'static str,
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
            RemeshError::Length(_) | RemeshError::TooShort { .. } | RemeshError::Memory { .. } => {
                vec![setting::TARGET_LENGTH]
            }
            RemeshError::Iterations(_) => vec![setting::ITERATIONS],
            RemeshError::FeatureAngle(_) => vec![setting::FEATURE_ANGLE],
            RemeshError::SmoothingSteps(_) => vec![setting::SMOOTHING_STEPS],
            RemeshError::Empty | RemeshError::NoExtent | RemeshError::Stopped { .. } => Vec::new(),
            RemeshError::Dynamic(e) => e.settings(),
            RemeshError::Run { source, .. } => source.settings(),
            RemeshError::Backend(e) => e.settings(),
        }
    }
}

cavity::names_settings!(RemeshError);

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

/// Smallest patch size [`remesh`](crate::remesh) lowers the patch size to when the
/// largest patch needs more shared memory than the GPU gives a block.
pub const MIN_PATCH_SIZE: u32 = 64;

/// How the dynamic mesh is laid out for a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layout {
    /// Faces per patch when patching ([`remesh`](crate::remesh) halves it while the
    /// largest patch's update kernel does not fit the device).
    pub patch_size: u32,
    /// Growth room; the patch factor is raised when the target length
    /// makes the mesh grow (see [`remesh`](crate::remesh)).
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

/// Host bytes per face of the output and of what is built from it while
/// the dynamic mesh is still held: the exported mesh (12 bytes per face,
/// 6 for its half as many vertices), the export's element lists and
/// orders (about 40), its topology (edges, face-edges, the vertex-face and
/// edge-face lists: about 56, and 24 for the sides it is built from) and
/// the edge lengths of its statistics (12): about 150, rounded up.
pub const OUTPUT_BYTES_PER_FACE: f64 = 160.0;

/// The parts of [`RemeshError::Memory`]'s sum in words (a part of 0
/// bytes was not counted).
fn memory_parts(dynamic: u64, output: u64) -> String {
    use cavity::units::bytes;
    match (dynamic, output) {
        (0, output) => format!("the output alone about {}", bytes(output)),
        (dynamic, 0) => format!("the dynamic mesh {}", bytes(dynamic)),
        (dynamic, output) => format!(
            "the dynamic mesh {}, the output about {}",
            bytes(dynamic),
            bytes(output)
        ),
    }
}

/// `--length` as the user wrote it.
fn length_text(length: TargetLength) -> String {
    match length {
        TargetLength::Absolute(l) => format!("{l}"),
        TargetLength::Relative(r) => format!("{r}x"),
    }
}

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

/// Most faces a remeshing may be expected to make (the input's area over
/// an equilateral triangle of side L): beyond about 3e8 the dynamic mesh's
/// arrays outgrow 32-bit indices, and a GPU's memory before that.
pub const MAX_EXPECTED_FACES: f64 = 2e8;

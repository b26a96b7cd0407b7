//! Mesh smoothing by implicit mean curvature flow (Desbrun et al. 1999) on
//! a backend, the way RXMesh runs it (section 8.1, appendix E): every step
//! solves `(M + dt K) x' = M x` with a matrix-free, unpreconditioned
//! conjugate gradient (Shewchuk 1994, B2), the cotan weights and mixed
//! Voronoi areas recomputed from the positions at every matrix-vector
//! product (`cavity-mcf-kernels`). Vertices on a boundary or non-manifold
//! edge stay in place.
//!
//! An application crate on cavity's public model: the per-vertex
//! computations are in `cavity-mcf-kernels`, their PTX this crate's [`PTX`];
//! the conjugate gradient is the host's loop over `for_each`, `dot`,
//! `axpy` and `xpay` inside `Backend::run_rounds`. [`smooth`] takes a
//! [`TriMesh`] at any scale (it works in the unit box,
//! `cavity::normalize`); [`McfAttributes`] (an `AttributeSet`) and [`flow`] run the flow on a
//! dynamic mesh the caller holds (with other applications' attributes).

pub mod bench;

pub use cavity_mcf_kernels::{Corner, McfFixed, McfMatVec, McfMoveBy, McfResidual};

use std::time::Instant;

use cavity::attributes::{Attr, AttributeLayout, AttributeSet};
use cavity::backend::AnyRounds;
use cavity::backend::Backend;
use cavity::computation::ComputationError;
use cavity::dynamic::{CapacityFactors, DynamicMesh};
use cavity::normalize::Normalization;
use cavity::rounds::{ForEach, Rounds, RunError};
use cavity::settings::{NamesSettings, OutOfRange, Setting};
use cavity::topology::{Topology, mean_edge_length_with};
use cavity::{MeshError, TriMesh};

cavity::kernel_module!("cavity_mcf_kernels.ptx");

/// The flow's settings, as its errors name them
/// ([`McfError::Settings`]).
pub mod setting {
    use cavity::settings::Setting;

    /// The implicit steps ([`crate::McfSettings::steps`]).
    pub const STEPS: Setting = Setting::new("steps", "the number of steps");
    /// The time step ([`crate::McfSettings::dt`]).
    pub const TIME_STEP: Setting = Setting::new("dt", "the time step");
    /// The solver's tolerance ([`crate::McfSettings::tolerance`]).
    pub const TOLERANCE: Setting = Setting::new("tolerance", "the tolerance");
    /// Iterations per step ([`crate::McfSettings::max_iterations`]).
    pub const MAX_ITERATIONS: Setting = Setting::new("max_iterations", "the iterations per step");
}

/// Errors of the flow.
#[derive(Debug, thiserror::Error)]
pub enum McfError {
    /// A setting out of range: change the setting it names.
    #[error(transparent)]
    Settings(#[from] OutOfRange),
    /// The mesh has a non-finite coordinate or a bad face (the message
    /// names it).
    #[error(transparent)]
    Mesh(#[from] MeshError),
    /// Laying the mesh out, the run, the GPU or an attribute failed.
    #[error(transparent)]
    Computation(#[from] ComputationError),
}

cavity::computation_error_from!(McfError::Computation);

impl NamesSettings for McfError {
    fn settings(&self) -> Vec<Setting> {
        match self {
            McfError::Computation(e) => e.settings(),
            McfError::Settings(e) => e.settings(),
            McfError::Mesh(_) => Vec::new(),
        }
    }
}

cavity::names_settings!(McfError);

/// What one flow does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct McfSettings {
    /// Implicit steps (at least 1).
    pub steps: u32,
    /// The time step over the squared mean edge length (positive): 1
    /// diffuses the positions over about one edge per step.
    pub dt: f32,
    /// The conjugate gradient stops when the residual's norm falls below
    /// this fraction of its norm at the step's start (in `[0, 1)`; 0 runs
    /// `max_iterations`).
    pub tolerance: f32,
    /// Conjugate-gradient iterations per step at most (at least 1).
    pub max_iterations: u32,
    /// Faces per patch at most.
    pub patch_size: u32,
}

impl Default for McfSettings {
    /// One step of `dt = 1`, tolerance `1e-5`, at most 1000 iterations,
    /// patches of 512 faces.
    fn default() -> Self {
        McfSettings {
            steps: 1,
            dt: 1.0,
            tolerance: 1e-5,
            max_iterations: 1000,
            patch_size: 512,
        }
    }
}

impl McfSettings {
    /// Checks every field's range.
    ///
    /// # Errors
    /// [`McfError::Settings`] naming the field out of range.
    pub fn check(&self) -> Result<(), McfError> {
        let bad = |setting, message| Err(OutOfRange::new(setting, message).into());
        if self.steps == 0 {
            return bad(setting::STEPS, "must be at least 1");
        }
        if !(self.dt > 0.0 && self.dt.is_finite()) {
            return bad(setting::TIME_STEP, "must be positive and finite");
        }
        if !(0.0..1.0).contains(&self.tolerance) {
            return bad(setting::TOLERANCE, "must be at least 0 and below 1");
        }
        if self.max_iterations == 0 {
            return bad(setting::MAX_ITERATIONS, "must be at least 1");
        }
        Ok(())
    }
}

/// The conjugate gradient of one step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepReport {
    /// Iterations run.
    pub iterations: u32,
    /// The residual's norm over its norm at the step's start (0 when the
    /// start was already the solution): the conjugate gradient's recurrent
    /// residual.
    pub residual: f64,
    /// Whether the residual fell below the tolerance.
    pub converged: bool,
    /// Wall time of the step's solve on the host's clock, seconds (every
    /// iteration waits for its dot product and its residual's norm).
    pub seconds: f64,
}

/// What a flow did.
#[derive(Clone, Debug, PartialEq)]
pub struct McfReport {
    /// One per step.
    pub steps: Vec<StepReport>,
    /// The absolute time step, squared model units.
    pub dt: f64,
    /// Vertices kept in place (boundary, non-manifold, without area).
    pub fixed: usize,
    /// The device that ran it.
    pub device: String,
}

/// The attributes the flow needs on a dynamic mesh (all vertex
/// attributes): the fixed marks, the solution `u` (a step's
/// displacement), the residual `r`, the direction `d` and the product
/// `q`.
#[derive(Clone, Copy, Debug, AttributeSet)]
#[attributes(prefix = "mcf", kind = "vertex")]
pub struct McfAttributes {
    /// 1 for a vertex kept in place.
    pub fixed: Attr<u32, 1>,
    /// The displacement.
    pub u: Attr<f32, 3>,
    /// The residual.
    pub r: Attr<f32, 3>,
    /// The search direction.
    pub d: Attr<f32, 3>,
    /// The matrix times the direction.
    pub q: Attr<f32, 3>,
}

/// A mesh laid out for the flow: in the unit box (`cavity::normalize`),
/// as a dynamic mesh with the flow's attributes, with the absolute time
/// step (squared units of the unit box).
pub struct FlowMesh {
    /// The map into the unit box.
    pub normalization: Normalization,
    /// The mesh in the unit box.
    pub normalized: TriMesh,
    /// Its dynamic mesh.
    pub dynamic: DynamicMesh,
    /// The flow's attributes on it ([`AttributeSet::declare`]).
    pub attributes: McfAttributes,
    /// `dt` times the squared mean edge length of the unique edges
    /// (`cavity::topology::mean_edge_length`).
    pub dt: f32,
}

impl FlowMesh {
    /// `mesh` laid out in patches of at most `patch_size` faces with
    /// `factors`, the time step `dt` relative to its squared mean edge
    /// length. The topology is built once, for both.
    ///
    /// # Errors
    /// A mesh with a non-finite coordinate or a bad face
    /// ([`TriMesh::validate`]); a patch size out of range or a patch too
    /// large.
    pub fn new(
        mesh: &TriMesh,
        dt: f32,
        patch_size: u32,
        factors: CapacityFactors,
    ) -> Result<FlowMesh, McfError> {
        mesh.validate()?;
        let normalization = Normalization::of(mesh);
        let normalized = normalization.apply(mesh);
        let topology = Topology::new(&normalized);
        let h = mean_edge_length_with(&normalized, &topology);
        let mut layout = AttributeLayout::new();
        let attributes = McfAttributes::declare(&mut layout)?;
        let dynamic = DynamicMesh::with_topology_and_attributes(
            &normalized,
            &topology,
            patch_size,
            factors,
            &layout,
        )?;
        Ok(FlowMesh {
            normalization,
            normalized,
            dynamic,
            attributes,
            dt: (f64::from(dt) * h * h) as f32,
        })
    }
}

/// Starts a step on the mesh `r` holds: marks the fixed vertices and sets
/// the displacement to 0 and the residual of the current positions
/// ([`McfFixed`], [`McfResidual`]).
///
/// # Errors
/// A failed computation ([`RunError`]).
pub fn start_step(r: &mut AnyRounds<'_>, a: &McfAttributes, dt: f32) -> Result<(), RunError> {
    r.for_each(&McfFixed { fixed: a.fixed })?;
    r.for_each(&McfResidual {
        fixed: a.fixed,
        r: a.r,
        u: a.u,
        dt,
    })
}

/// Runs `steps` steps of the flow of time step `dt` (squared units of the
/// positions) on the mesh `r` holds, whose layout declared `a`
/// ([`AttributeSet::declare`]); returns one report per step. Each step marks the fixed
/// vertices (a vertex whose faces lost their area becomes one), computes
/// the residual of the current positions, solves for the displacement and
/// moves the vertices by it.
///
/// # Errors
/// A failed computation or reduction ([`RunError`]).
pub fn flow(
    r: &mut AnyRounds<'_>,
    a: &McfAttributes,
    dt: f32,
    steps: u32,
    tolerance: f32,
    max_iterations: u32,
) -> Result<Vec<StepReport>, RunError> {
    (0..steps)
        .map(|_| {
            start_step(r, a, dt)?;
            let report = solve_step(r, a, dt, tolerance, max_iterations)?;
            r.for_each(&McfMoveBy { by: a.u })?;
            Ok(report)
        })
        .collect()
}

/// The conjugate gradient of one step (Shewchuk 1994, B2, the variable
/// names his) for the displacement `u`, from the fixed marks
/// ([`McfFixed`]) and the state [`McfResidual`] leaves (`u = 0`, the
/// residual `r`; [`start_step`]); the vertices do not move.
/// Stops after `max_iterations`, when the residual's norm falls to
/// `tolerance` times its initial norm, or when the direction's curvature
/// `dᵀ A d` is not positive (rounding on a singular system). The residual
/// is the recurrence's (`r ← r - α q`), not recomputed from `u`.
///
/// # Errors
/// A failed computation or reduction ([`RunError`]).
pub fn solve_step(
    r: &mut AnyRounds<'_>,
    a: &McfAttributes,
    dt: f32,
    tolerance: f32,
    max_iterations: u32,
) -> Result<StepReport, RunError> {
    let start = Instant::now();
    let matvec = |input, output| McfMatVec {
        fixed: a.fixed,
        input,
        output,
        dt,
    };
    // d ← r, and r · r from the same pass.
    let mut delta = r.xpay(&a.r, 0.0, &a.d)?;
    let delta_0 = delta;
    let stop = f64::from(tolerance).powi(2) * delta_0;
    let mut iterations = 0;
    while iterations < max_iterations && delta > stop {
        r.for_each(&matvec(a.d, a.q))?;
        let dq = r.dot(&a.d, &a.q)?;
        if dq.is_nan() || dq <= 0.0 {
            break;
        }
        let alpha = delta / dq;
        r.axpy(alpha, &a.d, &a.u)?;
        let delta_old = delta;
        // The residual's update gives its new norm.
        delta = r.axpy(-alpha, &a.q, &a.r)?;
        r.xpay(&a.r, delta / delta_old, &a.d)?;
        iterations += 1;
    }
    Ok(StepReport {
        iterations,
        residual: if delta_0 > 0.0 {
            (delta / delta_0).sqrt()
        } else {
            0.0
        },
        converged: delta <= stop,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// `mesh` smoothed by [`McfSettings::steps`] steps of implicit mean
/// curvature flow, with the report. The time step is `settings.dt` times
/// the squared mean edge length ([`FlowMesh`]); the flow runs in
/// the unit box (`cavity::normalize`), so its result does not depend on
/// the mesh's scale, and the vertices it keeps in place come back bit for
/// bit. Faces and vertex order are the input's.
///
/// # Errors
/// Settings out of range; a patch size out of range or a patch too large;
/// a failed GPU run.
pub fn smooth(
    mesh: &TriMesh,
    settings: &McfSettings,
    backend: &Backend,
) -> Result<(TriMesh, McfReport), McfError> {
    settings.check()?;
    crate::add_kernels(backend)?;
    let FlowMesh {
        normalization,
        normalized,
        mut dynamic,
        attributes: a,
        dt,
    } = FlowMesh::new(
        mesh,
        settings.dt,
        settings.patch_size,
        CapacityFactors::STATIC,
    )?;
    let ran = backend.run_rounds(
        &mut dynamic,
        |r| -> Result<_, McfError> {
            let steps = flow(
                r,
                &a,
                dt,
                settings.steps,
                settings.tolerance,
                settings.max_iterations,
            )?;
            let fixed = r.sum(&a.fixed)? as usize;
            Ok((steps, fixed))
        },
        McfError::from,
    )?;
    let (smoothed, sources) = dynamic.to_mesh_with_sources();
    let mut moved = TriMesh {
        positions: smoothed.positions,
        faces: Vec::new(),
    };
    normalization.restore_from(&mut moved, &sources, mesh, &normalized);
    let mut out = mesh.clone();
    for (p, &s) in moved.positions.iter().zip(&sources) {
        out.positions[s as usize] = *p;
    }
    let (steps, fixed) = ran.value;
    Ok((
        out,
        McfReport {
            steps,
            dt: f64::from(dt) * normalization.scale * normalization.scale,
            fixed,
            device: ran.device,
        },
    ))
}

//! Mesh smoothing by implicit mean curvature flow (Desbrun et al. 1999) on
//! a backend, the way RXMesh runs it (section 8.1, appendix E): every step
//! solves `(M + dt K) x' = M x` with a matrix-free conjugate gradient
//! (Shewchuk 1994, B2; B3 Jacobi-preconditioned, the default,
//! [`Preconditioner`]), the cotan weights and mixed Voronoi areas
//! recomputed from the positions at every matrix-vector product
//! (`cavity-mcf-kernels`), negative cotangents clamped to 0 by default
//! ([`Laplacian`]: the plain cotan Laplacian, Sharp and Crane's intrinsic
//! mollification and their intrinsic Delaunay Laplacian are the others;
//! the last is flipped on the host, [`intrinsic`], and solved assembled,
//! [`assembled`]). Vertices on a boundary or non-manifold edge stay in
//! place.
//!
//! An application crate on cavity's public model: the per-vertex
//! computations are in `cavity-mcf-kernels`, their PTX this crate's [`PTX`];
//! the conjugate gradient is the host's loop over `for_each`, `dot`,
//! `axpy`, `xpay` and their weighted forms inside `Backend::run_rounds`. [`smooth`] takes a
//! [`TriMesh`] at any scale (it works in the unit box,
//! `cavity::normalize`); [`McfAttributes`] (an `AttributeSet`) and [`flow`] run the flow on a
//! dynamic mesh the caller holds (with other applications' attributes).

pub mod assembled;
pub mod bench;
mod cg;
pub mod intrinsic;

pub use cavity_mcf_kernels::{Corner, McfFixed, McfMatVec, McfMoveBy, McfResidual, Weights};

use std::fmt;
use std::str::FromStr;
use std::time::Instant;

use cavity::attributes::{Attr, AttributeLayout, AttributeSet};
use cavity::backend::AnyRounds;
use cavity::backend::{Backend, PlaceError, PlacedMesh, TopologyOn};
use cavity::computation::ComputationError;
use cavity::dynamic::CapacityFactors;
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
    /// The Laplacian ([`crate::McfSettings::laplacian`]).
    pub const LAPLACIAN: Setting = Setting::new("laplacian", "the Laplacian");
}

/// The largest time step [`McfSettings::dt`] accepts (over the squared
/// mean edge length): it diffuses the positions over about a hundred
/// edges in one step. Beyond it single precision loses the mass matrix
/// beside `dt K` (their ratio nears the precision): on a bumped torus
/// grid the result is 7e-5 of the box from the exact solve at 1e4, 5e-4
/// at 1e5 and 3e-3 at 1e6 (where the closed mesh has shrunk to 2e-5 of
/// its box: the result is noise at its own scale), and from about 1e30
/// on the products overflow. Larger smoothing takes more steps.
pub const MAX_DT: f32 = 1e4;

/// The mollification of [`Laplacian::Mollified`] and
/// [`Laplacian::Intrinsic`]: the length added to every edge, over the
/// mean edge length.
pub const MOLLIFICATION: f32 = 1e-3;

/// The Laplacian of the flow: how the cotan weights and areas of a face
/// are computed ([`Weights`]).
///
/// The default, [`Laplacian::Clamped`], converges on scans and runs
/// entirely on the device: with the Jacobi preconditioner, on the
/// Stanford bunny scan moved to 400 near-zero-area faces and zero-length
/// edges (`apps/mcf/tests`), the plain cotan Laplacian does not converge
/// in 1000 iterations (its weights reach 1e8 of both signs: the system is
/// nearly indefinite in single precision), the clamped one in well under
/// a hundred, and on clean meshes it needs no more iterations than the
/// plain one (`docs/benchmarks.md`). Clamping changes the flow only at
/// obtuse angles, where the cotan weight is negative (the flow of a
/// mesh of non-obtuse triangles is the plain one).
/// [`Laplacian::Intrinsic`] is the most robust and needs the fewest
/// iterations, but its flips and assembly on the host take longer than
/// the clamped solve on the GPU (0.9 s against 0.04 s on 1.28 M faces);
/// on the CPU backend it is the faster.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Laplacian {
    /// The cotan Laplacian of the positions (Pinkall and Polthier 1993;
    /// Desbrun et al. 1999, section 5.3); a face of zero area adds
    /// nothing. Unbounded weights of both signs on near-degenerate faces.
    Cotan,
    /// The cotan Laplacian with every face's negative cotangent clamped to
    /// 0 (after RXMesh's MCF, `apps/MCF/mcf_kernels.cuh`, which clamps an
    /// edge's summed weight; here each face's share, as the matrix-free
    /// product sees an edge's two faces apart): all weights non-negative,
    /// an M-matrix. Areas are the unclamped mixed Voronoi areas.
    #[default]
    Clamped,
    /// Sharp and Crane 2020 ("A Laplacian for Nonmanifold Triangle
    /// Meshes"), section 4.5, intrinsic mollification alone: every edge
    /// lengthened by [`MOLLIFICATION`] times the mean edge length, the
    /// cotangents and areas computed from the lengths, so that a face of
    /// zero area gets bounded weights and a positive area (a vertex with
    /// only such faces moves). Their uniform shift is the largest shortfall
    /// of any face from the margin; with a degenerate face (shortfall the
    /// whole margin) that is the margin itself, which is the shift used
    /// here on every mesh. Without their intrinsic Delaunay flips
    /// ([`Laplacian::Intrinsic`]): negative weights remain.
    Mollified,
    /// Sharp and Crane 2020, sections 4.5-4.6: the cotan Laplacian of the
    /// intrinsic Delaunay triangulation of the mollified edge lengths
    /// (as [`Laplacian::Mollified`]), with its lumped (barycentric) areas:
    /// every interior weight non-negative without changing the surface's
    /// metric (its maximum principle holds), the most robust operator on
    /// scans. Its edges are not the mesh's: every step the host flips
    /// the triangulation of the current positions ([`crate::intrinsic`])
    /// and the backend solves the assembled system
    /// ([`crate::assembled`]); [`smooth`] runs it, [`FlowMesh`] and
    /// [`flow`] (the matrix-free product on patches) do not.
    Intrinsic,
}

impl Laplacian {
    /// Every variant, in the order of their names.
    pub const ALL: [Laplacian; 4] = [
        Laplacian::Cotan,
        Laplacian::Clamped,
        Laplacian::Mollified,
        Laplacian::Intrinsic,
    ];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Laplacian::Cotan => "cotan",
            Laplacian::Clamped => "clamped",
            Laplacian::Mollified => "mollified",
            Laplacian::Intrinsic => "intrinsic",
        }
    }

    /// The patch kernels' variant for a mesh of mean edge length
    /// `mean_edge_length` (model units of the positions the kernels see);
    /// `None` for [`Laplacian::Intrinsic`], which they do not compute.
    pub fn weights(self, mean_edge_length: f32) -> Option<Weights> {
        Some(match self {
            Laplacian::Cotan => Weights::COTAN,
            Laplacian::Clamped => Weights {
                clamp: 1,
                ..Weights::COTAN
            },
            Laplacian::Mollified => Weights {
                mollify: MOLLIFICATION * mean_edge_length,
                ..Weights::COTAN
            },
            Laplacian::Intrinsic => return None,
        })
    }
}

/// The preconditioner of the conjugate gradient.
///
/// The default, [`Preconditioner::Jacobi`], costs one word more per
/// vertex read in two of the vector updates (the product is the plain
/// one), and divides the iterations by two to three on clean meshes (the
/// diagonal of `M + dt K` varies with the faces' sizes) and by far more
/// on scans, where tiny faces give a vertex a tiny mass beside large
/// weights.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Preconditioner {
    /// None: RXMesh's matrix-free conjugate gradient.
    None,
    /// Jacobi (the diagonal `D` of `M + dt K`, recomputed at every step's
    /// start): preconditioned conjugate gradients (Shewchuk 1994, B3),
    /// `D⁻¹` applied in the residual's and the direction's updates (the
    /// core's weighted reductions, `Rounds::weighted_axpy` and
    /// `Rounds::weighted_xpay`); the stopping test is on the
    /// preconditioned residual's norm `rᵀ D⁻¹ r`.
    #[default]
    Jacobi,
}

impl Preconditioner {
    /// Every variant, in the order of their names.
    pub const ALL: [Preconditioner; 2] = [Preconditioner::None, Preconditioner::Jacobi];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Preconditioner::None => "none",
            Preconditioner::Jacobi => "jacobi",
        }
    }
}

/// A name that is no variant: the message lists the variants.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {given:?}: one of {expected}")]
pub struct UnknownName {
    /// What was named ("Laplacian").
    pub what: &'static str,
    /// The name given.
    pub given: String,
    /// The names accepted, comma-separated.
    pub expected: String,
}

macro_rules! named {
    ($t:ty, $what:literal) => {
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }

        impl FromStr for $t {
            type Err = UnknownName;

            fn from_str(s: &str) -> Result<Self, UnknownName> {
                <$t>::ALL
                    .into_iter()
                    .find(|v| v.name() == s)
                    .ok_or_else(|| UnknownName {
                        what: $what,
                        given: s.to_string(),
                        expected: <$t>::ALL.map(|v| v.name()).join(", "),
                    })
            }
        }
    };
}

named!(Laplacian, "Laplacian");
named!(Preconditioner, "preconditioner");

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
    /// The conjugate gradient met a non-finite value (an overflow of
    /// single precision: the time step too large for the mesh).
    #[error(
        "the conjugate gradient of step {step} broke down at iteration {iteration} \
         (a value overflowed single precision): lower the time step"
    )]
    Breakdown {
        /// The step (from 1).
        step: usize,
        /// The iteration (from 0).
        iteration: u32,
    },
}

cavity::computation_error_from!(McfError::Computation);

impl NamesSettings for McfError {
    fn settings(&self) -> Vec<Setting> {
        match self {
            McfError::Computation(e) => e.settings(),
            McfError::Settings(e) => e.settings(),
            McfError::Breakdown { .. } => vec![setting::TIME_STEP],
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
    /// The time step over the squared mean edge length (positive, at most
    /// [`MAX_DT`]): 1 diffuses the positions over about one edge per step.
    pub dt: f32,
    /// The conjugate gradient stops when the residual's norm falls below
    /// this fraction of its norm at the step's start (in `[0, 1)`; 0 runs
    /// `max_iterations`).
    pub tolerance: f32,
    /// Conjugate-gradient iterations per step at most (at least 1).
    pub max_iterations: u32,
    /// Faces per patch at most.
    pub patch_size: u32,
    /// The Laplacian ([`Laplacian::Clamped`] by default: why there).
    pub laplacian: Laplacian,
    /// The preconditioner ([`Preconditioner::Jacobi`] by default).
    pub preconditioner: Preconditioner,
}

impl Default for McfSettings {
    /// One step of `dt = 1`, tolerance `1e-5`, at most 1000 iterations,
    /// patches of 512 faces, the clamped cotan Laplacian, Jacobi
    /// preconditioning.
    fn default() -> Self {
        McfSettings {
            steps: 1,
            dt: 1.0,
            tolerance: 1e-5,
            max_iterations: 1000,
            patch_size: 512,
            laplacian: Laplacian::default(),
            preconditioner: Preconditioner::default(),
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
        if !(self.dt > 0.0 && self.dt <= MAX_DT) {
            return bad(
                setting::TIME_STEP,
                "must be positive and at most 1e4 (squared mean edge lengths; \
                 for more smoothing, take more steps)",
            );
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
    /// start was already the solution; infinite when the solve broke
    /// down): the conjugate gradient's recurrent residual, preconditioned
    /// (`rᵀ D⁻¹ r`) with [`Preconditioner::Jacobi`].
    pub residual: f64,
    /// Whether the residual fell below the tolerance.
    pub converged: bool,
    /// Wall time of the step's solve on the host's clock, seconds (every
    /// iteration waits for its dot product and its residual's norm); with
    /// [`Laplacian::Intrinsic`], the host's flips and assembly too.
    pub seconds: f64,
    /// Intrinsic edge flips made for the step's operator
    /// ([`Laplacian::Intrinsic`]; 0 for the others).
    pub flips: usize,
}

impl StepReport {
    /// Whether the solve met a non-finite value (its residual is then
    /// infinite).
    pub fn broke_down(&self) -> bool {
        self.residual.is_infinite()
    }
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
/// attributes): the fixed marks, the Jacobi preconditioner (the inverse
/// diagonal), the solution `u` (a step's displacement), the residual `r`,
/// the direction `d` and the product `q`.
#[derive(Clone, Copy, Debug, AttributeSet)]
#[attributes(prefix = "mcf", kind = "vertex")]
pub struct McfAttributes {
    /// 1 for a vertex kept in place.
    pub fixed: Attr<u32, 1>,
    /// The inverse of the diagonal of the step's matrix (1 without
    /// preconditioning).
    pub inverse_diagonal: Attr<f32, 1>,
    /// The displacement.
    pub u: Attr<f32, 3>,
    /// The residual.
    pub r: Attr<f32, 3>,
    /// The search direction.
    pub d: Attr<f32, 3>,
    /// The matrix times the direction.
    pub q: Attr<f32, 3>,
}

/// The step's operator as the kernels take it: the absolute time step,
/// the Laplacian's variant and whether to precondition.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Operator {
    /// The time step, squared units of the positions the kernels see.
    pub dt: f32,
    /// The Laplacian's variant ([`Laplacian::weights`]).
    pub weights: Weights,
    /// Jacobi preconditioning ([`Preconditioner::Jacobi`]).
    pub precondition: bool,
}

/// A mesh laid out for the flow: in the unit box (`cavity::normalize`),
/// as a dynamic mesh with the flow's attributes, with the step's operator
/// (in units of the unit box).
pub struct FlowMesh {
    /// The map into the unit box.
    pub normalization: Normalization,
    /// The mesh in the unit box.
    pub normalized: TriMesh,
    /// Its dynamic mesh, placed for the backend's rounds (on the GPU made
    /// on the device and kept there: `Backend::place`).
    pub dynamic: PlacedMesh,
    /// The flow's attributes on it ([`AttributeSet::declare`]).
    pub attributes: McfAttributes,
    /// The operator: `dt` times the squared mean edge length of the
    /// unique edges (`cavity::topology::mean_edge_length`), the
    /// Laplacian's variant at that length.
    pub operator: Operator,
}

impl FlowMesh {
    /// `mesh` laid out in patches of at most `settings.patch_size` faces
    /// (as `backend` patches best: `Backend::place`) with `factors`, the
    /// time step `settings.dt` relative to its squared mean edge length,
    /// with the settings' Laplacian and preconditioner (their other
    /// fields are the flow's, not the mesh's). The topology is built once,
    /// for both.
    ///
    /// # Errors
    /// A mesh with a non-finite coordinate or a bad face
    /// ([`TriMesh::validate`]); a patch size out of range or a patch too
    /// large; a failed launch or copy of the GPU's partition;
    /// [`Laplacian::Intrinsic`] ([`McfError::Settings`]: its edges are not
    /// the patches').
    pub fn new(
        mesh: &TriMesh,
        settings: &McfSettings,
        factors: CapacityFactors,
        backend: &Backend,
    ) -> Result<FlowMesh, McfError> {
        mesh.validate()?;
        let topology = backend.topology_on(mesh)?;
        Self::on_topology(mesh, &topology, settings, factors, backend)
    }

    /// [`FlowMesh::new`] with the topology of `mesh` given
    /// (`Topology::new(mesh)`), for a caller that has it.
    ///
    /// # Errors
    /// As [`FlowMesh::new`].
    pub fn with_topology(
        mesh: &TriMesh,
        topology: &Topology,
        settings: &McfSettings,
        factors: CapacityFactors,
        backend: &Backend,
    ) -> Result<FlowMesh, McfError> {
        mesh.validate()?;
        let topology = TopologyOn::of(backend, topology)?;
        Self::on_topology(mesh, &topology, settings, factors, backend)
    }

    /// [`FlowMesh::with_topology`] with the topology made for `backend`
    /// (`Backend::topology_on`, `TopologyOn::of`), `mesh` validated.
    fn on_topology(
        mesh: &TriMesh,
        topology: &TopologyOn<'_>,
        settings: &McfSettings,
        factors: CapacityFactors,
        backend: &Backend,
    ) -> Result<FlowMesh, McfError> {
        let McfSettings {
            dt,
            laplacian,
            preconditioner,
            patch_size,
            ..
        } = *settings;
        if laplacian == Laplacian::Intrinsic {
            return Err(OutOfRange::new(
                setting::LAPLACIAN,
                "must be one the patches compute: not intrinsic, whose edges are \
                 not the mesh's (smooth runs it)",
            )
            .into());
        }
        let normalization = Normalization::of(mesh);
        let mut layout = AttributeLayout::new();
        let attributes = McfAttributes::declare(&mut layout)?;
        // The host normalizes while the device patches.
        let (dynamic, normalized) = backend
            .place_normalized(
                mesh,
                &normalization,
                topology,
                patch_size,
                (factors, &layout),
            )
            .map_err(PlaceError::into_either::<McfError>)?;
        let h = topology.mean_edge_length(backend, &normalized)?;
        let weights = laplacian
            .weights(h as f32)
            .expect("every Laplacian but the intrinsic has weights");
        Ok(FlowMesh {
            normalization,
            normalized,
            dynamic,
            attributes,
            operator: Operator {
                dt: (f64::from(dt) * h * h) as f32,
                weights,
                precondition: preconditioner == Preconditioner::Jacobi,
            },
        })
    }
}

/// Starts a step on the mesh `r` holds: marks the fixed vertices, sets
/// the Jacobi preconditioner, the displacement to 0 and the residual of the
/// current positions ([`McfFixed`], [`McfResidual`]).
///
/// # Errors
/// A failed computation ([`RunError`]).
pub fn start_step(r: &mut AnyRounds<'_>, a: &McfAttributes, op: &Operator) -> Result<(), RunError> {
    r.for_each(&McfFixed {
        fixed: a.fixed,
        inverse_diagonal: a.inverse_diagonal,
        dt: op.dt,
        weights: op.weights,
        precondition: u32::from(op.precondition),
    })?;
    r.for_each(&McfResidual {
        fixed: a.fixed,
        r: a.r,
        u: a.u,
        dt: op.dt,
        weights: op.weights,
    })
}

/// Runs `steps` steps of the flow of operator `op` on the mesh `r`
/// holds, whose layout declared `a` ([`AttributeSet::declare`]); returns
/// one report per step. Each step marks the fixed vertices (a vertex
/// whose faces lost their area becomes one), computes the residual of the
/// current positions, solves for the displacement and moves the vertices
/// by it.
///
/// # Errors
/// A failed computation or reduction ([`RunError`]).
pub fn flow(
    r: &mut AnyRounds<'_>,
    a: &McfAttributes,
    op: &Operator,
    steps: u32,
    tolerance: f32,
    max_iterations: u32,
) -> Result<Vec<StepReport>, RunError> {
    (0..steps)
        .map(|_| {
            start_step(r, a, op)?;
            let report = solve_step(r, a, op, tolerance, max_iterations)?;
            r.for_each(&McfMoveBy { by: a.u })?;
            Ok(report)
        })
        .collect()
}

/// The conjugate gradient of one step (Shewchuk 1994, B2, or B3 with the
/// Jacobi preconditioner) for the displacement `u`, from the fixed marks
/// and preconditioner ([`McfFixed`]) and the state [`McfResidual`] leaves
/// (`u = 0`, the residual `r`; [`start_step`]); the vertices do not move.
/// Stops after `max_iterations`, when the (preconditioned) residual's norm
/// falls to `tolerance` times its initial norm, or when the direction's
/// curvature `dᵀ A d` is not positive (rounding on a singular system). The
/// residual is the recurrence's (`r ← r - α q`), not recomputed from `u`.
/// A non-finite norm or curvature (an overflow) ends the solve with an
/// infinite residual, not converged ([`StepReport::broke_down`]).
///
/// # Errors
/// A failed computation or reduction ([`RunError`]).
pub fn solve_step(
    r: &mut AnyRounds<'_>,
    a: &McfAttributes,
    op: &Operator,
    tolerance: f32,
    max_iterations: u32,
) -> Result<StepReport, RunError> {
    cg::conjugate_gradient(&mut PatchSteps { r, a, op }, tolerance, max_iterations)
}

/// The conjugate gradient's operations on the patches' attributes: the
/// matrix-free product ([`McfMatVec`]) and the core's reductions, weighted
/// by the inverse diagonal with the Jacobi preconditioner.
struct PatchSteps<'a, 'r> {
    r: &'a mut AnyRounds<'r>,
    a: &'a McfAttributes,
    op: &'a Operator,
}

impl cg::CgSteps for PatchSteps<'_, '_> {
    type Error = RunError;

    fn start(&mut self) -> Result<f64, RunError> {
        let a = self.a;
        if self.op.precondition {
            // δ = rᵀ D⁻¹ r = r · d.
            self.r.weighted_xpay(&a.r, 0.0, &a.d, &a.inverse_diagonal)?;
            self.r.dot(&a.r, &a.d)
        } else {
            // d ← r, and r · r from the same pass.
            self.r.xpay(&a.r, 0.0, &a.d)
        }
    }

    fn product(&mut self) -> Result<f64, RunError> {
        let a = self.a;
        self.r.for_each(&McfMatVec {
            fixed: a.fixed,
            input: a.d,
            output: a.q,
            dt: self.op.dt,
            weights: self.op.weights,
        })?;
        self.r.dot(&a.d, &a.q)
    }

    fn step(&mut self, alpha: f64) -> Result<f64, RunError> {
        let a = self.a;
        self.r.axpy(alpha, &a.d, &a.u)?;
        // The residual's update gives its new (preconditioned) norm.
        if self.op.precondition {
            self.r
                .weighted_axpy(-alpha, &a.q, &a.r, &a.inverse_diagonal)
        } else {
            self.r.axpy(-alpha, &a.q, &a.r)
        }
    }

    fn direction(&mut self, beta: f64) -> Result<(), RunError> {
        let a = self.a;
        if self.op.precondition {
            self.r
                .weighted_xpay(&a.r, beta, &a.d, &a.inverse_diagonal)?;
        } else {
            self.r.xpay(&a.r, beta, &a.d)?;
        }
        Ok(())
    }
}

/// `mesh` smoothed by [`McfSettings::steps`] steps of implicit mean
/// curvature flow, with the report. The time step is `settings.dt` times
/// the squared mean edge length ([`FlowMesh`]); the flow runs in
/// the unit box (`cavity::normalize`), so its result does not depend on
/// the mesh's scale, and the vertices it keeps in place come back bit for
/// bit. Faces and vertex order are the input's. A step that did not
/// converge is reported ([`StepReport::converged`]), not an error. The
/// topology is built where the backend builds it best
/// (`Backend::topology_on`: on the GPU on the device, where the patching
/// reads it).
///
/// # Errors
/// Settings out of range; a mesh with a non-finite coordinate or a bad
/// face ([`TriMesh::validate`]); a patch size out of range or a patch too
/// large; a failed GPU run; a conjugate gradient that broke down
/// ([`McfError::Breakdown`]).
pub fn smooth(
    mesh: &TriMesh,
    settings: &McfSettings,
    backend: &Backend,
) -> Result<(TriMesh, McfReport), McfError> {
    settings.check()?;
    mesh.validate()?;
    smooth_checked(mesh, &backend.topology_on(mesh)?, settings, backend)
}

/// [`smooth`] from the topology of `mesh` made for `backend`
/// (`Backend::topology_on`, `TopologyOn::of`): one that keeps its
/// patches (`TopologyOn::keeping_patches`) places the flow on the patches
/// of an earlier call at the same patch size, so that a resident mesh is
/// patched once.
///
/// # Errors
/// As [`smooth`].
pub fn smooth_on(
    mesh: &TriMesh,
    topology: &TopologyOn<'_>,
    settings: &McfSettings,
    backend: &Backend,
) -> Result<(TriMesh, McfReport), McfError> {
    settings.check()?;
    mesh.validate()?;
    smooth_checked(mesh, topology, settings, backend)
}

/// [`smooth_on`] of a mesh validated with its settings checked.
fn smooth_checked(
    mesh: &TriMesh,
    topology: &TopologyOn<'_>,
    settings: &McfSettings,
    backend: &Backend,
) -> Result<(TriMesh, McfReport), McfError> {
    crate::add_kernels(backend)?;
    // The intrinsic Laplacian, which the patches do not compute, on the
    // host's topology.
    if settings.laplacian == Laplacian::Intrinsic {
        return smooth_intrinsic(mesh, &*topology.host(backend)?, settings, backend);
    }
    let FlowMesh {
        normalization,
        normalized,
        dynamic,
        attributes: a,
        operator,
    } = FlowMesh::on_topology(mesh, topology, settings, CapacityFactors::STATIC, backend)?;
    // Only the positions are read back.
    let driver = |r: &mut AnyRounds<'_>| -> Result<_, McfError> {
        let mut steps = Vec::new();
        for step in 1..=settings.steps as usize {
            let report = flow(
                r,
                &a,
                &operator,
                1,
                settings.tolerance,
                settings.max_iterations,
            )?[0];
            if report.broke_down() {
                return Err(McfError::Breakdown {
                    step,
                    iteration: report.iterations,
                });
            }
            steps.push(report);
        }
        let fixed = r.sum(&a.fixed)? as usize;
        Ok((steps, fixed, r.vertex_positions()?))
    };
    let ran = backend.run_placed_without_mesh(dynamic, driver)?;
    let (steps, fixed, (positions, sources)) = ran.value;
    let out = normalization.moved(mesh, &normalized, positions, &sources);
    let report = McfReport {
        steps,
        dt: f64::from(operator.dt) * normalization.scale * normalization.scale,
        fixed,
        device: ran.device,
    };
    Ok((out, report))
}

/// [`smooth`] with the topology of `mesh` given (`Topology::new(mesh)`),
/// for a caller that has it.
///
/// # Errors
/// As [`smooth`].
pub fn smooth_with(
    mesh: &TriMesh,
    topology: &Topology,
    settings: &McfSettings,
    backend: &Backend,
) -> Result<(TriMesh, McfReport), McfError> {
    settings.check()?;
    mesh.validate()?;
    smooth_checked(mesh, &TopologyOn::of(backend, topology)?, settings, backend)
}

/// [`smooth`] with [`Laplacian::Intrinsic`]: every step flips the
/// intrinsic triangulation of the current positions to Delaunay on the
/// host ([`intrinsic::intrinsic_delaunay_laplacian`]) and solves the
/// assembled system on the backend ([`assembled::StepSystem`]). The
/// fixed vertices are [`McfFixed`]'s (no face, or an edge with other than
/// two faces); with the mollification no face lacks area. `mesh` is
/// validated.
fn smooth_intrinsic(
    mesh: &TriMesh,
    topology: &Topology,
    settings: &McfSettings,
    backend: &Backend,
) -> Result<(TriMesh, McfReport), McfError> {
    let normalization = Normalization::of(mesh);
    let normalized = normalization.apply(mesh);
    let h = mean_edge_length_with(&normalized, topology);
    let dt = f64::from(settings.dt) * h * h;
    let mut fixed: Vec<bool> = (0..normalized.num_vertices() as u32)
        .map(|v| topology.vertex_faces(v).is_empty())
        .collect();
    for (e, [a, b]) in topology.ev.iter().enumerate() {
        if topology.edge_faces(e as u32).len() != 2 {
            fixed[*a as usize] = true;
            fixed[*b as usize] = true;
        }
    }
    let mollify = f64::from(MOLLIFICATION) * h;
    let precondition = settings.preconditioner == Preconditioner::Jacobi;
    let mut positions = normalized.positions.clone();
    let mut steps = Vec::new();
    for step in 1..=settings.steps as usize {
        let start = Instant::now();
        let laplacian =
            intrinsic::intrinsic_delaunay_laplacian(&positions, &normalized.faces, mollify);
        let system =
            assembled::StepSystem::assemble(&laplacian, &positions, &fixed, dt, precondition);
        let (u, mut report) = system.solve(backend, settings.tolerance, settings.max_iterations)?;
        if report.broke_down() {
            return Err(McfError::Breakdown {
                step,
                iteration: report.iterations,
            });
        }
        report.flips = laplacian.flips;
        report.seconds = start.elapsed().as_secs_f64();
        for (&v, u) in system.free.iter().zip(&u) {
            let p = &mut positions[v as usize];
            *p = [0, 1, 2].map(|k| p[k] + u[k]);
        }
        steps.push(report);
    }
    let sources: Vec<u32> = (0..positions.len() as u32).collect();
    let out = normalization.moved(mesh, &normalized, positions, &sources);
    Ok((
        out,
        McfReport {
            steps,
            dt: dt * normalization.scale * normalization.scale,
            fixed: fixed.iter().filter(|&&f| f).count(),
            device: backend.name(),
        },
    ))
}

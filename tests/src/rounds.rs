//! Runs of cavity operations for the tests of the cavity templates and of
//! the applications' operations: sweeps over a dynamic mesh on the test
//! backend ([`test_backend_with`]: the CPU backend's workers racing, or
//! the GPU, with the kernel crates the test binary declares,
//! [`test_kernels!`](crate::test_kernels)), the mesh validated after every
//! round, and a capacity error checked to leave a valid mesh.
//! `TEST_WORKERS` sets the CPU backend's workers (default 4).

use cavity::TriMesh;
use cavity::backend::AnyRounds;
use cavity::backend::cpu::Schedule;
use cavity::dynamic::{CapacityFactors, DynamicMesh};
use cavity::rounds::{RunError, RunReport, sweeps};
use cavity_device::dynamic::update::CavityKernels;

use crate::{test_backend_with, validate_each_round};

/// Room for meshes that grow several times over without slicing.
pub const ROOMY: CapacityFactors = CapacityFactors {
    elements: 8.0,
    patches: 2.0,
};

/// Runs `app` to completion on the test backend (four racing workers on
/// the CPU), validating after every round; returns the report and the
/// result.
pub fn run<A: CavityKernels>(
    input: &TriMesh,
    patch_size: u32,
    app: A,
    manifold: bool,
) -> (RunReport, TriMesh) {
    run_with(input, patch_size, ROOMY, app, manifold)
}

/// [`run`] with the capacity factors `factors`.
pub fn run_with<A: CavityKernels>(
    input: &TriMesh,
    patch_size: u32,
    factors: CapacityFactors,
    app: A,
    manifold: bool,
) -> (RunReport, TriMesh) {
    try_run(input, patch_size, factors, app, manifold).expect("run")
}

/// [`run_with`], returning a capacity error (`RunError::Fatal`) after
/// checking that the mesh it leaves is still valid (out of capacity is an
/// error, never corruption).
pub fn try_run<A: CavityKernels>(
    input: &TriMesh,
    patch_size: u32,
    factors: CapacityFactors,
    app: A,
    manifold: bool,
) -> Result<(RunReport, TriMesh), RunError> {
    try_run_in(Schedule::Racing, input, patch_size, factors, app, manifold)
}

/// [`try_run`] with the CPU backend's rounds in `schedule`.
pub fn try_run_in<A: CavityKernels>(
    schedule: Schedule,
    input: &TriMesh,
    patch_size: u32,
    factors: CapacityFactors,
    app: A,
    manifold: bool,
) -> Result<(RunReport, TriMesh), RunError> {
    let mut check = validate_each_round(manifold);
    with_rounds_in(schedule, input, patch_size, factors, manifold, |r| {
        sweeps(r, &app, false, Some(&mut check))
    })
}

/// The CPU backend's workers: `TEST_WORKERS` (default 4) racing threads.
pub fn workers() -> rayon::ThreadPool {
    let n = std::env::var("TEST_WORKERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4);
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .expect("pool")
}

/// Runs `work` on rounds over `input` on the test backend (four racing
/// workers on the CPU); returns the report and the result, or a capacity
/// error after checking that the mesh is still valid.
pub fn with_rounds<T: Send>(
    input: &TriMesh,
    patch_size: u32,
    factors: CapacityFactors,
    manifold: bool,
    work: impl FnOnce(&mut AnyRounds<'_>) -> Result<T, RunError> + Send,
) -> Result<(T, TriMesh), RunError> {
    with_rounds_in(Schedule::Racing, input, patch_size, factors, manifold, work)
}

/// [`with_rounds`] with the CPU backend's rounds in `schedule`.
pub fn with_rounds_in<T: Send>(
    schedule: Schedule,
    input: &TriMesh,
    patch_size: u32,
    factors: CapacityFactors,
    manifold: bool,
    work: impl FnOnce(&mut AnyRounds<'_>) -> Result<T, RunError> + Send,
) -> Result<(T, TriMesh), RunError> {
    let mut dynamic = DynamicMesh::new(input, patch_size, factors).expect("dynamic mesh");
    let backend = test_backend_with(schedule);
    let result = workers()
        .install(|| backend.run_rounds(&mut dynamic, work, |e| e))
        .map(|ran| ran.value);
    match result {
        Ok(report) => Ok((report, dynamic.to_mesh())),
        Err(e @ RunError::Fatal(..)) => {
            dynamic
                .validate(manifold)
                .expect("valid after a capacity error");
            Err(e)
        }
        Err(e) => panic!("run: {e}"),
    }
}

//! Shared mesh generators and the query checker used by the workspace tests
//! (every query of a backend against the CPU reference mesh), and the runs
//! of cavity operations with the measures their tests assert on, shared by
//! the tests of the templates and of the applications' operations.
//!
//! The backend comes from `CAVITY_TEST_DEVICE` (`cpu` by default, `cuda` on
//! the GPU machine, `cpu-racing` for the CPU backend with racing dynamic
//! rounds): the same test binaries run on all of them.

mod checks;
mod dirt;
mod generators;
mod measures;
mod rounds;
mod skips;

pub use checks::*;
pub use dirt::*;
pub use generators::*;
pub use measures::*;
pub use rounds::*;
pub use skips::*;

use std::collections::HashSet;

use cavity::TriMesh;
use cavity::backend::cpu::{CpuBackend, Schedule};
use cavity::backend::{Backend, BackendError, DeviceChoice};
use cavity::dynamic::DynamicMesh;
use cavity_reference::{MeshStats, ReferenceMesh};

/// Starts a test only the GPU can run (issue 53 item 5). Such a test is
/// marked ignored with the reason "GPU only", so that a run without the
/// GPU reports it as ignored (visibly, not as a pass); this panics unless `CAVITY_TEST_DEVICE` is `cuda`, so that a run
/// that includes it without the GPU fails instead of passing it unrun.
pub fn require_gpu() {
    assert_eq!(
        std::env::var("CAVITY_TEST_DEVICE").as_deref(),
        Ok("cuda"),
        "a GPU-only test: run it with CAVITY_TEST_DEVICE=cuda on a GPU"
    );
}

/// The backend named by `CAVITY_TEST_DEVICE` (default `cpu`), with the
/// tests' kernel crate added (`Backend::add_kernels`: the operations the
/// tests run live in `tests/kernels`, not in the core) and the kernel
/// crates the test binary declares ([`test_kernels!`]; a single test of
/// an application's kernels may add them instead, [`with_kernels`]).
/// Panics when `cuda` is asked for and no GPU is usable, so a GPU run
/// cannot pass on the CPU.
pub fn test_backend() -> Backend {
    let choice: DeviceChoice = std::env::var("CAVITY_TEST_DEVICE")
        .unwrap_or_else(|_| "cpu".into())
        .parse()
        .expect("CAVITY_TEST_DEVICE");
    let backend = Backend::select(choice).expect("backend").0;
    backend
        .add_kernels(TEST_KERNELS_PTX)
        .expect("the kernel crate's PTX loads");
    for kernels in inventory::iter::<TestKernels> {
        (kernels.0)(&backend).expect("a declared kernel crate's PTX loads");
    }
    backend
}

/// An application's `add_kernels`, declared by a test binary with
/// [`test_kernels!`]: [`test_backend`] adds it.
pub struct TestKernels(pub fn(&Backend) -> Result<(), BackendError>);

inventory::collect!(TestKernels);

/// Declares the kernel crates whose cavities a test binary runs through
/// the shared helpers ([`run`], [`with_rounds`], [`test_backend`]), each
/// by its application's `add_kernels`, so that they run on the GPU too
/// (the CPU backend needs nothing):
/// `cavity_tests::test_kernels!(cavity_remesh::add_kernels);` at the top
/// level of the test file.
#[macro_export]
macro_rules! test_kernels {
    ($($add:path),+ $(,)?) => {$(
        $crate::__inventory::submit! { $crate::TestKernels($add) }
    )+};
}

#[doc(hidden)]
pub use inventory as __inventory;

/// `backend` with the kernels that `add` adds (an application's
/// `add_kernels`).
///
/// # Panics
/// When they do not load.
pub fn with_kernels(backend: Backend, add: fn(&Backend) -> Result<(), BackendError>) -> Backend {
    add(&backend).expect("the kernels' PTX loads");
    backend
}

/// [`test_backend`] with dynamic rounds in `schedule` when it is the CPU
/// backend (the GPU's blocks always race): the tests of the concurrent
/// machinery (locks, expansion, slicing) run the racing schedule on the
/// CPU, and the deterministic one as well where a parameter picks it.
pub fn test_backend_with(schedule: Schedule) -> Backend {
    match test_backend() {
        Backend::Cpu(_) => Backend::Cpu(CpuBackend::with_schedule(schedule)),
        gpu => gpu,
    }
}

/// The PTX of the tests' kernel crate (`tests/kernels`, a kernel crate
/// outside the core as a user writes one), built by the build script
/// (empty when the build had no PTX toolchain).
pub const TEST_KERNELS_PTX: &str =
    include_str!(concat!(env!("OUT_DIR"), "/cavity_test_kernels.ptx"));

/// The median length of `mesh`'s edges (1 without edges).
pub fn median_edge_length(mesh: &TriMesh) -> f32 {
    let r = ReferenceMesh::new(mesh).expect("valid");
    let mut lengths: Vec<f32> = (0..r.num_edges() as u32)
        .map(|e| {
            let [a, b] = r.edge_vertices(e).map(|v| mesh.positions[v as usize]);
            ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
        })
        .collect();
    lengths.sort_by(f32::total_cmp);
    lengths.get(lengths.len() / 2).copied().unwrap_or(1.0)
}

/// The bundled real mesh, `assets/dragon.obj`.
pub fn bundled_mesh() -> TriMesh {
    asset_mesh("dragon.obj")
}

/// The mesh `assets/<name>` (see assets/README.md).
pub fn asset_mesh(name: &str) -> TriMesh {
    read_test_mesh(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../assets")
            .join(name),
    )
}

/// The Stanford bunny range scan, `tests/data/scans/StanfordBunny.ply` as
/// it is read (see `tests/data/README.md`: 70 holes, 132 non-manifold
/// edges, 197 non-manifold vertices, angles down to 0.8°).
pub fn bunny_scan() -> TriMesh {
    read_test_mesh(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/scans/StanfordBunny.ply"),
    )
}

/// The mesh at `path`; panics naming the file when it cannot be read.
fn read_test_mesh(path: &std::path::Path) -> TriMesh {
    cavity::io::read_mesh(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .mesh
}

/// Proptest cases: `PROPTEST_CASES` when set (longer runs on the device
/// machine), else `default` (what CI runs).
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// A round hook for `cavity::rounds::sweeps` that runs
/// `DynamicMesh::validate(manifold)` and panics with the round number on
/// the first problem.
pub fn validate_each_round(manifold: bool) -> impl FnMut(&DynamicMesh) {
    let mut rounds = 0;
    move |m: &DynamicMesh| {
        rounds += 1;
        if let Err(e) = m.validate(manifold) {
            panic!("invalid after round {rounds}: {e}");
        }
    }
}

/// Topology that remeshing and tracking keep: Euler characteristic,
/// components, boundary loops and non-manifold elements.
pub fn topology(s: &MeshStats) -> [i64; 4] {
    [
        s.euler_characteristic,
        s.components as i64,
        s.boundary_loops as i64,
        (s.non_manifold_edges + s.non_manifold_vertices) as i64,
    ]
}

/// Whether no directed edge is used twice (consistently oriented).
pub fn oriented(m: &TriMesh) -> bool {
    let mut seen = HashSet::new();
    m.faces
        .iter()
        .all(|f| (0..3).all(|k| seen.insert((f[k], f[(k + 1) % 3]))))
}

/// Smallest face area of `m`.
pub fn smallest_area(m: &TriMesh) -> f64 {
    m.faces
        .iter()
        .map(|t| {
            let p = t.map(|v| glam::DVec3::from(m.positions[v as usize].map(f64::from)));
            0.5 * (p[1] - p[0]).cross(p[2] - p[0]).length()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Runs `work` in a rayon pool of `n` workers (the CPU backend's blocks
/// and the host stages run there).
pub fn on_workers<T: Send>(n: usize, work: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .expect("thread pool")
        .install(work)
}

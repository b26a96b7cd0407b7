//! `cavity bench tet`: every operation of the volumetric core on a mesh,
//! on the GPU, the CPU backend and serially, in one run: the transposes
//! d1, d2 and d3 (the paper's table 3), the relations face-vertices,
//! cell-edges and cell-vertices (table 4), the boundary and ten steps of
//! Laplacian smoothing (table 5), with bytes per cell (table 2). Times are
//! medians of the whole calls after a warm-up (wall clock; on the GPU
//! they include the uploads and downloads of each call: the mesh is not
//! kept on the device between operations yet).

use std::time::Instant;

use cavity::backend::Backend;
use cavity::bench::{gpu_name, median};

use crate::VolumeError;
use crate::boundary::{boundary, boundary_serial, smooth, smooth_serial};
use crate::mesh::VolumeMesh;
use crate::relations::{
    cell_edges, cell_vertices, compose_serial, face_vertices, face_vertices_serial,
};
use crate::transpose;

/// Smoothing steps the benchmark runs.
pub const SMOOTHING_STEPS: u32 = 10;

/// One operation's times, seconds.
#[derive(Clone, Debug)]
pub struct TetRow {
    /// The operation.
    pub operation: &'static str,
    /// On the GPU (none without one).
    pub gpu: Option<f64>,
    /// On the CPU backend.
    pub cpu: f64,
    /// Serially.
    pub serial: f64,
}

/// A benchmark of one mesh.
#[derive(Clone, Debug)]
pub struct TetBench {
    /// The mesh's name.
    pub mesh: String,
    /// Vertices, edges, faces and cells.
    pub counts: [usize; 4],
    /// Bytes of the operators and positions per cell.
    pub bytes_per_cell: f64,
    /// The GPU, in words.
    pub gpu: String,
    /// The CPU backend, in words.
    pub cpu: String,
    /// One row per operation.
    pub rows: Vec<TetRow>,
}

/// The median over `reps` runs of `f` after one warm-up, seconds.
fn time<T>(reps: usize, mut f: impl FnMut() -> Result<T, VolumeError>) -> Result<f64, VolumeError> {
    f()?;
    let mut times = Vec::new();
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        f()?;
        times.push(t.elapsed().as_secs_f64());
    }
    Ok(median(times))
}

/// Runs every operation on `mesh` on `gpu` (when it is the GPU), on `cpu`
/// and serially, `reps` times each.
///
/// # Errors
/// A failed operation on a backend.
pub fn tet_bench(
    name: &str,
    mesh: &VolumeMesh,
    gpu: &Backend,
    cpu: &Backend,
    reps: usize,
    progress: impl Fn(&str),
) -> Result<TetBench, VolumeError> {
    type Op<'a> = Box<dyn Fn(&Backend) -> Result<(), VolumeError> + 'a>;
    type Serial<'a> = Box<dyn Fn() + 'a>;
    let d1 = mesh.d1();
    let operations: Vec<(&'static str, Op<'_>, Serial<'_>)> = vec![
        (
            "d1 = ∂1ᵀ",
            Box::new(|b| transpose(b, &d1).map(drop)),
            Box::new(|| drop(d1.transpose_serial())),
        ),
        (
            "d2 = ∂2ᵀ",
            Box::new(|b| transpose(b, mesh.d2()).map(drop)),
            Box::new(|| drop(mesh.d2().transpose_serial())),
        ),
        (
            "d3 = ∂3ᵀ",
            Box::new(|b| transpose(b, mesh.d3()).map(drop)),
            Box::new(|| drop(mesh.d3().transpose_serial())),
        ),
        (
            "face-vertices",
            Box::new(|b| face_vertices(b, mesh).map(drop)),
            Box::new(|| drop(face_vertices_serial(mesh))),
        ),
        (
            "cell-edges",
            Box::new(|b| cell_edges(b, mesh).map(drop)),
            Box::new(|| drop(compose_serial(mesh.d3(), mesh.d2()))),
        ),
        (
            "cell-vertices",
            Box::new(|b| cell_vertices(b, mesh).map(drop)),
            Box::new(|| drop(compose_serial(mesh.d3(), &face_vertices_serial(mesh)))),
        ),
        (
            "boundary",
            Box::new(|b| boundary(b, mesh).map(drop)),
            Box::new(|| drop(boundary_serial(mesh))),
        ),
        (
            "10 smoothing steps",
            Box::new(|b| smooth(b, mesh, SMOOTHING_STEPS).map(drop)),
            Box::new(|| drop(smooth_serial(mesh, SMOOTHING_STEPS))),
        ),
    ];
    let mut rows = Vec::new();
    for (operation, run, serial) in &operations {
        progress(&format!("{name}: {operation}"));
        let on_gpu = match gpu {
            Backend::Cuda(_) => Some(time(reps, || run(gpu))?),
            Backend::Cpu(_) => None,
        };
        rows.push(TetRow {
            operation,
            gpu: on_gpu,
            cpu: time(reps, || run(cpu))?,
            serial: time(reps, || {
                serial();
                Ok(())
            })?,
        });
    }
    let counts = mesh.counts();
    Ok(TetBench {
        mesh: name.to_string(),
        counts,
        bytes_per_cell: mesh.bytes() as f64 / counts[3].max(1) as f64,
        gpu: gpu_name(gpu),
        cpu: cpu.name(),
        rows,
    })
}

impl TetBench {
    /// The results as a Markdown table with a header line.
    pub fn table(&self) -> String {
        let [v, e, f, c] = self.counts;
        let mut s = format!(
            "{}: {v} vertices, {e} edges, {f} faces, {c} cells, {:.1} bytes per cell; GPU: {}; CPU backend: {}\n\n",
            self.mesh, self.bytes_per_cell, self.gpu, self.cpu
        );
        s += "| operation | GPU ms | CPU backend ms | serial ms | GPU vs CPU backend | GPU vs serial |\n";
        s += "|---|---|---|---|---|---|\n";
        for r in &self.rows {
            let gpu = r.gpu.map_or("-".into(), |g| format!("{:.3}", g * 1e3));
            let ratio = |x: f64| r.gpu.map_or("-".into(), |g| format!("{:.1}x", x / g));
            s += &format!(
                "| {} | {gpu} | {:.3} | {:.3} | {} | {} |\n",
                r.operation,
                r.cpu * 1e3,
                r.serial * 1e3,
                ratio(r.cpu),
                ratio(r.serial)
            );
        }
        s
    }
}

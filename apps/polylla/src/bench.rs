//! `cavity bench polylla`: GPolylla on Delaunay triangulations of random
//! points and of grids, the GPU's kernels alone (CUDA events) and with
//! the copies, the CPU backend running the same kernels, and the
//! sequential version, in one run; medians after a warm-up.

use std::time::Instant;

use cavity::backend::Backend;
use cavity_bench::harness::{Table, fixed};
use cavity_bench::{gpu_name, median};

use crate::PolyllaError;
use crate::device::{Timings, polylla};
use crate::halfedge::HalfEdges;
use crate::sequential::{Polylla, polylla_sequential};

/// One input's times, milliseconds.
#[derive(Clone, Debug)]
pub struct PolyllaRow {
    /// The input, in words.
    pub input: String,
    /// Vertices and triangles.
    pub counts: [usize; 2],
    /// Polygons, barrier tips repaired and barrier edges split.
    pub polygons: [usize; 3],
    /// The GPU's kernels (and the scan), and its whole run with the
    /// copies; none without a GPU.
    pub gpu: Option<[f64; 2]>,
    /// The step times of the GPU's median run.
    pub gpu_steps: Option<Timings>,
    /// The CPU backend's kernels.
    pub cpu: f64,
    /// The sequential version.
    pub sequential: f64,
}

/// The median milliseconds of `reps` runs of GPolylla on `backend` after
/// a warm-up whose result must be `reference`: the kernels, the whole
/// run, and the median run's steps.
fn time_backend(
    backend: &Backend,
    mesh: &HalfEdges,
    reference: &Polylla,
    input: &str,
    reps: usize,
) -> Result<([f64; 2], Timings), PolyllaError> {
    if polylla(backend, mesh)?.0 != *reference {
        return Err(PolyllaError::Input(format!(
            "{input}: the polygons on {} differ from the sequential ones",
            backend.name()
        )));
    }
    let mut runs = Vec::new();
    for _ in 0..reps.max(1) {
        runs.push(polylla(backend, mesh)?.1);
    }
    runs.sort_by(|a, b| a.kernels().total_cmp(&b.kernels()));
    let totals = median(runs.iter().map(Timings::total).collect());
    let mid = runs.swap_remove(runs.len() / 2);
    Ok(([mid.kernels(), totals], mid))
}

/// Times `mesh` (named `input`) on `gpu` (when it is the GPU), on `cpu`
/// and sequentially, checking that they agree.
///
/// # Errors
/// A failed run on a backend; [`PolyllaError::Input`] if the backends'
/// results differ from the sequential one.
pub fn polylla_bench_row(
    input: &str,
    mesh: &HalfEdges,
    gpu: &Backend,
    cpu: &Backend,
    reps: usize,
) -> Result<PolyllaRow, PolyllaError> {
    let reference = polylla_sequential(mesh);
    let mut times = Vec::new();
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        std::hint::black_box(polylla_sequential(mesh));
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let sequential = median(times);
    let (gpu_times, gpu_steps) = match gpu {
        Backend::Cuda(_) => {
            let (t, steps) = time_backend(gpu, mesh, &reference, input, reps)?;
            (Some(t), Some(steps))
        }
        Backend::Cpu(_) => (None, None),
    };
    let (cpu_times, _) = time_backend(cpu, mesh, &reference, input, reps)?;
    Ok(PolyllaRow {
        input: input.to_string(),
        counts: [mesh.positions.len(), mesh.triangles()],
        polygons: [
            reference.polygons.len(),
            reference.repaired,
            reference.bridges,
        ],
        gpu: gpu_times,
        gpu_steps,
        cpu: cpu_times[0],
        sequential,
    })
}

/// The rows as a Markdown table with a header line naming the devices.
pub fn polylla_table(rows: &[PolyllaRow], gpu: &Backend, cpu: &Backend) -> String {
    let devices = format!("GPU: {}; CPU backend: {}", gpu_name(gpu), cpu.name());
    let mut t = Table::new(
        &[&devices],
        &[
            "input",
            "vertices",
            "triangles",
            "polygons",
            "tips repaired",
            "barrier edges split",
            "GPU kernels ms",
            "GPU with copies ms",
            "CPU backend ms",
            "sequential ms",
            "GPU kernels vs sequential",
        ],
    );
    for r in rows {
        let kernels = r.gpu.map(|[k, _]| k);
        t.row(vec![
            r.input.clone(),
            r.counts[0].to_string(),
            r.counts[1].to_string(),
            r.polygons[0].to_string(),
            r.polygons[1].to_string(),
            r.polygons[2].to_string(),
            fixed(kernels, 3),
            fixed(r.gpu.map(|[_, w]| w), 3),
            format!("{:.3}", r.cpu),
            format!("{:.1}", r.sequential),
            kernels.map_or("-".into(), |k| format!("{:.0}x", r.sequential / k)),
        ]);
    }
    let mut s = t.render();
    let largest = rows.iter().max_by_key(|r| r.counts[1]);
    if let Some((r, steps)) = largest.and_then(|r| Some((r, r.gpu_steps.as_ref()?))) {
        s += &format!("\nGPU steps of the largest input ({}), ms:", r.input);
        for (name, ms) in &steps.steps {
            s += &format!(" {name} {ms:.3};");
        }
        s.push('\n');
    }
    s
}

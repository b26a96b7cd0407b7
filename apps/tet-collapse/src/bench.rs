//! `cavity bench tet-simplify` (issue 54 item 8, the peers not yet): one
//! mesh reduced by the length criterion at a fixed target length (a
//! factor of the median edge length, the paper's evaluation in section
//! 4.3) to convergence, by every variant in the same run: the parallel
//! collapse on the GPU with each conflict resolution, on the CPU backend,
//! and the sequential version; with the time (median of the runs after a
//! warm-up, wall clock of the whole call: upload, iterations, download),
//! the iterations, the tetrahedra left and the quality of each output.

use std::time::Instant;

use cavity::backend::Backend;
use cavity_bench::harness::{Table, fixed, speedup};
use cavity_bench::median;

use crate::kernels::criterion::{Length, Placement};
use crate::kernels::iteration::Builtin;
use crate::parallel::collapse_parallel;
use crate::quality::quality;
use crate::sequential::collapse_sequential;
use crate::simplify::median_edge_length;
use crate::{CollapseError, Conflicts, Settings, TetMesh};

/// One variant's run.
#[derive(Clone, Debug)]
pub struct Row {
    /// The variant.
    pub variant: String,
    /// Median seconds of the runs.
    pub seconds: f64,
    /// Iterations.
    pub iterations: usize,
    /// Tetrahedra left.
    pub cells: usize,
    /// The output's smallest dihedral angle (degrees).
    pub min_dihedral: f64,
    /// The output's largest harmonic index (1 = regular).
    pub max_harmonic: f64,
}

/// The benchmark of one mesh.
#[derive(Clone, Debug)]
pub struct TetSimplifyBench {
    /// The mesh's name.
    pub mesh: String,
    /// Its tetrahedra.
    pub cells: usize,
    /// The target length used (model units).
    pub length: f64,
    /// The GPU's name (or the CPU backend's when there is no GPU).
    pub device: String,
    /// The rows: the parallel collapse (two passes, greedy, Gautron) on
    /// `device`, the two passes on the CPU backend, the sequential
    /// version.
    pub rows: Vec<Row>,
}

/// Runs the benchmark of `mesh` (named `name`) on `gpu` and `cpu` with
/// `reps` timed runs each (one for the sequential version) at the target
/// length `factor` times the median edge length; `progress` gets each
/// variant's name as it starts.
///
/// # Errors
/// A failed launch or copy.
pub fn tet_simplify_bench(
    name: &str,
    mesh: &TetMesh,
    gpu: &Backend,
    cpu: &Backend,
    reps: usize,
    factor: f64,
    mut progress: impl FnMut(&str),
) -> Result<TetSimplifyBench, CollapseError> {
    let length = factor * median_edge_length(mesh);
    let criterion = Builtin {
        kind: 0,
        placement: 0,
        bound: length,
    };
    let mut rows = Vec::new();
    let variants = [
        ("two passes", gpu, Conflicts::TwoPass),
        ("greedy", gpu, Conflicts::Greedy),
        ("Gautron", gpu, Conflicts::Gautron),
        ("two passes, CPU backend", cpu, Conflicts::TwoPass),
    ];
    for (variant, backend, conflicts) in variants {
        progress(variant);
        let settings = Settings {
            conflicts,
            ..Settings::default()
        };
        collapse_parallel(backend, mesh, &[], criterion, &settings)?;
        let mut times = Vec::new();
        let mut last = None;
        for _ in 0..reps.max(1) {
            let start = Instant::now();
            let (out, _, report) = collapse_parallel(backend, mesh, &[], criterion, &settings)?;
            times.push(start.elapsed().as_secs_f64());
            last = Some((out, report.iterations.len()));
        }
        let (out, iterations) = last.expect("one run at least");
        rows.push(row(variant, median(times), iterations, &out));
    }
    progress("sequential");
    let start = Instant::now();
    let sequential = Length {
        length,
        placement: Placement::Midpoint,
    };
    let (out, _, iterations) = collapse_sequential(mesh, &[], &sequential, &Settings::default());
    rows.push(row(
        "sequential",
        start.elapsed().as_secs_f64(),
        iterations.len(),
        &out,
    ));
    Ok(TetSimplifyBench {
        mesh: name.to_string(),
        cells: mesh.tets.len(),
        length,
        device: gpu.name(),
        rows,
    })
}

/// The row of a variant's output.
fn row(variant: &str, seconds: f64, iterations: usize, out: &TetMesh) -> Row {
    let q = quality(out, None);
    Row {
        variant: variant.to_string(),
        seconds,
        iterations,
        cells: out.tets.len(),
        min_dihedral: q.min_dihedral,
        max_harmonic: q.max_harmonic,
    }
}

impl TetSimplifyBench {
    /// The Markdown table: each variant's time, iterations, cells left,
    /// quality, and how many times faster the first row (the two passes
    /// on `device`) ran.
    pub fn table(&self) -> String {
        let above = format!(
            "{}: {} tetrahedra, length criterion at L = {:.6} (to convergence); device {}",
            self.mesh, self.cells, self.length, self.device
        );
        let mut t = Table::new(
            &[&above],
            &[
                "variant",
                "seconds",
                "iterations",
                "tetrahedra left",
                "min dihedral (deg)",
                "max harmonic",
                "two passes faster by",
            ],
        );
        let first = self.rows.first().map(|r| r.seconds);
        for r in &self.rows {
            t.row(vec![
                r.variant.clone(),
                fixed(Some(r.seconds), 4),
                r.iterations.to_string(),
                r.cells.to_string(),
                fixed(Some(r.min_dihedral), 2),
                fixed(Some(r.max_harmonic), 2),
                speedup(Some(r.seconds), first),
            ]);
        }
        t.render()
    }
}

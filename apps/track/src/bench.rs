//! The surface-tracking benchmark (`cavity bench track`, dynamic paper
//! section 6.4 and fig. 13): per grid, the same run (frames, time step) on
//! our GPU (median of fresh runs after a short warm-up run) and on the CPU
//! backend (all cores), with the final mesh's statistics against L₀. The
//! time is that of the frames: advection and improvement, the mesh already
//! on the device.

use crate::{TrackHooks, TrackReport, TrackSettings, track};
use cavity::backend::Backend;
use cavity::backend::cpu::CpuBackend;
use cavity_remesh::Layout;

use cavity_bench::median;

/// One grid of the benchmark.
#[derive(Clone, Debug)]
pub struct TrackRow {
    /// The GPU run (the last timed one) and the median seconds.
    pub gpu: Option<(TrackReport, f64)>,
    /// The CPU backend's run.
    pub cpu: Option<TrackReport>,
}

/// The benchmark's rows and devices.
#[derive(Clone, Debug)]
pub struct TrackBench {
    /// GPU name, or a note that none was used.
    pub device: String,
    /// CPU backend description.
    pub cpu: String,
    /// One row per grid.
    pub rows: Vec<TrackRow>,
}

/// Runs the benchmark for every grid side in `grids` with `frames` frames
/// of `dt`: `reps` timed GPU runs when `backend` is the GPU, and one CPU
/// backend run for grids of at most `cpu_max_faces` initial faces.
/// `progress` receives a line per step.
///
/// # Errors
/// A failed run (settings, capacity, GPU).
pub fn track_bench(
    grids: &[u32],
    base: &TrackSettings,
    layout: Layout,
    reps: usize,
    cpu_max_faces: usize,
    backend: &Backend,
    mut progress: impl FnMut(&str),
) -> Result<TrackBench, Box<dyn std::error::Error>> {
    let cpu = Backend::Cpu(CpuBackend::new());
    let mut rows = Vec::new();
    for &grid in grids {
        let settings = TrackSettings { grid, ..*base };
        let mut row = TrackRow {
            gpu: None,
            cpu: None,
        };
        if let Backend::Cuda(_) = backend {
            progress(&format!("grid {grid}: GPU warm-up"));
            let warm_up = TrackSettings {
                frames: base.frames.min(5),
                ..settings
            };
            track(&warm_up, backend, layout, &mut TrackHooks::default())?;
            let mut times = Vec::new();
            let mut last = None;
            for rep in 0..reps.max(1) {
                progress(&format!("grid {grid}: GPU run {}", rep + 1));
                let (_, report) = track(&settings, backend, layout, &mut TrackHooks::default())?;
                times.push(report.seconds);
                last = Some(report);
            }
            row.gpu = last.map(|r| (r, median(times)));
        }
        if 2 * (grid as usize - 1).pow(2) <= cpu_max_faces {
            progress(&format!("grid {grid}: CPU backend"));
            let (_, report) = track(&settings, &cpu, layout, &mut TrackHooks::default())?;
            row.cpu = Some(report);
        }
        rows.push(row);
    }
    Ok(TrackBench {
        device: cavity_bench::gpu_name(backend),
        cpu: cpu.name(),
        rows,
    })
}

impl TrackBench {
    /// The benchmark as Markdown: per grid and run, the time, ms per
    /// frame, the GPU's speedup, the final mesh's statistics against L₀
    /// and bytes per initial face; then the per-step seconds.
    pub fn table(&self) -> String {
        let mut s = format!(
            "GPU: {}; CPU backend: {}\n\n\
             | grid | run | frames | s | ms/frame | GPU speedup | faces in | faces out | min e/L0 | max e/L0 | min angle | B/face |\n\
             |---|---|---|---|---|---|---|---|---|---|---|---|\n",
            self.device, self.cpu
        );
        let mut steps = String::from(
            "\n| grid | run | advect s | split s | flip s | collapse s | smooth s | rounds (split/flip/collapse) |\n\
             |---|---|---|---|---|---|---|---|\n",
        );
        for row in &self.rows {
            let gpu_s = row.gpu.as_ref().map(|g| g.1);
            let runs = row
                .gpu
                .as_ref()
                .map(|(r, t)| ("our GPU", r, *t))
                .into_iter()
                .chain(row.cpu.as_ref().map(|r| ("our CPU backend", r, r.seconds)));
            for (run, r, t) in runs {
                let speedup = gpu_s.map_or("-".into(), |g| format!("{:.1}x", t / g));
                let n = r.settings.grid;
                s += &format!(
                    "| {n}x{n} | {run} | {} | {t:.3} | {:.2} | {speedup} | {} | {} | {:.3} | {:.3} | {:.2} | {:.0} |\n",
                    r.settings.frames,
                    1e3 * t / r.settings.frames.max(1) as f64,
                    r.input.faces,
                    r.output.faces,
                    r.output.min_edge,
                    r.output.max_edge,
                    r.output.min_angle,
                    r.bytes_per_face,
                );
                let [a, b, c, d, e] = r.steps.seconds;
                let [x, y, z] = r.steps.runs.each_ref().map(|q| q.rounds);
                steps += &format!(
                    "| {n}x{n} | {run} | {a:.3} | {b:.3} | {c:.3} | {d:.3} | {e:.3} | {x}/{y}/{z} |\n"
                );
            }
        }
        s + &steps
    }
}

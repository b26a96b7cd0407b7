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

use cavity_bench::harness::{Devices, Table, speedup};
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
    /// The devices it ran on.
    pub devices: Devices,
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
        devices: Devices::of(backend),
        rows,
    })
}

impl TrackBench {
    /// The benchmark as Markdown: per grid and run, the time, ms per
    /// frame, the GPU's speedup, the final mesh's statistics against L₀
    /// and bytes per initial face; then the per-step seconds.
    pub fn table(&self) -> String {
        let mut t = Table::new(
            &[&self.devices.line()],
            &[
                "grid",
                "run",
                "frames",
                "s",
                "ms/frame",
                "GPU speedup",
                "faces in",
                "faces out",
                "min e/L0",
                "max e/L0",
                "min angle",
                "B/face",
            ],
        );
        let mut steps = Table::new(
            &[""],
            &[
                "grid",
                "run",
                "advect s",
                "split s",
                "flip s",
                "collapse s",
                "smooth s",
                "rounds (split/flip/collapse)",
            ],
        );
        for row in &self.rows {
            let gpu_s = row.gpu.as_ref().map(|g| g.1);
            let runs = row
                .gpu
                .as_ref()
                .map(|(r, s)| ("our GPU", r, *s))
                .into_iter()
                .chain(row.cpu.as_ref().map(|r| ("our CPU backend", r, r.seconds)));
            for (run, r, s) in runs {
                let n = r.settings.grid;
                let frames = r.settings.frames;
                t.row(vec![
                    format!("{n}x{n}"),
                    run.to_string(),
                    frames.to_string(),
                    format!("{s:.3}"),
                    format!("{:.2}", 1e3 * s / frames.max(1) as f64),
                    speedup(Some(s), gpu_s),
                    r.input.faces.to_string(),
                    r.output.faces.to_string(),
                    format!("{:.3}", r.output.min_edge),
                    format!("{:.3}", r.output.max_edge),
                    format!("{:.2}", r.output.min_angle),
                    format!("{:.0}", r.bytes_per_face),
                ]);
                let [x, y, z] = r.steps.runs.each_ref().map(|q| q.rounds);
                let mut cells = vec![format!("{n}x{n}"), run.to_string()];
                cells.extend(r.steps.seconds.map(|secs| format!("{secs:.3}")));
                cells.push(format!("{x}/{y}/{z}"));
                steps.row(cells);
            }
        }
        t.render() + &steps.render()
    }
}

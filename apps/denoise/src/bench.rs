//! The denoising benchmark (`cavity bench denoise`, RXMesh section 8.3 and
//! fig. 8c): per mesh, the time of one iteration (normals and `σc`, the
//! filter over every vertex's ring, the move) on our GPU and on the CPU
//! backend, the whole `denoise` call (patching, upload, the iterations,
//! copy back) on the GPU, and the plain serial filter on one thread
//! ([`crate::serial`], the analogue of RXMesh's single-core OpenMesh
//! comparison: no bilateral-denoising library installs as a Python wheel
//! here, see `docs/benchmarks.md`), with the largest neighbourhood.

use std::time::Instant;

use cavity::TriMesh;
use cavity::attributes::{AttributeLayout, AttributeSet};
use cavity::backend::AnyRounds;
use cavity::backend::Backend;
use cavity::backend::cpu::CpuBackend;
use cavity::dynamic::{CapacityFactors, DynamicMesh};
use cavity::normalize::Normalization;
use cavity::rounds::{Rounds, RunError};
use cavity_bench::harness::{Devices, MeshBench, Table, speedup};
use cavity_bench::median;

use crate::{DenoiseAttributes, DenoiseError, DenoiseSettings, denoise, iterate, serial};

/// Settings of [`denoise_bench`].
#[derive(Clone, Debug)]
pub struct DenoiseBenchSettings {
    /// Iterations per timed run.
    pub iterations: u32,
    /// Timed runs (median reported), after one warm-up iteration.
    pub reps: usize,
    /// Largest mesh the CPU backend runs.
    pub cpu_max_faces: usize,
    /// Largest mesh the serial filter runs.
    pub serial_max_faces: usize,
    /// Faces per patch at most.
    pub patch_size: u32,
}

/// One mesh of the benchmark.
#[derive(Clone, Debug)]
pub struct DenoiseRow {
    /// Name of the mesh (and subdivision).
    pub mesh: String,
    /// Faces of the mesh.
    pub faces: usize,
    /// GPU seconds per iteration (median).
    pub gpu: Option<f64>,
    /// The GPU's whole `denoise` call of the benchmark's iterations,
    /// seconds (median).
    pub gpu_denoise: Option<f64>,
    /// CPU backend seconds per iteration.
    pub cpu: Option<f64>,
    /// Serial seconds per iteration.
    pub serial: Option<f64>,
    /// The largest neighbourhood after the timed runs (vertices, the vertex
    /// excluded).
    pub largest_neighbourhood: u32,
    /// Device memory of the dynamic mesh with the denoising's attributes,
    /// bytes per face.
    pub bytes_per_face: f64,
}

/// The benchmark's rows and devices.
#[derive(Clone, Debug)]
pub struct DenoiseBench {
    /// The devices it ran on.
    pub devices: Devices,
    /// The settings in words.
    pub settings: String,
    /// One row per mesh.
    pub rows: Vec<DenoiseRow>,
}

/// Seconds per iteration of `reps` runs of `iterations` iterations each
/// (median), after a warm-up iteration, on the mesh `r` holds (denoised
/// further by each run), and the largest neighbourhood of the last.
fn time_iterations(
    r: &mut AnyRounds<'_>,
    a: &DenoiseAttributes,
    iterations: u32,
    reps: usize,
) -> Result<(f64, u32), RunError> {
    iterate(r, a, u32::MAX)?;
    r.take_count()?;
    let mut times = Vec::new();
    for _ in 0..reps.max(1) {
        let start = Instant::now();
        for _ in 0..iterations {
            iterate(r, a, u32::MAX)?;
        }
        r.take_count()?;
        times.push(start.elapsed().as_secs_f64() / f64::from(iterations));
    }
    Ok((median(times), r.max(&a.size)? as u32))
}

/// Runs the benchmark on `meshes` (name, mesh). `progress` receives a line
/// per step.
///
/// # Errors
/// No iterations ([`DenoiseError::Settings`]), a bad mesh, a failed run
/// (capacity, GPU).
pub fn denoise_bench(
    meshes: &[(String, TriMesh)],
    s: &DenoiseBenchSettings,
    backend: &Backend,
    progress: impl Fn(&str),
) -> Result<DenoiseBench, DenoiseError> {
    let settings = DenoiseSettings {
        iterations: s.iterations,
        patch_size: s.patch_size,
        ..DenoiseSettings::default()
    };
    settings.check()?;
    crate::add_kernels(backend)?;
    let cpu = Backend::Cpu(CpuBackend::new());
    let mut rows = Vec::new();
    for (name, mesh) in meshes {
        mesh.validate()?;
        let normalized = Normalization::of(mesh).apply(mesh);
        let mut layout = AttributeLayout::new();
        let a = DenoiseAttributes::declare(&mut layout)?;
        let laid_out = || {
            DynamicMesh::with_attributes(
                &normalized,
                s.patch_size,
                CapacityFactors::STATIC,
                &layout,
            )
        };
        let mut dynamic = laid_out()?;
        let mut row = DenoiseRow {
            mesh: name.clone(),
            faces: mesh.num_faces(),
            gpu: None,
            gpu_denoise: None,
            cpu: None,
            serial: None,
            largest_neighbourhood: 0,
            bytes_per_face: dynamic.bytes_per_face(),
        };
        if let Backend::Cuda(_) = backend {
            progress(&format!("{name}: GPU iterations"));
            let (seconds, largest) = backend
                .run_rounds(
                    &mut dynamic,
                    |r| time_iterations(r, &a, s.iterations, s.reps).map_err(DenoiseError::from),
                    DenoiseError::from,
                )?
                .value;
            row.gpu = Some(seconds);
            row.largest_neighbourhood = largest;
            progress(&format!("{name}: GPU denoise"));
            let mut times = Vec::new();
            for _ in 0..=s.reps.max(1) {
                let start = Instant::now();
                denoise(mesh, &settings, backend)?;
                times.push(start.elapsed().as_secs_f64());
            }
            times.remove(0);
            row.gpu_denoise = Some(median(times));
        }
        if mesh.num_faces() <= s.cpu_max_faces {
            progress(&format!("{name}: CPU backend"));
            let mut fresh = laid_out()?;
            let (seconds, largest) = cpu
                .run_rounds(
                    &mut fresh,
                    |r| time_iterations(r, &a, s.iterations, 1).map_err(DenoiseError::from),
                    DenoiseError::from,
                )?
                .value;
            row.cpu = Some(seconds);
            row.largest_neighbourhood = row.largest_neighbourhood.max(largest);
        }
        if mesh.num_faces() <= s.serial_max_faces {
            progress(&format!("{name}: serial"));
            let start = Instant::now();
            serial::denoise(&normalized, s.iterations, u32::MAX)
                .expect("a validated mesh has its indices in range");
            row.serial = Some(start.elapsed().as_secs_f64() / f64::from(s.iterations));
        }
        rows.push(row);
    }
    Ok(DenoiseBench {
        devices: Devices::of(backend),
        settings: format!("{s:?}"),
        rows,
    })
}

impl MeshBench for DenoiseBenchSettings {
    fn run(
        &self,
        meshes: &[(String, TriMesh)],
        backend: &Backend,
        progress: &dyn Fn(&str),
    ) -> Result<String, Box<dyn std::error::Error>> {
        Ok(denoise_bench(meshes, self, backend, progress)?.table())
    }
}

impl DenoiseBench {
    /// The benchmark as Markdown: per mesh a row per run (GPU, CPU
    /// backend, serial) with the milliseconds per iteration and the GPU's
    /// speedup over it; then the GPU's whole `denoise` call.
    pub fn table(&self) -> String {
        let devices = format!("{}; {}", self.devices.line(), self.settings);
        let mut t = Table::new(
            &[&devices],
            &[
                "mesh",
                "faces",
                "run",
                "ms / iteration",
                "GPU speedup",
                "largest neighbourhood",
                "B/face",
            ],
        );
        for r in &self.rows {
            for (run, secs) in [
                ("our GPU", r.gpu),
                ("our CPU backend", r.cpu),
                ("serial, 1 thread", r.serial),
            ] {
                let Some(s) = secs else { continue };
                t.row(vec![
                    r.mesh.clone(),
                    r.faces.to_string(),
                    run.to_string(),
                    format!("{:.3}", s * 1e3),
                    speedup(Some(s), r.gpu),
                    r.largest_neighbourhood.to_string(),
                    format!("{:.0}", r.bytes_per_face),
                ]);
            }
        }
        let mut whole = Table::new(
            &[""],
            &[
                "mesh",
                "GPU `denoise` s (patching, upload, iterations, copy back)",
            ],
        );
        for r in &self.rows {
            if let Some(s) = r.gpu_denoise {
                whole.row(vec![r.mesh.clone(), format!("{s:.3}")]);
            }
        }
        t.render() + &whole.render()
    }
}

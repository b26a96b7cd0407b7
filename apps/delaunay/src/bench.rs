//! The Delaunay benchmark (`cavity bench delaunay`, dynamic paper section
//! 6.2 and table 3): per mesh, edge flips until none is left on the GPU
//! (wall-clock median of fresh runs after a warm-up run, the mesh already
//! resident), on the CPU backend (all cores) and by a serial flipper over
//! indexed faces ([`crate::serial`]), all in one run; the rolled
//! back fraction of scheduled patches (fig. 6); and a static query (VV)
//! timed on the patches before and after the flips (the patch-quality
//! cost of table 3).

use cavity::TriMesh;
use cavity::backend::Backend;
use cavity::backend::cpu::CpuRounds;
use cavity::backend::cuda::{CudaBackend, CudaRounds};
use cavity::dynamic::{CapacityFactors, DynamicMesh};
use cavity::patched::PatchedMesh;
use cavity::rounds::Rounds;
use cavity_bench::harness::{Devices, MeshBench, Table, fixed, or_dash, percent, speedup};
use cavity_bench::launch::GpuWorkload;
use cavity_bench::{attribute, median};
use cavity_device::query::Query;

use crate::serial::flip_serial;
use crate::{FlipReport, flip_edges};

/// One mesh of the benchmark.
#[derive(Clone, Debug)]
pub struct DelaunayRow {
    /// Name of the mesh (and subdivision).
    pub mesh: String,
    /// Faces.
    pub faces: usize,
    /// Initial patches.
    pub patches: u32,
    /// Bytes of the dynamic layout per face (capacity included).
    pub bytes_per_face: f64,
    /// The GPU run (the last timed one) and the median seconds.
    pub gpu: Option<(FlipReport, f64)>,
    /// GPU milliseconds of the last run in the update kernel, the
    /// calibration and the compaction.
    pub kernel_ms: Option<[f64; 3]>,
    /// The CPU backend's run.
    pub cpu: Option<FlipReport>,
    /// Serial flips and seconds.
    pub serial: (u64, f64),
    /// VV neighbour-sum median on the patches before and after the flips
    /// (GPU, ms).
    pub vv_ms: Option<(f64, f64)>,
}

/// The benchmark's rows and devices.
#[derive(Clone, Debug)]
pub struct DelaunayBench {
    /// The devices it ran on.
    pub devices: Devices,
    /// One row per mesh.
    pub rows: Vec<DelaunayRow>,
}

/// Settings of [`delaunay`].
#[derive(Clone, Copy, Debug)]
pub struct DelaunaySettings {
    /// Faces per patch when patching.
    pub patch_size: u32,
    /// Capacity factors.
    pub factors: CapacityFactors,
    /// Timed GPU runs (median reported).
    pub reps: usize,
    /// Largest mesh the CPU backend runs (it takes minutes beyond).
    pub cpu_max_faces: usize,
}

/// A GPU run on a copy of `mesh`: the report, the kernel split and the
/// flipped mesh.
type GpuRun = (FlipReport, [f64; 3], DynamicMesh);

fn gpu_run(gpu: &CudaBackend, mesh: &DynamicMesh) -> Result<GpuRun, Box<dyn std::error::Error>> {
    let mut copy = mesh.clone();
    let (report, ms) = {
        let mut r = CudaRounds::new(gpu, &mut copy)?;
        let report = flip_edges(&mut r, None)?;
        r.mesh()?;
        (report, r.seconds().kernels.map(|s| s * 1e3))
    };
    Ok((report, ms, copy))
}

/// VV neighbour-sum median (ms) on `mesh` patched along `face_patch`.
fn vv_ms(
    gpu: &CudaBackend,
    mesh: &TriMesh,
    face_patch: &[u32],
    patch_size: u32,
    reps: usize,
) -> Result<f64, Box<dyn std::error::Error>> {
    let patched = PatchedMesh::with_partition(mesh, face_patch, patch_size)?;
    let workload = GpuWorkload::new(gpu, &patched)?;
    let attr = gpu.upload(&attribute(patched.count(Query::VV.target())))?;
    let mut out = gpu.upload(&vec![0f32; patched.count(Query::VV.source())])?;
    Ok(median(gpu.time(3, reps, || {
        workload.neighbor_sum(Query::VV, &attr, &mut out)
    })?))
}

/// Runs the benchmark on each `(name, mesh)`.
pub fn delaunay(
    meshes: &[(String, TriMesh)],
    settings: DelaunaySettings,
    backend: &Backend,
    progress: impl Fn(&str),
) -> Result<DelaunayBench, Box<dyn std::error::Error>> {
    crate::add_kernels(backend)?;
    let gpu = match backend {
        Backend::Cuda(g) => Some(g.as_ref()),
        Backend::Cpu(_) => None,
    };
    let mut rows = Vec::new();
    for (name, mesh) in meshes {
        progress(&format!("{name}: patching"));
        let dynamic = DynamicMesh::new(mesh, settings.patch_size, settings.factors)?;
        let (_, before_patches) = dynamic.export();
        let mut row = DelaunayRow {
            mesh: name.clone(),
            faces: mesh.num_faces(),
            patches: dynamic.num_patches(),
            bytes_per_face: dynamic.bytes_per_face(),
            gpu: None,
            kernel_ms: None,
            cpu: None,
            serial: (0, 0.0),
            vv_ms: None,
        };
        if let Some(g) = gpu {
            progress(&format!("{name}: GPU"));
            gpu_run(g, &dynamic)?;
            let mut times = Vec::new();
            let mut last = None;
            for _ in 0..settings.reps.max(1) {
                let (report, ms, out) = gpu_run(g, &dynamic)?;
                times.push(report.seconds);
                last = Some((report, ms, out));
            }
            let (report, ms, out) = last.expect("one run");
            row.kernel_ms = Some(ms);
            let (flipped, after_patches) = out.export();
            progress(&format!("{name}: VV before/after"));
            let before = vv_ms(g, mesh, &before_patches, settings.patch_size, 20)?;
            let after = vv_ms(g, &flipped, &after_patches, settings.patch_size, 20)?;
            row.vv_ms = Some((before, after));
            row.gpu = Some((report, median(times)));
        }
        if mesh.num_faces() <= settings.cpu_max_faces {
            progress(&format!("{name}: CPU backend"));
            let mut copy = dynamic.clone();
            let mut r = CpuRounds::new(&mut copy);
            row.cpu = Some(flip_edges(&mut r, None)?);
        }
        progress(&format!("{name}: serial"));
        let mut serial = mesh.clone();
        row.serial = flip_serial(&mut serial);
        rows.push(row);
    }
    Ok(DelaunayBench {
        devices: Devices::of(backend),
        rows,
    })
}

impl MeshBench for DelaunaySettings {
    fn run(
        &self,
        meshes: &[(String, TriMesh)],
        backend: &Backend,
        progress: &dyn Fn(&str),
    ) -> Result<String, Box<dyn std::error::Error>> {
        Ok(delaunay(meshes, *self, backend, progress)?.table())
    }
}

impl DelaunayBench {
    /// The benchmark as a Markdown table with a header naming the devices.
    pub fn table(&self) -> String {
        let mut t = Table::new(
            &[&self.devices.line()],
            &[
                "mesh",
                "faces",
                "patches",
                "B/face",
                "flips GPU",
                "GPU s",
                "flips CPU",
                "CPU backend s",
                "GPU vs CPU",
                "flips serial",
                "serial s",
                "GPU vs serial",
                "rolled back",
                "rounds",
                "update / calibrate / compact ms",
                "VV before ms",
                "VV after ms",
            ],
        );
        for r in &self.rows {
            let gpu_s = r.gpu.as_ref().map(|g| g.1);
            let cpu_s = r.cpu.as_ref().map(|c| c.seconds);
            let gpu = r.gpu.as_ref().map(|g| &g.0);
            t.row(vec![
                r.mesh.clone(),
                r.faces.to_string(),
                r.patches.to_string(),
                format!("{:.1}", r.bytes_per_face),
                or_dash(gpu.map(|g| g.flips)),
                fixed(gpu_s, 3),
                or_dash(r.cpu.as_ref().map(|c| c.flips)),
                fixed(cpu_s, 3),
                speedup(cpu_s, gpu_s),
                r.serial.0.to_string(),
                format!("{:.3}", r.serial.1),
                speedup(Some(r.serial.1), gpu_s),
                percent(gpu.map(|g| g.rollback_fraction())),
                or_dash(gpu.map(|g| g.rounds)),
                r.kernel_ms.map_or("-".into(), |k| {
                    format!("{:.0} / {:.0} / {:.0}", k[0], k[1], k[2])
                }),
                fixed(r.vv_ms.map(|v| v.0), 3),
                fixed(r.vv_ms.map(|v| v.1), 3),
            ]);
        }
        t.render()
    }
}

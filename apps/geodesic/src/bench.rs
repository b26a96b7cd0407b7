//! The geodesic-distance benchmark (`cavity bench geodesic`, the dynamic
//! paper's table 1, RXMesh section 8.2): per mesh, the distance from one
//! source on our GPU and the CPU backend (the whole call: toplesets,
//! patching, upload, propagation, copy back; and the propagation alone),
//! and the CPU peers a user would pick, run by
//! `xtask/peers/geodesic_peers.py` when a Python with them is given:
//! pygeodesic's exact distance (also the ground truth of the accuracy
//! column, on meshes up to a size) and potpourri3d's heat method.

use std::path::{Path, PathBuf};
use std::time::Instant;

use cavity::TriMesh;
use cavity::backend::Backend;
use cavity::backend::cpu::CpuBackend;
use cavity_bench::harness::{Devices, MeshBench, Table, fixed, speedup};
use cavity_bench::{median, peer_line, run_peer_script};

use crate::{GeodesicError, GeodesicReport, GeodesicSettings, geodesic_distance};

/// Settings of [`geodesic_bench`].
#[derive(Clone, Debug)]
pub struct GeodesicBenchSettings {
    /// The source vertex (in range on every mesh).
    pub source: u32,
    /// The propagation's settings.
    pub settings: GeodesicSettings,
    /// Timed GPU runs (median reported), after one warm-up run.
    pub reps: usize,
    /// Largest mesh the CPU backend runs.
    pub cpu_max_faces: usize,
    /// Largest mesh the exact peer runs on (its time grows about as the
    /// faces to the power 1.5).
    pub exact_max_faces: usize,
    /// Python interpreter and peer script
    /// (`xtask/peers/geodesic_peers.py`) when peers are to run.
    pub peers: Option<(PathBuf, PathBuf)>,
}

/// A peer's run, or why it did not run.
#[derive(Clone, Debug, PartialEq)]
pub struct PeerRun {
    /// The peer (and its version).
    pub peer: String,
    /// Its precomputation seconds (0 for none), its seconds per distance
    /// and its mean relative error against the exact distances (when
    /// known), or the error.
    pub result: Result<(f64, f64, Option<f64>), String>,
}

/// One of our runs: the median seconds of the whole call and of the
/// propagation, and the last run's report.
#[derive(Clone, Debug)]
pub struct OurRun {
    /// Seconds of the whole [`geodesic_distance`] call (median).
    pub seconds: f64,
    /// Seconds of its propagation (median).
    pub propagation_seconds: f64,
    /// The last run's report.
    pub report: GeodesicReport,
    /// Mean relative error against the exact distances, when known.
    pub error: Option<f64>,
}

/// One mesh of the benchmark.
#[derive(Clone, Debug)]
pub struct GeodesicRow {
    /// Name of the mesh (and subdivision).
    pub mesh: String,
    /// Faces of the mesh.
    pub faces: usize,
    /// Our GPU.
    pub gpu: Option<OurRun>,
    /// Our CPU backend.
    pub cpu: Option<OurRun>,
    /// The peers' runs.
    pub peers: Vec<PeerRun>,
}

/// The benchmark's rows and devices.
#[derive(Clone, Debug)]
pub struct GeodesicBench {
    /// The devices it ran on.
    pub devices: Devices,
    /// The settings in words.
    pub settings: String,
    /// One row per mesh.
    pub rows: Vec<GeodesicRow>,
}

/// Mean relative error of `d` against `exact` over the vertices at a
/// finite, non-zero exact distance.
pub fn mean_relative_error(d: &[f32], exact: &[f64]) -> f64 {
    let (mut sum, mut n) = (0.0, 0u64);
    for (&got, &want) in d.iter().zip(exact) {
        if want.is_finite() && want > 0.0 {
            sum += (f64::from(got) - want).abs() / want;
            n += 1;
        }
    }
    sum / n.max(1) as f64
}

/// `runs` timed runs (and a warm-up) of the distance from `source`.
fn time_runs(
    mesh: &TriMesh,
    source: u32,
    settings: &GeodesicSettings,
    backend: &Backend,
    runs: usize,
) -> Result<(OurRun, Vec<f32>), GeodesicError> {
    let (mut whole, mut propagation) = (Vec::new(), Vec::new());
    let mut last = geodesic_distance(mesh, &[source], settings, backend)?;
    for _ in 0..runs {
        let start = Instant::now();
        last = geodesic_distance(mesh, &[source], settings, backend)?;
        whole.push(start.elapsed().as_secs_f64());
        propagation.push(last.1.propagation_seconds);
    }
    let (distance, report) = last;
    let run = OurRun {
        seconds: median(whole),
        propagation_seconds: median(propagation),
        report,
        error: None,
    };
    Ok((run, distance))
}

/// Runs the benchmark on `meshes` (name, mesh). `progress` receives a line
/// per step.
///
/// # Errors
/// A source out of range, a failed run (capacity, GPU) or a mesh that
/// cannot be written for the peers.
pub fn geodesic_bench(
    meshes: &[(String, TriMesh)],
    s: &GeodesicBenchSettings,
    backend: &Backend,
    progress: impl Fn(&str),
) -> Result<GeodesicBench, Box<dyn std::error::Error>> {
    s.settings.check()?;
    let cpu = Backend::Cpu(CpuBackend::new());
    let mut rows = Vec::new();
    for (name, mesh) in meshes {
        let mut row = GeodesicRow {
            mesh: name.clone(),
            faces: mesh.num_faces(),
            gpu: None,
            cpu: None,
            peers: Vec::new(),
        };
        let mut ours = Vec::new();
        if let Backend::Cuda(_) = backend {
            progress(&format!("{name}: GPU"));
            let (run, d) = time_runs(mesh, s.source, &s.settings, backend, s.reps.max(1))?;
            row.gpu = Some(run);
            ours = d;
        }
        if mesh.num_faces() <= s.cpu_max_faces {
            progress(&format!("{name}: CPU backend"));
            let (run, d) = time_runs(mesh, s.source, &s.settings, &cpu, 1)?;
            row.cpu = Some(run);
            if ours.is_empty() {
                ours = d;
            }
        }
        if let Some((python, script)) = &s.peers {
            progress(&format!("{name}: peers"));
            let peers = run_peers(python, script, mesh, s)?;
            row.peers = peers.runs;
            if let Some(exact) = peers.exact {
                let error = mean_relative_error(&ours, &exact);
                for run in [&mut row.gpu, &mut row.cpu].into_iter().flatten() {
                    run.error = Some(error);
                }
            }
        }
        rows.push(row);
    }
    Ok(GeodesicBench {
        devices: Devices::of(backend),
        settings: format!("{s:?}"),
        rows,
    })
}

/// What the peer script gave on one mesh.
struct PeerResults {
    /// Its runs.
    runs: Vec<PeerRun>,
    /// The exact distances, when the exact peer ran.
    exact: Option<Vec<f64>>,
}

/// Runs the peer script on `mesh` and parses its JSON lines and the exact
/// distances.
fn run_peers(
    python: &Path,
    script: &Path,
    mesh: &TriMesh,
    s: &GeodesicBenchSettings,
) -> Result<PeerResults, Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let exact_path = dir.path().join("exact.f64");
    let out = run_peer_script(
        python,
        script,
        mesh,
        &[
            "--source".into(),
            s.source.to_string(),
            "--max-exact-faces".into(),
            s.exact_max_faces.to_string(),
            "--exact-out".into(),
            exact_path.display().to_string(),
        ],
    )?;
    let runs = out.runs(script, parse_peer, |e| PeerRun {
        peer: "peers".into(),
        result: Err(e),
    });
    let exact = std::fs::read(&exact_path).ok().map(|bytes| {
        bytes
            .as_chunks::<8>()
            .0
            .iter()
            .map(|b| f64::from_le_bytes(*b))
            .collect::<Vec<f64>>()
    });
    Ok(PeerResults {
        runs,
        exact: exact.filter(|e| e.len() == mesh.num_vertices()),
    })
}

/// One JSON line of the peer script.
fn parse_peer(line: &str) -> Option<PeerRun> {
    let (peer, v) = peer_line(line)?;
    let result = match v["error"].as_str() {
        Some(e) => Err(e.to_string()),
        None => Ok((
            v["precompute"].as_f64().unwrap_or(0.0),
            v["seconds"].as_f64()?,
            v["mean_relative_error"].as_f64(),
        )),
    };
    Some(PeerRun { peer, result })
}

impl MeshBench for GeodesicBenchSettings {
    fn run(
        &self,
        meshes: &[(String, TriMesh)],
        backend: &Backend,
        progress: &dyn Fn(&str),
    ) -> Result<String, Box<dyn std::error::Error>> {
        Ok(geodesic_bench(meshes, self, backend, progress)?.table())
    }
}

impl GeodesicBench {
    /// The benchmark as Markdown: per mesh, a row per run (our GPU's whole
    /// call and its propagation, the CPU backend, each peer) with its
    /// seconds, the GPU's speedup (whole call over whole call), passes,
    /// the mean relative error against the exact distance and the device
    /// memory per face.
    pub fn table(&self) -> String {
        let devices = format!("{}; {}", self.devices.line(), self.settings);
        let mut t = Table::new(
            &[&devices],
            &[
                "mesh",
                "faces",
                "run",
                "s",
                "GPU speedup",
                "passes (band + settling)",
                "mean rel. error vs exact",
                "B/face",
            ],
        );
        for r in &self.rows {
            let gpu = r.gpu.as_ref().map(|g| g.seconds);
            let line =
                |run: &str, secs: f64, passes: String, error: Option<f64>, bpf: Option<f64>| {
                    vec![
                        r.mesh.clone(),
                        r.faces.to_string(),
                        run.to_string(),
                        format!("{secs:.4}"),
                        speedup(Some(secs), gpu),
                        passes,
                        error.map_or("-".into(), |e| format!("{:.3} %", 100.0 * e)),
                        fixed(bpf, 0),
                    ]
                };
            for (label, run) in [("our GPU", &r.gpu), ("our CPU backend", &r.cpu)] {
                if let Some(o) = run {
                    let passes = format!("{} + {}", o.report.passes, o.report.settling_passes);
                    let bpf = Some(o.report.bytes_per_face);
                    let whole = format!("{label} (whole call)");
                    t.row(line(&whole, o.seconds, passes.clone(), o.error, bpf));
                    let propagation = format!("{label} (propagation)");
                    t.row(line(
                        &propagation,
                        o.propagation_seconds,
                        passes,
                        o.error,
                        None,
                    ));
                }
            }
            for p in &r.peers {
                match &p.result {
                    Ok((precompute, secs, error)) => {
                        if *precompute > 0.0 {
                            let label = format!("{} (with precompute)", p.peer);
                            t.row(line(&label, precompute + secs, "-".into(), *error, None));
                        }
                        t.row(line(&p.peer, *secs, "-".into(), *error, None));
                    }
                    Err(e) => t.row_with_note(
                        vec![r.mesh.clone(), r.faces.to_string(), p.peer.clone()],
                        e.to_string(),
                    ),
                }
            }
        }
        t.render()
    }
}

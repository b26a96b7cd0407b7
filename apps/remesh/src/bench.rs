//! The isotropic remeshing benchmark (`cavity bench remesh`, dynamic paper
//! section 6.3 and table 4): per mesh, the same remeshing (target length,
//! iterations) on our GPU (wall-clock median of fresh runs after a warm-up
//! run, upload and copy-back included), on the CPU backend (all cores) and
//! by the CPU remeshers a user would pick instead, run by
//! `xtask/peers/remesh_peers.py` (gpytoolbox's `remesh_botsch`, PyMeshLab's
//! isotropic explicit remeshing, CGAL's `isotropic_remeshing`; the
//! environment variable `CAVITY_PEERS` picks some) when a Python with them
//! is given; with the table-4 statistics of every output.

use std::path::{Path, PathBuf};

use crate::{Hooks, Layout, Quality, RemeshReport, RemeshSettings, mean_edge_length, remesh};
use cavity::TriMesh;
use cavity::backend::cpu::CpuBackend;
use cavity::backend::{Backend, GpuSeconds};

use cavity_bench::harness::{Devices, MeshBench, Table, fixed, percent, speedup};
use cavity_bench::{median, peer_line, run_peer_script};

/// A peer remesher's run: its time and output statistics, or why it did
/// not run.
#[derive(Clone, Debug, PartialEq)]
pub struct PeerRun {
    /// The peer (and its version).
    pub peer: String,
    /// Seconds and the output's statistics, or the error.
    pub result: Result<(f64, Quality), String>,
}

/// One mesh of the benchmark.
#[derive(Clone, Debug)]
pub struct RemeshRow {
    /// Name of the mesh (and subdivision).
    pub mesh: String,
    /// The GPU run (the last timed one) and the median seconds.
    pub gpu: Option<(RemeshReport, f64)>,
    /// The CPU backend's run.
    pub cpu: Option<RemeshReport>,
    /// The peers' runs.
    pub peers: Vec<PeerRun>,
    /// The input's statistics against L.
    pub input: Quality,
    /// L in model units.
    pub length: f64,
}

/// Settings of [`remesh_bench`].
#[derive(Clone, Debug)]
pub struct RemeshBenchSettings {
    /// What to remesh to.
    pub settings: RemeshSettings,
    /// Patch size and capacity factors.
    pub layout: Layout,
    /// Timed GPU runs (median reported).
    pub reps: usize,
    /// Largest mesh the CPU backend runs.
    pub cpu_max_faces: usize,
    /// Python interpreter and peer script (`xtask/peers/remesh_peers.py`)
    /// when peers are to run.
    pub peers: Option<(PathBuf, PathBuf)>,
}

/// The benchmark's rows and devices.
#[derive(Clone, Debug)]
pub struct RemeshBench {
    /// The devices it ran on.
    pub devices: Devices,
    /// The settings in words.
    pub settings: String,
    /// One row per mesh.
    pub rows: Vec<RemeshRow>,
}

/// Runs the benchmark on `meshes` (name, mesh). `progress` receives a line
/// per step.
///
/// # Errors
/// A failed remeshing run (settings, capacity, GPU) or a mesh that cannot
/// be written for the peers.
pub fn remesh_bench(
    meshes: &[(String, TriMesh)],
    s: &RemeshBenchSettings,
    backend: &Backend,
    progress: impl Fn(&str),
) -> Result<RemeshBench, Box<dyn std::error::Error>> {
    let cpu = Backend::Cpu(CpuBackend::new());
    let mut rows = Vec::new();
    for (name, mesh) in meshes {
        let length = s.settings.target(mean_edge_length(mesh));
        let mut row = RemeshRow {
            mesh: name.clone(),
            gpu: None,
            cpu: None,
            peers: Vec::new(),
            input: Quality::of(mesh, length),
            length,
        };
        if let Backend::Cuda(_) = backend {
            progress(&format!("{name}: GPU warm-up"));
            remesh(mesh, &s.settings, backend, s.layout, &mut Hooks::default())?;
            let mut times = Vec::new();
            let mut last = None;
            for rep in 0..s.reps.max(1) {
                progress(&format!("{name}: GPU run {}", rep + 1));
                let (_, report) =
                    remesh(mesh, &s.settings, backend, s.layout, &mut Hooks::default())?;
                times.push(report.seconds);
                last = Some(report);
            }
            row.gpu = last.map(|r| (r, median(times)));
        }
        if mesh.num_faces() <= s.cpu_max_faces {
            progress(&format!("{name}: CPU backend"));
            let (_, report) = remesh(mesh, &s.settings, &cpu, s.layout, &mut Hooks::default())?;
            row.cpu = Some(report);
        }
        if let Some((python, script)) = &s.peers {
            progress(&format!("{name}: peers"));
            row.peers = run_peers(python, script, mesh, length, s.settings.iterations)?;
        }
        rows.push(row);
    }
    Ok(RemeshBench {
        devices: Devices::of(backend),
        settings: format!("{:?}", s.settings),
        rows,
    })
}

/// Runs the peer script on `mesh` (written to a temporary OBJ) and parses
/// its JSON lines.
fn run_peers(
    python: &Path,
    script: &Path,
    mesh: &TriMesh,
    length: f64,
    iterations: u32,
) -> Result<Vec<PeerRun>, Box<dyn std::error::Error>> {
    let out = run_peer_script(
        python,
        script,
        mesh,
        &[
            "--length".into(),
            length.to_string(),
            "--iterations".into(),
            iterations.to_string(),
        ],
    )?;
    Ok(out.runs(script, parse_peer, |e| PeerRun {
        peer: "peers".into(),
        result: Err(e),
    }))
}

/// One JSON line of the peer script.
fn parse_peer(line: &str) -> Option<PeerRun> {
    let (peer, v) = peer_line(line)?;
    if let Some(e) = v["error"].as_str() {
        return Some(PeerRun {
            peer,
            result: Err(e.to_string()),
        });
    }
    let f = |k: &str| v[k].as_f64();
    let u = |k: &str| v[k].as_u64();
    let quality = Quality {
        faces: u("faces")? as usize,
        vertices: 0,
        edges: 0,
        min_edge: f("min_edge")?,
        max_edge: f("max_edge")?,
        mean_edge: 0.0,
        min_valence: u("min_valence")? as u32,
        max_valence: u("max_valence")? as u32,
        mean_valence: f("mean_valence")?,
        min_angle: f("min_angle")?,
        in_band: f("in_band")?,
        min_angle_away: f("min_angle_away").unwrap_or(f64::NAN),
        zero_area: u("zero_area").unwrap_or(0) as usize,
        zero_length: u("zero_length").unwrap_or(0) as usize,
        boundary_loops: u("boundary_loops").unwrap_or(0) as usize,
        euler: v["euler"].as_i64().unwrap_or(0),
    };
    Some(PeerRun {
        peer,
        result: Ok((f("seconds")?, quality)),
    })
}

impl MeshBench for RemeshBenchSettings {
    fn run(
        &self,
        meshes: &[(String, TriMesh)],
        backend: &Backend,
        progress: &dyn Fn(&str),
    ) -> Result<String, Box<dyn std::error::Error>> {
        self.settings.check()?;
        Ok(remesh_bench(meshes, self, backend, progress)?.table())
    }
}

impl RemeshBench {
    /// The benchmark as Markdown: per mesh, a row per run (input, GPU, CPU
    /// backend, each peer) with time, the GPU's speedup over it, and the
    /// table-4 statistics.
    pub fn table(&self) -> String {
        let devices = format!("{}; {}", self.devices.line(), self.settings);
        let mut t = Table::new(
            &[
                &devices,
                "",
                "min angle*: the smallest angle of the faces that touch no sharp boundary corner (face angles summing below 10 degrees) and lie in no component of fewer than 8 faces",
            ],
            &[
                "mesh",
                "run",
                "s",
                "GPU speedup",
                "faces",
                "min e/L",
                "max e/L",
                "min V",
                "max V",
                "mean V",
                "min angle",
                "min angle*",
                "zero-area / zero-length",
                "loops / Euler",
                "in band",
                "B/face",
            ],
        );
        for r in &self.rows {
            let gpu_s = r.gpu.as_ref().map(|g| g.1);
            let line = |run: &str, secs: Option<f64>, q: &Quality, bpf: Option<f64>| {
                vec![
                    r.mesh.clone(),
                    run.to_string(),
                    fixed(secs, 3),
                    speedup(secs, gpu_s),
                    q.faces.to_string(),
                    format!("{:.3}", q.min_edge),
                    format!("{:.3}", q.max_edge),
                    q.min_valence.to_string(),
                    q.max_valence.to_string(),
                    format!("{:.2}", q.mean_valence),
                    format!("{:.2}", q.min_angle),
                    format!("{:.2}", q.min_angle_away),
                    format!("{} / {}", q.zero_area, q.zero_length),
                    format!("{} / {}", q.boundary_loops, q.euler),
                    percent(Some(q.in_band)),
                    fixed(bpf, 0),
                ]
            };
            t.row(line(
                &format!("input (L = {})", cavity::units::significant(r.length, 4)),
                None,
                &r.input,
                None,
            ));
            if let Some((g, secs)) = &r.gpu {
                t.row(line(
                    "our GPU",
                    Some(*secs),
                    &g.output,
                    Some(g.bytes_per_face),
                ));
            }
            if let Some(c) = &r.cpu {
                t.row(line(
                    "our CPU backend",
                    Some(c.seconds),
                    &c.output,
                    Some(c.bytes_per_face),
                ));
            }
            for p in &r.peers {
                match &p.result {
                    Ok((secs, q)) => t.row(line(&p.peer, Some(*secs), q, None)),
                    Err(e) => {
                        let mut cells =
                            vec![r.mesh.clone(), p.peer.clone(), "-".into(), "-".into()];
                        cells.push(e.to_string());
                        cells.resize(16, String::new());
                        t.row(cells);
                    }
                }
            }
        }
        t.render() + &self.phase_table()
    }

    /// Where the GPU's time went, per mesh (its last timed run): seconds
    /// and update rounds of each phase, seconds in the update,
    /// calibration and compaction kernels, and seconds of the upload and
    /// the copy back. Empty without GPU runs.
    fn phase_table(&self) -> String {
        let mut t = Table::new(
            &[""],
            &[
                "mesh",
                "split s (rounds)",
                "collapse s (rounds)",
                "flip s (rounds)",
                "smooth s",
                "update kernel s",
                "calibration s",
                "compaction s",
                "upload s",
                "copy back s",
            ],
        );
        for r in &self.rows {
            let Some((g, _)) = &r.gpu else { continue };
            let p = &g.phases;
            let s = g.gpu_seconds.unwrap_or(GpuSeconds {
                kernels: [f64::NAN; 3],
                upload: f64::NAN,
                copy_back: f64::NAN,
            });
            let mut cells = vec![r.mesh.clone()];
            for (secs, run) in p.seconds.iter().zip(&p.runs) {
                cells.push(format!("{secs:.3} ({})", run.rounds));
            }
            cells.push(format!("{:.3}", p.seconds[3]));
            cells.extend(
                [
                    s.kernels[0],
                    s.kernels[1],
                    s.kernels[2],
                    s.upload,
                    s.copy_back,
                ]
                .map(|x| format!("{x:.3}")),
            );
            t.row(cells);
        }
        if t.is_empty() {
            String::new()
        } else {
            t.render()
        }
    }
}

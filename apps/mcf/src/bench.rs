//! The mean-curvature-flow benchmark (`cavity bench smooth`, RXMesh
//! section 8.1 and fig. 8a; the dynamic paper's table 3): per mesh, the
//! time of one conjugate-gradient iteration (a matrix-vector product with
//! the weights and areas recomputed, a dot product, three vector
//! updates, the residual's returning its norm) on our GPU and on the CPU backend, the whole `smooth` call
//! (patching, upload, one step to the default tolerance, copy back) on the
//! GPU, and the CPU peers a user would pick, run by
//! `xtask/peers/mcf_peers.py` (libigl's `cotmatrix` and `massmatrix` with
//! SciPy's conjugate gradient; `CAVITY_PEERS` picks some) when a Python
//! with them is given. With `delaunay`, the iteration is timed again on
//! the same dynamic mesh after Delaunay edge flips changed it (table 3).

use std::path::{Path, PathBuf};
use std::time::Instant;

use cavity::TriMesh;
use cavity::backend::AnyRounds;
use cavity::backend::Backend;
use cavity::backend::cpu::CpuBackend;
use cavity::dynamic::CapacityFactors;
use cavity::rounds::RunError;
use cavity::settings::OutOfRange;
use cavity_bench::harness::{Devices, MeshBench, Table, fixed, speedup};
use cavity_bench::{median, peer_line, run_peer_script};

use crate::{
    FlowMesh, Laplacian, McfAttributes, McfError, McfSettings, Operator, Preconditioner, smooth,
    solve_step, start_step,
};

/// Settings of [`mcf_bench`].
#[derive(Clone, Debug)]
pub struct McfBenchSettings {
    /// The time step over the squared mean edge length.
    pub dt: f32,
    /// The Laplacian.
    pub laplacian: Laplacian,
    /// The preconditioner.
    pub preconditioner: Preconditioner,
    /// Iterations per timed GPU solve (the tolerance is 0).
    pub iterations: u32,
    /// Iterations per timed CPU-backend solve.
    pub cpu_iterations: u32,
    /// Timed GPU solves (median reported), after one warm-up solve.
    pub reps: usize,
    /// Largest mesh the CPU backend runs.
    pub cpu_max_faces: usize,
    /// Faces per patch at most.
    pub patch_size: u32,
    /// Whether to time the iteration again after Delaunay edge flips on
    /// the same dynamic mesh (which then has room to change: capacity and
    /// patch factors 2).
    pub delaunay: bool,
    /// Python interpreter and peer script (`xtask/peers/mcf_peers.py`)
    /// when peers are to run.
    pub peers: Option<(PathBuf, PathBuf)>,
}

/// A peer's run: its assembly and per-iteration seconds, or why it did
/// not run.
#[derive(Clone, Debug, PartialEq)]
pub struct PeerRun {
    /// The peer (and its version).
    pub peer: String,
    /// Seconds to assemble the matrix and seconds per iteration (all
    /// three coordinates), or the error.
    pub result: Result<(f64, f64), String>,
}

/// One mesh of the benchmark.
#[derive(Clone, Debug)]
pub struct McfRow {
    /// Name of the mesh (and subdivision).
    pub mesh: String,
    /// Faces of the mesh.
    pub faces: usize,
    /// GPU seconds per iteration (median).
    pub gpu: Option<f64>,
    /// GPU seconds per iteration after the Delaunay flips (median) and the
    /// edges flipped.
    pub gpu_after_flips: Option<(f64, u64)>,
    /// The GPU's whole `smooth` call: seconds and CG iterations.
    pub gpu_smooth: Option<(f64, u32)>,
    /// CPU backend seconds per iteration.
    pub cpu: Option<f64>,
    /// The peers' runs.
    pub peers: Vec<PeerRun>,
    /// Device memory of the dynamic mesh with the flow's attributes,
    /// bytes per face.
    pub bytes_per_face: f64,
}

/// The benchmark's rows and devices.
#[derive(Clone, Debug)]
pub struct McfBench {
    /// The devices it ran on.
    pub devices: Devices,
    /// The settings in words.
    pub settings: String,
    /// One row per mesh.
    pub rows: Vec<McfRow>,
}

/// Seconds per iteration of `reps` solves of `iterations` iterations each
/// (median), after a warm-up solve, on the mesh `r` holds.
fn time_iterations(
    r: &mut AnyRounds<'_>,
    a: &McfAttributes,
    op: &Operator,
    iterations: u32,
    reps: usize,
) -> Result<f64, RunError> {
    let mut times = Vec::new();
    for rep in 0..=reps.max(1) {
        start_step(r, a, op)?;
        let start = Instant::now();
        let step = solve_step(r, a, op, 0.0, iterations)?;
        if rep > 0 {
            times.push(start.elapsed().as_secs_f64() / f64::from(step.iterations.max(1)));
        }
    }
    Ok(median(times))
}

/// Runs the benchmark on `meshes` (name, mesh). `progress` receives a line
/// per step.
///
/// # Errors
/// A time step out of range or no iterations ([`McfError::Settings`]), a
/// failed run (capacity, GPU) or a mesh that cannot be written for the
/// peers.
pub fn mcf_bench(
    meshes: &[(String, TriMesh)],
    s: &McfBenchSettings,
    backend: &Backend,
    progress: impl Fn(&str),
) -> Result<McfBench, Box<dyn std::error::Error>> {
    let settings = McfSettings {
        dt: s.dt,
        patch_size: s.patch_size,
        laplacian: s.laplacian,
        preconditioner: s.preconditioner,
        ..McfSettings::default()
    };
    settings.check()?;
    if s.iterations == 0 || s.cpu_iterations == 0 {
        return Err(McfError::from(OutOfRange::new(
            crate::setting::MAX_ITERATIONS,
            "must be at least 1",
        ))
        .into());
    }
    crate::add_kernels(backend)?;
    let cpu = Backend::Cpu(CpuBackend::new());
    let mut rows = Vec::new();
    for (name, mesh) in meshes {
        // The static layout serves the CPU backend, the GPU without flips
        // and the bytes per face; the flips need room to change.
        let FlowMesh {
            normalized,
            dynamic: placed,
            attributes: a,
            operator: op,
            ..
        } = FlowMesh::new(mesh, &settings, CapacityFactors::STATIC, backend)?;
        let mut row = McfRow {
            mesh: name.clone(),
            faces: mesh.num_faces(),
            gpu: None,
            gpu_after_flips: None,
            gpu_smooth: None,
            cpu: None,
            peers: Vec::new(),
            bytes_per_face: placed.bytes_per_face(),
        };
        let mut fixed_layout = placed.into_host(backend)?;
        if let Backend::Cuda(_) = backend {
            progress(&format!("{name}: GPU iterations"));
            let mut grown = if s.delaunay {
                let factors = CapacityFactors::default();
                let flow_mesh = FlowMesh::new(mesh, &settings, factors, backend)?;
                Some(flow_mesh.dynamic.into_host(backend)?)
            } else {
                None
            };
            let (before, after) = backend
                .run_rounds(
                    grown.as_mut().unwrap_or(&mut fixed_layout),
                    |r| -> Result<_, McfError> {
                        let before = time_iterations(r, &a, &op, s.iterations, s.reps)?;
                        if !s.delaunay {
                            return Ok((before, None));
                        }
                        let flips = cavity_delaunay::flip_edges(r, None)?;
                        let after = time_iterations(r, &a, &op, s.iterations, s.reps)?;
                        Ok((before, Some((after, flips.flips))))
                    },
                    McfError::from,
                )?
                .value;
            row.gpu = Some(before);
            row.gpu_after_flips = after;
            progress(&format!("{name}: GPU smooth"));
            smooth(mesh, &settings, backend)?;
            let mut times = Vec::new();
            let mut iterations = 0;
            for _ in 0..s.reps.max(1) {
                let start = Instant::now();
                let (_, report) = smooth(mesh, &settings, backend)?;
                times.push(start.elapsed().as_secs_f64());
                iterations = report.steps[0].iterations;
            }
            row.gpu_smooth = Some((median(times), iterations));
        }
        if mesh.num_faces() <= s.cpu_max_faces {
            progress(&format!("{name}: CPU backend"));
            row.cpu = Some(
                cpu.run_rounds(
                    &mut fixed_layout,
                    |r| time_iterations(r, &a, &op, s.cpu_iterations, 1).map_err(McfError::from),
                    McfError::from,
                )?
                .value,
            );
        }
        if let Some((python, script)) = &s.peers {
            progress(&format!("{name}: peers"));
            row.peers = run_peers(
                python,
                script,
                &normalized,
                f64::from(op.dt),
                s.cpu_iterations,
            )?;
        }
        rows.push(row);
    }
    Ok(McfBench {
        devices: Devices::of(backend),
        settings: format!("{s:?}"),
        rows,
    })
}

/// Runs the peer script on `mesh` (written to a temporary OBJ) and parses
/// its JSON lines.
fn run_peers(
    python: &Path,
    script: &Path,
    mesh: &TriMesh,
    dt: f64,
    iterations: u32,
) -> Result<Vec<PeerRun>, Box<dyn std::error::Error>> {
    let out = run_peer_script(
        python,
        script,
        mesh,
        &[
            "--dt".into(),
            dt.to_string(),
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
    let result = match v["error"].as_str() {
        Some(e) => Err(e.to_string()),
        None => Ok((v["assembly"].as_f64()?, v["per_iteration"].as_f64()?)),
    };
    Some(PeerRun { peer, result })
}

impl MeshBench for McfBenchSettings {
    fn run(
        &self,
        meshes: &[(String, TriMesh)],
        backend: &Backend,
        progress: &dyn Fn(&str),
    ) -> Result<String, Box<dyn std::error::Error>> {
        Ok(mcf_bench(meshes, self, backend, progress)?.table())
    }
}

impl McfBench {
    /// The benchmark as Markdown: per mesh, a row per run (GPU, GPU after
    /// the flips, CPU backend, each peer) with the seconds per iteration
    /// and the GPU's speedup over it; then the GPU's whole `smooth` call.
    pub fn table(&self) -> String {
        let devices = format!("{}; {}", self.devices.line(), self.settings);
        let mut t = Table::new(
            &[&devices],
            &[
                "mesh",
                "faces",
                "run",
                "ms / CG iteration",
                "GPU speedup",
                "assembly s",
                "B/face",
            ],
        );
        for r in &self.rows {
            let line = |run: &str, secs: Option<f64>, assembly: Option<f64>, bpf: Option<f64>| {
                vec![
                    r.mesh.clone(),
                    r.faces.to_string(),
                    run.to_string(),
                    fixed(secs.map(|s| s * 1e3), 3),
                    speedup(secs, r.gpu),
                    fixed(assembly, 3),
                    fixed(bpf, 0),
                ]
            };
            if let Some(g) = r.gpu {
                t.row(line("our GPU", Some(g), None, Some(r.bytes_per_face)));
            }
            if let Some((g, flips)) = r.gpu_after_flips {
                let change = r.gpu.map_or(f64::NAN, |b| 100.0 * (g / b - 1.0));
                let run = format!("our GPU after {flips} Delaunay flips ({change:+.1} %)");
                t.row(line(&run, Some(g), None, None));
            }
            if let Some(c) = r.cpu {
                t.row(line(
                    "our CPU backend",
                    Some(c),
                    None,
                    Some(r.bytes_per_face),
                ));
            }
            for p in &r.peers {
                match &p.result {
                    Ok((assembly, secs)) => {
                        t.row(line(&p.peer, Some(*secs), Some(*assembly), None))
                    }
                    Err(e) => t.row_with_note(
                        vec![r.mesh.clone(), r.faces.to_string(), p.peer.clone()],
                        e.to_string(),
                    ),
                }
            }
        }
        let mut whole = Table::new(
            &[""],
            &[
                "mesh",
                "GPU `smooth` s (patching, upload, 1 step, copy back)",
                "CG iterations",
            ],
        );
        for r in &self.rows {
            if let Some((secs, iterations)) = r.gpu_smooth {
                whole.row(vec![
                    r.mesh.clone(),
                    format!("{secs:.3}"),
                    iterations.to_string(),
                ]);
            }
        }
        t.render() + &whole.render()
    }
}

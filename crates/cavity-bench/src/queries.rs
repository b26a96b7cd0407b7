//! The query benchmark (`cavity bench queries`, `cargo xtask bench queries`):
//! for each first-order query, the neighbour-sum workload through our patch
//! kernels on the GPU, two global-memory baselines on the same GPU (PDE, the
//! Directed Edges baseline of RXMesh section 7, and the query's answer
//! stored as a CSR in input order), and the CPU backend, all in one run.
//! GPU times are CUDA-event medians after warm-up; CPU times are wall-clock
//! medians.

use std::time::Instant;

use cavity_device::query::Query;

use cavity::TriMesh;
use cavity::backend::cpu::CpuBackend;
use cavity::backend::cuda::CudaBackend;
use cavity::backend::{Backend, BackendError};
use cavity::patched::{PatchStats, PatchedMesh};
use cavity::topology::{Topology, transpose3};

use crate::directed_edges::DirectedEdgesMesh;
use crate::launch::{
    DeviceDirectedEdges, GpuWorkload, baseline_pde, baseline_sum, cpu_neighbor_sum,
};
use crate::median;

/// One row of the query benchmark. Times in milliseconds.
#[derive(Clone, Debug)]
pub struct QueryRow {
    /// The query.
    pub query: Query,
    /// Our patch kernel on the GPU (None without a GPU).
    pub gpu_ms: Option<f64>,
    /// The stored-CSR baseline on the GPU.
    pub baseline_ms: Option<f64>,
    /// The PDE (Directed Edges) baseline on the GPU; None without a GPU or
    /// when the mesh is not manifold.
    pub pde_ms: Option<f64>,
    /// The CPU backend on all cores.
    pub cpu_ms: f64,
    /// Largest relative difference between our sums and the baselines'.
    pub max_rel_diff: Option<f64>,
}

/// A whole query benchmark.
#[derive(Clone, Debug)]
pub struct QueryBench {
    /// The GPU's name, or a note that none was used.
    pub device: String,
    /// The CPU backend's description.
    pub cpu: String,
    /// Input faces and vertices.
    pub faces: usize,
    /// Input vertices.
    pub vertices: usize,
    /// Patch statistics.
    pub stats: PatchStats,
    /// Why the PDE baseline did not run, if it did not.
    pub pde_note: Option<String>,
    /// Seconds spent patching.
    pub patch_seconds: f64,
    /// One row per query.
    pub rows: Vec<QueryRow>,
}

/// Deterministic attribute values in `[0, 1)`.
pub fn attribute(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| ((i as u32).wrapping_mul(2_654_435_761) >> 8) as f32 / (1u32 << 24) as f32)
        .collect()
}

/// The query's CSR in input numbering: what the stored-CSR baseline walks.
fn input_csr(mesh: &TriMesh, topo: &Topology, query: Query) -> (Vec<u32>, Vec<u32>) {
    let fixed =
        |rows: Vec<u32>, k: u32| ((0..=(rows.len() as u32 / k)).map(|i| k * i).collect(), rows);
    match query {
        Query::EV => fixed(topo.ev.iter().flatten().copied().collect(), 2),
        Query::FV => fixed(mesh.faces.iter().flatten().copied().collect(), 3),
        Query::FE => fixed(topo.fe.iter().flatten().copied().collect(), 3),
        Query::VF => (topo.vf_offsets.clone(), topo.vf.clone()),
        Query::EF => (topo.ef_offsets.clone(), topo.ef.clone()),
        Query::VE | Query::VV => {
            let pairs: Vec<[u32; 3]> = topo.ev.iter().map(|&[a, b]| [a, b, b]).collect();
            // Transpose EV (third column repeats the second, dropped below).
            let (off, vals) = transpose3(mesh.num_vertices(), &pairs);
            let mut offsets = vec![0u32];
            let mut adj = Vec::new();
            for v in 0..mesh.num_vertices() {
                let mut row: Vec<u32> = vals[off[v] as usize..off[v + 1] as usize].to_vec();
                row.dedup();
                for e in row {
                    let [a, b] = topo.ev[e as usize];
                    adj.push(match query {
                        Query::VE => e,
                        _ => {
                            if a as usize == v {
                                b
                            } else {
                                a
                            }
                        }
                    });
                }
                offsets.push(adj.len() as u32);
            }
            (offsets, adj)
        }
        Query::FF => {
            let mut offsets = vec![0u32];
            let mut adj = Vec::new();
            for (f, edges) in topo.fe.iter().enumerate() {
                let start = adj.len();
                for &e in edges {
                    for &g in topo.edge_faces(e) {
                        if g as usize != f && !adj[start..].contains(&g) {
                            adj.push(g);
                        }
                    }
                }
                offsets.push(adj.len() as u32);
            }
            (offsets, adj)
        }
    }
}

/// Runs the query benchmark on `mesh` with `reps` timed repetitions.
/// Uses the GPU when `backend` is the CUDA backend.
pub fn queries(
    mesh: &TriMesh,
    patch_size: u32,
    backend: &Backend,
    reps: usize,
    mut progress: impl FnMut(&str),
) -> Result<QueryBench, Box<dyn std::error::Error>> {
    progress("patching");
    let t = Instant::now();
    let patched = PatchedMesh::new(mesh, patch_size)?;
    let patch_seconds = t.elapsed().as_secs_f64();
    let topo = Topology::new(mesh);
    let (directed, pde_note) = match DirectedEdgesMesh::new(mesh, &topo) {
        Ok(d) => (Some(d), None),
        Err(e) => (None, Some(format!("PDE baseline skipped: {e}"))),
    };
    let cpu = CpuBackend::new();
    let gpu = match backend {
        Backend::Cuda(c) => Some(c.as_ref()),
        Backend::Cpu(_) => None,
    };
    let resident = match gpu {
        Some(g) => Some(GpuWorkload::new(g, &patched)?),
        None => None,
    };
    let resident_de = match (gpu, &directed) {
        (Some(g), Some(d)) => Some(DeviceDirectedEdges::upload(g, d)?),
        _ => None,
    };
    let mut rows = Vec::new();
    for query in Query::ALL {
        progress(query.name());
        let tgt = query.target();
        let attr = attribute(patched.count(tgt));
        let n = patched.count(query.source());
        let mut out = vec![0f32; n];
        cpu_neighbor_sum(&cpu, &patched, query, &attr, &mut out);
        let cpu_ms = median(
            (0..reps)
                .map(|_| {
                    let t = Instant::now();
                    cpu_neighbor_sum(&cpu, &patched, query, &attr, &mut out);
                    t.elapsed().as_secs_f64() * 1e3
                })
                .collect(),
        );
        let (gpu_ms, baseline_ms, pde_ms, max_rel_diff) = match (gpu, &resident) {
            (Some(g), Some(workload)) => {
                let inputs = GpuInputs {
                    patched: &patched,
                    workload,
                    de: resident_de.as_ref(),
                    mesh,
                    topo: &topo,
                };
                let t = gpu_times(g, &inputs, query, &attr, reps)?;
                (Some(t.ours), Some(t.csr), t.pde, Some(t.max_rel_diff))
            }
            _ => (None, None, None, None),
        };
        rows.push(QueryRow {
            query,
            gpu_ms,
            baseline_ms,
            pde_ms,
            cpu_ms,
            max_rel_diff,
        });
    }
    Ok(QueryBench {
        device: gpu
            .map(|g| g.name())
            .unwrap_or_else(|| "no GPU used".into()),
        cpu: cpu.name(),
        faces: mesh.num_faces(),
        vertices: mesh.num_vertices(),
        stats: patched.stats(),
        pde_note,
        patch_seconds,
        rows,
    })
}

/// What the GPU side of one benchmark row reads.
struct GpuInputs<'a> {
    patched: &'a PatchedMesh,
    workload: &'a GpuWorkload<'a>,
    de: Option<&'a DeviceDirectedEdges>,
    mesh: &'a TriMesh,
    topo: &'a Topology,
}

/// GPU medians of one query (ms) and the largest relative difference of
/// the baselines' sums from ours.
struct GpuTimes {
    ours: f64,
    csr: f64,
    pde: Option<f64>,
    max_rel_diff: f64,
}

/// Times our kernel and the baselines on the GPU for one query and compares
/// their outputs.
fn gpu_times(
    g: &CudaBackend,
    inp: &GpuInputs,
    query: Query,
    attr: &[f32],
    reps: usize,
) -> Result<GpuTimes, BackendError> {
    let (src, tgt) = (query.source(), query.target());
    let n = inp.patched.count(src);
    let d_attr = g.upload(attr)?;
    let mut d_out = g.upload(&vec![0f32; n])?;
    let ours = median(g.time(3, reps, || {
        inp.workload.neighbor_sum(query, &d_attr, &mut d_out)
    })?);
    let ours_out = g.download(&d_out, n)?;

    let (offsets, adj) = input_csr(inp.mesh, inp.topo, query);
    let handle = inp.patched.to_handle(tgt);
    let attr_input: Vec<f32> = (0..attr.len()).map(|i| attr[handle[i] as usize]).collect();
    let (d_off, d_adj, d_ai) = (g.upload(&offsets)?, g.upload(&adj)?, g.upload(&attr_input)?);
    let mut d_bout = g.upload(&vec![0f32; n])?;
    let csr = median(g.time(3, reps, || {
        baseline_sum(g, n as u32, &d_off, &d_adj, &d_ai, &mut d_bout)
    })?);
    let to_in = inp.patched.to_input(src);
    let diff = |base_out: &[f32]| {
        (0..n)
            .map(|h| {
                let (a, b) = (ours_out[h] as f64, base_out[to_in[h] as usize] as f64);
                (a - b).abs() / b.abs().max(1.0)
            })
            .fold(0.0, f64::max)
    };
    let mut max_rel_diff = diff(&g.download(&d_bout, n)?);
    let pde = match inp.de {
        Some(de) => {
            let mut d_pout = g.upload(&vec![0f32; n])?;
            let t = median(g.time(3, reps, || {
                baseline_pde(g, query, n as u32, de, &d_ai, &mut d_pout)
            })?);
            max_rel_diff = max_rel_diff.max(diff(&g.download(&d_pout, n)?));
            Some(t)
        }
        None => None,
    };
    Ok(GpuTimes {
        ours,
        csr,
        pde,
        max_rel_diff,
    })
}

impl QueryBench {
    /// The benchmark as a Markdown table with a header naming the device.
    pub fn table(&self) -> String {
        let mut s = format!(
            "mesh: {} faces, {} vertices; {} patches (faces/patch min {} mean {:.1} max {}), ribbon ratio {:.3}, {:.2} bytes/face, patching {:.2} s\n\
             GPU: {}; CPU: {}{}\n\n\
             | query | ours GPU (ms) | PDE GPU (ms) | stored-CSR GPU (ms) | CPU backend (ms) | PDE/ours | CSR/ours | CPU/ours | max rel. diff |\n\
             |---|---|---|---|---|---|---|---|---|\n",
            self.faces,
            self.vertices,
            self.stats.patches,
            self.stats.min_faces,
            self.stats.mean_faces,
            self.stats.max_faces,
            self.stats.ribbon_ratio,
            self.stats.bytes_per_face,
            self.patch_seconds,
            self.device,
            self.cpu,
            self.pde_note
                .as_ref()
                .map(|n| format!("; {n}"))
                .unwrap_or_default()
        );
        let opt = |x: Option<f64>| x.map(|v| format!("{v:.3}")).unwrap_or_else(|| "-".into());
        for r in &self.rows {
            let ratio = |a: Option<f64>| match (a, r.gpu_ms) {
                (Some(a), Some(o)) if o > 0.0 => format!("{:.2}x", a / o),
                _ => "-".into(),
            };
            s += &format!(
                "| {} | {} | {} | {} | {:.3} | {} | {} | {} | {} |\n",
                r.query.name(),
                opt(r.gpu_ms),
                opt(r.pde_ms),
                opt(r.baseline_ms),
                r.cpu_ms,
                ratio(r.pde_ms),
                ratio(r.baseline_ms),
                ratio(Some(r.cpu_ms)),
                r.max_rel_diff
                    .map(|d| format!("{d:.1e}"))
                    .unwrap_or_else(|| "-".into())
            );
        }
        s
    }
}

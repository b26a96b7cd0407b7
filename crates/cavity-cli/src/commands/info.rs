//! `cavity info`: counts, topology defects and patch statistics, each
//! taken where the device works: on the GPU the topology is built, the
//! mesh surveyed and the patches built there (counts, the boundary edges
//! and the patches' headers come back); on the CPU backend by the host's
//! parallel passes.

use cavity::TriMesh;
use cavity::backend::cpu::CpuBackend;
use cavity::backend::{Backend, TopologyOn};
use cavity::defects::Defects;
use cavity::stats::{MeshStats, topology_stats_with};
use std::path::Path;

use crate::Result;
use crate::args::Device;
use crate::input::{check_input, load};
use crate::output::{sayln, spinner};
use crate::stages::Clock;

/// Under `--device auto`, an input file smaller than this many bytes
/// (about a million faces) is patched on the host: there the GPU's start
/// (about 0.2 s) costs more than it saves (at 100 k faces the host
/// patches in 0.02 s; at 6.39 M faces in 1.0 s, the GPU in 0.15 s).
const GPU_FROM_BYTES: u64 = 32 << 20;

pub(crate) fn info(path: Option<&Path>, patch_size: u32, device: Device) -> Result<()> {
    let mut clock = Clock::start();
    if let Some(path) = path {
        check_input(path)?;
    }
    let large = path
        .and_then(|p| std::fs::metadata(p).ok())
        .is_some_and(|m| m.len() >= GPU_FROM_BYTES);
    let (mesh, backend) = if matches!(device, Device::Auto) && !large {
        eprintln!(
            "patching on the host: the input is under {} MiB, where the GPU's start costs more than it saves (--device cuda patches on the GPU)",
            GPU_FROM_BYTES >> 20
        );
        let mesh = load(path)?;
        clock.host("read");
        (mesh, Backend::Cpu(CpuBackend::new()))
    } else {
        // The mesh is read while the device starts.
        super::read_and_start(|| load(path), device, &mut clock)?
    };
    let (s, d, topology) = analysed(&mesh, &backend)?;
    clock.device("topology and defects", &backend);
    sayln!("vertices: {}", s.vertices);
    sayln!("edges: {}", s.edges);
    sayln!("faces: {}", s.faces);
    sayln!("euler characteristic: {}", s.euler_characteristic);
    sayln!("components: {}", s.components);
    sayln!("isolated vertices: {}", s.isolated_vertices);
    sayln!("boundary edges: {}", s.boundary_edges);
    sayln!("boundary loops: {}", s.boundary_loops);
    sayln!("non-manifold edges: {}", s.non_manifold_edges);
    sayln!("non-manifold vertices: {}", s.non_manifold_vertices);
    sayln!("duplicate faces: {}", d.duplicate_faces);
    sayln!("zero-area faces: {}", d.zero_area_faces);
    sayln!("zero-length edges: {}", d.zero_length_edges);
    sayln!("coincident vertices: {}", d.coincident_vertices);
    let pb = spinner();
    pb.set_message("patching");
    // Only the patches' headers come back from the GPU.
    let patched = backend.patch_summary(&mesh, &topology, patch_size)?;
    let seconds = clock.device("patching", &backend);
    clock.read_peak(&backend);
    pb.finish_and_clear();
    let p = &patched.stats;
    sayln!("patch size limit: {patch_size}");
    sayln!(
        "patches: {} (Lloyd iterations: {}, {:.3} s)",
        p.patches,
        patched.lloyd_iterations,
        seconds
    );
    sayln!(
        "faces per patch: min {} mean {:.1} max {}",
        p.min_faces,
        p.mean_faces,
        p.max_faces
    );
    sayln!("ribbon ratio: {:.3}", p.ribbon_ratio);
    sayln!(
        "patch data: {} bytes, {:.2} bytes/face",
        patched.patch_bytes,
        p.bytes_per_face
    );
    sayln!("{}", clock.line());
    Ok(())
}

/// The topology statistics and defects of `mesh` and its topology made for
/// `backend`: on the GPU surveyed there (`Backend::survey_defects`, the
/// coincident vertices sorted on the host meanwhile), on the CPU backend
/// by the host's parallel passes.
fn analysed(
    mesh: &TriMesh,
    backend: &Backend,
) -> Result<(MeshStats, Defects, TopologyOn<'static>)> {
    if let Backend::Cpu(_) = backend {
        let topology = backend.topology_on(mesh)?;
        let host = topology.host(backend)?;
        let stats = topology_stats_with(mesh, &host);
        let defects = Defects::with_topology(mesh, &host);
        drop(host);
        return Ok((stats, defects, topology));
    }
    let (survey, defects) = backend.survey_defects(mesh)?;
    let stats = survey.stats().clone();
    Ok((stats, defects, survey.into_topology()))
}

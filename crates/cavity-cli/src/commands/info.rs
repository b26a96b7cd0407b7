//! `cavity info`: counts, topology defects and patch statistics (the
//! patches as the device patches: on the GPU when there is one).

use cavity::defects::Defects;
use cavity::stats::topology_stats_with;
use cavity::topology::Topology;
use std::path::Path;
use std::time::Instant;

use crate::Result;
use crate::args::Device;
use crate::input::{check_input, load};
use crate::output::{sayln, spinner};
use crate::stages::Clock;

pub(crate) fn info(path: Option<&Path>, patch_size: u32, device: Device) -> Result<()> {
    let mut clock = Clock::start();
    if let Some(path) = path {
        check_input(path)?;
    }
    // The mesh is read and analysed while the device starts.
    let analysed = || -> Result<_> {
        let reading = Instant::now();
        let mesh = load(path)?;
        let read = reading.elapsed().as_secs_f64();
        let analysing = Instant::now();
        let topology = Topology::new(&mesh);
        let s = topology_stats_with(&mesh, &topology);
        let d = Defects::with_topology(&mesh, &topology);
        let stages = vec![
            ("read", read),
            ("topology and defects", analysing.elapsed().as_secs_f64()),
        ];
        Ok(((mesh, topology, s, d), stages))
    };
    let ((mesh, topology, s, d), backend) = super::stages_and_start(analysed, device, &mut clock)?;
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
    let patched = backend.patched(&mesh, &topology, patch_size)?;
    let seconds = clock.device("patching", &backend);
    clock.read_peak(&backend);
    pb.finish_and_clear();
    let p = patched.stats();
    sayln!("patch size limit: {patch_size}");
    sayln!(
        "patches: {} (Lloyd iterations: {}, {:.3} s)",
        p.patches,
        patched.lloyd_iterations(),
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
        patched.patch_bytes(),
        p.bytes_per_face
    );
    sayln!("{}", clock.line());
    Ok(())
}

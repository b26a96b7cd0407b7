//! `cavity info`: counts, topology defects and patch statistics.

use std::path::Path;
use std::time::Instant;

use cavity::PatchedMesh;
use cavity::defects::Defects;
use cavity::stats::topology_stats_with;
use cavity::topology::Topology;

use crate::Result;
use crate::input::load;
use crate::output::{sayln, spinner};

pub(crate) fn info(path: Option<&Path>, patch_size: u32) -> Result<()> {
    let mesh = load(path)?;
    let topology = Topology::new(&mesh);
    let s = topology_stats_with(&mesh, &topology);
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
    let d = Defects::with_topology(&mesh, &topology);
    sayln!("duplicate faces: {}", d.duplicate_faces);
    sayln!("zero-area faces: {}", d.zero_area_faces);
    sayln!("zero-length edges: {}", d.zero_length_edges);
    sayln!("coincident vertices: {}", d.coincident_vertices);
    let pb = spinner();
    pb.set_message("patching");
    let t = Instant::now();
    let patched = PatchedMesh::with_topology(&mesh, &topology, patch_size)?;
    pb.finish_and_clear();
    let p = patched.stats();
    sayln!("patch size limit: {patch_size}");
    sayln!(
        "patches: {} (Lloyd iterations: {}, {:.3} s)",
        p.patches,
        patched.lloyd_iterations(),
        t.elapsed().as_secs_f64()
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
    Ok(())
}

use cavity::dynamic::{CapacityFactors, DynamicMesh};
use std::time::Instant;
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let mesh = cavity::io::read_mesh(path.as_ref()).unwrap().mesh;
    let topo = cavity::topology::Topology::new(&mesh);
    let s = Instant::now();
    let d = DynamicMesh::with_topology_and_attributes(
        &mesh,
        &topo,
        512,
        CapacityFactors::STATIC,
        &cavity_remesh::attributes(),
    )
    .unwrap();
    eprintln!("build {:.3}", s.elapsed().as_secs_f64());
    for _ in 0..5 {
        let s = Instant::now();
        let (m, src) = d.to_mesh_with_sources();
        eprintln!(
            "export {:.4} s {} {}",
            s.elapsed().as_secs_f64(),
            m.faces.len(),
            src.len()
        );
    }
}

//! The patcher's result does not depend on the number of worker threads,
//! and every patch respects the size limit.

use cavity::patcher::{Partition, partition};
use cavity::topology::Topology;

fn dragon() -> cavity::TriMesh {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/dragon.obj");
    cavity::io::read_mesh(std::path::Path::new(path))
        .expect("bundled mesh")
        .mesh
}

fn with_threads(threads: usize, mesh: &cavity::TriMesh, size: u32) -> Partition {
    let topo = Topology::new(mesh);
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool")
        .install(|| partition(&topo, mesh.num_faces(), size, 7).expect("partition"))
}

#[test]
fn partition_is_independent_of_the_thread_count() {
    let mesh = dragon();
    for size in [3, 64, 512] {
        let one = with_threads(1, &mesh, size);
        let four = with_threads(4, &mesh, size);
        assert_eq!(one.face_patch, four.face_patch, "patch size {size}");
        assert_eq!(one.num_patches, four.num_patches);
        let mut sizes = vec![0u32; one.num_patches as usize];
        for &p in &one.face_patch {
            sizes[p as usize] += 1;
        }
        assert!(
            sizes.iter().all(|&s| (1..=size).contains(&s)),
            "patch size {size}"
        );
    }
}

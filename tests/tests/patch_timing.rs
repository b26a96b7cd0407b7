//! Timing and quality of the patch stage (issue 24): the partition, the
//! static and the dynamic patch layouts of the bundled meshes and, where
//! `CAVITY_SCAN` names a mesh file, of that scan, in pools of 1, 2 and
//! as many rayon workers as cores. Ignored by default: run it with
//! `cargo test --release -p cavity-tests --test patch_timing -- --ignored --nocapture`.

use std::time::Instant;

use cavity::dynamic::{CapacityFactors, DynamicMesh};
use cavity::io::read_mesh;
use cavity::patcher::{DEFAULT_PATCH_SIZE, partition};
use cavity::topology::Topology;
use cavity::{PatchedMesh, TriMesh};
use cavity_tests::asset_mesh;

/// Prints the stage times (best of three, seconds) and the patch count and
/// ribbon ratio of `mesh` in a pool of `threads` workers.
fn report(name: &str, mesh: &TriMesh, threads: usize) {
    cavity_tests::on_workers(threads, || {
        let topo = Topology::new(mesh);
        let best = |f: &dyn Fn()| {
            (0..3)
                .map(|_| {
                    let t = Instant::now();
                    f();
                    t.elapsed().as_secs_f64()
                })
                .fold(f64::INFINITY, f64::min)
        };
        let part = best(&|| {
            partition(&topo, mesh.num_faces(), DEFAULT_PATCH_SIZE, 0x5eed).expect("partition");
        });
        let patched = best(&|| {
            PatchedMesh::with_topology(mesh, &topo, DEFAULT_PATCH_SIZE).expect("patched");
        });
        let dynamic = best(&|| {
            DynamicMesh::with_topology(mesh, &topo, DEFAULT_PATCH_SIZE, CapacityFactors::default())
                .expect("dynamic");
        });
        let stats = PatchedMesh::with_topology(mesh, &topo, DEFAULT_PATCH_SIZE)
            .expect("patched")
            .stats();
        println!(
            "{name}: {threads} threads: partition {part:.4} s, patched {patched:.4} s, dynamic {dynamic:.4} s; {} patches (faces {}..{}), ribbon ratio {:.4}",
            stats.patches, stats.min_faces, stats.max_faces, stats.ribbon_ratio
        );
    });
}

#[test]
#[ignore = "timing; run with --ignored --nocapture"]
fn patch_stage_timing() {
    let mut meshes: Vec<(String, TriMesh)> = ["bumpy-cube.obj", "dragon.obj", "torus.obj"]
        .iter()
        .map(|&name| (name.to_string(), asset_mesh(name)))
        .collect();
    if let Ok(path) = std::env::var("CAVITY_SCAN") {
        let mesh = read_mesh(path.as_ref()).expect("scan").mesh;
        meshes.push((path, mesh));
    }
    for (name, mesh) in &meshes {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        for threads in [1, 2, cores] {
            report(name, mesh, threads);
        }
        // Large levels take the parallel path of the nearest-seed search,
        // which must give the serial labels.
        let labels = |threads| {
            cavity_tests::on_workers(threads, || {
                let topo = Topology::new(mesh);
                partition(&topo, mesh.num_faces(), DEFAULT_PATCH_SIZE, 0x5eed)
                    .expect("partition")
                    .face_patch
            })
        };
        assert!(labels(1) == labels(2), "{name}: partitions differ");
    }
}

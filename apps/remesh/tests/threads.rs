//! The host stages give the same result for any number of rayon workers
//! (issue 24): topology, statistics, defect counts, the mean edge length,
//! the patcher, the static and dynamic patch layouts and the export, each
//! run in pools of 1, 2 and 3 threads and compared bit for bit.

use cavity::Kind;
use cavity::TriMesh;
use cavity::defects::Defects;
use cavity::dynamic::{CapacityFactors, DynamicMesh};
use cavity::normalize::Normalization;
use cavity::patcher::partition;
use cavity::stats::topology_stats;
use cavity::topology::Topology;
use cavity::{PatchStats, PatchedMesh};
use cavity_remesh::{Quality, mean_edge_length};
use cavity_tests::{add_defects, asset_mesh, bundled_mesh, concat, grid, shuffle};

/// Everything the host stages compute from a mesh, as comparable values
/// (floating-point values as bits).
#[derive(Debug, PartialEq)]
struct Host {
    topology: [Vec<u32>; 6],
    stats: String,
    defects: Defects,
    mean: u64,
    quality: String,
    partition: (Vec<u32>, u32),
    patched: (String, Vec<Vec<u32>>, PatchStats),
    dynamic: Vec<Vec<u32>>,
    export: (TriMesh, Vec<u32>),
    normalized: TriMesh,
}

/// The host stages of `mesh` in a pool of `threads` rayon workers.
fn host(mesh: &TriMesh, threads: usize) -> Host {
    cavity_tests::on_workers(threads, || {
        let topo = Topology::new(mesh);
        let flat = |v: &[[u32; 2]]| v.iter().flatten().copied().collect::<Vec<u32>>();
        let mean = mean_edge_length(mesh);
        let part = partition(&topo, mesh.num_faces(), 64, 0x5eed).expect("partition");
        let patched = PatchedMesh::new(mesh, 64).expect("patched");
        let dynamic =
            DynamicMesh::from_patched(mesh, &patched, CapacityFactors::default()).expect("dynamic");
        let normalization = Normalization::of(mesh);
        Host {
            topology: [
                flat(&topo.ev),
                topo.fe.iter().flatten().copied().collect(),
                topo.vf_offsets.clone(),
                topo.vf.clone(),
                topo.ef_offsets.clone(),
                topo.ef.clone(),
            ],
            stats: format!("{:?}", topology_stats(mesh)),
            defects: Defects::of(mesh),
            mean: mean.to_bits(),
            quality: format!("{:?}", Quality::of(mesh, mean)),
            partition: (part.face_patch, part.num_patches),
            patched: (
                format!("{:?}", patched.patches()),
                vec![
                    patched.fe().iter().map(|&x| x as u32).collect(),
                    patched.ev().iter().map(|&x| x as u32).collect(),
                    patched.ribbon().to_vec(),
                    patched.stash().to_vec(),
                    patched.masks().to_vec(),
                    patched.to_input(Kind::Vertex).to_vec(),
                    patched.to_input(Kind::Edge).to_vec(),
                    patched.to_input(Kind::Face).to_vec(),
                ],
                patched.stats(),
            ),
            dynamic: vec![
                dynamic.storage().counts.to_vec(),
                dynamic.storage().fe.iter().map(|&x| x as u32).collect(),
                dynamic.storage().ev.iter().map(|&x| x as u32).collect(),
                dynamic.storage().masks.to_vec(),
                dynamic.storage().hash.to_vec(),
                dynamic.storage().stash.to_vec(),
                dynamic.storage().vertex_attrs.to_vec(),
            ],
            export: dynamic.to_mesh_with_sources(),
            normalized: normalization.apply(mesh),
        }
    })
}

/// Meshes larger than the stages' chunks (4096 edges, 4096 rows, 65536
/// elements) and than the patcher's parallel search levels (4096 faces:
/// the subdivided dragon's reach 56 k), with boundaries, defects and
/// shuffled orders.
fn meshes() -> Vec<(&'static str, TriMesh)> {
    let dragon = bundled_mesh();
    let big = dragon.subdivide_to(16 * dragon.num_faces());
    vec![
        ("dragon subdivided", shuffle(&big, 7)),
        ("bumpy cube", asset_mesh("bumpy-cube.obj")),
        (
            "holed grids with defects",
            shuffle(
                &concat(&[
                    add_defects(grid(120, 90, &[true, false], false, &[3, 700, 4001]), 2, 3),
                    grid(60, 60, &[false], true, &[]),
                ]),
                11,
            ),
        ),
    ]
}

#[test]
fn host_stages_do_not_depend_on_the_worker_count() {
    for (name, mesh) in meshes() {
        let one = host(&mesh, 1);
        for threads in [2, 3] {
            assert!(
                host(&mesh, threads) == one,
                "{name}: {threads} workers differ from 1"
            );
        }
    }
}

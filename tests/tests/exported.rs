//! The rounds' mesh exported where it lies (`Backend::run_placed_exported`,
//! the kernels of `cavity_device::dynamic::indexed`) equals the host's
//! export of the same mesh (`DynamicMesh::to_mesh_with_sources`, read in
//! the driver after a copy back) element for element, with its input
//! indices and the faces it keeps on the backend: meshes as placed
//! (generated meshes with holes, fans, non-manifold edges and isolated
//! vertices, soups, the bundled mesh and the bunny scan; with face
//! attributes, whose faces keep their input order, and without), and
//! after the remeshing's rounds split, collapse and flip them. The
//! backend comes from `CAVITY_TEST_DEVICE` (CPU by default).

use cavity::TriMesh;
use cavity::attributes::AttributeLayout;
use cavity::backend::{Backend, Exported};
use cavity::dynamic::CapacityFactors;
use cavity::rounds::Rounds;
use cavity::rounds::RunError;
use cavity::topology::Topology;
use cavity_remesh::{
    Hooks, Phase, RemeshError, RemeshSettings, dynamic_mesh, mean_edge_length, remesh_rounds,
};
use cavity_tests::{any_mesh, soup, test_backend};
use proptest::prelude::*;

/// The layouts a test places: none of the user's attributes, and a face
/// attribute (so that faces keep their input index and input order).
fn layouts() -> [AttributeLayout; 2] {
    let mut with = AttributeLayout::new();
    with.vertex::<f32, 2>("uv").unwrap();
    with.face::<u32, 1>("mark").unwrap();
    [AttributeLayout::new(), with]
}

/// Room to grow.
const FACTORS: CapacityFactors = CapacityFactors {
    elements: 2.0,
    patches: 2.0,
};

/// Whether `exported` equals the host's export `(mesh, sources)`, and
/// its faces on the backend equal its faces (the first difference named
/// when not).
fn same_export(
    backend: &Backend,
    exported: &Exported,
    (mesh, sources): &(TriMesh, Vec<u32>),
) -> Result<(), String> {
    let faces_on = exported
        .faces_on
        .as_ref()
        .ok_or("the host exported the mesh, not the backend")?;
    let ours = &exported.mesh;
    if ours.num_vertices() != mesh.num_vertices() || ours.num_faces() != mesh.num_faces() {
        return Err(format!(
            "{} vertices and {} faces exported, the host {} and {}",
            ours.num_vertices(),
            ours.num_faces(),
            mesh.num_vertices(),
            mesh.num_faces()
        ));
    }
    let bits = |p: &[f32; 3]| p.map(f32::to_bits);
    if let Some(v) = (0..mesh.num_vertices()).find(|&v| {
        bits(&ours.positions[v]) != bits(&mesh.positions[v]) || exported.sources[v] != sources[v]
    }) {
        return Err(format!(
            "vertex {v}: {:?} from input {}, the host's {:?} from {}",
            ours.positions[v], exported.sources[v], mesh.positions[v], sources[v]
        ));
    }
    if let Some(f) = (0..mesh.num_faces()).find(|&f| ours.faces[f] != mesh.faces[f]) {
        return Err(format!(
            "face {f}: {:?}, the host's {:?}",
            ours.faces[f], mesh.faces[f]
        ));
    }
    let faces_on = faces_on.as_buffer();
    let on = backend
        .read_back(faces_on, faces_on.len())
        .map_err(|e| e.to_string())?;
    if on != mesh.faces.as_flattened() {
        return Err("the faces kept on the backend differ from those read back".into());
    }
    Ok(())
}

/// `mesh` placed on `backend` (at `patch_size`, with `layout`) and
/// exported by it without a round, against the host's export, once after
/// a copy back and once alone (as the applications export); whether the
/// mesh was placed (patching refuses some meshes, which the patch and
/// placement suites cover).
fn check_placed_export(
    mesh: &TriMesh,
    patch_size: u32,
    layout: &AttributeLayout,
    backend: &Backend,
) -> Result<bool, String> {
    let topo = Topology::new(mesh);
    let place = || backend.place(mesh, &topo, patch_size, FACTORS, layout);
    let Ok(placed) = place() else {
        return Ok(false);
    };
    let (host, exported) = backend
        .run_placed_exported(
            placed,
            |r| Ok::<_, RunError>(r.mesh()?.to_mesh_with_sources()),
            |e| e,
        )
        .map_err(|e| e.to_string())?;
    same_export(backend, &exported, &host.value)?;
    let placed = place().map_err(|e| e.to_string())?;
    let (_, alone) = backend
        .run_placed_exported(placed, |_| Ok::<_, RunError>(()), |e| e)
        .map_err(|e| e.to_string())?;
    same_export(backend, &alone, &host.value)?;
    Ok(true)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cavity_tests::cases(48), ..ProptestConfig::default() })]

    #[test]
    fn generated_meshes(
        mesh in any_mesh(),
        patch_size in prop_oneof![1u32..8, 8u32..64, 64u32..1024],
        layout in 0usize..2,
    ) {
        let backend = test_backend();
        if let Err(e) = check_placed_export(&mesh, patch_size, &layouts()[layout], &backend) {
            prop_assert!(false, "{e}");
        }
    }

    #[test]
    fn soups(mesh in soup(), patch_size in prop_oneof![1u32..4, 512u32..513]) {
        let backend = test_backend();
        for layout in &layouts() {
            if let Err(e) = check_placed_export(&mesh, patch_size, layout, &backend) {
                prop_assert!(false, "{e}");
            }
        }
    }
}

#[test]
fn real_meshes() {
    let backend = test_backend();
    for mesh in [cavity_tests::bundled_mesh(), cavity_tests::bunny_scan()] {
        for patch_size in [64, 512] {
            for layout in &layouts() {
                let placed = check_placed_export(&mesh, patch_size, layout, &backend).unwrap();
                assert!(placed, "the real meshes are placed");
            }
        }
    }
}

/// The remeshing's error for a failed copy back.
fn copied(source: RunError) -> RemeshError {
    RemeshError::Run {
        phase: Phase::Smooth,
        iteration: 0,
        source,
    }
}

/// After the remeshing's rounds (vertices added by splits, input
/// vertices removed by collapses, faces flipped), at a shorter and a
/// longer target length.
#[test]
fn after_remeshing_rounds() {
    let backend = test_backend();
    cavity_remesh::add_kernels(&backend).unwrap();
    let settings = RemeshSettings {
        iterations: 2,
        ..RemeshSettings::default()
    };
    for mesh in [cavity_tests::bundled_mesh(), cavity_tests::bunny_scan()] {
        let topo = Topology::new(&mesh);
        for scale in [0.7, 1.6] {
            let length = scale * mean_edge_length(&mesh);
            let placed = dynamic_mesh(&mesh, &topo, 256, FACTORS, Some(&backend)).unwrap();
            let (host, exported) = backend
                .run_placed_exported(
                    placed,
                    |r| {
                        remesh_rounds(r, length, &settings, &mut Hooks::default())?;
                        Ok(r.mesh().map_err(copied)?.to_mesh_with_sources())
                    },
                    copied,
                )
                .unwrap();
            let (output, _) = &host.value;
            assert_ne!(
                output.num_vertices(),
                mesh.num_vertices(),
                "the rounds changed the mesh"
            );
            same_export(&backend, &exported, &host.value).unwrap();
        }
    }
}

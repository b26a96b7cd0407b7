//! The collapsed mesh's boundary operators built on the device
//! (`cavity_tet_collapse::operators`) against the volume crate's own build
//! on the host (`VolumeMesh::from_cells`): the same edges, faces, signs
//! and numbering, on random tetrahedral meshes and after a collapse, on
//! the backend `CAVITY_TEST_DEVICE` names.

mod generate;

use cavity_tests::{cases, test_backend};
use cavity_tet_collapse::kernels::iteration::Builtin;
use cavity_tet_collapse::operators::{collapse_resident, collapse_to_resident, resident_of};
use cavity_tet_collapse::parallel::collapse_parallel;
use cavity_tet_collapse::simplify::median_edge_length;
use cavity_tet_collapse::{CollapseError, Settings, TetMesh};
use cavity_volume::{CellType, CellVertices, Relation, ResidentMesh, VolumeMesh};
use proptest::prelude::*;

/// The volume crate's mesh of `mesh`'s tetrahedra, built on the host.
fn on_host(mesh: &TetMesh) -> VolumeMesh {
    let cells = mesh.to_cells();
    VolumeMesh::from_cells(cells.positions, &cells.cells).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(24)))]

    /// Grids with holes, two components, slivers, shuffled, at scales
    /// from 1e-30 to 1e30: the device's operators are the host's, entry
    /// for entry (`download` checks them as it reads them).
    #[test]
    fn the_operators_are_the_volume_crates(mesh in generate::any_tet_mesh()) {
        let backend = test_backend();
        let resident = resident_of(&backend, &mesh).unwrap();
        prop_assert_eq!(resident.download().unwrap(), on_host(&mesh));
    }
}

#[test]
fn a_collapse_hands_over_its_mesh_with_operators_and_an_empty_cache() {
    let backend = test_backend();
    let input = generate::grid(6, 5, 4, 0.2, 7);
    let values: Vec<f32> = input.positions.iter().map(|p| p[2]).collect();
    let criterion = Builtin {
        kind: 0,
        placement: 0,
        bound: 1.25 * median_edge_length(&input),
    };
    let settings = Settings::default();
    let (out, out_values, report) =
        collapse_parallel(&backend, &input, &values, criterion, &settings).unwrap();
    let (resident, resident_values, resident_report) =
        collapse_to_resident(&backend, &input, &values, criterion, &settings).unwrap();
    assert!(out.tets.len() < input.tets.len());
    assert_eq!(resident_report.iterations, report.iterations);
    assert_eq!(resident_values, out_values);
    assert!(resident_report.operator_seconds > 0.0);
    assert_eq!(resident.counts()[0], out.positions.len());
    assert_eq!(resident.counts()[3], out.tets.len());
    for r in Relation::ALL {
        assert!(!resident.is_cached(r), "{r:?} cached");
    }
    assert_eq!(resident.download().unwrap(), on_host(&out));
}

#[test]
fn relations_of_the_handed_over_mesh_are_the_hosts() {
    let backend = test_backend();
    let mesh = generate::grid(3, 3, 2, 0.25, 3);
    let mut resident = resident_of(&backend, &mesh).unwrap();
    let host = on_host(&mesh);
    let mut uploaded = cavity_volume::ResidentMesh::upload(&backend, &host).unwrap();
    for r in Relation::ALL {
        assert_eq!(
            resident.relation(r).unwrap(),
            uploaded.relation(r).unwrap(),
            "{r:?}"
        );
    }
}

/// `mesh` with each tetrahedron's vertices ascending, the first two
/// swapped where that turns it inside out: the tetrahedra a mesh on the
/// device gives the collapse (its cell-vertex relation, oriented).
fn as_on_device(mesh: &TetMesh) -> TetMesh {
    let tets = mesh
        .tets
        .iter()
        .map(|t| {
            let mut s = *t;
            s.sort_unstable();
            if cavity_tet_collapse::mesh::signed_volume(&mesh.positions, s) < 0.0 {
                s.swap(0, 1);
            }
            s
        })
        .collect();
    TetMesh {
        positions: mesh.positions.clone(),
        tets,
    }
}

#[test]
fn a_mesh_on_the_device_is_collapsed_in_place_and_its_relations_dropped() {
    let backend = test_backend();
    let input = generate::shuffle(&generate::grid(5, 4, 4, 0.2, 11), 5);
    let values: Vec<f32> = input.positions.iter().map(|p| p[0] + p[1]).collect();
    let mut mesh = ResidentMesh::upload(&backend, &on_host(&input)).unwrap();
    mesh.relation(Relation::EdgeFaces).unwrap();
    assert!(mesh.is_cached(Relation::EdgeFaces));
    let criterion = Builtin {
        kind: 0,
        placement: 0,
        bound: 1.25 * median_edge_length(&input),
    };
    let settings = Settings::default();
    let (out_values, report) = collapse_resident(&mut mesh, &values, criterion, &settings).unwrap();
    let oriented = as_on_device(&input);
    let (want, want_values, want_report) =
        collapse_parallel(&backend, &oriented, &values, criterion, &settings).unwrap();
    assert!(want.tets.len() < input.tets.len());
    assert_eq!(report.iterations, want_report.iterations);
    assert_eq!(out_values, want_values);
    for r in Relation::ALL {
        assert!(!mesh.is_cached(r), "{r:?} still cached");
    }
    assert_eq!(mesh.download().unwrap(), on_host(&want));
}

#[test]
fn cells_that_are_no_tetrahedra_or_flat_are_refused_naming_the_cell() {
    let backend = test_backend();
    let criterion = Builtin {
        kind: 0,
        placement: 0,
        bound: 1.0,
    };
    let settings = Settings::default();
    // A hexahedron beside a tetrahedron.
    let positions = vec![
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 1.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
        [1.0, 0.0, 1.0],
        [1.0, 1.0, 1.0],
        [0.0, 1.0, 1.0],
        [3.0, 0.0, 0.0],
    ];
    let cells = vec![
        CellVertices::Tetrahedron([1, 8, 2, 5]),
        CellVertices::Hexahedron([0, 1, 2, 3, 4, 5, 6, 7]),
    ];
    let host = VolumeMesh::from_cells(positions.clone(), &cells).unwrap();
    let mut mesh = ResidentMesh::upload(&backend, &host).unwrap();
    match collapse_resident(&mut mesh, &[], criterion, &settings) {
        Err(CollapseError::NotTetrahedron { cell: 1, cell_type }) => {
            assert_eq!(cell_type, CellType::Hexahedron)
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(mesh.download().unwrap(), host);
    // A flat tetrahedron (four coplanar vertices) after a good one.
    let cells = vec![
        CellVertices::Tetrahedron([0, 1, 3, 4]),
        CellVertices::Tetrahedron([1, 2, 8, 0]),
    ];
    let host = VolumeMesh::from_cells(positions, &cells).unwrap();
    let mut mesh = ResidentMesh::upload(&backend, &host).unwrap();
    match collapse_resident(&mut mesh, &[], criterion, &settings) {
        Err(CollapseError::FlatCell { cell: 1 }) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(mesh.download().unwrap(), host);
}

/// The operators' build on the device against the volume crate's host
/// build of the same mesh, on a perturbed grid of `CAVITY_TET_GRID`³
/// cubes (40 by default), after a collapse: run with `--ignored
/// --nocapture` on the backend `CAVITY_TEST_DEVICE` names.
#[test]
#[ignore = "timing (issue 54 item 8): run in release with --ignored --nocapture"]
fn operator_build_timing() {
    let backend = test_backend();
    let input = generate::timing_grid();
    let criterion = Builtin {
        kind: 0,
        placement: 0,
        bound: 1.25 * median_edge_length(&input),
    };
    let settings = Settings::default();
    collapse_to_resident(&backend, &input, &[], criterion, &settings).unwrap();
    let (_, _, report) = collapse_to_resident(&backend, &input, &[], criterion, &settings).unwrap();
    let (out, _, _) = collapse_parallel(&backend, &input, &[], criterion, &settings).unwrap();
    let start = std::time::Instant::now();
    let host = on_host(&out);
    let host_seconds = start.elapsed().as_secs_f64();
    eprintln!(
        "{}: {} -> {} tetrahedra; operators on the device {:.4} s, on the host {:.4} s ({:.1}x)",
        report.device,
        input.tets.len(),
        host.counts()[3],
        report.operator_seconds,
        host_seconds,
        host_seconds / report.operator_seconds
    );
}

//! The collapsed mesh's boundary operators built on the device
//! (`cavity_tet_collapse::operators`) against the volume crate's own build
//! on the host (`VolumeMesh::from_cells`): the same edges, faces, signs
//! and numbering, on random tetrahedral meshes and after a collapse, on
//! the backend `CAVITY_TEST_DEVICE` names.

mod generate;

use cavity_tests::{cases, test_backend};
use cavity_tet_collapse::kernels::iteration::Builtin;
use cavity_tet_collapse::operators::{collapse_to_resident, resident_of};
use cavity_tet_collapse::parallel::collapse_parallel;
use cavity_tet_collapse::simplify::median_edge_length;
use cavity_tet_collapse::{Settings, TetMesh};
use cavity_volume::{Relation, VolumeMesh};
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

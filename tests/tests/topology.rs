//! The topology built on the device (`Backend::build_topology`, the
//! kernels of `cavity_device::topology`) equals the host's
//! (`Topology::new`) array for array, and its mean edge length the host's
//! to rounding: generated meshes (grids with holes, fans, non-manifold
//! edges, isolated vertices, soups, shuffled), faces with a repeated
//! vertex, a vertex of huge valence, the bundled mesh and the bunny scan.
//! `Backend::topology_on` gives the same on either backend, and the
//! duplicate faces found on the device are the host's. The backend
//! comes from `CAVITY_TEST_DEVICE` (CPU by default).

use cavity::TriMesh;
use cavity::backend::Backend;
use cavity::defects::remove_duplicate_faces_with_topology;
use cavity::topology::{Topology, mean_edge_length_with};
use cavity_tests::{any_mesh, concat, fan, grid, soup, test_backend};
use proptest::prelude::*;

/// Whether the device's topology of `mesh`, and `topology_on`'s, equal
/// the host's, with the mean edge length within rounding.
fn check(mesh: &TriMesh, backend: &Backend) -> Result<(), String> {
    let host = Topology::new(mesh);
    for (name, on) in [
        ("build_topology", backend.build_topology(mesh)),
        ("topology_on", backend.topology_on(mesh)),
    ] {
        let on = on.map_err(|e| format!("{name}: {e}"))?;
        if on.num_edges() != host.ev.len() {
            return Err(format!(
                "{name}: {} edges, not {}",
                on.num_edges(),
                host.ev.len()
            ));
        }
        let built = on.host(backend).map_err(|e| e.to_string())?;
        let same = [
            ("ev", built.ev.as_flattened() == host.ev.as_flattened()),
            ("fe", built.fe.as_flattened() == host.fe.as_flattened()),
            ("vf_offsets", built.vf_offsets == host.vf_offsets),
            ("vf", built.vf == host.vf),
            ("ef_offsets", built.ef_offsets == host.ef_offsets),
            ("ef", built.ef == host.ef),
        ];
        if let Some((array, _)) = same.iter().find(|(_, same)| !same) {
            return Err(format!("{name}: {array} differs from Topology::new's"));
        }
        let mean = on
            .mean_edge_length(backend, mesh)
            .map_err(|e| e.to_string())?;
        let expected = mean_edge_length_with(mesh, &host);
        if (mean - expected).abs() > 1e-12 * expected.abs().max(1.0) {
            return Err(format!("{name}: mean edge length {mean}, not {expected}"));
        }
    }
    check_duplicates(mesh, backend)
}

/// Whether the duplicate faces the device marks
/// (`TopologyOn::duplicate_faces`, on either backend) and
/// `Backend::without_duplicate_faces` remove those the host removes
/// (`remove_duplicate_faces_with_topology`), leaving its topology.
fn check_duplicates(mesh: &TriMesh, backend: &Backend) -> Result<(), String> {
    let mut host = mesh.clone();
    let (removed, topology) = remove_duplicate_faces_with_topology(&mut host);
    let built = backend.build_topology(mesh).map_err(|e| e.to_string())?;
    let marks = built.duplicate_faces(backend).map_err(|e| e.to_string())?;
    let marks = marks.unwrap_or_else(|| vec![false; mesh.num_faces()]);
    let kept: Vec<[u32; 3]> = (mesh.faces.iter().zip(&marks))
        .filter(|&(_, &m)| !m)
        .map(|(&t, _)| t)
        .collect();
    if kept != host.faces {
        return Err(format!(
            "the device marks {} duplicates, the host removes {removed}",
            marks.iter().filter(|&&m| m).count()
        ));
    }
    let mut on = mesh.clone();
    let (count, left) = backend
        .without_duplicate_faces(&mut on)
        .map_err(|e| e.to_string())?;
    let left = left.host(backend).map_err(|e| e.to_string())?;
    if count != removed || on.faces != host.faces || *left != topology {
        return Err(format!(
            "without_duplicate_faces removed {count} faces, not {removed}, or left another topology"
        ));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cavity_tests::cases(64), ..ProptestConfig::default() })]

    #[test]
    fn generated_meshes(mesh in any_mesh()) {
        let backend = test_backend();
        if let Err(e) = check(&mesh, &backend) {
            prop_assert!(false, "{e}");
        }
    }

    #[test]
    fn soups(mesh in soup()) {
        let backend = test_backend();
        if let Err(e) = check(&mesh, &backend) {
            prop_assert!(false, "{e}");
        }
    }
}

/// No faces, no vertices, isolated vertices only, faces with a repeated
/// vertex (which `TriMesh::validate` refuses but the build lists as
/// `Topology::new` does: a face once a corner in VF, the side from a
/// vertex to itself an edge), and a fan of 3000 faces (one long VF row,
/// sorted in place).
#[test]
fn special_cases() {
    let backend = test_backend();
    let isolated = TriMesh {
        positions: vec![[0.0; 3]; 5],
        faces: vec![],
    };
    let repeated = TriMesh {
        positions: vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
        faces: vec![[0, 0, 1], [1, 2, 1], [2, 2, 2], [0, 1, 2]],
    };
    let cases = [
        TriMesh::default(),
        isolated,
        repeated,
        fan(3000, true),
        concat(&[fan(4, true), grid(2, 2, &[true], false, &[]), fan(3, false)]),
    ];
    for mesh in &cases {
        check(mesh, &backend).unwrap();
    }
}

#[test]
fn real_meshes() {
    let backend = test_backend();
    check(&cavity_tests::bundled_mesh(), &backend).unwrap();
    check(&cavity_tests::bunny_scan(), &backend).unwrap();
}

/// The rows' sort (`cavity_device::topology::shell_sort`) sorts arrays of
/// every length around its gaps, in order, reversed and shuffled, with
/// repeats, and leaves the entries outside its range alone.
#[test]
fn the_rows_sort_sorts_every_length() {
    use cavity_device::topology::shell_sort;
    use std::cell::RefCell;
    for n in [0u32, 1, 2, 3, 5, 700, 701, 702, 1751, 4000, 120_000] {
        let orders: [Box<dyn Fn(u32) -> u64>; 3] = [
            Box::new(u64::from),
            Box::new(move |i| u64::from(n - i)),
            Box::new(|i| u64::from(i.wrapping_mul(2_654_435_761) % 1000)),
        ];
        for order in &orders {
            let mut keys: Vec<u64> = (0..n).map(order).collect();
            keys.insert(0, u64::MAX);
            keys.push(0);
            let cells = RefCell::new(keys.clone());
            shell_sort(
                1,
                n + 1,
                |i| cells.borrow()[i as usize],
                |i, x| {
                    cells.borrow_mut()[i as usize] = x;
                },
            );
            keys[1..=n as usize].sort_unstable();
            assert_eq!(cells.into_inner(), keys, "{n} entries");
        }
    }
}

/// A face's vertex past the mesh's vertices is an error of the device's
/// build, not an edge to a vertex that does not exist.
#[test]
fn an_index_past_the_vertices_is_an_error() {
    let backend = test_backend();
    let mesh = TriMesh {
        positions: vec![[0.0; 3]; 3],
        faces: vec![[0, 1, 2], [0, 2, 3]],
    };
    assert!(matches!(
        backend.build_topology(&mesh),
        Err(cavity::backend::BackendError::Index(3, 3))
    ));
}

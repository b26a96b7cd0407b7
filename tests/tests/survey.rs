//! The survey taken by a backend (`Backend::survey`, the kernels of
//! `cavity_device::survey` and `cavity_device::components`) against the
//! host's: its topology statistics equal `topology_stats`, its components
//! the host's union-find's (each vertex's root, and the vertices of small
//! ones), and the remeshing's quality statistics measured from it
//! (`Quality::on_survey`) equal `Quality::of` but for the rounding of the
//! mean edge length and the angles: generated meshes (grids with
//! holes, fans, non-manifold edges, isolated vertices, several components,
//! shuffled), soups, a sliver as debris and one at a sharp boundary corner
//! (the statistics away from them leave them out), faces of zero area,
//! the bundled mesh and the bunny scan. The backend comes from
//! `CAVITY_TEST_DEVICE` (CPU by default). The survey from a topology built
//! already and the defects of an input analysed on the backend are checked
//! against the host's too ([`check_from_topology`]), and so are the
//! defects and patch statistics `cavity info` takes on the backend
//! (`Backend::survey_defects`, `Backend::patch_summary`;
//! [`check_info`]).

use cavity::TriMesh;
use cavity::backend::{Backend, BackendError, TopologyOn};
use cavity::defects::{Defects, remove_duplicate_faces_with_topology};
use cavity::input::{InputMesh, InputOn, ReadInput};
use cavity::stats::topology_stats;
use cavity::topology::Topology;
use cavity_remesh::Quality;
use cavity_tests::{any_mesh, fan, grid, soup, test_backend};
use proptest::prelude::*;

/// Whether `a` and `b` agree to `tolerance` relative to their size (both
/// infinite alike).
fn close(a: f64, b: f64, tolerance: f64) -> bool {
    a == b || (a - b).abs() <= tolerance * a.abs().max(b.abs()).max(1.0)
}

/// Whether the backend's survey of `mesh` and the quality measured from it
/// agree with the host's at target length `target`.
fn check(mesh: &TriMesh, backend: &Backend, target: f64) -> Result<(), String> {
    let survey = backend.survey(mesh).map_err(|e| e.to_string())?;
    let expected = topology_stats(mesh);
    if *survey.stats() != expected {
        return Err(format!("statistics {:?}, not {expected:?}", survey.stats()));
    }
    // The components: each vertex's root, and the vertices of small ones.
    let roots = cavity::stats::Survey::new(mesh).roots;
    if survey.roots(backend).map_err(|e| e.to_string())? != roots {
        return Err("the components' roots differ from the host's".into());
    }
    let mut size = vec![0usize; mesh.num_vertices()];
    for t in &mesh.faces {
        size[roots[t[0] as usize] as usize] += 1;
    }
    for below in [1, 2, 5, 1000] {
        let small: Vec<u32> = roots
            .iter()
            .map(|&r| u32::from(size[r as usize] > 0 && size[r as usize] < below))
            .collect();
        let marks = survey
            .small_components(backend, below)
            .map_err(|e| e.to_string())?;
        let marks = match marks {
            Some(m) => backend
                .read_back(&m, mesh.num_vertices())
                .map_err(|e| e.to_string())?,
            None => vec![0; mesh.num_vertices()],
        };
        if marks != small {
            return Err(format!("the components of fewer than {below} faces differ"));
        }
    }
    let on = Quality::on_survey(backend, mesh, &survey, target).map_err(|e| e.to_string())?;
    let host = Quality::of(mesh, target);
    let floats = [
        ("min_edge", on.min_edge, host.min_edge, 0.0),
        ("max_edge", on.max_edge, host.max_edge, 0.0),
        ("mean_edge", on.mean_edge, host.mean_edge, 1e-12),
        ("mean_valence", on.mean_valence, host.mean_valence, 0.0),
        ("in_band", on.in_band, host.in_band, 0.0),
        ("min_angle", on.min_angle, host.min_angle, 1e-12),
        (
            "min_angle_away",
            on.min_angle_away,
            host.min_angle_away,
            1e-12,
        ),
    ];
    for (name, a, b, tolerance) in floats {
        if !close(a, b, tolerance) {
            return Err(format!("{name} {a}, not {b}"));
        }
    }
    // The counts, compared exactly once the floats above are set aside.
    let counts = |q: Quality| Quality {
        min_edge: 0.0,
        max_edge: 0.0,
        mean_edge: 0.0,
        mean_valence: 0.0,
        in_band: 0.0,
        min_angle: 0.0,
        min_angle_away: 0.0,
        ..q
    };
    let (exact, host_exact) = (counts(on), counts(host));
    if exact != host_exact {
        return Err(format!("{exact:?}, not {host_exact:?}"));
    }
    Ok(())
}

/// The mean edge length of `mesh` (1 without edges): a target length
/// whose band holds about half the edges.
fn target(mesh: &TriMesh) -> f64 {
    let mean = cavity_remesh::mean_edge_length(mesh);
    if mean > 0.0 { mean } else { 1.0 }
}

/// The survey from a topology built already (`Backend::survey_topology`)
/// equals the survey that builds its own and gives that topology back
/// unchanged; the defects of an input analysed on the backend
/// (`ReadInput::analyse_on`, `InputOn::with_defects`) equal the host's
/// (`InputMesh::defects`), duplicate faces removed alike, whether its
/// topology lies on the device (the GPU) or on the host (the CPU backend:
/// both are tried on it, the host's topology surveyed again by the
/// kernels).
fn check_from_topology(mesh: &TriMesh, backend: &Backend) -> Result<(), String> {
    let fail = |e: BackendError| e.to_string();
    let expected = topology_stats(mesh);
    let built = backend.build_topology(mesh).map_err(fail)?;
    let host = TopologyOn::of_owned(backend, Topology::new(mesh)).map_err(fail)?;
    for (topology, what) in [(built, "built"), (host, "given")] {
        let survey = backend.survey_topology(mesh, topology).map_err(fail)?;
        if *survey.stats() != expected {
            return Err(format!(
                "{what}: statistics {:?}, not {expected:?}",
                survey.stats()
            ));
        }
        let back = survey.into_topology();
        if *back.host(backend).map_err(fail)? != Topology::new(mesh) {
            return Err(format!("{what}: the topology given back differs"));
        }
    }
    let mut with_duplicates = mesh.clone();
    if let Some(&[a, b, c]) = mesh.faces.first() {
        with_duplicates.faces.push([b, c, a]);
    }
    let mut cleaned = with_duplicates.clone();
    let (_, topology) = remove_duplicate_faces_with_topology(&mut cleaned);
    let host = InputMesh {
        mesh: cleaned,
        topology,
        name: "generated".into(),
        warnings: vec![],
    };
    let (expected, expected_warning) = host.defects();
    let read = ReadInput {
        mesh: with_duplicates,
        name: "generated".into(),
        warnings: vec![],
        read_seconds: 0.0,
    };
    let on = read.analyse_on(backend).map_err(fail)?;
    let (on, defects, warning) = on.with_defects(backend).map_err(fail)?;
    if on.mesh != host.mesh {
        return Err("the duplicate faces were not removed as on the host".into());
    }
    if defects.stats != expected.stats || defects.zero_area_faces != expected.zero_area_faces {
        return Err(format!("defects {defects:?}, not {expected:?}"));
    }
    if warning != expected_warning {
        return Err(format!("warning {warning:?}, not {expected_warning:?}"));
    }
    // With a topology built by the kernels, as the GPU's analysis gives it
    // (the CPU backend's analysis keeps the host's).
    let built = InputOn {
        topology: backend.build_topology(&on.mesh).map_err(fail)?,
        ..on
    };
    let (_, defects, _) = built.with_defects(backend).map_err(fail)?;
    if defects.stats != expected.stats || defects.zero_area_faces != expected.zero_area_faces {
        return Err(format!(
            "from a built topology: defects {defects:?}, not {expected:?}"
        ));
    }
    Ok(())
}

/// `cavity info`'s analysis on the backend against the host's, on `mesh`
/// with a duplicate face (the first, turned), a vertex at an earlier
/// vertex's position, one a unit in the last place from it, and a face
/// over each (edges of zero length, faces of zero area): the defects and
/// topology statistics of `Backend::survey_defects` equal
/// `Defects::with_topology`'s and `topology_stats`; the summary of patch
/// buffers (`PatchBuffers::summary`, from the headers where they lie)
/// equals that of the same patches copied back; and the patch statistics
/// of `Backend::patch_summary` from the survey's topology equal those of
/// the patches `Backend::patched` copies back (the same error where
/// patching fails).
fn check_info(mesh: &TriMesh, backend: &Backend, patch_size: u32) -> Result<(), String> {
    let fail = |e: BackendError| e.to_string();
    let mut mesh = mesh.clone();
    if let Some(&[a, b, c]) = mesh.faces.first() {
        mesh.faces.push([b, c, a]);
        let copy = mesh.num_vertices() as u32;
        let [x, y, z] = mesh.positions[a as usize];
        mesh.positions.push([x, y, z]);
        // One unit in the last place away: not coincident, of zero length.
        mesh.positions.push([f32::from_bits(x.to_bits() + 1), y, z]);
        mesh.faces.push([a, copy, b]);
        mesh.faces.push([a, copy + 1, c]);
    }
    let topology = Topology::new(&mesh);
    let expected = Defects::with_topology(&mesh, &topology);
    let (survey, defects) = backend.survey_defects(&mesh).map_err(fail)?;
    if defects != expected {
        return Err(format!("defects {defects:?}, not {expected:?}"));
    }
    if *survey.stats() != topology_stats(&mesh) {
        return Err(format!(
            "statistics {:?}, not {:?}",
            survey.stats(),
            topology_stats(&mesh)
        ));
    }
    // The summary of the patches as a backend builds them, taken where they
    // lie, against the patches copied back (on either backend).
    if let Ok(part) = cavity::patcher::partition(&topology, mesh.num_faces(), patch_size, 7)
        && let Ok(buffers) = backend.patch_buffers(&mesh, &topology, &part, patch_size)
    {
        let copied = buffers.download(backend, &topology).map_err(fail)?;
        if buffers.summary() != copied.summary() {
            return Err(format!(
                "patch buffers' summary {:?}, not {:?}",
                buffers.summary(),
                copied.summary()
            ));
        }
    }
    let on = survey.into_topology();
    let summary = backend.patch_summary(&mesh, &on, patch_size);
    let patched = backend.patched(&mesh, &topology, patch_size);
    match (summary, patched) {
        (Ok(summary), Ok(patched)) if summary == patched.summary() => Ok(()),
        (Ok(summary), Ok(patched)) => Err(format!(
            "patch summary {summary:?}, not {:?}",
            patched.summary()
        )),
        (Err(a), Err(b)) if a.to_string() == b.to_string() => Ok(()),
        (a, b) => Err(format!(
            "patching: {:?} on the backend, {:?} copied back",
            a.map(|_| ()),
            b.map(|_| ())
        )),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cavity_tests::cases(64), ..ProptestConfig::default() })]

    #[test]
    fn info_defects_and_patches(
        mesh in any_mesh(),
        patch_size in prop::sample::select(vec![8u32, 64, 512]),
    ) {
        let backend = test_backend();
        if let Err(e) = check_info(&mesh, &backend, patch_size) {
            prop_assert!(false, "{e}");
        }
    }

    #[test]
    fn surveys_from_a_topology_and_input_defects(mesh in any_mesh()) {
        let backend = test_backend();
        if let Err(e) = check_from_topology(&mesh, &backend) {
            prop_assert!(false, "{e}");
        }
    }

    #[test]
    fn generated_meshes(mesh in any_mesh()) {
        let backend = test_backend();
        if let Err(e) = check(&mesh, &backend, target(&mesh)) {
            prop_assert!(false, "{e}");
        }
    }

    #[test]
    fn soups(mesh in soup()) {
        let backend = test_backend();
        if let Err(e) = check(&mesh, &backend, target(&mesh)) {
            prop_assert!(false, "{e}");
        }
    }
}

/// No faces, isolated vertices only, a fan of 3000 faces (one long VF
/// row), faces of zero area (a collapsed face, coincident vertices), and
/// two meshes whose smallest angle the statistics away from the defects
/// leave out: a sliver hung on a grid's corner (a sharp corner), and a
/// sliver alone (debris) beside a grid.
#[test]
fn special_cases() {
    let backend = test_backend();
    let isolated = TriMesh {
        positions: vec![[0.0; 3]; 5],
        faces: vec![],
    };
    let flat = TriMesh {
        positions: vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [2.0, 0.0, 0.0],
            [1.0, 1.0, 0.0],
            [1.0, 1.0, 0.0],
        ],
        faces: vec![[0, 1, 2], [0, 2, 3], [2, 4, 3]],
    };
    for (i, mesh) in [TriMesh::default(), isolated, fan(3000, true), flat]
        .iter()
        .enumerate()
    {
        check(mesh, &backend, target(mesh)).unwrap_or_else(|e| panic!("case {i}: {e}"));
    }
    // A grid of 6 x 5 quads in the plane z = 0 (vertex `x + 7 y` at
    // `(x, y)`), with a sliver hung on its corner vertex 6 at (6, 0) by
    // that vertex alone: a corner on four boundary edges, sharp.
    let mut sharp = grid(6, 5, &[true, false], false, &[]);
    let base = sharp.num_vertices() as u32;
    sharp.positions.extend([[7.0, 0.01, 0.0], [7.0, 0.02, 0.0]]);
    sharp.faces.extend([[6, base, base + 1]]);
    // A sliver of its own: a component of one face.
    let mut debris = grid(6, 5, &[true, false], false, &[3, 17]);
    let base = debris.num_vertices() as u32;
    debris
        .positions
        .extend([[10.0, 0.0, 0.0], [11.0, 0.0, 0.0], [10.5, 0.001, 0.0]]);
    debris.faces.push([base, base + 1, base + 2]);
    for (name, mesh) in [("sharp", &sharp), ("debris", &debris)] {
        check(mesh, &backend, target(mesh)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let survey = backend.survey(mesh).unwrap();
        let q = Quality::on_survey(&backend, mesh, &survey, target(mesh)).unwrap();
        assert!(
            q.min_angle < 1.0 && q.min_angle_away > 10.0,
            "{name}: the sliver's angle left out: {q:?}"
        );
    }
}

/// A topology built by the kernels is surveyed where it lies, not built
/// again (`Backend::survey_topology` checks only its counts): given the
/// topology of another mesh with as many vertices and faces, the survey
/// counts that topology's edges; one of another vertex count is built
/// again from the mesh.
#[test]
fn a_built_topology_is_surveyed_as_given() {
    let backend = test_backend();
    let positions = vec![
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 1.0, 0.0],
        [0.0, 1.0, 0.0],
        [2.0, 1.0, 0.0],
    ];
    let two_sharing_an_edge = TriMesh {
        positions: positions.clone(),
        faces: vec![[0, 1, 2], [0, 2, 3]],
    };
    let two_sharing_a_vertex = TriMesh {
        positions,
        faces: vec![[0, 1, 2], [2, 3, 4]],
    };
    let built = backend.build_topology(&two_sharing_an_edge).unwrap();
    let survey = backend
        .survey_topology(&two_sharing_a_vertex, built)
        .unwrap();
    assert_eq!(
        survey.stats().edges,
        5,
        "the topology given was built again"
    );
    let mut fewer = two_sharing_an_edge.clone();
    fewer.positions.pop();
    let built = backend.build_topology(&fewer).unwrap();
    let survey = backend
        .survey_topology(&two_sharing_a_vertex, built)
        .unwrap();
    assert_eq!(*survey.stats(), topology_stats(&two_sharing_a_vertex));
}

#[test]
fn real_meshes() {
    let backend = test_backend();
    for mesh in [cavity_tests::bundled_mesh(), cavity_tests::bunny_scan()] {
        check(&mesh, &backend, target(&mesh)).unwrap();
        check(&mesh, &backend, 0.5 * target(&mesh)).unwrap();
        check_from_topology(&mesh, &backend).unwrap();
        check_info(&mesh, &backend, 512).unwrap();
    }
}

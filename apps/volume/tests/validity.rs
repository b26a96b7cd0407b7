//! Cell validity (issue 52 item 3): the scaled Jacobian of every cell
//! type, the linear split's validity, the relaxation that keeps
//! Catmull-Clark subdivision and Laplacian smoothing from inverting
//! cells, the memory plan of subdivision levels, and all of it on a real
//! TetGen mesh of the repaired Stanford bunny scan
//! (`tests/data/bunny-tetgen.node/.ele`, see `tests/data/README.md`).
//! The backend is the test backend (`CAVITY_TEST_DEVICE`).

use std::path::PathBuf;

use cavity_tests::test_backend;
use cavity_volume::boundary::{SMOOTHING_FLOOR, boundary, smooth_valid};
use cavity_volume::io::read_volume;
use cavity_volume::quality::{
    HALVINGS, Validity, is_inverted, keep_valid, min_dihedral_angle, quality, scaled_jacobian,
};
use cavity_volume::signed::index;
use cavity_volume::subdivide::{linear_split, plan, subdivide_serial, subdivide_valid};
use cavity_volume::{CellVertices, VolumeError, VolumeMesh, check_count, setting};
use proptest::prelude::*;

mod grid;
use grid::grid;

/// The reference cells' vertices: the unit cube's corners (bottom
/// counter-clockwise seen from the top, then the top), a prism's and a
/// pyramid's.
fn reference(kind: usize) -> (Vec<[f32; 3]>, CellVertices) {
    let cube = vec![
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 1.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
        [1.0, 0.0, 1.0],
        [1.0, 1.0, 1.0],
        [0.0, 1.0, 1.0],
    ];
    match kind {
        0 => (
            vec![
                [0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0],
                [0.0, 1.0, 0.0],
                [0.0, 0.0, 1.0],
            ],
            CellVertices::Tetrahedron([0, 1, 2, 3]),
        ),
        1 => (cube, CellVertices::Hexahedron([0, 1, 2, 3, 4, 5, 6, 7])),
        2 => (
            vec![
                [0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0],
                [0.0, 1.0, 0.0],
                [0.0, 0.0, 1.0],
                [1.0, 0.0, 1.0],
                [0.0, 1.0, 1.0],
            ],
            CellVertices::Prism([0, 1, 2, 3, 4, 5]),
        ),
        _ => (
            cube[..4].iter().copied().chain([[0.5, 0.5, 1.0]]).collect(),
            CellVertices::Pyramid([0, 1, 2, 3, 4]),
        ),
    }
}

/// `p` under the affine map `x ↦ A x + b`.
fn affine(p: &[[f32; 3]], a: [[f32; 3]; 3], b: [f32; 3]) -> Vec<[f32; 3]> {
    p.iter()
        .map(|x| std::array::from_fn(|i| a[i][0] * x[0] + a[i][1] * x[1] + a[i][2] * x[2] + b[i]))
        .collect()
}

fn det(a: [[f32; 3]; 3]) -> f32 {
    a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1])
        - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
        + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0])
}

#[test]
fn reference_cells_are_valid_and_their_mirror_images_inverted() {
    for kind in 0..4 {
        let (p, cell) = reference(kind);
        let j = scaled_jacobian(&cell, &p);
        assert!(j > 0.4, "{cell:?}: {j}");
        // The same cell through its outward face loops: the corners' cyclic
        // order read off the faces gives the same value as the tables.
        let generic = CellVertices::Polyhedron(cell.faces());
        assert!(
            (scaled_jacobian(&generic, &p) - j).abs() < 1e-12,
            "{cell:?}"
        );
        let mirrored = affine(
            &p,
            [[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
            [0.0; 3],
        );
        assert!(is_inverted(&cell, &mirrored), "{cell:?}");
        assert!(is_inverted(&generic, &mirrored), "{cell:?}");
    }
    let (cube, hex) = reference(1);
    assert!((scaled_jacobian(&hex, &cube) - 1.0).abs() < 1e-12);
    // A flat corner is inverted: the top face pushed down onto the bottom
    // at one corner.
    let mut squashed = cube.clone();
    squashed[6] = [1.0, 1.0, 0.0];
    assert!(is_inverted(&hex, &squashed));
}

#[test]
fn dihedral_angles_of_the_regular_and_the_flat_tetrahedron() {
    let regular = [
        [1.0, 1.0, 1.0],
        [1.0, -1.0, -1.0],
        [-1.0, 1.0, -1.0],
        [-1.0, -1.0, 1.0],
    ];
    let a = min_dihedral_angle([0, 1, 2, 3], &regular);
    assert!((a - (1.0f64 / 3.0).acos().to_degrees()).abs() < 1e-4, "{a}");
    let flat = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.3, 0.3, 0.0],
    ];
    assert!(min_dihedral_angle([0, 1, 2, 3], &flat) < 1e-6);
}

/// The cells of one level of the linear split of `m`, and its positions.
fn linear_level(m: &VolumeMesh) -> (Vec<CellVertices>, Vec<[f32; 3]>) {
    let next = subdivide_serial(m).expect("subdivides");
    let [v, e, f, _] = m.counts();
    let positions = linear_split(m, &next.positions()[v + e + f..]);
    (next.cells(), positions)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cavity_tests::cases(64)))]

    /// The claim the default subdivision rests on: the linear split of a
    /// valid cell is valid. Exact for tetrahedra (an affine image of the
    /// regular tetrahedron's split) and for every cell type under an affine
    /// map; checked here on random affine images of each type, each vertex
    /// then moved by up to 5 % of the cell's size.
    #[test]
    fn the_linear_split_of_valid_cells_is_valid(
        kind in 0usize..4,
        a in prop::array::uniform3(prop::array::uniform3(-2.0f32..2.0)),
        jitter in prop::collection::vec(prop::array::uniform3(-0.05f32..0.05), 8),
    ) {
        prop_assume!(det(a) > 0.2);
        let (p, cell) = reference(kind);
        let mut p = affine(&p, a, [0.5, -1.0, 2.0]);
        let size = (det(a)).cbrt();
        for (x, d) in p.iter_mut().zip(&jitter) {
            for k in 0..3 {
                x[k] += d[k] * size;
            }
        }
        prop_assume!(!is_inverted(&cell, &p));
        let m = VolumeMesh::from_cells(p, std::slice::from_ref(&cell)).unwrap();
        let (cells, positions) = linear_level(&m);
        for c in &cells {
            prop_assert!(!is_inverted(c, &positions), "{:?} in {:?}", c, cell);
        }
    }

    /// The relaxation ends, leaves no cell inverted that is valid at the
    /// fallback, and moves only vertices of cells the plain positions
    /// invert.
    #[test]
    fn relaxed_positions_invert_no_cell_valid_at_the_fallback(
        seed in 0u64..1000,
        scale in 0.05f32..2.0,
    ) {
        let (positions, cells) = grid([4, 4, 4], 0.1, seed % 7, |_| true, |_| false);
        let to: Vec<[f32; 3]> = positions
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let h = |k: u64| {
                    let v = ((i as u64 + 1) * 0x9E37_79B9 + k * 7919 + seed * 104_729)
                        .wrapping_mul(0x2545_F491_4F6C_DD1D);
                    ((v >> 40) % 2001) as f32 / 1000.0 - 1.0
                };
                [p[0] + scale * h(1), p[1] + scale * h(2), p[2] + scale * h(3)]
            })
            .collect();
        let (out, report) = keep_valid(&cells, &positions, &to, 0.0);
        let q = quality(&cells, &out);
        prop_assert_eq!(q.inverted, 0);
        prop_assert_eq!(report.plain_inverted, quality(&cells, &to).inverted);
        prop_assert!(report.rounds <= u32::from(HALVINGS) * positions.len() as u32);
        if report.plain_inverted == 0 {
            prop_assert_eq!(&out, &to);
        }
    }
}

/// The TetGen mesh of the repaired, simplified bunny scan.
fn bunny() -> (VolumeMesh, Vec<CellVertices>) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/bunny-tetgen.node");
    let m = read_volume(&path).expect("the bunny reads").oriented();
    let mesh = VolumeMesh::from_cells(m.positions, &m.cells).expect("the bunny builds");
    (mesh, m.cells)
}

#[test]
fn the_bunny_subdivides_into_valid_cells_and_the_plain_rules_invert_some() {
    let (mesh, cells) = bunny();
    let input = quality(&cells, mesh.positions());
    assert_eq!(input.inverted, 0, "TetGen's tetrahedra are valid");
    let backend = test_backend();
    let kept = subdivide_valid(&backend, &mesh, 1, Validity::Keep, |_| ()).unwrap();
    let r = kept.levels[0];
    assert_eq!(r.quality.cells, 4 * cells.len());
    assert_eq!(r.quality.inverted, 0, "{r:?}");
    assert!(r.quality.min_scaled_jacobian > 0.0, "{r:?}");
    // The cells of the output are those written: checked again from them.
    assert_eq!(quality(&kept.cells, kept.mesh.positions()).inverted, 0);
    let plain = subdivide_valid(&backend, &mesh, 1, Validity::Plain, |_| ()).unwrap();
    let p = plain.levels[0];
    // The thin ears invert cells under the plain rules: what the default
    // repairs, and what this test would miss if the relaxation did nothing.
    assert!(p.quality.inverted > 0, "{p:?}");
    assert_eq!(p.plain_inverted, p.quality.inverted);
    assert_eq!(
        r.plain_inverted, p.quality.inverted,
        "both count the same plain cells"
    );
    assert!(r.relaxation.relaxed_vertices > 0);
    // Only the neighbourhoods of inverted cells move: everything else is
    // the plain mesh, bit for bit.
    let moved = (kept.mesh.positions().iter())
        .zip(plain.mesh.positions())
        .filter(|(a, b)| a != b)
        .count();
    assert_eq!(moved, r.relaxation.relaxed_vertices);
}

#[test]
fn the_bunny_smooths_without_inverting_a_tetrahedron() {
    let (mesh, cells) = bunny();
    let backend = test_backend();
    let (positions, report) = smooth_valid(&backend, &mesh, &cells, 10, Validity::Keep).unwrap();
    assert_eq!(report.after.inverted, 0, "{report:?}");
    // No cell worse than the floor or its input quality, the smaller.
    let least = report.before.min_scaled_jacobian.min(SMOOTHING_FLOOR);
    assert!(report.after.min_scaled_jacobian >= least, "{report:?}");
    assert!(report.relaxed_moves > 0, "{report:?}");
    assert_eq!(quality(&cells, &positions).inverted, 0);
    let before = report.before.min_dihedral_angle.expect("tetrahedra");
    let after = report.after.min_dihedral_angle.expect("tetrahedra");
    assert!(before > 0.0 && after > 0.0, "{before} {after}");
    // The boundary stays where it is.
    let b = boundary(&backend, &mesh).unwrap();
    for &v in &b.vertices {
        assert_eq!(positions[v as usize], mesh.positions()[v as usize]);
    }
    let (_, plain) = smooth_valid(&backend, &mesh, &cells, 10, Validity::Plain).unwrap();
    assert_eq!(plain.before, report.before);
    // The plain steps do what the default prevents.
    assert!(plain.after.inverted > 0, "{plain:?}");
}

#[test]
fn the_bunny_has_a_closed_boundary() {
    let (mesh, _) = bunny();
    let b = boundary(&test_backend(), &mesh).unwrap();
    // Every boundary edge in exactly two boundary faces, and the surface a
    // sphere (MeshFix joined the scan into one closed component).
    let mut uses = vec![0u32; mesh.edges().len()];
    for &f in &b.faces {
        for &e in mesh.d2().row(index(f)) {
            uses[index(e) as usize] += 1;
        }
    }
    for &e in &b.edges {
        assert_eq!(uses[e as usize], 2, "edge {e}");
    }
    let euler = b.vertices.len() as i64 - b.edges.len() as i64 + b.faces.len() as i64;
    assert_eq!(euler, 2);
}

#[test]
fn the_plan_gives_each_levels_counts_and_refuses_what_cannot_fit() {
    let (positions, cells) = grid([2, 2, 2], 0.1, 1, |_| true, |_| false);
    let mesh = VolumeMesh::from_cells(positions, &cells).unwrap();
    let backend = test_backend();
    let estimate = plan(&mesh, 3, &backend).unwrap();
    let mut m = mesh.clone();
    for counts in &estimate.counts {
        m = subdivide_serial(&m).unwrap();
        assert_eq!(&m.counts(), counts);
    }
    assert!(estimate.host_bytes > 0 && estimate.device_bytes > 0);
    estimate.check(3, Some(u64::MAX), Some(u64::MAX)).unwrap();
    let error = estimate.check(3, Some(1 << 20), None).unwrap_err();
    assert!(
        matches!(error, VolumeError::Oversized { levels: 3, .. }),
        "{error}"
    );
    assert!(error.to_string().contains("GiB of host memory"), "{error}");
    let error = plan(&mesh, 10, &backend).unwrap_err();
    assert!(error.to_string().contains("lower the levels"), "{error}");
    assert_eq!(cavity::settings::settings_of(&error), vec![setting::LEVELS]);
}

#[test]
fn zero_levels_or_steps_are_refused() {
    for s in [setting::LEVELS, setting::ITERATIONS] {
        let error = check_count(s, 0).unwrap_err();
        assert_eq!(cavity::settings::settings_of(&error), vec![s]);
        check_count(s, 1).unwrap();
    }
}

//! A user's own tetrahedral collapse criterion (`tests/kernels`,
//! `collapse::BelowHeight`, issue 54 item 3) runs through
//! `cavity_tet_collapse::parallel` on the test backend (the GPU with
//! `CAVITY_TEST_DEVICE=cuda`, its kernels from the user's PTX): on the
//! TetGen bunny it collapses edges below the height and leaves the mesh
//! above it as it was, and the result is valid.

use cavity_test_kernels::collapse::BelowHeight;
use cavity_tests::test_backend;
use cavity_tet_collapse::checks::check_valid;
use cavity_tet_collapse::parallel::collapse_parallel;
use cavity_tet_collapse::{Settings, TetMesh};

#[test]
fn a_users_criterion_collapses_only_where_it_says() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../apps/volume/tests/data");
    let cells = cavity_volume::io::read_volume(&data.join("bunny-tetgen.ele")).unwrap();
    let input = TetMesh::from_cells(cells).unwrap();
    let z: Vec<f32> = input.positions.iter().map(|p| p[2]).collect();
    let (lo, hi) = z
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    let criterion = BelowHeight {
        length: 0.1 * f64::from(hi - lo),
        z: f64::from(0.5 * (lo + hi)),
    };
    let (out, _, report) = collapse_parallel(
        &test_backend(),
        &input,
        &[],
        criterion,
        &Settings::default(),
    )
    .unwrap();
    check_valid(&out, 0.0).unwrap();
    let collapses: usize = report.iterations.iter().map(|i| i.collapses).sum();
    assert!(collapses > 100, "{collapses} collapses");
    // Above the height nothing moved: every vertex there is an input vertex.
    let above = |m: &TetMesh| -> Vec<[u32; 3]> {
        let mut v: Vec<[u32; 3]> = m
            .positions
            .iter()
            .filter(|p| f64::from(p[2]) >= criterion.z)
            .map(|p| p.map(f32::to_bits))
            .collect();
        v.sort_unstable();
        v
    };
    assert_eq!(above(&out), above(&input));
}

//! Every first-order query on generated meshes equals the reference mesh,
//! on the backend named by `CAVITY_TEST_DEVICE` (CPU by default).

use cavity_tests::{
    add_defects, any_mesh, check_device_patched_queries, check_queries, concat, fan, grid, soup,
    test_backend,
};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: cavity_tests::cases(64), ..ProptestConfig::default() })]

    #[test]
    fn queries_match_reference(mesh in any_mesh(), patch_size in prop_oneof![1u32..8, 8u32..64, 64u32..1024]) {
        let backend = test_backend();
        if let Err(e) = check_queries(&mesh, patch_size, &backend) {
            prop_assert!(false, "{e}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cavity_tests::cases(64), ..ProptestConfig::default() })]

    /// The same on the patches of the device's patcher (`Backend::partition`).
    #[test]
    fn queries_on_device_patches_match_reference(mesh in any_mesh(), patch_size in prop_oneof![1u32..8, 8u32..64, 64u32..1024]) {
        let backend = test_backend();
        if let Err(e) = check_device_patched_queries(&mesh, patch_size, &backend) {
            prop_assert!(false, "{e}");
        }
    }
}

proptest! {
    // Tiny meshes: many cases are cheap, and the bad configurations are rare.
    #![proptest_config(ProptestConfig { cases: cavity_tests::cases(512), ..ProptestConfig::default() })]

    /// Non-manifold soups: every vertex touched by a directed edge that two
    /// faces traverse must fall back to its unordered row.
    #[test]
    fn soups_match_reference(mesh in soup(), patch_size in prop_oneof![1u32..4, 512u32..513]) {
        let backend = test_backend();
        if let Err(e) = check_queries(&mesh, patch_size, &backend) {
            prop_assert!(false, "{e}");
        }
    }
}

#[test]
fn torus_rotational_order_at_every_patch_size() {
    let backend = test_backend();
    let torus = grid(12, 9, &[true, false, false], true, &[]);
    for patch_size in [1, 2, 5, 17, 64, 512] {
        check_queries(&torus, patch_size, &backend).unwrap();
    }
}

#[test]
fn special_cases() {
    let backend = test_backend();
    let cases = [
        fan(7, true),
        fan(5, false),
        add_defects(grid(3, 3, &[false], false, &[4]), 3, 2),
        concat(&[fan(4, true), grid(2, 2, &[true], false, &[]), fan(3, false)]),
        add_defects(cavity::TriMesh::default(), 0, 3),
    ];
    for mesh in &cases {
        for patch_size in [1, 3, 512] {
            check_queries(mesh, patch_size, &backend).unwrap();
        }
    }
}

#[test]
fn real_mesh_queries() {
    let backend = test_backend();
    let mesh = cavity_tests::bundled_mesh();
    check_queries(&mesh, 512, &backend).unwrap();
    check_queries(&mesh, 2048, &backend).unwrap();
    check_queries(&mesh, 64, &backend).unwrap();
    for patch_size in [64, 512] {
        check_device_patched_queries(&mesh, patch_size, &backend).unwrap();
        check_device_patched_queries(&cavity_tests::bunny_scan(), patch_size, &backend).unwrap();
    }
}

/// The largest patch size the patcher allows on the CPU backend, which has
/// no shared-memory limit.
#[test]
fn largest_patches_on_the_cpu_backend() {
    let mesh = cavity_tests::bundled_mesh();
    let backend = cavity::backend::Backend::Cpu(cavity::backend::cpu::CpuBackend::new());
    check_queries(&mesh, cavity::patcher::MAX_PATCH_SIZE, &backend).unwrap();
}

#[test]
fn active_set_limits_the_computation() {
    use cavity::backend::cpu::CpuBackend;
    use std::sync::Mutex;
    let mesh = grid(9, 7, &[false, true], false, &[5, 17]);
    let patched = cavity::PatchedMesh::new(&mesh, 16).unwrap();
    let seen = Mutex::new(Vec::new());
    CpuBackend::new().for_each(
        &patched,
        cavity::Query::VV,
        |v| v % 3 == 0,
        |v, ring| {
            assert!(!ring.is_empty());
            seen.lock().unwrap().push(v);
        },
    );
    let mut seen = seen.into_inner().unwrap();
    seen.sort_unstable();
    let expected: Vec<u32> = (0..mesh.positions.len() as u32)
        .filter(|v| v % 3 == 0)
        .collect();
    assert_eq!(seen, expected);
}

/// A one-ring of 11 000 faces (a patch far beyond the patch size, since
/// an owned vertex brings its whole ring) still gives rotational rows.
#[test]
fn large_one_ring_matches_reference() {
    let backend = cavity::backend::Backend::Cpu(cavity::backend::cpu::CpuBackend::new());
    check_queries(&fan(11_000, true), 512, &backend).unwrap();
}

/// A vertex whose one-ring alone exceeds the local-edge limit cannot be
/// patched: a clear error naming the patch and the limit, not wrong rows.
#[test]
fn oversized_one_ring_is_an_error() {
    let mesh = fan(17_000, true);
    let err =
        cavity::PatchedMesh::new(&mesh, 512).expect_err("one-ring above the local-edge limit");
    let text = err.to_string();
    assert!(
        text.contains("local edges") && text.contains("32767"),
        "{text}"
    );
}

//! The patch structures built on the device (`Backend::build_patches`)
//! equal the host's build (`PatchedMesh::from_partition`) array for array,
//! and answer every query as the reference mesh does: generated meshes
//! (grids with holes, fans, non-manifold edges, isolated vertices, soups,
//! shuffled), the bundled meshes and the bunny scan, and inputs over the
//! local limits (both builds refuse them). The backend comes from
//! `CAVITY_TEST_DEVICE` (CPU by default).

use cavity::backend::{Backend, BackendError, PartitionError};
use cavity::patcher::PatchError;
use cavity_tests::{
    add_defects, any_mesh, check_device_built_patches, check_patched, concat, fan, grid, soup,
    test_backend,
};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: cavity_tests::cases(64), ..ProptestConfig::default() })]

    #[test]
    fn generated_meshes(mesh in any_mesh(), patch_size in prop_oneof![1u32..8, 8u32..64, 64u32..1024]) {
        let backend = test_backend();
        if let Err(e) = check_device_built_patches(&mesh, patch_size, &backend) {
            prop_assert!(false, "{e}");
        }
    }

    #[test]
    fn soups(mesh in soup(), patch_size in prop_oneof![1u32..4, 512u32..513]) {
        let backend = test_backend();
        if let Err(e) = check_device_built_patches(&mesh, patch_size, &backend) {
            prop_assert!(false, "{e}");
        }
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
        cavity::TriMesh::default(),
    ];
    for mesh in &cases {
        for patch_size in [1, 3, 512] {
            check_device_built_patches(mesh, patch_size, &backend).unwrap();
        }
    }
}

#[test]
fn real_meshes() {
    let backend = test_backend();
    let bundled = cavity_tests::bundled_mesh();
    let scan = cavity_tests::bunny_scan();
    for patch_size in [64, 512, 2048] {
        check_device_built_patches(&bundled, patch_size, &backend).unwrap();
        check_device_built_patches(&scan, patch_size, &backend).unwrap();
    }
}

/// A vertex of 30 000 faces (its one-ring is over the local face limit)
/// and 70 000 isolated vertices (all owned by patch 0, over the vertex
/// limit): both builds refuse them (the GPU's may find the fan's gather
/// too large for a block's shared memory first), and so does
/// `Backend::patched`.
#[test]
fn inputs_over_the_local_limits() {
    let backend = test_backend();
    let refuses = |mesh: &cavity::TriMesh| {
        let topo = cavity::topology::Topology::new(mesh);
        let part = cavity::patcher::partition(&topo, mesh.num_faces(), 512, 7).unwrap();
        let error = backend.build_patches(mesh, &topo, &part, 512).unwrap_err();
        assert!(
            matches!(
                error,
                PartitionError::Patch(PatchError::LocalOverflow { .. })
            ) || matches!(
                (&backend, &error),
                (
                    Backend::Cuda(_),
                    PartitionError::Backend(BackendError::SharedMemory { .. })
                )
            ),
            "{error}"
        );
        assert!(cavity::PatchedMesh::from_partition(mesh, &topo, &part, 512).is_err());
        let error = backend.patched(mesh, &topo, 512).unwrap_err();
        assert!(
            matches!(
                error,
                PartitionError::Patch(PatchError::LocalOverflow { .. })
            ),
            "{error}"
        );
    };
    refuses(&fan(30_000, true));
    refuses(&add_defects(grid(4, 4, &[false], false, &[]), 0, 70_000));
}

/// An open fan of 16 000 faces (32 001 edges) fits the local limits; its
/// centre's gathers need more shared memory than a GPU block has, where
/// `Backend::patched` falls back to the host's build.
#[test]
fn a_vertex_of_huge_valence() {
    let backend = test_backend();
    let mesh = fan(16_000, false);
    let topo = cavity::topology::Topology::new(&mesh);
    let part = cavity::patcher::partition(&topo, mesh.num_faces(), 512, 7).unwrap();
    let built = backend.build_patches(&mesh, &topo, &part, 512);
    match &backend {
        Backend::Cpu(_) => {
            assert!(built.is_ok(), "{:?}", built.err());
            check_device_built_patches(&mesh, 512, &backend).unwrap();
        }
        Backend::Cuda(_) => {
            let error = built.unwrap_err();
            assert!(
                matches!(
                    error,
                    PartitionError::Backend(BackendError::SharedMemory { .. })
                ),
                "{error}"
            );
        }
    }
    // The GPU's query kernels cannot hold the centre's patch either: its
    // patches are only compared with the host's build of the same
    // partition there.
    match &backend {
        Backend::Cpu(_) => check_patched(&mesh, 512, &backend).unwrap(),
        Backend::Cuda(_) => {
            let patched = backend.patched(&mesh, &topo, 512).unwrap();
            let seed = cavity::patcher::DEFAULT_SEED;
            let part = backend
                .partition(&topo, mesh.num_faces(), 512, seed)
                .unwrap();
            let host = cavity::PatchedMesh::from_partition(&mesh, &topo, &part, 512).unwrap();
            assert_eq!(patched.patches(), host.patches());
            assert_eq!(patched.ribbon(), host.ribbon());
        }
    }
}

/// A shared window's size is a plain parameter of the checked kernels:
/// one whose bytes would wrap around 32 bits is taken at
/// `MAX_WINDOW` entries, and then the launch's small shared memory stops
/// the kernel (a panic on the CPU backend) instead of letting it write
/// past its window.
#[test]
fn a_window_past_32_bits_stops_the_kernel() {
    use cavity_device::patch_build::SortOwned;
    let backend = Backend::Cpu(cavity::backend::cpu::CpuBackend::new());
    let offsets = backend.upload(&[0u32, 5]).unwrap();
    let mut members = backend.upload(&[4u32, 3, 2, 1, 0]).unwrap();
    let mut handles = backend.zeros::<u32>(5).unwrap();
    let mut failed = backend.zeros::<u32>(1).unwrap();
    let launched = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let params = (
            &offsets,
            1u32 << 30,
            &mut members,
            &mut handles,
            &mut failed,
        );
        backend.launch::<SortOwned>(1, (64, 64), params)
    }));
    assert!(
        launched.is_err(),
        "the launch ran with a window of no bytes"
    );
    // The same lists sort with a window that fits.
    let params = (&offsets, 8u32, &mut members, &mut handles, &mut failed);
    backend.launch::<SortOwned>(1, (64, 64), params).unwrap();
    assert_eq!(backend.read_back(&members, 5).unwrap(), [0, 1, 2, 3, 4]);
    assert_eq!(backend.read_back(&handles, 5).unwrap(), [0, 1, 2, 3, 4]);
    assert_eq!(backend.element(&failed, 0).unwrap(), 0);
}

//! The dynamic layout made on the device from the device's patches
//! (`PatchBuffers::to_dynamic`, `Backend::place`) equals the host's
//! `DynamicMesh::from_patched_with` of the same patches array for array:
//! generated meshes (grids with holes, fans, non-manifold
//! edges, isolated vertices, soups, shuffled), the bundled mesh and the
//! bunny scan, with and without spare room and edge and face attributes;
//! and the rounds take a placed layout. The backend comes from
//! `CAVITY_TEST_DEVICE` (CPU by default).

use cavity::attributes::AttributeLayout;
use cavity::backend::PlaceError;
use cavity::dynamic::{CapacityFactors, DynamicError, DynamicMesh};
use cavity_tests::{any_mesh, check_placed, same_layout, soup, test_backend};
use proptest::prelude::*;

/// The layouts a test places: none of the user's attributes, and a
/// vertex, an edge and a face attribute (so that edges and faces keep
/// their input index too).
fn layouts() -> [AttributeLayout; 2] {
    let mut with = AttributeLayout::new();
    with.vertex::<f32, 2>("uv").unwrap();
    with.edge::<u32, 1>("mark").unwrap();
    with.face::<f32, 3>("normal").unwrap();
    [AttributeLayout::new(), with]
}

/// No spare room, the dynamic applications' default, and uneven factors.
const FACTORS: [CapacityFactors; 3] = [
    CapacityFactors::STATIC,
    CapacityFactors {
        elements: 2.0,
        patches: 2.0,
    },
    CapacityFactors {
        elements: 1.3,
        patches: 1.1,
    },
];

proptest! {
    #![proptest_config(ProptestConfig { cases: cavity_tests::cases(48), ..ProptestConfig::default() })]

    #[test]
    fn generated_meshes(
        mesh in any_mesh(),
        patch_size in prop_oneof![1u32..8, 8u32..64, 64u32..1024],
        factors in 0usize..3,
        layout in 0usize..2,
    ) {
        let backend = test_backend();
        let layout = &layouts()[layout];
        if let Err(e) = check_placed(&mesh, patch_size, FACTORS[factors], layout, &backend) {
            prop_assert!(false, "{e}");
        }
    }

    #[test]
    fn soups(mesh in soup(), patch_size in prop_oneof![1u32..4, 512u32..513]) {
        let backend = test_backend();
        for layout in &layouts() {
            if let Err(e) = check_placed(&mesh, patch_size, FACTORS[1], layout, &backend) {
                prop_assert!(false, "{e}");
            }
        }
    }
}

#[test]
fn real_meshes() {
    let backend = test_backend();
    let bundled = cavity_tests::bundled_mesh();
    let scan = cavity_tests::bunny_scan();
    for patch_size in [64, 512] {
        for factors in FACTORS {
            for layout in &layouts() {
                check_placed(&bundled, patch_size, factors, layout, &backend).unwrap();
                check_placed(&scan, patch_size, factors, layout, &backend).unwrap();
            }
        }
    }
}

/// A factor below 1 is refused before anything is made, as by the host.
#[test]
fn bad_factors_are_refused() {
    let backend = test_backend();
    let mesh = cavity_tests::bundled_mesh();
    let topo = cavity::topology::Topology::new(&mesh);
    let factors = CapacityFactors {
        elements: 0.5,
        patches: 1.0,
    };
    let error = backend
        .place(&mesh, &topo, 64, factors, &AttributeLayout::new())
        .unwrap_err();
    assert!(
        matches!(error, PlaceError::Dynamic(DynamicError::Factor { .. })),
        "{error}"
    );
}

/// The rounds take a placed layout as it lies (on the GPU without an
/// upload) and give it back to the host as made when no round runs; the
/// remeshing suite runs its rounds on placed layouts (`cavity_remesh::prepare`
/// places on the backend it is given).
#[test]
fn rounds_take_a_placed_layout() {
    use cavity::rounds::{Rounds, RunError};
    let backend = test_backend();
    let mesh = cavity_tests::bunny_scan();
    let topo = cavity::topology::Topology::new(&mesh);
    let part = cavity::patcher::partition(&topo, mesh.num_faces(), 512, 7).unwrap();
    let buffers = backend.patch_buffers(&mesh, &topo, &part, 512).unwrap();
    let [layout, _] = layouts();
    let placed = buffers
        .to_dynamic(&backend, &mesh, FACTORS[1], &layout)
        .unwrap();
    assert!(placed.is_resident());
    let patched = buffers.download(&backend, &topo).unwrap();
    let host = DynamicMesh::from_patched_with(&mesh, &patched, FACTORS[1], &layout).unwrap();
    let (ran, out) = backend
        .run_placed(
            placed,
            |r| Ok::<_, RunError>(r.mesh()?.num_elements()),
            |e| e,
        )
        .unwrap();
    assert_eq!(ran.value, host.num_elements());
    same_layout(&host, &out).unwrap();
    out.validate(false).unwrap();
}

/// `Rounds::owned_words` (on the GPU gathered by input index, read back
/// without the mesh) and the reads built on it give what the host's
/// `DynamicMesh::owned_words` of the same patches' host layout gives:
/// every kind's core and user words, the positions, the owner patches; a
/// kind without input indices (the edges of a layout without edge
/// attributes) falls back to copying the mesh back; words past an
/// element's are refused.
#[test]
fn owned_words_read_back_as_the_host_reads_them() {
    use cavity::Kind;
    use cavity::rounds::{Rounds, RunError};
    let backend = test_backend();
    let mesh = cavity_tests::bunny_scan();
    let topo = cavity::topology::Topology::new(&mesh);
    let part = cavity::patcher::partition(&topo, mesh.num_faces(), 512, 7).unwrap();
    for layout in &layouts() {
        let buffers = backend.patch_buffers(&mesh, &topo, &part, 512).unwrap();
        let placed = buffers
            .to_dynamic(&backend, &mesh, FACTORS[1], layout)
            .unwrap();
        let patched = buffers.download(&backend, &topo).unwrap();
        let host = DynamicMesh::from_patched_with(&mesh, &patched, FACTORS[1], layout).unwrap();
        let cap = placed.cap();
        let read = backend
            .run_placed_without_mesh(placed, |r| -> Result<_, RunError> {
                let mut read = Vec::new();
                for kind in Kind::ALL {
                    read.push(r.owned_words(kind, 0, cap.attr_stride(kind))?);
                }
                let refused = r.owned_words(Kind::Vertex, 1, cap.attr_stride(Kind::Vertex));
                assert!(
                    matches!(refused, Err(RunError::Attribute(_))),
                    "{refused:?}"
                );
                Ok((read, r.vertex_positions()?, r.owner_patches(Kind::Vertex)?))
            })
            .unwrap()
            .value;
        let (words, positions, owners) = read;
        for (kind, got) in Kind::ALL.into_iter().zip(words) {
            let expected = host.owned_words(kind, 0, cap.attr_stride(kind)).unwrap();
            assert!(got == expected, "{kind:?}: the words read back differ");
        }
        assert!(positions == host.vertex_positions(), "the positions differ");
        let expected = (host.sources(Kind::Vertex), host.owner_patches(Kind::Vertex));
        assert!(owners == expected, "the owner patches differ");
    }
}

/// `Rounds::set_by_input` writes every local element's words, ribbon
/// copies included, from an array by input index (on the GPU without
/// copying the mesh), as the host's `DynamicMesh::set_words_by_input` on
/// the host layout of the same patches does; `Rounds::owner_patches` and
/// `Rounds::neighbour_patches` read what the copied-back mesh holds; values
/// of the wrong length and writes over the input index are refused.
#[test]
fn words_set_by_input_reach_every_copy() {
    use cavity::Kind;
    use cavity::rounds::{Rounds, RunError};
    let backend = test_backend();
    let mesh = cavity_tests::bunny_scan();
    let topo = cavity::topology::Topology::new(&mesh);
    let part = cavity::patcher::partition(&topo, mesh.num_faces(), 512, 7).unwrap();
    let [_, layout] = layouts();
    let buffers = backend.patch_buffers(&mesh, &topo, &part, 512).unwrap();
    let placed = buffers
        .to_dynamic(&backend, &mesh, FACTORS[0], &layout)
        .unwrap();
    let patched = buffers.download(&backend, &topo).unwrap();
    let mut host = DynamicMesh::from_patched_with(&mesh, &patched, FACTORS[0], &layout).unwrap();
    let cap = placed.cap();
    // The user's words of each kind (after the core's) and their values
    // by input index: word `w` of input element `i`.
    let writes: Vec<(Kind, u32, u32, Vec<u32>)> = Kind::ALL
        .into_iter()
        .map(|kind| {
            let first = if kind == Kind::Vertex { 4 } else { 1 };
            let words = cap.attr_stride(kind) - first;
            let inputs = host.input_count(kind);
            let values = (0..inputs)
                .flat_map(|i| (0..words).map(move |w| i * 7 + w + 1000 * kind as u32))
                .collect();
            (kind, first, words, values)
        })
        .collect();
    for (kind, first, words, values) in &writes {
        host.set_words_by_input(*kind, *first, *words, values)
            .unwrap();
    }
    let (ran, out) = backend
        .run_placed(
            placed,
            |r| -> Result<_, RunError> {
                for (kind, first, words, values) in &writes {
                    r.set_by_input(*kind, *first, *words, values)?;
                    let short = r.set_by_input(*kind, *first, *words, &values[1..]);
                    assert!(matches!(short, Err(RunError::Attribute(_))), "{short:?}");
                }
                let over = r.set_by_input(Kind::Vertex, 3, 1, &vec![0; mesh.num_vertices()]);
                assert!(matches!(over, Err(RunError::Attribute(_))), "{over:?}");
                Ok((r.owner_patches(Kind::Vertex)?, r.neighbour_patches()?))
            },
            |e| e,
        )
        .unwrap();
    same_layout(&host, &out).unwrap();
    let (owners, neighbours) = ran.value;
    assert!(owners == (host.sources(Kind::Vertex), host.owner_patches(Kind::Vertex)));
    let expected: Vec<Vec<u32>> = (0..host.num_patches())
        .map(|p| host.neighbour_patches(p).collect())
        .collect();
    assert!(neighbours == expected, "the neighbour patches differ");
    // Every local element, owned or not, holds its input's words.
    let s = out.storage();
    for (kind, first, words, values) in &writes {
        let all = match kind {
            Kind::Vertex => s.vertex_attrs,
            Kind::Edge => s.edge_attrs,
            Kind::Face => s.face_attrs,
        };
        let index_word = if *kind == Kind::Vertex { 3 } else { 0 };
        for p in 0..out.num_patches() {
            for l in 0..out.counts(p)[*kind as usize] {
                let at = |w: u32| all[cap.attr_index(*kind, (p, l), w) as usize];
                let input = at(index_word) as usize;
                for w in 0..*words {
                    let expected = values[input * *words as usize + w as usize];
                    assert_eq!(at(first + w), expected, "{kind:?} {p} {l}");
                }
            }
        }
    }
}

/// A topology that keeps its patches (`TopologyOn::keeping_patches`)
/// places the mesh again on the patches of its first placement, the
/// positions moved: the layout equals a fresh placement's; another patch
/// size patches anew; a topology that does not keep them keeps none.
#[test]
fn kept_patches_place_moved_positions_as_fresh_patches_do() {
    use cavity::backend::TopologyOn;
    let backend = test_backend();
    let mesh = cavity_tests::bunny_scan();
    let topo = cavity::topology::Topology::new(&mesh);
    let [layout, _] = layouts();
    let kept = TopologyOn::of(&backend, &topo).unwrap().keeping_patches();
    assert_eq!(kept.kept_patch_size(), None);
    backend
        .place_on(&mesh, &kept, 512, FACTORS[1], &layout)
        .unwrap();
    assert_eq!((kept.kept_patch_size(), kept.patchings()), (Some(512), 1));
    let mut moved = mesh.clone();
    for p in &mut moved.positions {
        p[2] += 0.25 * p[0];
    }
    let again = backend
        .place_on(&moved, &kept, 512, FACTORS[1], &layout)
        .unwrap()
        .into_host(&backend)
        .unwrap();
    let fresh = backend
        .place(&moved, &topo, 512, FACTORS[1], &layout)
        .unwrap()
        .into_host(&backend)
        .unwrap();
    // Placed on the kept patches: no patching.
    assert_eq!(kept.patchings(), 1);
    same_layout(&fresh, &again).unwrap();
    assert_eq!(again.vertex_positions(), fresh.vertex_positions());
    backend
        .place_on(&mesh, &kept, 256, FACTORS[1], &layout)
        .unwrap();
    assert_eq!((kept.kept_patch_size(), kept.patchings()), (Some(256), 2));
    let plain = TopologyOn::of(&backend, &topo).unwrap();
    backend
        .place_on(&mesh, &plain, 512, FACTORS[1], &layout)
        .unwrap();
    assert_eq!((plain.kept_patch_size(), plain.patchings()), (None, 0));
}

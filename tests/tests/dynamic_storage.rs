//! The dynamic layout built from static patches (`cavity::dynamic`): it
//! validates, exports the input mesh back, and its validator catches
//! deliberate corruptions with the right error.

use cavity::dynamic::{
    CapacityFactors, DynamicError, DynamicMesh, MIN_SPARE_PATCH_SLOTS, StorageMut, ValidationError,
    ValidationProblem,
};
use cavity::settings::{NamesSettings, Setting};
use cavity::{Kind, TriMesh};
use cavity_device::dynamic::hash::{self, EMPTY};
use cavity_device::dynamic::layout::{HASH_OVERFLOW, LOCAL_MASK, MAX_CAPACITY, VERTEX_CORE_ATTRS};
use cavity_device::layout::FE_REVERSED;
use cavity_reference::ReferenceMesh;
use cavity_tests::{add_defects, bundled_mesh, fan, grid};

/// Faces as position triples (bits), each rotated to start at its smallest
/// corner, sorted.
fn face_set(mesh: &TriMesh) -> Vec<[[u32; 3]; 3]> {
    let mut out: Vec<[[u32; 3]; 3]> = mesh
        .faces
        .iter()
        .map(|f| {
            let c = f.map(|v| mesh.positions[v as usize].map(f32::to_bits));
            let r = (0..3).min_by_key(|&r| c[r]).expect("three corners");
            [c[r], c[(r + 1) % 3], c[(r + 2) % 3]]
        })
        .collect();
    out.sort_unstable();
    out
}

fn build(mesh: &TriMesh, patch_size: u32) -> DynamicMesh {
    DynamicMesh::new(mesh, patch_size, CapacityFactors::default()).expect("dynamic mesh builds")
}

fn check_round_trip(name: &str, mesh: &TriMesh, patch_size: u32) {
    let reference = ReferenceMesh::new(mesh).expect("reference");
    let stats = reference.stats();
    let manifold = stats.non_manifold_edges == 0 && stats.non_manifold_vertices == 0;
    let mut d = build(mesh, patch_size);
    let what = format!("{name}, patch size {patch_size}");
    d.validate(manifold)
        .unwrap_or_else(|e| panic!("{what}: {e}"));

    // Capacities as documented.
    let cap = d.cap();
    for c in [cap.vertices, cap.edges, cap.faces] {
        assert!(c % 32 == 0 && c > 0 && c <= MAX_CAPACITY, "{what}: {cap:?}");
    }
    for kind in Kind::ALL {
        assert_eq!(cap.hash_slots(kind), cap.of(kind), "{what}");
    }
    assert_eq!(
        cap.hash_stride(),
        cap.vertices + cap.edges + cap.faces + 3 * HASH_OVERFLOW,
        "{what}"
    );
    let spare = d.num_patches() + MIN_SPARE_PATCH_SLOTS as u32;
    assert_eq!(cap.patches, (2 * d.num_patches()).max(spare), "{what}");
    assert_eq!(cap.vertex_attrs, VERTEX_CORE_ATTRS);
    // `to_mesh` keeps the input's vertex numbering.
    let back = d.to_mesh();
    assert_eq!(back.positions, mesh.positions, "{what}");
    let sorted = |m: &TriMesh| {
        let mut f: Vec<[u32; 3]> = m
            .faces
            .iter()
            .map(|f| {
                let r = (0..3).min_by_key(|&r| f[r]).expect("three corners");
                [f[r], f[(r + 1) % 3], f[(r + 2) % 3]]
            })
            .collect();
        f.sort_unstable();
        f
    };
    assert_eq!(sorted(&back), sorted(mesh), "{what}");
    for p in 0..d.num_patches() {
        let [v, e, f] = d.counts(p);
        assert!(2 * v <= cap.vertices && 2 * e <= cap.edges && 2 * f <= cap.faces);
    }
    assert_eq!(d.input_count(Kind::Vertex) as usize, mesh.num_vertices());
    assert_eq!(d.patch_size(), patch_size);

    // Export: the same vertices and faces.
    assert_eq!(
        d.num_elements(),
        [
            reference.num_vertices(),
            reference.num_edges(),
            reference.num_faces()
        ],
        "{what}"
    );
    let (out, face_patch) = d.export();
    assert_eq!(out.num_vertices(), mesh.num_vertices(), "{what}");
    assert_eq!(out.num_faces(), mesh.num_faces(), "{what}");
    assert_eq!(face_patch.len(), out.num_faces());
    assert!(face_patch.iter().all(|&p| p < d.num_patches()));
    assert_eq!(face_set(&out), face_set(mesh), "{what}");
    let mut positions: Vec<[u32; 3]> = out.positions.iter().map(|x| x.map(f32::to_bits)).collect();
    let mut input: Vec<[u32; 3]> = mesh.positions.iter().map(|x| x.map(f32::to_bits)).collect();
    positions.sort_unstable();
    input.sort_unstable();
    assert_eq!(positions, input, "{what}");

    // Every local face's corners carry their owners' positions.
    for p in 0..d.num_patches() {
        for f in (0..d.counts(p)[2]).filter(|&f| d.is_active(p, Kind::Face, f)) {
            for v in d.face_vertices(p, f) {
                let (q, l) = d.owner(p, Kind::Vertex, v).expect("vertex has an owner");
                assert!(d.is_owned(q, Kind::Vertex, l));
                assert_eq!(d.position(p, v), d.position(q, l), "{what}");
            }
        }
    }

    // Sizes and raw addresses.
    assert!(d.bytes() > 0 && d.bytes_per_face() > 0.0);
    let raw = d.raw();
    assert_eq!(raw.cap, d.cap());
    assert_eq!(raw.num_patches, d.num_patches());
    assert_eq!(raw.fe, d.storage().fe.as_ptr() as u64);
    assert_eq!(raw.hash, d.storage().hash.as_ptr() as u64);
    assert_eq!(raw.stats, d.storage().stats.as_ptr() as u64);
    assert!(d.storage().queue.iter().all(|&q| q == u32::MAX));
}

#[test]
fn grids_torus_and_bundled_mesh_round_trip() {
    let meshes = [
        ("grid", grid(20, 17, &[false, true, true], false, &[5, 40])),
        ("torus", grid(24, 18, &[true, false], true, &[])),
        (
            "grid with defects",
            add_defects(grid(12, 12, &[false], false, &[]), 2, 3),
        ),
        ("bundled", bundled_mesh()),
    ];
    for (name, mesh) in &meshes {
        for patch_size in [8, 64, 512] {
            check_round_trip(name, mesh, patch_size);
        }
    }
}

#[test]
fn manifold_checks() {
    let d = build(&add_defects(grid(6, 6, &[false], false, &[]), 2, 0), 8);
    d.validate(false).expect("valid but not manifold");
    let e = d.validate(true).expect_err("a non-manifold edge");
    assert_eq!(e.problem, ValidationProblem::NonManifoldEdge { faces: 3 });

    // Two triangles meeting at one vertex.
    let bowtie = TriMesh {
        positions: vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [1.0, 1.0, 0.0],
            [-1.0, 0.0, 0.0],
            [-1.0, -1.0, 0.0],
        ],
        faces: vec![[0, 1, 2], [0, 3, 4]],
    };
    let d = build(&bowtie, 1);
    d.validate(false).expect("valid but not manifold");
    let e = d.validate(true).expect_err("a non-manifold vertex");
    assert_eq!(e.problem, ValidationProblem::NonManifoldVertex { fans: 2 });
    assert_eq!(e.element.map(|x| x.0), Some(Kind::Vertex));
}

#[test]
fn input_defects_the_layout_rejects() {
    // One face turned over: its edges with the neighbours are traversed
    // twice in the same direction.
    let mut mesh = grid(6, 6, &[false], false, &[]);
    mesh.faces[20].swap(1, 2);
    let turned = build(&mesh, 8);
    let e = turned.validate(false).expect_err("orientation");
    assert_eq!(e.problem, ValidationProblem::Orientation);
    assert_eq!(e.element.map(|x| x.0), Some(Kind::Edge));
    // Everything else holds: the unoriented validation passes it, and
    // still finds the repeated face below.
    turned
        .validate_unoriented(true)
        .expect("valid apart from the orientation");

    // A repeated face.
    let mut mesh = grid(6, 6, &[false], false, &[]);
    mesh.faces.push(mesh.faces[3]);
    let e = build(&mesh, 8).validate(false).expect_err("duplicate");
    let unoriented = build(&mesh, 8)
        .validate_unoriented(false)
        .expect_err("duplicate, whatever the orientation");
    assert_eq!(unoriented.problem, e.problem);
    assert!(
        matches!(e.problem, ValidationProblem::DuplicateElement { .. }),
        "{e}"
    );
}

#[test]
fn bad_factors_are_refused() {
    let mesh = grid(4, 4, &[false], false, &[]);
    let bad = [f32::NAN, f32::INFINITY, 0.5, -2.0];
    for value in bad {
        for (setting, factors) in [
            (
                Setting::CAPACITY_FACTOR,
                CapacityFactors {
                    elements: value,
                    ..CapacityFactors::default()
                },
            ),
            (
                Setting::PATCH_FACTOR,
                CapacityFactors {
                    patches: value,
                    ..CapacityFactors::default()
                },
            ),
        ] {
            let e = DynamicMesh::new(&mesh, 8, factors).expect_err("bad factor");
            assert!(matches!(e, DynamicError::Factor { .. }), "{e}");
            assert_eq!(e.settings(), vec![setting], "{e}");
            assert!(e.to_string().contains(setting.name()), "{e}");
        }
    }
    let huge = CapacityFactors {
        patches: 1e30,
        ..CapacityFactors::default()
    };
    let e = DynamicMesh::new(&mesh, 8, huge).expect_err("too many patch slots");
    assert!(matches!(e, DynamicError::TooLarge { .. }), "{e}");
    assert!(e.settings().contains(&Setting::PATCH_FACTOR), "{e}");
    assert!(e.to_string().contains("the patch factor"), "{e}");

    let ok = CapacityFactors {
        elements: 1.0,
        patches: 1.0,
    };
    let d = DynamicMesh::new(&mesh, 8, ok).expect("factors of 1");
    assert_eq!(d.cap().patches, d.num_patches());
    d.validate(true).expect("valid");
}

#[test]
fn capacity_and_stash_limits() {
    // One patch of 3200 faces: about 4900 edges, doubled past 8160.
    let mesh = grid(40, 40, &[false], false, &[]);
    let e = DynamicMesh::new(&mesh, 8192, CapacityFactors::default()).expect_err("over");
    let text = e.to_string();
    assert_eq!(
        e.settings(),
        [Setting::PATCH_SIZE, Setting::CAPACITY_FACTOR]
    );
    match e {
        DynamicError::Capacity {
            patch, kind, slots, ..
        } => {
            assert_eq!((patch, kind), (0, Kind::Edge));
            assert!(slots > MAX_CAPACITY as u64);
        }
        other => panic!("expected a capacity error, got {other}"),
    }
    for part in [
        "8160",
        "the capacity factor",
        "the patch size",
        "edge slots",
    ] {
        assert!(text.contains(part), "{text}");
    }
    // With factor 1 it fits.
    let fits = CapacityFactors {
        elements: 1.0,
        ..CapacityFactors::default()
    };
    DynamicMesh::new(&mesh, 8192, fits)
        .expect("fits")
        .validate(true)
        .expect("valid");

    // A vertex of valence 200 in patches of two faces: its owner's ribbon
    // spans about 100 patches, more than a stash holds.
    let e = DynamicMesh::new(&fan(200, true), 2, CapacityFactors::default()).expect_err("stash");
    assert!(
        matches!(e, DynamicError::Stash { neighbours, .. } if neighbours > 64),
        "{e}"
    );
    assert!(e.to_string().contains("the patch size"), "{e}");
    assert_eq!(e.settings(), [Setting::PATCH_SIZE]);
}

/// A grid in many patches, valid, for corrupting.
fn victim() -> DynamicMesh {
    let d = build(&grid(16, 16, &[false, true], false, &[]), 8);
    d.validate(true).expect("valid before corruption");
    d
}

fn mask_word(d: &DynamicMesh, p: u32, kind: Kind, active: bool, local: u32) -> usize {
    (d.cap().mask_stride() * p + d.cap().mask_offset(kind, active) + local / 32) as usize
}

fn table_range(d: &DynamicMesh, p: u32, kind: Kind) -> std::ops::Range<usize> {
    let start = (d.cap().hash_stride() * p + d.cap().table_offset(kind)) as usize;
    start..start + d.cap().table_words(kind) as usize
}

/// Patch 0's first ribbon edge entry: its word index in `d.hash`, the
/// entry, its stash index and its key (the local edge).
fn first_ribbon_edge(d: &DynamicMesh) -> (usize, u32, u32, u32) {
    let slot = table_range(d, 0, Kind::Edge)
        .find(|&i| d.storage().hash[i] != EMPTY)
        .expect("patch 0 has ribbon edges");
    let entry = d.storage().hash[slot];
    (slot, entry, hash::value_of(entry).0, hash::key_of(entry))
}

/// The arrays of `d`, to break it on purpose.
fn arrays(d: &mut DynamicMesh) -> StorageMut<'_> {
    // SAFETY: the tests only validate the broken mesh: no kernel runs on it.
    unsafe { d.storage_mut() }
}

fn expect_error(d: &DynamicMesh) -> ValidationError {
    let e = d.validate(false).expect_err("corruption detected");
    // The message names the patch.
    assert!(
        e.to_string().starts_with(&format!("patch {}", e.patch)),
        "{e}"
    );
    e
}

#[test]
fn cleared_owned_bit_is_a_missing_entry() {
    let mut d = victim();
    assert!(d.is_owned(0, Kind::Vertex, 0));
    let w = mask_word(&d, 0, Kind::Vertex, false, 0);
    arrays(&mut d).masks[w] &= !1;
    let e = expect_error(&d);
    assert_eq!(
        (e.patch, e.element, e.problem),
        (0, Some((Kind::Vertex, 0)), ValidationProblem::MissingEntry)
    );
}

#[test]
fn set_owned_bit_is_a_stale_entry() {
    let mut d = victim();
    let [nv, _, _] = d.counts(0);
    let v = (0..nv)
        .find(|&v| !d.is_owned(0, Kind::Vertex, v))
        .expect("a ribbon vertex");
    let w = mask_word(&d, 0, Kind::Vertex, false, v);
    arrays(&mut d).masks[w] |= 1 << (v % 32);
    let e = expect_error(&d);
    assert!(
        matches!(e.problem, ValidationProblem::StaleEntry { .. }),
        "{e}"
    );
    assert_eq!((e.patch, e.element), (0, Some((Kind::Vertex, v))));
}

#[test]
fn mask_bit_above_the_high_water_mark() {
    let mut d = victim();
    let nf = d.counts(0)[2];
    let w = mask_word(&d, 0, Kind::Face, true, nf);
    arrays(&mut d).masks[w] |= 1 << (nf % 32);
    let e = expect_error(&d);
    assert_eq!(
        (e.patch, e.element, e.problem),
        (
            0,
            Some((Kind::Face, nf)),
            ValidationProblem::MaskAboveCount { owned: false }
        )
    );
}

#[test]
fn broken_hash_entry_names_no_owned_element() {
    let mut d = victim();
    let range = table_range(&d, 0, Kind::Edge);
    let (slot, old, s, key) = first_ribbon_edge(&d);
    arrays(&mut d).hash[slot] = hash::entry(key, s, LOCAL_MASK - 1);
    let e = expect_error(&d);
    assert!(
        matches!(e.problem, ValidationProblem::OwnerNotOwned { owner_local, .. } if owner_local == LOCAL_MASK - 1),
        "{e}"
    );
    assert_eq!((e.patch, e.element), (0, Some((Kind::Edge, key))));

    // An entry emptied: the element has none.
    arrays(&mut d).hash[slot] = EMPTY;
    let e = expect_error(&d);
    assert_eq!(
        (e.element, e.problem),
        (Some((Kind::Edge, key)), ValidationProblem::MissingEntry)
    );

    // The entry moved to other free slots of the main table: wherever no
    // cuckoo hash function points, a lookup misses it.
    let mut unreachable = 0;
    for other in range.start..range.end - HASH_OVERFLOW as usize {
        if d.storage().hash[other] == EMPTY {
            arrays(&mut d).hash[other] = old;
            if let Err(e) = d.validate(false) {
                assert_eq!(
                    (e.element, e.problem),
                    (Some((Kind::Edge, key)), ValidationProblem::UnreachableEntry)
                );
                unreachable += 1;
            }
            arrays(&mut d).hash[other] = EMPTY;
        }
    }
    assert!(unreachable > 0);

    // A second entry for the same key, in a free overflow slot.
    arrays(&mut d).hash[slot] = old;
    let free = range
        .clone()
        .rev()
        .find(|&i| d.storage().hash[i] == EMPTY)
        .expect("room");
    arrays(&mut d).hash[free] = old;
    let e = expect_error(&d);
    assert_eq!(
        (e.element, e.problem),
        (
            Some((Kind::Edge, key)),
            ValidationProblem::DuplicateEntry { entries: 2 }
        )
    );
}

/// A ribbon copy naming an edge deep inside its owner (one whose slot a
/// processing of the owner may reuse, `cavity::mark_fresh`) is reported;
/// the patches as built name none (`victim` and the larger patches here
/// validate).
#[test]
fn ribbon_copy_of_an_inner_edge_is_reported() {
    let mut d = build(&grid(32, 32, &[false], false, &[]), 128);
    d.validate(true).expect("valid before corruption");
    let (slot, old, s, key) = first_ribbon_edge(&d);
    // Patch 0's stash starts the stash array.
    let owner = d.storage().stash[s as usize];
    let mut inner = 0;
    for e in 0..d.counts(owner)[1] {
        if !d.is_owned(owner, Kind::Edge, e) {
            continue;
        }
        arrays(&mut d).hash[slot] = hash::entry(key, s, e);
        if let Err(err) = d.validate(false)
            && err.problem
                == (ValidationProblem::NamedInner {
                    owner,
                    owner_local: e,
                })
        {
            assert_eq!((err.patch, err.element), (0, Some((Kind::Edge, key))));
            inner += 1;
        }
    }
    assert!(inner > 0, "patch {owner} has edges deep inside");
    arrays(&mut d).hash[slot] = old;
    d.validate(true).expect("valid again");
}

#[test]
fn reversed_ribbon_edge_differs_from_its_owner() {
    let mut d = victim();
    let ne = d.counts(0)[1];
    let e = (0..ne)
        .find(|&e| !d.is_owned(0, Kind::Edge, e))
        .expect("a ribbon edge");
    // Patch 0's EV starts at 0.
    let at = 2 * e as usize;
    arrays(&mut d).ev.swap(at, at + 1);
    // Keep patch 0's faces consistent with the swapped edge, so that only
    // the comparison with the owner can tell.
    let nf = d.counts(0)[2];
    for entry in &mut arrays(&mut d).fe[..3 * nf as usize] {
        if (*entry >> 1) as u32 == e {
            *entry ^= FE_REVERSED;
        }
    }
    let owner = d.owner(0, Kind::Edge, e).expect("owner");
    let err = expect_error(&d);
    assert_eq!(
        (err.patch, err.element, err.problem),
        (
            0,
            Some((Kind::Edge, e)),
            ValidationProblem::RibbonMismatch {
                owner: owner.0,
                owner_local: owner.1
            }
        )
    );
}

#[test]
fn ev_entry_past_the_high_water_mark_dangles() {
    let mut d = victim();
    let ne = d.counts(0)[1];
    let nv = d.counts(0)[0];
    let e = (0..ne)
        .find(|&e| !d.is_owned(0, Kind::Edge, e))
        .expect("a ribbon edge");
    let at = 2 * e as usize;
    arrays(&mut d).ev[at] = nv as u16;
    let err = expect_error(&d);
    assert_eq!(
        (err.element, err.problem),
        (
            Some((Kind::Edge, e)),
            ValidationProblem::Dangling {
                kind: Kind::Vertex,
                index: nv
            }
        )
    );
}

#[test]
fn deactivated_ribbon_face_leaves_the_ribbon_incomplete() {
    let mut d = victim();
    let nf = d.counts(0)[2];
    let f = (0..nf)
        .find(|&f| {
            !d.is_owned(0, Kind::Face, f)
                && d.face_vertices(0, f)
                    .iter()
                    .any(|&v| d.is_owned(0, Kind::Vertex, v))
        })
        .expect("a ribbon face at an owned vertex");
    let (q, l) = d.owner(0, Kind::Face, f).expect("owner");
    let w = mask_word(&d, 0, Kind::Face, true, f);
    arrays(&mut d).masks[w] &= !(1 << (f % 32));
    let range = table_range(&d, 0, Kind::Face);
    let slot = range
        .into_iter()
        .find(|&i| d.storage().hash[i] != EMPTY && hash::key_of(d.storage().hash[i]) == f)
        .expect("entry of the face");
    arrays(&mut d).hash[slot] = EMPTY;
    let e = expect_error(&d);
    assert_eq!(e.patch, 0, "{e}");
    assert_eq!(
        e.problem,
        ValidationProblem::MissingRibbonFace {
            face_patch: q,
            face_local: l
        },
        "{e}"
    );
}

#[test]
fn stash_entries_are_checked() {
    let mut d = victim();
    arrays(&mut d).stash[0] = 0;
    let e = expect_error(&d);
    assert_eq!(
        (e.patch, e.element, e.problem),
        (
            0,
            None,
            ValidationProblem::StashEntry { index: 0, value: 0 }
        )
    );
}

proptest::proptest! {
    /// The scheduler's patch ranks are a strict total order in every round
    /// (so of any queued neighbours exactly one outranks the rest), and the
    /// order changes between rounds.
    #[test]
    fn patch_ranks_are_a_strict_order_per_round(
        p in 0u32..100_000, q in 0u32..100_000, r in 0u32..100_000, salt: u32,
    ) {
        use cavity_device::dynamic::scheduler::outranks;
        proptest::prop_assert!(!outranks(p, p, salt));
        if p != q {
            proptest::prop_assert!(outranks(p, q, salt) != outranks(q, p, salt));
        }
        if outranks(p, q, salt) && outranks(q, r, salt) {
            proptest::prop_assert!(outranks(p, r, salt));
        }
    }
}

/// Over many rounds, each of two neighbours goes first about half the time.
#[test]
fn patch_ranks_vary_between_rounds() {
    use cavity_device::dynamic::scheduler::outranks;
    let first = (0..1000).filter(|&salt| outranks(7, 8, salt)).count();
    assert!(
        (350..650).contains(&first),
        "patch 7 outranks 8 in {first} of 1000 rounds"
    );
}

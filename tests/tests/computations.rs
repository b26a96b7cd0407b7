//! Per-element computations of a user kernel crate (`tests/kernels`) on
//! the dynamic mesh, on the test backend (issue 25 items 2 and 4): the
//! queries a computation sees (VV VE VF EV EF FV FE) match the reference
//! mesh on random meshes, and a computation runs on the same structure
//! after cavities changed it, with an active set, against a serial
//! computation; the queries exported from
//! the dynamic mesh after cavities changed it (`Rounds::query`) are the
//! reference mesh's.

use std::collections::HashMap;

use cavity::attributes::{Attr, AttributeLayout};
use cavity::dynamic::{CapacityFactors, DynamicMesh, INPUT_INDEX_ATTR, NEW_ELEMENT};
use cavity::rounds::{ForEach, Rounds, RunError, sweeps};
use cavity::{Kind, PatchedMesh, Query, TriMesh};
use cavity_device::dynamic::layout::ELEMENT_INPUT_INDEX;
use cavity_reference::ReferenceMesh;
use cavity_remesh_kernels::split::SplitLongEdges;
use cavity_test_kernels::{
    CornerSums, CornerSumsGathered, Laplacian, MarkMasked, MinLabel, ProbeEF, ProbeEV, ProbeFE,
    ProbeFV, ProbeVE, ProbeVF, ProbeVV,
};
use cavity_tests::{any_mesh, cases, grid, median_edge_length, reference_row};
use proptest::prelude::*;

/// The tests' backend with the remeshing's kernels (its edge split is
/// these tests' workload).
fn test_backend() -> cavity::backend::Backend {
    cavity_tests::with_kernels(cavity_tests::test_backend(), cavity_remesh::add_kernels)
}

/// `[count, Σ (id + 1), Σ (id + 1)²]` of `ids` (wrapping), as the probes
/// write them.
fn summary(ids: impl IntoIterator<Item = u32>) -> [u32; 3] {
    let mut r = [0u32; 3];
    for id in ids {
        let x = id.wrapping_add(1);
        r[0] += 1;
        r[1] = r[1].wrapping_add(x);
        r[2] = r[2].wrapping_add(x.wrapping_mul(x));
    }
    r
}

/// Runs every probe on `input` (patched with `patch_size`) and compares
/// each element's summary with the reference mesh's query result.
fn check_probes(input: &TriMesh, patch_size: u32) -> Result<(), String> {
    let mut layout = AttributeLayout::new();
    let out = Kind::ALL.map(|kind| layout.add::<u32, 3>(kind, "out").unwrap());
    let mut m =
        DynamicMesh::with_attributes(input, patch_size, CapacityFactors::default(), &layout)
            .map_err(|e| e.to_string())?;
    let id = |kind| match kind {
        Kind::Vertex => Attr::<u32, 1>::new(kind, INPUT_INDEX_ATTR),
        _ => Attr::new(kind, ELEMENT_INPUT_INDEX),
    };
    let (v, e, f) = (out[0], out[1], out[2]);
    let (iv, ie, iff) = (id(Kind::Vertex), id(Kind::Edge), id(Kind::Face));
    let mut results = Vec::new();
    for query in Query::ALL {
        if query == Query::FF {
            continue;
        }
        test_backend()
            .run_rounds(
                &mut m,
                |r| -> Result<(), RunError> {
                    match query {
                        Query::VV => r.for_each(&ProbeVV { out: v, id: iv }),
                        Query::VE => r.for_each(&ProbeVE { out: v, id: ie }),
                        Query::VF => r.for_each(&ProbeVF { out: v, id: iff }),
                        Query::EV => r.for_each(&ProbeEV { out: e, id: iv }),
                        Query::EF => r.for_each(&ProbeEF { out: e, id: iff }),
                        Query::FV => r.for_each(&ProbeFV { out: f, id: iv }),
                        _ => r.for_each(&ProbeFE { out: f, id: ie }),
                    }
                },
                |e| e,
            )
            .map_err(|e| e.to_string())?;
        let got = m
            .attribute(&out[query.source() as usize])
            .map_err(|e| e.to_string())?;
        results.push((query, got));
    }
    // Reference rows in input numbering, edges as the patcher numbers them.
    let reference = ReferenceMesh::new(input).map_err(|e| e.to_string())?;
    let edges = PatchedMesh::new(input, patch_size)
        .map_err(|e| e.to_string())?
        .input_edges()
        .to_vec();
    let input_edge: HashMap<u32, u32> = edges
        .iter()
        .enumerate()
        .map(|(i, &[a, b])| (reference.edge_index(a, b).expect("an edge"), i as u32))
        .collect();
    let reference_edge = |i: u32| {
        let [a, b] = edges[i as usize];
        reference.edge_index(a, b).expect("an edge")
    };
    for (query, got) in results {
        for (s, value) in got.iter().enumerate() {
            let src = if query.source() == Kind::Edge {
                reference_edge(s as u32)
            } else {
                s as u32
            };
            let row = reference_row(&reference, query, src);
            let ids = row.into_iter().map(|x| {
                if query.target() == Kind::Edge {
                    input_edge[&x]
                } else {
                    x
                }
            });
            let want = summary(ids);
            if *value != want {
                return Err(format!(
                    "{} of {:?} {s}: {value:?}, reference {want:?}",
                    query.name(),
                    query.source()
                ));
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(16)))]

    /// Random meshes (grids with holes, tori, fans, non-manifold edges,
    /// isolated vertices, shuffled) at patch sizes down to 4: what each
    /// query gives a computation on the dynamic mesh is the reference
    /// mesh's result.
    #[test]
    fn queries_on_the_dynamic_mesh_match_the_reference(
        input in any_mesh(),
        patch_size in prop::sample::select(vec![4u32, 16, 64]),
    ) {
        let checked = check_probes(&input, patch_size);
        prop_assert!(checked.is_ok(), "{}", checked.unwrap_err());
    }
}

#[test]
fn a_computation_runs_on_the_mesh_cavities_changed() {
    let input = grid(10, 8, &[false, true], false, &[5, 6, 33]);
    let mut layout = AttributeLayout::new();
    let out = layout.vertex::<f32, 3>("smoothed").unwrap();
    let mask = layout.vertex::<u32, 1>("mask").unwrap();
    let mut m = DynamicMesh::with_attributes(
        &input,
        16,
        CapacityFactors {
            elements: 2.0,
            patches: 8.0,
        },
        &layout,
    )
    .unwrap();
    let active: Vec<[u32; 1]> = (0..input.positions.len())
        .map(|i| [(i % 3 != 0) as u32])
        .collect();
    m.set_attribute(&mask, &active).unwrap();
    let split = SplitLongEdges::new(0.8);
    let (report, counted, again) = test_backend()
        .run_rounds(
            &mut m,
            |r| -> Result<_, RunError> {
                let report = sweeps(r, &split, false, None)?;
                r.for_each(&Laplacian { out, mask })?;
                // A refill (the start of the next sweeps) keeps the count.
                r.refill(false)?;
                let counted = r.take_count()?;
                Ok((report, counted, r.take_count()?))
            },
            |e| e,
        )
        .expect("the run")
        .value;
    assert!(report.flips > 0, "{report:?}");
    m.validate(false).expect("valid");
    let (mesh, sources) = m.to_mesh_with_sources();
    let reference = ReferenceMesh::new(&mesh).unwrap();
    let got = m.attribute(&out).unwrap();
    // Every active vertex counted once; a refill keeps the count, taking
    // it zeroes it.
    let active = sources
        .iter()
        .filter(|&&s| s != NEW_ELEMENT && s % 3 != 0)
        .count();
    assert_eq!((counted, again), (active as u64, 0));
    for (v, &s) in sources.iter().enumerate() {
        let want = if s == NEW_ELEMENT || s % 3 == 0 {
            [0.0; 3]
        } else {
            let ring = reference.vv(v as u32);
            let mut sum = [0.0f32; 3];
            for &n in &ring {
                for k in 0..3 {
                    sum[k] += mesh.positions[n as usize][k];
                }
            }
            sum.map(|x| x / ring.len() as f32)
        };
        for k in 0..3 {
            assert!(
                (got[v][k] - want[k]).abs() <= 1e-5 * want[k].abs().max(1.0),
                "vertex {v} (input {s}): {:?}, serial {want:?}",
                got[v]
            );
        }
    }
}

/// Every query exported from the dynamic mesh after cavities changed it
/// (`Rounds::query`, in element order; FF composed from FE and EF)
/// equals the reference mesh's over the exported mesh, as sets.
fn check_exported_queries(input: &TriMesh, patch_size: u32, max_length: f32) -> Result<(), String> {
    let mut m = DynamicMesh::new(
        input,
        patch_size,
        CapacityFactors {
            elements: 2.0,
            patches: 8.0,
        },
    )
    .map_err(|e| e.to_string())?;
    let split = SplitLongEdges::new(max_length);
    let results = test_backend()
        .run_rounds(
            &mut m,
            |r| -> Result<_, RunError> {
                sweeps(r, &split, false, None)?;
                let mut results = Vec::new();
                for query in Query::ALL {
                    results.push((query, cavity::rounds::Rounds::query(r, query)?));
                }
                Ok(results)
            },
            |e| e,
        )
        .map_err(|e| e.to_string())?
        .value;
    let mesh = m.to_mesh();
    let edges = m.edges();
    let reference = ReferenceMesh::new(&mesh).map_err(|e| e.to_string())?;
    let ours: HashMap<u32, u32> = edges
        .iter()
        .enumerate()
        .map(|(i, &[a, b])| (reference.edge_index(a, b).expect("an edge"), i as u32))
        .collect();
    if ours.len() != reference.num_edges() {
        return Err(format!(
            "{} edges, reference {}",
            ours.len(),
            reference.num_edges()
        ));
    }
    for (query, result) in results {
        let sources = match query.source() {
            Kind::Vertex => mesh.positions.len(),
            Kind::Edge => edges.len(),
            Kind::Face => mesh.faces.len(),
        };
        if result.offsets.len() != sources + 1 {
            return Err(format!(
                "{}: {} rows",
                query.name(),
                result.offsets.len() - 1
            ));
        }
        for s in 0..sources as u32 {
            let src = match query.source() {
                Kind::Edge => {
                    let [a, b] = edges[s as usize];
                    reference.edge_index(a, b).expect("an edge")
                }
                _ => s,
            };
            let mut want: Vec<u32> = reference_row(&reference, query, src)
                .into_iter()
                .map(|x| {
                    if query.target() == Kind::Edge {
                        ours[&x]
                    } else {
                        x
                    }
                })
                .collect();
            let mut got = result.row(s).to_vec();
            want.sort_unstable();
            got.sort_unstable();
            if got != want {
                return Err(format!(
                    "{} of {s}: {got:?}, reference {want:?}",
                    query.name()
                ));
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(12)))]

    /// Random meshes, split until their edges are shorter than the
    /// median: the queries exported from the dynamic mesh are the
    /// reference mesh's.
    #[test]
    fn queries_exported_after_cavities_match_the_reference(
        input in any_mesh(),
        patch_size in prop::sample::select(vec![4u32, 16, 64]),
    ) {
        let checked = check_exported_queries(&input, patch_size, median_edge_length(&input));
        prop_assert!(checked.is_ok(), "{}", checked.unwrap_err());
    }
}

/// `for_each_in` visits the listed patches only: on the patches owning the
/// active vertices it gives what `for_each` gives; on the others, nothing;
/// an empty list does nothing; a list naming a slot not in use or one
/// twice is an error. A computation marks the patches of the vertices it
/// chooses, and the host takes them (`Rounds::take_marked_patches`).
#[test]
fn a_patch_list_limits_the_patches_visited() {
    let input = grid(12, 9, &[false, true], false, &[7]);
    let mut layout = AttributeLayout::new();
    let out = layout.vertex::<f32, 3>("smoothed").unwrap();
    let mask = layout.vertex::<u32, 1>("mask").unwrap();
    let mut m =
        DynamicMesh::with_attributes(&input, 16, CapacityFactors::default(), &layout).unwrap();
    let active: Vec<[u32; 1]> = (0..input.positions.len())
        .map(|i| [u32::from(i % 5 == 0)])
        .collect();
    m.set_attribute(&mask, &active).unwrap();
    let owners = m.owner_patches(Kind::Vertex);
    let mut holding: Vec<u32> = (0..owners.len())
        .filter(|&v| active[v][0] != 0)
        .map(|v| owners[v])
        .collect();
    holding.sort_unstable();
    holding.dedup();
    let others: Vec<u32> = (0..m.num_patches())
        .filter(|p| holding.binary_search(p).is_err())
        .collect();
    assert!(!others.is_empty(), "some patch holds no active vertex");
    let (counted, none, empty, bad) = test_backend()
        .run_rounds(
            &mut m,
            |r| -> Result<_, RunError> {
                r.for_each_in(&Laplacian { out, mask }, &others)?;
                let none = r.take_count()?;
                r.for_each_in(&Laplacian { out, mask }, &[])?;
                let empty = r.take_count()?;
                r.for_each_in(&Laplacian { out, mask }, &holding)?;
                let counted = r.take_count()?;
                let bad = [
                    r.for_each_in(&Laplacian { out, mask }, &[0, 0]).is_err(),
                    r.for_each_in(&Laplacian { out, mask }, &[u32::MAX])
                        .is_err(),
                ];
                Ok((counted, none, empty, bad))
            },
            |e| e,
        )
        .expect("the run")
        .value;
    assert_eq!((none, empty), (0, 0));
    assert_eq!(
        counted as usize,
        active.iter().filter(|a| a[0] != 0).count()
    );
    assert_eq!(bad, [true, true]);
    let listed = m.attribute(&out).unwrap();
    let mut all = m.clone();
    test_backend()
        .run_rounds(&mut all, |r| r.for_each(&Laplacian { out, mask }), |e| e)
        .expect("the run");
    assert_eq!(listed, all.attribute(&out).unwrap());
    // Marks: the patches owning a masked vertex, once; taken, they clear.
    let marks = test_backend()
        .run_rounds(
            &mut all,
            |r| -> Result<_, RunError> {
                r.for_each(&MarkMasked { mask })?;
                let first = r.take_marked_patches()?;
                Ok((first, r.take_marked_patches()?))
            },
            |e| e,
        )
        .expect("the run")
        .value;
    assert_eq!(marks, (holding, Vec::new()));
}

/// Runs [`MinLabel`] with `sweeps` per launch on `input` until no label
/// changes; checks each launch's count against the labels it changed
/// and returns the labels (element order) and the launches.
fn min_labels(input: &TriMesh, patch_size: u32, sweeps: u32) -> Result<(Vec<u32>, u32), String> {
    let mut layout = AttributeLayout::new();
    let ping = layout.vertex::<u32, 1>("ping").map_err(|e| e.to_string())?;
    let pong = layout.vertex::<u32, 1>("pong").map_err(|e| e.to_string())?;
    let mut m =
        DynamicMesh::with_attributes(input, patch_size, CapacityFactors::default(), &layout)
            .map_err(|e| e.to_string())?;
    let n = m.sources(Kind::Vertex).len();
    let start: Vec<[u32; 1]> = (0..n as u32).map(|k| [k]).collect();
    m.set_attribute(&ping, &start).map_err(|e| e.to_string())?;
    m.set_attribute(&pong, &start).map_err(|e| e.to_string())?;
    let (mut from, mut to) = (ping, pong);
    for launches in 1..=n as u32 + 1 {
        let c = MinLabel { from, to, sweeps };
        let counted = test_backend()
            .run_rounds(
                &mut m,
                |r| -> Result<_, RunError> {
                    r.for_each(&c)?;
                    r.take_count()
                },
                |e| e,
            )
            .map_err(|e| e.to_string())?
            .value;
        let (before, after) = (m.attribute(&from), m.attribute(&to));
        let (before, after) = (
            before.map_err(|e| e.to_string())?,
            after.map_err(|e| e.to_string())?,
        );
        let changed = before.iter().zip(&after).filter(|(a, b)| a != b).count();
        if counted as usize != changed {
            return Err(format!(
                "launch {launches}: counted {counted}, changed {changed}"
            ));
        }
        if counted == 0 {
            return Ok((after.into_iter().map(|[x]| x).collect(), launches));
        }
        // Both attributes must hold the labels before the next launch.
        m.set_attribute(&from, &after).map_err(|e| e.to_string())?;
        (from, to) = (to, from);
    }
    Err("the labels did not settle".into())
}

/// Every vertex's expected label: the smallest element index of its
/// connected component (element order: `DynamicMesh::sources`).
fn component_minima(input: &TriMesh, sources: &[u32]) -> Vec<u32> {
    let mut parent: Vec<usize> = (0..input.positions.len()).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    for f in &input.faces {
        for i in 0..3 {
            let (a, b) = (
                find(&mut parent, f[i] as usize),
                find(&mut parent, f[(i + 1) % 3] as usize),
            );
            parent[a.max(b)] = a.min(b);
        }
    }
    let mut least = vec![u32::MAX; input.positions.len()];
    for (k, &s) in sources.iter().enumerate() {
        let root = find(&mut parent, s as usize);
        least[root] = least[root].min(k as u32);
    }
    sources
        .iter()
        .map(|&s| least[find(&mut parent, s as usize)])
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(12)))]

    /// In-patch sweeps (`Sweeps`): the smallest-label propagation reaches
    /// every component's smallest label with one sweep per launch and with
    /// eight, in no more launches with eight; each launch counts the
    /// labels it changed once and writes every label it computed.
    #[test]
    fn sweeps_reach_the_same_labels_in_fewer_launches(
        input in any_mesh(),
        patch_size in prop::sample::select(vec![4u32, 16, 64]),
    ) {
        let sources = DynamicMesh::new(&input, patch_size, CapacityFactors::default())
            .map_err(|e| TestCaseError::fail(e.to_string()))?
            .sources(Kind::Vertex);
        let want = component_minima(&input, &sources);
        let (one, plain) = min_labels(&input, patch_size, 1).map_err(TestCaseError::fail)?;
        let (eight, swept) = min_labels(&input, patch_size, 8).map_err(TestCaseError::fail)?;
        prop_assert_eq!(&one, &want);
        prop_assert_eq!(&eight, &want);
        prop_assert!(swept <= plain, "{} launches with sweeps, {} without", swept, plain);
    }
}

/// On a long strip of small patches the sweeps carry a label across a
/// patch per launch: far fewer launches than one hop each.
#[test]
fn sweeps_cross_a_patch_per_launch() {
    let input = grid(60, 3, &[false], false, &[]);
    let (labels, plain) = min_labels(&input, 16, 1).unwrap();
    let (swept_labels, swept) = min_labels(&input, 16, 16).unwrap();
    assert!(labels.iter().all(|&l| l == 0));
    assert_eq!(labels, swept_labels);
    assert!(
        2 * swept < plain,
        "{swept} launches with sweeps, {plain} without"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(12)))]

    /// Positions and an attribute gathered into shared memory
    /// (`ElementComputation::GATHERS`) read what the plain reads read:
    /// the same sums, bit for bit, on any mesh and patch size.
    #[test]
    fn gathered_reads_match_plain_reads(
        input in any_mesh(),
        patch_size in prop::sample::select(vec![4u32, 16, 64]),
    ) {
        let mut layout = AttributeLayout::new();
        let values = layout.vertex::<f32, 3>("values").unwrap();
        let (plain, gathered) = (
            layout.vertex::<f32, 3>("plain").unwrap(),
            layout.vertex::<f32, 3>("gathered").unwrap(),
        );
        let mut m = DynamicMesh::with_attributes(&input, patch_size, CapacityFactors::default(), &layout)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let n = m.sources(Kind::Vertex).len();
        let start: Vec<[f32; 3]> = (0..n)
            .map(|k| [k as f32 * 0.25, 1.0 - k as f32, (k % 7) as f32])
            .collect();
        m.set_attribute(&values, &start).unwrap();
        test_backend()
            .run_rounds(
                &mut m,
                |r| -> Result<(), RunError> {
                    r.for_each(&CornerSums { input: values, out: plain })?;
                    r.for_each(&CornerSumsGathered { input: values, out: gathered })
                },
                |e| e,
            )
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let (a, b) = (m.attribute(&plain).unwrap(), m.attribute(&gathered).unwrap());
        prop_assert!(a.iter().any(|x| x.iter().any(|&c| c != 0.0)) || input.faces.is_empty());
        let bits = |v: &[[f32; 3]]| v.iter().map(|x| x.map(f32::to_bits)).collect::<Vec<_>>();
        prop_assert_eq!(bits(&a), bits(&b));
    }
}

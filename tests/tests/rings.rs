//! Higher-order queries on the dynamic mesh (issue 26 item 1; RXMesh
//! section 6.2), on the test backend: the exported vertex k-ring
//! (`Rounds::k_ring`, k = 1..4) is the reference mesh's, nearest hop first,
//! on random meshes (boundaries, holes, non-manifold edges, fans, several
//! components, isolated vertices) at patch sizes down to 4 (rings that
//! cross many patches), before and after cavities changed the mesh; a ring
//! computation of a user kernel crate (`ProbeRing`, `for_each_ring`) sees
//! the k-ring, and the ring a ball bounds.

use std::collections::HashMap;

use cavity::attributes::{Attr, AttributeLayout};
use cavity::dynamic::{CapacityFactors, DynamicMesh, INPUT_INDEX_ATTR};
use cavity::rings::ForEachRing;
use cavity::rounds::{Rounds, RunError, sweeps};
use cavity::{Kind, TriMesh};
use cavity_reference::ReferenceMesh;
use cavity_remesh_kernels::split::SplitLongEdges;
use cavity_test_kernels::ProbeRing;
use cavity_tests::{any_mesh, cases, grid, median_edge_length};
use proptest::prelude::*;

/// The tests' backend with the remeshing's kernels (its edge split is
/// these tests' workload).
fn test_backend() -> cavity::backend::Backend {
    cavity_tests::with_kernels(cavity_tests::test_backend(), cavity_remesh::add_kernels)
}

/// Hop distance from `v` of every vertex at most `k` hops away.
fn hops(reference: &ReferenceMesh, v: u32, k: u32) -> HashMap<u32, u32> {
    let mut dist = HashMap::from([(v, 0)]);
    let mut frontier = vec![v];
    for h in 1..=k {
        let mut next = Vec::new();
        for &u in &frontier {
            for w in reference.vv(u) {
                dist.entry(w).or_insert_with(|| {
                    next.push(w);
                    h
                });
            }
        }
        frontier = next;
    }
    dist
}

/// The k-rings (k = 1..4) exported from `input` patched with
/// `patch_size`, after splitting the edges longer than `split` if given,
/// against the reference mesh of the mesh as it then stands.
fn check_k_rings(input: &TriMesh, patch_size: u32, split: Option<f32>) -> Result<(), String> {
    let factors = CapacityFactors {
        elements: 2.0,
        patches: 8.0,
    };
    let mut m = DynamicMesh::new(input, patch_size, factors).map_err(|e| e.to_string())?;
    let rings = test_backend()
        .run_rounds(
            &mut m,
            |r| -> Result<_, RunError> {
                if let Some(length) = split {
                    sweeps(r, &SplitLongEdges::new(length), false, None)?;
                }
                (1..=4).map(|k| r.k_ring(k)).collect::<Result<Vec<_>, _>>()
            },
            |e| e,
        )
        .map_err(|e| e.to_string())?
        .value;
    let mesh = m.to_mesh();
    let reference = ReferenceMesh::new(&mesh).map_err(|e| e.to_string())?;
    for (result, k) in rings.iter().zip(1..) {
        if result.offsets.len() != mesh.positions.len() + 1 {
            return Err(format!("k = {k}: {} rows", result.offsets.len() - 1));
        }
        for v in 0..mesh.positions.len() as u32 {
            let row = result.row(v);
            let dist = hops(&reference, v, k);
            if row.windows(2).any(|w| dist.get(&w[0]) > dist.get(&w[1])) {
                return Err(format!("k = {k}, vertex {v}: {row:?} is not by hop"));
            }
            let mut got = row.to_vec();
            got.sort_unstable();
            let want = reference.k_ring(v, k);
            if got != want {
                return Err(format!("k = {k}, vertex {v}: {got:?}, reference {want:?}"));
            }
        }
    }
    Ok(())
}

/// `[count, Σ (id + 1), Σ (id + 1)²]` (wrapping), as `ProbeRing` writes.
fn summary(ids: &[u32]) -> [u32; 3] {
    let mut r = [ids.len() as u32, 0, 0];
    for &id in ids {
        let x = id.wrapping_add(1);
        r[1] = r[1].wrapping_add(x);
        r[2] = r[2].wrapping_add(x.wrapping_mul(x));
    }
    r
}

/// `ProbeRing` with `hops` and `radius` on `input`, against the reference
/// mesh's ring through the vertices within `radius` (a vertex whose search
/// met a distance within rounding of the radius is not compared: the GPU
/// may contract the distance's arithmetic differently).
fn check_probe(input: &TriMesh, patch_size: u32, hops: u32, radius: f32) -> Result<(), String> {
    let mut layout = AttributeLayout::new();
    let out = layout
        .add::<u32, 3>(Kind::Vertex, "out")
        .map_err(|e| e.to_string())?;
    let mut m =
        DynamicMesh::with_attributes(input, patch_size, CapacityFactors::default(), &layout)
            .map_err(|e| e.to_string())?;
    let probe = ProbeRing {
        out,
        id: Attr::new(Kind::Vertex, INPUT_INDEX_ATTR),
        hops,
        radius,
    };
    test_backend()
        .run_rounds(&mut m, |r| r.for_each_ring(&probe), |e| e)
        .map_err(|e| e.to_string())?;
    let got = m.attribute(&out).map_err(|e| e.to_string())?;
    let reference = ReferenceMesh::new(input).map_err(|e| e.to_string())?;
    for (v, got) in got.iter().enumerate() {
        let centre = input.positions[v];
        let mut borderline = false;
        let ring = reference.ring_where(v as u32, hops, |w| {
            let p = input.positions[w as usize];
            let d = [0, 1, 2].map(|i| f64::from(p[i]) - f64::from(centre[i]));
            let d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            let r2 = f64::from(radius) * f64::from(radius);
            borderline |= r2.is_finite() && (d2 - r2).abs() <= 1e-5 * r2.max(1.0);
            d2 <= r2
        });
        if !borderline && *got != summary(&ring) {
            return Err(format!(
                "vertex {v}: {got:?}, reference {:?} ({ring:?})",
                summary(&ring)
            ));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(16)))]

    /// Random meshes at patch sizes 4, 16 and 64: the exported k-rings are
    /// the reference mesh's, by hop.
    #[test]
    fn k_rings_match_the_reference(
        input in any_mesh(),
        patch_size in prop::sample::select(vec![4u32, 16, 64]),
    ) {
        let checked = check_k_rings(&input, patch_size, None);
        prop_assert!(checked.is_ok(), "{}", checked.unwrap_err());
    }

    /// A ring computation sees the k-ring (infinite radius) and the ring a
    /// ball bounds.
    #[test]
    fn ring_computations_see_the_reference_rings(
        input in any_mesh(),
        patch_size in prop::sample::select(vec![4u32, 16, 64]),
        hops in 1u32..5,
        radius in prop::sample::select(vec![0.5f32, 1.2, 1.7, 2.5, f32::INFINITY]),
    ) {
        let checked = check_probe(&input, patch_size, hops, radius);
        prop_assert!(checked.is_ok(), "{}", checked.unwrap_err());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(8)))]

    /// After cavities split the long edges (patches changed, sliced, new
    /// vertices): the k-rings are the reference mesh's.
    #[test]
    fn k_rings_after_cavities_match_the_reference(
        input in any_mesh(),
        patch_size in prop::sample::select(vec![4u32, 16, 64]),
    ) {
        let checked = check_k_rings(&input, patch_size, Some(median_edge_length(&input)));
        prop_assert!(checked.is_ok(), "{}", checked.unwrap_err());
    }
}

/// Rings far larger than the scratch's first room (a 12-ring of a
/// lattice: up to 469 vertices) come out whole: the launch runs again
/// with more room, for the export and for a ring computation.
#[test]
fn large_rings_grow_the_scratch() {
    let input = grid(30, 30, &[false], false, &[]);
    check_probe(&input, 16, 12, f32::INFINITY).unwrap();
    let mut m = DynamicMesh::new(&input, 16, CapacityFactors::default()).unwrap();
    let ring = test_backend()
        .run_rounds(&mut m, |r| r.k_ring(12), |e| e)
        .unwrap()
        .value;
    let reference = ReferenceMesh::new(&input).unwrap();
    for v in 0..input.positions.len() as u32 {
        let mut got = ring.row(v).to_vec();
        got.sort_unstable();
        assert_eq!(got, reference.k_ring(v, 12), "vertex {v}");
    }
    let centre = 15 * 31 + 15;
    assert_eq!(ring.row(centre).len(), 3 * 12 * 13);
}

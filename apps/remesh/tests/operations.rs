//! Remeshing's operations (`cavity-remesh-kernels`) one at a time, on the
//! backend `CAVITY_TEST_DEVICE` names (the CPU backend with four racing
//! workers, or the GPU), `validate()` after every round: valence flips
//! until none improves (against an oracle of the flips left), safe
//! collapses that keep edges short and faces unfolded, collapse sweeps
//! that stop at their limit, and tangential smoothing (evening a jittered
//! grid, and against a serial oracle on proptest meshes).
//! `TEST_WORKERS` sets the CPU backend's workers (default 4).

use cavity::TriMesh;
use cavity::backend::AnyRounds;
use cavity::dynamic::DynamicMesh;
use cavity::rounds::{ForEach, RunReport, SweepOptions, sweeps_at_most, sweeps_with};
use cavity_reference::ReferenceMesh;
use cavity_remesh_kernels::SLIVER_SIN;
use cavity_remesh_kernels::smooth::Smoothing;
use cavity_remesh_kernels::split::SplitLongEdges;
use cavity_remesh_kernels::{CollapseShortEdgesSafely, ImproveValence, StoreValences};
use cavity_tests::{
    ROOMY, acceptable_flip, any_mesh, cases, euler, faces_up, grid, length_spread, longest, run,
    sorted_faces, test_backend, validate_each_round, with_rounds, workers,
};
use proptest::prelude::*;

cavity_tests::test_kernels!(cavity_remesh::add_kernels);

/// `Σ (valence - target)²` over the vertices with faces (target 6, 4 on the
/// boundary).
fn valence_deviation(m: &TriMesh) -> i64 {
    let r = ReferenceMesh::new(m).expect("valid");
    (0..r.num_vertices() as u32)
        .filter(|&v| !r.vf(v).is_empty())
        .map(|v| (r.vv(v).len() as i64 - valence_target(&r, v)).pow(2))
        .sum()
}

fn valence_target(r: &ReferenceMesh, v: u32) -> i64 {
    if r.ve(v).iter().any(|&e| r.ef(e).len() == 1) {
        4
    } else {
        6
    }
}

/// An interior edge whose flip would lower the valence deviation of its
/// four vertices (the oracle of `ImproveValence` without a length limit).
fn improving_flip(m: &TriMesh) -> Option<[u32; 2]> {
    acceptable_flip(m, SLIVER_SIN, |r, [a, b, c, d]| {
        let off =
            |v: u32, change: i64| (r.vv(v).len() as i64 + change - valence_target(r, v)).pow(2);
        let before = off(a, 0) + off(b, 0) + off(c, 0) + off(d, 0);
        let after = off(a, -1) + off(b, -1) + off(c, 1) + off(d, 1);
        after < before
    })
}

/// Sweeps of remeshing's valence flips (no length limit) over `input`
/// until one flips nothing, on a mesh with the stored valences
/// (`cavity_remesh::attributes`) refreshed at the start of every sweep,
/// validated after every round.
fn valence_flips(input: &TriMesh, patch_size: u32) -> (RunReport, TriMesh) {
    let mut dynamic =
        DynamicMesh::with_attributes(input, patch_size, ROOMY, &cavity_remesh::attributes())
            .expect("dynamic mesh");
    let valence = dynamic
        .attributes()
        .find::<u32, 1>(cavity_remesh::VALENCE_ATTRIBUTE)
        .expect("valence attribute");
    let app = ImproveValence {
        feature_cos: -2.0,
        max_length: f32::INFINITY,
        caps_only: 0,
        valence,
    };
    let store = StoreValences { valence };
    let mut check = validate_each_round(true);
    let backend = test_backend();
    let report = workers()
        .install(|| {
            backend.run_rounds(
                &mut dynamic,
                |r| {
                    let options = SweepOptions {
                        after_round: Some(&mut check),
                        before_sweep: Some(&mut |r: &mut AnyRounds<'_>| r.for_each(&store)),
                        ..SweepOptions::default()
                    };
                    sweeps_with(r, &app, options)
                },
                |e| e,
            )
        })
        .expect("run")
        .value;
    (report, dynamic.to_mesh())
}

#[test]
fn valence_flips_until_none_improves() {
    // Longest-edge bisection of a planar grid leaves vertices of valence 4
    // and 8; the flips bring them towards 6 until no flip helps.
    let input = grid(12, 12, &[false, true], false, &[]);
    let (_, split) = run(&input, 64, SplitLongEdges::new(0.6), true);
    for patch_size in [16, 64] {
        let (report, out) = valence_flips(&split, patch_size);
        assert!(report.flips > 0, "{report:?}");
        assert!(valence_deviation(&out) < valence_deviation(&split));
        assert_eq!(out.faces.len(), split.faces.len());
        assert_eq!(euler(&out), euler(&split));
        assert_eq!(out.positions, split.positions);
        assert!(faces_up(&out));
        assert_eq!(improving_flip(&out), None);
    }
}

/// A 12 × 12 grid with its long edges split, and a collapse of the edges
/// shorter than 0.45 that makes none longer than 0.8 (boundary kept, no
/// features): the input of the collapse tests.
fn split_grid_and_collapse() -> (TriMesh, CollapseShortEdgesSafely) {
    let input = grid(12, 12, &[false, true], false, &[]);
    let (_, split) = run(&input, 64, SplitLongEdges::new(0.5), true);
    let app = CollapseShortEdgesSafely {
        min_length: 0.45,
        degenerate_length: 0.0,
        boundary_cos: 2.0,
        corner_tolerance: 0.0,
        max_length: 0.8,
        feature_cos: -2.0,
        flat_caps: 0,
    };
    (split, app)
}

#[test]
fn safe_collapses_keep_edges_short_and_faces_up() {
    let (split, app) = split_grid_and_collapse();
    for patch_size in [16, 64] {
        let (report, out) = run(&split, patch_size, app, true);
        assert!(report.flips > 0, "{report:?}");
        assert_eq!(
            out.faces.len(),
            split.faces.len() - 2 * report.flips as usize
        );
        assert_eq!(euler(&out), euler(&split));
        assert!(faces_up(&out));
        assert!(
            longest(&out) <= 0.8f32.max(longest(&split)),
            "{}",
            longest(&out)
        );
    }
}

#[test]
fn collapse_sweeps_stop_at_the_limit() {
    let (split, app) = split_grid_and_collapse();
    let ([one, rest, after], out) = with_rounds(&split, 16, ROOMY, true, |r| {
        Ok([
            sweeps_at_most(r, &app, 1)?,
            sweeps_at_most(r, &app, 1000)?,
            sweeps_at_most(r, &app, 1000)?,
        ])
    })
    .expect("run");
    assert_eq!(one.sweeps, 1, "{one:?}");
    assert!(one.flips > 0, "{one:?}");
    // Run to the end, a further full sweep finds nothing.
    assert_eq!(
        rest.flips + one.flips,
        (split.faces.len() - out.faces.len()) as u64 / 2
    );
    assert_eq!((after.sweeps, after.flips), (1, 0), "{after:?}");
    assert_eq!(euler(&out), euler(&split));
    assert!(faces_up(&out));
}

#[test]
fn tangential_smoothing_evens_a_jittered_grid() {
    // Interior vertices of a planar grid pushed off their places; the
    // boundary is fixed and everything stays in the plane, faces up.
    let mut input = grid(12, 12, &[false, true], false, &[]);
    for (i, p) in input.positions.iter_mut().enumerate() {
        if (1.0..12.0).contains(&p[0]) && (1.0..12.0).contains(&p[1]) {
            let h = (i as u32).wrapping_mul(2_654_435_761);
            p[0] += ((h & 0xff) as f32 / 255.0 - 0.5) * 0.6;
            p[1] += ((h >> 8 & 0xff) as f32 / 255.0 - 0.5) * 0.6;
        }
    }
    let params = Smoothing {
        boundary_cos: 2.0,
        step: 0.5,
        feature_cos: -2.0,
        rank_ratio: 0.0,
    };
    for patch_size in [8, 64] {
        let (_, out) = with_rounds(&input, patch_size, ROOMY, true, |r| {
            cavity_remesh::smooth::smooth(r, &params, 10)?;
            Ok(RunReport::default())
        })
        .expect("smoothing");
        assert_eq!(sorted_faces(&out), sorted_faces(&input));
        assert!(faces_up(&out));
        for (p, q) in input.positions.iter().zip(&out.positions) {
            assert_eq!(q[2], 0.0);
            let boundary = p[0] == 0.0 || p[0] == 12.0 || p[1] == 0.0 || p[1] == 12.0;
            if boundary {
                assert_eq!(p, q);
            }
        }
        let (before, after) = (length_spread(&input), length_spread(&out));
        assert!(after < 0.7 * before, "{before} -> {after}");
    }
}

/// One tangential smoothing step of `m` (`rank_ratio` 0), serial over the
/// reference mesh: the oracle of `cavity_remesh_kernels::smooth`, written from its rules
/// (every vertex sees its neighbours' old positions).
fn serial_smoothing_step(m: &TriMesh, r: &ReferenceMesh, params: &Smoothing) -> Vec<[f32; 3]> {
    use glam::Vec3;
    let at = |v: u32| Vec3::from(m.positions[v as usize]);
    let corner = |f: u32| r.fv(f).map(at);
    let normal = |[a, b, c]: [Vec3; 3]| (b - a).cross(c - a);
    (0..r.num_vertices() as u32)
        .map(|v| {
            let p = at(v);
            let edges = r.ve(v);
            let other = |e: u32| {
                let [a, b] = r.edge_vertices(e);
                if a == v { b } else { a }
            };
            let boundary: Vec<u32> = edges
                .iter()
                .copied()
                .filter(|&e| r.ef(e).len() == 1)
                .collect();
            let non_manifold = edges
                .iter()
                .any(|&e| r.ef(e).len() != 1 && r.ef(e).len() != 2);
            let moved = if !boundary.is_empty() || non_manifold {
                if boundary.len() != 2 || non_manifold || params.boundary_cos > 1.0 {
                    None
                } else {
                    let (u, w) = (at(other(boundary[0])), at(other(boundary[1])));
                    let (d0, d1) = (p - u, w - p);
                    (d0.dot(d1) >= params.boundary_cos * d0.length() * d1.length())
                        .then(|| {
                            let chord = w - u;
                            let s = params.step * (0.5 * (u + w) - p).dot(chord) / chord.length();
                            let side = if s >= 0.0 { w - p } else { u - p };
                            (chord.length() > 0.0 && side.length() > 0.0)
                                .then(|| p + (s.abs() / side.length()).min(0.25) * side)
                        })
                        .flatten()
                }
            } else {
                let faces: Vec<u32> = r.vf(v);
                let features = edges.iter().any(|&e| {
                    let [n0, n1] = [r.ef(e)[0], r.ef(e)[1]].map(|f| normal(corner(f)));
                    let l = n0.length() * n1.length();
                    l <= 0.0 || n0.dot(n1) < params.feature_cos * l
                });
                let weight: f32 = faces.iter().map(|&f| normal(corner(f)).length()).sum();
                let n: Vec3 = faces.iter().map(|&f| normal(corner(f))).sum();
                let centre: Vec3 = faces
                    .iter()
                    .map(|&f| {
                        let c = corner(f);
                        normal(c).length() * (c[0] + c[1] + c[2]) / 3.0
                    })
                    .sum();
                (!features && weight > 0.0 && n.length() > 0.5 * weight).then(|| {
                    let d = centre / weight - p;
                    let u = n / n.length();
                    p + params.step * (d - d.dot(u) * u)
                })
            };
            moved.unwrap_or(p).to_array()
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(32)))]

    /// Smoothing steps on the dynamic mesh (rings built once, then steps
    /// between two position buffers) move every vertex where the serial
    /// oracle does, on random meshes (holes, tori, fans, non-manifold
    /// edges, isolated vertices) with jittered positions, features and
    /// sliding boundaries, at small and large patch sizes.
    #[test]
    fn smoothing_matches_a_serial_smoothing(
        input in any_mesh(),
        steps in 1u32..5,
        features in any::<bool>(),
        sliding in any::<bool>(),
        patch_size in prop_oneof![Just(8u32), Just(64)],
    ) {
        let mut input = input;
        for (i, p) in input.positions.iter_mut().enumerate() {
            let h = (i as u32).wrapping_mul(2_654_435_761);
            p[0] += ((h & 0xff) as f32 / 255.0 - 0.5) * 0.4;
            p[1] += ((h >> 8 & 0xff) as f32 / 255.0 - 0.5) * 0.4;
            p[2] += ((h >> 16 & 0xff) as f32 / 255.0 - 0.5) * 0.6;
        }
        let params = Smoothing {
            boundary_cos: if sliding { 0.7 } else { 2.0 },
            step: 0.5,
            feature_cos: if features { 0.6 } else { -2.0 },
            rank_ratio: 0.0,
        };
        let (_, out) = with_rounds(&input, patch_size, ROOMY, false, |r| {
            cavity_remesh::smooth::smooth(r, &params, steps)?;
            Ok(RunReport::default())
        })
        .expect("smoothing");
        let reference = ReferenceMesh::new(&input).expect("valid");
        let mut expected = input.clone();
        for _ in 0..steps {
            expected.positions = serial_smoothing_step(&expected, &reference, &params);
        }
        prop_assert_eq!(sorted_faces(&out), sorted_faces(&input));
        for (v, (p, q)) in expected.positions.iter().zip(&out.positions).enumerate() {
            let off = (0..3).map(|k| (p[k] - q[k]).abs()).fold(0.0, f32::max);
            prop_assert!(off < 1e-3, "vertex {}: serial {:?}, dynamic {:?}", v, p, q);
        }
    }
}

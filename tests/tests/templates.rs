//! The cavity templates beyond the edge flip, driven by the mesh
//! operations of the test kernel crate (`tests/kernels`) and remeshing's
//! edge split and safe collapse, on the backend `CAVITY_TEST_DEVICE` names
//! (the CPU backend with four racing workers, or the GPU), `validate()`
//! after every round: edge split (EdgeFaces),
//! face split 1 to 3 (Face), edge collapse (EdgeStar, with the link
//! condition checked on the boundary loop), vertex delete (VertexStar, the
//! hole re-triangulated as a fan), edge delete (EdgeFaces, no fill-in),
//! face delete (Face, no fill-in), a
//! user-defined cavity (Custom), patch slicing under growth (also with
//! rounds launched ahead of their status), declined
//! seeds that stay declined when they change patch (CPU backend only), the
//! growth operations and the collapse on proptest meshes, screened seeds
//! and sweeps over the changed patches only. The remeshing's and
//! tracking's own operations are tested with their applications
//! (`apps/remesh/tests/operations.rs`, `apps/track/tests/track.rs`).
//! `TEST_WORKERS` sets the CPU backend's workers (default 4).
//!
//! Longer than 700 lines as one file on purpose: every file under `tests/`
//! is a binary of its own, linked against the whole library and loading
//! the test kernels; one binary for the templates keeps the build and the
//! GPU run short.

use cavity::TriMesh;
use cavity::backend::cpu::CpuRounds;
use cavity::backend::cpu::{CpuBackend, Schedule};
use cavity::dynamic::{CapacityFactors, DynamicMesh};
use cavity::rounds::{RunError, Update, sweeps, sweeps_at_most};
use cavity_device::block::Block;
use cavity_device::dynamic::cavity::fills::MAX_LOOP;
use cavity_device::dynamic::cavity::{CavityApp, Ctx, FillIn, Template};
use cavity_device::geometry::area;
use cavity_device::layout::Kind;
use cavity_reference::ReferenceMesh;
use cavity_remesh_kernels::CollapseShortEdgesSafely;
use cavity_remesh_kernels::split::SplitLongEdges;
use cavity_test_kernels::operations::{
    CollapseShortEdges, CollapseSmallFaces, DeleteEdgesInBall, DeleteFacesInBall,
    DeleteVerticesInBall, RefineFaceNeighbourhood, SplitLargeFaces, SplitVertices,
};
use cavity_tests::{
    ROOMY, Skips, any_mesh, cases, concat, edge_length, euler, faces_up, fan, grid, longest,
    longest_where, run, run_with, sorted_faces, test_backend_with, try_run_in, validate_each_round,
    with_rounds, with_rounds_in, workers,
};
use proptest::prelude::*;

// The remeshing's edge split and safe collapse are these tests' workload.
cavity_tests::test_kernels!(cavity_remesh::add_kernels);

/// Longest edge among the edges with one or two faces (the ones an edge
/// split takes).
fn longest_splittable(m: &TriMesh) -> f32 {
    longest_where(m, |k| matches!(k, 1 | 2))
}

#[test]
fn edge_split_until_short() {
    for patch_size in [8, 64] {
        // Torus segments are about 3.1 (outer), 1.6 (inner) and 0.8 (minor).
        let input = grid(8, 8, &[false, true], true, &[]);
        let (report, out) = run(&input, patch_size, SplitLongEdges::new(1.7), true);
        assert!(report.flips > 0);
        assert_eq!(
            out.positions.len(),
            input.positions.len() + report.flips as usize
        );
        assert_eq!(
            out.faces.len(),
            input.faces.len() + 2 * report.flips as usize
        );
        assert_eq!(euler(&out), euler(&input));
        assert_eq!(
            &out.positions[..input.positions.len()],
            &input.positions[..]
        );
    }
}

/// The largest valence of a vertex whose edges all have two faces (its
/// star is closed), by the reference mesh.
fn largest_interior_valence(m: &TriMesh) -> usize {
    let r = ReferenceMesh::new(m).expect("valid");
    (0..r.num_vertices() as u32)
        .filter(|&v| {
            let edges = r.ve(v);
            !edges.is_empty() && edges.iter().all(|&e| r.ef(e).len() == 2)
        })
        .map(|v| r.vv(v).len())
        .max()
        .unwrap_or(0)
}

#[test]
fn vertex_split_lowers_valences() {
    // Fans of valence 17 and 10 around interior centres (planar), alone
    // and with a torus.
    let fans = concat(&[fan(17, true), fan(10, true)]);
    let with_torus = concat(&[fans.clone(), grid(6, 6, &[false, true], true, &[])]);
    for (input, planar) in [(fans, true), (with_torus, false)] {
        assert_eq!(largest_interior_valence(&input), 17);
        for patch_size in [8, 64] {
            let app = SplitVertices { max_valence: 8 };
            let (report, out) = run(&input, patch_size, app, true);
            assert!(report.flips >= 2, "{report:?}");
            // +1 vertex, +2 faces a split; the topology stays.
            assert_eq!(
                out.positions.len(),
                input.positions.len() + report.flips as usize
            );
            assert_eq!(
                out.faces.len(),
                input.faces.len() + 2 * report.flips as usize
            );
            assert_eq!(euler(&out), euler(&input));
            assert!(largest_interior_valence(&out) <= 8, "{report:?}");
            assert!(!planar || faces_up(&out), "a split folded a face over");
        }
    }
}

#[test]
fn face_collapse_removes_faces_with_their_vertices() {
    // A torus of 0.5-area faces, some shrunk to under a tenth.
    let mut input = grid(10, 10, &[false, true], true, &[]);
    let r = ReferenceMesh::new(&input).unwrap();
    for v in [12u32, 47, 75] {
        // Pull a face's three corners towards their centroid.
        let f = r.vf(v)[0] as usize;
        let corners = input.faces[f];
        let c = corners.map(|w| input.positions[w as usize]);
        let m = [0, 1, 2].map(|k| (c[0][k] + c[1][k] + c[2][k]) / 3.0);
        for w in corners {
            let p = &mut input.positions[w as usize];
            for k in 0..3 {
                p[k] = m[k] + 0.2 * (p[k] - m[k]);
            }
        }
    }
    let min_area = 0.05;
    let small = |m: &TriMesh| {
        m.faces
            .iter()
            .filter(|f| area(f.map(|v| m.positions[v as usize])) < min_area)
            .count()
    };
    assert!(small(&input) >= 3);
    for patch_size in [8, 64] {
        let (report, out) = run(&input, patch_size, CollapseSmallFaces { min_area }, true);
        assert!(report.flips >= 3, "{report:?}");
        // -2 vertices, -4 faces a collapse; the topology stays.
        assert_eq!(
            out.positions.len(),
            input.positions.len() - 2 * report.flips as usize
        );
        assert_eq!(
            out.faces.len(),
            input.faces.len() - 4 * report.flips as usize
        );
        assert_eq!(euler(&out), euler(&input));
        assert_eq!(small(&out), 0, "{report:?}");
    }
}

#[test]
fn face_split_one_to_three() {
    let input = grid(6, 6, &[true, false], false, &[]);
    let (report, out) = run(&input, 8, SplitLargeFaces { max_area: 0.2 }, true);
    // Every face (area 0.5) split once, none of the children (1/6).
    assert_eq!(report.flips as usize, input.faces.len());
    assert_eq!(out.faces.len(), 3 * input.faces.len());
    assert_eq!(euler(&out), euler(&input));
    assert_eq!(longest(&out), longest(&input));
}

#[test]
fn edge_collapse_keeps_topology() {
    // A torus whose v-direction is squeezed: the short edges collapse.
    let mut input = grid(12, 24, &[false, true], true, &[]);
    for p in &mut input.positions {
        p[2] *= 0.2;
    }
    for patch_size in [8, 64] {
        let (report, out) = run(
            &input,
            patch_size,
            CollapseShortEdges { min_length: 0.3 },
            true,
        );
        assert!(report.flips > 0, "{report:?}");
        assert_eq!(
            out.faces.len(),
            input.faces.len() - 2 * report.flips as usize
        );
        assert_eq!(euler(&out), euler(&input));
    }
}

#[test]
fn vertex_delete_refills_the_hole() {
    let input = grid(16, 16, &[false, true], true, &[]);
    // A ball around a point of the torus's outer equator, about three
    // grid steps wide: neighbouring deletions conflict and go in turns.
    let app = DeleteVerticesInBall {
        centre: [4.0, 0.0, 0.0],
        radius: 2.5,
    };
    let (report, out) = run(&input, 16, app, true);
    assert!(report.flips > 0);
    assert_eq!(
        out.faces.len(),
        input.faces.len() - 2 * report.flips as usize
    );
    assert_eq!(euler(&out), euler(&input));
}

#[test]
fn face_delete_opens_holes() {
    let input = grid(16, 16, &[false, true], false, &[]);
    let app = DeleteFacesInBall {
        centre: [8.0, 8.0, 0.0],
        radius: 3.0,
    };
    let (report, out) = run(&input, 16, app, false);
    assert!(report.flips > 0);
    assert_eq!(out.faces.len(), input.faces.len() - report.flips as usize);
}

#[test]
fn edge_delete_removes_edges_and_their_faces() {
    let input = grid(16, 16, &[false, true], false, &[]);
    let app = DeleteEdgesInBall {
        centre: [8.0, 8.0, 0.0],
        radius: 3.0,
    };
    let in_ball = |m: &TriMesh, a: u32, b: u32| {
        let (p, q) = (m.positions[a as usize], m.positions[b as usize]);
        let mid = [0, 1, 2].map(|k| 0.5 * (p[k] + q[k]));
        (mid[0] - 8.0).powi(2) + (mid[1] - 8.0).powi(2) + mid[2].powi(2) < 9.0
    };
    let touches = |m: &TriMesh, f: &[u32; 3]| (0..3).any(|i| in_ball(m, f[i], f[(i + 1) % 3]));
    for patch_size in [8, 64] {
        let (report, out) = run(&input, patch_size, app, false);
        assert!(report.flips > 0);
        // Every face with an edge in the ball goes (with the first of its
        // edges deleted), every other face stays.
        let kept = input.faces.iter().filter(|f| !touches(&input, f)).count();
        assert_eq!(out.faces.len(), kept);
        assert!(!out.faces.iter().any(|f| touches(&out, f)));
    }
}

#[test]
fn slicing_keeps_the_vertices_of_faceless_edges() {
    // Face and edge deletions leave faceless edges, whose owner holds their
    // vertices while the vertices' owner need not hold the edges; then the
    // grid grows until patches are sliced. A vertex that moves in a slicing
    // must stay reachable through a forwarding entry, or the owner of such
    // an edge loses its vertex (the review of 18e006d found it: "refers to
    // vertex 45, which is not active"). Every round is validated.
    let factors = CapacityFactors {
        elements: 1.0,
        patches: 64.0,
    };
    let mut slices = 0;
    for seed in 0..12u32 {
        let input = grid(16, 16, &[false, true], seed % 2 == 0, &[]);
        let c = 2.0 + seed as f32 * 1.1;
        let faces = DeleteFacesInBall {
            centre: [c, 16.0 - c, 0.0],
            radius: 2.5 + (seed % 3) as f32,
        };
        let edges = DeleteEdgesInBall {
            centre: [16.0 - c, c, 0.0],
            radius: 2.0,
        };
        let grow = SplitLongEdges::new(0.5);
        for patch_size in [16, 32, 64] {
            let mut check = validate_each_round(false);
            let run = with_rounds(&input, patch_size, factors, false, |r| {
                sweeps(r, &faces, false, Some(&mut check))?;
                sweeps(r, &edges, false, Some(&mut check))?;
                sweeps(r, &grow, false, Some(&mut check))
            });
            // A capacity error is allowed (with_rounds validated the mesh).
            if let Ok((report, _)) = run {
                slices += report.slices;
            }
        }
    }
    assert!(slices > 100, "{slices} slicings");
}

#[test]
fn growth_slices_patches() {
    // Tight patches (capacity factor 1) and meshes that grow several times
    // over: patches run out of room and are sliced again and again. The
    // planar grid's unit boundary edges are split too.
    let factors = CapacityFactors {
        elements: 1.0,
        patches: 64.0,
    };
    for (input, max_length) in [
        (grid(16, 16, &[false, true], true, &[]), 0.5),
        (grid(12, 12, &[false, true], false, &[]), 0.6),
    ] {
        for patch_size in [16, 64] {
            let app = SplitLongEdges::new(max_length);
            let (report, out) = run_with(&input, patch_size, factors, app, true);
            eprintln!("patch size {patch_size}: {report:?}");
            assert!(report.slices > 0, "{report:?}");
            assert!(
                report.patches > input.faces.len() as u32 / patch_size,
                "{report:?}"
            );
            // An interior split adds two faces and no boundary edge, a
            // boundary split one face and one boundary edge.
            let boundary_splits = boundary_edges(&out) - boundary_edges(&input);
            assert_eq!(
                out.faces.len(),
                input.faces.len() + 2 * report.flips as usize - boundary_splits
            );
            assert!(out.faces.len() > 3 * input.faces.len(), "{report:?}");
            assert_eq!(euler(&out), euler(&input));
            // Every edge meets the criterion: a cavity out of room retries
            // after the cleanup or slices its patch, never drops out.
            assert!(longest(&out) <= max_length, "{report:?}");
            // Longest-edge bisection keeps every angle at least half the
            // input's smallest (Rivara): no needles, bounded valences.
            assert!(
                smallest_angle(&out) >= 0.5 * smallest_angle(&input),
                "{report:?}"
            );
            assert_eq!(report.declined, 0, "{report:?}");
            assert_eq!(
                &out.positions[..input.positions.len()],
                &input.positions[..]
            );
        }
    }
}

/// Rounds launched before the previous round's status is read (as the
/// GPU's sweeps run, and the CPU backend's racing schedule: no
/// `after_round`): on tight patches that slice again and again, each
/// round is launched with as many blocks as patches were queued when the
/// round before began, and after the last one a round finds the queue
/// empty. The mesh comes out
/// valid, every edge short enough, the counts as the splits say; out of
/// patch slots, the error comes back and the mesh is valid.
#[test]
fn rounds_launched_ahead_split_and_slice() {
    let factors = CapacityFactors {
        elements: 1.0,
        patches: 64.0,
    };
    let input = grid(16, 16, &[false, true], true, &[]);
    let app = SplitLongEdges::new(0.5);
    for patch_size in [16, 64] {
        let mut dynamic = DynamicMesh::new(&input, patch_size, factors).expect("dynamic");
        let backend = test_backend_with(Schedule::Racing);
        let report = workers()
            .install(|| backend.run_rounds(&mut dynamic, |r| sweeps(r, &app, false, None), |e| e))
            .expect("run")
            .value;
        dynamic.validate(true).expect("valid");
        let out = dynamic.to_mesh();
        assert!(report.slices > 0, "{report:?}");
        assert_eq!(euler(&out), euler(&input));
        assert!(longest(&out) <= 0.5, "{report:?}");
        assert_eq!(
            out.faces.len(),
            input.faces.len() + 2 * report.flips as usize,
            "{report:?}"
        );
    }
    // Out of patch slots: the round launched after the one that erred does
    // nothing, the error comes back and the mesh stays valid.
    let tight = CapacityFactors {
        elements: 1.0,
        patches: 1.0,
    };
    let mut dynamic = DynamicMesh::new(&input, 16, tight).expect("dynamic");
    let backend = test_backend_with(Schedule::Racing);
    let ran = workers()
        .install(|| backend.run_rounds(&mut dynamic, |r| sweeps(r, &app, false, None), |e| e));
    assert!(
        matches!(ran, Err(RunError::Fatal(..))),
        "{:?}",
        ran.map(|r| r.value)
    );
    dynamic.validate(true).expect("valid after the error");
}

/// The smallest corner angle, in radians.
fn smallest_angle(m: &TriMesh) -> f32 {
    let p = |v: u32| glam::Vec3::from(m.positions[v as usize]);
    m.faces
        .iter()
        .flat_map(|f| {
            (0..3).map(move |i| {
                let [a, b, c] = [f[i], f[(i + 1) % 3], f[(i + 2) % 3]].map(p);
                (b - a).angle_between(c - a)
            })
        })
        .fold(f32::INFINITY, f32::min)
}

/// Edges with one face.
fn boundary_edges(m: &TriMesh) -> usize {
    let r = ReferenceMesh::new(m).expect("valid");
    (0..r.num_edges() as u32)
        .filter(|&e| r.ef(e).len() == 1)
        .count()
}

#[test]
fn user_defined_cavity() {
    let input = grid(12, 12, &[false, true], false, &[]);
    for patch_size in [8, 64] {
        // Input faces have area 0.5; a filled cavity's six faces share the
        // four deleted ones' area 2 (each op: four faces out, six in).
        let (report, out) = run(
            &input,
            patch_size,
            RefineFaceNeighbourhood { min_area: 0.45 },
            true,
        );
        assert!(report.flips > 0, "{report:?}");
        assert_eq!(
            out.faces.len(),
            input.faces.len() + 2 * report.flips as usize
        );
        assert_eq!(
            out.positions.len(),
            input.positions.len() + report.flips as usize
        );
        assert_eq!(euler(&out), euler(&input));
    }
}

/// An edge collapse whose fill-in always declines: every interior edge is
/// a seed, every cavity (both vertex stars) makes its patch expand, and
/// nothing changes but ownership.
struct DeclineEveryCollapse;

impl CavityApp for DeclineEveryCollapse {
    const TEMPLATE: Template = Template::EdgeStar;
    const MAX_NEW: [u32; 3] = [0, 0, 0];
    const JOINS_BOUNDARY: bool = false;
    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, e: u32) -> bool {
        ctx.edge_faces(e).0 == 2
    }
    fn fill<B: Block>(&self, _fill: &mut FillIn<'_, B>) -> bool {
        false
    }
}

/// A seed whose fill-in declined stays out of the sweep whichever patch
/// owns it (`migrate::carry_declined`, `slice::split_declined`): in a
/// sweep of [`DeclineEveryCollapse`] every interior edge declines exactly
/// once, while patches take each other's elements and slice. When a patch
/// that took declined seeds registered them again, its halves traded the
/// same elements back and forth until no patch slot was left (issue 4).
/// On the CPU backend only: the GPU runs the applications of the device
/// crate.
#[test]
fn a_declined_seed_stays_declined_whichever_patch_owns_it() {
    let input = grid(48, 48, &[false, true], false, &[]);
    let stats = ReferenceMesh::new(&input).expect("valid grid").stats();
    let interior = stats.edges - stats.boundary_edges;
    let mut sliced = false;
    for patch_size in [16, 64] {
        let mut dynamic =
            DynamicMesh::new(&input, patch_size, CapacityFactors::default()).expect("dynamic");
        let report = workers()
            .install(|| {
                let mut check = validate_each_round(true);
                sweeps(
                    &mut CpuRounds::with_backend(
                        &mut dynamic,
                        CpuBackend::with_schedule(Schedule::Racing),
                    ),
                    &DeclineEveryCollapse,
                    false,
                    Some(&mut check),
                )
            })
            .expect("run");
        assert_eq!(report.declined, interior as u64, "{report:?}");
        assert_eq!((report.flips, report.sweeps), (0, 1), "{report:?}");
        assert_eq!(sorted_faces(&dynamic.to_mesh()), sorted_faces(&input));
        sliced |= report.slices > 0;
    }
    assert!(sliced, "no patch sliced: the test does not cover slicing");
}

/// Largest face area.
fn largest_face(m: &TriMesh) -> f32 {
    m.faces
        .iter()
        .map(|f| area(f.map(|v| m.positions[v as usize])))
        .fold(0.0, f32::max)
}

/// Room for growth on tiny patches: slicing takes over when a patch fills.
/// The cases of `operations_on_random_meshes` that stopped with a
/// capacity error: at most a fifth (and two more) may.
static OPERATION_SKIPS: Skips = Skips::new("operations_on_random_meshes", 20, 2);

/// A run's result, or `None` for a run that stopped with a capacity error
/// (counted in [`OPERATION_SKIPS`]); any other error fails the case.
fn checked_or_skipped<T>(run: Result<T, RunError>) -> Result<Option<T>, TestCaseError> {
    match run {
        Ok(value) => Ok(Some(value)),
        Err(e @ RunError::Fatal(..)) => OPERATION_SKIPS.skip(e).map(|()| None),
        Err(e) => Err(TestCaseError::fail(format!("the run failed: {e}"))),
    }
}

const GROWTH: CapacityFactors = CapacityFactors {
    elements: 2.0,
    patches: 32.0,
};

/// Random meshes (grids with holes, tori, fans, non-manifold edges,
/// isolated vertices, shuffled) at patch sizes down to 4, on four racing
/// workers or in the deterministic schedule: edge splits, face splits,
/// edge collapses, vertex splits and face collapses keep the mesh
/// valid (every round) and its Euler characteristic; they meet their
/// criterion everywhere on manifold inputs (elsewhere a fill-in may
/// decline a degenerate cavity) and change the counts they should. A run
/// that stops with a capacity error (the stars of vertices whose valence
/// the operations raised do not fit in a patch) must leave a valid mesh.
#[test]
fn operations_on_random_meshes() {
    let config = ProptestConfig::with_cases(cases(32));
    proptest!(config, |(
        input in any_mesh(),
        operation in 0u8..5,
        patch_size in prop::sample::select(vec![4u32, 8, 16, 64]),
        racing in any::<bool>(),
    )| {
        OPERATION_SKIPS.ran();
        let schedule = if racing { Schedule::Racing } else { Schedule::Deterministic };
        let manifold = DynamicMesh::new(&input, patch_size, GROWTH)
            .expect("dynamic mesh")
            .validate(true)
            .is_ok();
        match operation {
            0 => {
                // Half the longest edge a split takes (one on three faces or
                // more blocks the splits of its faces' shorter edges:
                // longest-edge bisection).
                let max_length = longest_splittable(&input) / 2.0;
                let Some((report, out)) =
                    checked_or_skipped(try_run_in(schedule, &input, patch_size, GROWTH, SplitLongEdges::new(max_length), manifold))?
                else {
                    return Ok(());
                };
                let boundary_splits = boundary_edges(&out) - boundary_edges(&input);
                prop_assert_eq!(
                    out.faces.len(),
                    input.faces.len() + 2 * report.flips as usize - boundary_splits
                );
                prop_assert_eq!(out.positions.len(), input.positions.len() + report.flips as usize);
                prop_assert_eq!(&out.positions[..input.positions.len()], &input.positions[..]);
                if manifold {
                    prop_assert!(longest_splittable(&out) <= max_length, "{:?}", report);
                    // Within rounding: halving an equilateral face meets the
                    // bound exactly.
                    let (before, after) = (smallest_angle(&input), smallest_angle(&out));
                    prop_assert!(after >= 0.5 * before - 1e-4, "{} -> {}", before, after);
                }
                prop_assert_eq!(euler(&out), euler(&input));
            }
            1 => {
                // One level of 1-to-3 splits of the largest faces (each
                // level doubles the valence of the vertices it touches).
                let max_area = largest_face(&input) / 2.9;
                let Some((report, out)) =
                    checked_or_skipped(try_run_in(schedule, &input, patch_size, GROWTH, SplitLargeFaces { max_area }, manifold))?
                else {
                    return Ok(());
                };
                prop_assert_eq!(out.faces.len(), input.faces.len() + 2 * report.flips as usize);
                prop_assert_eq!(&out.positions[..input.positions.len()], &input.positions[..]);
                if manifold {
                    prop_assert!(largest_face(&out) <= max_area, "{:?}", report);
                }
                prop_assert_eq!(euler(&out), euler(&input));
            }
            3 => {
                // Split the vertices of valence above 6 (the regular grids'
                // interior valence): fans and non-manifold parts have some.
                let Some((report, out)) =
                    checked_or_skipped(try_run_in(schedule, &input, patch_size, GROWTH, SplitVertices { max_valence: 6 }, manifold))?
                else {
                    return Ok(());
                };
                prop_assert_eq!(out.positions.len(), input.positions.len() + report.flips as usize);
                prop_assert_eq!(out.faces.len(), input.faces.len() + 2 * report.flips as usize);
                if manifold {
                    prop_assert!(largest_interior_valence(&out) <= 6, "{:?}", report);
                }
                prop_assert_eq!(euler(&out), euler(&input));
            }
            4 => {
                // Collapse the faces smaller than the median.
                let mut areas: Vec<f32> = input
                    .faces
                    .iter()
                    .map(|f| area(f.map(|v| input.positions[v as usize])))
                    .collect();
                areas.sort_by(f32::total_cmp);
                // A generated mesh may have no faces: nothing to collapse.
                let Some(&min_area) = areas.get(areas.len() / 2) else {
                    return Ok(());
                };
                let Some((report, out)) =
                    checked_or_skipped(try_run_in(schedule, &input, patch_size, GROWTH, CollapseSmallFaces { min_area }, manifold))?
                else {
                    return Ok(());
                };
                prop_assert_eq!(out.positions.len(), input.positions.len() - 2 * report.flips as usize);
                prop_assert_eq!(out.faces.len(), input.faces.len() - 4 * report.flips as usize);
                prop_assert_eq!(euler(&out), euler(&input));
            }
            _ => {
                // Collapse the shorter half of the interior edges.
                let min_length = median_interior(&input);
                let Some((report, out)) =
                    checked_or_skipped(try_run_in(schedule, &input, patch_size, GROWTH, CollapseShortEdges { min_length }, manifold))?
                else {
                    return Ok(());
                };
                prop_assert_eq!(out.faces.len(), input.faces.len() - 2 * report.flips as usize);
                if manifold {
                    // Lengths within rounding of the threshold may go
                    // either way on the device.
                    let left = collapsible_shorter(&out, min_length * (1.0 - 1e-5));
                    prop_assert_eq!(left, None, "{:?}", report);
                }
                prop_assert_eq!(euler(&out), euler(&input));
            }
        }
    });
    OPERATION_SKIPS.summary();
}

/// Median length of the edges with two faces (0 without any).
fn median_interior(m: &TriMesh) -> f32 {
    let r = ReferenceMesh::new(m).expect("valid");
    let mut lengths: Vec<f32> = (0..r.num_edges() as u32)
        .filter(|&e| r.ef(e).len() == 2)
        .map(|e| edge_length(m, r.edge_vertices(e)))
        .collect();
    lengths.sort_by(f32::total_cmp);
    lengths.get(lengths.len() / 2).copied().unwrap_or(0.0)
}

/// An edge shorter than `min_length` that [`CollapseShortEdges`] would
/// take: its endpoints are interior manifold vertices whose rings share
/// exactly the edge's two opposite vertices (the link condition), and the
/// loop around the two stars fits a fill-in.
fn collapsible_shorter(m: &TriMesh, min_length: f32) -> Option<[u32; 2]> {
    let r = ReferenceMesh::new(m).expect("valid");
    let interior =
        |v: u32| r.is_manifold_interior_vertex(v) && r.ve(v).iter().all(|&e| r.ef(e).len() == 2);
    (0..r.num_edges() as u32)
        .map(|e| r.edge_vertices(e))
        .filter(|&[a, b]| edge_length(m, [a, b]) < min_length && interior(a) && interior(b))
        .find(|&[a, b]| {
            let (ra, rb) = (r.vv(a), r.vv(b));
            let common = ra.iter().filter(|v| rb.contains(v)).count();
            common == 2 && ra.len() + rb.len() - 4 <= MAX_LOOP as usize
        })
}

/// `A` with [`CavityApp::screen`] left out: `create` runs on every
/// eligible seed.
struct Unscreened<A>(A);

impl<A: CavityApp> CavityApp for Unscreened<A> {
    const TEMPLATE: Template = A::TEMPLATE;
    const MAX_NEW: [u32; 3] = A::MAX_NEW;
    const JOINS_BOUNDARY: bool = A::JOINS_BOUNDARY;
    fn max_new(&self, boundary: u32) -> [u32; 3] {
        self.0.max_new(boundary)
    }
    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, seed: u32) -> bool {
        self.0.create(ctx, seed)
    }
    fn deleted<B: Block>(&self, ctx: &Ctx<'_, B>, seed: u32, delete: impl FnMut(Kind, u32)) {
        self.0.deleted(ctx, seed, delete)
    }
    fn priority<B: Block>(&self, ctx: &Ctx<'_, B>, seed: u32, random: u32) -> u32 {
        self.0.priority(ctx, seed, random)
    }
    fn fill<B: Block>(&self, fill: &mut FillIn<'_, B>) -> bool {
        self.0.fill(fill)
    }
}

/// The mesh after sweeps of `app` over `input` in the CPU backend's
/// deterministic schedule (patches of 16 faces; with `changed_only`, the
/// sweeps after the first visit the changed patches, which a survey
/// narrows), or `None` after any run error.
fn deterministic_sweeps<A: CavityApp>(
    input: &TriMesh,
    app: &A,
    changed_only: bool,
) -> Option<TriMesh>
where
    for<'x> CpuRounds<'x>: Update<A>,
{
    let mut dynamic = DynamicMesh::new(input, 16, GROWTH).expect("dynamic mesh");
    let ran = sweeps(
        &mut CpuRounds::with_backend(
            &mut dynamic,
            CpuBackend::with_schedule(Schedule::Deterministic),
        ),
        app,
        changed_only,
        None,
    );
    ran.ok().map(|_| dynamic.to_mesh())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(32)))]

    /// The screens of the split and of the safe collapse only leave out
    /// seeds `create` turns down (and defers nothing on): with the screen
    /// and without it, the deterministic schedule gives the same mesh (the
    /// gathered seeds are in ascending order on the host, so the cavities
    /// are numbered alike), in sweeps over every patch and in sweeps over
    /// the changed ones after a survey.
    #[test]
    fn screened_seeds_change_nothing(input in any_mesh(), scale in 0.5f32..2.0) {
        for changed_only in [false, true] {
            let split = SplitLongEdges::new(0.6 * scale);
            let split_out = deterministic_sweeps(&input, &split, changed_only);
            prop_assert!(split_out.is_some(), "the split failed: nothing to compare");
            prop_assert_eq!(
                &split_out,
                &deterministic_sweeps(&input, &Unscreened(split), changed_only)
            );
            let collapse = CollapseShortEdgesSafely {
                min_length: 0.45 * scale,
                degenerate_length: 0.01 * scale,
                boundary_cos: 0.87,
                corner_tolerance: 0.1 * scale,
                max_length: 1.2 * scale,
                feature_cos: 0.5,
                flat_caps: 0,
            };
            let start = split_out.expect("checked above");
            prop_assert_eq!(
                deterministic_sweeps(&start, &collapse, changed_only),
                deterministic_sweeps(&start, &Unscreened(collapse), changed_only)
            );
            let repair = CollapseShortEdgesSafely { flat_caps: 1, ..collapse };
            prop_assert_eq!(
                deterministic_sweeps(&start, &repair, changed_only),
                deterministic_sweeps(&start, &Unscreened(repair), changed_only)
            );
        }
    }
}

#[test]
fn sweeps_at_most_visits_only_changed_patches_after_the_first() {
    // The grid's diagonals (√2) are the only edges longer than 1.2: the
    // first sweep splits them all, the second finds nothing. Visiting only
    // the changed patches that register a cavity, the second sweep
    // schedules none; visiting all, it schedules every patch again.
    let input = grid(12, 12, &[false, true], false, &[]);
    let split = SplitLongEdges::new(1.2);
    let deterministic = |changed_only: bool| {
        with_rounds_in(Schedule::Deterministic, &input, 16, ROOMY, true, |r| {
            if changed_only {
                sweeps_at_most(r, &split, 5)
            } else {
                sweeps(r, &split, false, None)
            }
        })
        .expect("run")
        .0
    };
    let (changed, all) = (deterministic(true), deterministic(false));
    assert_eq!((changed.sweeps, all.sweeps), (2, 2));
    assert_eq!(changed.flips, all.flips);
    assert!(
        changed.scheduled + u64::from(all.patches) <= all.scheduled,
        "{changed:?} {all:?}"
    );
}

//! Delaunay edge flips on the dynamic core, CPU backend with all workers
//! racing (and the deterministic schedule, picked at random, in the
//! proptest): after every round the mesh validates; at the end every interior
//! edge is Delaunay (its opposite angles, computed in the test from the
//! definition, sum to at most π), positions, face count and Euler characteristic are
//! unchanged and every input vertex is kept.

use cavity::TriMesh;
use cavity::backend::cpu::Schedule;
use cavity::dynamic::{CapacityFactors, DynamicMesh};
use cavity_delaunay::flip_edges;
use cavity_reference::ReferenceMesh;
use cavity_tests::{any_mesh, cases, grid, test_backend_with, validate_each_round};
use proptest::prelude::*;

/// Moves every vertex by a pseudo-random offset of up to `amount`.
fn jitter(mut mesh: TriMesh, amount: f32, seed: u32) -> TriMesh {
    let mut s = seed.wrapping_mul(2_654_435_761) | 1;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        (s as f32 / u32::MAX as f32) * 2.0 - 1.0
    };
    for p in &mut mesh.positions {
        p[0] += amount * next();
        p[1] += amount * next();
        p[2] += 0.1 * amount * next();
    }
    mesh
}

/// The largest `α + β - π` (radians) over interior edges whose flip is
/// possible (distinct opposite vertices not already joined by an edge):
/// the Delaunay condition of an edge is that the angles `α`, `β` opposite
/// it sum to at most `π`. Computed here from the definition in `f64`
/// (each angle by `atan2(|u × v|, u · v)`), not with the kernel's
/// cotangent; an edge with a face of zero area, where the opposite angle
/// is undefined, is left out.
fn largest_angle_excess(mesh: &TriMesh) -> f64 {
    let r = ReferenceMesh::new(mesh).expect("valid mesh");
    let p = |v: u32| glam::DVec3::from(mesh.positions[v as usize].map(f64::from));
    // The angle at `o` of the triangle `(o, a, b)`, `None` without area.
    let angle = |o: u32, a: u32, b: u32| {
        let (u, v) = (p(a) - p(o), p(b) - p(o));
        let sin = u.cross(v).length();
        (sin > 0.0).then(|| sin.atan2(u.dot(v)))
    };
    let mut worst = f64::NEG_INFINITY;
    for e in 0..r.num_edges() as u32 {
        let faces = r.ef(e);
        if faces.len() != 2 {
            continue;
        }
        let [a, b] = r.edge_vertices(e);
        let opp = |f: u32| {
            *r.fv(f)
                .iter()
                .find(|&&v| v != a && v != b)
                .expect("opposite vertex")
        };
        let (c, d) = (opp(faces[0]), opp(faces[1]));
        if c == d || r.edge_index(c, d).is_some() {
            continue;
        }
        if let (Some(alpha), Some(beta)) = (angle(c, a, b), angle(d, a, b)) {
            worst = worst.max(alpha + beta - std::f64::consts::PI);
        }
    }
    worst
}

fn check_flips(input: &TriMesh, patch_size: u32) {
    check_flips_with(input, patch_size, true, Schedule::Racing);
}

/// Runs the flips with `validate` after every round and checks the result;
/// `needs_flips`: the input must have a non-Delaunay edge; `schedule`: the
/// CPU backend's rounds.
fn check_flips_with(input: &TriMesh, patch_size: u32, needs_flips: bool, schedule: Schedule) {
    let reference = ReferenceMesh::new(input).expect("valid input");
    let mut dynamic =
        DynamicMesh::new(input, patch_size, CapacityFactors::default()).expect("dynamic mesh");
    // Manifoldness is checked after every round when the input has it.
    let manifold = dynamic.validate(true).is_ok();
    dynamic.validate(false).expect("valid before");
    let mut check = validate_each_round(manifold);
    let backend = test_backend_with(schedule);
    cavity_delaunay::add_kernels(&backend).expect("the application's kernels load");
    let report = backend
        .run_rounds(&mut dynamic, |r| flip_edges(r, Some(&mut check)), |e| e)
        .expect("flips")
        .value;
    let out = dynamic.to_mesh();
    let after = ReferenceMesh::new(&out).expect("valid output");
    assert_eq!(out.faces.len(), input.faces.len());
    // Every input vertex kept, with its index and position.
    assert_eq!(out.positions, input.positions);
    assert_eq!(
        after.euler_characteristic(),
        reference.euler_characteristic()
    );
    assert!(
        largest_angle_excess(&out) <= 1e-3,
        "not Delaunay: opposite angles π + {} ({report:?})",
        largest_angle_excess(&out)
    );
    if needs_flips {
        assert!(largest_angle_excess(input) > 1e-3, "the input needs flips");
        assert!(report.flips > 0);
    }
}

#[test]
fn jittered_grid_becomes_delaunay() {
    check_flips(
        &jitter(grid(24, 24, &[false, true, true], false, &[]), 0.3, 7),
        64,
    );
}

#[test]
fn tiny_patches_cross_boundaries() {
    check_flips(
        &jitter(grid(16, 16, &[true, false], false, &[5, 40]), 0.35, 11),
        8,
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(48)))]

    /// Random meshes (grids with holes, tori, fans, non-manifold edges,
    /// isolated vertices, shuffled), jittered, at patch sizes down to 2, on
    /// four workers racing for patches or in the deterministic schedule.
    #[test]
    fn random_meshes_become_delaunay(
        mesh in any_mesh(),
        seed in any::<u32>(),
        patch_size in prop::sample::select(vec![2u32, 4, 8, 16, 64]),
        racing in any::<bool>(),
    ) {
        let input = jitter(mesh, 0.35, seed);
        let schedule = if racing { Schedule::Racing } else { Schedule::Deterministic };
        let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().expect("pool");
        pool.install(|| check_flips_with(&input, patch_size, false, schedule));
    }
}

/// The serial flipper (the benchmark's comparison) reaches a Delaunay mesh
/// too, with the same face count and Euler characteristic.
#[test]
fn serial_flipper_becomes_delaunay() {
    let input = jitter(grid(24, 24, &[false, true, true], false, &[]), 0.3, 7);
    let mut out = input.clone();
    let (flips, _) = cavity_delaunay::serial::flip_serial(&mut out);
    assert!(flips > 0);
    assert_eq!(out.faces.len(), input.faces.len());
    assert!(
        largest_angle_excess(&out) <= 1e-3,
        "not Delaunay: opposite angles π + {}",
        largest_angle_excess(&out)
    );
    assert_eq!(
        ReferenceMesh::new(&out)
            .expect("valid")
            .euler_characteristic(),
        ReferenceMesh::new(&input)
            .expect("valid")
            .euler_characteristic()
    );
}

/// `delaunay_on` (the CLI's path) flips to Delaunay and leaves the
/// output's faces on the backend that flipped them, equal to the faces it
/// returns: the CLI's survey of the output reads them there.
#[test]
fn the_output_faces_stay_on_the_backend() {
    let input = jitter(grid(24, 24, &[false, true, true], false, &[]), 0.3, 7);
    let backend = cavity_tests::test_backend();
    let topology = backend.topology_on(&input).expect("the topology");
    let flipped =
        cavity_delaunay::delaunay_on(&input, topology, 64, CapacityFactors::default(), &backend)
            .expect("flips");
    assert!(flipped.report.flips > 0);
    assert_eq!(flipped.mesh.positions, input.positions);
    assert!(largest_angle_excess(&flipped.mesh) <= 1e-3);
    let faces_on = flipped.faces_on.expect("the backend exported the output");
    let faces_on = faces_on.as_buffer();
    let on = backend
        .read_back(faces_on, faces_on.len())
        .expect("the faces read back");
    assert_eq!(on, flipped.mesh.faces.as_flattened());
}

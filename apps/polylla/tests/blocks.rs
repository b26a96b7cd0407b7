//! The Delaunay triangulation in blocks in parallel
//! (`cavity_polylla::blocks`) against spade's serial one: the same
//! triangles for points in general position (uniform, clustered, on few
//! x values, repeated), a Delaunay triangulation of the same points for
//! cocircular ones (grids, small lattices), a valid half-edge structure
//! every time, the same result on one thread, and inputs the blocks do
//! not take handed back.

use cavity_polylla::HalfEdges;
use cavity_polylla::blocks::{PARALLEL_POINTS, blocks_for, delaunay_half_edges_in_blocks};
use cavity_polylla::generate::{
    delaunay_half_edges, delaunay_half_edges_serial, grid_points, random_points,
};
use cavity_polylla::halfedge::NONE;
use cavity_tests::cases;
use proptest::prelude::*;
use rand::{RngExt, SeedableRng};
use rand_xorshift::XorShiftRng;

/// The triangles of `h`, each from its smallest vertex (orientation
/// kept), sorted.
fn triangles(h: &HalfEdges) -> Vec<[u32; 3]> {
    let mut t: Vec<[u32; 3]> = (0..h.triangles())
        .map(|f| {
            let mut x = [h.origin[3 * f], h.origin[3 * f + 1], h.origin[3 * f + 2]];
            let m = (0..3).min_by_key(|&i| x[i]).unwrap();
            x.rotate_left(m);
            x
        })
        .collect();
    t.sort_unstable();
    t
}

/// Panics unless `h` is a valid half-edge structure of a Delaunay
/// triangulation: twins and next/prev consistent, faces
/// counter-clockwise, every vertex in a triangle, one boundary loop,
/// every interior edge locally Delaunay (the exact in-circle test).
fn check_delaunay(h: &HalfEdges) {
    let p = |v: u32| {
        let [x, y] = h.positions[v as usize];
        robust::Coord { x, y }
    };
    for e in 0..h.len() {
        let t = h.twin[e];
        assert_ne!(t, NONE, "half-edge {e} has no twin");
        assert_eq!(h.twin[t as usize] as usize, e);
        assert_eq!(h.next[h.prev[e] as usize] as usize, e);
        assert_eq!(h.origin[t as usize], h.origin[h.next[e] as usize]);
    }
    assert!(!h.edge_of_vertex.contains(&NONE), "a vertex in no triangle");
    for f in 0..h.triangles() {
        let [a, b, c] = [0, 1, 2].map(|i| h.origin[3 * f + i]);
        assert!(robust::orient2d(p(a), p(b), p(c)) > 0.0, "triangle {f}");
        for i in 0..3 {
            let t = h.twin[3 * f + i];
            if !h.is_border(t) {
                let d = h.origin[h.prev[t as usize] as usize];
                assert!(
                    robust::incircle(p(a), p(b), p(c), p(d)) <= 0.0,
                    "triangle {f}: vertex {d} inside its circle"
                );
            }
        }
    }
    let border = h.len() - h.interior as usize;
    let (mut e, mut steps) = (h.interior, 0);
    loop {
        e = h.next[e as usize];
        steps += 1;
        if e == h.interior || steps > border {
            break;
        }
    }
    assert_eq!(steps, border, "one boundary loop");
    assert_eq!(2 * h.positions.len(), h.triangles() + border + 2);
}

/// The result for `points` in `blocks` (columns, blocks a column),
/// checked against spade's: the same vertices, and the same triangles
/// (`same`) or as many.
fn compare(points: &[[f64; 2]], blocks: [usize; 2], same: bool) -> HalfEdges {
    let serial = delaunay_half_edges_serial(points).unwrap();
    let joined = delaunay_half_edges_in_blocks(points, blocks)
        .unwrap()
        .unwrap_or_else(|| panic!("{blocks:?} blocks refused {} points", points.len()));
    check_delaunay(&joined);
    assert_eq!(joined.positions, serial.positions);
    if same {
        assert_eq!(triangles(&joined), triangles(&serial), "{blocks:?} blocks");
    } else {
        assert_eq!(joined.triangles(), serial.triangles());
    }
    joined
}

fn rng(seed: u64) -> XorShiftRng {
    XorShiftRng::seed_from_u64(seed)
}

#[test]
fn uniform_points_give_spades_triangles_in_any_blocks() {
    let points = random_points(60_000, 3);
    for blocks in [[2, 1], [1, 2], [3, 3], [5, 2], [16, 1], [6, 7]] {
        compare(&points, blocks, true);
    }
}

#[test]
fn clustered_points_and_far_outliers_give_spades_triangles() {
    let mut r = rng(11);
    let centres = [[0.1, 0.2], [0.12, 0.9], [0.8, 0.5], [5000.0, -3.0]];
    let mut points: Vec<[f64; 2]> = (0..30_000)
        .map(|i| {
            let [cx, cy] = centres[i % centres.len()];
            let s = if i % 7 == 0 { 1e-3 } else { 1e-5 };
            [
                cx + s * r.random_range(-1.0..1.0),
                cy + s * r.random_range(-1.0..1.0),
            ]
        })
        .collect();
    points.extend([[-1e6, 0.0], [0.0, 1e6], [1e6, 1e6]]);
    for blocks in [[2, 1], [4, 4], [9, 3]] {
        compare(&points, blocks, true);
    }
}

#[test]
fn points_on_few_columns_and_repeated_points_give_spades_triangles() {
    // Columns cut inside runs of equal x, blocks inside runs of equal y.
    let mut r = rng(5);
    let columns: Vec<[f64; 2]> = (0..20_000)
        .map(|_| {
            [
                f64::from(r.random_range(0..40u32)) / 40.0,
                r.random_range(0.0..1.0),
            ]
        })
        .collect();
    let rows: Vec<[f64; 2]> = columns.iter().map(|&[x, y]| [y, x]).collect();
    for blocks in [[2, 1], [7, 2], [30, 1], [3, 5]] {
        compare(&columns, blocks, true);
        compare(&rows, blocks, true);
    }
    // Every point two or three times, shuffled: merged into its first.
    let base = random_points(10_000, 8);
    let mut repeated: Vec<[f64; 2]> = base
        .iter()
        .enumerate()
        .flat_map(|(i, &p)| std::iter::repeat_n(p, 2 + i % 2))
        .collect();
    for i in (1..repeated.len()).rev() {
        repeated.swap(i, r.random_range(0..=i));
    }
    let joined = compare(&repeated, [3, 2], true);
    assert_eq!(joined.positions.len(), base.len());
}

#[test]
fn cocircular_grids_give_a_delaunay_triangulation() {
    for blocks in [[2, 1], [4, 3], [13, 2]] {
        compare(&grid_points(120), blocks, false);
    }
}

#[test]
fn the_result_does_not_depend_on_the_threads() {
    let points = random_points(40_000, 21);
    let many = delaunay_half_edges_in_blocks(&points, [4, 3])
        .unwrap()
        .unwrap();
    for threads in [1, 7] {
        let other = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                delaunay_half_edges_in_blocks(&points, [4, 3])
                    .unwrap()
                    .unwrap()
            });
        assert_eq!(other, many, "{threads} threads");
    }
}

#[test]
fn a_sliver_whose_circle_rounds_inside_its_block_is_not_taken_for_final() {
    // The circle of the sliver (0, 1, 2) crosses the cut between the two
    // columns, and contains vertex 4; its centre's rounding is far above
    // the cross product's alone (the review of the first version).
    let points = [
        [0.0, 0.0],
        [3.938207536479691e-9, 1.0000000031561238],
        [0.0, 1.0],
        [-1.41962230818229, 1.968353076255034],
        [1.0414590824194965, 0.5],
        [2.0298344379363193, -0.04521335501030954],
        [2.1801108875115824, 1.6791042714524662],
        [1.8870505832712805, 0.38114519085246856],
    ];
    compare(&points, [2, 1], true);
    // Slivers along both axes, at many scales and offsets.
    let mut r = rng(17);
    for case in 0..300 {
        let scale = 10f64.powi(case % 9 - 4);
        let offset = [r.random_range(-1e3..1e3), r.random_range(-1e3..1e3)];
        let mut points: Vec<[f64; 2]> = (0..40)
            .map(|_| [r.random_range(-2.0..2.0), r.random_range(-2.0..2.0)])
            .collect();
        let tiny = r.random_range(1e-10..1e-7);
        points.extend([[0.0, 0.0], [tiny, 1.0 + 2.0 * tiny], [0.0, 1.0]]);
        if case % 2 == 1 {
            points.iter_mut().for_each(|p| p.swap(0, 1));
        }
        let points: Vec<[f64; 2]> = points
            .iter()
            .map(|&[x, y]| [offset[0] + scale * x, offset[1] + scale * y])
            .collect();
        let serial = delaunay_half_edges_serial(&points).unwrap();
        for blocks in [[2, 1], [1, 2], [2, 2]] {
            if let Some(joined) = delaunay_half_edges_in_blocks(&points, blocks).unwrap() {
                check_delaunay(&joined);
                assert_eq!(joined.triangles(), serial.triangles(), "case {case}");
            }
        }
    }
}

#[test]
fn signed_zeros_are_one_point_and_the_first_refused_point_is_named() {
    let points = [[0.0, 0.0], [1.0, 0.0], [-0.0, 0.0], [0.0, 1.0], [0.0, -0.0]];
    let serial = delaunay_half_edges_serial(&points).unwrap();
    assert_eq!(serial.positions.len(), 3);
    assert!(!serial.edge_of_vertex.contains(&NONE));
    let mut points = random_points(5000, 6);
    points[4000] = [f64::NAN, 0.0];
    points[1500] = [0.5, 1e300];
    for _ in 0..3 {
        let error = delaunay_half_edges_in_blocks(&points, [3, 3]).unwrap_err();
        assert!(error.to_string().contains("point 1500"), "{error}");
        let error = delaunay_half_edges_serial(&points).unwrap_err();
        assert!(error.to_string().contains("point 1500"), "{error}");
    }
}

#[test]
fn inputs_the_blocks_do_not_take_are_handed_back_or_refused() {
    let line: Vec<[f64; 2]> = (0..3000)
        .map(|i| [f64::from(i), 2.0 * f64::from(i)])
        .collect();
    assert!(
        delaunay_half_edges_in_blocks(&line, [2, 2])
            .unwrap()
            .is_none()
    );
    assert!(delaunay_half_edges(&line).is_err());
    let few = random_points(20, 1);
    assert!(
        delaunay_half_edges_in_blocks(&few, [4, 2])
            .unwrap()
            .is_none()
    );
    assert!(
        delaunay_half_edges_in_blocks(&few, [1, 1])
            .unwrap()
            .is_none()
    );
    let mut bad = random_points(5000, 2);
    bad[1234] = [f64::NAN, 0.5];
    assert!(delaunay_half_edges_in_blocks(&bad, [2, 2]).is_err());
}

#[test]
fn large_inputs_are_triangulated_in_blocks() {
    assert_eq!(blocks_for(PARALLEL_POINTS - 1), [1, 1]);
    assert_eq!(blocks_for(PARALLEL_POINTS), [4, 4]);
    assert_eq!(blocks_for(10_000_000), [16, 16]);
    assert_eq!(blocks_for(1_000_000), [6, 6]);
    assert_eq!(blocks_for(1 << 31), [16, 16]);
    let points = random_points(PARALLEL_POINTS, 4);
    let serial = delaunay_half_edges_serial(&points).unwrap();
    let public = delaunay_half_edges(&points).unwrap();
    let joined = delaunay_half_edges_in_blocks(&points, blocks_for(points.len()))
        .unwrap()
        .unwrap();
    assert_eq!(public, joined);
    assert_eq!(triangles(&public), triangles(&serial));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(64)))]

    /// Points on a small lattice (collinear and cocircular everywhere) in
    /// any blocks: handed back, or a Delaunay triangulation of as many
    /// triangles as spade's.
    #[test]
    fn lattice_points_give_a_delaunay_triangulation_or_are_handed_back(
        points in prop::collection::vec((0..12u8, 0..12u8), 3..400),
        columns in 1usize..5,
        rows in 1usize..4,
    ) {
        let points: Vec<[f64; 2]> =
            points.into_iter().map(|(x, y)| [f64::from(x), f64::from(y)]).collect();
        let Ok(serial) = delaunay_half_edges_serial(&points) else {
            return Ok(());
        };
        if let Some(joined) = delaunay_half_edges_in_blocks(&points, [columns, rows]).unwrap() {
            check_delaunay(&joined);
            prop_assert_eq!(&joined.positions, &serial.positions);
            prop_assert_eq!(joined.triangles(), serial.triangles());
        }
    }
}

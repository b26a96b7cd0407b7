//! The intrinsic Delaunay Laplacian (`cavity_mcf::intrinsic`, Sharp and
//! Crane 2020, sections 4.5-4.6) against independent oracles: on flat
//! meshes triangulated badly, the cotan Laplacian of the 2D Delaunay
//! triangulation of the same points (spade); linear precision on a tilted
//! plane; non-negative weights on every interior edge after the flips; no
//! flip and the plain cotan weights (from the positions' vectors) on
//! meshes that are Delaunay already; the total area kept; degenerate,
//! boundary, non-manifold and inconsistently oriented inputs; flips that
//! make a loop edge or a second edge between two vertices (closed
//! pillows); random grids, pillows and triangle soups.

use std::collections::{BTreeMap, BTreeSet};

use cavity_mcf::intrinsic::{IntrinsicLaplacian, intrinsic_delaunay_laplacian};
use cavity_tests::{cases, soup, unit_sphere};
use glam::DVec3;
use proptest::prelude::*;
use spade::{DelaunayTriangulation, Point2, Triangulation};

/// Uniform numbers in `[0, 1)` from a seed (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `[-1, 1)`.
    fn signed(&mut self) -> f64 {
        2.0 * self.next() - 1.0
    }
}

/// A mesh: positions and faces.
type Mesh = (Vec<[f32; 3]>, Vec<[u32; 3]>);

/// A vertex pair, smaller first.
fn pair(a: u32, b: u32) -> (u32, u32) {
    (a.min(b), a.max(b))
}

/// Whether the face turns counterclockwise in the `(x, y)` plane.
fn ccw(positions: &[[f32; 3]], f: [u32; 3]) -> bool {
    let p = f.map(|v| positions[v as usize].map(f64::from));
    (p[1][0] - p[0][0]) * (p[2][1] - p[0][1]) - (p[1][1] - p[0][1]) * (p[2][0] - p[0][0]) > 0.0
}

/// An `nx × ny` grid of cells of size `1/nx` by `1/ny` over the unit
/// square, each cell split by a random diagonal of those inside it.
/// Interior vertices move by up to `jitter` (below ½) cells in x and y,
/// boundary vertices along their side only (the corners stay), so the mesh
/// covers the unit square, its convex hull, every face counterclockwise.
/// `z` lifts each vertex from its `(x, y)`. With `quantum` > 0 the jittered
/// coordinates are rounded to multiples of it.
fn jittered_grid(
    nx: u32,
    ny: u32,
    jitter: f64,
    quantum: f64,
    seed: u64,
    z: impl Fn(f64, f64) -> f64,
) -> Mesh {
    let mut rng = Rng(seed);
    let (hx, hy) = (1.0 / f64::from(nx), 1.0 / f64::from(ny));
    let mut positions = Vec::new();
    for j in 0..=ny {
        for i in 0..=nx {
            let (mut x, mut y) = (f64::from(i) * hx, f64::from(j) * hy);
            let (dx, dy) = (jitter * hx * rng.signed(), jitter * hy * rng.signed());
            if j > 0 && j < ny {
                y += dy;
            }
            if i > 0 && i < nx {
                x += dx;
            }
            if quantum > 0.0 {
                x = (x / quantum).round() * quantum;
                y = (y / quantum).round() * quantum;
            }
            positions.push([x as f32, y as f32, z(x, y) as f32]);
        }
    }
    let id = |i: u32, j: u32| j * (nx + 1) + i;
    let mut faces = Vec::new();
    for j in 0..ny {
        for i in 0..nx {
            let (a, b, c, d) = (id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1));
            let first = [[a, b, c], [a, c, d]];
            let second = [[a, b, d], [b, c, d]];
            let inside = |t: [[u32; 3]; 2]| t.iter().all(|&f| ccw(&positions, f));
            if inside(first) && (!inside(second) || rng.next() < 0.5) {
                faces.extend(first);
            } else {
                faces.extend(second);
            }
        }
    }
    (positions, faces)
}

/// A convex polygon of `n` vertices at random angles on an ellipse of
/// half-axes 1 and 0.4, triangulated as a fan from vertex 0: long slivers.
fn ellipse_fan(n: u32, seed: u64) -> Mesh {
    let mut rng = Rng(seed);
    let positions = (0..n)
        .map(|i| {
            let t = std::f64::consts::TAU * (f64::from(i) + 0.8 * rng.next()) / f64::from(n);
            [t.cos() as f32, (0.4 * t.sin()) as f32, 0.0]
        })
        .collect();
    let faces = (1..n - 1).map(|i| [0, i, i + 1]).collect();
    (positions, faces)
}

/// The plain cotan Laplacian of faces over positions, from the vectors
/// (`cot = u·v / |u×v|`), independent of the lengths: the weight of every
/// vertex pair (summed over its faces) and the barycentric areas.
fn cotan(positions: &[[f32; 3]], faces: &[[u32; 3]]) -> (BTreeMap<(u32, u32), f64>, Vec<f64>) {
    let p = |v: u32| DVec3::from(positions[v as usize].map(f64::from));
    let mut weights = BTreeMap::new();
    let mut mass = vec![0.0; positions.len()];
    for f in faces {
        let double_area = (p(f[1]) - p(f[0])).cross(p(f[2]) - p(f[0])).length();
        for s in 0..3 {
            let (a, b, c) = (f[s], f[(s + 1) % 3], f[(s + 2) % 3]);
            let (u, v) = (p(b) - p(a), p(c) - p(a));
            *weights.entry(pair(b, c)).or_insert(0.0) += 0.5 * u.dot(v) / u.cross(v).length();
            mass[a as usize] += double_area / 6.0;
        }
    }
    (weights, mass)
}

/// The total area of the faces, from the vectors.
fn area(positions: &[[f32; 3]], faces: &[[u32; 3]]) -> f64 {
    let p = |v: u32| DVec3::from(positions[v as usize].map(f64::from));
    faces
        .iter()
        .map(|f| 0.5 * (p(f[1]) - p(f[0])).cross(p(f[2]) - p(f[0])).length())
        .sum()
}

/// The 2D Delaunay triangulation of the points' `(x, y)` (spade), as faces
/// over the same vertex indices.
fn delaunay(positions: &[[f32; 3]]) -> Vec<[u32; 3]> {
    let mut t: DelaunayTriangulation<Point2<f64>> = DelaunayTriangulation::new();
    let mut index = BTreeMap::new();
    for (i, p) in positions.iter().enumerate() {
        let h = t
            .insert(Point2::new(f64::from(p[0]), f64::from(p[1])))
            .expect("a finite point");
        index.insert(h.index(), i as u32);
    }
    assert_eq!(t.num_vertices(), positions.len(), "distinct points");
    t.inner_faces()
        .map(|f| f.vertices().map(|v| index[&v.fix().index()]))
        .collect()
}

/// The result's weight of every vertex pair.
fn weights(l: &IntrinsicLaplacian) -> BTreeMap<(u32, u32), f64> {
    let mut out = BTreeMap::new();
    for i in 0..l.mass.len() {
        for k in l.offsets[i] as usize..l.offsets[i + 1] as usize {
            out.insert(pair(i as u32, l.neighbours[k]), l.weights[k]);
        }
    }
    out
}

/// The vertex pairs of edges with one face (the input's boundary).
fn boundary_pairs(faces: &[[u32; 3]]) -> BTreeSet<(u32, u32)> {
    let mut count = BTreeMap::new();
    for f in faces {
        for s in 0..3 {
            *count.entry(pair(f[s], f[(s + 1) % 3])).or_insert(0) += 1;
        }
    }
    count
        .into_iter()
        .filter(|&(_, c)| c == 1)
        .map(|(p, _)| p)
        .collect()
}

/// The number of distinct vertex pairs joined by an edge.
fn edge_count(faces: &[[u32; 3]]) -> usize {
    faces
        .iter()
        .flat_map(|f| (0..3).map(move |s| pair(f[s], f[(s + 1) % 3])))
        .collect::<BTreeSet<_>>()
        .len()
}

/// The result's shape over `n` vertices: CSR offsets, rows ascending and
/// distinct without the row's vertex, symmetric to the bit, finite.
fn check_structure(l: &IntrinsicLaplacian, n: usize) {
    assert_eq!(l.mass.len(), n);
    assert_eq!(l.offsets.len(), n + 1);
    assert_eq!(l.offsets[0], 0);
    assert_eq!(l.offsets[n] as usize, l.neighbours.len());
    assert_eq!(l.neighbours.len(), l.weights.len());
    assert!(
        l.mass.iter().all(|m| m.is_finite() && *m >= 0.0),
        "mass {:?}",
        l.mass
    );
    assert!(
        l.weights.iter().all(|w| w.is_finite()),
        "weights {:?}",
        l.weights
    );
    let row = |i: usize| l.offsets[i] as usize..l.offsets[i + 1] as usize;
    for i in 0..n {
        let r = &l.neighbours[row(i)];
        assert!(
            r.windows(2).all(|w| w[0] < w[1]),
            "row {i} not ascending: {r:?}"
        );
        for (k, &j) in r.iter().enumerate() {
            assert_ne!(j as usize, i, "row {i} holds its own vertex");
            let other = &l.neighbours[row(j as usize)];
            let at = other
                .binary_search(&(i as u32))
                .unwrap_or_else(|_| panic!("{j} in row {i}, {i} not in row {j}"));
            assert_eq!(
                l.weights[row(i)][k].to_bits(),
                l.weights[row(j as usize)][at].to_bits(),
                "w({i}, {j}) not symmetric"
            );
        }
    }
}

/// Every pair's weight within `tol` of the reference (relative to 1 + its
/// size), pairs absent from one side weighing 0.
fn assert_weights_close(
    got: &BTreeMap<(u32, u32), f64>,
    want: &BTreeMap<(u32, u32), f64>,
    tol: f64,
) {
    for key in got.keys().chain(want.keys()) {
        let (g, w) = (
            got.get(key).copied().unwrap_or(0.0),
            want.get(key).copied().unwrap_or(0.0),
        );
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "weight of {key:?}: {g} against {w}"
        );
    }
}

/// Every mass within `tol` times the largest of the reference.
fn assert_masses_close(got: &[f64], want: &[f64], tol: f64) {
    let scale = want.iter().fold(0.0f64, |m, &x| m.max(x));
    for (v, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol * scale, "mass of {v}: {g} against {w}");
    }
}

#[test]
fn flat_meshes_become_the_delaunay_triangulation_of_their_points() {
    let meshes = [
        jittered_grid(12, 9, 0.45, 0.0, 1, |_, _| 0.0),
        jittered_grid(20, 20, 0.4, 0.0, 2, |_, _| 0.0),
        ellipse_fan(40, 3),
        ellipse_fan(9, 4),
    ];
    for (positions, faces) in &meshes {
        let l = intrinsic_delaunay_laplacian(positions, faces, 0.0);
        check_structure(&l, positions.len());
        let (bad, _) = cotan(positions, faces);
        assert!(
            bad.values().any(|&w| w < -1e-3),
            "the input has a non-Delaunay edge (the test must flip)"
        );
        assert!(l.flips > 0);
        let (want, mass) = cotan(positions, &delaunay(positions));
        assert_weights_close(&weights(&l), &want, 1e-9);
        assert_masses_close(&l.mass, &mass, 1e-9);
    }
}

#[test]
fn flat_meshes_keep_linear_precision() {
    // A tilted plane z = (x + y) / 2, exact in f32 on the 2^-12 lattice.
    let (positions, faces) = jittered_grid(16, 12, 0.45, 1.0 / 4096.0, 5, |x, y| 0.5 * (x + y));
    let l = intrinsic_delaunay_laplacian(&positions, &faces, 0.0);
    check_structure(&l, positions.len());
    assert!(l.flips > 0);
    let boundary: BTreeSet<u32> = boundary_pairs(&faces)
        .into_iter()
        .flat_map(|(a, b)| [a, b])
        .collect();
    let p = |v: u32| DVec3::from(positions[v as usize].map(f64::from));
    for i in 0..positions.len() as u32 {
        if boundary.contains(&i) {
            continue;
        }
        let (mut sum, mut scale) = (DVec3::ZERO, 0.0);
        for k in l.offsets[i as usize] as usize..l.offsets[i as usize + 1] as usize {
            let d = l.weights[k] * (p(i) - p(l.neighbours[k]));
            sum += d;
            scale += d.length();
        }
        assert!(
            sum.length() <= 1e-9 * scale,
            "vertex {i}: Σ w (x_i - x_j) = {sum}"
        );
    }
}

#[test]
fn every_interior_edge_is_delaunay() {
    let flat = jittered_grid(15, 15, 0.45, 0.0, 6, |_, _| 0.0);
    let bumpy = jittered_grid(15, 15, 0.45, 0.0, 7, |x, y| {
        0.15 * (7.0 * x).sin() * (5.0 * y).cos()
    });
    for (positions, faces) in [flat, bumpy] {
        let l = intrinsic_delaunay_laplacian(&positions, &faces, 0.0);
        check_structure(&l, positions.len());
        let boundary = boundary_pairs(&faces);
        let (before, _) = cotan(&positions, &faces);
        assert!(
            before
                .iter()
                .any(|(p, &w)| !boundary.contains(p) && w < -1e-3),
            "the input has a non-Delaunay interior edge"
        );
        for (p, w) in weights(&l) {
            if !boundary.contains(&p) {
                assert!(w >= -1e-9, "interior pair {p:?} of weight {w}");
            }
        }
    }
}

#[test]
fn delaunay_meshes_are_not_flipped() {
    let (a, b) = (0.1f32, 0.5f32 * 3f32.sqrt() * 0.1);
    let mut lattice: Mesh = (Vec::new(), Vec::new());
    let id = |i: u32, j: u32| j * 11 + i;
    for j in 0..9 {
        for i in 0..11 {
            let shift = if j % 2 == 1 { 0.5 * a } else { 0.0 };
            lattice.0.push([i as f32 * a + shift, j as f32 * b, 0.0]);
        }
    }
    for j in 0..8 {
        for i in 0..10 {
            let (p, q, r, s) = (id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1));
            if j % 2 == 0 {
                lattice.1.extend([[p, q, s], [q, r, s]]);
            } else {
                lattice.1.extend([[p, q, r], [p, r, s]]);
            }
        }
    }
    let sphere = unit_sphere(3);
    // Right isosceles triangles: every diagonal co-circular (cot α + cot β = 0).
    let square = cavity_tests::grid(9, 7, &[false], false, &[]);
    let square = (
        square
            .positions
            .iter()
            .map(|p| p.map(|c| 0.1 * c))
            .collect(),
        square.faces,
    );
    for (positions, faces) in [lattice, (sphere.positions, sphere.faces), square] {
        let l = intrinsic_delaunay_laplacian(&positions, &faces, 0.0);
        check_structure(&l, positions.len());
        assert_eq!(l.flips, 0);
        let (want, mass) = cotan(&positions, &faces);
        assert_eq!(
            weights(&l).keys().collect::<Vec<_>>(),
            want.keys().collect::<Vec<_>>()
        );
        assert_weights_close(&weights(&l), &want, 1e-12);
        assert_masses_close(&l.mass, &mass, 1e-12);
    }
}

#[test]
fn flips_keep_the_total_area() {
    let (positions, faces) = jittered_grid(20, 14, 0.45, 0.0, 8, |x, y| {
        0.3 * (6.0 * x).cos() * (4.0 * y).sin()
    });
    let total = area(&positions, &faces);
    let l = intrinsic_delaunay_laplacian(&positions, &faces, 0.0);
    assert!(l.flips > 0);
    let mass: f64 = l.mass.iter().sum();
    assert!(
        (mass - total).abs() <= 1e-9 * total,
        "{mass} against {total}"
    );
    let mollified = intrinsic_delaunay_laplacian(&positions, &faces, 1e-3);
    check_structure(&mollified, positions.len());
    let mass: f64 = mollified.mass.iter().sum();
    assert!(mass >= total, "{mass} below {total}");
}

#[test]
fn degenerate_faces_stay_finite() {
    let (mut positions, faces) = jittered_grid(6, 6, 0.3, 0.0, 9, |x, y| 0.1 * x * y);
    // Row 1 onto the line of row 0: the faces between them have three
    // collinear corners, and the ends of the two rows coincide.
    for p in &mut positions[7..14] {
        p[1] = 0.0;
        p[2] = 0.0;
    }
    // Two vertices at one position: a zero-length edge.
    positions[7 * 3 + 2] = positions[7 * 3 + 3];
    // Every vertex at the origin.
    let point = (vec![[0.0f32; 3]; positions.len()], faces.clone());
    for (positions, faces) in [(positions, faces), point] {
        let used: BTreeSet<u32> = faces.iter().flatten().copied().collect();
        let l = intrinsic_delaunay_laplacian(&positions, &faces, 1e-3);
        check_structure(&l, positions.len());
        for &v in &used {
            assert!(l.mass[v as usize] > 0.0, "vertex {v} without mass");
        }
        let l = intrinsic_delaunay_laplacian(&positions, &faces, 0.0);
        check_structure(&l, positions.len());
    }
}

#[test]
fn boundary_non_manifold_and_inconsistent_edges_are_not_flipped() {
    // A kite whose diagonal 0-1 has two obtuse opposite angles.
    let kite = vec![
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.5, 0.1, 0.0],
        [0.5, -0.1, 0.0],
    ];
    // Consistent orientation: flipped to 2-3.
    let l = intrinsic_delaunay_laplacian(&kite, &[[0, 1, 2], [1, 0, 3]], 0.0);
    check_structure(&l, 4);
    assert_eq!(l.flips, 1);
    let (want, _) = cotan(&kite, &[[2, 3, 1], [3, 2, 0]]);
    assert_weights_close(&weights(&l), &want, 1e-9);
    assert!(!weights(&l).contains_key(&(0, 1)));
    // Inconsistent orientation: kept.
    let faces = [[0, 1, 2], [0, 1, 3]];
    let l = intrinsic_delaunay_laplacian(&kite, &faces, 0.0);
    check_structure(&l, 4);
    assert_eq!(l.flips, 0);
    let (want, _) = cotan(&kite, &faces);
    assert!(want[&(0, 1)] < -1.0);
    assert_weights_close(&weights(&l), &want, 1e-12);
    // A boundary edge: one obtuse triangle.
    let l = intrinsic_delaunay_laplacian(&kite, &[[0, 1, 2]], 0.0);
    check_structure(&l, 4);
    assert_eq!(l.flips, 0);
    assert_weights_close(&weights(&l), &cotan(&kite, &[[0, 1, 2]]).0, 1e-12);
    // Three faces on edge 0-1, two of them in opposite directions, every
    // opposite angle obtuse.
    let mut book = kite.clone();
    book[3] = [0.5, -0.05, 0.0866];
    book.push([0.5, -0.05, -0.0866]);
    let faces = [[0, 1, 2], [1, 0, 3], [0, 1, 4]];
    let l = intrinsic_delaunay_laplacian(&book, &faces, 0.0);
    check_structure(&l, 5);
    assert_eq!(l.flips, 0);
    let (want, _) = cotan(&book, &faces);
    assert!(want[&(0, 1)] < -3.0);
    assert_weights_close(&weights(&l), &want, 1e-12);
    // Both beside a bumpy grid that flips: flips only in the grid.
    let (mut positions, mut faces) = jittered_grid(8, 8, 0.45, 0.0, 10, |x, y| 0.2 * x * y);
    let grid_only = intrinsic_delaunay_laplacian(&positions, &faces, 0.0);
    assert!(grid_only.flips > 0);
    let base = positions.len() as u32;
    positions.extend(&book);
    faces.extend([[0, 1, 2], [1, 0, 3], [0, 1, 4]].map(|f| f.map(|v| v + base)));
    let base = positions.len() as u32;
    positions.extend(&kite);
    faces.extend([[0, 1, 2], [0, 1, 3]].map(|f| f.map(|v| v + base)));
    let l = intrinsic_delaunay_laplacian(&positions, &faces, 0.0);
    check_structure(&l, positions.len());
    assert_eq!(l.flips, grid_only.flips);
}

#[test]
fn a_doubled_obtuse_triangle_flips_to_a_loop() {
    // Two copies of one triangle glued along their three edges (a closed
    // Δ-complex): the edge opposite the obtuse corner k = 2 flips to a loop
    // from k to k, and each of the other two edges ends in one face twice,
    // between its two base angles, 90° - θ with θ the original angle at
    // the other end: weight ½ · 2 tan θ.
    let positions = vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.3, 0.2, 0.0]];
    let faces = [[0, 1, 2], [1, 0, 2]];
    let l = intrinsic_delaunay_laplacian(&positions, &faces, 0.0);
    check_structure(&l, 3);
    assert_eq!(l.flips, 1);
    let [x, y] = [0.3f32, 0.2f32].map(f64::from);
    let (theta_0, theta_1) = (y.atan2(x), y.atan2(1.0 - x));
    let want = BTreeMap::from([((0, 2), theta_0.tan()), ((1, 2), theta_1.tan())]);
    assert_weights_close(&weights(&l), &want, 1e-12);
    let mass: f64 = l.mass.iter().sum();
    assert!((mass - 2.0 * area(&positions, &faces[..1])).abs() <= 1e-12);
}

#[test]
fn a_flip_can_double_an_edge() {
    // A rhombus long along 0-2, doubled into a closed pillow: the top
    // split by 0-2 (not Delaunay), the bottom by 1-3. The top's flip makes
    // a second edge from 1 to 3, and the pair's weight is both edges'.
    let positions = vec![
        [-1.0, 0.0, 0.0],
        [0.0, -0.3, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 0.3, 0.0],
    ];
    let faces = [[0, 1, 2], [0, 2, 3], [1, 3, 2], [1, 0, 3]];
    let l = intrinsic_delaunay_laplacian(&positions, &faces, 0.0);
    check_structure(&l, 4);
    assert_eq!(l.flips, 1);
    let (want, mass) = cotan(&positions, &[[0, 1, 3], [1, 2, 3], [1, 3, 2], [1, 0, 3]]);
    assert!(want[&(1, 3)] > 1.0);
    assert_weights_close(&weights(&l), &want, 1e-12);
    assert_masses_close(&l.mass, &mass, 1e-12);
}

/// Two copies of a convex polygon of random vertices on an ellipse (random
/// heights) glued along the rim into a closed pillow: the top a fan from
/// vertex 0, the bottom a fan from vertex 1 turned over (no vertex pair
/// joined on both sides but the rim's).
fn pillow() -> impl Strategy<Value = Mesh> {
    (3u32..12, 0.0f64..0.5, any::<u64>()).prop_map(|(n, height, seed)| {
        let (mut positions, top) = ellipse_fan(n, seed);
        let mut rng = Rng(seed ^ 0xF00D);
        for p in &mut positions {
            p[2] = (height * rng.signed()) as f32;
        }
        let bottom = (2..n).map(|j| [1, (j + 1) % n, j]);
        (positions, top.into_iter().chain(bottom).collect())
    })
}

/// A jittered grid of random size with random diagonals and heights.
fn random_grid() -> impl Strategy<Value = Mesh> {
    (1u32..7, 1u32..7, 0.0f64..0.45, 0.0f64..0.5, any::<u64>()).prop_map(
        |(nx, ny, jitter, height, seed)| {
            let mut rng = Rng(seed ^ 0x5EED);
            let mut mesh = jittered_grid(nx, ny, jitter, 0.0, seed, |_, _| 0.0);
            for p in &mut mesh.0 {
                p[2] = (height * rng.signed()) as f32;
            }
            mesh
        },
    )
}

/// The checks every mesh passes: the structure, the flips within the
/// budget, the mass the area (at least with mollification).
fn check_random(positions: &[[f32; 3]], faces: &[[u32; 3]], mollify: f64) {
    let l = intrinsic_delaunay_laplacian(positions, faces, mollify);
    check_structure(&l, positions.len());
    assert!(l.flips <= 100 * edge_count(faces));
    let (mass, total) = (l.mass.iter().sum::<f64>(), area(positions, faces));
    if mollify == 0.0 {
        assert!(
            (mass - total).abs() <= 1e-9 * total,
            "{mass} against {total}"
        );
    } else {
        assert!(mass >= total, "{mass} below {total}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(256),
        max_local_rejects: u32::MAX,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_grids(mesh in random_grid(), mollify in prop_oneof![Just(0.0), 1e-4f64..1e-1]) {
        let (positions, faces) = mesh;
        check_random(&positions, &faces, mollify);
        let l = intrinsic_delaunay_laplacian(&positions, &faces, mollify);
        let boundary = boundary_pairs(&faces);
        for (p, w) in weights(&l) {
            if !boundary.contains(&p) {
                prop_assert!(w >= -1e-9, "interior pair {:?} of weight {}", p, w);
            }
        }
    }

    #[test]
    fn pillows(mesh in pillow(), mollify in prop_oneof![Just(0.0), 1e-4f64..1e-1]) {
        let (positions, faces) = mesh;
        check_random(&positions, &faces, mollify);
        let l = intrinsic_delaunay_laplacian(&positions, &faces, mollify);
        for (p, w) in weights(&l) {
            prop_assert!(w >= -1e-9, "pair {:?} of weight {}", p, w);
        }
    }

    #[test]
    fn triangle_soups(mesh in soup(), seed in any::<u64>(), mollify in prop_oneof![Just(0.0), 1e-3f64..1.0]) {
        let mut rng = Rng(seed);
        let positions: Vec<[f32; 3]> = mesh
            .positions
            .iter()
            .map(|_| [0, 1, 2].map(|_| rng.signed() as f32))
            .collect();
        check_random(&positions, &mesh.faces, mollify);
    }
}

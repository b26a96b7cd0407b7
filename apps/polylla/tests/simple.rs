//! Polylla's polygons are simple (issue 52): no polygon walks an edge
//! twice (a barrier edge, which a region wrapped around other regions
//! keeps when no barrier tip ends it), checked by a small checker of its
//! own on triangulations built to hold nested regions, on ones whose
//! regions touch themselves at a vertex (kept, as the paper does), on
//! random ones and on the Greenland points; the polygons exactly the terminal-edge regions
//! after the repair ([`oracle::check`]); the backend's kernels equal to
//! the sequential version.

mod oracle;

use std::collections::{BTreeMap, BTreeSet};

use cavity_polylla::device::{polygon_lists, polylla};
use cavity_polylla::generate::delaunay;
use cavity_polylla::io::{read_node, read_triangulation};
use cavity_polylla::lists::PolygonLists;
use cavity_polylla::{HalfEdges, Polylla, polylla_sequential};
use cavity_tests::{cases, test_backend};
use proptest::prelude::*;

/// What the checker counts of a valid Polylla mesh.
#[derive(Debug, Default)]
struct Shape {
    /// Polygons.
    polygons: usize,
    /// Vertices a polygon passes twice (it touches itself there).
    pinches: usize,
}

/// The half-edges of the polygon through `seed` along `next`, or an error
/// when the walk does not come back to `seed` within every half-edge.
fn cycle(next: &[u32], seed: u32) -> Result<Vec<u32>, String> {
    let mut out = vec![seed];
    let mut h = next[seed as usize];
    while h != seed {
        if out.len() > next.len() {
            return Err(format!("the polygon of {seed} does not close"));
        }
        out.push(h);
        h = next[h as usize];
    }
    Ok(out)
}

/// The triangle components left when the triangulation is cut along every
/// edge a polygon walks: each triangle's component (a union-find root).
fn components(mesh: &HalfEdges, walked: &BTreeSet<u32>) -> Vec<usize> {
    fn root(parent: &mut [usize], x: usize) -> usize {
        let mut r = x;
        while parent[r] != r {
            r = parent[r];
        }
        let mut y = x;
        while parent[y] != r {
            (y, parent[y]) = (parent[y], r);
        }
        r
    }
    let mut parent: Vec<usize> = (0..mesh.triangles()).collect();
    for h in 0..mesh.interior {
        let t = mesh.twin[h as usize];
        if t < mesh.interior && !walked.contains(&h) && !walked.contains(&t) {
            let (a, b) = (
                root(&mut parent, h as usize / 3),
                root(&mut parent, t as usize / 3),
            );
            parent[a] = b;
        }
    }
    (0..mesh.triangles())
        .map(|f| root(&mut parent, f))
        .collect()
}

/// Checks `poly` over `mesh` with nothing of the library but the arrays:
/// every polygon a closed cycle of half-edges (each ending where the next
/// starts), named by its smallest half-edge; no half-edge in two polygons
/// and no edge twice in one (no barrier edge); the polygons partition the
/// triangles (cutting along their edges leaves pieces of triangles, each
/// bounded by exactly one polygon, every triangle in one, and both sides
/// of an inner edge are walked or neither, a boundary edge always).
fn check(mesh: &HalfEdges, poly: &Polylla) -> Result<Shape, String> {
    let target = |h: u32| mesh.origin[mesh.twin[h as usize] as usize];
    let mut owner: BTreeMap<u32, u32> = BTreeMap::new();
    let mut shape = Shape::default();
    for &seed in &poly.polygons {
        let edges = cycle(&poly.next, seed)?;
        if edges.iter().min() != Some(&seed) {
            return Err(format!(
                "polygon {seed} is not named by its least half-edge"
            ));
        }
        let mut undirected = BTreeSet::new();
        let mut vertices = BTreeSet::new();
        for (i, &h) in edges.iter().enumerate() {
            let n = edges[(i + 1) % edges.len()];
            if h >= mesh.interior {
                return Err(format!("polygon {seed} walks border half-edge {h}"));
            }
            if mesh.origin[n as usize] != target(h) || poly.prev[n as usize] != h {
                return Err(format!("polygon {seed}: {h} and {n} do not join"));
            }
            if let Some(other) = owner.insert(h, seed) {
                return Err(format!("half-edge {h} in polygons {other} and {seed}"));
            }
            let (a, b) = (mesh.origin[h as usize], target(h));
            if !undirected.insert((a.min(b), a.max(b))) {
                return Err(format!(
                    "polygon {seed} ({} edges) walks edge ({a}, {b}) twice",
                    edges.len()
                ));
            }
            if !vertices.insert(a) {
                shape.pinches += 1;
            }
        }
        shape.polygons += 1;
    }
    let walked: BTreeSet<u32> = owner.keys().copied().collect();
    for h in 0..mesh.interior {
        let t = mesh.twin[h as usize];
        let inner = t < mesh.interior;
        if !inner && !walked.contains(&h) {
            return Err(format!("boundary half-edge {h} is in no polygon"));
        }
        if inner && walked.contains(&h) != walked.contains(&t) {
            return Err(format!("edge of {h} is walked on one side only"));
        }
    }
    let piece = components(mesh, &walked);
    let mut bounded: BTreeMap<usize, u32> = BTreeMap::new();
    for (&h, &seed) in &owner {
        let c = piece[h as usize / 3];
        if *bounded.entry(c).or_insert(seed) != seed {
            return Err(format!(
                "a piece of triangles is bounded by polygons {} and {seed}",
                bounded[&c]
            ));
        }
    }
    let pieces: BTreeSet<usize> = piece.iter().copied().collect();
    if pieces.len() != bounded.len() || bounded.len() != shape.polygons {
        return Err(format!(
            "{} pieces of triangles, {} bounded, {} polygons",
            pieces.len(),
            bounded.len(),
            shape.polygons
        ));
    }
    Ok(shape)
}

/// Polylla of the triangles sequentially and on the test backend, checked
/// (by [`check`] and [`oracle::check`]) and equal.
fn run(positions: Vec<[f64; 2]>, triangles: &[[u32; 3]]) -> Result<(Polylla, Shape), String> {
    let mesh = HalfEdges::from_triangles(positions, triangles).map_err(|e| e.to_string())?;
    let poly = polylla_sequential(&mesh);
    let shape = check(&mesh, &poly).map_err(|e| format!("sequential: {e}"))?;
    let found = oracle::check(&mesh.positions, triangles, &mesh.origin, &poly)
        .map_err(|e| format!("sequential: {e}"))?;
    if found.pinches != shape.pinches || found.polygons != shape.polygons {
        return Err(format!("the checkers disagree: {found:?}, {shape:?}"));
    }
    let (on_backend, _) = polylla(&test_backend(), &mesh).map_err(|e| e.to_string())?;
    check(&mesh, &on_backend).map_err(|e| format!("backend: {e}"))?;
    oracle::check(&mesh.positions, triangles, &mesh.origin, &on_backend)
        .map_err(|e| format!("backend: {e}"))?;
    if on_backend != poly {
        return Err(format!(
            "the backend's Polylla differs from the sequential one: {} polygons against {}",
            on_backend.polygons.len(),
            poly.polygons.len()
        ));
    }
    Ok((poly, shape))
}

/// The Delaunay triangulation of 30 seeded points (seed 45382, found by
/// a search of 50 000 seeds per size: the smallest with a bridge): a
/// region that wraps around another and joins itself through one edge,
/// as Triangle's `.node` and `.ele` files.
fn wrapped_region_files(dir: &std::path::Path) -> std::path::PathBuf {
    let t = delaunay(&oracle::lattice_points(30, 45382)).unwrap();
    oracle::write_triangle(dir, "wrapped", &t.positions, &t.triangles)
}

#[test]
fn a_region_wrapped_around_another_is_split_at_its_bridge() {
    let dir = tempfile::tempdir().unwrap();
    let t = read_triangulation(&wrapped_region_files(dir.path())).unwrap();
    assert_eq!((t.positions.len(), t.triangles.len()), (30, 51));
    let (poly, shape) = run(t.positions, &t.triangles).unwrap();
    assert_eq!(poly.bridges, 1, "{shape:?}");
}

#[test]
fn a_cluster_among_sparse_points_gets_a_region_wrapped_around_it() {
    // Proptest's shrunk case (on the code before the bridges were split):
    // seven points of a cluster near three sparse ones and a far corner.
    let mut points = vec![[46.0, 418.0], [0.0, 513.0], [0.0, 0.0], [35.0, 403.0]];
    let cluster = [(1, 8), (5, 5), (2, 13), (23, 0), (0, 38), (0, 9), (1, 37)];
    points.extend(
        cluster
            .iter()
            .map(|&(x, y)| [22.0 + f64::from(x) / 4.0, 400.0 + f64::from(y) / 4.0]),
    );
    let t = delaunay(&points).unwrap();
    let (poly, shape) = run(t.positions, &t.triangles).unwrap();
    // A chain of three barrier edges joins the region to itself.
    assert_eq!(poly.bridges, 3, "{shape:?}");
}

#[test]
fn seeded_random_triangulations_with_bridges_give_simple_polygons() {
    // Seeds among 50 000 per size whose triangulations hold bridges.
    for (n, seed) in [(50, 8174), (50, 14125), (100, 169), (100, 410)] {
        let t = delaunay(&oracle::lattice_points(n, seed)).unwrap();
        let mesh = HalfEdges::from_triangles(t.positions.clone(), &t.triangles).unwrap();
        let (poly, _) = run(t.positions, &t.triangles)
            .unwrap_or_else(|e| panic!("{n} points, seed {seed}: {e}"));
        assert!(poly.bridges > 0, "{n} points, seed {seed}");
        // The vertex lists gathered on the backend after the split.
        let backend = test_backend();
        let (lists, _) = polygon_lists(&backend, &mesh).unwrap();
        let (linked, _) = polylla(&backend, &mesh).unwrap();
        assert_eq!(
            lists,
            PolygonLists::of(&linked, &mesh),
            "{n} points, seed {seed}"
        );
        assert_eq!(lists.bridges, poly.bridges);
    }
}

#[test]
fn a_region_that_touches_itself_at_a_vertex_keeps_the_pinch() {
    // Seeds among 20 000 per size whose triangulations hold a region that
    // meets itself at one vertex with no barrier edge (the first of each
    // size): the paper does not split it (`oracle`, "Vertices visited
    // twice"), so its polygon passes that vertex twice, and both checkers
    // find the two fans of its triangles there.
    for (n, seed) in [(12, 4133), (30, 3915), (50, 27)] {
        let t = delaunay(&oracle::lattice_points(n, seed)).unwrap();
        let (poly, shape) = run(t.positions, &t.triangles)
            .unwrap_or_else(|e| panic!("{n} points, seed {seed}: {e}"));
        assert_eq!(
            (shape.pinches, poly.bridges, poly.repaired),
            (1, 0, 0),
            "{n} points, seed {seed}: {shape:?}"
        );
    }
}

/// A ring of `2k` triangles around a regular `k`-gon of radius 1 (a hole
/// of the domain, or `filled` by a fan from its centre), the ring's outer
/// vertices spiralling out (radius `3 + j / 5` at angle
/// `(j + 1/2) 2π / k`): for `k = 10` each ring triangle's longest edge is
/// the next edge across the ring, so the ring is one region, a chain of
/// triangles around the hole (or the fan's regions) whose two ends meet
/// across one barrier edge that no barrier tip ends (each of its vertices
/// has other frontier edges): a bridge.
fn spiral_ring(k: u32, filled: bool) -> (Vec<[f64; 2]>, Vec<[u32; 3]>) {
    let at = |r: f64, a: f64| {
        let a = a * std::f64::consts::TAU / f64::from(k);
        [r * a.cos(), r * a.sin()]
    };
    let mut positions: Vec<[f64; 2]> = (0..k).map(|j| at(1.0, f64::from(j))).collect();
    positions.extend((0..k).map(|j| at(3.0 + f64::from(j) / 5.0, f64::from(j) + 0.5)));
    let mut triangles = Vec::new();
    for j in 0..k {
        let (i0, i1, o0, o1) = (j, (j + 1) % k, k + j, k + (j + 1) % k);
        triangles.extend([[i0, i1, o0], [i1, o1, o0]]);
    }
    if filled {
        positions.push([0.0, 0.0]);
        triangles.extend((0..k).map(|j| [2 * k, j, (j + 1) % k]));
    }
    (positions, triangles)
}

#[test]
fn a_spiral_ring_around_a_hole_or_other_regions_is_split_at_its_bridge() {
    let dir = tempfile::tempdir().unwrap();
    for filled in [false, true] {
        let (positions, triangles) = spiral_ring(10, filled);
        // Through the readers: Triangle's pair for the ring around the
        // hole, 2D OFF for the filled one.
        let path = if filled {
            oracle::write_off_triangles(dir.path(), "nested", &positions, &triangles)
        } else {
            oracle::write_triangle(dir.path(), "holed", &positions, &triangles)
        };
        let t = read_triangulation(&path).unwrap();
        assert_eq!(t.positions, positions);
        let mesh = HalfEdges::from_triangles(positions.clone(), &triangles).unwrap();
        let found = oracle::check(
            &positions,
            &triangles,
            &mesh.origin,
            &polylla_sequential(&mesh),
        )
        .unwrap();
        // The ring, and around the hole nothing or the fan's two regions.
        assert_eq!(found.regions, if filled { 3 } else { 1 }, "{found:?}");
        assert_eq!(
            (found.barriers, found.tips, found.chords),
            (1, 0, 1),
            "{found:?}"
        );
        let (poly, shape) = run(t.positions, &t.triangles).unwrap();
        assert_eq!(poly.bridges, 1, "{shape:?}");
        assert_eq!(shape.polygons, found.regions + 1, "{shape:?}");
    }
}

/// The Greenland points, triangulated by spade.
fn greenland() -> (Vec<[f64; 2]>, Vec<[u32; 3]>) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/greenland.node");
    let (points, _) = read_node(&path).unwrap();
    let t = delaunay(&points).unwrap();
    (t.positions, t.triangles)
}

#[test]
fn greenland_polygons_are_simple_and_partition_the_triangles() {
    let (positions, triangles) = greenland();
    let (poly, shape) = run(positions, &triangles).unwrap();
    assert!(shape.polygons > 1000, "{shape:?}");
    assert!(poly.repaired > 0, "{}", poly.repaired);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(64)))]

    /// Random points, uniform or with dense clusters among sparse ones
    /// (regions wrapped around the clusters' regions), triangulated, some
    /// edges flipped at random (not Delaunay), some triangles removed
    /// (holes, which regions wrap around too).
    #[test]
    fn random_triangulations_give_simple_polygons(
        sparse in prop::collection::vec((0u32..1000, 0u32..1000), 3..120),
        clusters in prop::collection::vec(((0u32..1000, 0u32..1000), prop::collection::vec((0u32..40, 0u32..40), 0..30)), 0..4),
        flips in prop_oneof![Just(0usize), 0usize..300],
        holes in 0u32..3,
        salt in any::<u32>(),
    ) {
        let mut points: Vec<[f64; 2]> = sparse.iter().map(|&(x, y)| [f64::from(x), f64::from(y)]).collect();
        for ((cx, cy), around) in &clusters {
            points.extend(around.iter().map(|&(x, y)| {
                [f64::from(*cx) + f64::from(x) / 4.0, f64::from(*cy) + f64::from(y) / 4.0]
            }));
        }
        let Ok(t) = delaunay(&points) else {
            return Err(TestCaseError::reject("no triangle"));
        };
        let (triangles, _) = oracle::flipped(&t.positions, &t.triangles, flips, u64::from(salt));
        let triangles: Vec<[u32; 3]> = triangles
            .into_iter()
            .enumerate()
            .filter(|&(f, _)| holes == 0 || (f as u32).wrapping_mul(2654435761).wrapping_add(salt) % 13 >= holes)
            .map(|(_, f)| f)
            .collect();
        prop_assume!(!triangles.is_empty());
        run(t.positions, &triangles).map_err(TestCaseError::fail)?;
    }
}

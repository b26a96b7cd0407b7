//! Polylla against its definitions: the polygons partition the
//! triangulation (areas), every polygon is simple and made of frontier
//! edges, and the polygons are exactly the terminal-edge regions after
//! the repair ([`oracle::check`], its regions found by a union-find over
//! the triangles and, here, again by following longest edges), on
//! generated, real and random inputs, Delaunay or not (random edge flips,
//! constrained and non-Delaunay files through the readers).

mod oracle;

use std::collections::BTreeSet;

use cavity_polylla::device::{polygon_lists, polylla};
use cavity_polylla::generate::{delaunay, delaunay_half_edges, grid_points, random_points};
use cavity_polylla::halfedge::{NONE, orient};
use cavity_polylla::io::{read_node, read_triangulation, write_off, write_ply, write_svg};
use cavity_polylla::lists::PolygonLists;
use cavity_polylla::{HalfEdges, Polylla, PolyllaError, Triangulation, polylla_sequential};
use cavity_tests::test_backend;
use proptest::prelude::*;

/// The number of terminal-edge regions of `mesh`, found by walking each triangle's
/// longest-edge propagation path (longest edges by length, ties by the
/// edge's smaller half-edge, the rule the library documents): the number
/// of distinct terminal edges.
fn terminal_regions(mesh: &HalfEdges) -> usize {
    let len = |h: u32| {
        let (p, q) = (
            mesh.positions[mesh.origin[h as usize] as usize],
            mesh.positions[mesh.target(h) as usize],
        );
        (q[0] - p[0]).powi(2) + (q[1] - p[1]).powi(2)
    };
    let edge = |h: u32| h.min(mesh.twin[h as usize]);
    let longest = |f: u32| {
        (3 * f..3 * f + 3)
            .max_by(|&a, &b| len(a).total_cmp(&len(b)).then(edge(a).cmp(&edge(b))))
            .expect("three edges")
    };
    let mut terminals = BTreeSet::new();
    for f in 0..mesh.triangles() as u32 {
        let mut f = f;
        for _ in 0..=mesh.triangles() {
            let h = longest(f);
            let t = mesh.twin[h as usize];
            if t >= mesh.interior || longest(t / 3) == t {
                terminals.insert(edge(h));
                break;
            }
            f = t / 3;
        }
    }
    terminals.len()
}

/// Checks `poly` over `mesh`, the Polylla of `triangles`: partition, no
/// barrier edges or tips, frontier edges, consistent links; the polygons
/// exactly the terminal-edge regions after the repair
/// ([`oracle::check`]), whose regions are as many as [`terminal_regions`]
/// finds.
fn check(
    mesh: &HalfEdges,
    triangles: &[[u32; 3]],
    poly: &Polylla,
) -> Result<oracle::Found, String> {
    let mut total = 0.0;
    let mut seen = BTreeSet::new();
    // The squared extent of the points, the scale of areas.
    let scale = mesh
        .positions
        .iter()
        .flat_map(|p| p.iter().map(|x| x * x))
        .fold(1.0f64, f64::max);
    for &seed in &poly.polygons {
        let edges = poly.polygon_edges(seed);
        if edges.iter().min() != Some(&seed) {
            return Err(format!(
                "polygon {seed} is not named by its smallest half-edge"
            ));
        }
        let vertices = poly.polygon(mesh, seed);
        // Simple in Polylla's sense: no barrier edge (an edge whose two
        // half-edges bound the same polygon), those bridging a polygon's
        // outer boundary to a hole (of the domain, or other polygons that
        // its region surrounds) included (issue 52). A polygon may touch
        // itself at a vertex, where its region wraps around other regions.
        let own: BTreeSet<u32> = edges.iter().copied().collect();
        if let Some(&h) = edges
            .iter()
            .find(|&&h| own.contains(&mesh.twin[h as usize]))
        {
            return Err(format!(
                "polygon {seed} keeps barrier edge {h}: {vertices:?}"
            ));
        }
        let mut area = 0.0;
        let first = mesh.positions[vertices[0] as usize];
        for (i, &h) in edges.iter().enumerate() {
            if !poly.frontier[h as usize] || mesh.is_border(h) {
                return Err(format!(
                    "polygon {seed}: half-edge {h} is not an inner frontier half-edge"
                ));
            }
            if poly.prev[poly.next[h as usize] as usize] != h
                || mesh.origin[edges[(i + 1) % edges.len()] as usize] != mesh.target(h)
            {
                return Err(format!("polygon {seed}: broken links at {h}"));
            }
            if !seen.insert(h) {
                return Err(format!("half-edge {h} in two polygons"));
            }
            let (p, q) = (
                mesh.positions[mesh.origin[h as usize] as usize],
                mesh.positions[mesh.target(h) as usize],
            );
            area += orient(first, p, q) / 2.0;
        }
        // Positive, up to the rounding of nearly degenerate triangles.
        if area <= -1e-12 * scale {
            return Err(format!("polygon {seed} has area {area}"));
        }
        total += area;
    }
    let inner_frontier = (0..mesh.interior)
        .filter(|&h| poly.frontier[h as usize])
        .count();
    if seen.len() != inner_frontier {
        return Err(format!(
            "{} polygon half-edges, {inner_frontier} inner frontier half-edges",
            seen.len()
        ));
    }
    let want = mesh.area();
    if (total - want).abs() > 1e-9 * want.abs().max(1.0) {
        return Err(format!("the polygons cover {total}, the triangles {want}"));
    }
    // No barrier tip remains: no vertex has exactly one frontier edge.
    let mut count = vec![0; mesh.positions.len()];
    for h in 0..mesh.len() as u32 {
        if poly.frontier[h as usize] && h < mesh.twin[h as usize] {
            count[mesh.origin[h as usize] as usize] += 1;
            count[mesh.target(h) as usize] += 1;
        }
    }
    if let Some(v) = count.iter().position(|&c| c == 1) {
        return Err(format!("vertex {v} is a barrier tip"));
    }
    let found = oracle::check(&mesh.positions, triangles, &mesh.origin, poly)?;
    let regions = terminal_regions(mesh);
    if found.regions != regions {
        return Err(format!(
            "{} regions by union-find, {regions} terminal edges",
            found.regions
        ));
    }
    Ok(found)
}

/// Polylla of the triangulation, checked; the backend's (GPolylla's
/// kernels) checked and equal to the sequential one, half-edge for
/// half-edge.
fn run(positions: Vec<[f64; 2]>, triangles: &[[u32; 3]]) -> Result<(HalfEdges, Polylla), String> {
    run_found(positions, triangles).map(|(mesh, poly, _)| (mesh, poly))
}

/// [`run`], with what [`oracle::check`] found.
fn run_found(
    positions: Vec<[f64; 2]>,
    triangles: &[[u32; 3]],
) -> Result<(HalfEdges, Polylla, oracle::Found), String> {
    let mesh = HalfEdges::from_triangles(positions, triangles).map_err(|e| e.to_string())?;
    let poly = polylla_sequential(&mesh);
    let found = check(&mesh, triangles, &poly).map_err(|e| format!("sequential: {e}"))?;
    let (on_backend, timings) = polylla(&test_backend(), &mesh).map_err(|e| e.to_string())?;
    check(&mesh, triangles, &on_backend).map_err(|e| format!("backend: {e}"))?;
    if on_backend != poly {
        let first = (0..mesh.len()).find(|&h| {
            on_backend.next[h] != poly.next[h] || on_backend.frontier[h] != poly.frontier[h]
        });
        return Err(format!(
            "the backend's Polylla differs: {} polygons against {}, {} repairs against {}, first differing half-edge {first:?}",
            on_backend.polygons.len(),
            poly.polygons.len(),
            on_backend.repaired,
            poly.repaired
        ));
    }
    // Ten steps, two more where barrier edges were split.
    if timings.steps.len() != if poly.bridges > 0 { 12 } else { 10 } {
        return Err(format!("{} timed steps", timings.steps.len()));
    }
    Ok((mesh, poly, found))
}

#[test]
fn two_triangles_of_a_square_are_one_quadrilateral() {
    let positions = vec![[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]];
    let (mesh, poly) = run(positions, &[[0, 1, 2], [0, 2, 3]]).unwrap();
    assert_eq!(poly.polygons.len(), 1);
    assert_eq!(poly.polygon(&mesh, poly.polygons[0]).len(), 4);
    assert_eq!(poly.repaired, 0);
}

#[test]
fn generated_random_and_grid_triangulations_give_valid_polygons() {
    for n in [10, 100, 2000] {
        let t = delaunay(&random_points(n, 7)).unwrap();
        let (_, poly) = run(t.positions, &t.triangles).unwrap();
        assert!(!poly.polygons.is_empty());
    }
    // A grid: every square's two triangles are cocircular, lengths tie.
    let t = delaunay(&grid_points(30)).unwrap();
    let (mesh, poly) = run(t.positions, &t.triangles).unwrap();
    assert_eq!(mesh.triangles(), 2 * 29 * 29);
    assert!(
        poly.polygons.len() >= 29 * 29 / 2,
        "{}",
        poly.polygons.len()
    );
}

#[test]
fn half_edges_read_off_spade_match_those_built_from_its_triangles() {
    let points = random_points(3000, 3);
    let t = delaunay(&points).unwrap();
    let built = HalfEdges::from_triangles(t.positions, &t.triangles).unwrap();
    let read = delaunay_half_edges(&points).unwrap();
    assert_eq!(read.positions, built.positions);
    let interior = built.interior as usize;
    assert_eq!(read.interior, built.interior);
    assert_eq!(read.origin[..interior], built.origin[..interior]);
    assert_eq!(read.len(), built.len());
    for h in 0..read.interior {
        let (r, b) = (read.twin[h as usize], built.twin[h as usize]);
        // Twins of interior half-edges agree; a border twin is a border
        // half-edge in both, from the same vertex.
        assert!(
            r == b
                || (read.is_border(r)
                    && built.is_border(b)
                    && read.origin[r as usize] == built.origin[b as usize])
        );
        assert_eq!(
            read.origin[read.next[r as usize] as usize],
            built.origin[built.next[b as usize] as usize]
        );
    }
    // Neighbours across each corner's opposite edge give the same twins.
    let neighbours: Vec<[u32; 3]> = (0..built.triangles())
        .map(|f| {
            std::array::from_fn(|j| {
                let t = built.twin[3 * f + (j + 1) % 3];
                if built.is_border(t) { NONE } else { t / 3 }
            })
        })
        .collect();
    let tri = delaunay(&points).unwrap();
    let with =
        HalfEdges::from_triangles_with(tri.positions, &tri.triangles, Some(&neighbours)).unwrap();
    assert_eq!(with, built);
    let (a, b) = (polylla_sequential(&read), polylla_sequential(&built));
    assert_eq!(a.polygons, b.polygons);
    assert_eq!(a.next[..interior], b.next[..interior]);
    let (on_backend, _) = polylla(&test_backend(), &read).unwrap();
    assert_eq!(on_backend, a);
    // Every half-edge, the border's too, is its twin's twin and its
    // previous one's next; the read does not depend on the threads.
    for h in 0..read.len() {
        assert_eq!(read.twin[read.twin[h] as usize] as usize, h);
        assert_eq!(read.next[read.prev[h] as usize] as usize, h);
    }
    let one_thread = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| delaunay_half_edges(&points).unwrap());
    assert_eq!(one_thread, read);
}

#[test]
fn greenland_points_give_valid_polygons_with_barriers_repaired() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/greenland.node");
    let (points, _) = read_node(&path).unwrap();
    assert_eq!(points.len(), 33343);
    let t = delaunay(&points).unwrap();
    let (mesh, poly) = run(t.positions, &t.triangles).unwrap();
    assert!(poly.polygons.len() > 1000, "{}", poly.polygons.len());
    assert!(
        poly.repaired > 0,
        "{} triangles, no barrier tip",
        mesh.triangles()
    );
}

#[test]
fn vertex_lists_gathered_on_the_backend_equal_the_walked_polygons() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/greenland.node");
    let (greenland, _) = read_node(&path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let backend = test_backend();
    for points in [random_points(20_000, 3), grid_points(40), greenland] {
        let mesh = delaunay_half_edges(&points).unwrap();
        let (poly, _) = polylla(&backend, &mesh).unwrap();
        let (lists, timings) = polygon_lists(&backend, &mesh).unwrap();
        assert!(timings.steps.iter().any(|s| s.0 == "vertex lists"));
        let walked = PolygonLists::of(&poly, &mesh);
        assert_eq!(lists, walked);
        assert_eq!(lists.len(), poly.polygons.len());
        assert_eq!(
            lists.polygon(lists.len() - 1),
            poly.polygon(&mesh, *poly.polygons.last().unwrap())
        );
        // The same files from either.
        let (a, b) = (dir.path().join("a.off"), dir.path().join("b.off"));
        write_off(&a, &mesh, &poly).unwrap();
        write_off(&b, &mesh, &lists).unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        let (a, b) = (dir.path().join("a.ply"), dir.path().join("b.ply"));
        write_ply(&a, &mesh, &poly).unwrap();
        write_ply(&b, &mesh, &lists).unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    }
}

#[test]
fn files_read_and_write_and_bad_lines_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let off = dir.path().join("square.off");
    std::fs::write(
        &off,
        "OFF\n4 2 0\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n3 0 1 2\n3 0 2 3\n",
    )
    .unwrap();
    let t = read_triangulation(&off).unwrap();
    let (mesh, poly) = run(t.positions, &t.triangles).unwrap();
    let out = dir.path().join("poly.off");
    write_off(&out, &mesh, &poly).unwrap();
    assert!(std::fs::read_to_string(&out).unwrap().contains("\n4 "));
    let svg = dir.path().join("poly.svg");
    write_svg(&svg, &mesh, &poly).unwrap();
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
    std::fs::write(
        dir.path().join("t.node"),
        "4 2 0 0\n1 0 0\n2 1 0\n3 1 1\n4 0 1\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("t.ele"), "2 3 0\n1 1 2 3\n2 1 3 4\n").unwrap();
    std::fs::write(dir.path().join("t.neigh"), "2 3\n1 -1 2 -1\n2 -1 -1 1\n").unwrap();
    let t = read_triangulation(&dir.path().join("t.ele")).unwrap();
    assert_eq!(t.neighbours, Some(vec![[NONE, 1, NONE], [NONE, NONE, 0]]));
    let with =
        HalfEdges::from_triangles_with(t.positions.clone(), &t.triangles, t.neighbours.as_deref());
    assert_eq!(
        with.unwrap(),
        HalfEdges::from_triangles(t.positions.clone(), &t.triangles).unwrap()
    );
    let wrong = HalfEdges::from_triangles_with(
        t.positions.clone(),
        &t.triangles,
        Some(&[[1, NONE, NONE], [NONE, NONE, 0]]),
    );
    assert!(matches!(wrong, Err(PolyllaError::Input(_))), "{wrong:?}");
    std::fs::remove_file(dir.path().join("t.neigh")).unwrap();
    assert_eq!(
        (t.positions.len(), t.triangles),
        (4, vec![[0, 1, 2], [0, 2, 3]])
    );
    let line = |r: Result<_, PolyllaError>| match r {
        Err(PolyllaError::File(cavity::io::MeshIoError::Syntax { line, message, .. })) => {
            (line, message)
        }
        other => panic!("{other:?}"),
    };
    std::fs::write(&off, "OFF\n3 1 0\n0 0 0\n1 0 0.5\n0 1 0\n3 0 1 2\n").unwrap();
    let (l, message) = line(read_triangulation(&off));
    assert_eq!(l, 4);
    assert!(message.contains("planar"), "{message}");
    std::fs::write(dir.path().join("t.ele"), "1 3 0\n1 1 2 9\n").unwrap();
    assert_eq!(line(read_triangulation(&dir.path().join("t.node"))).0, 2);
    let overlap = HalfEdges::from_triangles(
        vec![[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]],
        &[[0, 1, 2], [0, 1, 2]],
    );
    assert!(
        matches!(overlap, Err(PolyllaError::Input(_))),
        "{overlap:?}"
    );
}

/// The file of the test data named `name`.
fn data(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

#[test]
fn constrained_and_non_delaunay_files_give_the_regions() {
    // A square with a square hole (Triangle's pair, vertices from 1,
    // boundary markers), fourfold symmetric so that lengths tie across
    // the symmetry: eight regions of a quadrilateral's two triangles
    // around the hole, no barrier edge.
    let t = read_triangulation(&data("holed_square.ele")).unwrap();
    assert_eq!((t.positions.len(), t.triangles.len()), (12, 12));
    let (mesh, poly, found) = run_found(t.positions, &t.triangles).unwrap();
    assert_eq!(
        mesh.len() - mesh.interior as usize,
        12,
        "8 outer and 4 inner boundary edges"
    );
    assert_eq!((found.regions, found.barriers), (8, 0), "{found:?}");
    assert_eq!(poly.polygons.len(), 8);
    // A fan of a convex octagon from one vertex (2D OFF): one region, the
    // octagon.
    let t = read_triangulation(&data("fan.off")).unwrap();
    assert_eq!((t.positions.len(), t.triangles.len()), (8, 6));
    let (mesh, poly, found) = run_found(t.positions, &t.triangles).unwrap();
    assert_eq!(found.regions, 1, "{found:?}");
    assert_eq!(poly.polygons.len(), 1);
    assert_eq!(poly.polygon(&mesh, poly.polygons[0]).len(), 8);
}

#[test]
fn flipped_triangulations_read_back_give_the_regions() {
    let dir = tempfile::tempdir().unwrap();
    let (mut barriers, mut tips) = (0, 0);
    for seed in 0..12u64 {
        let t = delaunay(&oracle::lattice_points(60, seed)).unwrap();
        let (triangles, flips) = oracle::flipped(&t.positions, &t.triangles, 200, seed);
        assert!(flips > 20, "seed {seed}: {flips} flips");
        for path in [
            oracle::write_triangle(dir.path(), "flipped", &t.positions, &triangles),
            oracle::write_off_triangles(dir.path(), "flipped", &t.positions, &triangles),
        ] {
            let read = read_triangulation(&path).unwrap();
            assert_eq!(read.triangles, triangles);
            let (_, _, found) = run_found(read.positions, &read.triangles)
                .unwrap_or_else(|e| panic!("seed {seed}, {}: {e}", path.display()));
            barriers += found.barriers;
            tips += found.tips;
        }
    }
    // The flips make long skinny triangles: barrier edges and tips.
    assert!(
        barriers > 0 && tips > 0,
        "{barriers} barrier edges, {tips} tips"
    );
}

#[test]
fn a_next_that_does_not_cycle_back_is_an_error_not_a_loop() {
    let positions = vec![[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]];
    let (_, mut poly) = run(positions, &[[0, 1, 2], [0, 2, 3]]).unwrap();
    let seed = poly.polygons[0];
    let edges = poly.try_polygon_edges(seed).unwrap();
    assert_eq!(edges, poly.polygon_edges(seed));
    // The last half-edge leads back to the second: a cycle without the
    // seed.
    poly.next[*edges.last().unwrap() as usize] = edges[1];
    let e = poly.try_polygon_edges(seed).unwrap_err();
    assert!(matches!(e, PolyllaError::Input(_)), "{e:?}");
    assert!(e.to_string().contains("does not close"), "{e}");
    let panicked = std::panic::catch_unwind(|| poly.polygon_edges(seed));
    assert!(panicked.is_err());
    // A `next` out of the half-edges, and a seed that is none.
    poly.next[*edges.last().unwrap() as usize] = u32::MAX - 1;
    assert!(poly.try_polygon_edges(seed).is_err());
    assert!(poly.try_polygon_edges(poly.next.len() as u32).is_err());
    assert!(oracle::check(&[], &[], &[], &poly).is_err());
}

#[test]
fn a_polygon_through_two_triangles_that_only_touch_is_refused() {
    // Two triangles meeting at vertex 0 walked as one polygon: no edge
    // twice, every edge a frontier edge, but vertex 0 visited twice with
    // one fan of the polygon's triangles there.
    let positions = vec![[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]];
    let triangles = [[0, 1, 2], [0, 3, 4]];
    let origin = [0, 1, 2, 0, 3, 4];
    let poly = Polylla {
        frontier: vec![true; 6],
        next: vec![1, 2, 3, 4, 5, 0],
        prev: vec![5, 0, 1, 2, 3, 4],
        polygons: vec![0],
        repaired: 0,
        bridges: 0,
    };
    let e = oracle::check(&positions, &triangles, &origin, &poly).unwrap_err();
    assert!(e.contains("visits vertex 0 2 times"), "{e}");
    // Walked as two polygons, they are the two regions.
    let poly = Polylla {
        next: vec![1, 2, 0, 4, 5, 3],
        prev: vec![2, 0, 1, 5, 3, 4],
        polygons: vec![0, 3],
        ..poly
    };
    let found = oracle::check(&positions, &triangles, &origin, &poly).unwrap();
    assert_eq!((found.regions, found.polygons, found.pinches), (2, 2, 0));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cavity_tests::cases(48)))]

    /// Random point sets, some on a coarse lattice (collinear and
    /// cocircular points, ties of lengths), triangulated, some edges
    /// flipped at random (a non-Delaunay triangulation), with some
    /// triangles removed (holes and several components).
    #[test]
    fn random_triangulations_give_valid_polygons(
        points in prop::collection::vec((0u32..40, 0u32..40), 3..200),
        lattice in any::<bool>(),
        flips in prop_oneof![Just(0usize), 0usize..400],
        holes in 0u32..4,
        salt in any::<u32>(),
    ) {
        let points: Vec<[f64; 2]> = points
            .iter()
            .map(|&(x, y)| if lattice {
                [f64::from(x / 4), f64::from(y / 4)]
            } else {
                [f64::from(x) + f64::from(y % 7) / 7.0, f64::from(y) + f64::from(x % 5) / 5.0]
            })
            .collect();
        // Collinear points hold no triangle: an error (see `cli/polylla.rs`).
        let Ok(Triangulation { positions, triangles, .. }) = delaunay(&points) else {
            return Err(TestCaseError::reject("no triangle"));
        };
        let (triangles, _) = oracle::flipped(&positions, &triangles, flips, u64::from(salt));
        let triangles: Vec<[u32; 3]> = triangles
            .into_iter()
            .enumerate()
            .filter(|&(t, _)| holes == 0 || (t as u32).wrapping_mul(2654435761).wrapping_add(salt) % 11 >= holes)
            .map(|(_, t)| t)
            .collect();
        prop_assume!(!triangles.is_empty());
        run(positions, &triangles).map_err(TestCaseError::fail)?;
    }
}

#[test]
fn the_benchmark_times_every_backend_and_checks_them() {
    let mesh = delaunay_half_edges(&random_points(5000, 5)).unwrap();
    let cpu = cavity::backend::Backend::Cpu(cavity::backend::cpu::CpuBackend::new());
    let gpu = test_backend();
    let row = cavity_polylla::bench::polylla_bench_row("random", &mesh, &gpu, &cpu, 1).unwrap();
    assert_eq!(row.counts, [5000, mesh.triangles()]);
    let on_gpu = matches!(gpu, cavity::backend::Backend::Cuda(_));
    assert_eq!(row.gpu.is_some(), on_gpu);
    assert!(row.cpu > 0.0 && row.sequential > 0.0);
    let table = cavity_polylla::bench::polylla_table(&[row], &gpu, &cpu);
    assert!(table.contains("| random | 5000 |"), "{table}");
}

//! The quality measures and the robustness checks of section 4.1 (issue
//! 54): hand-computed values of the regular and the corner tetrahedron,
//! scale invariance, each failure of `check_valid` named, the boundary's
//! topology on grids with a cavity, a tunnel and non-manifold contacts,
//! the Hausdorff distance against a brute force with its own
//! point-triangle distance, and every generated mesh valid with a closed
//! manifold boundary; the measures on the test backend (the GPU in the
//! GPU run) against the host's.

use std::time::Instant;

use cavity_tests::test_backend;
use cavity_tet_collapse::TetMesh;
use cavity_tet_collapse::checks::{
    BoundarySurface, Invalid, boundary_surface, check_valid, hausdorff,
};
use cavity_tet_collapse::kernels::geometry::MIN_VOLUME_RATIO;
use cavity_tet_collapse::quality::{
    harmonic_index, quality, quality_on, quality_table, tet_quality,
};
use proptest::prelude::*;

mod generate;
use generate::{any_tet_mesh, grid, grid_keeping, rng, scaled};

/// The regular tetrahedron of unit edges, positively oriented.
fn regular() -> [[f64; 3]; 4] {
    let h = (2.0f64 / 3.0).sqrt();
    let s = 3f64.sqrt();
    [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.5, s / 2.0, 0.0],
        [0.5, s / 6.0, h],
    ]
}

/// The corner of the unit cube: three right angles at the origin.
const CORNER: [[f64; 3]; 4] = [
    [0.0, 0.0, 0.0],
    [1.0, 0.0, 0.0],
    [0.0, 1.0, 0.0],
    [0.0, 0.0, 1.0],
];

/// One tetrahedron as a mesh.
fn single(p: [[f64; 3]; 4]) -> TetMesh {
    TetMesh {
        positions: p.iter().map(|c| c.map(|x| x as f32)).collect(),
        tets: vec![[0, 1, 2, 3]],
    }
}

/// Whether `a` and `b` agree to `tolerance` relative to `b`.
fn near(a: f64, b: f64, tolerance: f64) -> bool {
    (a - b).abs() <= tolerance * b.abs().max(f64::MIN_POSITIVE)
}

#[test]
fn regular_tetrahedron() {
    let q = tet_quality(regular());
    assert!(near(q.amips, 3.0, 1e-12), "{q:?}");
    assert!(near(q.harmonic, 1.0, 1e-12), "{q:?}");
    let angle = (1.0f64 / 3.0).acos().to_degrees();
    assert!(
        near(q.min_dihedral, angle, 1e-12) && near(q.max_dihedral, angle, 1e-12),
        "{q:?}"
    );
    assert!(!q.inverted);
    // Σ a² / V = 4 (3/16) / (1 / (6√2)) = 9 / √2 at unit edges.
    assert!(near(harmonic_index(regular()), 9.0 / 2f64.sqrt(), 1e-12));
    let m = quality(&single(regular()), None);
    assert_eq!((m.cells, m.vertices, m.inverted), (1, 4, 0));
    assert!(
        near(m.mean_amips, 3.0, 1e-6) && near(m.max_harmonic, 1.0, 1e-6),
        "{m:?}"
    );
    assert!(near(m.min_dihedral, 70.5288, 1e-5), "{m:?}");
}

/// Two corners at one point: the two faces through both have no area
/// and make 180° with every face; the other two lie on each other, 0°.
/// Every corner at one point: no angle (NaN).
#[test]
fn degenerate_tetrahedra_have_flat_and_no_angles() {
    let mut p = CORNER;
    p[1] = p[0];
    let q = tet_quality(p);
    assert!(q.inverted, "{q:?}");
    assert!(near(q.max_dihedral, 180.0, 1e-12), "{q:?}");
    assert!(q.min_dihedral.abs() < 1e-6, "{q:?}");
    let q = tet_quality([[1.0; 3]; 4]);
    assert!(q.min_dihedral.is_nan() && q.max_dihedral.is_nan(), "{q:?}");
}

#[test]
fn corner_tetrahedron() {
    let q = tet_quality(CORNER);
    // tr(JᵀJ) = 1 + 5/3 + 11/6 = 9/2, det J = √2.
    assert!(near(q.amips, 4.5 / 2f64.cbrt(), 1e-12), "{q:?}");
    // Σ a² = 3/4 + 3/4, V = 1/6: η = 9, and 9 / (C (1/6)^(1/3)) = 2^(1/3).
    assert!(near(harmonic_index(CORNER), 9.0, 1e-12));
    assert!(near(q.harmonic, 2f64.cbrt(), 1e-12), "{q:?}");
    assert!(near(
        q.min_dihedral,
        (3f64.sqrt() / 3.0).acos().to_degrees(),
        1e-12
    ));
    assert!(near(q.max_dihedral, 90.0, 1e-12), "{q:?}");
}

#[test]
fn measures_are_scale_free() {
    let mesh = grid(3, 2, 3, 0.15, 7);
    let at_one = quality(&mesh, Some(1.0));
    for scale in [1e-30f32, 1e-7, 3.5e4, 1e30] {
        let q = quality(&scaled(&mesh, scale), Some(f64::from(scale)));
        let pairs = [
            (q.min_dihedral, at_one.min_dihedral),
            (q.max_dihedral, at_one.max_dihedral),
            (q.mean_harmonic, at_one.mean_harmonic),
            (q.max_harmonic, at_one.max_harmonic),
            (q.mean_amips, at_one.mean_amips),
            (q.max_amips, at_one.max_amips),
        ];
        for (a, b) in pairs {
            assert!(near(a, b, 1e-5), "scale {scale}: {a} against {b}");
        }
        assert_eq!(q.edge_band, at_one.edge_band, "scale {scale}");
        assert_eq!(
            (q.cells, q.vertices, q.inverted),
            (at_one.cells, at_one.vertices, 0)
        );
        assert_eq!(check_valid(&scaled(&mesh, scale), 0.0), Ok(()));
    }
}

#[test]
fn min_dihedral_agrees_with_cavity_volume() {
    let mesh = grid(3, 3, 3, 0.18, 3);
    for &t in &mesh.tets {
        let p = t.map(|v| mesh.positions[v as usize].map(f64::from));
        let ours = tet_quality(p).min_dihedral;
        let theirs = cavity_volume::quality::min_dihedral_angle(t, &mesh.positions);
        assert!(near(ours, theirs, 1e-9), "{t:?}: {ours} against {theirs}");
    }
}

#[test]
fn the_backend_measures_as_the_host_does_on_special_meshes() {
    let backend = test_backend();
    let mut inverted = grid(2, 2, 2, 0.1, 5);
    let [a, b, c, d] = inverted.tets[17];
    inverted.tets[17] = [a, c, b, d];
    let flat = single([[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]]);
    let mut unreferenced = grid(1, 1, 1, 0.0, 0);
    unreferenced.positions.push([5.0, 5.0, 5.0]);
    let empty = TetMesh {
        positions: vec![[0.0; 3]; 3],
        tets: Vec::new(),
    };
    for (name, mesh) in [
        ("regular", single(regular())),
        ("corner", single(CORNER)),
        ("inverted", inverted),
        ("flat", flat),
        ("unreferenced", unreferenced),
        ("empty", empty),
    ] {
        for length in [None, Some(1.0)] {
            let host = quality(&mesh, length);
            let ours = quality_on(&backend, &mesh, length).unwrap();
            assert_eq!(ours.differs_from(&host, 1e-9), None, "{name}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cavity_tests::cases(16)))]

    /// On random meshes (holes, components, slivers, any scale) the test
    /// backend's measures are the host's.
    #[test]
    fn the_backend_measures_as_the_host_does(mesh in any_tet_mesh(), relative in 0.5f64..2.0) {
        // About the mesh's edges: the first tetrahedron's first edge.
        let [a, b, ..] = mesh.tets[0].map(|v| mesh.positions[v as usize].map(f64::from));
        let l = relative * (0..3).map(|k| (a[k] - b[k]).powi(2)).sum::<f64>().sqrt();
        let host = quality(&mesh, Some(l));
        let ours = quality_on(&test_backend(), &mesh, Some(l)).map_err(|e| TestCaseError::fail(e.to_string()))?;
        if let Some(d) = ours.differs_from(&host, 1e-9) {
            return Err(TestCaseError::fail(d));
        }
    }
}

#[test]
fn edge_band_counts_unique_edges() {
    // 12 cube edges of length 1, 6 face diagonals of √2, 1 body diagonal.
    let cube = grid(1, 1, 1, 0.0, 0);
    assert_eq!(cube.edges().len(), 19);
    assert_eq!(quality(&cube, Some(1.0)).edge_band, Some(12.0 / 19.0));
    assert_eq!(quality(&cube, Some(1.2)).edge_band, Some(18.0 / 19.0));
    assert_eq!(quality(&cube, None).edge_band, None);
}

#[test]
fn table_has_a_column_per_row_and_aligned_lines() {
    let a = quality(&grid(2, 2, 2, 0.1, 1), Some(1.0));
    let b = quality(&single(CORNER), None);
    let table = quality_table(&[("input", &a), ("output", &b)]);
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].trim_start().starts_with("input") && lines[0].ends_with("output"));
    assert!(lines.iter().all(|l| l.len() == lines[0].len()), "{table}");
    let row = |name: &str| {
        let line = lines.iter().find(|l| l.starts_with(name)).unwrap();
        line[name.len()..]
            .split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(row("tetrahedra"), ["48", "1"]);
    assert_eq!(row("vertices"), ["27", "4"]);
    assert_eq!(row("max dihedral (deg)")[1], "90.00");
    assert_eq!(row("mean AMIPS (3 = regular)")[1], "3.5717");
    assert_eq!(row("edges in [4/5 L, 4/3 L] (%)")[1], "-");
    assert_eq!(table.lines().count(), 11, "{table}");
    // Without a target length the band's line is left out.
    assert_eq!(quality_table(&[("output", &b)]).lines().count(), 10);
}

#[test]
fn inverted_tetrahedron_is_named() {
    let mut mesh = grid(2, 2, 2, 0.1, 5);
    let [a, b, c, d] = mesh.tets[17];
    mesh.tets[17] = [a, c, b, d];
    let e = check_valid(&mesh, 0.0).unwrap_err();
    assert!(
        matches!(e, Invalid::Inverted { tet: 17, vertices, volume } if vertices == [a, c, b, d] && volume < 0.0),
        "{e:?}"
    );
    assert!(e.to_string().starts_with("tetrahedron 17 "), "{e}");
    let q = quality(&mesh, None);
    assert_eq!(q.inverted, 1);
    assert_eq!(
        (q.max_amips, q.mean_harmonic),
        (f64::INFINITY, f64::INFINITY)
    );
    // A flat tetrahedron counts as inverted.
    let flat = single([[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]]);
    assert!(matches!(
        check_valid(&flat, 0.0),
        Err(Invalid::Inverted { tet: 0, .. })
    ));
    assert_eq!(quality(&flat, None).inverted, 1);
}

#[test]
fn too_flat_tetrahedron_is_named_with_its_ratio() {
    // A Kuhn tetrahedron's volume is 1/6, its longest edge √3: ratio 0.032.
    let mesh = grid(2, 1, 1, 0.0, 0);
    assert_eq!(check_valid(&mesh, MIN_VOLUME_RATIO), Ok(()));
    let e = check_valid(&mesh, 0.05).unwrap_err();
    assert!(
        matches!(e, Invalid::TooFlat { tet: 0, ratio, .. } if ratio == 0.05),
        "{e:?}"
    );
    assert!(e.to_string().contains("too flat"), "{e}");
}

#[test]
fn bad_indices_are_named() {
    let mut mesh = grid(1, 1, 1, 0.0, 0);
    mesh.tets[3][2] = 99;
    let e = check_valid(&mesh, 0.0).unwrap_err();
    assert_eq!(
        e,
        Invalid::VertexOutOfRange {
            tet: 3,
            vertex: 99,
            vertices: 8
        }
    );
    assert_eq!(
        e.to_string(),
        "tetrahedron 3 names vertex 99, but the mesh has 8 vertices"
    );
    let mut mesh = grid(1, 1, 1, 0.0, 0);
    mesh.tets[4][3] = mesh.tets[4][0];
    assert!(matches!(
        check_valid(&mesh, 0.0),
        Err(Invalid::RepeatedVertex { tet: 4, .. })
    ));
}

/// A triangle `(0, 1, 2)` in the plane `z = 0` with apices 3 and 5 above
/// and 4 below.
fn around_triangle(tets: Vec<[u32; 4]>) -> TetMesh {
    TetMesh {
        positions: vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.2, 0.2, 1.0],
            [0.2, 0.2, -1.0],
            [0.3, 0.1, 2.0],
        ],
        tets,
    }
}

#[test]
fn face_of_three_tetrahedra_is_named() {
    let mesh = around_triangle(vec![[0, 1, 2, 3], [0, 2, 1, 4], [0, 1, 2, 5]]);
    let e = check_valid(&mesh, 0.0).unwrap_err();
    assert_eq!(
        e,
        Invalid::SharedFace {
            triangle: [0, 1, 2],
            count: 3,
            tets: [0, 1, 2]
        }
    );
    assert!(
        e.to_string()
            .starts_with("triangle [0, 1, 2] is a face of 3 tetrahedra"),
        "{e}"
    );
}

#[test]
fn face_of_two_tetrahedra_on_one_side_is_named() {
    let mesh = around_triangle(vec![[0, 1, 2, 3], [1, 2, 0, 5]]);
    let e = check_valid(&mesh, 0.0).unwrap_err();
    assert_eq!(
        e,
        Invalid::SameOrientation {
            triangle: [0, 1, 2],
            tets: [0, 1]
        }
    );
    assert!(
        e.to_string()
            .contains("tetrahedra 0 and 1 with the same orientation"),
        "{e}"
    );
    let fine = around_triangle(vec![[0, 1, 2, 3], [0, 2, 1, 4]]);
    assert_eq!(check_valid(&fine, 0.0), Ok(()));
}

#[test]
fn duplicated_vertex_is_named() {
    let mut mesh = grid(2, 1, 1, 0.0, 0);
    // Vertex 1, (1, 0, 0), copied: the second cube's tetrahedra use the copy.
    mesh.positions.push(mesh.positions[1]);
    for t in &mut mesh.tets[6..] {
        for v in t.iter_mut().filter(|v| **v == 1) {
            *v = 12;
        }
    }
    let e = check_valid(&mesh, 0.0).unwrap_err();
    assert_eq!(
        e,
        Invalid::DuplicateVertex {
            vertices: [1, 12],
            position: [1.0, 0.0, 0.0]
        }
    );
    assert_eq!(
        e.to_string(),
        "vertices 1 and 12 are both at [1.0, 0.0, 0.0]"
    );
    // An unreferenced copy is fine; -0.0 and 0.0 are the same position.
    let mut mesh = grid(1, 1, 1, 0.0, 0);
    mesh.positions.push([0.0, 0.0, 0.0]);
    assert_eq!(check_valid(&mesh, 0.0), Ok(()));
    let only = TetMesh {
        positions: vec![
            [-0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
            [0.0, 0.0, 0.0],
            [2.0, 0.0, 0.0],
            [0.0, 2.0, 0.0],
            [0.0, 0.0, 2.0],
        ],
        tets: vec![[0, 1, 2, 3], [4, 5, 6, 7]],
    };
    assert!(matches!(
        check_valid(&only, 0.0),
        Err(Invalid::DuplicateVertex {
            vertices: [0, 4],
            ..
        })
    ));
}

/// The components of `mesh`'s boundary as `(euler, closed, manifold,
/// genus)`.
fn topology(mesh: &TetMesh) -> Vec<(i64, bool, bool, Option<u32>)> {
    boundary_surface(mesh)
        .topology()
        .components
        .iter()
        .map(|c| (c.euler, c.closed, c.manifold, c.genus))
        .collect()
}

#[test]
fn grid_boundary_is_one_sphere() {
    let mesh = grid(3, 2, 2, 0.1, 2);
    let surface = boundary_surface(&mesh);
    // 2 (6 + 6 + 4) squares of two triangles; every vertex but the 2
    // inside the box.
    assert_eq!(surface.triangles.len(), 64);
    assert_eq!(surface.vertices.len(), mesh.positions.len() - 2);
    let t = surface.topology();
    assert_eq!(t.components.len(), 1);
    let c = t.components[0];
    assert_eq!((c.vertices, c.edges, c.triangles), (34, 96, 64));
    assert!(c.closed && c.oriented && c.manifold, "{c:?}");
    assert_eq!((c.euler, c.genus), (2, Some(0)));
    // Outward: the triangles' area vectors sum to zero and the signed
    // volume they enclose is the box's.
    let p = |v: u32| surface_point(&mesh, v);
    let volume: f64 = surface
        .triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(p);
            a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
                + a[2] * (b[0] * c[1] - b[1] * c[0])
        })
        .sum::<f64>()
        / 6.0;
    assert!(near(volume, 12.0, 1e-12), "{volume}");
}

/// Vertex `v`'s position in `f64`.
fn surface_point(mesh: &TetMesh, v: u32) -> [f64; 3] {
    mesh.positions[v as usize].map(f64::from)
}

#[test]
fn tunnel_has_genus_one_and_cavity_two_spheres() {
    let tunnel = grid_keeping([3, 3, 2], 0.1, 4, |[x, y, _]| (x, y) != (1, 1));
    assert_eq!(topology(&tunnel), [(0, true, true, Some(1))]);
    let two_tunnels = grid_keeping([5, 3, 2], 0.0, 0, |[x, y, _]| y != 1 || x % 2 == 0);
    assert_eq!(topology(&two_tunnels), [(-2, true, true, Some(2))]);
    let cavity = grid_keeping([3, 3, 3], 0.1, 4, |c| c != [1, 1, 1]);
    assert_eq!(topology(&cavity), [(2, true, true, Some(0)); 2]);
}

#[test]
fn touching_cubes_are_not_manifold() {
    // Along an edge: one component whose edge has four triangles.
    let edge = grid_keeping([2, 2, 1], 0.0, 0, |[x, y, _]| x == y);
    assert_eq!(check_valid(&edge, 0.0), Ok(()));
    let t = boundary_surface(&edge).topology();
    assert_eq!(t.components.len(), 1);
    let c = t.components[0];
    assert!(
        !c.closed && !c.manifold && !c.oriented && c.genus.is_none(),
        "{c:?}"
    );
    // At a corner: two closed components, not manifold at the corner.
    let corner = grid_keeping([2, 2, 2], 0.0, 0, |[x, y, z]| x == y && y == z);
    assert_eq!(topology(&corner), [(2, true, false, None); 2]);
}

#[test]
fn hausdorff_of_identical_surfaces_is_zero() {
    let a = grid(3, 3, 2, 0.15, 1);
    let s = boundary_surface(&a);
    assert_eq!(hausdorff(&s, &a.positions, &s, &a.positions), 0.0);
    // Other jitter inside: the same boundary.
    let b = grid(3, 3, 2, 0.15, 2);
    assert_ne!(a.positions, b.positions);
    assert_eq!(
        hausdorff(&s, &a.positions, &boundary_surface(&b), &b.positions),
        0.0
    );
    let empty = BoundarySurface::default();
    assert_eq!(hausdorff(&empty, &[], &empty, &[]), 0.0);
    assert_eq!(hausdorff(&s, &a.positions, &empty, &[]), f64::INFINITY);
}

#[test]
fn hausdorff_of_a_displaced_vertex() {
    let a = grid(4, 4, 2, 0.0, 0);
    let mut b = a.clone();
    let top = b
        .positions
        .iter()
        .position(|p| *p == [2.0, 2.0, 2.0])
        .unwrap();
    b.positions[top] = [2.0, 2.0, 2.25];
    let (sa, sb) = (boundary_surface(&a), boundary_surface(&b));
    assert_eq!(hausdorff(&sa, &a.positions, &sb, &b.positions), 0.25);
    assert_eq!(hausdorff(&sb, &b.positions, &sa, &a.positions), 0.25);
    // Scaled with the mesh.
    let (a30, b30) = (scaled(&a, 1e30), scaled(&b, 1e30));
    let h = hausdorff(&sa, &a30.positions, &sb, &b30.positions);
    assert!(near(h, 0.25e30, 1e-6), "{h}");
    // Inwards, the vertex is 0.25 from the top but nearer to nothing else.
    b.positions[top] = [2.0, 2.0, 1.75];
    assert_eq!(hausdorff(&sa, &a.positions, &sb, &b.positions), 0.25);
}

/// The squared distance from `p` to triangle `t`, the oracle's own way:
/// to the plane where the foot is inside (all three edge tests by cross
/// products agree), else to the nearest of the three edges.
fn brute_triangle2(p: [f64; 3], t: [[f64; 3]; 3]) -> f64 {
    let sub = |a: [f64; 3], b: [f64; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let cross = |a: [f64; 3], b: [f64; 3]| {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    };
    let segment = |a: [f64; 3], b: [f64; 3]| {
        let d = sub(b, a);
        let t = (dot(sub(p, a), d) / dot(d, d)).clamp(0.0, 1.0);
        let q = [a[0] + t * d[0], a[1] + t * d[1], a[2] + t * d[2]];
        dot(sub(p, q), sub(p, q))
    };
    let edges = segment(t[0], t[1])
        .min(segment(t[1], t[2]))
        .min(segment(t[2], t[0]));
    let n = cross(sub(t[1], t[0]), sub(t[2], t[0]));
    let inside = (0..3).all(|i| dot(cross(sub(t[(i + 1) % 3], t[i]), sub(p, t[i])), n) >= 0.0);
    if inside {
        let h = dot(sub(p, t[0]), n);
        edges.min(h * h / dot(n, n))
    } else {
        edges
    }
}

/// The Hausdorff distance from the vertices of `a` to the triangles of
/// `b`, by brute force.
fn brute_one_sided(
    a: &BoundarySurface,
    pa: &[[f32; 3]],
    b: &BoundarySurface,
    pb: &[[f32; 3]],
) -> f64 {
    let at = |p: &[[f32; 3]], v: u32| p[v as usize].map(f64::from);
    a.vertices
        .iter()
        .map(|&v| {
            b.triangles
                .iter()
                .map(|t| brute_triangle2(at(pa, v), t.map(|w| at(pb, w))))
                .fold(f64::INFINITY, f64::min)
                .sqrt()
        })
        .fold(0.0, f64::max)
}

#[test]
fn generated_meshes_are_valid_with_manifold_boundaries() {
    let config = ProptestConfig::with_cases(cavity_tests::cases(96));
    proptest!(config, |(mesh in any_tet_mesh())| {
        prop_assert_eq!(check_valid(&mesh, 0.0), Ok(()));
        let q = quality(&mesh, None);
        prop_assert_eq!((q.inverted, q.vertices), (0, mesh.positions.len()));
        let topology = boundary_surface(&mesh).topology();
        prop_assert!(!topology.components.is_empty());
        for c in &topology.components {
            prop_assert!(c.closed && c.manifold && c.oriented, "{:?}", c);
            prop_assert_eq!(c.genus.map(|g| 2 - 2 * i64::from(g)), Some(c.euler));
        }
    });
}

#[test]
fn hausdorff_matches_brute_force() {
    let config = ProptestConfig::with_cases(cavity_tests::cases(48));
    proptest!(config, |(mesh in any_tet_mesh(), seed in any::<u64>(), amount in 0.0f64..0.5)| {
        // Every position moved by up to `amount` of the mesh's extent.
        let extent = mesh
            .positions
            .iter()
            .flatten()
            .fold(0.0f64, |m, &x| m.max(f64::from(x).abs()));
        let mut random = rng(seed);
        let mut moved = mesh.clone();
        for p in &mut moved.positions {
            for x in p.iter_mut() {
                *x += (random.random_range(-1.0..=1.0) * amount * extent) as f32;
            }
        }
        let (a, b) = (boundary_surface(&mesh), boundary_surface(&moved));
        let ours = hausdorff(&a, &mesh.positions, &b, &moved.positions);
        let brute = brute_one_sided(&a, &mesh.positions, &b, &moved.positions)
            .max(brute_one_sided(&b, &moved.positions, &a, &mesh.positions));
        prop_assert!(
            (ours - brute).abs() <= 1e-9 * brute + 1e-12 * extent,
            "{} against {}", ours, brute
        );
    });
}

/// A torus of `n × n × 2` triangles (radii 1 and 0.4), each vertex moved
/// off it by up to `noise` along the radius of the tube.
fn torus(n: u32, noise: f64, seed: u64) -> (BoundarySurface, Vec<[f32; 3]>) {
    let mut random = rng(seed);
    let mut positions = Vec::new();
    for i in 0..n {
        for j in 0..n {
            let (u, v) = (
                f64::from(i) / f64::from(n) * std::f64::consts::TAU,
                f64::from(j) / f64::from(n) * std::f64::consts::TAU,
            );
            let r = 0.4 + random.random_range(-noise..=noise);
            positions.push([
                ((1.0 + r * v.cos()) * u.cos()) as f32,
                ((1.0 + r * v.cos()) * u.sin()) as f32,
                (r * v.sin()) as f32,
            ]);
        }
    }
    let at = |i: u32, j: u32| (i % n) * n + j % n;
    let triangles = (0..n)
        .flat_map(|i| {
            (0..n).flat_map(move |j| {
                [
                    [at(i, j), at(i + 1, j), at(i + 1, j + 1)],
                    [at(i, j), at(i + 1, j + 1), at(i, j + 1)],
                ]
            })
        })
        .collect();
    let surface = BoundarySurface {
        triangles,
        vertices: (0..n * n).collect(),
    };
    (surface, positions)
}

/// The time of `hausdorff` on two tori of about a million triangles each
/// (on the 16-core device machine: about a second is the aim). Run with
/// `--ignored --nocapture` in release.
#[test]
#[ignore = "timing (issue 54 item 8): run in release with --ignored --nocapture"]
fn hausdorff_of_a_million_triangles_is_fast() {
    let (a, pa) = torus(708, 0.0, 1);
    let (b, pb) = torus(708, 0.01, 2);
    let start = Instant::now();
    let h = hausdorff(&a, &pa, &b, &pb);
    println!(
        "hausdorff of {} and {} triangles: {h:.6} in {:.3} s on {} threads",
        a.triangles.len(),
        b.triangles.len(),
        start.elapsed().as_secs_f64(),
        rayon::current_num_threads()
    );
    assert!(h > 0.0 && h <= 0.0105, "{h}");
}

proptest! {
    /// The trial's fused measure (`criterion::trial_harmonic`: one volume
    /// and one longest edge) is the volume test and the relative harmonic
    /// index computed apart, bit for bit, on tetrahedra from regular to
    /// flat and inverted, at any scale.
    #[test]
    fn the_trials_measure_is_the_volume_test_and_the_harmonic_index(
        corners in prop::array::uniform4(prop::array::uniform3(-1.0f64..1.0)),
        flatten in 0.0f64..1.0,
        scale_exp in -30i32..30,
        ratio in prop::sample::select(vec![0.0, 1e-12, MIN_VOLUME_RATIO, 1e-2]),
    ) {
        use cavity_tet_collapse::kernels::criterion::{relative_harmonic, trial_harmonic};
        use cavity_tet_collapse::kernels::geometry::is_valid_tet;
        let scale = 10f64.powi(scale_exp);
        let mut q = corners.map(|c| c.map(|x| x * scale));
        // Pull the last corner towards the first three's plane's centroid.
        for k in 0..3 {
            let centre = (q[0][k] + q[1][k] + q[2][k]) / 3.0;
            q[3][k] = centre + (q[3][k] - centre) * flatten;
        }
        let apart = is_valid_tet(q, ratio).then(|| relative_harmonic(q));
        let fused = trial_harmonic(q, ratio);
        prop_assert_eq!(fused.map(f64::to_bits), apart.map(f64::to_bits));
    }
}

//! The link condition (`kernels::link::link_condition`) against its
//! definition: the links of `a`, `b` and `ab` built as sets of simplices
//! from the whole tetrahedron list, the boundary closed by a vertex at
//! infinity, and `Lk(a) ∩ Lk(b) = Lk(ab)` compared, for every edge of
//! random tetrahedral meshes; the boundary rule's table.

mod generate;

use std::collections::{BTreeSet, HashMap};

use cavity_tests::cases;
use cavity_tet_collapse::TetMesh;
use cavity_tet_collapse::kernels::boundary::{CORNER, FACE, INTERIOR, Keep, RIDGE, boundary_rule};
use cavity_tet_collapse::kernels::collapse::{Trial, check};
use cavity_tet_collapse::kernels::criterion::{Length, Placement};
use cavity_tet_collapse::kernels::link::{MAX_RING, link_condition, link_condition_in_mesh};
use cavity_tet_collapse::kernels::star::Star;
use cavity_tet_collapse::mesh::signed_volume;
use proptest::prelude::*;

/// The vertex at infinity.
const OMEGA: u32 = u32::MAX;

/// A simplex as its sorted vertices.
type Simplex = Vec<u32>;

/// A mesh with its stars, read by the predicates.
struct Stars<'a> {
    mesh: &'a TetMesh,
    stars: Vec<Vec<u32>>,
    boundary: Vec<bool>,
}

impl<'a> Stars<'a> {
    fn new(mesh: &'a TetMesh) -> Stars<'a> {
        let mut stars = vec![Vec::new(); mesh.positions.len()];
        for (t, tet) in mesh.tets.iter().enumerate() {
            for &v in tet {
                stars[v as usize].push(t as u32);
            }
        }
        let mut boundary = vec![false; mesh.positions.len()];
        for f in boundary_triangles(mesh) {
            for v in f {
                boundary[v as usize] = true;
            }
        }
        Stars {
            mesh,
            stars,
            boundary,
        }
    }
}

impl Star for Stars<'_> {
    fn star_len(&self, v: u32) -> u32 {
        self.stars[v as usize].len() as u32
    }
    fn star_tet(&self, v: u32, i: u32) -> u32 {
        self.stars[v as usize][i as usize]
    }
    fn tet(&self, t: u32) -> [u32; 4] {
        self.mesh.tets[t as usize]
    }
    fn position(&self, v: u32) -> [f64; 3] {
        self.mesh.positions[v as usize].map(f64::from)
    }
    fn on_boundary(&self, v: u32) -> bool {
        self.boundary[v as usize]
    }
    fn value(&self, _: u32) -> f64 {
        0.0
    }
}

/// The triangles in exactly one tetrahedron, sorted.
fn boundary_triangles(mesh: &TetMesh) -> Vec<[u32; 3]> {
    let mut count: HashMap<[u32; 3], u32> = HashMap::new();
    for t in &mesh.tets {
        for skip in 0..4 {
            let mut f: Vec<u32> = (0..4).filter(|&i| i != skip).map(|i| t[i]).collect();
            f.sort_unstable();
            *count.entry([f[0], f[1], f[2]]).or_default() += 1;
        }
    }
    count
        .into_iter()
        .filter(|&(_, c)| c == 1)
        .map(|(f, _)| f)
        .collect()
}

/// Every face (all its sub-simplices, non-empty) of `simplex`.
fn closure(simplex: &[u32], into: &mut BTreeSet<Simplex>) {
    let n = simplex.len();
    for mask in 1..(1u32 << n) {
        let mut s: Simplex = (0..n)
            .filter(|&i| mask & (1 << i) != 0)
            .map(|i| simplex[i])
            .collect();
        s.sort_unstable();
        into.insert(s);
    }
}

/// The link of `sigma` (sorted vertices) in the mesh closed by ω: for
/// every simplex τ ⊇ σ of the closed complex, τ \ σ and its faces.
fn link(mesh: &TetMesh, boundary: &[[u32; 3]], sigma: &[u32]) -> BTreeSet<Simplex> {
    let mut cofaces: Vec<Vec<u32>> = mesh.tets.iter().map(|t| t.to_vec()).collect();
    cofaces.extend(boundary.iter().map(|f| vec![f[0], f[1], f[2], OMEGA]));
    let mut out = BTreeSet::new();
    for tau in cofaces {
        if sigma.iter().all(|v| tau.contains(v)) {
            let rest: Vec<u32> = tau.into_iter().filter(|v| !sigma.contains(v)).collect();
            closure(&rest, &mut out);
        }
    }
    out
}

/// Whether the definition holds for edge `(a, b)`.
fn by_definition(mesh: &TetMesh, boundary: &[[u32; 3]], a: u32, b: u32) -> bool {
    let (la, lb) = (link(mesh, boundary, &[a]), link(mesh, boundary, &[b]));
    let common: BTreeSet<Simplex> = la.intersection(&lb).cloned().collect();
    common == link(mesh, boundary, &[a.min(b), a.max(b)])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(24)))]

    /// On random meshes (grids, holes, components, slivers) every edge's
    /// link condition is the definition's, by the ring's bits and by the
    /// direct test (the path past `MAX_RING` ring vertices), and both
    /// outcomes occur over the run (counted in the small grids' own test
    /// below).
    #[test]
    fn the_link_condition_is_the_definition(mesh in generate::any_tet_mesh()) {
        let stars = Stars::new(&mesh);
        let boundary = boundary_triangles(&mesh);
        for [a, b] in mesh.edges() {
            let want = by_definition(&mesh, &boundary, a, b);
            prop_assert_eq!(link_condition(&stars, a, b), want, "edge ({}, {})", a, b);
            prop_assert_eq!(
                link_condition_in_mesh(&stars, a, b),
                want,
                "edge ({}, {}), read from the mesh", a, b
            );
        }
    }
}

#[test]
fn a_small_grid_has_edges_that_pass_and_edges_that_fail() {
    let mesh = generate::grid(2, 2, 1, 0.0, 0);
    let stars = Stars::new(&mesh);
    let boundary = boundary_triangles(&mesh);
    let (mut pass, mut fail) = (0, 0);
    for [a, b] in mesh.edges() {
        let ok = link_condition(&stars, a, b);
        assert_eq!(ok, by_definition(&mesh, &boundary, a, b), "edge ({a}, {b})");
        if ok {
            pass += 1;
        } else {
            fail += 1;
        }
    }
    assert!(pass > 0 && fail > 0, "{pass} pass, {fail} fail");
}

/// The link condition refuses collapses on its own: on perturbed grids
/// with holes, of the edges whose trial at the midpoint leaves every
/// tetrahedron clearly valid (computed here, apart from the kernels),
/// `collapse::check` with interior classes (no boundary rule), a
/// criterion that admits any edge and no quality bound accepts exactly
/// those whose link condition holds, and some fail it: a `check` without
/// the link condition would accept them.
#[test]
fn the_link_condition_alone_refuses_collapses() {
    let criterion = Length {
        length: 1e9,
        placement: Placement::Midpoint,
    };
    let trial = Trial {
        volume_ratio: 1e-6,
        quality_bound: f64::INFINITY,
    };
    let (mut accepted, mut refused) = (0, 0);
    for seed in 0..8 {
        let n = [4, 4, 3];
        let kept = generate::holes(n, 0.3, &mut generate::rng(seed));
        let mesh = generate::grid_keeping(n, 0.2, seed, |c| {
            kept[(c[0] + n[0] * (c[1] + n[1] * c[2])) as usize]
        });
        let stars = Stars::new(&mesh);
        for [a, b] in mesh.edges() {
            // The tetrahedra left, with a and b at the midpoint, each with a
            // volume of at least a thousandth of its longest edge cubed
            // (the kernels' bound is a millionth).
            let (pa, pb) = (stars.position(a), stars.position(b));
            let mid = [0, 1, 2].map(|k| ((pa[k] + pb[k]) * 0.5) as f32);
            let mut moved = mesh.positions.clone();
            moved[a as usize] = mid;
            moved[b as usize] = mid;
            let clearly_valid = mesh
                .tets
                .iter()
                .filter(|t| t.contains(&a) != t.contains(&b))
                .all(|&t| {
                    let p = t.map(|v| moved[v as usize].map(f64::from));
                    let longest = (0..4)
                        .flat_map(|i| (i + 1..4).map(move |j| (i, j)))
                        .map(|(i, j)| (0..3).map(|k| (p[i][k] - p[j][k]).powi(2)).sum::<f64>())
                        .fold(0.0, f64::max)
                        .sqrt();
                    signed_volume(&moved, t) >= 1e-3 * longest.powi(3)
                });
            if !clearly_valid {
                continue;
            }
            let link = link_condition(&stars, a, b);
            let got = check(&stars, &criterion, a, b, INTERIOR, INTERIOR, false, trial);
            assert_eq!(got.is_some(), link, "edge ({a}, {b}), seed {seed}");
            if link {
                accepted += 1;
            } else {
                refused += 1;
            }
        }
    }
    assert!(
        accepted > 0 && refused > 0,
        "{accepted} accepted, {refused} refused by the link condition"
    );
}

#[test]
fn the_boundary_rule_keeps_corners_and_ridges() {
    // Interior edges: anywhere; towards the boundary: the boundary vertex.
    assert_eq!(
        boundary_rule(INTERIOR, INTERIOR, false, false),
        Some(Keep::Either)
    );
    assert_eq!(boundary_rule(INTERIOR, CORNER, false, false), Some(Keep::B));
    assert_eq!(boundary_rule(FACE, INTERIOR, false, false), Some(Keep::A));
    // An interior edge between two boundary vertices never collapses.
    for (a, b) in [(FACE, FACE), (FACE, RIDGE), (RIDGE, RIDGE), (CORNER, FACE)] {
        assert_eq!(boundary_rule(a, b, false, false), None);
    }
    // Along the boundary: the more constrained stays.
    assert_eq!(boundary_rule(FACE, FACE, true, false), Some(Keep::Either));
    assert_eq!(boundary_rule(FACE, RIDGE, true, false), Some(Keep::B));
    assert_eq!(boundary_rule(CORNER, FACE, true, false), Some(Keep::A));
    // Ridges only along the ridge; corners never together.
    assert_eq!(boundary_rule(RIDGE, RIDGE, true, true), Some(Keep::Either));
    assert_eq!(boundary_rule(RIDGE, RIDGE, true, false), None);
    assert_eq!(boundary_rule(RIDGE, CORNER, true, true), Some(Keep::B));
    assert_eq!(boundary_rule(RIDGE, CORNER, true, false), None);
    assert_eq!(boundary_rule(CORNER, CORNER, true, true), None);
}

/// A spindle: edge `01` inside `k` tetrahedra around a ring of `k`
/// vertices, vertex 0 below and 1 above.
fn spindle(k: u32) -> TetMesh {
    let mut positions = vec![[0.0, 0.0, -1.0], [0.0, 0.0, 1.0]];
    for i in 0..k {
        let angle = std::f32::consts::TAU * i as f32 / k as f32;
        positions.push([angle.cos(), angle.sin(), 0.0]);
    }
    let tets = (0..k).map(|i| [0, 1, 2 + i, 2 + (i + 1) % k]).collect();
    let spindle = TetMesh { positions, tets };
    assert!(
        spindle
            .tets
            .iter()
            .all(|&t| signed_volume(&spindle.positions, t) > 0.0)
    );
    spindle
}

#[test]
fn rings_at_and_past_the_local_bits_are_the_definition() {
    // Spindles whose edge 01 has a ring of MAX_RING - 1, MAX_RING (the
    // last bit of the u128 in use) and past it (the path that reads the
    // mesh), with the ball's centre of 512 tetrahedra beside them.
    for k in [
        MAX_RING as u32 - 1,
        MAX_RING as u32,
        MAX_RING as u32 + 1,
        20,
    ] {
        let mesh = generate::together(&spindle(k), &generate::ball(3), [4.0, 0.0, 0.0]);
        let stars = Stars::new(&mesh);
        let boundary = boundary_triangles(&mesh);
        assert!((0..mesh.positions.len() as u32).any(|v| stars.star_len(v) > 64));
        for [a, b] in mesh.edges() {
            assert_eq!(
                link_condition(&stars, a, b),
                by_definition(&mesh, &boundary, a, b),
                "ring of {k}: edge ({a}, {b})"
            );
        }
    }
}

//! Implicit mean curvature flow (`cavity-mcf`) against a serial sparse
//! solve: `(M + dt K) x' = M x` assembled over the reference mesh's faces
//! (cotan weights, mixed Voronoi areas, boundary and non-manifold vertices
//! fixed) and solved by a sparse Cholesky factorization (nalgebra-sparse),
//! in `f64`; the flow's invariants on closed meshes (the mass-weighted
//! centroid kept, the total mean curvature lowered).

use std::collections::HashMap;

use cavity::normalize::Normalization;
use cavity::topology::mean_edge_length;
use cavity::{MeshError, TriMesh};
use cavity_mcf::{McfError, McfSettings, smooth};
use cavity_tests::{any_mesh, asset_mesh, cases, diagonal, grid, test_backend};
use glam::DVec3;
use nalgebra::DMatrix;
use nalgebra_sparse::factorization::CscCholesky;
use nalgebra_sparse::{CooMatrix, CscMatrix};
use proptest::prelude::*;

/// The serial operators of a mesh at positions `x`: per vertex the mixed
/// Voronoi area, whether it is fixed, and the cotan weight of every edge
/// (`(min, max)` vertex pair) summed over its faces.
struct Operators {
    mass: Vec<f64>,
    fixed: Vec<bool>,
    weights: HashMap<(u32, u32), f64>,
}

impl Operators {
    fn new(faces: &[[u32; 3]], x: &[DVec3]) -> Operators {
        let n = x.len();
        let mut mass = vec![0.0; n];
        let mut faces_of_edge: HashMap<(u32, u32), u32> = HashMap::new();
        let mut weights = HashMap::new();
        let mut has_face = vec![false; n];
        let key = |a: u32, b: u32| (a.min(b), a.max(b));
        for f in faces {
            for i in 0..3 {
                *faces_of_edge.entry(key(f[i], f[(i + 1) % 3])).or_default() += 1;
                has_face[f[i] as usize] = true;
            }
            let [p, q, r] = f.map(|v| x[v as usize]);
            let twice_area = (q - p).cross(r - p).length();
            if twice_area == 0.0 {
                continue;
            }
            // The cotangent at each corner, and the obtuse corner if any.
            let corners = [(p, q, r), (q, r, p), (r, p, q)];
            let cot = corners.map(|(a, b, c)| (b - a).dot(c - a) / twice_area);
            for i in 0..3 {
                let (v, a, b) = (f[i], f[(i + 1) % 3], f[(i + 2) % 3]);
                // Edge va is opposite corner b, i + 2.
                *weights.entry(key(v, a)).or_default() += 0.5 * cot[(i + 2) % 3];
                let (pv, pa, pb) = (x[v as usize], x[a as usize], x[b as usize]);
                let area = if cot[i] < 0.0 {
                    0.25 * twice_area
                } else if cot[(i + 1) % 3] < 0.0 || cot[(i + 2) % 3] < 0.0 {
                    0.125 * twice_area
                } else {
                    0.125
                        * ((pv - pa).length_squared() * cot[(i + 2) % 3]
                            + (pv - pb).length_squared() * cot[(i + 1) % 3])
                };
                mass[v as usize] += area;
            }
        }
        let mut fixed: Vec<bool> = (0..n).map(|v| !has_face[v] || mass[v] <= 0.0).collect();
        for (&(a, b), &count) in &faces_of_edge {
            if count != 2 {
                fixed[a as usize] = true;
                fixed[b as usize] = true;
            }
        }
        Operators {
            mass,
            fixed,
            weights,
        }
    }
}

/// `steps` steps of the flow of time step `dt` from positions `x`, each
/// solved exactly (sparse Cholesky).
fn serial_flow(faces: &[[u32; 3]], mut x: Vec<DVec3>, dt: f64, steps: u32) -> Vec<DVec3> {
    let n = x.len();
    for _ in 0..steps {
        let ops = Operators::new(faces, &x);
        let mut a = CooMatrix::new(n, n);
        let mut diagonal: Vec<f64> = ops.mass.clone();
        let mut b: Vec<DVec3> = (0..n).map(|v| ops.mass[v] * x[v]).collect();
        for (&(u, v), &w) in &ops.weights {
            let (u, v) = (u as usize, v as usize);
            for (i, j) in [(u, v), (v, u)] {
                if ops.fixed[i] {
                    continue;
                }
                diagonal[i] += dt * w;
                if ops.fixed[j] {
                    b[i] += dt * w * x[j];
                } else {
                    a.push(i, j, -dt * w);
                }
            }
        }
        for v in 0..n {
            if ops.fixed[v] {
                a.push(v, v, 1.0);
                b[v] = x[v];
            } else {
                a.push(v, v, diagonal[v]);
            }
        }
        let a = CscMatrix::from(&a);
        let cholesky = CscCholesky::factor(&a).expect("M + dt K is positive definite");
        let rhs = DMatrix::from_fn(n, 3, |v, k| b[v][k]);
        let solution = cholesky.solve(&rhs);
        x = (0..n)
            .map(|v| DVec3::new(solution[(v, 0)], solution[(v, 1)], solution[(v, 2)]))
            .collect();
    }
    x
}

/// What [`smooth`] computes, serially: in the unit box, the same time
/// step, back in model units.
fn serial_smooth(mesh: &TriMesh, settings: &McfSettings) -> Vec<DVec3> {
    let normalization = Normalization::of(mesh);
    let normalized = normalization.apply(mesh);
    let h = mean_edge_length(&normalized);
    let dt = f64::from((f64::from(settings.dt) * h * h) as f32);
    let x = normalized
        .positions
        .iter()
        .map(|p| DVec3::from(p.map(f64::from)))
        .collect();
    serial_flow(&normalized.faces, x, dt, settings.steps)
        .into_iter()
        .map(|p| p * normalization.scale + normalization.centre)
        .collect()
}

/// `mesh` with every vertex lifted by a deterministic bump (a quarter of
/// the grid spacing at most), so that the flow has something to smooth.
fn bumpy(mut mesh: TriMesh) -> TriMesh {
    for (i, p) in mesh.positions.iter_mut().enumerate() {
        let s = (i as f32 * 12.9898).sin() * 43758.547;
        p[2] += 0.25 * (s - s.floor() - 0.5);
    }
    mesh
}

/// The largest distance between `got` and `want` over the bounding box's
/// diagonal.
fn relative_error(got: &TriMesh, want: &[DVec3]) -> f64 {
    got.positions
        .iter()
        .zip(want)
        .map(|(p, q)| (DVec3::from(p.map(f64::from)) - *q).length())
        .fold(0.0, f64::max)
        / diagonal(got)
}

fn tight(steps: u32) -> McfSettings {
    McfSettings {
        steps,
        tolerance: 1e-6,
        patch_size: 64,
        ..McfSettings::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(24)))]

    /// Any generated mesh (holes, non-manifold edges, isolated vertices,
    /// fans, several components, shuffled), bumped: two steps of the flow
    /// match two exact sparse solves within 1e-4 of the bounding box, and
    /// the fixed vertices do not move.
    #[test]
    fn matches_a_sparse_direct_solve(mesh in any_mesh().prop_map(bumpy)) {
        let settings = tight(2);
        let (out, report) = smooth(&mesh, &settings, &test_backend()).expect("smooth");
        let want = serial_smooth(&mesh, &settings);
        let error = relative_error(&out, &want);
        prop_assert!(error < 1e-4, "{error:e} of the box; {report:?}");
        let normalized = Normalization::of(&mesh).apply(&mesh);
        let x: Vec<DVec3> = normalized.positions.iter().map(|p| DVec3::from(p.map(f64::from))).collect();
        let ops = Operators::new(&normalized.faces, &x);
        prop_assert_eq!(report.fixed, ops.fixed.iter().filter(|&&f| f).count());
        for (v, &fixed) in ops.fixed.iter().enumerate() {
            if fixed {
                prop_assert_eq!(out.positions[v], mesh.positions[v], "fixed vertex {} moved", v);
            }
        }
    }
}

/// On closed meshes (the bumpy cube, the torus of 96 × 48) one step keeps
/// the mass-weighted centroid (`1ᵀ K = 0`, so `1ᵀ M x' = 1ᵀ M x`), lowers
/// the total mean curvature `Σ |K x|`, fixes no vertex and converges; on
/// a bumped torus grid it also matches the sparse solve (the serial
/// Cholesky factorization has no fill-reducing order: the assets' take
/// minutes).
#[test]
fn closed_meshes_keep_their_centroid_and_lose_curvature() {
    let torus = bumpy(grid(30, 20, &[false, true, true], true, &[]));
    let settings = tight(1);
    let (out, _) = smooth(&torus, &settings, &test_backend()).expect("smooth");
    let error = relative_error(&out, &serial_smooth(&torus, &settings));
    assert!(error < 1e-4, "torus grid: {error:e}");
    for (name, mesh) in [
        ("bumpy-cube.obj", asset_mesh("bumpy-cube.obj")),
        ("torus.obj", asset_mesh("torus.obj")),
        ("bumped torus grid", torus),
    ] {
        let (out, report) = smooth(&mesh, &settings, &test_backend()).expect("smooth");
        assert_eq!(report.fixed, 0, "{name}");
        let step = report.steps[0];
        assert!(step.converged && step.iterations > 0, "{name}: {step:?}");
        let x = |m: &TriMesh| -> Vec<DVec3> {
            m.positions
                .iter()
                .map(|p| DVec3::from(p.map(f64::from)))
                .collect()
        };
        let (before, after) = (x(&mesh), x(&out));
        let ops = Operators::new(&mesh.faces, &before);
        let weighted = |p: &[DVec3]| -> DVec3 {
            p.iter().zip(&ops.mass).map(|(p, m)| *p * *m).sum::<DVec3>()
                / ops.mass.iter().sum::<f64>()
        };
        let drift = (weighted(&before) - weighted(&after)).length() / diagonal(&mesh);
        assert!(drift < 1e-5, "{name}: centroid moved {drift:e} of the box");
        let curvature = |p: &[DVec3]| -> f64 {
            let ops = Operators::new(&mesh.faces, p);
            let mut k = vec![DVec3::ZERO; p.len()];
            for (&(u, v), &w) in &ops.weights {
                let d = w * (p[u as usize] - p[v as usize]);
                k[u as usize] += d;
                k[v as usize] -= d;
            }
            k.iter().map(|k| k.length()).sum()
        };
        let (c0, c1) = (curvature(&before), curvature(&after));
        assert!(c1 < c0, "{name}: total curvature {c0} -> {c1}");
    }
}

/// An open grid: the boundary stays in place bit for bit, the interior
/// moves, a power-of-two scale gives the same result scaled, and one
/// iteration per step is reported as not converged.
#[test]
fn boundaries_stay_and_scale_does_not_matter() {
    let mesh = bumpy(grid(12, 9, &[true, false], false, &[40, 41]));
    let settings = tight(3);
    let backend = test_backend();
    let (out, report) = smooth(&mesh, &settings, &backend).expect("smooth");
    assert_eq!(report.steps.len(), 3);
    assert!(report.fixed > 0);
    assert!(out.positions != mesh.positions, "the interior moved");
    let scaled = TriMesh {
        positions: mesh
            .positions
            .iter()
            .map(|p| p.map(|c| c * 1024.0))
            .collect(),
        faces: mesh.faces.clone(),
    };
    let (big, _) = smooth(&scaled, &settings, &backend).expect("smooth");
    // A power of two scales the unit box's input by nothing.
    for (p, q) in out.positions.iter().zip(&big.positions) {
        assert_eq!(p.map(|c| c * 1024.0), *q);
    }
    let normalized = Normalization::of(&mesh).apply(&mesh);
    let x: Vec<DVec3> = normalized
        .positions
        .iter()
        .map(|p| DVec3::from(p.map(f64::from)))
        .collect();
    let ops = Operators::new(&normalized.faces, &x);
    for (v, &fixed) in ops.fixed.iter().enumerate() {
        if fixed {
            assert_eq!(out.positions[v], mesh.positions[v], "boundary vertex {v}");
        }
    }
    // One iteration at most: reported, not converged.
    let one = McfSettings {
        max_iterations: 1,
        ..settings
    };
    let (_, report) = smooth(&mesh, &one, &backend).expect("smooth");
    for step in &report.steps {
        assert!(
            step.iterations == 1 && !step.converged && step.residual > 0.0,
            "{step:?}"
        );
    }
}

/// Settings out of range are refused by name.
#[test]
fn bad_settings_are_refused() {
    let mesh = grid(2, 2, &[false], false, &[]);
    let backend = test_backend();
    for (settings, what) in [
        (
            McfSettings {
                steps: 0,
                ..McfSettings::default()
            },
            "steps",
        ),
        (
            McfSettings {
                dt: -1.0,
                ..McfSettings::default()
            },
            "time step",
        ),
        (
            McfSettings {
                dt: f32::NAN,
                ..McfSettings::default()
            },
            "time step",
        ),
        (
            McfSettings {
                tolerance: 1.0,
                ..McfSettings::default()
            },
            "tolerance",
        ),
        (
            McfSettings {
                max_iterations: 0,
                ..McfSettings::default()
            },
            "iterations",
        ),
    ] {
        match smooth(&mesh, &settings, &backend) {
            Err(e @ McfError::Settings(_)) => {
                let message = e.to_string();
                assert!(message.contains(what), "{message}");
            }
            other => panic!("{what}: {other:?}"),
        }
    }
    let mut broken = mesh.clone();
    broken.positions[1] = [f32::INFINITY, 0.0, 0.0];
    match smooth(&broken, &McfSettings::default(), &backend) {
        Err(McfError::Mesh(MeshError::NonFinite { vertex: 1, .. })) => {}
        other => panic!("a non-finite position: {other:?}"),
    }
    broken = mesh.clone();
    broken.faces[0] = [5, 5, 6];
    match smooth(&broken, &McfSettings::default(), &backend) {
        Err(McfError::Mesh(MeshError::RepeatedVertex { face: 0, .. })) => {}
        other => panic!("a face repeating a vertex: {other:?}"),
    }
}

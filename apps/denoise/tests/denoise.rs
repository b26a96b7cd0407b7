//! Bilateral mesh denoising (issue 26 item 4; Fleishman et al. 2003 with
//! RXMesh's neighbourhoods, section 8.3) on the test backend: the result
//! is the plain serial filter's (`cavity_denoise::serial`, `f64` over the
//! reference mesh) on random noisy meshes (boundaries, holes,
//! non-manifold edges, fans, several components, isolated vertices) and on
//! the bundled dragon; a noisy sphere comes closer to the sphere; the
//! bunny scan with known noise comes back towards the scan; the mesh's
//! scale does not matter; bad settings and meshes are refused by name.

use cavity::TriMesh;
use cavity::settings::NamesSettings;
use cavity_denoise::{DenoiseError, DenoiseSettings, denoise, serial, setting};
use cavity_tests::{
    any_mesh, bundled_mesh, bunny_scan, cases, diagonal, test_backend, unit_sphere,
};
use proptest::prelude::*;

/// `mesh` with every coordinate moved by up to `amount` (a deterministic
/// hash of the vertex and the axis), so that no two distances tie.
fn jitter(mesh: &TriMesh, amount: f32, seed: u64) -> TriMesh {
    let mut out = mesh.clone();
    for (v, p) in out.positions.iter_mut().enumerate() {
        for (k, c) in p.iter_mut().enumerate() {
            let mut h = (v as u64 * 3 + k as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ seed;
            h ^= h >> 29;
            h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
            h ^= h >> 32;
            *c += amount * ((h % 20_001) as f32 / 10_000.0 - 1.0);
        }
    }
    out
}

/// The vertices of `a` farther than `tolerance` from `b`'s.
fn differing(a: &TriMesh, b: &TriMesh, tolerance: f64) -> Vec<usize> {
    a.positions
        .iter()
        .zip(&b.positions)
        .enumerate()
        .filter(|(_, (p, q))| {
            let d2: f64 = (0..3)
                .map(|k| (f64::from(p[k]) - f64::from(q[k])).powi(2))
                .sum();
            d2.sqrt() > tolerance || d2.is_nan()
        })
        .map(|(v, _)| v)
        .collect()
}

fn settings(iterations: u32, patch_size: u32) -> DenoiseSettings {
    DenoiseSettings {
        iterations,
        patch_size,
        ..DenoiseSettings::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(24)))]

    /// Random meshes, jittered, at patch sizes 4 to 64 (neighbourhoods
    /// across many patches): every vertex within 1e-4 of the box's
    /// diagonal of the serial filter's after 1 and 3 iterations.
    #[test]
    fn matches_the_serial_filter(
        input in any_mesh(),
        seed in any::<u64>(),
        patch_size in prop::sample::select(vec![4u32, 16, 64]),
        iterations in prop::sample::select(vec![1u32, 3]),
    ) {
        let mesh = jitter(&input, 0.05, seed);
        let (ours, report) = denoise(&mesh, &settings(iterations, patch_size), &test_backend())
            .expect("denoise");
        let want = serial::denoise(&mesh, iterations, u32::MAX).expect("serial");
        let off = differing(&ours, &want, 1e-4 * diagonal(&mesh));
        prop_assert!(off.is_empty(), "vertices {off:?} differ; {report:?}");
        prop_assert_eq!(&ours.faces, &mesh.faces);
    }
}

/// The bundled dragon with noise along the axes: 2 iterations match the
/// serial filter at all but a handful of vertices (a distance within
/// rounding of a ball's radius may fall on either side).
#[test]
fn the_dragon_matches_the_serial_filter() {
    let input = bundled_mesh();
    let d = diagonal(&input);
    let mesh = jitter(&input, (2e-3 * d) as f32, 7);
    let (ours, report) = denoise(&mesh, &settings(2, 512), &test_backend()).expect("denoise");
    let want = serial::denoise(&mesh, 2, u32::MAX).expect("serial");
    let off = differing(&ours, &want, 1e-4 * d);
    assert!(
        off.len() * 1000 <= mesh.positions.len(),
        "{} of {} vertices differ; {report:?}",
        off.len(),
        mesh.positions.len()
    );
    assert!(report.largest_neighbourhood >= 6, "{report:?}");
}

/// A unit sphere (5120 faces) with noise: five iterations take at least
/// 40 % off the spread of the distances to the centre relative to their
/// mean (the
/// filter shrinks a sphere a little, as Fleishman et al. note, but makes
/// it rounder).
#[test]
fn a_noisy_sphere_becomes_rounder() {
    let sphere = unit_sphere(4);
    let noisy = jitter(&sphere, 0.005, 3);
    let spread = |m: &TriMesh| {
        let r: Vec<f64> = m
            .positions
            .iter()
            .map(|p| p.iter().map(|&c| f64::from(c).powi(2)).sum::<f64>().sqrt())
            .collect();
        let mean = r.iter().sum::<f64>() / r.len() as f64;
        let var = r.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / r.len() as f64;
        var.sqrt() / mean
    };
    let (ours, report) = denoise(&noisy, &settings(5, 64), &test_backend()).expect("denoise");
    assert!(
        spread(&ours) < 0.6 * spread(&noisy),
        "{} -> {}; {report:?}",
        spread(&noisy),
        spread(&ours)
    );
}

/// Scaling and moving the mesh scales and moves the result; bad settings
/// and meshes are errors naming what to change.
#[test]
fn scale_does_not_matter_and_errors_name_the_setting() {
    let mesh = jitter(&unit_sphere(2), 0.03, 11);
    let backend = test_backend();
    let (base, _) = denoise(&mesh, &settings(2, 64), &backend).unwrap();
    let mut far = mesh.clone();
    for p in &mut far.positions {
        *p = p.map(|c| c * 1000.0 + 5000.0);
    }
    let (moved, _) = denoise(&far, &settings(2, 64), &backend).unwrap();
    let back = TriMesh {
        positions: moved
            .positions
            .iter()
            .map(|p| p.map(|c| (c - 5000.0) / 1000.0))
            .collect(),
        faces: moved.faces.clone(),
    };
    let off = differing(&back, &base, 1e-4);
    assert!(off.is_empty(), "{off:?}");

    let zero = DenoiseSettings {
        iterations: 0,
        ..DenoiseSettings::default()
    };
    let err = denoise(&mesh, &zero, &backend).unwrap_err();
    assert_eq!(err.settings(), [setting::ITERATIONS], "{err}");
    let no_hops = DenoiseSettings {
        max_hops: 0,
        ..DenoiseSettings::default()
    };
    let err = denoise(&mesh, &no_hops, &backend).unwrap_err();
    assert_eq!(err.settings(), [setting::MAX_HOPS], "{err}");
    let mut bad = mesh.clone();
    bad.positions[3][1] = f32::NAN;
    let err = denoise(&bad, &DenoiseSettings::default(), &backend).unwrap_err();
    assert!(matches!(err, DenoiseError::Mesh(_)), "{err}");
}

/// One hop only: each neighbourhood is the one-ring inside the ball, as
/// the serial filter with one hop.
#[test]
fn one_hop_is_the_one_ring_inside_the_ball() {
    let mesh = jitter(&unit_sphere(2), 0.03, 5);
    let one = DenoiseSettings {
        iterations: 1,
        max_hops: 1,
        patch_size: 16,
    };
    let (ours, report) = denoise(&mesh, &one, &test_backend()).unwrap();
    let want = serial::denoise(&mesh, 1, 1).unwrap();
    let off = differing(&ours, &want, 1e-5);
    assert!(off.is_empty(), "{off:?}");
    assert!(report.largest_neighbourhood <= 6, "{report:?}");
}

type V3 = [f64; 3];

fn v3(p: [f32; 3]) -> V3 {
    p.map(f64::from)
}

fn minus(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn dot3(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// Area-weighted unit vertex normals of `mesh` (0 for a vertex without
/// area).
fn vertex_normals(mesh: &TriMesh) -> Vec<V3> {
    let mut n = vec![[0.0; 3]; mesh.num_vertices()];
    for f in &mesh.faces {
        let [a, b, c] = f.map(|v| v3(mesh.positions[v as usize]));
        let (u, w) = (minus(b, a), minus(c, a));
        let cross = [
            u[1] * w[2] - u[2] * w[1],
            u[2] * w[0] - u[0] * w[2],
            u[0] * w[1] - u[1] * w[0],
        ];
        for &v in f {
            for k in 0..3 {
                n[v as usize][k] += cross[k];
            }
        }
    }
    for x in &mut n {
        let l = dot3(*x, *x).sqrt();
        if l > 0.0 {
            *x = x.map(|c| c / l);
        }
    }
    n
}

/// The bunny scan with known noise: every vertex moved along its normal by
/// up to a third of the mean edge length (a deterministic hash). Five
/// iterations of the filter give a valid mesh (the faces kept, every
/// position finite) and bring the vertices back towards the scan: the
/// mean distance along the scan's normals falls to less than 60 % of the
/// noise's (35 % when written; the filter moves vertices along normals;
/// its result on the clean scan is the reference, as the filter also
/// moves clean vertices a little); and the faces whose normal turned more
/// than 30° from the scan's fall to less than a tenth (15 695 noisy, 58
/// denoised when written).
#[test]
fn the_noisy_bunny_scan_comes_back_towards_the_scan() {
    let scan = bunny_scan();
    let normals = vertex_normals(&scan);
    let h = {
        let (mut sum, mut count) = (0.0, 0.0);
        for f in &scan.faces {
            for i in 0..3 {
                let d = minus(
                    v3(scan.positions[f[i] as usize]),
                    v3(scan.positions[f[(i + 1) % 3] as usize]),
                );
                sum += dot3(d, d).sqrt();
                count += 1.0;
            }
        }
        sum / count
    };
    let mut noisy = scan.clone();
    for (v, p) in noisy.positions.iter_mut().enumerate() {
        let mut x = (v as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        x ^= x >> 31;
        x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x ^= x >> 29;
        let t = h / 3.0 * ((x % 20_001) as f64 / 10_000.0 - 1.0);
        for k in 0..3 {
            p[k] = (f64::from(p[k]) + t * normals[v][k]) as f32;
        }
    }
    let s = DenoiseSettings::default();
    let backend = test_backend();
    let (out, report) = denoise(&noisy, &s, &backend).expect("denoise the noisy scan");
    let (reference, _) = denoise(&scan, &s, &backend).expect("denoise the scan");
    assert_eq!(out.faces, scan.faces);
    assert!(
        out.positions.iter().flatten().all(|c| c.is_finite()),
        "a non-finite position; {report:?}"
    );
    let off = |m: &TriMesh, from: &TriMesh| -> f64 {
        m.positions
            .iter()
            .zip(&from.positions)
            .zip(&normals)
            .map(|((p, q), n)| dot3(minus(v3(*p), v3(*q)), *n).abs())
            .sum::<f64>()
            / m.num_vertices() as f64
    };
    let (before, after) = (off(&noisy, &scan), off(&out, &reference));
    assert!(
        after < 0.6 * before,
        "mean distance along the normals {before:e} -> {after:e} ({:.2} of the mean edge); {report:?}",
        after / h
    );
    // Faces whose normal turned more than 30° from the scan's.
    let turned = |m: &TriMesh| {
        m.faces
            .iter()
            .filter(|f| {
                let normal = |mesh: &TriMesh| {
                    let [a, b, c] = f.map(|v| v3(mesh.positions[v as usize]));
                    let (u, w) = (minus(b, a), minus(c, a));
                    [
                        u[1] * w[2] - u[2] * w[1],
                        u[2] * w[0] - u[0] * w[2],
                        u[0] * w[1] - u[1] * w[0],
                    ]
                };
                let (x, y) = (normal(m), normal(&scan));
                dot3(x, y) < 30f64.to_radians().cos() * (dot3(x, x) * dot3(y, y)).sqrt()
            })
            .count()
    };
    let (t0, t1) = (turned(&noisy), turned(&out));
    assert!(
        t1 < t0 / 10,
        "faces turned over 30°: {t0} noisy, {t1} denoised"
    );
}

//! Surface tracking (`cavity_track`) on the backend `CAVITY_TEST_DEVICE`
//! names: the sheet stays a valid, consistently oriented disk with bounded
//! edge lengths and no near-degenerate face after every one of 100 frames;
//! the velocity field is the curl of its potential (so divergence-free)
//! and the eigen-decomposition behind null-space smoothing is exact;
//! nonsense settings are errors. Its operations one at a time,
//! `validate()` after every round (four racing workers on the CPU backend,
//! `TEST_WORKERS`): El Topo's flips to the shorter diagonal
//! (`cavity-track-kernels`) until none is shorter within the volume limit,
//! and null-space smoothing (remeshing's smoothing with a rank ratio, as
//! tracking runs it), which keeps a crease.

use cavity::TriMesh;
use cavity::dynamic::{CapacityFactors, DynamicMesh};
use cavity::rounds::RunReport;
use cavity::settings::NamesSettings;
use cavity_reference::ReferenceMesh;
use cavity_remesh::{Layout, Quality};
use cavity_remesh_kernels::SLIVER_SIN;
use cavity_remesh_kernels::eigen::symmetric_eigen;
use cavity_remesh_kernels::smooth::Smoothing;
use cavity_tests::{
    ROOMY, acceptable_flip, cases, euler, grid, length_spread, oriented, run, smallest_area,
    sorted_faces, test_backend, topology, with_rounds,
};
use cavity_track::{TrackError, TrackHooks, TrackSettings, sheet, track};
use cavity_track_kernels::{ShorterDiagonal, advected, noise, potential, velocity};
use proptest::prelude::*;

// The operations' tests run tracking's flip and remeshing's smoothing.
cavity_tests::test_kernels!(cavity_track::add_kernels, cavity_remesh::add_kernels);

#[test]
fn nonsense_settings_are_errors() {
    let ok = TrackSettings::default();
    assert!(ok.check().is_ok());
    let bad = [
        TrackSettings { grid: 1, ..ok },
        TrackSettings {
            grid: 1_000_000,
            ..ok
        },
        TrackSettings { frames: 0, ..ok },
        TrackSettings { dt: 0.0, ..ok },
        TrackSettings { dt: -0.1, ..ok },
        TrackSettings { dt: f32::NAN, ..ok },
        TrackSettings { dt: 5.0, ..ok },
    ];
    let layout = Layout {
        patch_size: 64,
        factors: CapacityFactors::default(),
    };
    for s in bad {
        let e = s.check().expect_err("nonsense accepted");
        let named = e.settings();
        assert_eq!(named.len(), 1, "names the setting: {e}");
        assert!(
            !e.to_string().contains("--"),
            "names no command-line flag: {e}"
        );
        let run = track(&s, &test_backend(), layout, &mut TrackHooks::default());
        assert!(run.is_err(), "{s:?} ran");
    }
}

#[test]
fn the_sheet_is_an_oriented_disk() {
    for n in [2, 3, 10] {
        let m = sheet(n);
        assert_eq!(m.num_vertices() as u32, n * n);
        assert_eq!(m.num_faces() as u32, 2 * (n - 1) * (n - 1));
        let s = ReferenceMesh::new(&m).expect("valid").stats();
        assert_eq!(topology(&s), [1, 1, 1, 0]);
        assert!(oriented(&m));
        let corners = [0, n - 1, n * (n - 1), n * n - 1].map(|v| m.positions[v as usize]);
        assert_eq!(corners[0], [-3.0, 0.0, -3.0]);
        assert_eq!(corners[3], [3.0, 0.0, 3.0]);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    #[test]
    fn the_noise_gradient_is_exact(q in prop::array::uniform3(-20.0f32..20.0)) {
        let (_, g) = noise(q);
        let h = 1e-2;
        for k in 0..3 {
            let (mut a, mut b) = (q, q);
            a[k] += h;
            b[k] -= h;
            let fd = (noise(a).0 - noise(b).0) / (2.0 * h);
            prop_assert!((fd - g[k]).abs() < 2e-2, "axis {k}: {} vs {fd}", g[k]);
        }
    }

    #[test]
    fn the_velocity_is_the_curl_of_the_potential(
        p in prop::array::uniform3(-4.5f32..4.5),
    ) {
        let field = TrackSettings::default().field();
        let v = velocity(p, &field);
        prop_assert_eq!(v[2], 0.0);
        let centre = glam::Vec3::from(field.centre);
        let distance = glam::Vec3::from(p).distance(centre);
        if distance >= field.radius {
            prop_assert_eq!(v, [0.0; 3]);
        }
        // Continuous at the rim: the speed falls to zero there.
        let speed = glam::Vec3::from(v).length();
        prop_assert!(speed <= 10.0 * (field.radius - distance).max(0.0), "{speed} at {distance}");
        let h = 1e-2;
        let d = |k: usize| {
            let (mut a, mut b) = (p, p);
            a[k] += h;
            b[k] -= h;
            (potential(a, &field) - potential(b, &field)) / (2.0 * h)
        };
        let curl = [d(1), -d(0)];
        for k in 0..2 {
            prop_assert!((curl[k] - v[k]).abs() < 1e-2, "{v:?} vs curl {curl:?}");
        }
        // A small step moves no further than the speed allows.
        let q = advected(p, &field);
        let moved = glam::Vec3::from(q).distance(glam::Vec3::from(p));
        prop_assert!(moved <= field.dt * 2.0, "{moved}");
    }

    #[test]
    fn symmetric_eigen_decomposes(x in prop::array::uniform6(-10.0f32..10.0)) {
        let a = [[x[0], x[1], x[2]], [x[1], x[3], x[4]], [x[2], x[4], x[5]]];
        let (values, vectors) = symmetric_eigen(a);
        let scale = values.iter().fold(1e-3f32, |m, v| m.max(v.abs()));
        for (k, (l, u)) in values.iter().zip(vectors).enumerate() {
            let u = glam::Vec3::from(u);
            let au = glam::Mat3::from_cols_array_2d(&a).transpose() * u;
            prop_assert!((au - *l * u).length() <= 1e-4 * scale, "{a:?}: {l} {u}");
            for (j, w) in vectors.iter().enumerate() {
                let expected = if j == k { 1.0 } else { 0.0 };
                prop_assert!((u.dot(glam::Vec3::from(*w)) - expected).abs() < 1e-4);
            }
        }
    }
}

/// The 100 frames of El Topo's scene on a `grid`-sided sheet at patch size
/// `patch_size`, checking after every frame: `validate`, the topology of a
/// disk, orientation, no face smaller than 10⁻³ L₀², every edge within
/// (0.05 L₀, 2 L₀) (splits bound them by 1.5 L₀ before the smoothing
/// moves the vertices; boundary edges may shrink, as they are never
/// collapsed).
fn track_checked(grid: u32, patch_size: u32) -> (TriMesh, cavity_track::TrackReport) {
    let settings = TrackSettings {
        grid,
        ..TrackSettings::default()
    };
    let length = cavity_remesh::mean_edge_length(&sheet(grid));
    let mut after = |frame: u32, m: &DynamicMesh| {
        let at = format!("after frame {frame}");
        m.validate(true).map_err(|e| format!("invalid {at}: {e}"))?;
        let out = m.to_mesh();
        let stats = ReferenceMesh::new(&out)?.stats();
        assert_eq!(topology(&stats), [1, 1, 1, 0], "topology {at}");
        assert!(oriented(&out), "orientation {at}");
        let a = smallest_area(&out);
        assert!(a >= 1e-3 * length * length, "a face of area {a} {at}");
        let q = Quality::of(&out, length);
        assert!(q.max_edge < 2.0 && q.min_edge > 0.05, "{at}: {q:?}");
        Ok(())
    };
    let mut hooks = TrackHooks {
        progress: None,
        after_frame: Some(&mut after),
        wants: None,
    };
    let layout = Layout {
        patch_size,
        factors: CapacityFactors::default(),
    };
    match track(&settings, &test_backend(), layout, &mut hooks) {
        Ok(done) => done,
        Err(TrackError::Hook { frame, source }) => panic!("frame {frame}: {source}"),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn the_sheet_stays_valid_for_100_frames() {
    for (grid, patch_size) in [(24, 32), (40, 256)] {
        let (out, report) = track_checked(grid, patch_size);
        eprintln!("{}", report.table());
        // Every operation ran, the sheet grew and left its plane.
        for r in &report.steps.runs {
            assert!(r.flips > 0, "{}", report.table());
        }
        assert!(report.output.faces > report.input.faces);
        let y = out.positions.iter().map(|p| p[1].abs()).fold(0.0, f32::max);
        assert!(y > 0.5, "the sheet stayed flat: {y}");
        assert!(report.output.min_angle > 5.0, "{}", report.table());
    }
}

#[test]
fn shorter_diagonal_flips_until_none_is_shorter() {
    // A jittered, bumpy grid: many edges have a shorter other diagonal;
    // the volume limit keeps some of them.
    let mut input = grid(12, 12, &[false, true], false, &[]);
    for (i, p) in input.positions.iter_mut().enumerate() {
        let h = (i as u32).wrapping_mul(2_654_435_761);
        if (1.0..12.0).contains(&p[0]) && (1.0..12.0).contains(&p[1]) {
            p[0] += ((h & 0xff) as f32 / 255.0 - 0.5) * 0.6;
            p[1] += ((h >> 8 & 0xff) as f32 / 255.0 - 0.5) * 0.6;
        }
        p[2] = 0.4 * (0.7 * p[0]).sin() * (0.5 * p[1]).cos();
    }
    let max_volume_change = 0.05;
    for patch_size in [16, 64] {
        let app = ShorterDiagonal {
            max_volume_change,
            feature_cos: -2.0,
        };
        let (report, out) = run(&input, patch_size, app, true);
        assert!(report.flips > 0, "{report:?}");
        assert_eq!(out.faces.len(), input.faces.len());
        assert_eq!(euler(&out), euler(&input));
        assert_eq!(out.positions, input.positions);
        assert!(cavity_tests::oriented(&out));
        // With margins, so that rounding does not decide.
        let left = acceptable_flip(&out, SLIVER_SIN, |_, [a, b, c, d]| {
            let p = |v: u32| glam::Vec3::from(out.positions[v as usize]);
            let volume = (p(b) - p(a)).dot((p(c) - p(a)).cross(p(d) - p(a))).abs();
            p(c).distance(p(d)) < 0.999 * p(a).distance(p(b)) && volume < 0.999 * max_volume_change
        });
        assert_eq!(left, None);
    }
    // Without the volume limit more edges flip.
    let free = ShorterDiagonal {
        max_volume_change: f32::INFINITY,
        feature_cos: -2.0,
    };
    let limited = ShorterDiagonal {
        max_volume_change,
        feature_cos: -2.0,
    };
    assert!(run(&input, 64, free, true).0.flips > run(&input, 64, limited, true).0.flips);
}

#[test]
fn null_space_smoothing_keeps_a_crease() {
    // A roof: two planes meeting at a right angle along x = 6, interior
    // vertices pushed along their plane. Null-space smoothing keeps every
    // vertex on the roof and the crease vertices on the crease; tangential
    // smoothing rounds the crease off.
    let roof = |x: f32| (x - 6.0).abs();
    let mut input = grid(12, 12, &[false, true], false, &[]);
    for (i, p) in input.positions.iter_mut().enumerate() {
        if (1.0..12.0).contains(&p[0]) && (1.0..12.0).contains(&p[1]) {
            let h = (i as u32).wrapping_mul(2_654_435_761);
            if p[0] != 6.0 {
                p[0] += ((h & 0xff) as f32 / 255.0 - 0.5) * 0.6;
            }
            p[1] += ((h >> 8 & 0xff) as f32 / 255.0 - 0.5) * 0.6;
        }
        p[2] = roof(p[0]);
    }
    let smoothing = |rank_ratio: f32, patch_size: u32| {
        let params = Smoothing {
            boundary_cos: 2.0,
            step: 1.0,
            feature_cos: -2.0,
            rank_ratio,
        };
        with_rounds(&input, patch_size, ROOMY, true, |r| {
            cavity_remesh::smooth::smooth(r, &params, 10)?;
            Ok(RunReport::default())
        })
        .expect("smoothing")
        .1
    };
    for patch_size in [8, 64] {
        let out = smoothing(0.03, patch_size);
        assert_eq!(sorted_faces(&out), sorted_faces(&input));
        for (p, q) in input.positions.iter().zip(&out.positions) {
            assert!(
                (q[2] - roof(q[0])).abs() < 1e-4,
                "{p:?} left the roof: {q:?}"
            );
            if p[0] == 6.0 {
                assert!((q[0] - 6.0).abs() < 1e-4, "{p:?} left the crease: {q:?}");
            }
        }
        assert!(length_spread(&out) < 0.8 * length_spread(&input));
        let rounded = smoothing(0.0, patch_size);
        let off = |m: &TriMesh| {
            m.positions
                .iter()
                .map(|q| (q[2] - roof(q[0])).abs())
                .fold(0.0, f32::max)
        };
        assert!(off(&rounded) > 1e-2, "{}", off(&rounded));
    }
}

//! Surface tracking (`cavity_track`) on the backend `CAVITY_TEST_DEVICE`
//! names: the sheet stays a valid, consistently oriented disk with bounded
//! edge lengths and no near-degenerate face after every one of 100 frames;
//! the velocity field is the curl of its potential (so divergence-free)
//! and the eigen-decomposition behind null-space smoothing is exact;
//! nonsense settings are errors.

use cavity::TriMesh;
use cavity::dynamic::{CapacityFactors, DynamicMesh};
use cavity::settings::NamesSettings;
use cavity_reference::ReferenceMesh;
use cavity_remesh::{Layout, Quality};
use cavity_remesh_kernels::eigen::symmetric_eigen;
use cavity_tests::{cases, oriented, smallest_area, test_backend, topology};
use cavity_track::{TrackError, TrackHooks, TrackSettings, sheet, track};
use cavity_track_kernels::{advected, noise, potential, velocity};
use proptest::prelude::*;

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

//! Isotropic remeshing (`cavity_remesh`) on the backend `CAVITY_TEST_DEVICE`
//! names: after every phase of every iteration the dynamic mesh validates
//! and the mesh keeps its topology (Euler characteristic, components,
//! boundary loops, hence genus), manifoldness and orientation, and no face
//! is near-degenerate; after three iterations on closed inputs at least 95 %
//! of the edges lie in [4/5 L, 4/3 L] (for the inputs that can get there:
//! see `closed_proptest_meshes_reach_the_band`). Proptest meshes, the
//! bundled real mesh, the RXMesh torus and a cube with sharp edges
//! (features kept); nonsense settings are errors.

use cavity::TriMesh;
use cavity::backend::Backend;
use cavity::dynamic::{CapacityFactors, DynamicMesh};
use cavity::normalize::Normalization;
use cavity::rounds::RunError;
use cavity::settings::NamesSettings;
use cavity_reference::ReferenceMesh;
use cavity_remesh::{
    Hooks, Layout, Phase, Quality, RemeshError, RemeshReport, RemeshSettings, TargetLength,
    mean_edge_length, prepare, remesh,
};
use cavity_tests::{
    Skips, any_mesh, asset_mesh, bundled_mesh, cases, grid, oriented, shuffle, smallest_area,
    test_backend, topology,
};
use proptest::prelude::*;

/// The share of `mesh`'s unique edges whose length lies in the target band
/// `[4/5 L, 4/3 L]` of Botsch and Kobbelt's remeshing (`L` = `length`,
/// model units), computed here from the definition (not `Quality::of`).
fn band_share(mesh: &TriMesh, length: f64) -> f64 {
    let mut edges: Vec<(u32, u32)> = mesh
        .faces
        .iter()
        .flat_map(|f| (0..3).map(move |k| (f[k].min(f[(k + 1) % 3]), f[k].max(f[(k + 1) % 3]))))
        .collect();
    edges.sort_unstable();
    edges.dedup();
    let p = |v: u32| mesh.positions[v as usize].map(f64::from);
    let in_band = edges
        .iter()
        .filter(|&&(a, b)| {
            let (pa, pb) = (p(a), p(b));
            let l = (0..3).map(|k| (pa[k] - pb[k]).powi(2)).sum::<f64>().sqrt();
            (0.8 * length..=4.0 / 3.0 * length).contains(&l)
        })
        .count();
    in_band as f64 / edges.len().max(1) as f64
}

/// Remeshes `input` on the test backend at patch size `patch_size`,
/// checking after every phase: `validate`, topology, orientation and (when
/// `min_area` is given, as a multiple of L²) no face smaller than that.
fn remesh_checked(
    input: &TriMesh,
    settings: &RemeshSettings,
    patch_size: u32,
    min_area: Option<f64>,
) -> (TriMesh, RemeshReport) {
    try_remesh_checked(input, settings, patch_size, min_area).expect("remesh")
}

/// [`remesh_checked`], returning the run's error.
fn try_remesh_checked(
    input: &TriMesh,
    settings: &RemeshSettings,
    patch_size: u32,
    min_area: Option<f64>,
) -> Result<(TriMesh, RemeshReport), RemeshError> {
    let before = ReferenceMesh::new(input).expect("valid input").stats();
    let manifold = before.non_manifold_edges + before.non_manifold_vertices == 0;
    let consistent = oriented(input);
    // The hook sees the mesh in the unit box (`cavity::normalize`).
    let length = Normalization::of(input).length(settings.target(mean_edge_length(input)));
    let mut after_phase = |iteration: u32, phase: Phase, m: &DynamicMesh| {
        let at = format!("after the {phase} phase of iteration {iteration}");
        if let Err(e) = m.validate(manifold) {
            panic!("invalid {at}: {e}");
        }
        let out = m.to_mesh();
        let stats = ReferenceMesh::new(&out).expect("valid output").stats();
        assert_eq!(topology(&stats), topology(&before), "topology {at}");
        assert!(!consistent || oriented(&out), "orientation {at}");
        if phase == Phase::Split && manifold {
            // The splits ran to the end: no edge is longer than 4/3 L (on
            // a non-manifold input, a face whose longest edge has three
            // faces keeps its edges, which longest-edge bisection may not
            // split before that one).
            let r = ReferenceMesh::new(&out).expect("valid output");
            let length_of = |e: u32| {
                let [a, b] = r.edge_vertices(e).map(|v| out.positions[v as usize]);
                glam::Vec3::from(a).distance(glam::Vec3::from(b)) as f64
            };
            // With the boundary kept, a face on a boundary edge longer than
            // 4/3 L keeps edges up to 3/4 of it.
            let kept_long = |e: u32| {
                settings.keep_boundary
                    && r.ef(e).iter().any(|&f| {
                        r.fe(f)
                            .iter()
                            .any(|&g| r.ef(g).len() == 1 && length_of(g) > 4.0 / 3.0 * length)
                    })
            };
            let longest = (0..r.num_edges() as u32)
                .filter(|&e| r.ef(e).len() == 2 || !settings.keep_boundary && r.ef(e).len() == 1)
                .filter(|&e| !kept_long(e))
                .map(length_of)
                .fold(0.0, f64::max);
            assert!(
                longest <= 4.0 / 3.0 * length * (1.0 + 1e-5),
                "an edge of {longest} {at}"
            );
        }
        if let Some(k) = min_area {
            let a = smallest_area(&out);
            assert!(a >= k * length * length, "a face of area {a} {at}");
        }
    };
    let mut hooks = Hooks {
        stop: None,
        progress: None,
        after_phase: Some(&mut after_phase),
    };
    let layout = Layout {
        patch_size,
        ..Layout::default()
    };
    remesh(input, settings, &test_backend(), layout, &mut hooks)
}

/// A torus of `n × m` quads with every vertex moved by up to `jitter` (a
/// fraction of the spacing) by a hash of `seed`.
fn jittered_torus(n: u32, m: u32, jitter: f32, seed: u64) -> TriMesh {
    let mut t = grid(n, m, &[false], true, &[]);
    let h = 0.5 * std::f32::consts::TAU * 3.0 / n as f32;
    for (i, p) in t.positions.iter_mut().enumerate() {
        let mut s = (i as u64 + 1)
            .wrapping_mul(seed | 1)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15);
        for c in p.iter_mut() {
            s ^= s >> 29;
            s = s.wrapping_mul(0xbf58_476d_1ce4_e5b9);
            *c += ((s >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * jitter * h;
        }
    }
    t
}

#[test]
fn nonsense_settings_are_errors() {
    let ok = RemeshSettings::default();
    assert!(ok.check().is_ok());
    let bad = [
        RemeshSettings {
            length: TargetLength::Absolute(0.0),
            ..ok
        },
        RemeshSettings {
            length: TargetLength::Relative(-1.0),
            ..ok
        },
        RemeshSettings {
            length: TargetLength::Absolute(f64::NAN),
            ..ok
        },
        RemeshSettings {
            length: TargetLength::Relative(f64::INFINITY),
            ..ok
        },
        RemeshSettings {
            iterations: 0,
            ..ok
        },
        RemeshSettings {
            iterations: 1_000_000,
            ..ok
        },
        RemeshSettings {
            feature_angle: Some(0.0),
            ..ok
        },
        RemeshSettings {
            feature_angle: Some(180.0),
            ..ok
        },
        RemeshSettings {
            feature_angle: Some(f64::NAN),
            ..ok
        },
        RemeshSettings {
            smoothing_steps: 10_000,
            ..ok
        },
    ];
    let layout = Layout {
        patch_size: 64,
        factors: CapacityFactors::default(),
    };
    let mesh = grid(2, 2, &[false], false, &[]);
    for s in bad {
        let e = s.check().expect_err("nonsense accepted");
        let named = e.settings();
        assert_eq!(named.len(), 1, "names the setting: {e}");
        assert!(
            !e.to_string().contains("--"),
            "names no command-line flag: {e}"
        );
        let run = remesh(&mesh, &s, &test_backend(), layout, &mut Hooks::default());
        assert!(run.is_err(), "{s:?} ran");
    }
    let empty = TriMesh::default();
    let run = remesh(&empty, &ok, &test_backend(), layout, &mut Hooks::default());
    assert!(matches!(run, Err(RemeshError::Empty)));
}

#[test]
fn bundled_mesh_reaches_the_band() {
    let input = bundled_mesh();
    let (out, report) = remesh_checked(&input, &RemeshSettings::default(), 256, Some(1e-3));
    let q = Quality::of(&out, report.length);
    // Measured on the backend: the mean edge length and the angles within
    // rounding of the host's, the rest equal.
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0);
    let o = report.output;
    assert!(close(q.mean_edge, o.mean_edge), "{q:?} {o:?}");
    assert!(close(q.min_angle, o.min_angle), "{q:?} {o:?}");
    assert!(close(q.min_angle_away, o.min_angle_away), "{q:?} {o:?}");
    let rest = |q: Quality| Quality {
        mean_edge: 0.0,
        min_angle: 0.0,
        min_angle_away: 0.0,
        ..q
    };
    assert_eq!(rest(q), rest(o));
    eprintln!("{}", report.table());
    let share = band_share(&out, report.length);
    assert!(share >= 0.95, "{share:.3} of the edges in band");
    assert!(q.min_angle > report.input.min_angle);
    assert!(q.max_edge < 1.5 && q.min_edge > 0.3, "{q:?}");
}

/// The RXMesh torus (assets/torus.obj, a regular 96 × 48 grid whose inner
/// and outer ring edges straddle the band) reaches the band in three
/// iterations at patch sizes 64 and 256 (96-97 % on the local CPU backend).
/// It needs the flips of the first two iterations to make edges longer
/// than 4/3 L, which the next split phase halves: with every iteration's
/// flips held to 4/3 L it ended at 93.3-94.8 %.
#[test]
fn rxmesh_torus_reaches_the_band() {
    let input = asset_mesh("torus.obj");
    for patch_size in [64, 256] {
        let settings = RemeshSettings::default();
        let (out, report) = remesh_checked(&input, &settings, patch_size, Some(1e-3));
        assert!(
            band_share(&out, report.length) >= 0.95,
            "{}",
            report.table()
        );
    }
}

/// Jittered tori (tube radius 1, ring radius 3; at least 16 edges around
/// the tube and 24 around the ring, so that L, at most about half the tube
/// radius, resolves the curvature) at target lengths around their mean
/// edge length (0.75 to 1.2 times; refining coarse tori to 0.6 times left
/// about 94.5 % in the band after three iterations). Every vertex is moved
/// by at least a fifth of the spacing: nearly regular grids can end in
/// stretched lattices (every vertex of valence 6, one edge direction
/// shorter than 4/5 L, the others just under 4/3 L) where every collapse
/// makes an edge longer than 4/3 L, no flip improves a valence and
/// smoothing maps the lattice onto itself. With jitter under 0.2 the worst
/// of 200 random cases ended at 95.0 % (local CPU backend, 2026-11-24).
///
/// Collapsing to the midpoint, as Botsch and Kobbelt do, this test missed
/// 95 % in about 0.4 % of cases (4 to 7 of 30 runs of 60 cases, 93.0-94.9 %
/// in the band), so about 2-3 % of CI runs failed: most short edges left
/// had a collapse making an edge of 1.3-1.6 L at the midpoint. The
/// collapse now moves the merged vertex along the edge towards the side
/// whose neighbours are farther (`remesh::balanced_point`): 0 of 30 runs
/// of 60 cases missed, and the worst of 600 cases was 98.1 % (a regular
/// 96 × 48 torus grid at 1.2 times its mean edge: 96-98 % instead of
/// 81 %; gpytoolbox's remesh_botsch 83 %, CGAL's isotropic_remeshing 61 %).
#[test]
fn closed_proptest_meshes_reach_the_band() {
    let config = ProptestConfig::with_cases(cases(6));
    proptest!(config, |(
        n in 24u32..48,
        m in 16u32..28,
        jitter in 0.2f32..0.6,
        seed in any::<u64>(),
        relative in 0.75f64..1.2,
        patch_size in prop::sample::select(vec![32u32, 64, 256]),
    )| {
        let input = shuffle(&jittered_torus(n, m, jitter, seed), seed);
        let settings = RemeshSettings {
            length: TargetLength::Relative(relative),
            ..RemeshSettings::default()
        };
        let (out, report) = remesh_checked(&input, &settings, patch_size, Some(1e-3));
        prop_assert!(band_share(&out, report.length) >= 0.95, "{}", report.table());
    });
}

/// The cases of `any_proptest_mesh_keeps_its_topology` that stopped with
/// a capacity error: at most a fifth (and two more) may.
static TOPOLOGY_SKIPS: Skips = Skips::new("any_proptest_mesh_keeps_its_topology", 20, 2);

#[test]
fn any_proptest_mesh_keeps_its_topology() {
    let config = ProptestConfig::with_cases(cases(24));
    proptest!(config, |(
        input in any_mesh(),
        relative in 0.5f64..2.0,
        iterations in 1u32..3,
        patch_size in prop::sample::select(vec![16u32, 64]),
    )| {
        // Face-less inputs are an error (`nonsense_settings_are_errors`).
        prop_assume!(!input.faces.is_empty());
        let settings = RemeshSettings {
            length: TargetLength::Relative(relative),
            iterations,
            ..RemeshSettings::default()
        };
        // Out of patch slots is an error naming the setting to raise (rare
        // here: tiny patches whose collapses keep slicing them; see issue
        // 4), not a wrong mesh; every phase before it was checked.
        TOPOLOGY_SKIPS.ran();
        match try_remesh_checked(&input, &settings, patch_size, None) {
            Ok(_) => {}
            Err(e @ RemeshError::Run { source: RunError::Fatal(..), .. }) => {
                TOPOLOGY_SKIPS.skip(e)?;
            }
            Err(e) => panic!("remesh: {e}"),
        }
    });
    TOPOLOGY_SKIPS.summary();
}

/// The remeshing of the mesh in file `input` (read as an operation reads
/// it: duplicate faces removed) by the library's two halves on the CPU
/// backend, which the file pipeline's output must equal.
fn run_of_file(input: &std::path::Path, settings: &RemeshSettings) -> cavity_remesh::Remeshed {
    use cavity::backend::cpu::CpuBackend;
    use cavity::input::{InputMesh, Source};

    let read = InputMesh::read(Source::File(input)).expect("the input reads");
    let cpu = Backend::Cpu(CpuBackend::new());
    let mut hooks = Hooks {
        stop: None,
        progress: None,
        after_phase: None,
    };
    prepare(
        &read.mesh,
        &read.topology,
        settings,
        Layout::default(),
        None,
    )
    .expect("prepare")
    .run(&read.mesh, &read.topology, &cpu, &mut hooks)
    .expect("run")
}

/// The file pipeline (`pipeline::RemeshFile`, the CLI's `remesh`) writes
/// what a run of the same mesh gives (on the CPU backend, deterministic),
/// reports its stages, and refuses to overwrite its input.
#[test]
fn the_file_pipeline_writes_what_a_run_gives() {
    use cavity::backend::DeviceChoice;
    use cavity::input::Source;
    use cavity::io::{Format, read_mesh, write_mesh};
    use cavity_remesh::pipeline::{FileError, RemeshFile};

    let dir = tempfile::tempdir().expect("a temporary directory");
    let input = dir.path().join("in.obj");
    write_mesh(&input, &bundled_mesh(), None, Format::Obj).expect("written");
    let output = dir.path().join("out.obj");
    let settings = RemeshSettings {
        iterations: 1,
        ..RemeshSettings::default()
    };
    let job = |output| RemeshFile {
        input: Source::File(&input),
        output,
        settings,
        layout: Layout::default(),
        device: DeviceChoice::Cpu,
    };
    let run = job(&output).run(&mut ()).expect("the pipeline runs");
    let written = read_mesh(&output).expect("the output reads").mesh;
    let whole = run_of_file(&input, &settings);
    assert_eq!(written.faces, whole.mesh.faces);
    assert_eq!(written.positions, whole.mesh.positions);
    assert_eq!(run.report.output, whole.report.output);
    assert!(run.stages.whole >= run.stages.write && run.stages.read > 0.0);
    let before = std::fs::read(&input).expect("the input");
    let refused = job(&input).run(&mut ());
    assert!(
        matches!(refused, Err(FileError::Overwrite(_))),
        "{refused:?}"
    );
    assert_eq!(std::fs::read(&input).expect("the input"), before);
}

/// The file pipeline measures the input's extent while the device starts,
/// before its duplicate faces are removed: where some were, its plan (the
/// expected output, and from it the patch factor) is the deduplicated
/// mesh's, as a run of the mesh read without them gives.
#[test]
fn the_file_pipeline_plans_without_duplicate_faces() {
    use cavity::backend::DeviceChoice;
    use cavity::input::{InputMesh, Source};
    use cavity::io::{Format, read_mesh, write_mesh};
    use cavity_remesh::TargetLength;
    use cavity_remesh::pipeline::RemeshFile;

    let dir = tempfile::tempdir().expect("a temporary directory");
    let input = dir.path().join("in.obj");
    let mut mesh = bundled_mesh();
    let repeated: Vec<[u32; 3]> = mesh.faces.iter().step_by(2).copied().collect();
    mesh.faces.extend(repeated);
    write_mesh(&input, &mesh, None, Format::Obj).expect("written");
    let output = dir.path().join("out.obj");
    // Half the mean edge: the mesh grows, so the patch factor follows
    // the expected output.
    let settings = RemeshSettings {
        length: TargetLength::Relative(0.5),
        iterations: 1,
        ..RemeshSettings::default()
    };
    let run = RemeshFile {
        input: Source::File(&input),
        output: &output,
        settings,
        layout: Layout::default(),
        device: DeviceChoice::Cpu,
    }
    .run(&mut ())
    .expect("the pipeline runs");
    let read = InputMesh::read(Source::File(&input)).expect("the input reads");
    assert!(read.mesh.num_faces() < mesh.num_faces());
    let whole = run_of_file(&input, &settings);
    assert!(whole.report.patch_factor > Layout::default().factors.patches);
    assert_eq!(run.report.patch_factor, whole.report.patch_factor);
    let written = read_mesh(&output).expect("the output reads").mesh;
    assert_eq!(written.faces, whole.mesh.faces);
}

/// The statistics' vertex count and valences (counted from the edges'
/// ends) equal the reference mesh's: the vertices with a face and the
/// lengths of their VV rows, on meshes with boundaries, non-manifold
/// edges and isolated vertices.
#[test]
fn quality_valences_match_the_reference_mesh() {
    let config = ProptestConfig::with_cases(cases(64));
    proptest!(config, |(input in any_mesh())| {
        prop_assume!(!input.faces.is_empty());
        let reference = ReferenceMesh::new(&input).expect("reference mesh");
        let valences: Vec<u32> = (0..input.num_vertices() as u32)
            .filter(|&v| !reference.vf(v).is_empty())
            .map(|v| reference.vv(v).len() as u32)
            .collect();
        let q = Quality::of(&input, 1.0);
        prop_assert_eq!(q.vertices, valences.len());
        prop_assert_eq!(q.min_valence, valences.iter().copied().min().unwrap_or(0));
        prop_assert_eq!(q.max_valence, valences.iter().copied().max().unwrap_or(0));
        let sum: u64 = valences.iter().map(|&v| u64::from(v)).sum();
        prop_assert_eq!(q.mean_valence, sum as f64 / valences.len().max(1) as f64);
    });
}

/// A shrunk `any_mesh` input (`apps/remesh/tests/data/slicing-runaway.obj`: 98 faces in
/// 4 components, a non-manifold edge, 7 boundary loops) on which a patch
/// out of edge slots owned a one-face component: Lloyd's iterations put
/// the second seed there, so every slice moved that face alone and the
/// patch slots ran out ("every patch slot is in use") in most runs.
/// Slicing now falls back to a split at the median position
/// (`slice::balance`, which moves exactly half of the owned faces).
///
/// A second runaway is fixed: a patch that took seeds another patch had
/// declined registered them again, expanded for their cavities and ran
/// out of room; its halves then traded the same faces back and forth,
/// each slicing taking a patch slot, until none was left ("every patch
/// slot is in use"). Declined marks now move with the seeds
/// (`templates::a_declined_seed_stays_declined_whichever_patch_owns_it`).
/// Before, this test failed in 14 of 300 runs on the CPU backend with 48
/// rayon workers and about 1 in 100 with 2 (as on CI); after, 0 of 300
/// with either.
#[test]
fn slicing_a_patch_in_pieces_moves_half_of_it() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/slicing-runaway.obj"
    );
    let input = cavity::io::read_mesh(std::path::Path::new(path))
        .expect("the test mesh reads")
        .mesh;
    let settings = RemeshSettings {
        length: TargetLength::Relative(0.5722696746564632),
        iterations: 1,
        ..RemeshSettings::default()
    };
    for _ in 0..8 {
        remesh_checked(&input, &settings, 64, None);
    }
}

/// The cube [-1, 1]³, each face split into `4^k` pairs of triangles.
fn cube(k: u32) -> TriMesh {
    let positions = (0..8)
        .map(|i| [0, 1, 2].map(|c| if i >> c & 1 == 1 { 1.0 } else { -1.0 }))
        .collect();
    let faces = vec![
        [0, 2, 1],
        [1, 2, 3],
        [4, 5, 6],
        [5, 7, 6],
        [0, 1, 4],
        [1, 5, 4],
        [2, 6, 3],
        [3, 6, 7],
        [0, 4, 2],
        [2, 4, 6],
        [1, 3, 5],
        [3, 7, 5],
    ];
    let mut m = TriMesh { positions, faces };
    for _ in 0..k {
        m = m.subdivide();
    }
    m
}

/// A small mesh refined far: the 192-face cube, one patch, remeshed to
/// 0.15 of its mean edge length (about 7200 faces out) slices into many
/// patches. With 64 spare patch slots 11 of 160 such runs ran out of
/// them on the CPU backend with 48 workers (`MIN_SPARE_PATCH_SLOTS`).
#[test]
fn a_small_mesh_refined_tenfold_keeps_its_patch_slots() {
    let settings = RemeshSettings {
        length: TargetLength::Relative(0.15),
        iterations: 1,
        ..RemeshSettings::default()
    };
    for _ in 0..4 {
        let (out, _) = remesh_checked(&cube(2), &settings, 512, None);
        assert!(out.faces.len() > 5000, "{} faces", out.faces.len());
    }
}

/// A patch size whose largest patch needs more shared memory than a GPU
/// block gets is halved until the update kernels fit: at 2048 faces per
/// patch the cube's 3072 faces make two patches, whose update kernel needs
/// about four times the 108 KB of a 512-face patch of the dragon scan (an
/// H100 gives a block 227 KB). The CPU backend has no such limit and keeps
/// the patch size.
#[test]
fn a_patch_too_large_for_the_gpu_is_halved() {
    let settings = RemeshSettings {
        iterations: 1,
        ..RemeshSettings::default()
    };
    let (_, report) = remesh_checked(&cube(4), &settings, 2048, None);
    match test_backend() {
        Backend::Cpu(_) => assert_eq!(report.patch_size, 2048),
        Backend::Cuda(_) => assert!(
            (64..2048).contains(&report.patch_size),
            "patch size {}",
            report.patch_size
        ),
    }
}

#[test]
fn feature_edges_of_a_cube_stay_sharp() {
    let input = cube(4);
    let settings = RemeshSettings {
        length: TargetLength::Relative(1.3),
        feature_angle: Some(45.0),
        ..RemeshSettings::default()
    };
    for patch_size in [64, 256] {
        let (out, report) = remesh_checked(&input, &settings, patch_size, Some(1e-3));
        // Every vertex on the surface of the cube, the corners kept.
        for p in &out.positions {
            let on_face = p.iter().any(|c| (c.abs() - 1.0).abs() < 1e-5);
            let inside = p.iter().all(|c| c.abs() <= 1.0 + 1e-5);
            assert!(on_face && inside, "{p:?} left the cube");
        }
        for corner in &input.positions[..8] {
            assert!(out.positions.contains(corner), "corner {corner:?} moved");
        }
        assert!(band_share(&out, report.length) >= 0.9, "{}", report.table());
    }
}

/// Boundary vertices of `m` (on an edge with one face).
fn boundary_vertices(m: &TriMesh) -> Vec<u32> {
    let r = ReferenceMesh::new(m).expect("valid mesh");
    let mut out: Vec<u32> = (0..r.num_edges() as u32)
        .filter(|&e| r.ef(e).len() == 1)
        .flat_map(|e| r.edge_vertices(e))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Lengths of the boundary edges of `m`.
fn boundary_lengths(m: &TriMesh) -> Vec<f64> {
    let r = ReferenceMesh::new(m).expect("valid mesh");
    (0..r.num_edges() as u32)
        .filter(|&e| r.ef(e).len() == 1)
        .map(|e| {
            let [a, b] = r
                .edge_vertices(e)
                .map(|v| glam::Vec3::from(m.positions[v as usize]));
            a.distance(b) as f64
        })
        .collect()
}

/// A flat 24 × 24 square sheet on [0, 1]² with two holes of 4 × 2 cells
/// (sides between corners of 0.9 and 1.8 L at 2x, so that corner to corner
/// the band can be met): remeshing
/// coarser and finer remeshes its boundary along itself (boundary edges in
/// the band, every boundary vertex on the square's sides or the holes'
/// rims, the square's corners kept, as many boundary loops), and
/// `keep_boundary` keeps every boundary vertex where it was.
#[test]
fn open_boundaries_are_remeshed_along_the_boundary() {
    let n = 24;
    let holes: Vec<usize> = [(6, 6), (15, 12)]
        .iter()
        .flat_map(|&(i, j)| {
            (0..2).flat_map(move |dj| (0..8).map(move |k| 2 * ((j + dj) * n + i) as usize + k))
        })
        .collect();
    let mut sheet = grid(n as u32, n as u32, &[false, true], false, &holes);
    for p in &mut sheet.positions {
        *p = [p[0] / n as f32, p[1] / n as f32, 0.0];
    }
    let input_boundary: Vec<[f32; 3]> = boundary_vertices(&sheet)
        .iter()
        .map(|&v| sheet.positions[v as usize])
        .collect();
    // A point on the input's boundary polyline: on a side of the square or
    // of a hole (all boundary edges are axis-aligned).
    let on_input_boundary = |p: [f32; 3]| {
        input_boundary.iter().any(|q| {
            input_boundary.iter().any(|r| {
                let (a, b) = (glam::Vec3::from(*q), glam::Vec3::from(*r));
                let d = (b - a).length();
                d > 0.0 && d <= 1.01 / n as f32 && {
                    let t = (glam::Vec3::from(p) - a).dot(b - a) / (d * d);
                    (0.0..=1.0).contains(&t)
                        && (a + t * (b - a)).distance(glam::Vec3::from(p)) < 1e-5
                }
            })
        })
    };
    let before = ReferenceMesh::new(&sheet).expect("valid").stats();
    for relative in [0.6, 2.0] {
        let settings = RemeshSettings {
            length: TargetLength::Relative(relative),
            ..RemeshSettings::default()
        };
        let (out, report) = remesh_checked(&sheet, &settings, 64, None);
        let stats = ReferenceMesh::new(&out).expect("valid").stats();
        assert_eq!(stats.boundary_loops, before.boundary_loops, "L {relative}x");
        let l = report.length;
        let lengths = boundary_lengths(&out);
        let in_band = lengths
            .iter()
            .filter(|&&e| e >= 0.8 * l * 0.99 && e <= 4.0 / 3.0 * l * 1.01)
            .count();
        assert!(
            in_band as f64 >= 0.9 * lengths.len() as f64,
            "L {relative}x: {in_band} of {} boundary edges in the band: {:?}",
            lengths.len(),
            lengths.iter().map(|e| e / l).collect::<Vec<_>>()
        );
        for v in boundary_vertices(&out) {
            let p = out.positions[v as usize];
            assert!(
                on_input_boundary(p),
                "L {relative}x: boundary vertex at {p:?}"
            );
        }
        for corner in [
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [1.0, 1.0, 0.0],
        ] {
            assert!(
                out.positions.contains(&corner),
                "L {relative}x: the corner {corner:?} moved"
            );
        }
        let kept = RemeshSettings {
            keep_boundary: true,
            ..settings
        };
        let (out, _) = remesh_checked(&sheet, &kept, 64, None);
        let mut got: Vec<[u32; 3]> = boundary_vertices(&out)
            .iter()
            .map(|&v| out.positions[v as usize].map(f32::to_bits))
            .collect();
        let mut want: Vec<[u32; 3]> = input_boundary.iter().map(|p| p.map(f32::to_bits)).collect();
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want, "L {relative}x, --keep-boundary");
    }
}

/// A flat 48 × 48 sheet on [0, 1]² with a diagonal slot whose rims run in
/// steps of one cell (the jagged hole rims of scans, issue 24): at L = 3x
/// the steps are about 0.3 L long and every rim vertex turns by 90°, a
/// corner by the turning angle alone. Remeshed, the steps go (they lie
/// within `CORNER_TOLERANCE` L of the polyline without them): the smallest
/// angle away from sharp corners (`Quality::min_angle_away`) is at least
/// 15°, the boundary loops stay, and 95 % of the edges are in the band.
#[test]
fn staircase_hole_rims_reach_fifteen_degrees() {
    let n = 48;
    let holes: Vec<usize> = (12..36)
        .flat_map(|i: usize| (i - 3..=i + 3).map(move |j| (i, j)))
        .flat_map(|(i, j)| [2 * (j * n + i), 2 * (j * n + i) + 1])
        .collect();
    let mut sheet = grid(n as u32, n as u32, &[false, true], false, &holes);
    for p in &mut sheet.positions {
        *p = [p[0] / n as f32, p[1] / n as f32, 0.0];
    }
    let before = ReferenceMesh::new(&sheet).expect("valid").stats();
    assert_eq!(before.boundary_loops, 2);
    let settings = RemeshSettings {
        length: TargetLength::Relative(3.0),
        ..RemeshSettings::default()
    };
    let (out, report) = remesh_checked(&sheet, &settings, 64, None);
    let stats = ReferenceMesh::new(&out).expect("valid").stats();
    assert_eq!(stats.boundary_loops, before.boundary_loops);
    assert!(
        report.output.min_angle_away >= 15.0,
        "smallest angle away from sharp corners {:.2}°",
        report.output.min_angle_away
    );
    let share = band_share(&out, report.length);
    assert!(share >= 0.95, "{:.1} % in the band", 100.0 * share);
}

/// A stop hook that answers `true` before the sixth phase stops the run
/// there (iteration 2's collapse), each phase before it having started.
#[test]
fn a_stop_hook_stops_the_run_before_a_phase() {
    let asked = std::cell::Cell::new(0);
    let stop = || {
        asked.set(asked.get() + 1);
        asked.get() == 6
    };
    let mut started = Vec::new();
    let mut progress = |iteration: u32, phase: Phase| started.push((iteration, phase));
    let mut hooks = Hooks {
        stop: Some(&stop),
        progress: Some(&mut progress),
        after_phase: None,
    };
    let settings = RemeshSettings {
        iterations: 3,
        ..RemeshSettings::default()
    };
    let error = remesh(
        &bundled_mesh(),
        &settings,
        &test_backend(),
        Layout::default(),
        &mut hooks,
    )
    .unwrap_err();
    assert!(
        matches!(
            error,
            RemeshError::Stopped {
                iteration: 2,
                phase: Phase::Collapse
            }
        ),
        "{error}"
    );
    assert!(error.settings().is_empty());
    assert_eq!(started.len(), 5);
}

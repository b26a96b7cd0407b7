//! The sequential collapse (`sequential::collapse_sequential`) keeps the
//! paper's robustness checks (section 4.1) after every iteration: every
//! triangle in one or two tetrahedra, with opposite orientations when
//! shared; no inverted or zero-volume tetrahedron; no duplicated vertex;
//! the boundary's components, closedness and genus kept; corners kept in
//! place; the boundary within a small Hausdorff distance of the input's.
//! The same mesh scaled by 2^±100 collapses the same way.

mod generate;

use cavity_tests::cases;
use cavity_tet_collapse::boundary::classify_vertices;
use cavity_tet_collapse::checks::{boundary_surface, check_valid, hausdorff};
use cavity_tet_collapse::kernels::boundary::CORNER;
use cavity_tet_collapse::kernels::criterion::{Criterion, Field, Harmonic, Length, Placement};
use cavity_tet_collapse::sequential::collapse_sequential;
use cavity_tet_collapse::{Settings, TetMesh};
use proptest::prelude::*;

/// The corner vertices' positions of `mesh`.
fn corners(mesh: &TetMesh, settings: &Settings) -> Vec<[f32; 3]> {
    let surface = boundary_surface(mesh);
    let classes = classify_vertices(
        &mesh.positions,
        &surface.triangles,
        mesh.positions.len(),
        settings.epsilon_f,
        settings.epsilon_r,
    );
    (0..mesh.positions.len())
        .filter(|&v| classes.class[v] == CORNER)
        .map(|v| mesh.positions[v])
        .collect()
}

/// The diagonal of `mesh`'s bounding box.
fn diagonal(mesh: &TetMesh) -> f64 {
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    for p in &mesh.positions {
        for k in 0..3 {
            lo[k] = lo[k].min(f64::from(p[k]));
            hi[k] = hi[k].max(f64::from(p[k]));
        }
    }
    (0..3).map(|k| (hi[k] - lo[k]).powi(2)).sum::<f64>().sqrt()
}

/// The section 4.1 checks of `output` against `input`, and the Hausdorff
/// distance of their boundaries over the box's diagonal.
fn invariants(input: &TetMesh, output: &TetMesh, settings: &Settings) -> Result<f64, String> {
    check_valid(output, 0.0).map_err(|e| e.to_string())?;
    let (before, after) = (boundary_surface(input), boundary_surface(output));
    let (tb, ta) = (before.topology(), after.topology());
    let shape = |t: &cavity_tet_collapse::checks::SurfaceTopology| {
        let mut s: Vec<(bool, bool, Option<u32>)> = t
            .components
            .iter()
            .map(|c| (c.closed, c.manifold, c.genus))
            .collect();
        s.sort();
        s
    };
    if shape(&tb) != shape(&ta) {
        return Err(format!("boundary topology {tb:?} became {ta:?}"));
    }
    for c in corners(input, settings) {
        if !output.positions.contains(&c) {
            return Err(format!("corner at {c:?} moved"));
        }
    }
    Ok(hausdorff(&before, &input.positions, &after, &output.positions) / diagonal(input))
}

/// Runs `criterion` one iteration at a time (the classes recomputed each
/// time) until it stops, checking [`invariants`] after each; returns the
/// last mesh and the largest Hausdorff distance seen.
fn run_checked<C: Criterion>(
    input: &TetMesh,
    values: &[f32],
    criterion: &C,
    settings: &Settings,
) -> Result<(TetMesh, f64), String> {
    let one = Settings {
        max_iterations: 1,
        ..*settings
    };
    let mut mesh = input.clone();
    let mut values = values.to_vec();
    let mut worst = 0.0f64;
    for _ in 0..settings.max_iterations {
        let (next, next_values, iterations) = collapse_sequential(&mesh, &values, criterion, &one);
        worst = worst.max(invariants(input, &next, settings)?);
        let done = iterations.first().is_none_or(|i| i.collapses == 0);
        mesh = next;
        values = next_values;
        if done {
            break;
        }
    }
    Ok((mesh, worst))
}

/// The median length of `mesh`'s edges.
fn median_edge(mesh: &TetMesh) -> f64 {
    let mut l: Vec<f64> = mesh
        .edges()
        .iter()
        .map(|&[a, b]| {
            let (p, q) = (mesh.positions[a as usize], mesh.positions[b as usize]);
            (0..3)
                .map(|k| f64::from(p[k] - q[k]).powi(2))
                .sum::<f64>()
                .sqrt()
        })
        .collect();
    l.sort_by(f64::total_cmp);
    l[l.len() / 2]
}

#[test]
fn a_perturbed_grid_coarsens_and_keeps_its_box() {
    let input = generate::grid(6, 6, 6, 0.2, 7);
    let settings = Settings {
        max_iterations: 30,
        ..Settings::default()
    };
    let criterion = Length {
        length: 2.5 * median_edge(&input),
        placement: Placement::Midpoint,
    };
    let (output, hausdorff) = run_checked(&input, &[], &criterion, &settings).unwrap();
    assert!(
        output.tets.len() * 3 < input.tets.len(),
        "{} of {} tetrahedra left",
        output.tets.len(),
        input.tets.len()
    );
    // The box's faces are flat: face vertices move within them.
    assert!(hausdorff < 1e-6, "{hausdorff:e}");
}

#[test]
fn scaling_by_powers_of_two_changes_nothing() {
    let input = generate::grid(4, 4, 4, 0.25, 3);
    let settings = Settings::default();
    let length = 2.0 * median_edge(&input);
    let scaled = |s: f32| TetMesh {
        positions: input.positions.iter().map(|p| p.map(|c| c * s)).collect(),
        tets: input.tets.clone(),
    };
    let run = |m: &TetMesh, s: f64| {
        let criterion = Length {
            length: length * s,
            placement: Placement::Midpoint,
        };
        collapse_sequential(m, &[], &criterion, &settings)
    };
    let (reference, _, iterations) = run(&input, 1.0);
    assert!(iterations[0].collapses > 0);
    for s in [2f32.powi(100), 2f32.powi(-100)] {
        let (out, _, its) = run(&scaled(s), f64::from(s));
        assert_eq!(its, iterations);
        assert_eq!(out.tets, reference.tets);
        let back: Vec<[f32; 3]> = out.positions.iter().map(|p| p.map(|c| c / s)).collect();
        assert_eq!(back, reference.positions);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(16)))]

    /// Random meshes (holes, components, slivers, shuffled, any scale)
    /// with each criterion keep the invariants after every iteration.
    #[test]
    fn random_meshes_keep_the_invariants(
        input in generate::any_tet_mesh(),
        which in 0u8..3,
        relative in 1.0f64..3.0,
    ) {
        let settings = Settings { max_iterations: 8, ..Settings::default() };
        let result = match which {
            0 => run_checked(
                &input,
                &[],
                &Length { length: relative * median_edge(&input), placement: Placement::Midpoint },
                &settings,
            ),
            1 => {
                // A field of the vertices' first coordinate.
                let values: Vec<f32> = input.positions.iter().map(|p| p[0]).collect();
                let field = Field {
                    max_error: 0.1 * relative * diagonal(&input),
                    placement: Placement::Endpoint,
                };
                run_checked(&input, &values, &field, &settings)
            }
            _ => run_checked(&input, &[], &Harmonic, &settings),
        };
        if let Err(e) = result {
            return Err(TestCaseError::fail(e));
        }
    }
}

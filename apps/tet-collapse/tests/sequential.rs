//! The sequential collapse (`sequential::collapse_sequential`) keeps the
//! paper's robustness checks (section 4.1) after every iteration: every
//! triangle in one or two tetrahedra, with opposite orientations when
//! shared; no inverted or zero-volume tetrahedron; no duplicated vertex;
//! the boundary's components, closedness and genus kept; corners kept in
//! place; the boundary within a small Hausdorff distance of the input's.
//! The same mesh scaled by 2^±100 collapses the same way.

mod generate;
mod invariants;

use cavity_tests::cases;
use cavity_tet_collapse::kernels::criterion::{
    BAD_DIHEDRAL_DEGREES, Criterion, Field, Harmonic, Length, Placement,
};
use cavity_tet_collapse::sequential::{collapse_sequential, collapse_sequential_observed};
use cavity_tet_collapse::{Settings, TetMesh};
use invariants::{Invariants, diagonal, median_edge};
use proptest::prelude::*;

/// Runs `criterion` until it stops, checking [`Invariants`] after every
/// iteration; returns the last mesh and the largest Hausdorff distance.
fn run_checked<C: Criterion>(
    input: &TetMesh,
    values: &[f32],
    criterion: &C,
    settings: &Settings,
) -> Result<(TetMesh, f64), String> {
    let mut invariants = Invariants::of(input, settings);
    let (out, _, iterations) =
        collapse_sequential_observed(input, values, criterion, settings, |m| invariants.check(m));
    assert_eq!(invariants.iterations, iterations.len());
    Ok((out, invariants.result()?))
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
            _ => {
                let threshold_cos = BAD_DIHEDRAL_DEGREES.to_radians().cos();
                run_checked(&input, &[], &Harmonic { threshold_cos }, &settings)
            }
        };
        if let Err(e) = result {
            return Err(TestCaseError::fail(e));
        }
    }
}

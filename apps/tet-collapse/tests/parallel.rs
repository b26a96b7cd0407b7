//! The parallel collapse (`parallel::collapse_parallel`) on the test
//! backend (`CAVITY_TEST_DEVICE`: the CPU backend by default, the GPU on
//! the GPU machine) keeps the robustness checks of section 4.1 (the
//! checks of `tests/invariants`) after every iteration with every
//! built-in criterion on
//! random meshes, reaches about the sequential version's cell count in
//! more iterations, and gives the same result as the CPU backend.

mod generate;
mod invariants;

use cavity::backend::Backend;
use cavity_tests::{cases, test_backend};
use cavity_tet_collapse::kernels::criterion::{Length, Placement};
use cavity_tet_collapse::kernels::iteration::Builtin;
use cavity_tet_collapse::parallel::{collapse_parallel, collapse_parallel_observed};
use cavity_tet_collapse::sequential::collapse_sequential;
use cavity_tet_collapse::{Conflicts, Settings, TetMesh};
use invariants::{Invariants, median_edge};
use proptest::prelude::*;

/// Runs the parallel collapse on `backend` until it stops, checking
/// [`Invariants`] after every iteration; returns the last mesh and the
/// iterations.
fn run_checked(
    backend: &Backend,
    input: &TetMesh,
    values: &[f32],
    criterion: Builtin,
    settings: &Settings,
) -> Result<(TetMesh, usize), String> {
    let mut invariants = Invariants::of(input, settings);
    let mut observe = |m: &TetMesh| invariants.check(m);
    let (out, _, report) = collapse_parallel_observed(
        backend,
        input,
        values,
        criterion,
        settings,
        Some(&mut observe),
    )
    .map_err(|e| e.to_string())?;
    invariants.result()?;
    Ok((out, report.iterations.len()))
}

fn length(l: f64) -> Builtin {
    Builtin {
        kind: 0,
        placement: 0,
        bound: l,
    }
}

#[test]
fn a_perturbed_grid_coarsens_about_as_far_as_the_sequential_version() {
    let input = generate::grid(8, 8, 8, 0.2, 11);
    let l = 2.5 * median_edge(&input);
    let settings = Settings::default();
    let backend = test_backend();
    let (parallel, iterations) = run_checked(&backend, &input, &[], length(l), &settings).unwrap();
    let criterion = Length {
        length: l,
        placement: Placement::Midpoint,
    };
    let (sequential, _, its) = collapse_sequential(&input, &[], &criterion, &settings);
    eprintln!(
        "{} tetrahedra: parallel {} in {iterations} iterations, sequential {} in {}",
        input.tets.len(),
        parallel.tets.len(),
        sequential.tets.len(),
        its.len()
    );
    assert!(parallel.tets.len() * 3 < input.tets.len());
    assert!(parallel.tets.len() < sequential.tets.len() * 3 / 2);
    assert!(iterations >= its.len());
    // Gautron's propagation keeps the invariants too, in more iterations.
    let gautron = Settings {
        conflicts: Conflicts::Gautron,
        ..settings
    };
    let (_, gautron_iterations) = run_checked(&backend, &input, &[], length(l), &gautron).unwrap();
    eprintln!("Gautron: {gautron_iterations} iterations");
    assert!(gautron_iterations > iterations);
    // The greedy set, fewer.
    let greedy = Settings {
        conflicts: Conflicts::Greedy,
        ..settings
    };
    let (_, greedy_iterations) = run_checked(&backend, &input, &[], length(l), &greedy).unwrap();
    eprintln!("greedy: {greedy_iterations} iterations");
    assert!(greedy_iterations < iterations);
}

#[test]
fn the_cpu_backend_and_the_test_backend_agree() {
    let input = generate::shuffle(&generate::grid(5, 4, 3, 0.25, 5), 9);
    let settings = Settings::default();
    let l = 2.0 * median_edge(&input);
    let cpu = Backend::select(cavity::backend::DeviceChoice::Cpu)
        .unwrap()
        .0;
    let a = collapse_parallel(&cpu, &input, &[], length(l), &settings).unwrap();
    let b = collapse_parallel(&test_backend(), &input, &[], length(l), &settings).unwrap();
    assert_eq!(a.0, b.0);
    assert_eq!(a.2.iterations, b.2.iterations);
}

/// The same mesh scaled by 2^100 and 2^-100 (the criterion's bound with
/// it) collapses the same way on the test backend with each built-in
/// criterion: the same iterations, tetrahedra, and positions scaled by
/// the factor (powers of two scale floating point exactly).
#[test]
fn scaling_by_powers_of_two_changes_nothing() {
    let input = generate::grid(4, 4, 4, 0.25, 3);
    let backend = test_backend();
    let values: Vec<f32> = input.positions.iter().map(|p| p[0] + p[1]).collect();
    let scaled = |s: f32| TetMesh {
        positions: input.positions.iter().map(|p| p.map(|c| c * s)).collect(),
        tets: input.tets.clone(),
    };
    for (kind, bound, scales) in [
        (0, 2.0 * median_edge(&input), true),
        (1, 0.3, false),
        (2, 20f64.to_radians().cos(), false),
    ] {
        let values = if kind == 1 { &values[..] } else { &[][..] };
        let run = |m: &TetMesh, s: f64| {
            let bound = if scales { bound * s } else { bound };
            let criterion = Builtin {
                kind,
                placement: 0,
                bound,
            };
            collapse_parallel(&backend, m, values, criterion, &Settings::default()).unwrap()
        };
        let (reference, _, report) = run(&input, 1.0);
        assert!(report.iterations[0].collapses > 0, "criterion {kind}");
        for s in [2f32.powi(100), 2f32.powi(-100)] {
            let (out, _, r) = run(&scaled(s), f64::from(s));
            assert_eq!(
                r.iterations, report.iterations,
                "criterion {kind}, scale {s:e}"
            );
            assert_eq!(out.tets, reference.tets, "criterion {kind}, scale {s:e}");
            let back: Vec<[f32; 3]> = out.positions.iter().map(|p| p.map(|c| c / s)).collect();
            assert_eq!(back, reference.positions, "criterion {kind}, scale {s:e}");
        }
    }
}

/// `epsilon_c` stops the run after the first iteration that collapses no
/// more than it; every iteration before collapsed more; without it the
/// same run goes on.
#[test]
fn epsilon_c_stops_at_the_first_iteration_at_or_under_it() {
    let input = generate::grid(8, 8, 8, 0.2, 11);
    let criterion = length(2.5 * median_edge(&input));
    let backend = test_backend();
    let all = collapse_parallel(&backend, &input, &[], criterion, &Settings::default())
        .unwrap()
        .2
        .iterations;
    assert!(all.len() >= 4, "{all:?}");
    // A threshold met first in the middle of the run.
    let middle = all.len() / 2;
    let epsilon_c = all[middle].collapses;
    let first = all.iter().position(|i| i.collapses <= epsilon_c).unwrap();
    assert!(first < all.len() - 1, "{all:?}");
    let settings = Settings {
        epsilon_c,
        ..Settings::default()
    };
    let (out, _, report) = collapse_parallel(&backend, &input, &[], criterion, &settings).unwrap();
    assert_eq!(report.iterations, all[..=first], "epsilon_c {epsilon_c}");
    assert_eq!(out.tets.len(), all[first].cells);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(16)))]

    /// Random meshes (holes, components, slivers, shuffled, any scale)
    /// with each built-in criterion and every conflict detection keep
    /// the invariants after every iteration.
    #[test]
    fn random_meshes_keep_the_invariants(
        input in generate::any_tet_mesh(),
        kind in 0u32..3,
        placement in 0u32..2,
        relative in 1.0f64..3.0,
        conflicts in prop::sample::select(vec![Conflicts::TwoPass, Conflicts::Gautron, Conflicts::Greedy]),
    ) {
        let settings = Settings { max_iterations: 8, conflicts, ..Settings::default() };
        let values: Vec<f32> = input.positions.iter().map(|p| p[0]).collect();
        let span = input.positions.iter().map(|p| p[0]).fold(f32::NEG_INFINITY, f32::max)
            - input.positions.iter().map(|p| p[0]).fold(f32::INFINITY, f32::min);
        let bound = match kind {
            0 => relative * median_edge(&input),
            1 => 0.1 * relative * f64::from(span),
            // A loose threshold (the grids' angles are large): 10° to 30°.
            _ => (10.0 * relative).to_radians().cos(),
        };
        let criterion = Builtin { kind, placement, bound };
        let values = if kind == 1 { values } else { Vec::new() };
        if let Err(e) = run_checked(&test_backend(), &input, &values, criterion, &settings) {
            return Err(TestCaseError::fail(e));
        }
    }
}

/// Timing on a perturbed grid of `CAVITY_TET_GRID`³ cubes (default 40:
/// 384 000 tetrahedra) reduced by the length criterion at 1.25 times the
/// median edge: the parallel collapse on the test backend (after a
/// warm-up run) and the sequential version (unless
/// `CAVITY_TET_SKIP_SEQUENTIAL` is set), printed (run with
/// `--ignored --nocapture`; `cavity bench tet-simplify` is issue 54's
/// benchmark).
#[test]
#[ignore = "timing (issue 54 item 8): run in release with --ignored --nocapture"]
fn timing_on_a_grid() {
    let input = generate::timing_grid();
    let l = 1.25 * median_edge(&input);
    let settings = Settings::default();
    let backend = test_backend();
    collapse_parallel(&backend, &input, &[], length(l), &settings).unwrap();
    let start = std::time::Instant::now();
    let (out, _, report) = collapse_parallel(&backend, &input, &[], length(l), &settings).unwrap();
    let parallel = start.elapsed().as_secs_f64();
    eprintln!(
        "{}: {} -> {} tetrahedra in {} iterations ({} conflict rounds), {parallel:.3} s \
         (rebuild {:.3} s, candidates {:.3} s, conflicts {:.3} s, apply {:.3} s); collapses {:?}",
        report.device,
        input.tets.len(),
        out.tets.len(),
        report.iterations.len(),
        report.conflict_rounds,
        report.rebuild_seconds,
        report.candidate_seconds,
        report.conflict_seconds,
        report.apply_seconds,
        report
            .iterations
            .iter()
            .map(|i| i.collapses)
            .collect::<Vec<_>>()
    );
    let gautron = Settings {
        conflicts: Conflicts::Gautron,
        ..settings
    };
    let start = std::time::Instant::now();
    let (out, _, report) = collapse_parallel(&backend, &input, &[], length(l), &gautron).unwrap();
    eprintln!(
        "Gautron: {} tetrahedra in {} iterations, {:.3} s",
        out.tets.len(),
        report.iterations.len(),
        start.elapsed().as_secs_f64()
    );
    let greedy = Settings {
        conflicts: Conflicts::Greedy,
        ..settings
    };
    let start = std::time::Instant::now();
    let (out, _, report) = collapse_parallel(&backend, &input, &[], length(l), &greedy).unwrap();
    eprintln!(
        "greedy: {} tetrahedra in {} iterations ({} rounds), {:.3} s (rebuild {:.3} s, \
         candidates {:.3} s, conflicts {:.3} s); collapses {:?}",
        out.tets.len(),
        report.iterations.len(),
        report.conflict_rounds,
        start.elapsed().as_secs_f64(),
        report.rebuild_seconds,
        report.candidate_seconds,
        report.conflict_seconds,
        report
            .iterations
            .iter()
            .map(|i| i.collapses)
            .collect::<Vec<_>>()
    );
    if std::env::var_os("CAVITY_TET_SKIP_SEQUENTIAL").is_some() {
        return;
    }
    let criterion = Length {
        length: l,
        placement: Placement::Midpoint,
    };
    let start = std::time::Instant::now();
    let (seq, _, its) = collapse_sequential(&input, &[], &criterion, &settings);
    eprintln!(
        "sequential: {} tetrahedra in {} iterations, {:.3} s",
        seq.tets.len(),
        its.len(),
        start.elapsed().as_secs_f64()
    );
}

#[test]
fn a_vertex_of_hundreds_of_tetrahedra_collapses_validly() {
    // The centre's 512 tetrahedra pass the edge build's local array; the
    // sphere's vertices are face vertices with a loose ε_F, so its
    // triangles coarsen (a target length of the radius: the edges to the
    // centre stay below 4/3 of it).
    let input = generate::ball(3);
    assert_eq!(input.tets.len(), 512);
    let l = 1.0;
    let settings = Settings {
        epsilon_f: 0.2,
        ..Settings::default()
    };
    let (out, iterations) =
        run_checked(&test_backend(), &input, &[], length(l), &settings).unwrap();
    assert!(
        iterations > 1 && out.tets.len() < input.tets.len(),
        "{}",
        out.tets.len()
    );
    // The same collapses as the CPU backend's, which reads the same mesh.
    let cpu = Backend::select(cavity::backend::DeviceChoice::Cpu)
        .unwrap()
        .0;
    let a = collapse_parallel(&cpu, &input, &[], length(l), &settings).unwrap();
    assert_eq!(a.0, out);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(64)))]

    /// The first conflict pass from per-vertex minima (`VertexCosts`,
    /// `VertexIndices`, `Winners`) is its definition: a candidate with a
    /// finite cost wins exactly when no candidate with a finite cost at
    /// either of its endpoints is cheaper, or as cheap with a lower index;
    /// on random edge sets with tied (`-0.0` and `0.0` among them),
    /// negative, infinite and not-a-number costs (the last two never
    /// candidates), on the backend `CAVITY_TEST_DEVICE` names.
    #[test]
    fn the_first_pass_winners_are_the_definitions(
        edges in prop::collection::vec((0u32..40, 0u32..40), 1..300)
            .prop_map(|e| e.into_iter().filter(|(a, b)| a != b).collect::<Vec<_>>())
            .prop_filter("an edge", |e| !e.is_empty()),
        costs in prop::collection::vec(
            prop::sample::select(vec![
                f32::NEG_INFINITY,
                -1.5f32,
                -0.0,
                0.0,
                0.25,
                0.25,
                1.0,
                2.0,
                f32::INFINITY,
                f32::NAN,
            ]),
            300,
        ),
        skip in 0usize..3,
    ) {
        use cavity_tet_collapse::kernels::blocks;
        use cavity_tet_collapse::kernels::iteration::{UNDECIDED, VertexCosts, VertexIndices, Winners};
        let backend = test_backend();
        cavity_tet_collapse::add_kernels(&backend).unwrap();
        let d = &backend;
        let e = edges.len();
        let words: Vec<u32> = edges.iter().flat_map(|&(a, b)| [a, b]).collect();
        // The candidates' list leaves out every third edge from `skip`.
        let list: Vec<u32> = (0..e as u32).filter(|i| (*i as usize + skip) % 3 != 0).collect();
        let cost: Vec<f32> = (0..e).map(|i| costs[i]).collect();
        let c = list.len() as u32;
        let (edges_d, list_d, cost_d) =
            (d.upload(&words).unwrap(), d.upload(&list).unwrap(), d.upload(&cost).unwrap());
        let mut vertex_cost = d.zeros::<u32>(40).unwrap();
        let mut vertex_index = d.zeros::<u32>(40).unwrap();
        let mut won = d.zeros::<u32>(e).unwrap();
        let mut affected = d.zeros::<u32>(40).unwrap();
        let params = ([&edges_d, &list_d], &cost_d, c, &mut vertex_cost);
        d.launch::<VertexCosts>(blocks(c), (0, 0), params).unwrap();
        let params = ([&edges_d, &list_d, &vertex_cost], &cost_d, c, &mut vertex_index);
        d.launch::<VertexIndices>(blocks(c), (0, 0), params).unwrap();
        let aux = [&edges_d, &list_d, &vertex_cost, &vertex_index];
        let params = (aux, &cost_d, c, &mut won, &mut affected);
        d.launch::<Winners>(blocks(c), (0, 0), params).unwrap();
        let won = d.download(won, e).unwrap();
        let affected = d.download(affected, 40).unwrap();
        let beats = |f: usize, g: usize| cost[f] < cost[g] || (cost[f] == cost[g] && f < g);
        let candidate = |f: usize| cost[f] < f32::INFINITY;
        for &g in &list {
            let g = g as usize;
            let (a, b) = edges[g];
            let wins = candidate(g)
                && !list.iter().map(|&f| f as usize).any(|f| {
                    f != g
                        && candidate(f)
                        && [edges[f].0, edges[f].1].iter().any(|v| *v == a || *v == b)
                        && beats(f, g)
                });
            prop_assert_eq!(won[g] == UNDECIDED, wins, "edge {} ({}, {})", g, a, b);
            if wins {
                prop_assert_eq!(affected[a as usize], g as u32 + 1);
                prop_assert_eq!(affected[b as usize], g as u32 + 1);
            }
        }
    }
}

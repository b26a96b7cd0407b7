//! `cavity smooth` as a user runs it (issue 52): time steps out of range
//! are refused by option with a non-zero exit and no output, the Laplacian
//! and preconditioner are chosen by name, and the bunny scan converges.

use std::path::{Path, PathBuf};
use std::process::Output;

mod common;
use common::{asset, cavity, device};

/// `cavity smooth --device D ARGS INPUT -o OUTPUT` (D: `common::device`).
fn smooth(args: &[&str], input: &Path, output: &Path) -> Output {
    cavity()
        .args(["smooth", "--device", device()])
        .args(args)
        .arg(input)
        .arg("-o")
        .arg(output)
        .output()
        .expect("run")
}

/// Every nonsense time step (0, negative, NaN, infinite, and 1e30, which
/// once ran no iteration and wrote the input back with exit 0) is an error
/// naming `--dt` and the range, exit code 1, no panic, no output written.
#[test]
fn time_steps_out_of_range_name_the_option() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let output = dir.path().join("out.ply");
    for dt in ["1e30", "2e4", "0", "-1", "NaN", "inf", "-inf"] {
        let out = smooth(&["--dt", dt], &asset("torus.obj"), &output);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "--dt {dt}: {stderr}");
        let last = stderr.trim_end().lines().last().unwrap_or_default();
        assert!(
            last.starts_with("error: the time step must be positive and at most 1e4")
                && last.ends_with("(--dt)"),
            "--dt {dt}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert_eq!(
            std::fs::read_dir(dir.path()).expect("list").count(),
            0,
            "--dt {dt} wrote something"
        );
    }
}

/// The largest time step is solved: CG iterations run, the step converges
/// and the vertices move.
#[test]
fn the_largest_time_step_runs_the_solver() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let output = dir.path().join("out.obj");
    let out = smooth(&["--dt", "1e4"], &asset("torus.obj"), &output);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let iterations: u32 = stdout
        .split("step 1: ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no iterations in {stdout}"));
    assert!(iterations > 0, "{stdout}");
    assert!(!stdout.contains("not converged"), "{stdout}");
    let torus = cavity::io::read_mesh(&asset("torus.obj"))
        .expect("torus")
        .mesh;
    let written = cavity::io::read_mesh(&output).expect("output").mesh;
    assert!(written.positions != torus.positions);
}

/// `--laplacian` and `--preconditioner` take their names; another name is
/// an error listing them.
#[test]
fn the_laplacian_and_preconditioner_are_chosen_by_name() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let output = dir.path().join("out.obj");
    for (laplacian, preconditioner) in [("cotan", "none"), ("mollified", "jacobi")] {
        let out = smooth(
            &["--laplacian", laplacian, "--preconditioner", preconditioner],
            &asset("torus.obj"),
            &output,
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!stdout.contains("not converged"), "{stdout}");
    }
    let out = smooth(&["--laplacian", "uniform"], &asset("torus.obj"), &output);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--laplacian") && stderr.contains("cotan, clamped, mollified"),
        "{stderr}"
    );
}

/// The bunny scan (holes, non-manifold edges, needles) converges with the
/// defaults within the default iteration limit.
#[test]
fn the_bunny_scan_converges() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let output = dir.path().join("bunny.ply");
    let scan =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/scans/StanfordBunny.ply");
    let out = smooth(&[], &scan, &output);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("CG iterations"), "{stdout}");
    assert!(!stdout.contains("not converged"), "{stdout}");
    assert!(output.exists());
}

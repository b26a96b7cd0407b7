//! `cavity tet` as a user runs it (issue 52 items 3 and 5): cells kept
//! valid by subdivision and smoothing on a real TetGen mesh, and bad
//! input or settings refused with an error naming the file or the
//! option, a non-zero exit, no panic and no output.

use std::path::PathBuf;
use std::process::Output;

mod common;
use common::{TET, cavity, device, medit, refused, tempdir};

/// `cavity tet ARGS` on the test device (`common::device`) where the command takes one.
fn tet(args: &[&str]) -> Output {
    let mut c = cavity();
    c.arg("tet").args(args);
    if matches!(
        args.first(),
        Some(&("info" | "boundary" | "smooth" | "subdivide"))
    ) {
        c.args(["--device", device()]);
    }
    c.output().expect("run")
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The TetGen mesh of the repaired bunny scan (`apps/volume/tests/data`).
fn bunny() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../apps/volume/tests/data/bunny-tetgen.node")
}

/// The number after `key` in `line` ("225 inverted" → 225 for "inverted"
/// taken before it).
fn number_before(line: &str, key: &str) -> usize {
    let at = line
        .find(key)
        .unwrap_or_else(|| panic!("{key:?} in {line}"));
    line[..at]
        .split_whitespace()
        .last()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("a number before {key:?} in {line}"))
}

#[test]
fn subdividing_the_bunny_keeps_every_cell_valid_and_the_plain_rules_do_not() {
    let dir = tempdir("tet-cli-");
    let out = dir.path().join("kept.vtk");
    let run = tet(&[
        "subdivide",
        bunny().to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&run);
    assert!(run.status.success(), "{stderr}");
    let level = stdout
        .lines()
        .find(|l| l.starts_with("level 1:"))
        .expect("a line per level");
    assert!(level.contains("kept valid"), "{level}");
    assert_eq!(number_before(level, "inverted of"), 0, "{level}");
    let plain_would = number_before(level, "; kept valid");
    assert!(plain_would > 0, "{level}");
    assert!(out.exists());
    let plain = dir.path().join("plain.vtk");
    let run = tet(&[
        "subdivide",
        bunny().to_str().unwrap(),
        "-o",
        plain.to_str().unwrap(),
        "--plain",
    ]);
    let (stdout, stderr) = text(&run);
    assert!(run.status.success(), "{stderr}");
    let level = stdout
        .lines()
        .find(|l| l.starts_with("level 1:"))
        .expect("a line per level");
    assert!(level.contains("--plain"), "{level}");
    assert_eq!(number_before(level, "inverted of"), plain_would, "{level}");
}

#[test]
fn smoothing_the_bunny_inverts_no_tetrahedron_and_reports_dihedral_angles() {
    let dir = tempdir("tet-cli-");
    let out = dir.path().join("smooth.mesh");
    let run = tet(&[
        "smooth",
        bunny().to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&run);
    assert!(run.status.success(), "{stderr}");
    for when in ["before:", "after:"] {
        let line = stdout.lines().find(|l| l.starts_with(when)).expect(when);
        assert!(line.contains("min dihedral angle"), "{line}");
        assert_eq!(number_before(line, "inverted of"), 0, "{line}");
    }
    // The written mesh has no inverted cell either.
    let run = tet(&["info", out.to_str().unwrap()]);
    let (stdout, stderr) = text(&run);
    assert!(run.status.success(), "{stderr}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("quality:"))
        .expect("quality");
    assert_eq!(number_before(line, "inverted of"), 0, "{line}");
}

#[test]
fn zero_levels_and_zero_steps_are_refused() {
    let dir = tempdir("tet-cli-");
    let input = medit(dir.path(), "one.mesh", &TET, &[[1, 2, 3, 4]], &[]);
    let out = dir.path().join("out.mesh");
    for (command, option) in [("subdivide", "--levels"), ("smooth", "--iterations")] {
        let run = tet(&[
            command,
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            option,
            "0",
        ]);
        refused(&run, &["at least 1", option]);
        assert!(!out.exists());
    }
}

#[test]
fn too_many_levels_are_refused_before_any_work() {
    let dir = tempdir("tet-cli-");
    let input = medit(dir.path(), "one.mesh", &TET, &[[1, 2, 3, 4]], &[]);
    let out = dir.path().join("out.vtk");
    let start = std::time::Instant::now();
    let run = tet(&[
        "subdivide",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--levels",
        "10",
    ]);
    refused(&run, &["10 level(s)", "lower the levels", "--levels"]);
    assert!(start.elapsed().as_secs() < 20);
    assert!(!out.exists());
    // The bunny at 6 levels: two billion cells, past the indices' range.
    let run = tet(&[
        "subdivide",
        bunny().to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--levels",
        "6",
    ]);
    refused(&run, &["6 level(s)", "--levels"]);
    assert!(!out.exists());
}

#[test]
fn an_empty_mesh_is_refused_and_flat_cells_are_warned_of() {
    let dir = tempdir("tet-cli-");
    let empty = medit(dir.path(), "empty.mesh", &TET, &[], &[]);
    let out = dir.path().join("out.mesh");
    for command in ["info", "subdivide", "smooth", "convert"] {
        let mut args = vec![command, empty.to_str().unwrap()];
        if command != "info" {
            args.extend(["-o", out.to_str().unwrap()]);
        }
        refused(&tet(&args), &["empty.mesh", "no cells"]);
        assert!(!out.exists());
    }
    // A flat tetrahedron (its apex in its base's plane) beside a good one.
    let mut vertices = TET.to_vec();
    vertices.push([0.4, 0.4, 0.0]);
    let flat = medit(
        dir.path(),
        "flat.mesh",
        &vertices,
        &[[1, 2, 3, 4], [1, 2, 3, 5]],
        &[],
    );
    let run = tet(&["info", flat.to_str().unwrap()]);
    let (_, stderr) = text(&run);
    assert!(run.status.success(), "{stderr}");
    assert!(stderr.contains("warning: "), "{stderr}");
    for w in ["flat.mesh", "1 of 2 cells", "the first cell 1"] {
        assert!(stderr.contains(w), "{w:?} not in {stderr}");
    }
}

#[test]
fn a_degenerate_cell_is_named_with_its_file() {
    let dir = tempdir("tet-cli-");
    let bad = medit(dir.path(), "repeated.mesh", &TET, &[[1, 2, 3, 3]], &[]);
    let out = dir.path().join("out.vtk");
    refused(
        &tet(&["info", bad.to_str().unwrap()]),
        &["repeated.mesh", "cell 0", "degenerate"],
    );
    refused(
        &tet(&[
            "convert",
            bad.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]),
        &["repeated.mesh", "cell 0"],
    );
    assert!(!out.exists());
}

#[test]
fn the_help_lists_every_volumetric_command() {
    let out = cavity().args(["tet", "--help"]).output().expect("run");
    let help = String::from_utf8_lossy(&out.stdout);
    for command in [
        "info",
        "boundary",
        "smooth",
        "subdivide",
        "convert",
        "simplify",
    ] {
        assert!(help.contains(command), "{command} not in {help}");
    }
    // The description above the commands names them too.
    let about = help.split("Usage").next().unwrap_or_default();
    for what in ["subdivision", "conversion", "smoothing"] {
        assert!(about.contains(what), "{what} not in {about}");
    }
}

/// The TetGen bunny (tetrahedra) and Gmsh's mixed mesh (tetrahedra,
/// hexahedra, prisms and pyramids) give the same counts, boundary
/// surface, smoothed mesh and subdivision on the test device as on the
/// CPU backend (whose operators the host builds), byte for byte: on the
/// GPU their operators are built on the device (issue 55 item 6).
#[test]
fn volumes_give_the_same_outputs_on_the_test_device_as_on_the_cpu() {
    let mixed = bunny().with_file_name("mixed-4.1.msh");
    for input in [bunny(), mixed] {
        same_outputs_on_the_test_device_as_on_the_cpu(input.to_str().unwrap());
    }
}

/// [`volumes_give_the_same_outputs_on_the_test_device_as_on_the_cpu`] of
/// `input`.
fn same_outputs_on_the_test_device_as_on_the_cpu(input: &str) {
    let dir = tempdir("tet-cli-");
    let run_on = |device: &str, args: &[&str], output: &str| {
        let path = dir.path().join(format!("{device}-{output}"));
        let mut c = cavity();
        c.arg("tet").args(args).args(["--device", device]);
        if !output.is_empty() {
            c.args(["-o", path.to_str().unwrap()]);
        }
        let run = c.output().expect("run");
        let (stdout, stderr) = text(&run);
        assert!(run.status.success(), "{args:?} on {device}: {stderr}");
        let written = if output.is_empty() {
            Vec::new()
        } else {
            std::fs::read(&path).expect("the output")
        };
        // The counts, boundary and quality lines, cut before the time,
        // the device's name and the output's path.
        let lines: Vec<String> = stdout
            .lines()
            .filter(|l| {
                !["stages", "memory estimated", "wrote"]
                    .iter()
                    .any(|w| l.starts_with(w))
            })
            .map(|l| {
                let cut = [" in ", " on ", "; subdivision"]
                    .iter()
                    .filter_map(|w| l.find(w))
                    .min()
                    .unwrap_or(l.len());
                l[..cut].to_string()
            })
            .collect();
        assert!(!lines.is_empty(), "{args:?} on {device}: {stdout}");
        (lines, written)
    };
    for (args, output) in [
        (&["info", input][..], ""),
        (&["boundary", input][..], "surface.ply"),
        (&["smooth", input, "--iterations", "3"][..], "smoothed.vtk"),
        (&["subdivide", input][..], "subdivided.vtk"),
    ] {
        let ours = run_on(device(), args, output);
        let cpu = run_on("cpu", args, output);
        assert_eq!(ours.0, cpu.0, "{args:?}: stdout");
        assert!(ours.1 == cpu.1, "{args:?}: the outputs differ");
    }
}

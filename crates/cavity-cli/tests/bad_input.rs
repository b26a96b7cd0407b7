//! Bad input as a new user gives it (issue 52, item 5): every case is an
//! error that names the file, line or option, a non-zero exit code, no
//! panic, the input untouched and nothing partial left behind.

use std::process::Output;
use std::time::{Duration, Instant};

mod common;
use common::{asset, cavity, device, names, refused_with, stderr, tempdir};

/// Stderr of a run that must fail cleanly: exit code 1 or 2 (clap's
/// usage errors), an `error:` line, no panic and no temporary file's name.
fn fails(out: &Output) -> String {
    refused_with(out, &[1, 2], &[])
}

#[test]
fn normals_refuse_a_format_without_vertex_normals() {
    let dir = tempdir("bad-input-");
    let out = cavity()
        .args(["normals", "--device", device()])
        .arg(asset("torus.obj"))
        .arg("-o")
        .arg(dir.path().join("x.stl"))
        .output()
        .expect("run");
    let stderr = fails(&out);
    assert!(
        stderr.contains("x.stl: STL holds one normal per facet"),
        "{stderr}"
    );
    assert!(
        stderr.contains(".ply") && stderr.contains(".obj"),
        "{stderr}"
    );
    assert!(names(dir.path()).is_empty());
}

#[test]
fn a_read_only_output_is_refused_before_any_work() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempdir("bad-input-");
    let output = dir.path().join("x.obj");
    std::fs::write(&output, "keep me\n").expect("write");
    std::fs::set_permissions(&output, std::fs::Permissions::from_mode(0o444)).expect("chmod");
    for command in [
        &["denoise", "--device", device()][..],
        &["remesh", "--device", device(), "--iterations", "1"],
    ] {
        let out = cavity()
            .args(command)
            .arg(asset("torus.obj"))
            .arg("-o")
            .arg(&output)
            .output()
            .expect("run");
        let stderr = fails(&out);
        assert!(
            stderr.contains("x.obj: exists and is read-only"),
            "{command:?}: {stderr}"
        );
        assert_eq!(std::fs::read_to_string(&output).expect("read"), "keep me\n");
        assert_eq!(names(dir.path()), ["x.obj"]);
    }
}

#[test]
fn negative_numbers_are_values_whose_range_is_checked() {
    let dir = tempdir("bad-input-");
    let torus = asset("torus.obj");
    let torus = torus.to_str().expect("a UTF-8 path");
    let out = dir.path().join("out.ply");
    let out = out.to_str().expect("a UTF-8 path");
    // (arguments, what the error must say)
    let cases: &[(&[&str], &str)] = &[
        (
            &["geodesic", torus, "-o", out, "--source", "-1"],
            "'--source <V>'",
        ),
        (
            &["remesh", torus, "-o", out, "--length", "-1"],
            "(--length)",
        ),
        (
            &["remesh", torus, "-o", out, "--length", "-0.5x"],
            "(--length)",
        ),
        (
            &["remesh", torus, "-o", out, "--iterations", "-1"],
            "'--iterations <ITERATIONS>'",
        ),
        (
            &["remesh", torus, "-o", out, "--feature-angle", "-30"],
            "(--feature-angle)",
        ),
        (
            &["remesh", torus, "-o", out, "--capacity-factor", "-2"],
            "(--capacity-factor)",
        ),
        (
            &["remesh", torus, "-o", out, "--patch-factor", "-2"],
            "(--patch-factor)",
        ),
        (
            &["remesh", torus, "-o", out, "--patch-size", "-8"],
            "'--patch-size <PATCH_SIZE>'",
        ),
        (&["smooth", torus, "-o", out, "--dt", "-1"], "(--dt)"),
        (
            &["smooth", torus, "-o", out, "--tolerance", "-1e-5"],
            "(--tolerance)",
        ),
        (&["track", "-o", out, "--dt", "-0.05"], "(--dt)"),
        (&["track", "-o", out, "--every", "-2"], "'--every <K>'"),
        (
            &["polylla", "--random", "-5", "-o", out],
            "'--random <RANDOM>'",
        ),
        (
            &["polylla", "--random", "5", "--seed", "-5", "-o", out],
            "'--seed <SEED>'",
        ),
        (
            &["bench", "remesh", "--subdivisions", "-1,2"],
            "'--subdivisions <SUBDIVISIONS>'",
        ),
        (&["bench", "queries", "--reps", "-3"], "'--reps <REPS>'"),
    ];
    for (args, says) in cases {
        let out = cavity()
            .args(*args)
            .args(["--device", device()])
            .output()
            .expect("run");
        let stderr = fails(&out);
        assert!(!stderr.contains("-- -"), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    assert!(names(dir.path()).is_empty());
}

#[test]
fn a_missing_output_directory_is_named_before_any_work() {
    let dir = tempdir("bad-input-");
    let output = dir.path().join("missing").join("x.ply");
    let out = cavity()
        .args(["normals", "--device", device()])
        .arg(asset("torus.obj"))
        .arg("-o")
        .arg(&output)
        .output()
        .expect("run");
    let stderr = fails(&out);
    assert!(stderr.contains("x.ply: directory"), "{stderr}");
    assert!(stderr.contains("does not exist"), "{stderr}");
    // A volumetric output into a missing directory (written by another
    // crate through `cavity::io::write_bytes`) names the output too.
    let input = dir.path().join("tet.mesh");
    std::fs::write(
        &input,
        "MeshVersionFormatted 2\nDimension 3\nVertices\n4\n0 0 0 0\n1 0 0 0\n0 1 0 0\n0 0 1 0\nTetrahedra\n1\n1 2 3 4 0\nEnd\n",
    )
    .expect("write");
    let out = cavity()
        .args(["tet", "convert"])
        .arg(&input)
        .arg("-o")
        .arg(dir.path().join("missing").join("x.vtk"))
        .output()
        .expect("run");
    let stderr = fails(&out);
    assert!(stderr.contains("x.vtk"), "{stderr}");
    assert_eq!(names(dir.path()), ["tet.mesh"]);
}

#[test]
fn files_that_are_no_surface_mesh_name_the_command_that_reads_them() {
    let dir = tempdir("bad-input-");
    let volume = dir.path().join("tet.mesh");
    std::fs::write(
        &volume,
        "MeshVersionFormatted 2\nDimension 3\nVertices\n4\n0 0 0 0\n1 0 0 0\n0 1 0 0\n0 0 1 0\nTetrahedra\n1\n1 2 3 4 0\nEnd\n",
    )
    .expect("write");
    let out = cavity().arg("info").arg(&volume).output().expect("run");
    let stderr = fails(&out);
    assert!(stderr.contains("tet.mesh: a volumetric mesh"), "{stderr}");
    assert!(stderr.contains("`cavity tet info "), "{stderr}");
    // A 2D point set (as Triangle's greenland.node): remeshing names the
    // input, not the default output made from its name.
    let points = dir.path().join("points.node");
    std::fs::write(&points, "# points\n4 2 0 0\n1 0 0\n2 1 0\n3 0 1\n4 1 1\n").expect("write");
    let out = cavity()
        .current_dir(dir.path())
        .args(["remesh", "--device", device(), "points.node"])
        .output()
        .expect("run");
    let stderr = fails(&out);
    assert!(stderr.contains("points.node: a 2D point set"), "{stderr}");
    assert!(stderr.contains("`cavity polylla points.node"), "{stderr}");
    assert!(!stderr.contains("remeshed"), "{stderr}");
    assert_eq!(names(dir.path()), ["points.node", "tet.mesh"]);
}

#[test]
fn small_models_report_lengths_in_significant_digits() {
    let dir = tempdir("bad-input-");
    let mut torus = cavity::io::read_mesh(&asset("torus.obj"))
        .expect("torus")
        .mesh;
    for p in &mut torus.positions {
        *p = p.map(|c| c * 1e-6);
    }
    let input = dir.path().join("tiny.obj");
    cavity::io::write_mesh(&input, &torus, None, cavity::io::Format::Obj).expect("write");
    let out = cavity()
        .args(["remesh", "--device", device(), "--iterations", "1"])
        .arg(&input)
        .arg("-o")
        .arg(dir.path().join("out.obj"))
        .output()
        .expect("run");
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("target length L = "))
        .expect("the target length");
    let value: f64 = line["target length L = ".len()..]
        .parse()
        .expect("a number");
    assert!(value > 0.0 && value < 1e-5, "{line}");
    assert!(line.contains('e'), "{line}");
}

#[test]
fn oversized_remeshing_is_refused_with_its_estimate() {
    let dir = tempdir("bad-input-");
    // An absurd length: more faces than any layout holds.
    let out = cavity()
        .args(["remesh", "--device", device(), "--length", "1e-6x"])
        .arg(asset("torus.obj"))
        .arg("-o")
        .arg(dir.path().join("out.ply"))
        .output()
        .expect("run");
    let stderr = fails(&out);
    assert!(stderr.contains("faces"), "{stderr}");
    assert!(stderr.trim_end().ends_with("(--length)"), "{stderr}");
    // A length whose layout fits the indices but not the memory allowed.
    let started = Instant::now();
    let out = cavity()
        .env("CAVITY_MEMORY_LIMIT", "256M")
        .args(["remesh", "--device", device(), "--length", "0.01x"])
        .arg(asset("torus.obj"))
        .arg("-o")
        .arg(dir.path().join("out.ply"))
        .output()
        .expect("run");
    let stderr = fails(&out);
    assert!(stderr.contains("of host memory"), "{stderr}");
    assert!(
        stderr.contains("more than the 256.0 MiB available"),
        "{stderr}"
    );
    assert!(stderr.contains("GiB"), "{stderr}");
    assert!(stderr.trim_end().ends_with("(--length)"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(60));
    // Any dynamic mesh is checked before it is allocated.
    let out = cavity()
        .env("CAVITY_MEMORY_LIMIT", "64M")
        .args(["delaunay", "--device", device(), "--patch-factor", "1000"])
        .arg(asset("torus.obj"))
        .arg("-o")
        .arg(dir.path().join("out.ply"))
        .output()
        .expect("run");
    let stderr = fails(&out);
    assert!(stderr.contains("the dynamic mesh needs"), "{stderr}");
    assert!(
        stderr.contains("more than the 64.0 MiB of host memory available"),
        "{stderr}"
    );
    assert!(
        stderr
            .trim_end()
            .ends_with("(--patch-factor, --capacity-factor)"),
        "{stderr}"
    );
    assert!(names(dir.path()).is_empty());
}

#[test]
fn an_interrupted_write_leaves_nothing_behind() {
    use std::io::Read;
    for signal in ["TERM", "INT", "HUP"] {
        let dir = tempdir("bad-input-");
        let output = dir.path().join("out.ply");
        let mut child = cavity()
            .env(cavity::io::PAUSE_BEFORE_RENAME, "60000")
            .args(["normals", "--device", device()])
            .arg(asset("torus.obj"))
            .arg("-o")
            .arg(&output)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn");
        // Wait until the output is written in full beside its destination.
        let started = Instant::now();
        while !names(dir.path()).iter().any(|n| n.starts_with(".tmp")) {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "no temporary file"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let killed = std::process::Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status()
            .expect("kill");
        assert!(killed.success());
        let status = child.wait().expect("wait");
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .expect("stderr")
            .read_to_string(&mut stderr)
            .expect("stderr");
        let number = match signal {
            "HUP" => 1,
            "INT" => 2,
            _ => 15,
        };
        assert_eq!(status.code(), Some(128 + number), "{signal}: {stderr}");
        assert!(
            names(dir.path()).is_empty(),
            "{signal}: {:?}",
            names(dir.path())
        );
    }
}

#[test]
fn long_commands_print_progress_lines_off_a_terminal() {
    let dir = tempdir("bad-input-");
    let out = cavity()
        .args(["remesh", "--device", device(), "--iterations", "2"])
        .arg(asset("torus.obj"))
        .arg("-o")
        .arg(dir.path().join("out.ply"))
        .output()
        .expect("run");
    let stderr = stderr(&out);
    assert!(out.status.success(), "{stderr}");
    for line in [
        "reading and patching the input",
        "iteration 1/2: split",
        "iteration 2/2: smooth",
        "exporting, writing and checking the output",
    ] {
        assert!(stderr.contains(line), "{line}: {stderr}");
    }
}

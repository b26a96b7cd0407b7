//! The `cavity` binary as a user runs it: exit codes and messages.

use std::path::PathBuf;
use std::process::{Command, Stdio};

fn cavity() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cavity"))
}

fn asset(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../assets")
        .join(name)
}

#[test]
fn a_closed_stdout_ends_the_output_quietly() {
    // `cavity info x | head -1`: the reader goes away before the output is
    // written (here before anything is), which is no error of ours.
    let mut child = cavity()
        .arg("info")
        .arg(asset("torus.obj"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_missing_input_is_an_error_naming_it() {
    let out = cavity()
        .args(["info", "no-such-mesh.obj"])
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with("error:"), "{stderr}");
    assert!(stderr.contains("no-such-mesh.obj"), "{stderr}");
}

#[test]
fn remeshing_writes_its_output_and_nothing_else() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let output = dir.path().join("torus-remeshed.ply");
    let out = cavity()
        .args(["remesh", "--device", "cpu", "--iterations", "1"])
        .arg(asset("torus.obj"))
        .arg("-o")
        .arg(&output)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, ["torus-remeshed.ply"]);
    let written = cavity::io::read_mesh(&output)
        .expect("readable output")
        .mesh;
    assert!(written.num_faces() > 0);
}

/// Stderr of `cavity remesh --device cpu OPTION VALUE torus.obj -o ...`,
/// which must fail with exit code 1.
fn remesh_fails_with(option: &str, value: &str) -> String {
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = cavity()
        .args(["remesh", "--device", "cpu", option, value])
        .arg(asset("torus.obj"))
        .arg("-o")
        .arg(dir.path().join("out.ply"))
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    stderr
}

#[test]
fn a_setting_error_names_the_option_to_change() {
    // The library's error names the setting in its own words; the CLI adds
    // the option.
    let stderr = remesh_fails_with("--iterations", "0");
    assert!(stderr.starts_with("error: iteration count 0"), "{stderr}");
    assert!(stderr.trim_end().ends_with("(--iterations)"), "{stderr}");
    let stderr = remesh_fails_with("--capacity-factor", "0.5");
    assert!(stderr.contains("the capacity factor is 0.5"), "{stderr}");
    assert!(
        stderr.trim_end().ends_with("(--capacity-factor)"),
        "{stderr}"
    );
}

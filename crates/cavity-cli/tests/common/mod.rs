//! What the command-line tests share: the binary, the bundled assets, a
//! temporary directory no message may name, and the check of a clean
//! refusal. Each test file uses a part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `cavity` binary of this build.
pub fn cavity() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cavity"))
}

/// The device the commands run on: `cuda` when `CAVITY_TEST_DEVICE` is
/// `cuda` (the GPU run covers the commands a user types, not only the
/// library calls), the CPU backend otherwise (`cpu` and `cpu-racing`).
pub fn device() -> &'static str {
    match std::env::var("CAVITY_TEST_DEVICE").as_deref() {
        Ok("cuda") => "cuda",
        _ => "cpu",
    }
}

/// A file of the repository's `assets/`.
pub fn asset(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../assets")
        .join(name)
}

/// A temporary directory named `prefix...`, whose name does not look like
/// a temporary file's (`.tmp...`), so that the checks can tell them apart.
pub fn tempdir(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .expect("temporary directory")
}

/// The stderr of `out` as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts `out` failed cleanly: an exit code among `codes`, an `error:`
/// line (the device's line may come first), no panic, no temporary file's
/// name, and every one of `words` in the message; its stderr.
pub fn refused_with(out: &Output, codes: &[i32], words: &[&str]) -> String {
    let stderr = stderr(out);
    assert!(
        out.status.code().is_some_and(|c| codes.contains(&c)),
        "{:?}: {stderr}",
        out.status
    );
    assert!(stderr.lines().any(|l| l.starts_with("error:")), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        !stderr.contains(".tmp"),
        "a temporary file's name: {stderr}"
    );
    for w in words {
        assert!(stderr.contains(w), "{w:?} not in: {stderr}");
    }
    stderr
}

/// [`refused_with`] exit code 1 (the command's own errors).
pub fn refused(out: &Output, words: &[&str]) -> String {
    refused_with(out, &[1], words)
}

/// The names in `dir`, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A tetrahedron's corners, for MEDIT fixtures ([`medit`]).
pub const TET: [[f32; 3]; 4] = [
    [0.0, 0.0, 0.0],
    [1.0, 0.0, 0.0],
    [0.0, 1.0, 0.0],
    [0.0, 0.0, 1.0],
];

/// A MEDIT file in `dir` with `vertices`, the tetrahedra `tets` and the
/// hexahedra `hexes` (numbered from 1).
pub fn medit(
    dir: &Path,
    name: &str,
    vertices: &[[f32; 3]],
    tets: &[[u32; 4]],
    hexes: &[[u32; 8]],
) -> PathBuf {
    let mut s = format!(
        "MeshVersionFormatted 1\nDimension 3\nVertices\n{}\n",
        vertices.len()
    );
    for p in vertices {
        s += &format!("{} {} {} 0\n", p[0], p[1], p[2]);
    }
    if !tets.is_empty() {
        s += &format!("Tetrahedra\n{}\n", tets.len());
        for t in tets {
            s += &format!("{} {} {} {} 0\n", t[0], t[1], t[2], t[3]);
        }
    }
    if !hexes.is_empty() {
        s += &format!("Hexahedra\n{}\n", hexes.len());
        for h in hexes {
            let words: Vec<String> = h.iter().map(u32::to_string).collect();
            s += &format!("{} 0\n", words.join(" "));
        }
    }
    s += "End\n";
    let path = dir.join(name);
    std::fs::write(&path, s).expect("write the input");
    path
}

//! Every command that does work ends with its stage line (issue 55 item
//! 8): each stage, the device's stages named with the device, the whole
//! command, and the device memory it held at most.

use std::path::Path;

mod common;
use common::{asset, cavity, device, medit, tempdir};

/// The last line of stdout of `cavity ARGS`, which must succeed.
fn last_line(args: &[&str]) -> String {
    let out = cavity().args(args).output().expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout.lines().last().unwrap_or_default().to_string()
}

/// Checks the stage line of `cavity ARGS`: it names `stages` in order,
/// the device with the device's stages (`on_device`), the whole command and
/// the device's memory.
fn check(args: &[&str], stages: &[&str], on_device: bool) {
    let line = last_line(args);
    assert!(line.starts_with("stages    "), "{args:?}: {line}");
    let mut at = 0;
    for s in stages {
        let found = line[at..]
            .find(&format!("{s} "))
            .unwrap_or_else(|| panic!("{args:?}: {s:?} not after {at} in {line}"));
        at += found + s.len();
    }
    assert!(line.contains("; whole command "), "{args:?}: {line}");
    let memory = match (on_device, device()) {
        (false, _) => "no device opened",
        (true, "cuda") => "; peak device memory ",
        (true, _) => "; no device memory (CPU backend)",
    };
    assert!(line.contains(memory), "{args:?}: {line}");
    if on_device && device() == "cpu" {
        assert!(line.contains(" s on CPU backend ("), "{args:?}: {line}");
    }
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

#[test]
fn surface_commands_print_their_stages() {
    let dir = tempdir("stages-");
    let torus = asset("torus.obj");
    let torus = path(&torus);
    let out = dir.path().join("out.ply");
    let out = path(&out);
    let d = device();
    check(
        &["info", torus, "--device", d],
        &["read", "start", "topology and defects", "patching"],
        true,
    );
    check(
        &["normals", torus, "-o", out, "--device", d],
        &["read", "start", "input", "normals", "write"],
        true,
    );
    check(
        &["smooth", torus, "-o", out, "--device", d, "--steps", "1"],
        &[
            "read",
            "start",
            "input",
            "smooth",
            "of which solves",
            "write",
        ],
        true,
    );
    check(
        &["denoise", torus, "-o", out, "--device", d],
        &[
            "read",
            "start",
            "input",
            "denoise",
            "of which filtering",
            "write",
        ],
        true,
    );
    check(
        &["geodesic", torus, "-o", out, "--source", "0", "--device", d],
        &[
            "read",
            "start",
            "input",
            "geodesic",
            "of which propagation",
            "write",
        ],
        true,
    );
    check(
        &["delaunay", torus, "-o", out, "--device", d],
        &["read", "start", "input", "flips", "check", "write"],
        true,
    );
    check(
        &[
            "remesh",
            torus,
            "-o",
            out,
            "--device",
            d,
            "--iterations",
            "1",
        ],
        &["read", "input", "start", "patch", "remesh", "write"],
        true,
    );
    let sheet = dir.path().join("sheet.obj");
    check(
        &[
            "track",
            "--grid",
            "12",
            "--frames",
            "2",
            "-o",
            path(&sheet),
            "--device",
            d,
        ],
        &["start", "frames", "write"],
        true,
    );
    let polygons = dir.path().join("polygons.off");
    check(
        &[
            "polylla",
            "--random",
            "500",
            "-o",
            path(&polygons),
            "--device",
            d,
        ],
        &[
            "start",
            "triangulation and half-edges",
            "Polylla",
            "of which kernels",
            "write",
        ],
        true,
    );
}

#[test]
fn volumetric_commands_print_their_stages() {
    let dir = tempdir("stages-");
    // Two tetrahedra and a hexahedron of the unit cube's corners, shifted.
    let mut vertices = Vec::new();
    for z in 0..2 {
        for y in 0..2 {
            for x in 0..3 {
                vertices.push([x as f32, y as f32, z as f32]);
            }
        }
    }
    let v = |x: u32, y: u32, z: u32| 1 + x + 3 * (y + 2 * z);
    let hexes = [[
        v(0, 0, 0),
        v(1, 0, 0),
        v(1, 1, 0),
        v(0, 1, 0),
        v(0, 0, 1),
        v(1, 0, 1),
        v(1, 1, 1),
        v(0, 1, 1),
    ]];
    let cube = medit(dir.path(), "cube.mesh", &vertices, &[], &hexes);
    let cube = path(&cube);
    let tets: Vec<[u32; 4]> = [
        [v(1, 0, 0), v(2, 0, 0), v(2, 1, 0), v(2, 0, 1)],
        [v(1, 0, 0), v(2, 1, 0), v(1, 1, 0), v(1, 1, 1)],
        [v(1, 0, 0), v(2, 1, 0), v(2, 0, 1), v(1, 1, 1)],
        [v(1, 0, 0), v(2, 0, 1), v(1, 0, 1), v(1, 1, 1)],
        [v(2, 1, 0), v(2, 1, 1), v(2, 0, 1), v(1, 1, 1)],
    ]
    .to_vec();
    let tetrahedra = medit(dir.path(), "tets.mesh", &vertices, &tets, &[]);
    let tetrahedra = path(&tetrahedra);
    let out = dir.path().join("out.vtk");
    let out = path(&out);
    let surface = dir.path().join("surface.ply");
    let d = device();
    check(
        &["tet", "info", cube, "--device", d],
        &["read", "start", "operators", "boundary"],
        true,
    );
    check(
        &["tet", "boundary", cube, "-o", path(&surface), "--device", d],
        &["read", "start", "operators", "boundary", "surface", "write"],
        true,
    );
    check(
        &["tet", "smooth", cube, "-o", out, "--device", d],
        &["read", "start", "operators", "smoothing", "write"],
        true,
    );
    check(
        &["tet", "subdivide", cube, "-o", out, "--device", d],
        &["read", "start", "operators", "levels", "write"],
        true,
    );
    // Tetrahedra: their operators built on the device on the GPU.
    check(
        &["tet", "info", tetrahedra, "--device", d],
        &["read", "start", "operators", "boundary"],
        true,
    );
    check(
        &["tet", "convert", cube, "-o", out],
        &["read", "write"],
        false,
    );
    check(
        &[
            "tet", "simplify", tetrahedra, "-o", out, "--ratio", "0.9", "--device", d,
        ],
        &[
            "read",
            "start",
            "simplify",
            "of which operators",
            "collapse",
            "rebuild",
            "write",
            "quality",
            "Hausdorff distance",
        ],
        true,
    );
}

//! `cavity tet simplify` as a user runs it (issue 54): a ratio run on a
//! generated grid writes a valid, smaller mesh with its field and prints
//! the iterations, stages, quality and Hausdorff distance; bad input
//! (cells other than tetrahedra, flat tetrahedra, a missing field) and
//! bad settings are refused naming the file, the element or the option,
//! with no output; tetrahedra listed inside out and a pinched boundary
//! get warnings.

use std::path::{Path, PathBuf};
use std::process::Output;

use cavity_tet_collapse::TetMesh;
use cavity_tet_collapse::checks::check_valid;
use cavity_volume::io::read_volume_fields;

mod common;
use common::{TET, cavity, device, medit, refused, refused_with, tempdir};

/// `cavity tet simplify ARGS --device DEVICE`.
fn simplify(args: &[&str]) -> Output {
    cavity()
        .args(["tet", "simplify"])
        .args(args)
        .args(["--device", device()])
        .output()
        .expect("run")
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A grid of `n³` unit cubes, each split into six positively oriented
/// tetrahedra along its diagonal (conforming across cubes), the inner
/// vertices moved by up to 0.15 along each axis (a fixed pseudo-random
/// pattern), as a legacy VTK file with the point field "temperature"
/// (`x + 2y`); the number of tetrahedra.
fn grid_vtk(dir: &Path, n: u32) -> (PathBuf, usize) {
    let index = |x: u32, y: u32, z: u32| x + (n + 1) * (y + (n + 1) * z);
    let mut points = Vec::new();
    for z in 0..=n {
        for y in 0..=n {
            for x in 0..=n {
                let inner = [x, y, z].iter().all(|&c| c > 0 && c < n);
                let wiggle = |k: u32| {
                    let h = (index(x, y, z) * 3 + k).wrapping_mul(2_654_435_761) >> 16;
                    if inner {
                        0.3 * (f64::from(h % 1000) / 999.0 - 0.5)
                    } else {
                        0.0
                    }
                };
                points.push([
                    f64::from(x) + wiggle(0),
                    f64::from(y) + wiggle(1),
                    f64::from(z) + wiggle(2),
                ]);
            }
        }
    }
    let mut tets = Vec::new();
    for z in 0..n {
        for y in 0..n {
            for x in 0..n {
                for [a, b, c] in [
                    [0, 1, 2],
                    [1, 2, 0],
                    [2, 0, 1],
                    [0, 2, 1],
                    [2, 1, 0],
                    [1, 0, 2],
                ] {
                    let mut d = [[0u32; 3]; 4];
                    d[1][a] = 1;
                    d[2] = d[1];
                    d[2][b] = 1;
                    d[3] = d[2];
                    d[3][c] = 1;
                    let t = d.map(|o| index(x + o[0], y + o[1], z + o[2]));
                    let even = (a + 1) % 3 == b;
                    tets.push(if even { t } else { [t[0], t[2], t[1], t[3]] });
                }
            }
        }
    }
    let mut s = format!(
        "# vtk DataFile Version 4.2\ngrid\nASCII\nDATASET UNSTRUCTURED_GRID\nPOINTS {} double\n",
        points.len()
    );
    for p in &points {
        s += &format!("{} {} {}\n", p[0], p[1], p[2]);
    }
    s += &format!("CELLS {} {}\n", tets.len(), 5 * tets.len());
    for t in &tets {
        s += &format!("4 {} {} {} {}\n", t[0], t[1], t[2], t[3]);
    }
    s += &format!("CELL_TYPES {}\n", tets.len());
    s += &"10\n".repeat(tets.len());
    s += &format!(
        "POINT_DATA {}\nSCALARS temperature float 1\nLOOKUP_TABLE default\n",
        points.len()
    );
    for p in &points {
        s += &format!("{}\n", p[0] + 2.0 * p[1]);
    }
    let path = dir.join("grid.vtk");
    std::fs::write(&path, s).expect("write the input");
    (path, tets.len())
}

/// The mesh and fields at `path`, the mesh checked valid.
fn read_valid(path: &Path) -> (TetMesh, Vec<cavity_volume::io::PointField>) {
    let (cells, fields) = read_volume_fields(path).expect("read the output");
    let mesh = TetMesh::from_cells(cells).expect("tetrahedra");
    check_valid(&mesh, 0.0).expect("a valid output");
    (mesh, fields)
}

#[test]
fn a_ratio_run_writes_a_valid_smaller_mesh_with_its_field() {
    let dir = tempdir("tet-simplify-");
    let (input, cells) = grid_vtk(dir.path(), 6);
    let output = dir.path().join("out.vtk");
    let run = simplify(&[
        input.to_str().unwrap(),
        "-o",
        output.to_str().unwrap(),
        "--ratio",
        "0.3",
    ]);
    let (stdout, stderr) = text(&run);
    assert!(run.status.success(), "{stderr}");
    let target = (0.3 * cells as f64).ceil() as usize;
    for words in [
        "simplified",
        "collapses per iteration:",
        "operators",
        "rebuild",
        "candidates",
        "conflicts",
        "apply",
        "whole command",
        "min dihedral (deg)",
        "mean AMIPS",
        "edges in [4/5 L, 4/3 L] (%)",
        "boundary Hausdorff distance",
        &format!("target of at most {target} tetrahedra reached"),
        "with the field \"temperature\"",
    ] {
        assert!(stdout.contains(words), "{words:?} not in {stdout}");
    }
    assert!(!stderr.contains("warning"), "{stderr}");
    let (mesh, fields) = read_valid(&output);
    assert!(mesh.tets.len() <= target, "{} of {cells}", mesh.tets.len());
    assert_eq!(fields.len(), 1);
    assert_eq!(fields[0].name, "temperature");
    assert_eq!(fields[0].values.len(), mesh.positions.len());
    // The field is x + 2y, linear: interpolated along edges it stays so.
    for (p, v) in mesh.positions.iter().zip(&fields[0].values) {
        assert!((v - (p[0] + 2.0 * p[1])).abs() < 1e-4, "{p:?} {v}");
    }
}

#[test]
fn the_field_criterion_writes_gmsh_and_a_medit_output_drops_the_field() {
    let dir = tempdir("tet-simplify-");
    let (input, cells) = grid_vtk(dir.path(), 4);
    let msh = dir.path().join("out.msh");
    let run = simplify(&[
        input.to_str().unwrap(),
        "-o",
        msh.to_str().unwrap(),
        "--criterion",
        "field",
        "--cells",
        &(cells / 2).to_string(),
        "--placement",
        "endpoint",
    ]);
    let (stdout, stderr) = text(&run);
    assert!(run.status.success(), "{stderr}");
    assert!(
        stdout.contains("criterion field \"temperature\""),
        "{stdout}"
    );
    let (mesh, fields) = read_valid(&msh);
    assert_eq!(fields[0].values.len(), mesh.positions.len());
    let medit = dir.path().join("out.mesh");
    let run = simplify(&[
        input.to_str().unwrap(),
        "-o",
        medit.to_str().unwrap(),
        "--length",
        "1.5",
        "--epsilon-c",
        "3",
    ]);
    let (stdout, stderr) = text(&run);
    assert!(run.status.success(), "{stderr}");
    assert!(stderr.contains("holds no per-vertex field"), "{stderr}");
    assert!(stdout.contains("L = 1.500"), "{stdout}");
    read_valid(&medit);
}

#[test]
fn cells_other_than_tetrahedra_and_flat_tetrahedra_are_refused() {
    let dir = tempdir("tet-simplify-");
    let out = dir.path().join("out.vtk");
    let cube: Vec<[f32; 3]> = (0..8)
        .map(|i| [(i & 1) as f32, ((i >> 1) & 1) as f32, (i >> 2) as f32])
        .collect();
    let hex = medit(
        dir.path(),
        "hex.mesh",
        &cube,
        &[],
        &[[1, 2, 4, 3, 5, 6, 8, 7]],
    );
    refused(
        &simplify(&[hex.to_str().unwrap(), "-o", out.to_str().unwrap()]),
        &["hex.mesh", "cell 0 is a Hexahedron", "tetrahedra only"],
    );
    let mut vertices = TET.to_vec();
    vertices.push([0.4, 0.4, 0.0]);
    let flat = medit(
        dir.path(),
        "flat.mesh",
        &vertices,
        &[[1, 2, 3, 4], [1, 2, 3, 5]],
        &[],
    );
    refused(
        &simplify(&[flat.to_str().unwrap(), "-o", out.to_str().unwrap()]),
        &["flat.mesh", "tetrahedron 1", "inverted or flat", "valid"],
    );
    let empty = medit(dir.path(), "empty.mesh", &TET, &[], &[]);
    refused(
        &simplify(&[empty.to_str().unwrap(), "-o", out.to_str().unwrap()]),
        &["empty.mesh", "no cells"],
    );
    assert!(!out.exists());
}

#[test]
fn inside_out_tetrahedra_and_a_pinched_boundary_are_warned_of() {
    let dir = tempdir("tet-simplify-");
    // Two tetrahedra meeting at one vertex, the second listed inside out.
    let mut vertices = TET.to_vec();
    vertices.extend([[-1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, -1.0]]);
    let pinched = medit(
        dir.path(),
        "pinched.mesh",
        &vertices,
        &[[1, 2, 3, 4], [1, 5, 6, 7]],
        &[],
    );
    let out = dir.path().join("out.vtk");
    let run = simplify(&[pinched.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    let (_, stderr) = text(&run);
    assert!(run.status.success(), "{stderr}");
    for words in [
        "1 of 2 tetrahedra are listed inside out",
        "the first tetrahedron 1",
        "turned outward",
        "not a manifold",
        "feature",
    ] {
        assert!(stderr.contains(words), "{words:?} not in {stderr}");
    }
    read_valid(&out);
}

#[test]
fn a_missing_field_is_refused_naming_the_fields_there_are() {
    let dir = tempdir("tet-simplify-");
    let (input, _) = grid_vtk(dir.path(), 2);
    let out = dir.path().join("out.vtk");
    refused(
        &simplify(&[
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--field",
            "pressure",
        ]),
        &["grid.vtk", "no field \"pressure\"", "\"temperature\""],
    );
    let plain = medit(dir.path(), "plain.mesh", &TET, &[[1, 2, 3, 4]], &[]);
    refused(
        &simplify(&[
            plain.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--criterion",
            "field",
        ]),
        &["plain.mesh", "no per-vertex scalar field"],
    );
    assert!(!out.exists());
}

#[test]
fn settings_out_of_range_are_refused_naming_the_option() {
    let dir = tempdir("tet-simplify-");
    let input = medit(dir.path(), "one.mesh", &TET, &[[1, 2, 3, 4]], &[]);
    let out = dir.path().join("out.mesh");
    let cases: [(&[&str], &[&str]); 6] = [
        (
            &["--ratio", "1.5"],
            &["target ratio", "(0, 1]", "1.5", "--ratio"],
        ),
        (&["--ratio", "0"], &["(0, 1]", "--ratio"]),
        (&["--cells", "0"], &["at least 1", "--cells"]),
        (&["--length=-1"], &["positive and finite", "--length"]),
        (
            &["--criterion", "quality", "--length", "2"],
            &["ratio or a cell count", "--length"],
        ),
        (&["--max-error", "0.1"], &["--criterion field"]),
    ];
    for (args, words) in cases {
        let mut all = vec![input.to_str().unwrap(), "-o", out.to_str().unwrap()];
        all.extend_from_slice(args);
        refused(&simplify(&all), words);
        assert!(!out.exists());
    }
    // Two targets: clap's usage error.
    let run = simplify(&[
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--ratio",
        "0.5",
        "--cells",
        "3",
    ]);
    refused_with(&run, &[2], &["cannot be used with"]);
    // The input as the output.
    refused(
        &simplify(&[input.to_str().unwrap(), "-o", input.to_str().unwrap()]),
        &["refusing to overwrite"],
    );
}

#[test]
fn the_benchmark_prints_every_variant() {
    let dir = tempdir("cavity-tet-bench");
    let (path, cells) = grid_vtk(dir.path(), 4);
    let out = cavity()
        .args(["bench", "tet-simplify"])
        .arg(&path)
        .args(["--reps", "1", "--device", device()])
        .output()
        .expect("run");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains(&format!("{cells} tetrahedra")), "{stdout}");
    for variant in [
        "| two passes |",
        "| greedy |",
        "| Gautron |",
        "| two passes, CPU backend |",
        "| sequential |",
    ] {
        assert!(stdout.contains(variant), "{variant}: {stdout}");
    }
}

#[test]
fn the_benchmark_gives_peers_it_cannot_run_a_row_saying_why() {
    let dir = tempdir("cavity-tet-bench-peers");
    let (path, _) = grid_vtk(dir.path(), 3);
    let python = dir.path().join("no-such-python");
    let out = cavity()
        .args(["bench", "tet-simplify"])
        .arg(&path)
        .args(["--reps", "1", "--device", device(), "--python"])
        .arg(&python)
        .output()
        .expect("run");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("peers (xtask/peers/tet_peers.py) asked for"),
        "{stdout}"
    );
    let row = stdout
        .lines()
        .find(|l| l.starts_with("| peers |"))
        .unwrap_or_else(|| panic!("no peers row: {stdout}"));
    assert!(row.contains("no-such-python"), "{row}");
}

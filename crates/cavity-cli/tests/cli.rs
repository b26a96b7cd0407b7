//! The `cavity` binary as a user runs it: exit codes and messages.

use std::process::Stdio;

mod common;
use common::{asset, cavity, device};

/// `cavity ARGS INPUT -o OUTPUT`, which must succeed; its stdout and
/// stderr.
fn succeeds(args: &[&str], input: &std::path::Path, output: &std::path::Path) -> (String, String) {
    let out = cavity()
        .args(args)
        .arg(input)
        .arg("-o")
        .arg(output)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    (String::from_utf8_lossy(&out.stdout).into_owned(), stderr)
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
    succeeds(
        &["remesh", "--device", device(), "--iterations", "1"],
        &asset("torus.obj"),
        &output,
    );
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

/// Stderr of `cavity remesh --device D OPTION VALUE torus.obj -o ...`,
/// which must fail with exit code 1.
fn remesh_fails_with(option: &str, value: &str) -> String {
    let dir = tempfile::tempdir().expect("temporary directory");
    let out = cavity()
        .args(["remesh", "--device", device(), option, value])
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

/// The distances of a binary little-endian PLY written by `cavity
/// geodesic` (vertex properties x, y, z, distance).
fn ply_distances(path: &std::path::Path) -> Vec<f32> {
    let bytes = std::fs::read(path).expect("output");
    let end = b"end_header\n";
    let at = bytes
        .windows(end.len())
        .position(|w| w == end)
        .expect("a header")
        + end.len();
    let header = String::from_utf8_lossy(&bytes[..at]);
    assert!(header.contains("format binary_little_endian"), "{header}");
    assert!(
        header.contains("property float z\nproperty float distance\nelement face"),
        "{header}"
    );
    let vertices: usize = header
        .lines()
        .find_map(|l| l.strip_prefix("element vertex "))
        .expect("vertex count")
        .parse()
        .expect("a count");
    bytes[at..at + 16 * vertices]
        .as_chunks::<16>()
        .0
        .iter()
        .map(|v| f32::from_le_bytes([v[12], v[13], v[14], v[15]]))
        .collect()
}

#[test]
fn geodesic_writes_the_distance_as_a_ply_property() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let output = dir.path().join("torus-distance.ply");
    let (stdout, _) = succeeds(
        &[
            "geodesic",
            "--device",
            device(),
            "--source",
            "0",
            "--source",
            "7",
        ],
        &asset("torus.obj"),
        &output,
    );
    assert!(stdout.contains("toplesets"), "{stdout}");
    let torus = cavity::io::read_mesh(&asset("torus.obj"))
        .expect("torus")
        .mesh;
    let written = cavity::io::read_mesh(&output)
        .expect("readable output")
        .mesh;
    assert_eq!(written, torus);
    let (want, _) = cavity_geodesic::geodesic_distance(
        &torus,
        &[0, 7],
        &cavity_geodesic::GeodesicSettings::default(),
        // The device the command ran on: its patches (and so the order
        // the propagation converges in, within its tolerance) are that
        // device's.
        &cavity::backend::Backend::select(device().parse().expect("device"))
            .expect("backend")
            .0,
    )
    .expect("geodesic");
    assert_eq!(ply_distances(&output), want);
}

#[test]
fn geodesic_beside_an_obj_writes_a_column_with_inf_where_unreachable() {
    let dir = tempfile::tempdir().expect("temporary directory");
    // Two triangles apart and a vertex of no face.
    let input = dir.path().join("apart.obj");
    std::fs::write(
        &input,
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 5 0 0\nv 6 0 0\nv 5 1 0\nv 9 9 9\nf 1 2 3\nf 4 5 6\n",
    )
    .expect("input");
    let output = dir.path().join("apart-out.obj");
    let (_, stderr) = succeeds(
        &["geodesic", "--device", device(), "--source", "1"],
        &input,
        &output,
    );
    assert!(stderr.contains("4 vertices are not connected"), "{stderr}");
    let column =
        std::fs::read_to_string(dir.path().join("apart-out-distance.txt")).expect("column");
    let d: Vec<f32> = column
        .lines()
        .map(|l| l.parse().expect("a number"))
        .collect();
    assert_eq!(d.len(), 7);
    assert_eq!(&d[..3], &[1.0, 0.0, std::f32::consts::SQRT_2]);
    assert!(d[3..].iter().all(|x| x.is_infinite()), "{column}");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
}

#[test]
fn geodesic_refuses_bad_sources_and_tolerances_by_name() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let run = |args: &[&str]| {
        let out = cavity()
            .args(["geodesic", "--device", device()])
            .args(args)
            .arg(asset("torus.obj"))
            .arg("-o")
            .arg(dir.path().join("out.ply"))
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(1));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let stderr = run(&["--source", "4608"]);
    assert!(
        stderr.contains("source vertex 4608 is out of range: the mesh has 4608 vertices"),
        "{stderr}"
    );
    let stderr = run(&["--source", "0", "--tolerance", "0"]);
    assert!(stderr.contains("the tolerance must be above 0"), "{stderr}");
    assert_eq!(std::fs::read_dir(dir.path()).expect("list").count(), 0);
}

#[test]
fn smoothing_moves_the_interior_and_keeps_the_counts() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let output = dir.path().join("cube-smooth.off");
    let (stdout, _) = succeeds(
        &["smooth", "--device", device(), "--steps", "2"],
        &asset("bumpy-cube.obj"),
        &output,
    );
    assert_eq!(stdout.matches("CG iterations").count(), 2, "{stdout}");
    let cube = cavity::io::read_mesh(&asset("bumpy-cube.obj"))
        .expect("cube")
        .mesh;
    let written = cavity::io::read_mesh(&output)
        .expect("readable output")
        .mesh;
    assert_eq!(written.faces, cube.faces);
    assert!(written.positions != cube.positions);
}

#[test]
fn smooth_and_geodesic_setting_errors_name_their_option() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let fails = |args: &[&str]| {
        let out = cavity()
            .args(args)
            .args(["--device", device()])
            .arg(asset("torus.obj"))
            .arg("-o")
            .arg(dir.path().join("out.ply"))
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(1));
        String::from_utf8_lossy(&out.stderr).trim_end().to_string()
    };
    let stderr = fails(&["smooth", "--steps", "0"]);
    assert!(stderr.ends_with("must be at least 1 (--steps)"), "{stderr}");
    let stderr = fails(&["smooth", "--dt=-1"]);
    assert!(stderr.ends_with("(--dt)"), "{stderr}");
    let stderr = fails(&["geodesic", "--source", "0", "--tolerance", "1"]);
    assert!(stderr.ends_with("(--tolerance)"), "{stderr}");
    let stderr = fails(&["denoise", "--iterations", "0"]);
    assert!(
        stderr.ends_with("must be at least 1 (--iterations)"),
        "{stderr}"
    );
    let stderr = fails(&["denoise", "--max-hops", "0"]);
    assert!(stderr.ends_with("(--max-hops)"), "{stderr}");
    // STL has no vertex list for a distance column.
    let out = cavity()
        .args(["geodesic", "--device", device(), "--source", "0"])
        .arg(asset("torus.obj"))
        .arg("-o")
        .arg(dir.path().join("out.stl"))
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("STL has no vertex list"), "{stderr}");
    assert_eq!(std::fs::read_dir(dir.path()).expect("list").count(), 0);
}

#[test]
fn denoising_moves_vertices_keeps_the_faces_and_never_the_input() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let output = dir.path().join("cube-denoised.ply");
    let (stdout, _) = succeeds(
        &["denoise", "--device", device(), "--iterations", "2"],
        &asset("bumpy-cube.obj"),
        &output,
    );
    assert!(stdout.contains("by 2 iteration(s)"), "{stdout}");
    assert!(stdout.contains("largest neighbourhood"), "{stdout}");
    let cube = cavity::io::read_mesh(&asset("bumpy-cube.obj"))
        .expect("cube")
        .mesh;
    let written = cavity::io::read_mesh(&output)
        .expect("readable output")
        .mesh;
    assert_eq!(written.faces, cube.faces);
    assert_eq!(written.positions.len(), cube.positions.len());
    assert!(written.positions != cube.positions);
    // The input is never the output.
    let copy = dir.path().join("copy.obj");
    std::fs::copy(asset("bumpy-cube.obj"), &copy).expect("copy");
    let out = cavity()
        .args(["denoise", "--device", device()])
        .arg(&copy)
        .arg("-o")
        .arg(&copy)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        std::fs::read(&copy).expect("read"),
        std::fs::read(asset("bumpy-cube.obj")).expect("read")
    );
}

#[test]
fn tet_commands_read_write_and_refuse_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("two-hexes.mesh");
    let mut text = String::from("MeshVersionFormatted 2\nDimension 3\nVertices\n12\n");
    for (x, y, z) in (0..3).flat_map(|x| [(x, 0, 0), (x, 1, 0), (x, 0, 1), (x, 1, 1)]) {
        text += &format!("{x} {y} {z} 0\n");
    }
    // Vertex (x, y, z) is number 4x + y + 2z + 1.
    text += "Hexahedra\n2\n1 5 6 2 3 7 8 4 0\n5 9 10 6 7 11 12 8 0\nEnd\n";
    std::fs::write(&input, &text).unwrap();
    let info = cavity()
        .args(["tet", "info", "--device", device()])
        .arg(&input)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&info.stdout);
    assert!(
        info.status.success(),
        "{}",
        String::from_utf8_lossy(&info.stderr)
    );
    assert!(
        stdout.contains("12 vertices, 20 edges, 11 faces, 2 cells"),
        "{stdout}"
    );
    assert!(
        stdout.contains("boundary: 10 faces, 20 edges, 12 vertices"),
        "{stdout}"
    );
    let surface = dir.path().join("boundary.obj");
    succeeds(&["tet", "boundary", "--device", device()], &input, &surface);
    let read = cavity::io::read_mesh(&surface).unwrap().mesh;
    assert_eq!((read.num_vertices(), read.num_faces()), (12, 20));
    let smoothed = dir.path().join("smoothed.mesh");
    succeeds(&["tet", "smooth", "--device", device()], &input, &smoothed);
    assert!(
        std::fs::read_to_string(&smoothed)
            .unwrap()
            .contains("Hexahedra\n2\n")
    );
    // Two levels of subdivision: 2 × 8 × 8 hexahedra, as MSH 2.2 binary,
    // then converted to VTK and read back.
    let subdivided = dir.path().join("subdivided.msh");
    succeeds(
        &[
            "tet",
            "subdivide",
            "--device",
            device(),
            "--levels",
            "2",
            "--binary",
            "--msh-version",
            "2.2",
        ],
        &input,
        &subdivided,
    );
    let vtk = dir.path().join("subdivided.vtk");
    succeeds(&["tet", "convert"], &subdivided, &vtk);
    let info = cavity()
        .args(["tet", "info", "--device", device()])
        .arg(&vtk)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&info.stdout);
    assert!(
        stdout.contains("128 cells") && stdout.contains("Hexahedron: 128"),
        "{stdout}"
    );
    let again = cavity()
        .args(["tet", "smooth", "--device", device()])
        .arg(&input)
        .arg("-o")
        .arg(&input)
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert_eq!(
        std::fs::read_to_string(&input).unwrap(),
        text,
        "the input is untouched"
    );
    // A conversion builds no operators but checks each cell.
    std::fs::write(&input, text.replace("5 9 10 6", "5 9 9 6")).unwrap();
    let degenerate = cavity()
        .args(["tet", "convert"])
        .arg(&input)
        .arg("-o")
        .arg(dir.path().join("degenerate.vtk"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&degenerate.stderr);
    assert!(
        !degenerate.status.success() && stderr.contains("cell 1 is degenerate"),
        "{stderr}"
    );
    std::fs::write(&input, text.replace("5 9 10 6", "5 9 x 6")).unwrap();
    let bad = cavity().args(["tet", "info"]).arg(&input).output().unwrap();
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        !bad.status.success() && stderr.contains("two-hexes.mesh:20:"),
        "{stderr}"
    );
}

#[test]
fn polylla_writes_polygons_and_a_picture_and_names_bad_lines() {
    let dir = tempfile::tempdir().unwrap();
    let off = dir.path().join("random.off");
    let svg = dir.path().join("random.svg");
    let out = cavity()
        .args([
            "polylla",
            "--random",
            "2000",
            "--seed",
            "3",
            "--device",
            device(),
            "-o",
        ])
        .arg(&off)
        .arg("--svg")
        .arg(&svg)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("2000 vertices")
            && stdout.contains("polygons")
            && stdout.contains("barrier tips repaired"),
        "{stdout}"
    );
    assert!(
        stdout.contains("longest edges") && stdout.contains("scan and compact"),
        "{stdout}"
    );
    let text = std::fs::read_to_string(&off).unwrap();
    assert!(text.starts_with("OFF\n2000 "), "{}", &text[..20]);
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<path"));
    // A triangulation read back from OFF; a non-planar one refused with
    // its line; the input never overwritten.
    let tri = dir.path().join("square.off");
    std::fs::write(
        &tri,
        "OFF\n4 2 0\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n3 0 1 2\n3 0 2 3\n",
    )
    .unwrap();
    let (stdout, _) = succeeds(
        &["polylla", "--device", device()],
        &tri,
        &dir.path().join("square-poly.off"),
    );
    assert!(stdout.contains("2 triangles -> 1 polygons"), "{stdout}");
    let again = cavity()
        .args(["polylla", "--device", device()])
        .arg(&tri)
        .arg("-o")
        .arg(&tri)
        .output()
        .unwrap();
    assert!(!again.status.success());
    std::fs::write(&tri, "OFF\n3 1 0\n0 0 0\n1 0 2\n0 1 0\n3 0 1 2\n").unwrap();
    let bad = cavity()
        .args(["polylla", "--device", device()])
        .arg(&tri)
        .arg("-o")
        .arg(dir.path().join("x.off"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        !bad.status.success() && stderr.contains("square.off:4:"),
        "{stderr}"
    );
}

/// The bunny scan's non-manifold edges and vertices are kept by every
/// operation that moves vertices or flips edges, and each says so once:
/// the input's defects, surveyed on the backend before the work
/// (`InputOn::with_defects`), reach the user.
#[test]
fn non_manifold_input_is_warned_about_once() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let scan = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/scans/StanfordBunny.ply");
    let output = dir.path().join("out.ply");
    for command in ["smooth", "denoise", "normals", "delaunay", "remesh"] {
        let iterations: &[&str] = if command == "remesh" {
            &["--iterations", "1"]
        } else {
            &[]
        };
        let out = cavity()
            .args([command, "--device", device()])
            .args(iterations)
            .arg(&scan)
            .arg("-o")
            .arg(&output)
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{command}: {stderr}");
        let warnings = stderr
            .matches("non-manifold edges (more than two faces)")
            .count();
        assert_eq!(warnings, 1, "{command}: {stderr}");
    }
}

/// `info` patches a small input on the host under `--device auto` (the
/// GPU's start would cost more than the patching) and says so.
#[test]
fn info_patches_a_small_input_on_the_host() {
    let out = cavity()
        .arg("info")
        .arg(asset("torus.obj"))
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("patching on the host"), "{stderr}");
    let line = stdout.lines().last().unwrap_or_default();
    assert!(
        line.contains("patching ") && line.contains(" s on CPU backend ("),
        "{line}"
    );
}

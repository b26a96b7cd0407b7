//! `cavity bench io`: the file I/O benchmark runs on a real mesh, prints
//! its table and leaves nothing behind.

mod common;
use common::{asset, cavity, names, refused, tempdir};

#[test]
fn bench_io_times_every_surface_format_and_cleans_up() {
    let dir = tempdir("bench-io");
    let bunny = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/scans/StanfordBunny.ply");
    let out = cavity()
        .args(["bench", "io", "--reps", "1", "--dir"])
        .arg(dir.path())
        .arg(&bunny)
        .arg(asset("torus.obj"))
        .args(["--subdivide", "1"])
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(stdout.contains("cores"), "{stdout}");
    assert!(stdout.contains("page cache alone"), "{stdout}");
    let rows: Vec<&str> = stdout.lines().filter(|l| l.contains(" faces) |")).collect();
    assert_eq!(rows.len(), 8, "{stdout}");
    for (k, format) in ["PLY binary", "STL binary", "PLY ASCII", "OBJ"]
        .iter()
        .enumerate()
    {
        assert!(rows[k].contains("StanfordBunny.ply /1 (399140 faces)"));
        assert!(rows[k].contains(&format!("| {format} |")), "{}", rows[k]);
        assert!(rows[k + 4].contains("torus.obj /1 (36864 faces)"));
    }
    // Binary PLY of the subdivided bunny: 13 bytes a face, 12 a vertex.
    let cells: Vec<&str> = rows[0].split('|').map(str::trim).collect();
    let bytes: u64 = cells[3].parse().expect("bytes");
    assert!(bytes > 13 * 399_140 + 12 * 150_000, "{}", rows[0]);
    for speed in &cells[4..] {
        if !speed.is_empty() {
            assert!(speed.parse::<f64>().is_ok_and(|x| x > 0.0), "{}", rows[0]);
        }
    }
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
}

#[test]
fn bench_io_times_the_volumetric_formats_on_a_grid() {
    let dir = tempdir("bench-io");
    let out = cavity()
        .args(["bench", "io", "--reps", "1", "--volume-grid", "6", "--dir"])
        .arg(dir.path())
        .arg(asset("torus.obj"))
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(
        stdout.contains("a grid of 216 hexahedra, 343 vertices"),
        "{stdout}"
    );
    for format in cavity_volume::bench::IO_FORMATS {
        let row = stdout
            .lines()
            .find(|l| l.starts_with(&format!("| {format} |")))
            .unwrap_or_else(|| panic!("{format} not in {stdout}"));
        let cells = if format == "TetGen" { "1296" } else { "216" };
        assert!(row.contains(&format!("| {cells} |")), "{row}");
    }
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
}

#[test]
fn bench_io_refuses_a_volumetric_mesh_and_a_missing_directory() {
    let dir = tempdir("bench-io");
    let mesh = dir.path().join("cells.msh");
    std::fs::write(&mesh, "$MeshFormat\n").expect("write");
    let out = cavity()
        .args(["bench", "io", "--reps", "1", "--dir"])
        .arg(dir.path())
        .arg(&mesh)
        .output()
        .expect("run");
    refused(&out, &["cells.msh", "cavity tet"]);
    let out = cavity()
        .args(["bench", "io", "--reps", "1", "--dir"])
        .arg(dir.path().join("missing"))
        .arg(asset("torus.obj"))
        .output()
        .expect("run");
    refused(&out, &["missing"]);
    assert_eq!(names(dir.path()), ["cells.msh"]);
}

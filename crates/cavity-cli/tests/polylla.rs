//! `cavity polylla` as a new user runs it (issue 52 item 5): the output in
//! the format its extension names, and bad input, bad sizes and bad
//! output names refused with a message naming them, a non-zero exit, no
//! panic and nothing written.

use std::process::Output;

mod common;
use common::{cavity, device, names, refused, tempdir};

/// `cavity polylla --device D ARGS` (D: `common::device`).
fn polylla(args: &[&std::ffi::OsStr]) -> Output {
    cavity()
        .args(["polylla", "--device", device()])
        .args(args)
        .output()
        .expect("run")
}

#[test]
fn the_output_is_written_in_the_format_its_extension_names() {
    let dir = tempdir("polylla-cli-");
    let ply = dir.path().join("random.ply");
    let out = polylla(&[
        "--random".as_ref(),
        "500".as_ref(),
        "-o".as_ref(),
        ply.as_os_str(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&ply).unwrap();
    assert!(
        text.starts_with("ply\nformat ascii 1.0\n"),
        "{}",
        &text[..40]
    );
    assert!(text.contains("element vertex 500\n"), "{text:.300}");
    assert!(
        text.contains("property list uchar int vertex_indices\nend_header\n"),
        "{text:.300}"
    );
    // The faces after the header and the vertices: polygons, not triangles
    // only, and as many as the command reported.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let polygons: usize = stdout
        .split(" polygons")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        text.contains(&format!("element face {polygons}\n")),
        "{stdout}"
    );
    let body = text.split("end_header\n").nth(1).unwrap();
    let faces: Vec<&str> = body.lines().skip(500).collect();
    assert_eq!(faces.len(), polygons);
    assert!(faces.iter().any(|f| f.split(' ').count() > 4), "no polygon");
    let svg = dir.path().join("random.SVG");
    let out = polylla(&[
        "--random".as_ref(),
        "500".as_ref(),
        "-o".as_ref(),
        svg.as_os_str(),
    ]);
    assert!(out.status.success());
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
    for bad in ["random.obj", "random.txt", "random"] {
        let path = dir.path().join(bad);
        let out = polylla(&[
            "--random".as_ref(),
            "500".as_ref(),
            "-o".as_ref(),
            path.as_os_str(),
        ]);
        refused(&out, &[bad, ".off", ".ply", ".svg"]);
    }
    assert_eq!(names(dir.path()), ["random.SVG", "random.ply"]);
}

#[test]
fn points_that_hold_no_triangle_are_refused_with_their_counts() {
    let dir = tempdir("polylla-cli-");
    let cases = [
        (
            "two.node",
            "2 2 0 0\n1 0 0\n2 1 0\n",
            "2 points, 2 distinct",
        ),
        (
            "line.node",
            "4 2 0 0\n1 0 0\n2 1 1\n3 2 2\n4 3 3\n",
            "all 4 distinct points (of 4) lie on one line",
        ),
        (
            "same.node",
            "3 2 0 0\n1 5 5\n2 5 5\n3 5 5\n",
            "3 points, 1 distinct",
        ),
    ];
    for (name, text, why) in cases {
        let input = dir.path().join(name);
        std::fs::write(&input, text).unwrap();
        let output = dir.path().join("out.off");
        let out = polylla(&[input.as_os_str(), "-o".as_ref(), output.as_os_str()]);
        refused(&out, &[name, "no triangle can be formed", why]);
        assert!(!output.exists());
        assert_eq!(std::fs::read_to_string(&input).unwrap(), text);
    }
    let empty = dir.path().join("empty.off");
    std::fs::write(&empty, "OFF\n3 0 0\n0 0 0\n1 0 0\n0 1 0\n").unwrap();
    let output = dir.path().join("out.off");
    let out = polylla(&[empty.as_os_str(), "-o".as_ref(), output.as_os_str()]);
    refused(&out, &["empty.off", "no triangles"]);
    assert!(!output.exists());
}

#[test]
fn generated_inputs_too_small_or_too_large_are_refused_before_any_work() {
    let dir = tempdir("polylla-cli-");
    let output = dir.path().join("out.off");
    for n in ["0", "1", "2"] {
        let out = polylla(&[
            "--random".as_ref(),
            n.as_ref(),
            "-o".as_ref(),
            output.as_os_str(),
        ]);
        refused(&out, &[&format!("--random {n}"), "at least 3"]);
    }
    let out = polylla(&[
        "--grid".as_ref(),
        "1".as_ref(),
        "-o".as_ref(),
        output.as_os_str(),
    ]);
    refused(&out, &["--grid 1", "at least 2"]);
    // 10^10 points: past the kernels' indices and any host's memory; the
    // estimate and the setting to lower named, at once.
    let t = std::time::Instant::now();
    let out = polylla(&[
        "--grid".as_ref(),
        "100000".as_ref(),
        "-o".as_ref(),
        output.as_os_str(),
    ]);
    refused(
        &out,
        &[
            "--grid 100000",
            "10000000000 points",
            "GB of host memory",
            "lower --grid",
        ],
    );
    let out = cavity()
        .args([
            "polylla",
            "--device",
            "auto",
            "--random",
            "50000000000",
            "-o",
        ])
        .arg(&output)
        .output()
        .expect("run");
    refused(
        &out,
        &[
            "--random 50000000000",
            "GB of host memory",
            "lower --random",
        ],
    );
    assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
}

#[test]
fn outputs_are_checked_before_any_work_and_errors_name_them() {
    let dir = tempdir("polylla-cli-");
    let off = dir.path().join("out.off");
    let svg = dir.path().join("missing-dir").join("x.svg");
    let out = polylla(&[
        "--random".as_ref(),
        "500".as_ref(),
        "-o".as_ref(),
        off.as_os_str(),
        "--svg".as_ref(),
        svg.as_os_str(),
    ]);
    refused(&out, &["x.svg", "missing-dir", "does not exist"]);
    let off_missing = dir.path().join("nowhere").join("out.off");
    let out = polylla(&[
        "--random".as_ref(),
        "500".as_ref(),
        "-o".as_ref(),
        off_missing.as_os_str(),
    ]);
    refused(&out, &["nowhere", "does not exist"]);
    // The picture must be SVG, and not the polygons' file.
    let out = polylla(&[
        "--random".as_ref(),
        "500".as_ref(),
        "-o".as_ref(),
        off.as_os_str(),
        "--svg".as_ref(),
        dir.path().join("picture.off").as_os_str(),
    ]);
    refused(&out, &["--svg", "picture.off", ".svg"]);
    let same = dir.path().join("same.svg");
    let out = polylla(&[
        "--random".as_ref(),
        "500".as_ref(),
        "-o".as_ref(),
        same.as_os_str(),
        "--svg".as_ref(),
        same.as_os_str(),
    ]);
    refused(&out, &["same.svg", "two outputs"]);
    // A Triangle pair is never overwritten, by either name.
    let node = dir.path().join("t.node");
    let ele = dir.path().join("t.ele");
    std::fs::write(&node, "4 2 0 0\n1 0 0\n2 1 0\n3 1 1\n4 0 1\n").unwrap();
    std::fs::write(&ele, "2 3 0\n1 1 2 3\n2 1 3 4\n").unwrap();
    let out = polylla(&[node.as_os_str(), "-o".as_ref(), ele.as_os_str()]);
    refused(&out, &["t.ele"]);
    assert_eq!(names(dir.path()), ["t.ele", "t.node"]);
    assert_eq!(
        std::fs::read_to_string(&ele).unwrap(),
        "2 3 0\n1 1 2 3\n2 1 3 4\n"
    );
}

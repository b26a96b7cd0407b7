//! Mesh I/O: round trips in every format and encoding, hand-written files,
//! every bad-input case, and no panic on arbitrary bytes.

use std::io::Cursor;
use std::path::Path;

use cavity::TriMesh;
use cavity::io::{Format, MeshIoError, PlyEncoding, read_mesh, read_mesh_from, write_mesh};
use proptest::prelude::*;

fn tetra() -> TriMesh {
    TriMesh {
        positions: vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.1, 0.2, 1.0e-7],
        ],
        faces: vec![[0, 2, 1], [0, 1, 3], [1, 2, 3], [2, 0, 3]],
    }
}

const FORMATS: [(&str, Format); 5] = [
    ("ply", Format::Ply(PlyEncoding::Ascii)),
    ("ply", Format::Ply(PlyEncoding::BinaryLittleEndian)),
    ("ply", Format::Ply(PlyEncoding::BinaryBigEndian)),
    ("obj", Format::Obj),
    ("off", Format::Off),
];

#[test]
fn round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let mesh = tetra();
    let normals = [[0.0, 0.0, 1.0]; 4];
    for (i, (ext, format)) in FORMATS.iter().enumerate() {
        for with_normals in [false, true] {
            let path = dir.path().join(format!("m{i}{with_normals}.{ext}"));
            let n = with_normals.then_some(&normals[..]);
            write_mesh(&path, &mesh, n, *format).unwrap();
            let back = read_mesh(&path).unwrap();
            assert_eq!(back.mesh, mesh, "{format:?} normals {with_normals}");
            assert!(back.warnings.is_empty());
        }
    }
}

fn read_str(text: &str, format: Format) -> Result<cavity::io::ReadMesh, MeshIoError> {
    read_mesh_from(Cursor::new(text.as_bytes().to_vec()), format, "t")
}

#[test]
fn obj_forms_and_polygons() {
    let text = "# c\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvn 0 0 1\nvt 0 0\no x\ng y\ns 1\nf 1/1 2/1/1 3//1 -1\n";
    let r = read_str(text, Format::Obj).unwrap();
    assert_eq!(r.mesh.faces, vec![[0, 1, 2], [0, 2, 3]]);
    assert_eq!(r.warnings.len(), 1);
    assert!(r.warnings[0].contains("1 polygons"));
}

#[test]
fn off_and_ply_text() {
    let off = "OFF\n# comment\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2 255 0 0\n";
    assert_eq!(
        read_str(off, Format::Off).unwrap().mesh.faces,
        vec![[0, 1, 2]]
    );
    let ply = "ply\nformat ascii 1.0\nelement vertex 3\nproperty double x\nproperty double y\nproperty double z\nproperty uchar red\nelement face 1\nproperty list uchar uint vertex_index\nend_header\n0 0 0 1\n1 0 0 1\n0 1 0 1\n3 0 1 2\n";
    let m = read_str(ply, Format::Ply(PlyEncoding::Ascii)).unwrap().mesh;
    assert_eq!(m.faces, vec![[0, 1, 2]]);
    assert_eq!(m.positions[1], [1.0, 0.0, 0.0]);
}

fn err(text: &str, format: Format) -> String {
    read_str(text, format).unwrap_err().to_string()
}

#[test]
fn bad_input_is_named() {
    let e = err("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n", Format::Obj);
    assert!(e.contains("t:4") && e.contains("out of range"), "{e}");
    let e = err("v 0 0 0\nv 1 0 nan\nv 0 1 0\nf 1 2 3\n", Format::Obj);
    assert!(e.contains("vertex 1") && e.contains("non-finite"), "{e}");
    let e = err("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 2\n", Format::Obj);
    assert!(
        e.contains("face 0") && e.contains("repeats vertex 1"),
        "{e}"
    );
    let e = err("v 0 0 x\n", Format::Obj);
    assert!(e.contains("t:1") && e.contains("bad coordinate"), "{e}");
    let e = err("v 0 0 0\nv 1 0 0\nf 1 2\n", Format::Obj);
    assert!(e.contains("t:3") && e.contains("2 vertices"), "{e}");
    let e = err("", Format::Obj);
    assert!(e.contains("no vertices"), "{e}");
    let e = err("OFF\n3 2 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n", Format::Off);
    assert!(e.contains("1 of 2 faces") && e.contains("truncated"), "{e}");
    let e = err("OFF\n3 1 0\n0 0 0\n1 0 0\n", Format::Off);
    assert!(e.contains("2 of 3 vertices"), "{e}");
    let e = err("", Format::Off);
    assert!(e.contains("empty"), "{e}");
    let e = err(
        "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nend_header\n0 0 0\n",
        Format::Ply(PlyEncoding::Ascii),
    );
    assert!(
        e.contains("t:") || e.contains("truncated") || e.contains("PLY"),
        "{e}"
    );
    let e = read_mesh(Path::new("mesh.stl")).unwrap_err().to_string();
    assert!(
        e.contains("mesh.stl") && e.contains("unknown mesh format"),
        "{e}"
    );
    let e = read_mesh(Path::new("/nonexistent/m.obj"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("/nonexistent/m.obj"), "{e}");
}

#[test]
fn truncated_binary_ply() {
    let dir = tempfile::tempdir().unwrap();
    for enc in [
        PlyEncoding::BinaryLittleEndian,
        PlyEncoding::BinaryBigEndian,
    ] {
        let path = dir.path().join("m.ply");
        write_mesh(&path, &tetra(), None, Format::Ply(enc)).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let cut = &bytes[..bytes.len() - 7];
        let e = read_mesh_from(Cursor::new(cut.to_vec()), Format::Ply(enc), "cut.ply").unwrap_err();
        assert!(e.to_string().contains("cut.ply"), "{e}");
    }
}

#[test]
fn failed_write_keeps_destination() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("keep.obj");
    std::fs::write(&path, "original").unwrap();
    let bad_normals = [[0.0; 3]; 1];
    assert!(write_mesh(&path, &tetra(), Some(&bad_normals), Format::Obj).is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "original");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400), which in 0usize..5) {
        let _ = read_mesh_from(Cursor::new(bytes), FORMATS[which].1, "fuzz");
    }

    #[test]
    fn truncations_never_panic(cut in 0usize..400, which in 0usize..5) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(format!("m.{}", FORMATS[which].0));
        write_mesh(&path, &tetra(), None, FORMATS[which].1).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let cut = cut.min(bytes.len());
        let _ = read_mesh_from(Cursor::new(bytes[..cut].to_vec()), FORMATS[which].1, "cut");
    }
}

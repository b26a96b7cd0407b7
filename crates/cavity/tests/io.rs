//! Mesh I/O: round trips in every format and encoding, hand-written files,
//! every bad-input case, errors at exact lines across parallel chunks, file
//! modes, and no panic (nor panic message) on arbitrary bytes.
//!
//! Longer than 700 lines as one file on purpose: the formats share the round
//! trip and bad-input harness; the cases of one format sit together.

use std::io::Cursor;
use std::path::Path;

use cavity::TriMesh;
use cavity::io::{
    Format, MeshIoError, PlyEncoding, StlEncoding, VertexData, check_writable, read_mesh,
    read_mesh_from, stage_mesh, write_column, write_mesh, write_mesh_with,
};
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
    let e = read_mesh(Path::new("mesh.stp")).unwrap_err().to_string();
    assert!(
        e.contains("mesh.stp") && e.contains("unknown mesh format") && e.contains(".stl"),
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

/// Every format, STL included.
const ALL_FORMATS: [(&str, Format); 7] = [
    FORMATS[0],
    FORMATS[1],
    FORMATS[2],
    FORMATS[3],
    FORMATS[4],
    ("stl", Format::Stl(StlEncoding::Ascii)),
    ("stl", Format::Stl(StlEncoding::Binary)),
];

/// Words and separators of the text formats, for files that are nearly
/// well-formed.
const SOUP: [&str; 40] = [
    " ",
    " ",
    "\n",
    "\n",
    "\r\n",
    "\t",
    "#",
    "/",
    "0",
    "1",
    "2",
    "3",
    "-1",
    "1.5",
    "1e40",
    "99999999999999999999",
    "nan",
    "x",
    "v",
    "f",
    "OFF",
    "ply",
    "format ascii 1.0",
    "format binary_little_endian 1.0",
    "element",
    "vertex",
    "face",
    "property",
    "float",
    "list",
    "uchar",
    "int",
    "end_header",
    "solid",
    "facet normal",
    "outer loop",
    "endloop",
    "endfacet",
    "endsolid",
    "3",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400), which in 0usize..7) {
        let _ = read_mesh_from(Cursor::new(bytes), ALL_FORMATS[which].1, "fuzz");
    }

    #[test]
    fn arbitrary_binary_stl_never_panics(count in 0u32..8, body in proptest::collection::vec(any::<u8>(), 0..500)) {
        let mut bytes = b"solid but binary".to_vec();
        bytes.resize(80, b' ');
        bytes.extend_from_slice(&count.to_le_bytes());
        bytes.extend_from_slice(&body);
        let _ = read_mesh_from(Cursor::new(bytes), Format::Stl(StlEncoding::Binary), "fuzz");
    }

    #[test]
    fn token_soup_never_panics(
        tokens in proptest::collection::vec(proptest::sample::select(&SOUP[..]), 0..120),
        which in 0usize..7,
    ) {
        let text = tokens.concat();
        let _ = read_mesh_from(Cursor::new(text.into_bytes()), ALL_FORMATS[which].1, "soup");
    }

    #[test]
    fn truncations_never_panic(cut in 0usize..400, which in 0usize..7) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(format!("m.{}", ALL_FORMATS[which].0));
        write_mesh(&path, &tetra(), None, ALL_FORMATS[which].1).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let cut = cut.min(bytes.len());
        let _ = read_mesh_from(Cursor::new(bytes[..cut].to_vec()), ALL_FORMATS[which].1, "cut");
    }
}

/// The mesh's triangles as corner positions.
fn corners(m: &TriMesh) -> Vec<[[f32; 3]; 3]> {
    m.faces
        .iter()
        .map(|f| f.map(|v| m.positions[v as usize]))
        .collect()
}

#[test]
fn stl_round_trips_and_detects_encoding() {
    let dir = tempfile::tempdir().unwrap();
    let mesh = tetra();
    assert_eq!(
        Format::from_path(Path::new("a/B.StL")).unwrap(),
        Format::Stl(StlEncoding::Binary)
    );
    for enc in [StlEncoding::Ascii, StlEncoding::Binary] {
        let path = dir.path().join(format!("m{enc:?}.STL"));
        let normals = [[0.0, 0.0, 1.0]; 4];
        write_mesh(&path, &mesh, Some(&normals), Format::Stl(enc)).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.starts_with(b"solid"), enc == StlEncoding::Ascii);
        // Reading detects the encoding whatever the format says.
        for as_enc in [StlEncoding::Ascii, StlEncoding::Binary] {
            let back =
                read_mesh_from(Cursor::new(bytes.clone()), Format::Stl(as_enc), "m").unwrap();
            assert_eq!(back.mesh.positions.len(), 4, "{enc:?}");
            assert_eq!(corners(&back.mesh), corners(&mesh), "{enc:?}");
            assert!(back.warnings.is_empty());
        }
    }
    // Facet normals are computed: face 0 = [0, 2, 1] lies in z = 0, facing -z.
    let path = dir.path().join("n.stl");
    write_mesh(&path, &mesh, None, Format::Stl(StlEncoding::Binary)).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.len(), 84 + 4 * 50);
    let f = |at: usize| f32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    assert_eq!([f(84), f(88), f(92)], [0.0, 0.0, -1.0]);
    let text = std::fs::read_to_string(dir.path().join("mAscii.STL")).unwrap();
    assert!(text.contains("facet normal 0 0 -1\n"), "{text}");
}

#[test]
fn binary_stl_starting_with_solid() {
    let mut bytes = b"solid model exported as binary".to_vec();
    bytes.resize(80, 0);
    bytes.extend_from_slice(&2u32.to_le_bytes());
    for tri in [
        [[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
        [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]],
    ] {
        bytes.extend_from_slice(&[0; 12]);
        for p in tri {
            for x in p {
                bytes.extend_from_slice(&x.to_le_bytes());
            }
        }
        bytes.extend_from_slice(&[0, 0]);
    }
    let r = read_mesh_from(
        Cursor::new(bytes.clone()),
        Format::Stl(StlEncoding::Ascii),
        "b",
    )
    .unwrap();
    assert_eq!(r.mesh.positions.len(), 4, "coincident corners merged");
    assert_eq!(r.mesh.faces, vec![[0, 1, 2], [1, 3, 2]]);
    // Padding after the facets is ignored with a warning; missing bytes are
    // an error.
    let mut padded = bytes.clone();
    padded.extend_from_slice(&[0; 7]);
    let r = read_mesh_from(Cursor::new(padded), Format::Stl(StlEncoding::Binary), "b").unwrap();
    assert_eq!(r.mesh.faces.len(), 2);
    assert!(r.warnings[0].contains("7 bytes"), "{:?}", r.warnings);
    let mut cut = bytes.clone();
    cut.truncate(bytes.len() - 1);
    cut[0] = b'x';
    let e = read_mesh_from(Cursor::new(cut), Format::Stl(StlEncoding::Binary), "b.stl")
        .unwrap_err()
        .to_string();
    assert!(e.contains("b.stl") && e.contains("1 of 2 facets"), "{e}");
    // A NaN names the facet.
    let mut nan = bytes.clone();
    nan[84 + 50 + 12 + 4..84 + 50 + 12 + 8].copy_from_slice(&f32::NAN.to_le_bytes());
    let e = read_mesh_from(Cursor::new(nan), Format::Stl(StlEncoding::Binary), "b.stl")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("b.stl: facet 1") && e.contains("non-finite"),
        "{e}"
    );
}

#[test]
fn ascii_stl_dirty_input() {
    // Upper case, blank lines, a quad, a degenerate facet, two solids.
    let text = "solid a\nFACET NORMAL 0 0 0\n OUTER LOOP\n  VERTEX 0 0 0\n  VERTEX 1 0 0\n  VERTEX 1 1 0\n  VERTEX 0 1 0\n ENDLOOP\nENDFACET\n\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 0 0 0\nvertex 1 1 0\nendloop\nendfacet\nendsolid a\nsolid b\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 1 0\nvertex 0 0 1\nendloop\nendfacet\nendsolid\n";
    let r = read_str(text, Format::Stl(StlEncoding::Ascii)).unwrap();
    assert_eq!(r.mesh.positions.len(), 5);
    assert_eq!(r.mesh.faces, vec![[0, 1, 2], [0, 2, 3], [0, 2, 4]]);
    assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
    assert!(r.warnings[0].contains("1 polygons"), "{:?}", r.warnings);
    assert!(
        r.warnings[1].contains("1 degenerate facets"),
        "{:?}",
        r.warnings
    );
    let stl = Format::Stl(StlEncoding::Ascii);
    let e = err(
        "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 zero\n",
        stl,
    );
    assert!(
        e.contains("t:4") && e.contains("bad coordinate 'zero'"),
        "{e}"
    );
    let e = err(
        "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nendloop\nendfacet\n",
        stl,
    );
    assert!(e.contains("t:7") && e.contains("2 vertices"), "{e}");
    let e = err(
        "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\n",
        stl,
    );
    assert!(e.contains("t:2") && e.contains("without endfacet"), "{e}");
    let e = err("solid x\nvertex 0 0 0\n", stl);
    assert!(e.contains("t:2") && e.contains("outside a facet"), "{e}");
    let e = err("solid x\nendsolid x\n", stl);
    assert!(e.contains("t: ") && e.contains("without facets"), "{e}");
    let e = err("", stl);
    assert!(e.contains("empty"), "{e}");
}

/// A mesh big enough for several parallel chunks.
fn grid(n: usize) -> TriMesh {
    let mut m = TriMesh::default();
    for j in 0..n {
        for i in 0..n {
            m.positions
                .push([i as f32 * 0.37, j as f32 / 3.0, ((i * j) as f32).sin()]);
        }
    }
    for j in 0..n as u32 - 1 {
        for i in 0..n as u32 - 1 {
            let v = j * n as u32 + i;
            m.faces.push([v, v + 1, v + n as u32]);
            m.faces.push([v + 1, v + n as u32 + 1, v + n as u32]);
        }
    }
    m
}

#[test]
fn large_files_round_trip_in_every_encoding() {
    let dir = tempfile::tempdir().unwrap();
    let mesh = grid(300);
    let normals: Vec<[f32; 3]> = mesh.positions.iter().map(|p| [p[2], p[0], -0.5]).collect();
    for (i, (ext, format)) in ALL_FORMATS.iter().enumerate() {
        let path = dir.path().join(format!("g{i}.{ext}"));
        write_mesh(&path, &mesh, Some(&normals), *format).unwrap();
        let back = read_mesh(&path).unwrap();
        if matches!(format, Format::Stl(_)) {
            assert_eq!(corners(&back.mesh), corners(&mesh), "{format:?}");
        } else {
            assert_eq!(back.mesh, mesh, "{format:?}");
        }
    }
}

/// Replaces line `line` (1-based) of `text`.
fn with_line(text: &str, line: usize, new: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    lines[line - 1] = new;
    lines.join("\n") + "\n"
}

#[test]
fn errors_name_exact_lines_across_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let mesh = grid(400);
    let nv = mesh.positions.len();
    for (ext, format) in [
        ("obj", Format::Obj),
        ("off", Format::Off),
        ("ply", Format::Ply(PlyEncoding::Ascii)),
    ] {
        let path = dir.path().join(format!("g.{ext}"));
        write_mesh(&path, &mesh, None, format).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let first_vertex = match ext {
            "obj" => 1,
            "off" => 3,
            _ => 10,
        };
        for v in [nv / 2 + 7, nv - 1] {
            let line = first_vertex + v;
            let bad = with_line(&text, line, if ext == "obj" { "v 1 2 x" } else { "1 2 x" });
            let e = read_str(&bad, format).unwrap_err().to_string();
            if ext == "ply" {
                assert!(
                    e.contains(&format!("t:{line}: vertex {v}: bad float value 'x' for z")),
                    "{e}"
                );
            } else {
                assert!(e.contains(&format!("t:{line}: bad coordinate 'x'")), "{e}");
            }
        }
        // A face index out of range, late in the file.
        let f = mesh.faces.len() - 3;
        let line = first_vertex + nv + f;
        let bad = with_line(
            &text,
            line,
            if ext == "obj" {
                "f 1 2 999999999"
            } else {
                "3 0 1 999999999"
            },
        );
        let e = read_str(&bad, format).unwrap_err().to_string();
        let want = match ext {
            "obj" => format!(
                "t:{line}: face index 999999999 out of range (mesh has {nv} vertices so far)"
            ),
            _ => format!("t: face {f}: index 999999999 out of range"),
        };
        assert!(e.contains(&want), "{e}");
    }
}

/// Encodes values as a binary PLY payload.
enum V {
    U8(u8),
    I16(i16),
    U16(u16),
    I32(i32),
    U32(u32),
    F32(f32),
    F64(f64),
}

fn payload(values: &[V], big: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for v in values {
        let mut b = match *v {
            V::U8(x) => vec![x],
            V::I16(x) => x.to_le_bytes().to_vec(),
            V::U16(x) => x.to_le_bytes().to_vec(),
            V::I32(x) => x.to_le_bytes().to_vec(),
            V::U32(x) => x.to_le_bytes().to_vec(),
            V::F32(x) => x.to_le_bytes().to_vec(),
            V::F64(x) => x.to_le_bytes().to_vec(),
        };
        if big {
            b.reverse();
        }
        out.extend_from_slice(&b);
    }
    out
}

#[test]
fn ply_with_extra_properties_and_elements() {
    let header = |format: &str| {
        format!(
            "ply\r\nformat {format} 1.0\r\ncomment made by hand\nobj_info x\n\
             element material 2\nproperty uchar red\nproperty list ushort float weights\n\
             element vertex 4\nproperty short id\nproperty double x\nproperty list uchar int tags\n\
             property float32 y\nproperty int16 z\nproperty float nx\n\
             element face 2\nproperty uchar flags\nproperty list ushort uint vertex_index\nproperty float quality\n\
             element edge 1\nproperty list uchar int vertex_indices\n\
             end_header\n"
        )
    };
    let ascii = header("ascii")
        + "1 2 0.5 0.25\n3 0\n\
           0 0.0 2 7 8 0 0 1\n1 1.5 0 0 0 1\n2 0 1 9 1 0 1\n3 0.1 0 0.2 5 1\n\
           0 4 0 1 2 3 0.5\n1 3 3 2 1 1\n\
           2 0 1\n";
    let want = TriMesh {
        positions: vec![
            [0.0, 0.0, 0.0],
            [1.5, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.1, 0.2, 5.0],
        ],
        faces: vec![[0, 1, 2], [0, 2, 3], [3, 2, 1]],
    };
    let r = read_str(&ascii, Format::Ply(PlyEncoding::Ascii)).unwrap();
    assert_eq!(r.mesh, want);
    assert!(r.warnings[0].contains("1 polygons"), "{:?}", r.warnings);
    for big in [false, true] {
        let format = if big {
            "binary_big_endian"
        } else {
            "binary_little_endian"
        };
        let mut bytes = header(format).into_bytes();
        bytes.extend(payload(
            &[
                V::U8(1),
                V::U16(2),
                V::F32(0.5),
                V::F32(0.25),
                V::U8(3),
                V::U16(0),
                V::I16(0),
                V::F64(0.0),
                V::U8(2),
                V::I32(7),
                V::I32(8),
                V::F32(0.0),
                V::I16(0),
                V::F32(1.0),
                V::I16(1),
                V::F64(1.5),
                V::U8(0),
                V::F32(0.0),
                V::I16(0),
                V::F32(1.0),
                V::I16(2),
                V::F64(0.0),
                V::U8(1),
                V::I32(9),
                V::F32(1.0),
                V::I16(0),
                V::F32(1.0),
                V::I16(3),
                V::F64(0.1f32 as f64),
                V::U8(0),
                V::F32(0.2),
                V::I16(5),
                V::F32(1.0),
                V::U8(0),
                V::U16(4),
                V::U32(0),
                V::U32(1),
                V::U32(2),
                V::U32(3),
                V::F32(0.5),
                V::U8(1),
                V::U16(3),
                V::U32(3),
                V::U32(2),
                V::U32(1),
                V::F32(1.0),
                V::U8(2),
                V::I32(0),
                V::I32(1),
            ],
            big,
        ));
        let r = read_mesh_from(
            Cursor::new(bytes.clone()),
            Format::Ply(PlyEncoding::Ascii),
            "b",
        )
        .unwrap();
        assert_eq!(r.mesh, want, "big endian {big}");
        // Cut in the last element (edge): truncated, named.
        let e = read_mesh_from(
            Cursor::new(bytes[..bytes.len() - 2].to_vec()),
            Format::Ply(PlyEncoding::Ascii),
            "b.ply",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("b.ply") && e.contains("0 of 1 'edge' elements"),
            "{e}"
        );
    }
}

#[test]
fn bad_ply_headers_are_named_without_panicking() {
    // Panics on any thread (the readers use rayon's) are counted; they are
    // still reported by the previous hook, and that hook is restored after.
    let hook_calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let calls = hook_calls.clone();
    let previous = std::sync::Arc::new(std::panic::take_hook());
    let forward = previous.clone();
    std::panic::set_hook(Box::new(move |info| {
        calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        forward(info);
    }));
    let ply = Format::Ply(PlyEncoding::Ascii);
    let results = [
        err(
            "ply\nformat ascii 1.0\nelement vertex 99999999999999999999999\nproperty float x\nend_header\n",
            ply,
        ),
        err(
            "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty list float\nend_header\n",
            ply,
        ),
        err(
            "ply\nformat binary_little_endian 1.0\nelement vertex 1000000000000\nproperty float x\nproperty float y\nproperty float z\nend_header\n0000",
            ply,
        ),
        err(
            "ply\nformat binary_little_endian 1.0\nelement vertex 0\nproperty float x\nelement face 1000000000000000\nproperty list uchar int vertex_indices\nend_header\n\x03",
            ply,
        ),
        err(
            "ply\nformat ascii 1.0\nelement vertex 1000000000000000000\nproperty float x\nproperty float y\nproperty float z\nend_header\n0 0 0\n",
            ply,
        ),
        err(
            "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\n",
            ply,
        ),
        err("ply\nelement vertex 3\nend_header\n", ply),
        err("solid\n", ply),
    ];
    std::panic::set_hook(Box::new(move |info| previous(info)));
    assert_eq!(hook_calls.load(std::sync::atomic::Ordering::SeqCst), 0);
    let expect = [
        "t:3: element count '99999999999999999999999' is too large",
        "t:5: expected 'property TYPE NAME'",
        "t: file ends after 0 of 1000000000000 vertices (truncated)",
        "t: file ends after 0 of 1000000000000000 faces (truncated)",
        "t: file ends after 1 of 1000000000000000000 vertices (truncated)",
        "t: PLY header has no end_header line",
        "t: PLY header has no format line",
        "t:1: not a PLY file",
    ];
    for (e, want) in results.iter().zip(expect) {
        assert!(e.contains(want), "{e} (expected {want})");
    }
}

/// The mode `File::create` gives a new file here, from the umask as
/// /proc/self/status reports it.
#[cfg(unix)]
fn umask_mode() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let umask = status
        .lines()
        .find_map(|l| l.strip_prefix("Umask:"))
        .map(|u| u32::from_str_radix(u.trim(), 8).unwrap())
        .unwrap();
    0o666 & !umask
}

#[cfg(unix)]
#[test]
fn written_files_get_ordinary_modes() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    let path = dir.path().join("new.obj");
    write_mesh(&path, &tetra(), None, Format::Obj).unwrap();
    assert_eq!(mode(&path), umask_mode());
    let probe = dir.path().join("probe");
    std::fs::File::create(&probe).unwrap();
    assert_eq!(mode(&path), mode(&probe));
    for existing in [0o644, 0o640, 0o604] {
        let path = dir.path().join(format!("old{existing:o}.ply"));
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(existing)).unwrap();
        write_mesh(&path, &tetra(), None, Format::Ply(PlyEncoding::Ascii)).unwrap();
        assert_eq!(mode(&path), existing, "{existing:o}");
        assert_eq!(read_mesh(&path).unwrap().mesh, tetra());
    }
}

#[test]
fn check_writable_names_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let ok = dir.path().join("out.OFF");
    assert_eq!(check_writable(&ok).unwrap(), Format::Off);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    let missing = dir.path().join("no/such/dir/out.ply");
    let e = check_writable(&missing).unwrap_err().to_string();
    assert!(
        e.contains(&missing.display().to_string()) && e.contains("does not exist"),
        "{e}"
    );
    let unknown = dir.path().join("out.txt");
    let e = check_writable(&unknown).unwrap_err().to_string();
    assert!(
        e.contains("out.txt") && e.contains("unknown mesh format"),
        "{e}"
    );
    let e = check_writable(dir.path()).unwrap_err().to_string();
    assert!(e.contains("unknown mesh format"), "{e}");
    let subdir = dir.path().join("d.stl");
    std::fs::create_dir(&subdir).unwrap();
    let e = check_writable(&subdir).unwrap_err().to_string();
    assert!(e.contains("d.stl") && e.contains("directory"), "{e}");
}

#[test]
fn a_staged_mesh_reaches_its_destination_only_when_committed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.obj");
    std::fs::write(&path, "old").unwrap();
    let names = || {
        let mut n: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    };
    // Dropped: the destination keeps its content, the temporary file goes.
    let staged = stage_mesh(&path, &tetra(), None, Format::Obj).unwrap();
    assert_eq!(names().len(), 2);
    drop(staged);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
    assert_eq!(names(), ["out.obj"]);
    // Committed: the mesh replaces it.
    stage_mesh(&path, &tetra(), None, Format::Obj)
        .unwrap()
        .commit()
        .unwrap();
    assert_eq!(read_mesh(&path).unwrap().mesh, tetra());
    assert_eq!(names(), ["out.obj"]);
}

/// A named vertex scalar: a float property after the coordinates and
/// normals in every PLY encoding (infinity and NaN kept), the mesh still
/// reads back; a bad name, a wrong length or a format without vertex
/// properties is an error that writes nothing.
#[test]
fn a_vertex_scalar_is_a_ply_property() {
    let dir = tempfile::tempdir().unwrap();
    let mesh = tetra();
    let values = [0.0, 1.5, f32::INFINITY, f32::NAN];
    let normals = [[0.0, 0.0, 1.0]; 4];
    for (i, encoding) in [
        PlyEncoding::Ascii,
        PlyEncoding::BinaryLittleEndian,
        PlyEncoding::BinaryBigEndian,
    ]
    .into_iter()
    .enumerate()
    {
        let path = dir.path().join(format!("scalar{i}.ply"));
        let data = VertexData {
            normals: Some(&normals),
            scalar: Some(("distance", &values)),
        };
        write_mesh_with(&path, &mesh, data, Format::Ply(encoding)).unwrap();
        let read = read_mesh(&path).unwrap();
        assert_eq!(read.mesh, mesh);
        let bytes = std::fs::read(&path).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            text.contains("property float nz\nproperty float distance\nelement face 4"),
            "{text}"
        );
        if encoding == PlyEncoding::Ascii {
            assert!(text.contains("\n0.1 0.2 1e-7 0 0 1 NaN\n"), "{text}");
            assert!(text.contains("\n0 1 0 0 0 1 inf\n"), "{text}");
        }
    }
    let path = dir.path().join("bad.ply");
    let bad = |name, values: &[f32], format| {
        let data = VertexData {
            normals: None,
            scalar: Some((name, values)),
        };
        match write_mesh_with(&path, &mesh, data, format) {
            Err(MeshIoError::Invalid { message, .. }) => message,
            other => panic!("{other:?}"),
        }
    };
    let ply = Format::Ply(PlyEncoding::Ascii);
    assert!(bad("my distance", &values, ply).contains("not a vertex property name"));
    assert!(bad("nx", &values, ply).contains("not a vertex property name"));
    assert!(bad("distance", &values[..3], ply).contains("3 values of \"distance\" for 4 vertices"));
    assert!(bad("distance", &values, Format::Obj).contains("only PLY"));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
}

/// A column: one value per line, the shortest text that reads back to the
/// same `f32`, infinity as `inf`; written whole or not at all.
#[test]
fn a_column_reads_back_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("column.txt");
    let values = [0.1f32, 1.0, f32::INFINITY, 3.4028235e38, 1e-45];
    write_column(&path, &values).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().nth(2), Some("inf"));
    let back: Vec<f32> = text.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(back, values);
    assert!(write_column(&dir.path().join("no/such/dir.txt"), &values).is_err());
}

//! Per-vertex scalar fields of volumetric files (issue 54):
//! `read_volume_fields` reads VTK `POINT_DATA` (`SCALARS`, one-component
//! `FIELD` arrays) and Gmsh `$NodeData` views of one component, leaves
//! other arrays out, and names the node of a bad value;
//! `write_volume_field` writes one field that reads back the same in
//! every encoding of VTK and Gmsh, and refuses a field in MEDIT or TetGen.

use std::path::{Path, PathBuf};

use cavity_volume::CellVertices;
use cavity_volume::io::gmsh::MshVersion;
use cavity_volume::io::{
    CellMesh, PointField, VolumeFormat, VolumeIoError, WriteOptions, read_volume,
    read_volume_fields, write_volume_field,
};

/// Two tetrahedra sharing a face, five vertices.
fn two_tets() -> CellMesh {
    CellMesh {
        positions: vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
            [1.0, 1.0, 1.0],
        ],
        cells: vec![
            CellVertices::Tetrahedron([0, 1, 2, 3]),
            CellVertices::Tetrahedron([1, 2, 3, 4]),
        ],
    }
}

/// `text` written to `name` in `dir`.
fn file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path
}

#[test]
fn a_field_written_reads_back_in_every_encoding_of_vtk_and_gmsh() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mesh = two_tets();
    let field = PointField {
        name: "temperature".into(),
        values: vec![0.5, -1.25, 3.0e-7, 1.0e6, 42.0],
    };
    for (name, binary, msh_version) in [
        ("a.vtk", false, MshVersion::V41),
        ("b.vtk", true, MshVersion::V41),
        ("c.msh", false, MshVersion::V22),
        ("d.msh", true, MshVersion::V22),
        ("e.msh", false, MshVersion::V41),
        ("f.msh", true, MshVersion::V41),
    ] {
        let path = dir.path().join(name);
        let options = WriteOptions {
            binary,
            msh_version,
        };
        write_volume_field(&path, &mesh, Some(&field), options).unwrap();
        let (back, fields) = read_volume_fields(&path).unwrap();
        assert_eq!(back.positions, mesh.positions, "{name}");
        assert_eq!(fields, std::slice::from_ref(&field), "{name}");
        // The plain reader reads the same mesh.
        assert_eq!(read_volume(&path).unwrap(), back, "{name}");
    }
}

#[test]
fn a_field_name_with_spaces_is_one_word_in_vtk_and_quoted_in_gmsh() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mesh = two_tets();
    let field = PointField {
        name: "a \"scalar\" view".into(),
        values: vec![1.0, 2.0, 3.0, 4.0, 5.0],
    };
    let vtk = dir.path().join("s.vtk");
    write_volume_field(&vtk, &mesh, Some(&field), WriteOptions::default()).unwrap();
    let (_, fields) = read_volume_fields(&vtk).unwrap();
    assert_eq!(fields[0].name, "a_\"scalar\"_view");
    let msh = dir.path().join("s.msh");
    write_volume_field(&msh, &mesh, Some(&field), WriteOptions::default()).unwrap();
    let (_, fields) = read_volume_fields(&msh).unwrap();
    assert_eq!(fields[0].name, "a 'scalar' view");
    assert_eq!(fields[0].values, field.values);
}

#[test]
fn medit_and_tetgen_hold_no_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mesh = two_tets();
    let field = PointField {
        name: "f".into(),
        values: vec![0.0; 5],
    };
    for name in ["m.mesh", "t.node"] {
        let path = dir.path().join(name);
        assert!(!VolumeFormat::of(&path).unwrap().holds_point_fields());
        let e = write_volume_field(&path, &mesh, Some(&field), WriteOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no per-vertex field") && e.contains(".vtk"),
            "{e}"
        );
        assert!(!path.exists());
        write_volume_field(&path, &mesh, None, WriteOptions::default()).unwrap();
        assert!(read_volume_fields(&path).unwrap().1.is_empty());
    }
    // A field of the wrong length is refused too.
    let short = PointField {
        name: "f".into(),
        values: vec![0.0; 4],
    };
    let path = dir.path().join("short.vtk");
    let e = write_volume_field(&path, &mesh, Some(&short), WriteOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("4 values for 5 vertices"), "{e}");
}

/// A legacy VTK grid of one tetrahedron with `data` after its cells.
fn vtk_with(data: &str) -> String {
    format!(
        "# vtk DataFile Version 4.2\nfields\nASCII\nDATASET UNSTRUCTURED_GRID\n\
         POINTS 4 float\n0 0 0 1 0 0 0 1 0 0 0 1\nCELLS 1 5\n4 0 1 2 3\nCELL_TYPES 1\n10\n{data}"
    )
}

#[test]
fn vtk_scalars_and_one_component_field_arrays_are_read_and_vectors_are_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = file(
        dir.path(),
        "f.vtk",
        &vtk_with(
            "POINT_DATA 4\nSCALARS pressure double 1\nLOOKUP_TABLE default\n1 2 3 4\n\
             VECTORS velocity float\n0 0 1 0 0 1 0 0 1 0 0 1\n\
             FIELD extra 2\ndensity 1 4 float\n5 6 7 8\npair 2 4 float\n1 2 3 4 5 6 7 8\n\
             CELL_DATA 1\nSCALARS material int 1\nLOOKUP_TABLE default\n3\n",
        ),
    );
    let (mesh, fields) = read_volume_fields(&path).unwrap();
    assert_eq!(mesh.cells.len(), 1);
    let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["pressure", "density"]);
    assert_eq!(fields[0].values, [1.0, 2.0, 3.0, 4.0]);
    assert_eq!(fields[1].values, [5.0, 6.0, 7.0, 8.0]);
    // No POINT_DATA: no field.
    let bare = file(dir.path(), "bare.vtk", &vtk_with(""));
    assert!(read_volume_fields(&bare).unwrap().1.is_empty());
}

/// A Gmsh 4.1 file of one tetrahedron (nodes 10 to 13) with `data` after
/// its elements.
fn msh41_with(data: &str) -> String {
    format!(
        "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 4 10 13\n3 1 0 4\n10\n11\n12\n13\n\
         0 0 0\n1 0 0\n0 1 0\n0 0 1\n$EndNodes\n$Elements\n1 1 1 1\n3 1 4 1\n1 10 11 12 13\n\
         $EndElements\n{data}"
    )
}

/// A `$NodeData` section named `name` of `components` per node.
fn node_data(name: &str, components: usize, lines: &[&str]) -> String {
    format!(
        "$NodeData\n1\n\"{name}\"\n1\n0.0\n3\n0\n{components}\n{}\n{}\n$EndNodeData\n",
        lines.len(),
        lines.join("\n")
    )
}

#[test]
fn gmsh_node_data_of_one_component_at_every_node_is_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = [
        node_data(
            "A scalar view",
            1,
            &["10 0.5", "11 1.5", "12 2.5", "13 3.5"],
        ),
        node_data(
            "vectors",
            3,
            &["10 0 0 1", "11 0 0 1", "12 0 0 1", "13 0 0 1"],
        ),
        node_data("partial", 1, &["10 1", "11 2"]),
        "$ElementData\n1\n\"cells\"\n1\n0.0\n3\n0\n1\n1\n1 7\n$EndElementData\n".into(),
        // A later time step of the first view replaces it.
        node_data("A scalar view", 1, &["13 -3", "12 -2", "11 -1", "10 0"]),
    ]
    .concat();
    let path = file(dir.path(), "v.msh", &msh41_with(&data));
    let (_, fields) = read_volume_fields(&path).unwrap();
    assert_eq!(
        fields,
        [PointField {
            name: "A scalar view".into(),
            values: vec![0.0, -1.0, -2.0, -3.0],
        }]
    );
    // The same view in a 2.2 file.
    let v22 = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 0 1 0\n\
               4 0 0 1\n$EndNodes\n$Elements\n1\n1 4 2 1 1 1 2 3 4\n$EndElements\n"
        .to_string()
        + &node_data("s", 1, &["1 4", "2 3", "3 2", "4 1"]);
    let path = file(dir.path(), "v22.msh", &v22);
    let (_, fields) = read_volume_fields(&path).unwrap();
    assert_eq!(fields[0].values, [4.0, 3.0, 2.0, 1.0]);
}

#[test]
fn bad_gmsh_node_data_names_the_line_and_the_node() {
    let dir = tempfile::tempdir().expect("tempdir");
    let unknown = file(
        dir.path(),
        "unknown.msh",
        &msh41_with(&node_data("s", 1, &["10 0", "99 1", "12 2", "13 3"])),
    );
    let e = read_volume_fields(&unknown).unwrap_err();
    let message = e.to_string();
    assert!(
        matches!(e, VolumeIoError::File(_)) && message.contains("node 99"),
        "{message}"
    );
    assert!(message.contains("unknown.msh:"), "{message}");
    let short = file(
        dir.path(),
        "short.msh",
        &msh41_with("$NodeData\n1\n\"s\"\n1\n0.0\n2\n0\n1\n$EndNodeData\n"),
    );
    let message = read_volume_fields(&short).unwrap_err().to_string();
    assert!(message.contains("three integer tags"), "{message}");
    let many = file(
        dir.path(),
        "many.msh",
        &msh41_with("$NodeData\n0\n0\n3\n0\n1\n1000000\n10 1\n$EndNodeData\n"),
    );
    let message = read_volume_fields(&many).unwrap_err().to_string();
    assert!(message.contains("1000000 values announced"), "{message}");
}

//! What the volumetric readers say about bad files (issue 52 item 5): the
//! file, the line, the section and what was expected, where `vtkio` and
//! `mshio` alone say "Parse error: Tag" or "An invalid entity tag value
//! ..."; and header counts beyond the file's length refused before
//! anything is allocated for them.

use std::path::Path;

use cavity_volume::io::{VolumeIoError, gmsh, medit, tetgen, vtk};

/// The error's text, which must name `place` (`file:line:`) and contain
/// every one of `words`.
fn says(r: Result<cavity_volume::io::CellMesh, VolumeIoError>, place: &str, words: &[&str]) {
    let e = r.expect_err("the file must be refused").to_string();
    assert!(e.starts_with(place), "{e}");
    for w in words {
        assert!(e.contains(w), "{w:?} missing from {e}");
    }
}

const VTK_HEAD: &str = "# vtk DataFile Version 4.2\nx\nASCII\nDATASET UNSTRUCTURED_GRID\n";

#[test]
fn vtk_errors_name_the_line_the_section_and_what_was_expected() {
    let file = Path::new("grid.vtk");
    let read = |text: String| vtk::read_bytes(file, text.as_bytes());
    says(
        read(format!(
            "{VTK_HEAD}POINTS 4 float\n0 0 0 1 0 0 0 1 0 0 0 1\nCELLS 1 5\n4 0 1 two 3\nCELL_TYPES 1\n10\n"
        )),
        "grid.vtk:8:",
        &["CELLS section", "\"two\" is not a vertex count or index"],
    );
    says(
        read(format!(
            "{VTK_HEAD}POINTS 4 float\n0 0 0 1 0 0 0 1 0 0 0\nCELLS 1 5\n"
        )),
        "grid.vtk:7:",
        &["POINTS section", "\"CELLS\" is not a number"],
    );
    says(
        read(format!(
            "{VTK_HEAD}POINTS 1 float\n0 0 0\nCELL_TYPES 1\n10\n"
        )),
        "grid.vtk:7:",
        &["CELLS section", "expected `CELLS n size`"],
    );
    says(
        read(format!(
            "{VTK_HEAD}POINTS 1 float\n0 0 0\nCELLS 1 2\n1 0\nCELL_TYPES 1\n"
        )),
        "grid.vtk:9:",
        &["CELL_TYPES section", "ends after 0 of its 1 numbers"],
    );
    says(
        read("# vtk DataFile Version 4.2\nx\nASCII\nDATASET POLYDATA\n".into()),
        "grid.vtk:4:",
        &["DATASET section", "only DATASET UNSTRUCTURED_GRID"],
    );
    says(
        read("# vtk DataFile Version 4.2\nx\nTEXT\n".into()),
        "grid.vtk:3:",
        &["header section", "ASCII or BINARY"],
    );
    says(
        read(format!("{VTK_HEAD}POINTS 1 int\n0 0 0\n")),
        "grid.vtk:5:",
        &["POINTS section", "float or double"],
    );
}

#[test]
fn gmsh_41_errors_name_the_line_the_section_and_what_was_expected() {
    let file = Path::new("mesh.msh");
    let head = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n";
    // Node tag 0 is reserved.
    let zero = format!("{head}$Nodes\n1 1 0 0\n3 1 0 1\n0\n0 0 0\n$EndNodes\n");
    says(
        gmsh::read_bytes(file, zero.as_bytes()),
        "mesh.msh:",
        &[
            "$Nodes section",
            "invalid entity tag",
            "expected tags of at least 1",
        ],
    );
    let word = format!("{head}$Nodes\n1 1 1 1\n3 1 0 1\n1\n0 zero 0\n$EndNodes\n");
    says(
        gmsh::read_bytes(file, word.as_bytes()),
        "mesh.msh:",
        &["$Nodes section", "expected"],
    );
}

#[test]
fn counts_beyond_the_file_are_refused_before_allocating() {
    let huge = "999999999999";
    says(
        medit::read_bytes(
            Path::new("big.mesh"),
            format!("MeshVersionFormatted 1\nDimension 3\nVertices\n{huge}\n").as_bytes(),
        ),
        "big.mesh:4:",
        &[huge, "announced"],
    );
    says(
        tetgen::read_bytes(
            (Path::new("big.node"), format!("{huge} 3 0 0\n").as_bytes()),
            (Path::new("big.ele"), b"0 4 0\n"),
        ),
        "big.node:1:",
        &[huge, "announced"],
    );
    says(
        gmsh::read_bytes(
            Path::new("big.msh"),
            format!("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n{huge}\n").as_bytes(),
        ),
        "big.msh:5:",
        &[huge, "announced"],
    );
}

/// Found by fuzzing (`fuzz/regressions/`): `mshio` 0.4.2 overflowed on
/// sections that announce no entries, as Gmsh writes for an empty mesh;
/// `vtkio` on offsets of the newer CELLS layout that decrease.
#[test]
fn fuzzing_finds_stay_fixed() {
    let empty = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n0 0 0 0\n$EndNodes\n$Elements\n0 0 0 0\n$EndElements\n";
    let m = gmsh::read_bytes(Path::new("empty.msh"), empty.as_bytes()).unwrap();
    assert!(m.positions.is_empty() && m.cells.is_empty());
    let offsets = format!(
        "{VTK_HEAD}POINTS 4 float\n0 0 0 1 0 0 0 1 0 0 0 1\nCELLS 2 4\nOFFSETS vtktypeint64\n4 0\nCONNECTIVITY vtktypeint64\n0 1 2 3\nCELL_TYPES 1\n10\n"
    );
    let e = vtk::read_bytes(Path::new("offsets.vtk"), offsets.as_bytes()).unwrap_err();
    assert!(e.to_string().contains("OFFSETS entry 1 is 0"), "{e}");
}

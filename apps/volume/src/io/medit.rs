//! MEDIT `.mesh` files (ASCII): `Vertices` (with references), then
//! `Tetrahedra`, `Prisms`, `Pyramids` and `Hexahedra` (vertices numbered
//! from 1, each cell with a reference); the surface and feature sections
//! (`Triangles`, `Edges`, `Corners`, ...) are skipped.

use std::path::Path;

use super::stream::{self, Out, push_f32, push_int, write_elements, write_pieces, write_streamed};
use super::{CellMesh, Tokens, VolumeIoError, indices, listed, read_file, text_of, unsupported};
use crate::mesh::CellVertices;

/// Reads a MEDIT file.
///
/// # Errors
/// As [`super::read_volume`].
pub fn read(path: &Path) -> Result<CellMesh, VolumeIoError> {
    read_bytes(path, &read_file(path)?)
}

/// Reads a MEDIT file from its bytes; `path` names it in errors. Every
/// count is checked against the bytes after it before anything is
/// allocated for its records.
///
/// # Errors
/// As [`super::read_volume`].
pub fn read_bytes(path: &Path, bytes: &[u8]) -> Result<CellMesh, VolumeIoError> {
    let text = text_of(path, bytes)?;
    let mut t = Tokens::new(path, text);
    let mut positions = Vec::new();
    let mut cells = Vec::new();
    let mut dimension = 3;
    while let Ok((line, keyword)) = t.next("a section") {
        let skip = |t: &mut Tokens<'_>, per: usize| -> Result<(), VolumeIoError> {
            let n = t.count("the count", per)?;
            for _ in 0..n * per {
                t.next("the section's entries")?;
            }
            Ok(())
        };
        match keyword {
            "MeshVersionFormatted" => {
                t.next("the version")?;
            }
            "Dimension" => {
                dimension = t.number("the dimension")?;
                if dimension != 3 {
                    return Err(t.error(line, format!("dimension {dimension}: only 3 is a volume")));
                }
            }
            "Vertices" => {
                let n = t.count("the vertex count", dimension + 1)?;
                positions.reserve(n);
                for i in 0..n {
                    let l = t.line_of_next().unwrap_or(line);
                    let mut p = [0f32; 3];
                    for x in p.iter_mut().take(dimension) {
                        *x = t.number("a coordinate")?;
                    }
                    if p.iter().any(|x| !x.is_finite()) {
                        return Err(
                            t.error(l, format!("vertex {} has a non-finite coordinate", i + 1))
                        );
                    }
                    t.next("the vertex's reference")?;
                    positions.push(p);
                }
            }
            "Tetrahedra" | "Prisms" | "Pyramids" | "Hexahedra" => {
                let per = match keyword {
                    "Tetrahedra" => 5,
                    "Prisms" => 7,
                    "Pyramids" => 6,
                    _ => 9,
                };
                let n = t.count("the cell count", per)?;
                cells.reserve(n);
                let nv = positions.len();
                for _ in 0..n {
                    let cell = match keyword {
                        "Tetrahedra" => {
                            CellVertices::Tetrahedron(indices(&mut t, 1, nv, "a tetrahedron")?)
                        }
                        "Prisms" => CellVertices::Prism(indices(&mut t, 1, nv, "a prism")?),
                        "Pyramids" => CellVertices::Pyramid(indices(&mut t, 1, nv, "a pyramid")?),
                        _ => CellVertices::Hexahedron(indices(&mut t, 1, nv, "a hexahedron")?),
                    };
                    t.next("the cell's reference")?;
                    cells.push(cell);
                }
            }
            "Edges" => skip(&mut t, 3)?,
            "Triangles" => skip(&mut t, 4)?,
            "Quadrilaterals" => skip(&mut t, 5)?,
            "Corners" | "RequiredVertices" | "Ridges" | "RequiredEdges" => skip(&mut t, 1)?,
            "Normals" | "Tangents" => skip(&mut t, 3)?,
            "NormalAtVertices" | "TangentAtVertices" => skip(&mut t, 2)?,
            "End" => break,
            other => return Err(t.error(line, format!("unknown section {other:?}"))),
        }
    }
    Ok(CellMesh { positions, cells })
}

/// Writes a MEDIT file, each cell type in its section (tetrahedra,
/// prisms, pyramids, hexahedra, each in cell order; references 0), the
/// sections formatted in parallel pieces and streamed in order into the
/// temporary file.
///
/// # Errors
/// [`VolumeIoError::Unsupported`] for a polyhedron (found before anything
/// is written); [`VolumeIoError::File`].
pub fn write(path: &Path, mesh: &CellMesh) -> Result<(), VolumeIoError> {
    check(path, mesh)?;
    write_streamed(path, |out| encode(out, mesh))
}

/// Refuses a mesh MEDIT cannot hold: [`VolumeIoError::Unsupported`]
/// naming the first polyhedron.
pub(super) fn check(path: &Path, mesh: &CellMesh) -> Result<(), VolumeIoError> {
    match stream::first_polyhedron(&mesh.cells) {
        Some(i) => Err(unsupported(
            path,
            format!("cell {i} is a general polyhedron, which MEDIT cannot hold"),
        )),
        None => Ok(()),
    }
}

/// Streams the file [`write()`] writes into `out` (the mesh [`check`]ed).
pub(super) fn encode(out: &mut Out<'_>, mesh: &CellMesh) -> std::io::Result<()> {
    let (positions, cells) = (&mesh.positions, &mesh.cells);
    let counts = stream::TypeCounts::of(cells);
    write!(
        out,
        "MeshVersionFormatted 1\nDimension 3\nVertices\n{}\n",
        positions.len()
    )?;
    write_elements(out, positions.len(), |r, buf| {
        for p in &positions[r] {
            for x in p {
                push_f32(buf, *x);
                buf.push(b' ');
            }
            buf.extend_from_slice(b"0\n");
        }
    })?;
    // Sections by `stream::type_index`.
    for (name, t) in [
        ("Tetrahedra", 0),
        ("Prisms", 2),
        ("Pyramids", 3),
        ("Hexahedra", 1),
    ] {
        if counts.total[t] == 0 {
            continue;
        }
        write!(out, "{name}\n{}\n", counts.total[t])?;
        write_pieces(out, counts.per_piece.len(), |k, buf| {
            if counts.per_piece[k][t] == 0 {
                return;
            }
            let piece = &cells[stream::piece(k, cells.len())];
            for cell in piece.iter().filter(|c| stream::type_index(c) == Some(t)) {
                for &v in listed(cell).into_iter().flatten() {
                    push_int(buf, u64::from(v) + 1);
                    buf.push(b' ');
                }
                buf.extend_from_slice(b"0\n");
            }
        })?;
    }
    out.write_all(b"End\n")
}

//! MEDIT `.mesh` files (ASCII): `Vertices` (with references), then
//! `Tetrahedra`, `Prisms`, `Pyramids` and `Hexahedra` (vertices numbered
//! from 1, each cell with a reference); the surface and feature sections
//! (`Triangles`, `Edges`, `Corners`, ...) are skipped.

use std::path::Path;

use super::stream::{self, Out, push_f32, push_int, write_elements, write_pieces, write_streamed};
use super::{
    CellMesh, Tokens, VolumeIoError, count_fits, indices, is_text, listed, next_word, read_file,
    text_of, unsupported,
};
use crate::mesh::CellVertices;
use cavity::io::{is_space, parse_f32, parse_records, parse_u32, parse_usize};

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
    if is_text(bytes)
        && let Some(mesh) = read_sections(bytes)
    {
        return Ok(mesh);
    }
    read_tokens(path, text_of(path, bytes)?)
}

/// The file's sections with their records parsed in parallel
/// ([`cavity::io::parse_records`]), `None` wherever [`read_tokens`] might
/// read it otherwise or refuse it (a comment, a dimension other than 3, a
/// count the rest cannot hold, an unknown section, a bad number or
/// index, a non-ASCII word): then [`read_tokens`] reads it and names what
/// is wrong. Both give the same mesh for every file this reads.
fn read_sections(bytes: &[u8]) -> Option<CellMesh> {
    let mut positions: Vec<[f32; 3]> = Vec::new();
    let mut cells = Vec::new();
    let mut at = 0;
    // A word the token reader takes whatever it is (a reference).
    let any = |w: &[u8]| w.is_ascii();
    let count = |at: &mut usize, per: usize| -> Option<usize> {
        let n = parse_usize(next_word(bytes, at)?)?;
        count_fits(n, per, bytes.len() - *at).ok()
    };
    let skip = |at: &mut usize, per: usize| -> Option<()> {
        let n = count(at, per)?;
        *at = parse_records(bytes, *at, n, per, (), |_, w| {
            w.iter().all(|w| any(w)).then_some(())
        })?
        .1;
        Some(())
    };
    while at < bytes.len() {
        let before = at;
        let Some(word) = next_word(bytes, &mut at) else {
            // The end (blanks alone), else a comment or a word that is not
            // ASCII, for the token reader.
            bytes[before..].iter().all(|&b| is_space(b)).then_some(())?;
            break;
        };
        match word {
            b"MeshVersionFormatted" => {
                next_word(bytes, &mut at)?;
            }
            b"Dimension" => {
                (parse_usize(next_word(bytes, &mut at)?)? == 3).then_some(())?;
            }
            b"Vertices" => {
                let n = count(&mut at, 4)?;
                let (block, end) = parse_records(bytes, at, n, 4, [0f32; 3], |_, w| {
                    let p = [parse_f32(w[0])?, parse_f32(w[1])?, parse_f32(w[2])?];
                    (p.iter().all(|x| x.is_finite()) && any(w[3])).then_some(p)
                })?;
                stream::append(&mut positions, block);
                at = end;
            }
            b"Tetrahedra" | b"Prisms" | b"Pyramids" | b"Hexahedra" => {
                let per = match word {
                    b"Tetrahedra" => 5,
                    b"Prisms" => 7,
                    b"Pyramids" => 6,
                    _ => 9,
                };
                let n = count(&mut at, per)?;
                let nv = positions.len();
                let placeholder = CellVertices::Tetrahedron([0; 4]);
                let (block, end) = parse_records(bytes, at, n, per, placeholder, |_, w| {
                    let mut v = [0u32; 8];
                    for (x, w) in v.iter_mut().zip(&w[..per - 1]) {
                        *x = parse_u32(w)?
                            .checked_sub(1)
                            .filter(|&x| (x as usize) < nv)?;
                    }
                    any(w[per - 1]).then_some(())?;
                    Some(match per {
                        5 => CellVertices::Tetrahedron([v[0], v[1], v[2], v[3]]),
                        7 => CellVertices::Prism([v[0], v[1], v[2], v[3], v[4], v[5]]),
                        6 => CellVertices::Pyramid([v[0], v[1], v[2], v[3], v[4]]),
                        _ => CellVertices::Hexahedron(v),
                    })
                })?;
                stream::append(&mut cells, block);
                at = end;
            }
            b"Edges" => skip(&mut at, 3)?,
            b"Triangles" => skip(&mut at, 4)?,
            b"Quadrilaterals" => skip(&mut at, 5)?,
            b"Corners" | b"RequiredVertices" | b"Ridges" | b"RequiredEdges" => skip(&mut at, 1)?,
            b"Normals" | b"Tangents" => skip(&mut at, 3)?,
            b"NormalAtVertices" | b"TangentAtVertices" => skip(&mut at, 2)?,
            b"End" => break,
            _ => return None,
        }
    }
    Some(CellMesh { positions, cells })
}

/// Reads a MEDIT file token by token ([`Tokens`]), naming the line of
/// what is wrong.
fn read_tokens(path: &Path, text: &str) -> Result<CellMesh, VolumeIoError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What a reader made of a file: the mesh (as its debug text, in which
    /// NaN equals NaN) or the error's words.
    fn outcome(read: Result<CellMesh, VolumeIoError>) -> Result<String, String> {
        read.map(|m| format!("{m:?}")).map_err(|e| e.to_string())
    }

    /// The fixture, a large mixed mesh as [`write`] writes it, and the
    /// same laid out otherwise: records over several lines, CRLF and tabs,
    /// `Dimension` on its own line, surface sections, two vertex sections.
    fn files() -> Vec<(String, Vec<u8>)> {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/written");
        let mut files = vec![(
            "mixed.mesh".to_string(),
            std::fs::read(data.join("mixed.mesh")).expect("fixture"),
        )];
        let positions: Vec<[f32; 3]> = (0..30_000)
            .map(|i| [i as f32 * 0.1, (i % 13) as f32 * 0.5, -(i as f32) / 7.0])
            .collect();
        let cells = stream::mixed_cells(30_000, 60_000);
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("big.mesh");
        write(&path, &CellMesh { positions, cells }).expect("written");
        let big = std::fs::read(&path).expect("written");
        let text = String::from_utf8(big.clone()).expect("text");
        let spread: String = text
            .split('\n')
            .enumerate()
            .map(|(i, l)| match i % 3 {
                0 => l.replacen(' ', "\n  ", 2) + "\r\n",
                1 => l.replace(' ', "\t") + "\n",
                _ => l.to_string() + " \n\n",
            })
            .collect();
        let extra = text
            .replace(
                "Dimension 3",
                "Dimension\n3\nTriangles\n2\n1 2 3 0\n2 3 4 7\nEdges 1 1 2 0",
            )
            .replace(
                "Tetrahedra\n",
                "Vertices\n2\n1 2 3 0\n4 5 6 -1\nCorners\n2\n1\n2\nTetrahedra\n",
            );
        files.push(("big.mesh".into(), big));
        files.push(("spread.mesh".into(), spread.into_bytes()));
        files.push(("extra.mesh".into(), extra.into_bytes()));
        files
    }

    #[test]
    fn files_are_read_in_parallel_as_token_by_token() {
        let path = Path::new("x.mesh");
        for (name, bytes) in files() {
            let fast = read_sections(&bytes).unwrap_or_else(|| panic!("{name}: in parallel"));
            let text = std::str::from_utf8(&bytes).expect("text");
            let slow = read_tokens(path, text).expect("read token by token");
            assert!(fast == slow, "{name}");
        }
        // A comment, or a last word that is not ASCII or holds a `#`,
        // leaves the file to the token reader, which refuses the latter.
        assert!(read_sections(b"# a comment\nDimension 3\n").is_none());
        for end in ["\u{c9}nd", "Foo#x", "Tetrahedra#"] {
            let file = format!("Dimension 3\nVertices\n1\n0 0 0 0\n{end}\n");
            assert!(read_sections(file.as_bytes()).is_none(), "{end}");
            assert!(read_bytes(path, file.as_bytes()).is_err(), "{end}");
        }
        assert!(read_bytes(path, b"# a comment\nDimension 3\nEnd\n").is_ok());
    }

    #[test]
    fn broken_files_read_as_token_by_token() {
        let path = Path::new("x.mesh");
        let mut next = crate::io::stream::xorshift(0x2545_f491_4f6c_dd1d);
        for (name, bytes) in files() {
            let changes = if name == "mixed.mesh" { 600 } else { 60 };
            for k in 0..changes {
                let mut broken = bytes.clone();
                let at = (next() % bytes.len() as u64) as usize;
                match k % 3 {
                    0 => broken.truncate(at),
                    1 => broken[at] = b"0123456789 \n#.-eE\t\x0b\xc2"[(next() % 18) as usize],
                    _ => broken[at] ^= 1 << (next() % 8),
                }
                let new = outcome(read_bytes(path, &broken));
                let old = outcome(text_of(path, &broken).and_then(|text| read_tokens(path, text)));
                assert!(
                    new == old,
                    "{name}, change {k} at byte {at}: {:?} against {:?}",
                    new.as_ref().err(),
                    old.as_ref().err()
                );
            }
        }
    }
}

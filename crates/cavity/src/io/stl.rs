//! STL, ASCII and binary. A file is binary when its size is exactly that of
//! a binary STL with the facet count at bytes 80..84 (binary files may start
//! with `solid` too); otherwise it is ASCII when it starts with `solid`, and
//! binary (and then truncated or padded) when not. Corners with bitwise-equal
//! positions become one vertex, numbered in order of first appearance;
//! facets whose corners coincide are dropped with a warning; facet normals
//! are ignored on reading and computed on writing.

use std::io::Write;

use rayon::prelude::*;

use super::text::{
    count_newlines, line_chunks, lines, parse_f32, prefix_sums, push_f32, show, words,
    write_chunked,
};
use super::{MeshIoError, StlEncoding, push_polygon};
use crate::TriMesh;

/// Bytes before the facets of a binary STL: an 80-byte header and a `u32`
/// facet count.
const HEADER: usize = 84;
/// Bytes per facet of a binary STL: normal, 3 corners, attribute count.
const FACET: usize = 50;

pub(super) fn read(
    data: &[u8],
    name: &str,
    polygons: &mut usize,
    warnings: &mut Vec<String>,
) -> Result<TriMesh, MeshIoError> {
    let declared = data
        .get(80..HEADER)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
    let exact = declared.is_some_and(|n| n * FACET + HEADER == data.len());
    let starts_solid = is(words(&data[..data.len().min(256)]).next(), "solid");
    let corners = if exact || !starts_solid {
        binary(data, declared, name, warnings)?
    } else {
        match ascii_corners(data, name, polygons) {
            Ok(c) => c,
            // A binary file that starts with `solid` and has padding.
            Err(e) => match declared {
                Some(n) if n > 0 && n * FACET + HEADER <= data.len() => {
                    binary(data, declared, name, warnings)?
                }
                _ => return Err(e),
            },
        }
    };
    let (mesh, dropped) = merge(&corners);
    if dropped > 0 {
        warnings.push(format!(
            "{name}: {dropped} degenerate facets (coincident corners) were dropped"
        ));
    }
    Ok(mesh)
}

/// The corners of a binary STL file, three per facet; `declared` is the
/// facet count of its header, if the file has one.
fn binary(
    data: &[u8],
    declared: Option<usize>,
    name: &str,
    warnings: &mut Vec<String>,
) -> Result<Vec<[f32; 3]>, MeshIoError> {
    let Some(n) = declared else {
        return Err(MeshIoError::Invalid {
            file: name.to_string(),
            message: if data.is_empty() {
                "empty file".into()
            } else {
                format!(
                    "{} bytes: neither ASCII STL (no 'solid') nor binary STL (84-byte header)",
                    data.len()
                )
            },
        });
    };
    let facets = &data[HEADER..];
    if facets.len() / FACET < n {
        return Err(MeshIoError::Invalid {
            file: name.to_string(),
            message: format!(
                "file ends after {} of {n} facets (truncated)",
                facets.len() / FACET
            ),
        });
    }
    if facets.len() > n * FACET {
        warnings.push(format!(
            "{name}: {} bytes after the {n} facets of a binary STL were ignored",
            facets.len() - n * FACET
        ));
    }
    binary_corners(&facets[..n * FACET], name)
}

/// The corners of binary facets, three per facet.
fn binary_corners(facets: &[u8], name: &str) -> Result<Vec<[f32; 3]>, MeshIoError> {
    let corners: Vec<[f32; 3]> = facets
        .par_chunks_exact(FACET)
        .flat_map_iter(|f| {
            (0..3).map(move |c| {
                [0, 1, 2].map(|k| {
                    let at = 12 + 12 * c + 4 * k;
                    f32::from_le_bytes([f[at], f[at + 1], f[at + 2], f[at + 3]])
                })
            })
        })
        .collect();
    if let Some(c) = corners
        .par_iter()
        .position_first(|p| p.iter().any(|x| !x.is_finite()))
    {
        return Err(MeshIoError::Element {
            file: name.to_string(),
            element: "facet",
            index: c / 3,
            message: format!("non-finite coordinate in corner {}", c % 3),
        });
    }
    Ok(corners)
}

/// Whether `word` is `keyword`, in any case.
fn is(word: Option<&[u8]>, keyword: &str) -> bool {
    word.is_some_and(|w| w.eq_ignore_ascii_case(keyword.as_bytes()))
}

/// The corners of ASCII facets, three per triangle (facets with more
/// corners are fan-triangulated and counted in `polygons`).
fn ascii_corners(
    data: &[u8],
    name: &str,
    polygons: &mut usize,
) -> Result<Vec<[f32; 3]>, MeshIoError> {
    // Chunk ends moved forward to the next `facet` line, so that no facet
    // spans two chunks.
    let mut ends = Vec::new();
    let mut end = 0;
    for c in line_chunks(data) {
        end = end.max(c.as_ptr() as usize - data.as_ptr() as usize + c.len());
        while end < data.len() {
            let line = data[end..].split(|&b| b == b'\n').next().unwrap_or(b"");
            if is(words(line).next(), "facet") {
                break;
            }
            end = (end + line.len() + 1).min(data.len());
        }
        if ends.last() != Some(&end) {
            ends.push(end);
        }
    }
    let mut start = 0;
    let chunks: Vec<&[u8]> = ends
        .iter()
        .map(|&e| {
            let c = &data[start..e];
            start = e;
            c
        })
        .collect();
    let newlines: Vec<usize> = chunks.par_iter().map(|c| count_newlines(c)).collect();
    let parsed: Vec<Result<Facets, MeshIoError>> = chunks
        .par_iter()
        .zip(prefix_sums(newlines, 1))
        .map(|(c, line)| ascii_chunk(c, name, line))
        .collect();
    let mut corners = Vec::new();
    let mut many = 0;
    for chunk in parsed {
        let chunk = chunk?;
        corners.extend_from_slice(&chunk.corners);
        many += chunk.polygons;
    }
    if corners.is_empty() {
        return Err(MeshIoError::Invalid {
            file: name.to_string(),
            message: "ASCII STL without facets".into(),
        });
    }
    *polygons += many;
    Ok(corners)
}

/// The facets of a chunk of ASCII STL.
struct Facets {
    /// Triangles' corners, three per triangle.
    corners: Vec<[f32; 3]>,
    /// Facets with more than 3 corners.
    polygons: usize,
}

/// Parses the facets of one chunk whose first line is number `first_line`.
fn ascii_chunk(data: &[u8], name: &str, first_line: usize) -> Result<Facets, MeshIoError> {
    let mut corners = Vec::new();
    let mut polygons = 0;
    // The line of the open facet and its corners.
    let mut facet = None;
    let mut poly: Vec<[f32; 3]> = Vec::new();
    let mut index = Vec::new();
    let mut tris = Vec::new();
    for (i, line) in lines(data).enumerate() {
        let line_no = first_line + i;
        let syntax = |message: String| MeshIoError::Syntax {
            file: name.to_string(),
            line: line_no,
            message,
        };
        let mut w = words(line);
        let first = w.next();
        let Some(word) = first else { continue };
        let in_facet = |what: &str| match facet {
            Some(_) => Ok(()),
            None => Err(syntax(format!("'{what}' outside a facet"))),
        };
        if is(first, "solid") || is(first, "endsolid") {
            if let Some(f) = facet {
                return Err(syntax(format!(
                    "'{}' before the endfacet of the facet at line {f}",
                    show(word)
                )));
            }
        } else if is(first, "facet") {
            if let Some(f) = facet {
                return Err(syntax(format!(
                    "facet before the endfacet of the facet at line {f}"
                )));
            }
            facet = Some(line_no);
            poly.clear();
        } else if is(first, "outer") || is(first, "endloop") {
            in_facet(&show(word))?;
        } else if is(first, "vertex") {
            in_facet("vertex")?;
            let mut p = [0f32; 3];
            for c in &mut p {
                let x = w
                    .next()
                    .ok_or_else(|| syntax("vertex with fewer than 3 coordinates".into()))?;
                *c = parse_f32(x)
                    .filter(|c| c.is_finite())
                    .ok_or_else(|| syntax(format!("bad coordinate '{}'", show(x))))?;
            }
            poly.push(p);
        } else if is(first, "endfacet") {
            in_facet("endfacet")?;
            index.clear();
            index.extend(0..poly.len() as u32);
            tris.clear();
            push_polygon(&mut tris, &index, &mut polygons).map_err(syntax)?;
            corners.extend(tris.iter().flat_map(|t| t.map(|k| poly[k as usize])));
            facet = None;
        } else {
            return Err(syntax(format!("unexpected '{}' in ASCII STL", show(word))));
        }
    }
    if let Some(f) = facet {
        return Err(MeshIoError::Syntax {
            file: name.to_string(),
            line: f,
            message: "facet without endfacet (truncated?)".into(),
        });
    }
    Ok(Facets { corners, polygons })
}

/// Merges corners with bitwise-equal positions (numbered in order of first
/// appearance) and drops triangles whose corners coincide; returns the mesh
/// and the number dropped.
fn merge(corners: &[[f32; 3]]) -> (TriMesh, usize) {
    let key = |p: &[f32; 3]| p.map(f32::to_bits);
    let mut order: Vec<u32> = (0..corners.len() as u32).collect();
    order.par_sort_unstable_by_key(|&c| (key(&corners[c as usize]), c));
    // The first corner of each group of equal positions.
    let mut rep = vec![0u32; corners.len()];
    let mut first = 0;
    for (k, &c) in order.iter().enumerate() {
        if k == 0 || key(&corners[c as usize]) != key(&corners[order[k - 1] as usize]) {
            first = c;
        }
        rep[c as usize] = first;
    }
    let mut mesh = TriMesh::default();
    let mut id = vec![0u32; corners.len()];
    for c in 0..corners.len() {
        let r = rep[c] as usize;
        id[c] = if r == c {
            mesh.positions.push(corners[c]);
            (mesh.positions.len() - 1) as u32
        } else {
            id[r]
        };
    }
    let mut dropped = 0;
    for t in id.as_chunks::<3>().0 {
        if t[0] == t[1] || t[1] == t[2] || t[2] == t[0] {
            dropped += 1;
        } else {
            mesh.faces.push([t[0], t[1], t[2]]);
        }
    }
    (mesh, dropped)
}

/// The unit normal of triangle `f` (zero when degenerate).
fn normal(mesh: &TriMesh, f: &[u32; 3]) -> [f32; 3] {
    let [a, b, c] = f.map(|v| mesh.positions[v as usize].map(f64::from));
    let e = [0, 1, 2].map(|k| b[k] - a[k]);
    let g = [0, 1, 2].map(|k| c[k] - a[k]);
    let n = [
        e[1] * g[2] - e[2] * g[1],
        e[2] * g[0] - e[0] * g[2],
        e[0] * g[1] - e[1] * g[0],
    ];
    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    if len > 0.0 && len.is_finite() {
        n.map(|x| (x / len) as f32)
    } else {
        [0.0; 3]
    }
}

pub(super) fn write(
    out: &mut impl Write,
    mesh: &TriMesh,
    encoding: StlEncoding,
) -> std::io::Result<()> {
    if encoding == StlEncoding::Ascii {
        out.write_all(b"solid cavity\n")?;
        write_chunked(out, mesh.faces.len(), |r, buf| {
            let vec3 = |buf: &mut Vec<u8>, tag: &[u8], p: [f32; 3]| {
                buf.extend_from_slice(tag);
                for x in p {
                    buf.push(b' ');
                    push_f32(buf, x);
                }
                buf.push(b'\n');
            };
            for f in &mesh.faces[r] {
                vec3(buf, b"facet normal", normal(mesh, f));
                buf.extend_from_slice(b"  outer loop\n");
                for &v in f {
                    vec3(buf, b"    vertex", mesh.positions[v as usize]);
                }
                buf.extend_from_slice(b"  endloop\nendfacet\n");
            }
        })?;
        return out.write_all(b"endsolid cavity\n");
    }
    let count = u32::try_from(mesh.faces.len()).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "{} faces: binary STL holds at most 2^32 - 1",
                mesh.faces.len()
            ),
        )
    })?;
    let mut header = [b' '; 80];
    let text = b"binary STL written by cavity";
    header[..text.len()].copy_from_slice(text);
    out.write_all(&header)?;
    out.write_all(&count.to_le_bytes())?;
    write_chunked(out, mesh.faces.len(), |r, buf| {
        for f in &mesh.faces[r] {
            let corners = f.map(|v| mesh.positions[v as usize]);
            for p in std::iter::once(normal(mesh, f)).chain(corners) {
                for x in p {
                    buf.extend_from_slice(&x.to_le_bytes());
                }
            }
            buf.extend_from_slice(&[0, 0]);
        }
    })
}

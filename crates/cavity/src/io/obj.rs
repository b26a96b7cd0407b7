//! Wavefront OBJ: `v x y z [w]`, `f` with `i`, `i/t`, `i//n`, `i/t/n` and
//! negative (relative) indices; other statements are ignored.
//!
//! Reading splits the file into chunks at line breaks; a first parallel
//! pass counts lines and `v` statements per chunk, so that the second
//! parallel pass knows each line's number and how many vertices precede it
//! (relative indices and range checks need that).

use std::io::Write;

use rayon::prelude::*;

use super::text::{
    Parsed, count_newlines, join_parsed, line_chunks, lines, parse_f32, parse_i64, prefix_sums,
    push_float, push_int, show, words, write_chunked,
};
use super::{MeshIoError, push_polygon};
use crate::TriMesh;

pub(super) fn read(data: &[u8], name: &str, polygons: &mut usize) -> Result<TriMesh, MeshIoError> {
    let chunks = line_chunks(data);
    let counts: Vec<(usize, usize)> = chunks
        .par_iter()
        .map(|c| {
            let vertices = lines(c)
                .filter(|l| words(l).next() == Some(&b"v"[..]))
                .count();
            (count_newlines(c), vertices)
        })
        .collect();
    let first_lines = prefix_sums(counts.iter().map(|c| c.0), 1);
    let first_vertices = prefix_sums(counts.iter().map(|c| c.1), 0);
    let parsed: Vec<Result<Parsed, MeshIoError>> = chunks
        .par_iter()
        .zip(first_lines)
        .zip(first_vertices)
        .map(|((c, line), vertex)| read_chunk(c, name, line, vertex))
        .collect();
    let mesh = join_parsed(parsed, polygons)?;
    if mesh.positions.is_empty() {
        return Err(MeshIoError::Invalid {
            file: name.to_string(),
            message: "no vertices (empty or not an OBJ file)".into(),
        });
    }
    Ok(mesh)
}

/// Parses one chunk whose first line is number `first_line` (1-based) and
/// which follows `first_vertex` vertices.
fn read_chunk(
    data: &[u8],
    name: &str,
    first_line: usize,
    first_vertex: usize,
) -> Result<Parsed, MeshIoError> {
    let mut chunk = Parsed::default();
    let mut poly = Vec::new();
    for (i, line) in lines(data).enumerate() {
        let syntax = |message: String| MeshIoError::Syntax {
            file: name.to_string(),
            line: first_line + i,
            message,
        };
        let mut words = words(line);
        match words.next() {
            Some(b"v") => {
                let mut p = [0f32; 3];
                for c in &mut p {
                    let w = words
                        .next()
                        .ok_or_else(|| syntax("vertex with fewer than 3 coordinates".into()))?;
                    *c = parse_f32(w)
                        .ok_or_else(|| syntax(format!("bad coordinate '{}'", show(w))))?;
                }
                chunk.positions.push(p);
            }
            Some(b"f") => {
                let nv = (first_vertex + chunk.positions.len()) as i64;
                poly.clear();
                for w in words {
                    let first = w.split(|&b| b == b'/').next().unwrap_or(b"");
                    let i = parse_i64(first)
                        .ok_or_else(|| syntax(format!("bad face index '{}'", show(w))))?;
                    let idx = if i < 0 { nv.saturating_add(i) } else { i - 1 };
                    if i == 0 || idx < 0 || idx >= nv {
                        return Err(syntax(format!(
                            "face index {i} out of range (mesh has {nv} vertices so far)"
                        )));
                    }
                    poly.push(idx as u32);
                }
                push_polygon(&mut chunk.faces, &poly, &mut chunk.polygons).map_err(syntax)?;
            }
            _ => {}
        }
    }
    Ok(chunk)
}

pub(super) fn write(
    out: &mut (impl Write + Send),
    mesh: &TriMesh,
    normals: Option<&[[f32; 3]]>,
) -> std::io::Result<()> {
    let vec3 = |buf: &mut Vec<u8>, tag: &[u8], p: &[f32; 3]| {
        buf.extend_from_slice(tag);
        for &x in p {
            buf.push(b' ');
            push_float(buf, x);
        }
        buf.push(b'\n');
    };
    write_chunked(out, mesh.positions.len(), |r, buf| {
        for p in &mesh.positions[r] {
            vec3(buf, b"v", p);
        }
    })?;
    if let Some(normals) = normals {
        write_chunked(out, normals.len(), |r, buf| {
            for n in &normals[r] {
                vec3(buf, b"vn", n);
            }
        })?;
    }
    write_chunked(out, mesh.faces.len(), |r, buf| {
        for f in &mesh.faces[r] {
            buf.push(b'f');
            for i in f {
                buf.push(b' ');
                push_int(buf, i + 1);
                if normals.is_some() {
                    buf.extend_from_slice(b"//");
                    push_int(buf, i + 1);
                }
            }
            buf.push(b'\n');
        }
    })
}

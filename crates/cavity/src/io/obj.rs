//! Wavefront OBJ: `v x y z [w]`, `f` with `i`, `i/t`, `i//n`, `i/t/n` and
//! negative (relative) indices; other statements are ignored.

use std::io::{BufRead, Write};

use super::{MeshIoError, num, push_polygon};
use crate::TriMesh;

pub(super) fn read(
    reader: impl BufRead,
    name: &str,
    polygons: &mut usize,
) -> Result<TriMesh, MeshIoError> {
    let mut mesh = TriMesh::default();
    for (i, line) in reader.lines().enumerate() {
        let line_no = i + 1;
        let syntax = |message: String| MeshIoError::Syntax {
            file: name.to_string(),
            line: line_no,
            message,
        };
        let line = line.map_err(|source| MeshIoError::Io {
            file: name.to_string(),
            source,
        })?;
        let mut words = line.split_whitespace();
        match words.next() {
            Some("v") => {
                let mut p = [0f32; 3];
                for c in &mut p {
                    let w = words
                        .next()
                        .ok_or_else(|| syntax("vertex with fewer than 3 coordinates".into()))?;
                    *c = w
                        .parse()
                        .map_err(|_| syntax(format!("bad coordinate '{w}'")))?;
                }
                mesh.positions.push(p);
            }
            Some("f") => {
                let nv = mesh.positions.len() as i64;
                let mut poly = Vec::new();
                for w in words {
                    let first = w.split('/').next().unwrap_or("");
                    let i: i64 = first
                        .parse()
                        .map_err(|_| syntax(format!("bad face index '{w}'")))?;
                    let idx = if i < 0 { nv + i } else { i - 1 };
                    if i == 0 || idx < 0 || idx >= nv {
                        return Err(syntax(format!(
                            "face index {i} out of range (mesh has {nv} vertices so far)"
                        )));
                    }
                    poly.push(idx as u32);
                }
                push_polygon(&mut mesh.faces, &poly, polygons).map_err(syntax)?;
            }
            _ => {}
        }
    }
    if mesh.positions.is_empty() {
        return Err(MeshIoError::Invalid {
            file: name.to_string(),
            message: "no vertices (empty or not an OBJ file)".into(),
        });
    }
    Ok(mesh)
}

pub(super) fn write(
    out: &mut impl Write,
    mesh: &TriMesh,
    normals: Option<&[[f32; 3]]>,
) -> std::io::Result<()> {
    for p in &mesh.positions {
        writeln!(out, "v {} {} {}", num(p[0]), num(p[1]), num(p[2]))?;
    }
    if let Some(normals) = normals {
        for n in normals {
            writeln!(out, "vn {} {} {}", num(n[0]), num(n[1]), num(n[2]))?;
        }
    }
    for f in &mesh.faces {
        let [a, b, c] = f.map(|i| i + 1);
        if normals.is_some() {
            writeln!(out, "f {a}//{a} {b}//{b} {c}//{c}")?;
        } else {
            writeln!(out, "f {a} {b} {c}")?;
        }
    }
    Ok(())
}

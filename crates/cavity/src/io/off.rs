//! Object File Format: `OFF` (or `NOFF`/`COFF`/`CNOFF`) header, counts,
//! vertices, faces `n i j k ...`; `#` comments; values after a vertex's
//! coordinates (normals, colors) and after a face's indices are ignored.

use std::io::{BufRead, Write};

use super::{MeshIoError, num, push_polygon};
use crate::TriMesh;

pub(super) fn read(
    reader: impl BufRead,
    name: &str,
    polygons: &mut usize,
) -> Result<TriMesh, MeshIoError> {
    let io = |source| MeshIoError::Io {
        file: name.to_string(),
        source,
    };
    // Non-empty lines without comments, with their 1-based numbers.
    let mut lines = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(io)?;
        let text = line.split('#').next().unwrap_or("").trim().to_string();
        if !text.is_empty() {
            lines.push((i + 1, text));
        }
    }
    let mut it = lines.into_iter();
    let syntax = |line: usize, message: String| MeshIoError::Syntax {
        file: name.to_string(),
        line,
        message,
    };
    let (hline, header) = it.next().ok_or_else(|| MeshIoError::Invalid {
        file: name.to_string(),
        message: "empty file".into(),
    })?;
    let mut words: Vec<String> = header.split_whitespace().map(str::to_string).collect();
    let keyword = words.remove(0);
    if !keyword.ends_with("OFF") {
        return Err(syntax(
            hline,
            format!("expected OFF header, found '{keyword}'"),
        ));
    }
    let (cline, counts) = if words.is_empty() {
        it.next()
            .ok_or_else(|| syntax(hline, "missing vertex and face counts".into()))?
    } else {
        (hline, words.join(" "))
    };
    let counts: Vec<usize> = counts
        .split_whitespace()
        .take(2)
        .map(|w| {
            w.parse()
                .map_err(|_| syntax(cline, format!("bad count '{w}'")))
        })
        .collect::<Result<_, _>>()?;
    if counts.len() < 2 {
        return Err(syntax(cline, "expected vertex and face counts".into()));
    }
    let (nv, nf) = (counts[0], counts[1]);
    let mut mesh = TriMesh::default();
    let truncated = |what: &str, got: usize, want: usize| MeshIoError::Invalid {
        file: name.to_string(),
        message: format!("file ends after {got} of {want} {what} (truncated)"),
    };
    for v in 0..nv {
        let (line, text) = it.next().ok_or_else(|| truncated("vertices", v, nv))?;
        let vals: Vec<f32> = text
            .split_whitespace()
            .take(3)
            .map(|w| {
                w.parse()
                    .map_err(|_| syntax(line, format!("bad coordinate '{w}'")))
            })
            .collect::<Result<_, _>>()?;
        if vals.len() < 3 {
            return Err(syntax(line, "vertex with fewer than 3 coordinates".into()));
        }
        mesh.positions.push([vals[0], vals[1], vals[2]]);
    }
    for f in 0..nf {
        let (line, text) = it.next().ok_or_else(|| truncated("faces", f, nf))?;
        let mut words = text.split_whitespace();
        let n: usize = words
            .next()
            .unwrap_or("")
            .parse()
            .map_err(|_| syntax(line, "bad face vertex count".into()))?;
        let poly: Vec<u32> = words
            .by_ref()
            .take(n)
            .map(|w| {
                w.parse::<u32>()
                    .map_err(|_| syntax(line, format!("bad face index '{w}'")))
            })
            .collect::<Result<_, _>>()?;
        if poly.len() < n {
            return Err(syntax(
                line,
                format!("face lists {} of {n} indices", poly.len()),
            ));
        }
        push_polygon(&mut mesh.faces, &poly, polygons).map_err(|m| syntax(line, m))?;
    }
    Ok(mesh)
}

pub(super) fn write(
    out: &mut impl Write,
    mesh: &TriMesh,
    normals: Option<&[[f32; 3]]>,
) -> std::io::Result<()> {
    writeln!(out, "{}", if normals.is_some() { "NOFF" } else { "OFF" })?;
    writeln!(out, "{} {} 0", mesh.positions.len(), mesh.faces.len())?;
    for (v, p) in mesh.positions.iter().enumerate() {
        write!(out, "{} {} {}", num(p[0]), num(p[1]), num(p[2]))?;
        if let Some(n) = normals {
            let n = n[v];
            write!(out, " {} {} {}", num(n[0]), num(n[1]), num(n[2]))?;
        }
        writeln!(out)?;
    }
    for f in &mesh.faces {
        writeln!(out, "3 {} {} {}", f[0], f[1], f[2])?;
    }
    Ok(())
}

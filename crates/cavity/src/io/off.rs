//! Object File Format: `OFF` (or `NOFF`/`COFF`/`CNOFF`) header, counts,
//! vertices, faces `n i j k ...`; `#` comments; values after a vertex's
//! coordinates (normals, colors) and after a face's indices are ignored.
//!
//! After the header, the payload is split into chunks at line breaks; a
//! first parallel pass counts lines and non-empty lines (records) per
//! chunk, so that the second parallel pass knows which record (vertex or
//! face) each line is and its line number.

use std::io::Write;

use rayon::prelude::*;

use super::text::{
    Parsed, count_newlines, join_parsed, line_chunks, lines, parse_f32, parse_u32, parse_usize,
    prefix_sums, push_float, push_int, show, strip_comment, words, write_chunked,
};
use super::{MeshIoError, push_polygon};
use crate::TriMesh;

/// Where a chunk starts and what the header declared.
#[derive(Clone, Copy)]
struct Place {
    /// 1-based number of the chunk's first line.
    line: usize,
    /// Number of records before the chunk.
    record: usize,
    /// Declared vertex count.
    nv: usize,
    /// Declared face count.
    nf: usize,
}

/// The text of a line without comment, if it has any.
fn record(line: &[u8]) -> Option<&[u8]> {
    let text = strip_comment(line);
    words(text).next().is_some().then_some(text)
}

pub(super) fn read(data: &[u8], name: &str, polygons: &mut usize) -> Result<TriMesh, MeshIoError> {
    let syntax = |line: usize, message: String| MeshIoError::Syntax {
        file: name.to_string(),
        line,
        message,
    };
    // The header: keyword and counts, on one line or two.
    let mut header = Vec::new();
    let mut offset = 0;
    let mut line_no = 0;
    while header.len() < 2 && offset < data.len() {
        let end = data[offset..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(data.len(), |k| offset + k + 1);
        line_no += 1;
        if let Some(text) = record(&data[offset..end]) {
            let w: Vec<&[u8]> = words(text).collect();
            if header.is_empty() && w.len() > 1 {
                header.push((line_no, w[..1].to_vec()));
                header.push((line_no, w[1..].to_vec()));
            } else {
                header.push((line_no, w));
            }
        }
        offset = end;
    }
    let Some((hline, keyword)) = header.first() else {
        return Err(MeshIoError::Invalid {
            file: name.to_string(),
            message: "empty file".into(),
        });
    };
    if !keyword[0].ends_with(b"OFF") {
        return Err(syntax(
            *hline,
            format!("expected OFF header, found '{}'", show(keyword[0])),
        ));
    }
    let Some((cline, counts)) = header.get(1) else {
        return Err(syntax(*hline, "missing vertex and face counts".into()));
    };
    let counts: Vec<usize> = counts
        .iter()
        .take(2)
        .map(|w| parse_usize(w).ok_or_else(|| syntax(*cline, format!("bad count '{}'", show(w)))))
        .collect::<Result<_, _>>()?;
    if counts.len() < 2 {
        return Err(syntax(*cline, "expected vertex and face counts".into()));
    }
    let (nv, nf) = (counts[0], counts[1]);
    let payload = &data[offset..];
    let chunks = line_chunks(payload);
    let counts: Vec<(usize, usize)> = chunks
        .par_iter()
        .map(|c| {
            let records = lines(c).filter(|l| record(l).is_some()).count();
            (count_newlines(c), records)
        })
        .collect();
    let first_lines = prefix_sums(counts.iter().map(|c| c.0), line_no + 1);
    let first_records = prefix_sums(counts.iter().map(|c| c.1), 0);
    let parsed: Vec<Result<Parsed, MeshIoError>> = chunks
        .par_iter()
        .zip(first_lines)
        .zip(first_records)
        .map(|((c, line), record)| {
            let place = Place {
                line,
                record,
                nv,
                nf,
            };
            read_chunk(c, name, place)
        })
        .collect();
    let mesh = join_parsed(parsed, polygons)?;
    let records: usize = counts.iter().map(|c| c.1).sum();
    let truncated = |what: &str, got: usize, want: usize| MeshIoError::Invalid {
        file: name.to_string(),
        message: format!("file ends after {got} of {want} {what} (truncated)"),
    };
    if records < nv {
        return Err(truncated("vertices", records, nv));
    }
    if records - nv < nf {
        return Err(truncated("faces", records - nv, nf));
    }
    Ok(mesh)
}

/// Parses the records of one chunk.
fn read_chunk(data: &[u8], name: &str, place: Place) -> Result<Parsed, MeshIoError> {
    let mut chunk = Parsed::default();
    let mut poly = Vec::new();
    let mut r = place.record;
    for (i, line) in lines(data).enumerate() {
        if r >= place.nv.saturating_add(place.nf) {
            break;
        }
        let Some(text) = record(line) else {
            continue;
        };
        let syntax = |message: String| MeshIoError::Syntax {
            file: name.to_string(),
            line: place.line + i,
            message,
        };
        let mut words = words(text);
        if r < place.nv {
            let mut p = [0f32; 3];
            for c in &mut p {
                let w = words
                    .next()
                    .ok_or_else(|| syntax("vertex with fewer than 3 coordinates".into()))?;
                *c = parse_f32(w).ok_or_else(|| syntax(format!("bad coordinate '{}'", show(w))))?;
            }
            chunk.positions.push(p);
        } else {
            let n = words
                .next()
                .and_then(parse_usize)
                .ok_or_else(|| syntax("bad face vertex count".into()))?;
            poly.clear();
            for w in words.by_ref().take(n) {
                poly.push(
                    parse_u32(w).ok_or_else(|| syntax(format!("bad face index '{}'", show(w))))?,
                );
            }
            if poly.len() < n {
                return Err(syntax(format!("face lists {} of {n} indices", poly.len())));
            }
            push_polygon(&mut chunk.faces, &poly, &mut chunk.polygons).map_err(syntax)?;
        }
        r += 1;
    }
    Ok(chunk)
}

pub(super) fn write(
    out: &mut (impl Write + Send),
    mesh: &TriMesh,
    normals: Option<&[[f32; 3]]>,
) -> std::io::Result<()> {
    writeln!(out, "{}", if normals.is_some() { "NOFF" } else { "OFF" })?;
    writeln!(out, "{} {} 0", mesh.positions.len(), mesh.faces.len())?;
    write_chunked(out, mesh.positions.len(), |r, buf| {
        for v in r {
            let p = mesh.positions[v];
            let n = normals.map(|n| n[v]);
            for (k, x) in p.iter().chain(n.iter().flatten()).enumerate() {
                if k > 0 {
                    buf.push(b' ');
                }
                push_float(buf, *x);
            }
            buf.push(b'\n');
        }
    })?;
    write_chunked(out, mesh.faces.len(), |r, buf| {
        for f in &mesh.faces[r] {
            buf.push(b'3');
            for &i in f {
                buf.push(b' ');
                push_int(buf, i);
            }
            buf.push(b'\n');
        }
    })
}

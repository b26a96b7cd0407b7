//! TetGen `.node` / `.ele` pairs: vertices (numbered from 0 or 1, with
//! attributes and boundary markers skipped) and linear tetrahedra.

use rayon::prelude::*;
use std::path::{Path, PathBuf};

use super::stream::{Out, push_f32, push_int, write_elements, write_streamed};
use super::{
    CellMesh, Tokens, VolumeIoError, count_fits, indices, read_file, text_of, unsupported,
};
use crate::mesh::CellVertices;

/// The `.node` and `.ele` files of the TetGen pair `path` names.
pub fn pair(path: &Path) -> (PathBuf, PathBuf) {
    (path.with_extension("node"), path.with_extension("ele"))
}

/// Reads a TetGen pair.
///
/// # Errors
/// As [`super::read_volume`].
pub fn read(path: &Path) -> Result<CellMesh, VolumeIoError> {
    let (node, ele) = pair(path);
    let (node_bytes, ele_bytes) = (read_file(&node)?, read_file(&ele)?);
    read_bytes((&node, &node_bytes), (&ele, &ele_bytes))
}

/// Reads a TetGen pair from the bytes of its `.node` and `.ele` files,
/// each with the path that names it in errors. The counts of the headers
/// are checked against the bytes after them before anything is allocated
/// for their records.
///
/// # Errors
/// As [`super::read_volume`].
pub fn read_bytes(
    (node, node_bytes): (&Path, &[u8]),
    (ele, ele_bytes): (&Path, &[u8]),
) -> Result<CellMesh, VolumeIoError> {
    let (node_text, ele_text) = (text_of(node, node_bytes)?, text_of(ele, ele_bytes)?);
    if let Some(mesh) = read_records(node_text, ele_text) {
        return Ok(mesh);
    }
    read_tokens(node, node_text, ele, ele_text)
}

/// The non-empty lines of `text` without their comments.
fn records(text: &str) -> Vec<&str> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .collect()
}

/// The numbers of `line`, exactly `count` of them, or `None`.
fn fields<T: std::str::FromStr + Copy + Default, const N: usize>(
    line: &str,
    count: usize,
) -> Option<[T; N]> {
    let mut out = [T::default(); N];
    let mut words = line.split_whitespace();
    for x in &mut out {
        *x = words.next()?.parse().ok()?;
    }
    (words.count() + N == count).then_some(out)
}

/// The pair parsed one record per line, in parallel: `None` at the first
/// irregularity of any kind (then [`read_tokens`] reads the files and
/// names what is wrong, and where).
fn read_records(node: &str, ele: &str) -> Option<CellMesh> {
    let lines = records(node);
    let [n, dim, attributes, markers]: [usize; 4] = fields(lines.first()?, 4)?;
    let per_vertex = attributes.checked_add(4 + markers.min(1))?;
    let vertex_lines = lines.get(1..n.checked_add(1)?)?;
    let base = match vertex_lines.first() {
        Some(l) => l.split_whitespace().next()?.parse::<u32>().ok()?.min(1),
        None => 0,
    };
    if dim != 3 {
        return None;
    }
    let positions: Vec<[f32; 3]> = vertex_lines
        .par_iter()
        .enumerate()
        .map(|(i, l)| {
            let mut words = l.split_whitespace();
            let index: u32 = words.next()?.parse().ok()?;
            let p: [f32; 3] = [
                words.next()?.parse().ok()?,
                words.next()?.parse().ok()?,
                words.next()?.parse().ok()?,
            ];
            let ok = index == i as u32 + base
                && p.iter().all(|x| x.is_finite())
                && words.count() + 4 == per_vertex;
            ok.then_some(p)
        })
        .collect::<Option<_>>()?;
    let lines = records(ele);
    let [m, per, attributes]: [usize; 3] = fields(lines.first()?, 3)?;
    if per != 4 {
        return None;
    }
    let vertices = positions.len() as u32;
    let cells = lines
        .get(1..m.checked_add(1)?)?
        .par_iter()
        .map(|l| {
            let [_, a, b, c, d]: [u32; 5] = fields(l, 5 + attributes)?;
            let v = [a, b, c, d].map(|x| x.wrapping_sub(base));
            v.iter()
                .all(|&x| x < vertices)
                .then_some(CellVertices::Tetrahedron(v))
        })
        .collect::<Option<_>>()?;
    Some(CellMesh { positions, cells })
}

/// The pair read token by token (records across lines allowed), naming
/// the file and line of what is wrong.
fn read_tokens(
    node: &Path,
    text: &str,
    ele: &Path,
    ele_text: &str,
) -> Result<CellMesh, VolumeIoError> {
    let mut t = Tokens::new(node, text);
    let (n_line, n) = (t.line_of_next(), t.number::<usize>("the vertex count")?);
    let dim: usize = t.number("the dimension")?;
    let dim_line = t.last_line;
    let attributes: usize = t.number("the attribute count")?;
    let markers: usize = t.number("the boundary-marker flag")?;
    if dim != 3 {
        return Err(t.error(dim_line, format!("dimension {dim}: only 3 is a volume")));
    }
    let extra = attributes.saturating_add(markers.min(1));
    let left = text.len() - t.end;
    let n = count_fits(n, extra.saturating_add(4), left).map_err(|m| {
        t.error(
            n_line.unwrap_or(t.last_line),
            format!("the vertex count: {m}"),
        )
    })?;
    let mut positions = Vec::with_capacity(n);
    let mut base = 0;
    for i in 0..n {
        let line = t.line_of_next().unwrap_or(t.last_line);
        let index: u32 = t.number("the vertex number")?;
        if i == 0 {
            base = index.min(1);
        }
        if index != i as u32 + base {
            return Err(t.error(
                line,
                format!("vertex number {index}, expected {}", i as u32 + base),
            ));
        }
        let p: [f32; 3] = [t.number("x")?, t.number("y")?, t.number("z")?];
        if p.iter().any(|x| !x.is_finite()) {
            return Err(t.error(line, format!("vertex {index} has a non-finite coordinate")));
        }
        for _ in 0..extra {
            t.next("the vertex's attributes")?;
        }
        positions.push(p);
    }
    let mut t = Tokens::new(ele, ele_text);
    let (n_line, n) = (
        t.line_of_next(),
        t.number::<usize>("the tetrahedron count")?,
    );
    let per: usize = t.number("the nodes per tetrahedron")?;
    let per_line = t.last_line;
    let attributes: usize = t.number("the attribute count")?;
    if per != 4 {
        return Err(t.error(
            per_line,
            format!("{per} nodes per tetrahedron: only linear tetrahedra (4) are read"),
        ));
    }
    let left = ele_text.len() - t.end;
    let n = count_fits(n, attributes.saturating_add(5), left).map_err(|m| {
        t.error(
            n_line.unwrap_or(t.last_line),
            format!("the tetrahedron count: {m}"),
        )
    })?;
    let mut cells = Vec::with_capacity(n);
    for _ in 0..n {
        t.next("the tetrahedron number")?;
        let v = indices(&mut t, base, positions.len(), "a tetrahedron")?;
        for _ in 0..attributes {
            t.next("the tetrahedron's attributes")?;
        }
        cells.push(CellVertices::Tetrahedron(v));
    }
    Ok(CellMesh { positions, cells })
}

/// Writes a TetGen pair (numbered from 0, no attributes or markers):
/// the `.node` file, then the `.ele` file, each formatted in parallel
/// pieces and streamed in order into its temporary file.
///
/// # Errors
/// [`VolumeIoError::Unsupported`] for another cell than a tetrahedron
/// (found before anything is written); [`VolumeIoError::File`].
pub fn write(path: &Path, mesh: &CellMesh) -> Result<(), VolumeIoError> {
    let (node, ele) = pair(path);
    check(path, mesh)?;
    write_streamed(&node, |out| encode_node(out, mesh))?;
    write_streamed(&ele, |out| encode_ele(out, mesh))
}

/// Refuses a mesh TetGen cannot hold: [`VolumeIoError::Unsupported`]
/// naming the first cell that is not a tetrahedron.
pub(super) fn check(path: &Path, mesh: &CellMesh) -> Result<(), VolumeIoError> {
    let cells = &mesh.cells;
    match cells
        .par_iter()
        .position_first(|c| !matches!(c, CellVertices::Tetrahedron(_)))
    {
        Some(i) => Err(unsupported(
            path,
            format!(
                "cell {i} is a {:?}; TetGen files hold tetrahedra only",
                cells[i].cell_type()
            ),
        )),
        None => Ok(()),
    }
}

/// Streams the `.node` file [`write()`] writes into `out`.
pub(super) fn encode_node(out: &mut Out<'_>, mesh: &CellMesh) -> std::io::Result<()> {
    let positions = &mesh.positions;
    writeln!(out, "{} 3 0 0", positions.len())?;
    write_elements(out, positions.len(), |r, buf| {
        for i in r {
            push_int(buf, i);
            for x in positions[i] {
                buf.push(b' ');
                push_f32(buf, x);
            }
            buf.push(b'\n');
        }
    })
}

/// Streams the `.ele` file [`write()`] writes into `out` (the mesh
/// [`check`]ed).
pub(super) fn encode_ele(out: &mut Out<'_>, mesh: &CellMesh) -> std::io::Result<()> {
    let cells = &mesh.cells;
    writeln!(out, "{} 4 0", cells.len())?;
    write_elements(out, cells.len(), |r, buf| {
        for i in r {
            push_int(buf, i);
            if let CellVertices::Tetrahedron(v) = &cells[i] {
                for x in v {
                    buf.push(b' ');
                    push_int(buf, *x);
                }
            }
            buf.push(b'\n');
        }
    })
}

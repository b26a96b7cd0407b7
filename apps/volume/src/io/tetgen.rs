//! TetGen `.node` / `.ele` pairs: vertices (numbered from 0 or 1, with
//! attributes and boundary markers skipped) and linear tetrahedra.

use cavity::io::{parse_f32, parse_records, parse_u32, parse_usize};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

use super::stream::{Out, push_f32, push_int, write_elements, write_streamed};
use super::{
    CellMesh, Tokens, VolumeIoError, count_fits, indices, is_text, next_word, read_file, text_of,
    unsupported,
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
    if is_text(node_bytes)
        && is_text(ele_bytes)
        && let Some(mesh) = read_records(node_bytes, ele_bytes)
    {
        return Ok(mesh);
    }
    let (node_text, ele_text) = (text_of(node, node_bytes)?, text_of(ele, ele_bytes)?);
    read_tokens(node, node_text, ele, ele_text)
}

/// The header's `N` counts, and the offset after them: `None` for a word
/// that is not a count.
fn header<const N: usize>(bytes: &[u8]) -> Option<([usize; N], usize)> {
    let mut at = 0;
    let mut out = [0; N];
    for x in &mut out {
        *x = parse_usize(next_word(bytes, &mut at)?)?;
    }
    Some((out, at))
}

/// The pair with its records parsed in parallel
/// ([`cavity::io::parse_records`], as [`read_tokens`] reads them:
/// across lines): `None` where [`read_tokens`] might read it otherwise or
/// refuse it (a comment before a record's end, a bad number, index or
/// vertex number, a count the rest cannot hold): then [`read_tokens`]
/// reads the files and names what is wrong, and where.
fn read_records(node: &[u8], ele: &[u8]) -> Option<CellMesh> {
    let ([n, dim, attributes, markers], at) = header::<4>(node)?;
    let per = attributes.checked_add(4 + markers.min(1))?;
    let n = count_fits(n, per, node.len() - at).ok()?;
    if dim != 3 {
        return None;
    }
    let base = match n {
        0 => 0,
        _ => parse_u32(next_word(node, &mut at.clone())?)?.min(1),
    };
    let any = |w: &[&[u8]]| w.iter().all(|w| w.is_ascii());
    let (positions, _) = parse_records(node, at, n, per, [0f32; 3], |i, w| {
        let p = [parse_f32(w[1])?, parse_f32(w[2])?, parse_f32(w[3])?];
        let ok =
            parse_u32(w[0])? == i as u32 + base && p.iter().all(|x| x.is_finite()) && any(&w[4..]);
        ok.then_some(p)
    })?;
    let ([m, nodes, attributes], at) = header::<3>(ele)?;
    let per = attributes.checked_add(5)?;
    let m = count_fits(m, per, ele.len() - at).ok()?;
    if nodes != 4 {
        return None;
    }
    let vertices = positions.len() as u32;
    let placeholder = CellVertices::Tetrahedron([0; 4]);
    let (cells, _) = parse_records(ele, at, m, per, placeholder, |_, w| {
        let mut v = [0u32; 4];
        for (x, w) in v.iter_mut().zip(&w[1..5]) {
            *x = parse_u32(w)?.checked_sub(base).filter(|&x| x < vertices)?;
        }
        (any(&w[..1]) && any(&w[5..])).then_some(CellVertices::Tetrahedron(v))
    })?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What a reader made of a pair: the mesh or the error's words.
    fn outcome(read: Result<CellMesh, VolumeIoError>) -> Result<String, String> {
        read.map(|m| format!("{m:?}")).map_err(|e| e.to_string())
    }

    /// The pair read token by token.
    fn tokens(node: &[u8], ele: &[u8]) -> Result<CellMesh, VolumeIoError> {
        let (n, e) = (Path::new("x.node"), Path::new("x.ele"));
        read_tokens(n, text_of(n, node)?, e, text_of(e, ele)?)
    }

    /// TetGen's bunny, numbered from 0 and (rewritten) from 1 with
    /// attributes, markers and records over two lines, with TetGen's
    /// trailing comment.
    fn pairs() -> Vec<(Vec<u8>, Vec<u8>)> {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
        let node = std::fs::read(data.join("bunny-tetgen.node")).expect("fixture");
        let ele = std::fs::read(data.join("bunny-tetgen.ele")).expect("fixture");
        let text = |b: &[u8]| String::from_utf8(b.to_vec()).expect("text");
        let renumber = |t: &str, attributes: &str, split: bool| -> String {
            let mut lines = t.lines();
            let head: Vec<&str> = lines.next().expect("header").split_whitespace().collect();
            let mut out = match head.len() {
                4 => format!("{} 3 1 1\n", head[0]),
                _ => format!("{} 4 1\n", head[0]),
            };
            for l in lines {
                let w: Vec<&str> = l.split_whitespace().collect();
                let ints = if head.len() == 4 { 1 } else { 5 };
                for (k, x) in w.iter().enumerate() {
                    match x.parse::<u32>() {
                        Ok(v) if k < ints => out += &format!("{} ", v + 1),
                        _ => out += &format!("{x} "),
                    }
                    if split && k == 2 {
                        out += "\r\n";
                    }
                }
                out += attributes;
                out += "\n";
            }
            out + "# Generated by a test\n"
        };
        let (n, e) = (text(&node), text(&ele));
        vec![
            (node.clone(), ele.clone()),
            (
                renumber(&n, "0.5 7", false).into_bytes(),
                renumber(&e, "-3", true).into_bytes(),
            ),
        ]
    }

    #[test]
    fn pairs_are_read_in_parallel_as_token_by_token() {
        for (node, ele) in pairs() {
            let fast = read_records(&node, &ele).expect("in parallel");
            assert!(fast == tokens(&node, &ele).expect("token by token"));
        }
    }

    #[test]
    fn broken_pairs_read_as_token_by_token() {
        let (n, e) = (Path::new("x.node"), Path::new("x.ele"));
        let mut next = crate::io::stream::xorshift(0x9e37_79b9_7f4a_7c15);
        for (node, ele) in pairs() {
            for k in 0..400 {
                let (mut node, mut ele) = (node.clone(), ele.clone());
                let file = if k % 2 == 0 { &mut node } else { &mut ele };
                let at = (next() % file.len() as u64) as usize;
                match k % 3 {
                    0 => file.truncate(at),
                    1 => file[at] = b"0123456789 \n#.-eE\t\x0b\xc2"[(next() % 18) as usize],
                    _ => file[at] ^= 1 << (next() % 8),
                }
                let new = outcome(read_bytes((n, &node), (e, &ele)));
                let old = outcome(tokens(&node, &ele));
                assert!(
                    new == old,
                    "change {k} at byte {at}: {:?} against {:?}",
                    new.as_ref().err(),
                    old.as_ref().err()
                );
            }
        }
    }
}

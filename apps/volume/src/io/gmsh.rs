//! Gmsh `.msh` files, versions 2.2 and 4.1, ASCII or binary. Read: the
//! nodes and the linear volume elements (tetrahedra, type 4; hexahedra,
//! 5; prisms, 6; pyramids, 7), by node tag (tags may be sparse); points,
//! lines and surface elements are skipped, other sections ignored.
//! Version 2.2 is parsed here, its node and element sections in parallel
//! (binary blocks, and ASCII lines where each is one node or element);
//! 4.1 files laid out as this module and Gmsh write them, ASCII or
//! binary, are parsed here in parallel, other 4.1 files (and every
//! malformed one, for its error) by the `mshio` crate. Written: one volume entity
//! holding every node and cell, with a bounding box (`$Entities`, 4.1) or
//! physical and elementary tags 1 (2.2); binary files are little-endian
//! with 8-byte sizes; the bodies are formatted or filled in parallel and
//! streamed into the file.
//!
//! Per-vertex scalar fields ([`PointField`]) are the post-processing
//! views of `$NodeData` sections with one component (both versions; in a
//! binary file each value follows its node tag as a 4-byte integer, as
//! the format's description of both versions has it), read by
//! [`read_bytes_fields`] and written, one view at time 0, by
//! [`write_field`].
//!
//! Gmsh orders the vertices of these four elements as [`CellVertices`]
//! does.

use std::collections::HashMap;
use std::path::Path;

use cavity::io::{MeshIoError, parse_f64, parse_i64, parse_lines, parse_u32, parse_usize, words};
use rayon::prelude::*;

use super::stream::{
    self, Out, Record, push_f32, push_int, write_elements, write_pieces, write_streamed,
};
use super::{CellMesh, PointField, VolumeIoError, listed, records_from, unsupported};
use crate::mesh::CellVertices;

#[cfg(test)]
mod serial;

/// The MSH version a file is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MshVersion {
    /// 2.2, the legacy format many tools still read.
    V22,
    /// 4.1, the current format.
    #[default]
    V41,
}

/// The cell of a linear volume element of Gmsh type `ty` over `v` (its
/// vertex indices), or `None` for another type.
fn cell_of(ty: u32, v: &[u32]) -> Option<CellVertices> {
    let array = |n: usize| v.get(..n);
    Some(match ty {
        4 => CellVertices::Tetrahedron(array(4)?.try_into().ok()?),
        5 => CellVertices::Hexahedron(array(8)?.try_into().ok()?),
        6 => CellVertices::Prism(array(6)?.try_into().ok()?),
        7 => CellVertices::Pyramid(array(5)?.try_into().ok()?),
        _ => return None,
    })
}

/// Nodes of the Gmsh element types up to 31 (the first- and second-order
/// ones and points); 0 for those past them.
fn nodes_of(ty: u32) -> usize {
    const NODES: [usize; 32] = [
        0, 2, 3, 4, 4, 8, 6, 5, 3, 6, 9, 10, 27, 18, 14, 1, 8, 20, 15, 13, 9, 10, 12, 15, 15, 21,
        4, 5, 6, 20, 35, 56,
    ];
    NODES.get(ty as usize).copied().unwrap_or(0)
}

/// Whether Gmsh element type `ty` (at most 31) is a volume element.
fn is_volume(ty: u32) -> bool {
    matches!(ty, 4..=7 | 11..=14 | 17..=19 | 29..=31)
}

/// Reads a Gmsh file of version 2.2 or 4.1.
///
/// # Errors
/// [`VolumeIoError::File`] naming the line (ASCII) or
/// [`VolumeIoError::Malformed`] naming the element or node (binary, and
/// `mshio`'s message for 4.1) for a malformed file, a node tag no node
/// has, a non-finite coordinate; [`VolumeIoError::Unsupported`] for
/// another version or a higher-order volume element.
pub fn read(path: &Path) -> Result<CellMesh, VolumeIoError> {
    read_bytes(path, &super::read_file(path)?)
}

/// [`read`], with the per-vertex scalar fields ([`read_bytes_fields`]).
///
/// # Errors
/// As [`read_bytes_fields`].
pub fn read_fields(path: &Path) -> Result<(CellMesh, Vec<PointField>), VolumeIoError> {
    read_bytes_fields(path, &super::read_file(path)?)
}

/// Reads a Gmsh file from its bytes; `path` names it in errors. The node
/// count of a 2.2 file is checked against the bytes after it before
/// anything is allocated for the nodes.
///
/// # Errors
/// As [`read`].
pub fn read_bytes(path: &Path, bytes: &[u8]) -> Result<CellMesh, VolumeIoError> {
    read_bytes_fields(path, bytes).map(|(mesh, _)| mesh)
}

/// [`read_bytes`], with the per-vertex scalar fields: every `$NodeData`
/// view of one component with a value at every node, named by its first
/// string tag (`"field"` without one), in file order; a view written at
/// several time steps (several sections of one name) gives its last one.
/// Views of several components, and views of some nodes only, are left
/// out. In a 4.1 file the sections after the last `$EndElements` (or
/// `$EndNodes`) are read for them.
///
/// # Errors
/// As [`read`]; for a `$NodeData` section, the line (ASCII) or
/// [`VolumeIoError::Malformed`] (binary) for a missing or malformed tag,
/// a node tag no node has, more values announced than the file holds.
pub fn read_bytes_fields(
    path: &Path,
    bytes: &[u8],
) -> Result<(CellMesh, Vec<PointField>), VolumeIoError> {
    let mut r = Reader::new(path, bytes);
    let (_, first) = r.line()?;
    if first.trim() != "$MeshFormat" {
        return Err(r.error("the file does not start with $MeshFormat".into()));
    }
    let (_, format) = r.line()?;
    let fields: Vec<&str> = format.split_whitespace().collect();
    match fields.as_slice() {
        ["2.2", kind, _] => read_v22(r, *kind == "1"),
        // `mshio` 0.4.2 panics on data sizes it has no parser for.
        [v, kind, size] if v.starts_with("4.1") => {
            if !matches!(*kind, "0" | "1") || !matches!(*size, "4" | "8") {
                return Err(unsupported(
                    path,
                    format!(
                        "MSH format {:?}: expected file type 0 (ASCII) or 1 (binary) and data size 4 or 8",
                        format.trim()
                    ),
                ));
            }
            if *size == "8"
                && let Some(read) = read_v41_parallel(path, bytes, *kind == "1")
            {
                return Ok(read);
            }
            let (mesh, id) = read_v41(path, bytes)?;
            let fields = fields_v41(path, bytes, *kind == "1", &id, mesh.positions.len())?;
            Ok((mesh, fields))
        }
        _ => Err(unsupported(
            path,
            format!(
                "MSH format {:?}: versions 2.2 and 4.1 are read",
                format.trim()
            ),
        )),
    }
}

/// A position in the bytes of a file, by lines and raw bytes.
struct Reader<'a> {
    path: &'a Path,
    bytes: &'a [u8],
    at: usize,
    line: usize,
}

impl<'a> Reader<'a> {
    fn new(path: &'a Path, bytes: &'a [u8]) -> Self {
        Reader {
            path,
            bytes,
            at: 0,
            line: 0,
        }
    }

    /// An error at the current line.
    fn error(&self, message: String) -> VolumeIoError {
        MeshIoError::Syntax {
            file: self.path.display().to_string(),
            line: self.line,
            message,
        }
        .into()
    }

    /// The next line (without its end) and its 1-based number.
    fn line(&mut self) -> Result<(usize, &'a str), VolumeIoError> {
        if self.at >= self.bytes.len() {
            return Err(self.error("the file ends early".into()));
        }
        let rest = &self.bytes[self.at..];
        let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        self.at += (end + 1).min(rest.len());
        self.line += 1;
        let text = std::str::from_utf8(&rest[..end])
            .map_err(|_| self.error("a line that is not text".into()))?;
        Ok((self.line, text.trim_end_matches('\r')))
    }

    /// The next `n` raw bytes.
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], VolumeIoError> {
        let out = self
            .bytes
            .get(self.at..self.at + n)
            .ok_or_else(|| malformed(self.path, format!("the file ends inside {what}")))?;
        self.at += n;
        Ok(out)
    }

    /// The next little-endian 4-byte integer.
    fn int(&mut self, what: &str) -> Result<i32, VolumeIoError> {
        let b = self.take(4, what)?;
        Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// The next little-endian double.
    fn double(&mut self, what: &str) -> Result<f64, VolumeIoError> {
        let b = self.take(8, what)?;
        Ok(f64::from_le_bytes(b.try_into().expect("eight bytes")))
    }

    /// Skips lines up to and including `end`, as bytes (a skipped
    /// section may be binary).
    fn skip_to(&mut self, end: &str) -> Result<(), VolumeIoError> {
        loop {
            if self.at >= self.bytes.len() {
                return Err(self.error("the file ends early".into()));
            }
            let rest = &self.bytes[self.at..];
            let e = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            self.at += (e + 1).min(rest.len());
            self.line += 1;
            if rest[..e].trim_ascii() == end.as_bytes() {
                return Ok(());
            }
        }
    }

    /// The first number of the next line.
    fn count(&mut self, what: &str) -> Result<usize, VolumeIoError> {
        let (_, l) = self.line()?;
        number(self, l.split_whitespace().next(), what)
    }
}

/// An error of a binary part, naming the element or node.
fn malformed(path: &Path, message: String) -> VolumeIoError {
    VolumeIoError::Malformed {
        file: path.display().to_string(),
        message,
    }
}

/// A number of an ASCII line.
fn number<T: std::str::FromStr>(
    r: &Reader<'_>,
    token: Option<&str>,
    what: &str,
) -> Result<T, VolumeIoError> {
    let t = token.ok_or_else(|| r.error(format!("the line ends before {what}")))?;
    t.parse()
        .map_err(|_| r.error(format!("{what}: {t:?} is not a number")))
}

/// The nodes, volume cells and fields of a 2.2 file after its format
/// line.
fn read_v22(mut r: Reader<'_>, binary: bool) -> Result<(CellMesh, Vec<PointField>), VolumeIoError> {
    let path = r.path;
    if binary {
        let one = r.int("the endianness word")?;
        if one != 1 {
            return Err(malformed(
                path,
                "a big-endian binary file (not read)".into(),
            ));
        }
    }
    r.skip_to("$EndMeshFormat")?;
    let mut positions = Vec::new();
    let mut id = NodeIds::default();
    let mut cells = Vec::new();
    let mut fields = Vec::new();
    while r.at < r.bytes.len() {
        let (_, header) = r.line()?;
        match header.trim() {
            "$NodeData" => {
                let node = |tag: u64| u32::try_from(tag).ok().and_then(|t| id.get(t));
                let field = node_data(&mut r, binary, &node, positions.len())?;
                add_field(&mut fields, field);
            }
            "$Nodes" => {
                let (_, l) = r.line()?;
                let n: usize = number(&r, l.split_whitespace().next(), "the node count")?;
                // A node takes 28 bytes in binary (a tag and three
                // doubles), 8 in ASCII (`1 0 0 0` and a line break).
                let least = if binary { 28 } else { 8 };
                let left = r.bytes.len() - r.at;
                if n > left / least {
                    return Err(r.error(format!(
                        "the node count: {n} announced, but the {left} bytes after it hold at most {} (each takes at least {least})",
                        left / least
                    )));
                }
                if binary {
                    // Fixed records of 28 bytes, parsed in parallel.
                    let records = &r.bytes[r.at..r.at + 28 * n];
                    let (tags, points): (Vec<u32>, Vec<[f32; 3]>) = records
                        .par_chunks_exact(28)
                        .map(|b| {
                            let double = |k: usize| {
                                f64::from_le_bytes(b[k..k + 8].try_into().expect("8 bytes"))
                            };
                            let tag = i32::from_le_bytes(b[..4].try_into().expect("4 bytes"));
                            (
                                tag as u32,
                                [double(4), double(12), double(20)].map(|x| x as f32),
                            )
                        })
                        .unzip();
                    if let Some(k) = points
                        .par_iter()
                        .position_first(|p| p.iter().any(|x| !x.is_finite()))
                    {
                        let message = format!("node {} has a non-finite coordinate", tags[k]);
                        return Err(malformed(path, message));
                    }
                    r.at += 28 * n;
                    id.add(&tags);
                    stream::append(&mut positions, points);
                } else if let Some((nodes, end)) = nodes_22(r.bytes, r.at, n) {
                    let (tags, points): (Vec<u32>, Vec<[f32; 3]>) = nodes.into_par_iter().unzip();
                    (r.at, r.line) = (end, r.line + n);
                    id.add(&tags);
                    stream::append(&mut positions, points);
                } else {
                    positions.reserve(n);
                    let mut tags = Vec::with_capacity(n);
                    for _ in 0..n {
                        let (_, l) = r.line()?;
                        let mut t = l.split_whitespace();
                        let tag: u32 = number(&r, t.next(), "the node tag")?;
                        let mut p = [0f64; 3];
                        for x in &mut p {
                            *x = number(&r, t.next(), "a coordinate")?;
                        }
                        let p = p.map(|x| x as f32);
                        if p.iter().any(|x| !x.is_finite()) {
                            return Err(r.error(format!("node {tag} has a non-finite coordinate")));
                        }
                        tags.push(tag);
                        positions.push(p);
                    }
                    id.add(&tags);
                }
                r.skip_to("$EndNodes")?;
            }
            "$Elements" => {
                let (_, l) = r.line()?;
                let m: usize = number(&r, l.split_whitespace().next(), "the element count")?;
                let mut read = 0;
                // An element line holds at least three words: a count
                // past what the bytes can hold is the serial reading's to
                // refuse (before anything is allocated for it).
                if !binary
                    && m <= (r.bytes.len() - r.at) / 6
                    && let Some((block, end)) = elements_22(r.bytes, r.at, m, &id)
                {
                    (r.at, r.line, read) = (end, r.line + m, m);
                    stream::append(&mut cells, block);
                }
                while read < m {
                    let mut element = |r: &Reader<'_>, tag: u32, ty: u32, nodes: &[u32]| {
                        element_22(r, tag, ty, nodes, &id, &mut cells)
                    };
                    if binary {
                        let ty = r.int("an element block")? as u32;
                        let count = r.int("an element block")? as usize;
                        let tags = r.int("an element block")? as usize;
                        let nn = nodes_of(ty);
                        if nn == 0 {
                            return Err(unsupported(
                                path,
                                format!("element type {ty} is not read"),
                            ));
                        }
                        read += count.max(1);
                        // The block's fixed records, parsed in parallel
                        // where they are all there and all good; else
                        // one by one, for the error.
                        let left = r.bytes.len() - r.at;
                        let sizes = tags
                            .checked_add(1 + nn)
                            .and_then(|words| words.checked_mul(4))
                            .and_then(|record| Some((record, count.checked_mul(record)?)))
                            .filter(|&(_, size)| size <= left);
                        if let Some((record, size)) = sizes {
                            let records = &r.bytes[r.at..r.at + size];
                            if !is_volume(ty) {
                                r.at += size;
                                continue;
                            }
                            if let Some(block) = cells_22(records, record, ty, &id) {
                                stream::append(&mut cells, block);
                                r.at += size;
                                continue;
                            }
                        }
                        for _ in 0..count {
                            let tag = r.int("an element")? as u32;
                            for _ in 0..tags {
                                r.int("an element's tags")?;
                            }
                            let mut nodes = Vec::with_capacity(nn);
                            for _ in 0..nn {
                                nodes.push(r.int("an element's nodes")? as u32);
                            }
                            element(&r, tag, ty, &nodes)?;
                        }
                    } else {
                        let (_, l) = r.line()?;
                        let words: Vec<u32> = l
                            .split_whitespace()
                            .map(|t| number(&r, Some(t), "an element's entry"))
                            .collect::<Result<_, _>>()?;
                        let [tag, ty, tags, ..] = words[..] else {
                            return Err(r.error("a short element line".into()));
                        };
                        let nodes = words.get(3 + tags as usize..).unwrap_or(&[]);
                        element(&r, tag, ty, nodes)?;
                        read += 1;
                    }
                }
                r.skip_to("$EndElements")?;
            }
            "" => {}
            other if other.starts_with('$') => {
                let end = format!("$End{}", &other[1..]);
                r.skip_to(&end)?;
            }
            other => return Err(r.error(format!("expected a section, found {other:?}"))),
        }
    }
    Ok((CellMesh { positions, cells }, fields))
}

/// A node of a 2.2 file: its tag and position.
type Node22 = (u32, [f32; 3]);

/// The `n` node lines of a 2.2 ASCII file from `at` on, their tags and
/// positions, parsed in parallel ([`cavity::io::parse_lines`]), and the
/// offset after them; `None` where the serial reading of [`read_v22`]
/// might read them otherwise or refuse them (a line that is not ASCII, a
/// bad number, a non-finite coordinate), for it to name the line.
fn nodes_22(bytes: &[u8], at: usize, n: usize) -> Option<(Vec<Node22>, usize)> {
    parse_lines(bytes, at, n, (0, [0.0; 3]), |_, line| {
        line.is_ascii().then_some(())?;
        let mut w = words(line);
        let tag = parse_u32(w.next()?)?;
        let mut p = [0f32; 3];
        for x in &mut p {
            *x = parse_f64(w.next()?)? as f32;
        }
        p.iter().all(|x| x.is_finite()).then_some((tag, p))
    })
}

/// The volume cells of the `m` element lines of a 2.2 ASCII file from
/// `at` on (the other elements skipped), parsed in parallel, and the
/// offset after them; `None` where [`element_22`] might refuse a line
/// (or the serial reading read it otherwise), for it to name the line.
fn elements_22(
    bytes: &[u8],
    at: usize,
    m: usize,
    id: &NodeIds,
) -> Option<(Vec<CellVertices>, usize)> {
    // A skipped element (Gmsh has no polyhedra).
    let skipped = CellVertices::Polyhedron(Vec::new());
    let (lines, end) = parse_lines(bytes, at, m, skipped.clone(), |_, line| {
        // Tag, type, tag count, two tags and up to 27 nodes, and more.
        let mut numbers = [0u32; 40];
        let mut len = 0;
        for w in words(line) {
            *numbers.get_mut(len)? = parse_u32(w)?;
            len += 1;
        }
        let [_, ty, tags, ..] = numbers[..len] else {
            return None;
        };
        if ty > 31 {
            return None;
        }
        if !is_volume(ty) {
            return Some(CellVertices::Polyhedron(Vec::new()));
        }
        let nodes = numbers[..len].get(3 + tags as usize..).unwrap_or(&[]);
        let mut v = [0u32; 8];
        for (x, &tag) in v.iter_mut().zip(nodes) {
            *x = id.get(tag)?;
        }
        // Every node named is one the file has.
        nodes
            .iter()
            .skip(8)
            .try_for_each(|&tag| id.get(tag).map(drop))?;
        cell_of(ty, &v[..nodes.len().min(8)])
    })?;
    if lines.par_iter().any(|c| *c == skipped) {
        return Some((
            lines.into_par_iter().filter(|c| *c != skipped).collect(),
            end,
        ));
    }
    Some((lines, end))
}

/// The vertex of each node tag of a 2.2 file: node `i` of a `$Nodes`
/// section is vertex `i`, a later section's tag taking over an earlier
/// one's (as a map filled node by node would have it).
#[derive(Default)]
struct NodeIds {
    /// The tags `first..first + count` of the only section so far, in
    /// order: tag `t` is vertex `t - first` (no map needed).
    consecutive: Option<(u32, u32)>,
    /// The vertex of every other tag.
    map: HashMap<u32, u32>,
}

impl NodeIds {
    /// The vertex of node `tag`.
    fn get(&self, tag: u32) -> Option<u32> {
        match self.consecutive {
            Some((first, count)) => {
                let k = tag.wrapping_sub(first);
                (k < count).then_some(k)
            }
            None => self.map.get(&tag).copied(),
        }
    }

    /// Adds the tags of a `$Nodes` section, node `i` vertex `i`.
    fn add(&mut self, tags: &[u32]) {
        let fresh = self.consecutive.is_none() && self.map.is_empty();
        let consecutive = !tags.is_empty()
            && u64::from(tags[0]) + tags.len() as u64 - 1 <= u64::from(u32::MAX)
            && tags
                .par_iter()
                .enumerate()
                .all(|(i, &t)| t == tags[0].wrapping_add(i as u32));
        if fresh && consecutive {
            self.consecutive = Some((tags[0], tags.len() as u32));
            return;
        }
        if let Some((first, count)) = self.consecutive.take() {
            self.map.extend((0..count).map(|k| (first + k, k)));
        }
        for (i, &t) in tags.iter().enumerate() {
            self.map.insert(t, i as u32);
        }
    }
}

/// The cells of a binary 2.2 block of linear volume elements of type `ty`
/// (4 to 7), from its records of `record` bytes (the element's tag, its
/// tags, its nodes, 4-byte integers), parsed in parallel; `None` for
/// another type or a node no node has (then the block is read element by
/// element, for the error).
fn cells_22(records: &[u8], record: usize, ty: u32, id: &NodeIds) -> Option<Vec<CellVertices>> {
    let nn = nodes_of(ty);
    let first = record / 4 - nn;
    let cell = |b: &[u8]| -> Option<CellVertices> {
        let node = |k: usize| {
            let at = 4 * (first + k);
            id.get(u32::from_le_bytes(
                b[at..at + 4].try_into().expect("4 bytes"),
            ))
        };
        Some(match ty {
            4 => CellVertices::Tetrahedron([node(0)?, node(1)?, node(2)?, node(3)?]),
            5 => CellVertices::Hexahedron([
                node(0)?,
                node(1)?,
                node(2)?,
                node(3)?,
                node(4)?,
                node(5)?,
                node(6)?,
                node(7)?,
            ]),
            6 => CellVertices::Prism([node(0)?, node(1)?, node(2)?, node(3)?, node(4)?, node(5)?]),
            7 => CellVertices::Pyramid([node(0)?, node(1)?, node(2)?, node(3)?, node(4)?]),
            _ => return None,
        })
    };
    let placeholder = CellVertices::Tetrahedron([0; 4]);
    stream::try_map(records.len() / record, placeholder, |i| {
        cell(&records[i * record..(i + 1) * record])
    })
}

/// `field` added to `fields`, replacing a field of its name (a later time
/// step of a view).
fn add_field(fields: &mut Vec<PointField>, field: Option<PointField>) {
    if let Some(f) = field {
        match fields.iter_mut().find(|g| g.name == f.name) {
            Some(g) => *g = f,
            None => fields.push(f),
        }
    }
}

/// One `$NodeData` section, `r` after its `$NodeData` line: its string
/// tags (the first the view's name), real tags (the time) and integer
/// tags (the time step, the components, the number of values), then per
/// value a node tag (`node` gives its vertex) and the components (ASCII,
/// or in `binary` a little-endian 4-byte tag and doubles), through
/// `$EndNodeData`. The field when it has one component and a value at
/// each of the `vertices`, else `None`.
fn node_data(
    r: &mut Reader<'_>,
    binary: bool,
    node: &(dyn Fn(u64) -> Option<u32> + Sync),
    vertices: usize,
) -> Result<Option<PointField>, VolumeIoError> {
    // Each tag takes a line of at least two bytes.
    let fits = |r: &Reader<'_>, n: usize, least: usize, what: &str| {
        let left = r.bytes.len() - r.at;
        if n > left / least {
            return Err(r.error(format!(
                "$NodeData: {n} {what} announced, but the {left} bytes after it hold at most {}",
                left / least
            )));
        }
        Ok(())
    };
    let strings = r.count("the number of string tags")?;
    fits(r, strings, 2, "string tags")?;
    let mut name = None;
    for _ in 0..strings {
        let (_, l) = r.line()?;
        name.get_or_insert_with(|| l.trim().trim_matches('"').to_string());
    }
    let reals = r.count("the number of real tags")?;
    fits(r, reals, 2, "real tags")?;
    for _ in 0..reals {
        r.line()?;
    }
    let integers = r.count("the number of integer tags")?;
    fits(r, integers, 2, "integer tags")?;
    let mut tags = Vec::with_capacity(integers);
    for _ in 0..integers {
        tags.push(r.count("an integer tag")?);
    }
    let (Some(&components), Some(&entries)) = (tags.get(1), tags.get(2)) else {
        return Err(r.error(
            "$NodeData: expected at least three integer tags (the time step, the number of components, the number of values)".into(),
        ));
    };
    if components == 0 {
        return Err(r.error("$NodeData: a view of 0 components".into()));
    }
    let least = if binary {
        4usize.saturating_add(components.saturating_mul(8))
    } else {
        2 * (1 + components)
    };
    fits(r, entries, least, "values")?;
    let name = name
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "field".into());
    if let Some(field) = node_data_parallel(r, binary, node, vertices, components, entries) {
        r.skip_to("$EndNodeData")?;
        let (values, seen) = field;
        return Ok((components == 1 && seen).then_some(PointField { name, values }));
    }
    let mut values = vec![0f32; vertices];
    let mut seen = vec![false; vertices];
    for _ in 0..entries {
        let (tag, first) = if binary {
            let tag = r.int("a $NodeData value")?;
            let mut first = 0.0;
            for c in 0..components {
                let x = r.double("a $NodeData value")?;
                if c == 0 {
                    first = x;
                }
            }
            (u64::try_from(tag).unwrap_or(u64::MAX), first)
        } else {
            let (_, l) = r.line()?;
            let mut t = l.split_whitespace();
            let tag: u64 = number(r, t.next(), "a node tag")?;
            let first: f64 = number(r, t.next(), "a value")?;
            (tag, first)
        };
        let Some(v) = node(tag) else {
            let message = format!(
                "$NodeData view {name:?} gives a value to node {tag}, which the file does not have"
            );
            return Err(if binary {
                malformed(r.path, message)
            } else {
                r.error(message)
            });
        };
        values[v as usize] = first as f32;
        seen[v as usize] = true;
    }
    r.skip_to("$EndNodeData")?;
    Ok((components == 1 && seen.iter().all(|&s| s)).then_some(PointField { name, values }))
}

/// The values of a `$NodeData` section, `r` at its first value
/// (`entries` records: in a `binary` file a 4-byte node tag and
/// `components` doubles, which the caller checked the file holds; in an
/// ASCII one a line of a node tag and the components, of which the first
/// is read), parsed in parallel: each vertex's value (the first
/// component of its last record; 0 for none) and whether every vertex
/// has one, `r` moved past them. `None`, `r` unmoved, for a tag no node
/// has or (ASCII) a line [`node_data`] might read otherwise or refuse
/// (then the records are read one by one, for the error).
fn node_data_parallel(
    r: &mut Reader<'_>,
    binary: bool,
    node: &(dyn Fn(u64) -> Option<u32> + Sync),
    vertices: usize,
    components: usize,
    entries: usize,
) -> Option<(Vec<f32>, bool)> {
    let parsed: Vec<(u32, f32)> = if binary {
        let record = components.checked_mul(8)?.checked_add(4)?;
        let records = &r.bytes[r.at..r.at + entries.checked_mul(record)?];
        let parsed = stream::try_map(entries, (0, 0.0), |i| {
            let b = &records[i * record..(i + 1) * record];
            let tag = i32::from_le_bytes(b[..4].try_into().expect("4 bytes"));
            let x = f64::from_le_bytes(b[4..12].try_into().expect("8 bytes"));
            Some((node(u64::try_from(tag).unwrap_or(u64::MAX))?, x as f32))
        })?;
        r.at += entries * record;
        parsed
    } else {
        let (parsed, end) = parse_lines(r.bytes, r.at, entries, (0, 0.0), |_, line| {
            line.is_ascii().then_some(())?;
            let mut w = words(line);
            let tag = parse_usize(w.next()?)?;
            let x = parse_f64(w.next()?)?;
            Some((node(u64::try_from(tag).ok()?)?, x as f32))
        })?;
        (r.at, r.line) = (end, r.line + entries);
        parsed
    };
    // The common case: one value per vertex, in vertex order.
    let in_order = entries == vertices
        && parsed
            .par_iter()
            .enumerate()
            .all(|(i, &(v, _))| v as usize == i);
    if in_order {
        return Some((parsed.into_par_iter().map(|(_, x)| x).collect(), true));
    }
    let mut values = vec![0f32; vertices];
    let mut seen = vec![false; vertices];
    for (v, x) in parsed {
        values[v as usize] = x;
        seen[v as usize] = true;
    }
    let all = seen.iter().all(|&s| s);
    Some((values, all))
}

/// The fields of a 4.1 file (`mshio` reads no `$NodeData`): the sections
/// after the last `$EndElements` line (else the last `$EndNodes`),
/// walked as [`read_v22`] walks a 2.2 file; `id` maps node tags to
/// vertices.
fn fields_v41(
    path: &Path,
    bytes: &[u8],
    binary: bool,
    id: &HashMap<u64, u32>,
    vertices: usize,
) -> Result<Vec<PointField>, VolumeIoError> {
    let mut fields = Vec::new();
    let Some((marker, end)) = ["$EndElements", "$EndNodes"]
        .iter()
        .find_map(|&m| occurrences(bytes, m.as_bytes(), 0).last().map(|k| (m, k)))
    else {
        return Ok(fields);
    };
    let mut r = Reader::new(path, bytes);
    r.at = end;
    r.line = bytes[..end].iter().filter(|&&b| b == b'\n').count();
    r.skip_to(marker)?;
    let node = |tag: u64| id.get(&tag).copied();
    while r.at < r.bytes.len() {
        let (_, header) = r.line()?;
        match header.trim() {
            "$NodeData" => {
                let field = node_data(&mut r, binary, &node, vertices)?;
                add_field(&mut fields, field);
            }
            "" => {}
            other if other.starts_with('$') => {
                let end = format!("$End{}", &other[1..]);
                r.skip_to(&end)?;
            }
            other => return Err(r.error(format!("expected a section, found {other:?}"))),
        }
    }
    Ok(fields)
}

/// A cursor over the bytes of a 4.1 file for [`read_v41_parallel`]:
/// little-endian numbers (8-byte sizes) in a binary file, words in an
/// ASCII one (separated by blanks, tabs and line breaks, as `mshio` reads
/// them); every read `None` past the end or where the bytes are not a
/// number `mshio` reads as this does.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    binary: bool,
}

/// `mshio`'s blanks between the words of an ASCII file.
fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// An ASCII size: digits alone (`mshio`'s `digit1`).
fn ascii_size(w: &[u8]) -> Option<u64> {
    (!w.is_empty() && w.iter().all(u8::is_ascii_digit)).then_some(())?;
    parse_usize(w).and_then(|v| u64::try_from(v).ok())
}

/// An ASCII integer: digits, perhaps after a `-`.
fn ascii_int(w: &[u8]) -> Option<i32> {
    ascii_size(w.strip_prefix(b"-").unwrap_or(w))?;
    i32::try_from(parse_i64(w)?).ok()
}

/// An ASCII real as `f32` (read as a double, as `mshio` does): a digit,
/// `-` or `.` first, then digits, signs, points and exponents only.
fn ascii_real(w: &[u8]) -> Option<f32> {
    let first = *w.first()?;
    (first.is_ascii_digit() || first == b'-' || first == b'.').then_some(())?;
    w.iter()
        .all(|&b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
        .then_some(())?;
    Some(parse_f64(w)? as f32)
}

impl<'a> Cursor<'a> {
    /// The next `n` bytes.
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let out = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(out)
    }

    /// The next word of an ASCII file.
    fn word(&mut self) -> Option<&'a [u8]> {
        self.blanks();
        let len = self.bytes[self.at..]
            .iter()
            .take_while(|&&b| !is_blank(b))
            .count();
        self.take(len)
    }

    /// The next size.
    fn size(&mut self) -> Option<u64> {
        match self.binary {
            true => Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?)),
            false => ascii_size(self.word()?),
        }
    }

    /// The next integer.
    fn int(&mut self) -> Option<i32> {
        match self.binary {
            true => Some(i32::from_le_bytes(self.take(4)?.try_into().ok()?)),
            false => ascii_int(self.word()?),
        }
    }

    /// Skips `n` reals.
    fn skip_reals(&mut self, n: usize) -> Option<()> {
        match self.binary {
            true => self.take(n.checked_mul(8)?).map(drop),
            false => (0..n).try_for_each(|_| ascii_real(self.word()?).map(drop)),
        }
    }

    /// Skips blanks, tabs and line breaks (as `mshio` does between
    /// sections).
    fn blanks(&mut self) {
        while self.bytes.get(self.at).is_some_and(|&b| is_blank(b)) {
            self.at += 1;
        }
    }

    /// A section's opening line, `$Name` and a line break (`\n` or
    /// `\r\n`): the name (letters).
    fn section(&mut self) -> Option<&'a [u8]> {
        let rest = self.bytes.get(self.at..)?.strip_prefix(b"$")?;
        let letters = rest.iter().take_while(|b| b.is_ascii_alphabetic()).count();
        let after = &rest[letters..];
        let br = if after.starts_with(b"\n") {
            1
        } else if after.starts_with(b"\r\n") {
            2
        } else {
            return None;
        };
        (letters > 0).then_some(())?;
        self.at += 1 + letters + br;
        Some(&rest[..letters])
    }

    /// Blanks, then `tag`, then blanks (a section's closing line).
    fn end(&mut self, tag: &[u8]) -> Option<()> {
        self.blanks();
        self.take(tag.len()).filter(|t| *t == tag)?;
        self.blanks();
        Some(())
    }

    /// Skips `n` entity tags (integers).
    fn skip_ints(&mut self, n: u64) -> Option<()> {
        let n = usize::try_from(n).ok()?;
        match self.binary {
            true => self.take(n.checked_mul(4)?).map(drop),
            false => (0..n).try_for_each(|_| self.int().map(drop)),
        }
    }

    /// The `n` node tags of a block, skipped (each a good size).
    fn skip_node_tags(&mut self, n: usize) -> Option<()> {
        match self.binary {
            true => self.take(n.checked_mul(8)?).map(drop),
            false => records_from(self.bytes, &mut self.at, n, 1, (), |w| {
                ascii_size(w[0]).map(drop)
            })
            .map(drop),
        }
    }

    /// The `n` coordinates of a block, in parallel, as `f32`; `None` for
    /// a non-finite one.
    fn coordinates(&mut self, n: usize) -> Option<Vec<[f32; 3]>> {
        let block: Vec<[f32; 3]> = match self.binary {
            true => self
                .take(n.checked_mul(24)?)?
                .par_chunks_exact(24)
                .map(|b| {
                    let x = |k: usize| {
                        f64::from_le_bytes(b[k..k + 8].try_into().expect("8 bytes")) as f32
                    };
                    [x(0), x(8), x(16)]
                })
                .collect(),
            false => records_from(self.bytes, &mut self.at, n, 3, [0.0; 3], |w| {
                Some([ascii_real(w[0])?, ascii_real(w[1])?, ascii_real(w[2])?])
            })?,
        };
        (!block.par_iter().any(|p| p.iter().any(|x| !x.is_finite()))).then_some(block)
    }

    /// The `n` elements of a block of type `ty` in parallel, each a tag
    /// and `nodes_of(ty)` node tags, `node` giving a tag's vertex; `None`
    /// for a node no vertex has or a type other than the linear volume
    /// elements.
    fn cells(
        &mut self,
        n: usize,
        ty: u32,
        node: impl Fn(u64) -> Option<u32> + Sync,
    ) -> Option<Vec<CellVertices>> {
        if !(4..=7).contains(&ty) {
            return None;
        }
        let nn = nodes_of(ty);
        let placeholder = CellVertices::Tetrahedron([0; 4]);
        if !self.binary {
            return records_from(self.bytes, &mut self.at, n, 1 + nn, placeholder, |w| {
                ascii_size(w[0])?;
                let mut v = [0u32; 8];
                for (x, w) in v.iter_mut().zip(&w[1..]) {
                    *x = node(ascii_size(w)?)?;
                }
                cell_of(ty, &v[..nn])
            });
        }
        let record = 8 * (1 + nn);
        let records = self.take(n.checked_mul(record)?)?;
        stream::try_map(n, placeholder, |i| {
            let b = &records[i * record..(i + 1) * record];
            let mut v = [0u32; 8];
            for (k, x) in v.iter_mut().enumerate().take(nn) {
                *x = node(u64::from_le_bytes(
                    b[8 * (1 + k)..8 * (2 + k)].try_into().ok()?,
                ))?;
            }
            cell_of(ty, &v[..nn])
        })
    }

    /// Skips the `n` elements of a block of type `ty` (a good size each,
    /// in an ASCII file).
    fn skip_elements(&mut self, n: usize, ty: u32) -> Option<()> {
        let per = 1 + nodes_of(ty);
        match self.binary {
            true => self.take(n.checked_mul(8 * per)?).map(drop),
            false => records_from(self.bytes, &mut self.at, n, per, (), |w| {
                w.iter().try_for_each(|w| ascii_size(w).map(drop))
            })
            .map(drop),
        }
    }
}

/// The first offset of `text` in `bytes` from `from` on, searched in
/// parallel.
fn find(bytes: &[u8], text: &[u8], from: usize) -> Option<usize> {
    bytes
        .get(from..)?
        .par_windows(text.len())
        .position_first(|w| w == text)
        .map(|k| from + k)
}

/// A 4.1 file read with its node coordinates and element blocks parsed
/// in parallel (binary: little-endian, 8-byte sizes; ASCII: 8-byte
/// reals, the words separated by blanks, tabs and line breaks), `None`
/// unless it is laid out as this module and Gmsh write them:
/// `$MeshFormat`, sections `mshio` skips, at most one `$Entities`, one
/// `$Nodes` with consecutive tags (`mshio`'s dense numbering: the node of
/// tag `t` is vertex `t - min`) and no parametric nodes, one `$Elements`
/// whose volume blocks are linear elements naming those nodes, then only
/// `$NodeData` sections ([`node_data`]), every count and value good. On
/// `None` (anything else, and every error) the file is read by `mshio`
/// ([`read_v41`]) and [`fields_v41`], which give the same mesh and fields
/// for every file this accepts, and name what is wrong.
fn read_v41_parallel(
    path: &Path,
    bytes: &[u8],
    binary: bool,
) -> Option<(CellMesh, Vec<PointField>)> {
    let head: &[u8] = match binary {
        true => b"$MeshFormat\n4.1 1 8\n\x01\x00\x00\x00\n$EndMeshFormat\n",
        // Vertical tabs and form feeds would part words here, not in `mshio`.
        false if bytes.par_iter().any(|&b| b == 0x0B || b == 0x0C) => return None,
        false => b"$MeshFormat\n4.1 0 8\n$EndMeshFormat\n",
    };
    let mut c = Cursor {
        bytes: bytes.strip_prefix(head).map(|_| bytes)?,
        at: head.len(),
        binary,
    };
    let mut entities = false;
    let mut nodes: Option<(Vec<[f32; 3]>, u64)> = None;
    let cells = loop {
        c.blanks();
        let name = c.section()?;
        match name {
            b"Entities" if !entities && nodes.is_none() => {
                entities = true;
                let counts = [c.size()?, c.size()?, c.size()?, c.size()?];
                for _ in 0..counts[0] {
                    c.int()?;
                    c.skip_reals(3)?;
                    let physical = c.size()?;
                    c.skip_ints(physical)?;
                }
                let others = counts[1]
                    .saturating_add(counts[2])
                    .saturating_add(counts[3]);
                for _ in 0..others {
                    c.int()?;
                    c.skip_reals(6)?;
                    let physical = c.size()?;
                    c.skip_ints(physical)?;
                    let bounding = c.size()?;
                    c.skip_ints(bounding)?;
                }
                c.end(b"$EndEntities")?;
            }
            b"Nodes" if nodes.is_none() => {
                let [blocks, count, min, max] = [c.size()?, c.size()?, c.size()?, c.size()?];
                // Tag 0 is reserved; sparse tags are mapped by `mshio`.
                if count == 0 || min == 0 || max < min || max - min > count - 1 {
                    return None;
                }
                let mut positions: Vec<[f32; 3]> = Vec::new();
                for _ in 0..blocks {
                    let (_dim, _tag, parametric) = (c.int()?, c.int()?, c.int()?);
                    let n = usize::try_from(c.size()?).ok()?;
                    let least = if binary { 32 } else { 8 };
                    if parametric != 0 || n.checked_mul(least)? > bytes.len() - c.at {
                        return None;
                    }
                    c.skip_node_tags(n)?;
                    stream::append(&mut positions, c.coordinates(n)?);
                }
                c.end(b"$EndNodes")?;
                nodes = Some((positions, min));
            }
            b"Elements" => {
                let (positions, min) = nodes.as_ref()?;
                let vertices = positions.len() as u64;
                let [blocks, count, first, last] = [c.size()?, c.size()?, c.size()?, c.size()?];
                if count == 0 || first == 0 || last < first {
                    return None;
                }
                let mut cells = Vec::new();
                for _ in 0..blocks {
                    let (dim, _tag, ty) = (c.int()?, c.int()?, c.int()?);
                    let n = usize::try_from(c.size()?).ok()?;
                    // The types `mshio` knows the nodes of as Gmsh does
                    // (it gives the 18-node prism, type 13, 28 nodes).
                    let ty = u32::try_from(ty)
                        .ok()
                        .filter(|&t| t != 13 && nodes_of(t) > 0)?;
                    if n.checked_mul(2 * (1 + nodes_of(ty)))? > bytes.len() - c.at {
                        return None;
                    }
                    if dim < 3 {
                        c.skip_elements(n, ty)?;
                        continue;
                    }
                    let node = |tag: u64| -> Option<u32> {
                        let v = tag.checked_sub(*min).filter(|&v| v < vertices)?;
                        Some(v as u32)
                    };
                    stream::append(&mut cells, c.cells(n, ty, node)?);
                }
                c.end(b"$EndElements")?;
                break cells;
            }
            b"Entities" | b"Nodes" => return None,
            other => {
                // Skipped as `mshio` skips it: to the first `$End...`.
                let end = [b"$End", other].concat();
                c.at = find(bytes, &end, c.at)? + end.len();
                c.blanks();
            }
        }
    };
    let (positions, min) = nodes?;
    let vertices = positions.len() as u64;
    // `fields_v41` reads on from the last `$EndElements`: none may follow.
    let trailer = c.at;
    if find(bytes, b"$EndElements", trailer).is_some() {
        return None;
    }
    let node = |tag: u64| -> Option<u32> {
        let v = tag.checked_sub(min).filter(|&v| v < vertices)?;
        Some(v as u32)
    };
    let mut r = Reader::new(path, bytes);
    let mut fields = Vec::new();
    loop {
        c.blanks();
        if c.at == bytes.len() {
            break;
        }
        if c.section()? != b"NodeData" {
            return None;
        }
        let body = c.at;
        r.at = body;
        let field = node_data(&mut r, binary, &node, positions.len()).ok()?;
        // `mshio` skips the section to the first `$EndNodeData`: the one
        // `node_data` ended on.
        let end = find(bytes, b"$EndNodeData", body)?;
        if end >= r.at || bytes[end..r.at].trim_ascii() != b"$EndNodeData" {
            return None;
        }
        c.at = end + b"$EndNodeData".len();
        add_field(&mut fields, field);
    }
    Some((CellMesh { positions, cells }, fields))
}

/// Element `tag` of type `ty` over node tags `nodes`: a volume cell kept,
/// a lower-dimensional element skipped.
fn element_22(
    r: &Reader<'_>,
    tag: u32,
    ty: u32,
    nodes: &[u32],
    id: &NodeIds,
    cells: &mut Vec<CellVertices>,
) -> Result<(), VolumeIoError> {
    if ty > 31 {
        return Err(unsupported(
            r.path,
            format!("element {tag} is of type {ty}, which is not read"),
        ));
    }
    if !is_volume(ty) {
        return Ok(());
    }
    let mut v = Vec::with_capacity(nodes.len());
    for n in nodes {
        v.push(id.get(*n).ok_or_else(|| {
            r.error(format!(
                "element {tag} names node {n}, which the file does not have"
            ))
        })?);
    }
    let cell = cell_of(ty, &v).ok_or_else(|| {
        unsupported(
            r.path,
            format!("element {tag} is of type {ty}; linear volume elements (4-7) are read"),
        )
    })?;
    cells.push(cell);
    Ok(())
}

/// The nodes and volume cells of a 4.1 file, through `mshio`, and the
/// vertex of each node tag.
fn read_v41(path: &Path, bytes: &[u8]) -> Result<(CellMesh, HashMap<u64, u32>), VolumeIoError> {
    let patched = without_empty_sections(bytes);
    let msh = mshio::parse_msh_bytes(patched.as_deref().unwrap_or(bytes))
        .map_err(|e| mshio_error(path, bytes, &e))?;
    let mut positions = Vec::new();
    let mut id: HashMap<u64, u32> = HashMap::new();
    if let Some(nodes) = &msh.data.nodes {
        let mut tag = nodes.min_node_tag;
        for block in &nodes.node_blocks {
            let start = positions.len();
            for n in &block.nodes {
                let p = [n.x as f32, n.y as f32, n.z as f32];
                if p.iter().any(|x| !x.is_finite()) {
                    return Err(malformed(
                        path,
                        format!("node {} has a non-finite coordinate", positions.len()),
                    ));
                }
                positions.push(p);
            }
            match &block.node_tags {
                Some(tags) => {
                    for (&t, &i) in tags {
                        id.insert(t, (start + i) as u32);
                    }
                }
                None => {
                    for i in start..positions.len() {
                        id.insert(tag, i as u32);
                        tag += 1;
                    }
                }
            }
        }
    }
    let mut cells = Vec::new();
    for block in msh.data.elements.iter().flat_map(|e| &e.element_blocks) {
        let ty = block.element_type as u32;
        if block.entity_dim < 3 {
            continue;
        }
        for e in &block.elements {
            let mut v = Vec::with_capacity(e.nodes.len());
            for n in &e.nodes {
                v.push(*id.get(n).ok_or_else(|| {
                    malformed(
                        path,
                        format!(
                            "element {} names node {n}, which the file does not have",
                            e.element_tag
                        ),
                    )
                })?);
            }
            let cell = cell_of(ty, &v).ok_or_else(|| {
                unsupported(
                    path,
                    format!(
                        "element {} is a {:?}; linear volume elements are read",
                        e.element_tag, block.element_type
                    ),
                )
            })?;
            cells.push(cell);
        }
    }
    Ok((CellMesh { positions, cells }, id))
}

/// A copy of a 4.1 file whose `$Nodes` or `$Elements` sections that
/// announce no entries are renamed (`$Nodez`, `$Elementz`: the same
/// length, so the lines stay where they are) for `mshio` to skip them as
/// unknown sections; `None` when there is none. `mshio` 0.4.2 computes
/// `count - 1` for these sections, which overflows (a panic in builds
/// with overflow checks) when the count is 0, as Gmsh writes for a mesh
/// without nodes or elements. Every occurrence of a section's tag is
/// looked at, wherever it lies (`mshio` skips blanks around tags).
fn without_empty_sections(bytes: &[u8]) -> Option<Vec<u8>> {
    // The format line: `4.1 FILE-TYPE DATA-SIZE`.
    let format = bytes.split(|&b| b == b'\n').nth(1)?;
    let format = String::from_utf8_lossy(format);
    let fields: Vec<&str> = format.split_whitespace().collect();
    let binary = fields.get(1) == Some(&"1");
    let size: usize = fields.get(2)?.parse().ok().filter(|&s| s == 4 || s == 8)?;
    let mut out: Option<Vec<u8>> = None;
    for (name, renamed, end, end_renamed) in [
        (
            &b"$Nodes"[..],
            &b"$Nodez"[..],
            &b"$EndNodes"[..],
            &b"$EndNodez"[..],
        ),
        (b"$Elements", b"$Elementz", b"$EndElements", b"$EndElementz"),
    ] {
        let ends: Vec<usize> = occurrences(bytes, end, 0).collect();
        for k in occurrences(bytes, name, 0) {
            // The section's header starts on the next line.
            let Some(body) = bytes[k..]
                .iter()
                .position(|&b| b == b'\n')
                .map(|e| k + e + 1)
            else {
                continue;
            };
            let count = if binary {
                bytes
                    .get(body + size..body + 2 * size)
                    .map(|b| b.iter().rev().fold(0u64, |v, &x| v << 8 | u64::from(x)))
            } else {
                let head = &bytes[body..bytes.len().min(body + 256)];
                String::from_utf8_lossy(head)
                    .split_whitespace()
                    .nth(1)
                    .and_then(|w| w.parse::<u64>().ok())
            };
            if count != Some(0) {
                continue;
            }
            let copy = out.get_or_insert_with(|| bytes.to_vec());
            copy[k..k + name.len()].copy_from_slice(renamed);
            if let Some(&e) = ends.get(ends.partition_point(|&e| e < body)) {
                copy[e..e + end.len()].copy_from_slice(end_renamed);
            }
        }
    }
    out
}

/// The offsets of `text` in `bytes` from `from` on.
fn occurrences<'a>(
    bytes: &'a [u8],
    text: &'a [u8],
    from: usize,
) -> impl Iterator<Item = usize> + 'a {
    bytes
        .get(from..)
        .unwrap_or_default()
        .windows(text.len())
        .enumerate()
        .filter(move |(_, w)| *w == text)
        .map(move |(k, _)| from + k)
}

/// `mshio`'s error for a 4.1 file in words: the line where the first
/// error of the MSH format arose, the section it is in, what `mshio` found
/// wrong (with its context, such as the entity block) and what the
/// section should hold there.
fn mshio_error(path: &Path, bytes: &[u8], e: &mshio::MshParserError<&[u8]>) -> VolumeIoError {
    use mshio::error::MshParserErrorKind as Kind;
    let Some((rest, first)) = e.begin_msh_errors().next() else {
        return malformed(path, "not an MSH 4.1 file mshio reads".into());
    };
    // The innermost error that is not a context message.
    let kind = e
        .filter_msh_errors()
        .map(|(_, k)| k)
        .find(|k| k.context().is_none())
        .unwrap_or(first);
    let at = bytes.len() - rest.len();
    let line = 1 + bytes[..at].iter().filter(|&&b| b == b'\n').count();
    // The section: the last `$Name` line that starts at or before the error.
    let end = at + rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
    let section = bytes[..end]
        .split(|&b| b == b'\n')
        .rfind(|l| l.starts_with(b"$") && !l.starts_with(b"$End"))
        .map(|l| String::from_utf8_lossy(l).trim_end().to_string());
    let contexts: Vec<String> = e
        .filter_msh_errors()
        .filter_map(|(_, k)| k.context().map(str::to_string))
        .collect();
    let expected = match kind {
        Kind::InvalidTag => {
            "tags of at least 1 (0 is reserved), and no block whose largest tag is below its smallest"
        }
        Kind::InvalidNodeDefinition => "a node tag, then three coordinates per node",
        Kind::InvalidElementDefinition => {
            "an element tag and as many node tags as the element type has nodes"
        }
        Kind::UnknownElement => "an element type Gmsh defines",
        Kind::ValueOutOfRange(_) => "a value that fits its type",
        Kind::InvalidSectionHeader => {
            "a section ($Entities, $Nodes, $Elements, ...) closed by its $End line"
        }
        Kind::InvalidFileHeader => "$MeshFormat, `4.1 FILE-TYPE DATA-SIZE` and $EndMeshFormat",
        Kind::UnsupportedTypeSize(..) => "8-byte sizes and doubles and 4-byte integers",
        Kind::UnsupportedMshVersion => "version 4.1",
        Kind::TooManyEntities => "no more entities than fit in memory",
        _ => "what the MSH 4.1 format puts there",
    };
    let mut message = match section {
        Some(s) => format!("{s} section: "),
        None => String::new(),
    };
    message += &kind.to_string();
    if !contexts.is_empty() {
        message += &format!(" ({})", contexts.join(", "));
    }
    message += &format!("; expected {expected}");
    MeshIoError::Syntax {
        file: path.display().to_string(),
        line,
        message,
    }
    .into()
}

/// Gmsh's element type of each fixed cell type, by
/// [`stream::type_index`]: tetrahedron 4, hexahedron 5, prism 6,
/// pyramid 7 (the order the 4.1 blocks are written in).
const GMSH_TYPES: [u32; 4] = [4, 5, 6, 7];

/// Writes a Gmsh file of `options.msh_version`, binary or ASCII.
///
/// # Errors
/// [`VolumeIoError::Unsupported`] for a polyhedron;
/// [`VolumeIoError::File`].
pub fn write(
    path: &Path,
    mesh: &CellMesh,
    options: super::WriteOptions,
) -> Result<(), VolumeIoError> {
    write_field(path, mesh, None, options)
}

/// [`write()`], with `field` (one value per position, checked by the
/// caller: `super::write_volume_field`) as a `$NodeData` view of one
/// component at time step 0 after the elements, named by its name
/// (double quotes in it written as single ones, line breaks as spaces).
///
/// The body is formatted (ASCII) or filled (binary) in parallel pieces
/// and streamed in order into the temporary file: no list of the
/// elements, no copy of the whole file in memory. The nodes are numbered
/// from 1 in position order, the elements from 1 in cell order (in 4.1,
/// one block per cell type, in the order tetrahedra, hexahedra, prisms,
/// pyramids; in binary 2.2, one block per run of cells of one type).
///
/// # Errors
/// As [`write()`]; a polyhedron is found before anything is written.
pub fn write_field(
    path: &Path,
    mesh: &CellMesh,
    field: Option<&PointField>,
    options: super::WriteOptions,
) -> Result<(), VolumeIoError> {
    check(path, mesh)?;
    write_streamed(path, |out| encode(out, mesh, field, options))
}

/// Refuses a mesh Gmsh cannot hold: [`VolumeIoError::Unsupported`] naming
/// the first polyhedron.
pub(super) fn check(path: &Path, mesh: &CellMesh) -> Result<(), VolumeIoError> {
    match stream::first_polyhedron(&mesh.cells) {
        Some(i) => Err(unsupported(
            path,
            format!("cell {i} is a general polyhedron, which Gmsh cannot hold (write .vtk)"),
        )),
        None => Ok(()),
    }
}

/// Streams the file [`write_field`] writes into `out` (the mesh
/// [`check`]ed).
pub(super) fn encode(
    out: &mut Out<'_>,
    mesh: &CellMesh,
    field: Option<&PointField>,
    options: super::WriteOptions,
) -> std::io::Result<()> {
    match (options.msh_version, options.binary) {
        (MshVersion::V22, false) => write_v22_ascii(out, mesh)?,
        (MshVersion::V22, true) => write_v22_binary(out, mesh)?,
        (MshVersion::V41, false) => write_v41_ascii(out, mesh)?,
        (MshVersion::V41, true) => write_v41_binary(out, mesh)?,
    }
    match field {
        Some(f) => write_node_data(out, f, options.binary),
        None => Ok(()),
    }
}

/// The vertices of a cell of a fixed type (the writers refuse
/// polyhedra before they start).
fn vertices(cell: &CellVertices) -> &[u32] {
    listed(cell).expect("a cell of a fixed type")
}

/// Appends the little-endian bytes of each of `words`.
fn put<const N: usize>(buf: &mut Vec<u8>, words: impl IntoIterator<Item = [u8; N]>) {
    for w in words {
        buf.extend_from_slice(&w);
    }
}

/// Streams `field` as a `$NodeData` section (see [`write_field`]), the
/// nodes numbered from 1 in position order as the writers number them.
fn write_node_data(out: &mut Out<'_>, field: &PointField, binary: bool) -> std::io::Result<()> {
    let name: String = field
        .name
        .chars()
        .map(|c| match c {
            '"' => '\'',
            '\n' | '\r' => ' ',
            c => c,
        })
        .collect();
    let values = &field.values;
    write!(
        out,
        "$NodeData\n1\n\"{name}\"\n1\n0\n3\n0\n1\n{}\n",
        values.len()
    )?;
    if binary {
        write_elements(out, values.len(), |r, buf| {
            buf.reserve(r.len() * 12);
            for i in r {
                let mut record = Record::<12>::new();
                record.put((i as i32).wrapping_add(1).to_le_bytes());
                record.put(f64::from(values[i]).to_le_bytes());
                record.append_to(buf);
            }
        })?;
        out.write_all(b"\n")?;
    } else {
        write_elements(out, values.len(), |r, buf| {
            for i in r {
                push_int(buf, i + 1);
                buf.push(b' ');
                push_f32(buf, values[i]);
                buf.push(b'\n');
            }
        })?;
    }
    out.write_all(b"$EndNodeData\n")
}

/// Streams a 2.2 ASCII file: each node a line `tag x y z`, each element a
/// line `tag type 2 1 1 nodes...` in cell order.
fn write_v22_ascii(out: &mut Out<'_>, mesh: &CellMesh) -> std::io::Result<()> {
    let (positions, cells) = (&mesh.positions, &mesh.cells);
    write!(
        out,
        "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n{}\n",
        positions.len()
    )?;
    write_elements(out, positions.len(), |r, buf| {
        for i in r {
            push_int(buf, i + 1);
            for x in positions[i] {
                buf.push(b' ');
                push_f32(buf, x);
            }
            buf.push(b'\n');
        }
    })?;
    write!(out, "$EndNodes\n$Elements\n{}\n", cells.len())?;
    write_elements(out, cells.len(), |r, buf| {
        for i in r {
            let cell = &cells[i];
            push_int(buf, i + 1);
            buf.push(b' ');
            push_int(
                buf,
                GMSH_TYPES[stream::type_index(cell).expect("a fixed type")],
            );
            buf.extend_from_slice(b" 2 1 1");
            for &v in vertices(cell) {
                buf.push(b' ');
                push_int(buf, u64::from(v) + 1);
            }
            buf.push(b'\n');
        }
    })?;
    out.write_all(b"$EndElements\n")
}

/// Streams a 2.2 binary file: each node its 4-byte tag and three doubles;
/// the elements in cell order, a block (type, count, 2 tags) per run of
/// cells of one type, each element its tag, tags 1 and 1, and its nodes,
/// as 4-byte integers.
fn write_v22_binary(out: &mut Out<'_>, mesh: &CellMesh) -> std::io::Result<()> {
    let (positions, cells) = (&mesh.positions, &mesh.cells);
    let m = cells.len();
    out.write_all(b"$MeshFormat\n2.2 1 8\n")?;
    out.write_all(&1i32.to_le_bytes())?;
    write!(out, "\n$EndMeshFormat\n$Nodes\n{}\n", positions.len())?;
    write_elements(out, positions.len(), |r, buf| {
        buf.reserve(r.len() * 28);
        for i in r {
            let mut record = Record::<28>::new();
            record.put((i as i32).wrapping_add(1).to_le_bytes());
            positions[i]
                .iter()
                .for_each(|&x| record.put(f64::from(x).to_le_bytes()));
            record.append_to(buf);
        }
    })?;
    write!(out, "\n$EndNodes\n$Elements\n{m}\n")?;
    // The first cell of each run of one type, found piece by piece.
    let ty = |i: usize| stream::type_index(&cells[i]);
    let starts: Vec<usize> = (0..stream::pieces_of(m))
        .into_par_iter()
        .flat_map_iter(|k| stream::piece(k, m).filter(move |&i| i == 0 || ty(i) != ty(i - 1)))
        .collect();
    write_elements(out, m, |r, buf| {
        let mut run = starts.partition_point(|&s| s < r.start);
        for i in r {
            let cell = &cells[i];
            let t = GMSH_TYPES[ty(i).expect("a fixed type")];
            let mut record = Record::<56>::new();
            if starts.get(run) == Some(&i) {
                let end = starts.get(run + 1).copied().unwrap_or(m);
                [t as i32, (end - i) as i32, 2]
                    .iter()
                    .for_each(|w| record.put(w.to_le_bytes()));
                run += 1;
            }
            [(i as i32).wrapping_add(1), 1, 1]
                .iter()
                .for_each(|w| record.put(w.to_le_bytes()));
            for &v in vertices(cell) {
                record.put((v as i32).wrapping_add(1).to_le_bytes());
            }
            record.append_to(buf);
        }
    })?;
    out.write_all(b"\n$EndElements\n")
}

/// The bounding box of `positions` as `f64` (zeros for none), the pieces
/// reduced in parallel and combined in order.
fn bounding_box(positions: &[[f32; 3]]) -> ([f64; 3], [f64; 3]) {
    if positions.is_empty() {
        return ([0.0; 3], [0.0; 3]);
    }
    let boxes: Vec<([f64; 3], [f64; 3])> = positions
        .par_chunks(stream::PIECE)
        .map(|chunk| {
            let mut lo = [f64::INFINITY; 3];
            let mut hi = [f64::NEG_INFINITY; 3];
            for p in chunk {
                for k in 0..3 {
                    lo[k] = lo[k].min(f64::from(p[k]));
                    hi[k] = hi[k].max(f64::from(p[k]));
                }
            }
            (lo, hi)
        })
        .collect();
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for (l, h) in boxes {
        for k in 0..3 {
            lo[k] = lo[k].min(l[k]);
            hi[k] = hi[k].max(h[k]);
        }
    }
    (lo, hi)
}

/// The cells of type `t` ([`stream::type_index`]) of the cells of piece
/// `k`, with their indices, in order.
fn of_type<'a>(
    cells: &'a [CellVertices],
    k: usize,
    t: usize,
) -> impl Iterator<Item = (usize, &'a [u32])> + 'a {
    stream::piece(k, cells.len())
        .filter(move |&i| stream::type_index(&cells[i]) == Some(t))
        .map(move |i| (i, vertices(&cells[i])))
}

/// Streams a 4.1 ASCII file: one entity holding the nodes (tags, then
/// coordinates) and the elements, a block per cell type.
fn write_v41_ascii(out: &mut Out<'_>, mesh: &CellMesh) -> std::io::Result<()> {
    let (positions, cells) = (&mesh.positions, &mesh.cells);
    let (n, m) = (positions.len(), cells.len());
    let (lo, hi) = bounding_box(positions);
    let counts = stream::TypeCounts::of(cells);
    let blocks = counts.total.iter().filter(|&&c| c > 0).count();
    write!(
        out,
        "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Entities\n0 0 0 1\n1 {} {} {} {} {} {} 0 0\n",
        lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]
    )?;
    write!(
        out,
        "$EndEntities\n$Nodes\n1 {n} {} {n}\n3 1 0 {n}\n",
        n.min(1)
    )?;
    write_elements(out, n, |r, buf| {
        for i in r {
            push_int(buf, i + 1);
            buf.push(b'\n');
        }
    })?;
    write_elements(out, n, |r, buf| {
        for i in r {
            let [x, y, z] = positions[i];
            push_f32(buf, x);
            buf.push(b' ');
            push_f32(buf, y);
            buf.push(b' ');
            push_f32(buf, z);
            buf.push(b'\n');
        }
    })?;
    write!(out, "$EndNodes\n$Elements\n{blocks} {m} {} {m}\n", m.min(1))?;
    for (t, &count) in counts.total.iter().enumerate() {
        if count == 0 {
            continue;
        }
        writeln!(out, "3 1 {} {count}", GMSH_TYPES[t])?;
        write_pieces(out, counts.per_piece.len(), |k, buf| {
            if counts.per_piece[k][t] == 0 {
                return;
            }
            for (i, v) in of_type(cells, k, t) {
                push_int(buf, i + 1);
                for &x in v {
                    buf.push(b' ');
                    push_int(buf, u64::from(x) + 1);
                }
                buf.push(b'\n');
            }
        })?;
    }
    out.write_all(b"$EndElements\n")
}

/// Streams a 4.1 binary file (8-byte sizes and tags, 4-byte dimensions,
/// entity tags and types, doubles): as [`write_v41_ascii`].
fn write_v41_binary(out: &mut Out<'_>, mesh: &CellMesh) -> std::io::Result<()> {
    let (positions, cells) = (&mesh.positions, &mesh.cells);
    let (n, m) = (positions.len(), cells.len());
    let (lo, hi) = bounding_box(positions);
    let counts = stream::TypeCounts::of(cells);
    let blocks = counts.total.iter().filter(|&&c| c > 0).count();
    let mut head = b"$MeshFormat\n4.1 1 8\n".to_vec();
    put(&mut head, [1i32.to_le_bytes()]);
    head.extend_from_slice(b"\n$EndMeshFormat\n$Entities\n");
    put(&mut head, [0u64, 0, 0, 1].map(u64::to_le_bytes));
    put(&mut head, [1i32.to_le_bytes()]);
    put(&mut head, lo.iter().chain(&hi).map(|x| x.to_le_bytes()));
    put(&mut head, [0u64, 0].map(u64::to_le_bytes));
    head.extend_from_slice(b"\n$EndEntities\n$Nodes\n");
    put(
        &mut head,
        [1u64, n as u64, n.min(1) as u64, n as u64].map(u64::to_le_bytes),
    );
    put(&mut head, [3i32, 1, 0].map(i32::to_le_bytes));
    put(&mut head, [(n as u64).to_le_bytes()]);
    out.write_all(&head)?;
    write_elements(out, n, |r, buf| {
        buf.reserve(r.len() * 8);
        for i in r {
            buf.extend_from_slice(&(i as u64 + 1).to_le_bytes());
        }
    })?;
    write_elements(out, n, |r, buf| {
        buf.reserve(r.len() * 24);
        for p in &positions[r] {
            let mut record = Record::<24>::new();
            p.iter()
                .for_each(|&x| record.put(f64::from(x).to_le_bytes()));
            record.append_to(buf);
        }
    })?;
    out.write_all(b"\n$EndNodes\n$Elements\n")?;
    let header = [blocks as u64, m as u64, m.min(1) as u64, m as u64];
    out.write_all(&header.map(u64::to_le_bytes).concat())?;
    for (t, &count) in counts.total.iter().enumerate() {
        if count == 0 {
            continue;
        }
        let mut block = [3i32, 1, GMSH_TYPES[t] as i32]
            .map(i32::to_le_bytes)
            .concat();
        put(&mut block, [(count as u64).to_le_bytes()]);
        out.write_all(&block)?;
        write_pieces(out, counts.per_piece.len(), |k, buf| {
            let here = counts.per_piece[k][t];
            if here == 0 {
                return;
            }
            let per = 1 + nodes_of(GMSH_TYPES[t]);
            buf.reserve(here * 8 * per);
            for (i, v) in of_type(cells, k, t) {
                let mut record = Record::<72>::new();
                record.put((i as u64 + 1).to_le_bytes());
                for &x in v {
                    record.put((u64::from(x) + 1).to_le_bytes());
                }
                record.append_to(buf);
            }
        })?;
    }
    out.write_all(b"\n$EndElements\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::WriteOptions;

    /// What a reader made of a file: the mesh and fields (as their debug
    /// text, in which NaN equals NaN), the error's words, or a panic.
    fn outcome(
        read: impl FnOnce() -> Result<(CellMesh, Vec<PointField>), VolumeIoError>,
    ) -> Result<String, String> {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(read)) {
            Ok(Ok(read)) => Ok(format!("{read:?}")),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("a panic".into()),
        }
    }

    /// A mixed mesh of `cells` cells over `vertices` vertices, with a
    /// field.
    fn mesh(vertices: u32, cells: u32) -> (CellMesh, PointField) {
        let positions = (0..vertices)
            .map(|i| [i as f32 * 0.5, (i % 7) as f32, -(i as f32) / 3.0])
            .collect();
        let v = |i: u32, k: u32| (i * 7 + k * 13) % vertices;
        let cells = (0..cells)
            .map(|i| match i % 9 {
                0..=3 => CellVertices::Hexahedron([0, 1, 2, 3, 4, 5, 6, 7].map(|k| v(i, k))),
                4 | 5 => CellVertices::Tetrahedron([0, 1, 2, 3].map(|k| v(i, k))),
                6 | 7 => CellVertices::Prism([0, 1, 2, 3, 4, 5].map(|k| v(i, k))),
                _ => CellVertices::Pyramid([0, 1, 2, 3, 4].map(|k| v(i, k))),
            })
            .collect();
        let field = PointField {
            name: "t".into(),
            values: (0..vertices).map(|i| i as f32 * 0.25).collect(),
        };
        (CellMesh { positions, cells }, field)
    }

    /// The files the comparison reads: Gmsh's fixtures and this module's
    /// files in every version and encoding, with a field.
    fn files() -> Vec<(String, Vec<u8>)> {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
        let mut files: Vec<(String, Vec<u8>)> = [
            "mixed-2.2.msh",
            "mixed-2.2-binary.msh",
            "mixed-4.1.msh",
            "mixed-4.1-binary.msh",
        ]
        .iter()
        .map(|name| {
            (
                name.to_string(),
                std::fs::read(data.join(name)).expect("fixture"),
            )
        })
        .collect();
        let dir = tempfile::tempdir().expect("tempdir");
        let (mesh, field) = mesh(60, 90);
        for (name, binary, msh_version) in [
            ("a.msh", false, MshVersion::V22),
            ("b.msh", true, MshVersion::V22),
            ("c.msh", false, MshVersion::V41),
            ("d.msh", true, MshVersion::V41),
        ] {
            let path = dir.path().join(name);
            let options = WriteOptions {
                binary,
                msh_version,
            };
            write_field(&path, &mesh, Some(&field), options).expect("written");
            files.push((name.to_string(), std::fs::read(&path).expect("written")));
        }
        files
    }

    #[test]
    fn files_of_gmsh_and_of_this_module_are_read_in_parallel() {
        let path = Path::new("x.msh");
        for (name, bytes) in files() {
            let binary = name.ends_with("4.1-binary.msh") || name == "d.msh";
            if !binary && !name.ends_with("4.1.msh") && name != "c.msh" {
                continue;
            }
            let fast = read_v41_parallel(path, &bytes, binary).expect("read in parallel");
            let (mesh, id) = read_v41(path, &bytes).expect("read by mshio");
            let fields =
                fields_v41(path, &bytes, binary, &id, mesh.positions.len()).expect("fields");
            assert!(fast == (mesh, fields), "{name}");
        }
        let (mesh, field) = mesh(100_000, 150_000);
        let dir = tempfile::tempdir().expect("tempdir");
        for binary in [true, false] {
            for version in [MshVersion::V22, MshVersion::V41] {
                let file = dir.path().join("big.msh");
                let options = WriteOptions {
                    binary,
                    msh_version: version,
                };
                write_field(&file, &mesh, Some(&field), options).expect("written");
                let bytes = std::fs::read(&file).expect("written");
                if version == MshVersion::V41 {
                    assert!(read_v41_parallel(path, &bytes, binary).is_some());
                } else if !binary {
                    // The node and element lines parsed in parallel.
                    let after = |tag: &[u8]| {
                        let k = find(&bytes, tag, 0).expect("section") + tag.len();
                        let line = bytes[k..].iter().position(|&b| b == b'\n').expect("count");
                        (k + line + 1, bytes[k..k + line].to_vec())
                    };
                    let (at, n) = after(b"$Nodes\n");
                    let n = parse_usize(&n).expect("count");
                    let (nodes, _) = nodes_22(&bytes, at, n).expect("nodes in parallel");
                    let mut id = NodeIds::default();
                    id.add(&nodes.iter().map(|&(t, _)| t).collect::<Vec<u32>>());
                    let (at, m) = after(b"$Elements\n");
                    let m = parse_usize(&m).expect("count");
                    let (cells, _) = elements_22(&bytes, at, m, &id).expect("in parallel");
                    assert!(cells == mesh.cells);
                }
                let read = read_bytes_fields(path, &bytes).expect("read");
                // 4.1 files list the cells by type.
                if version == MshVersion::V22 {
                    assert!(read == (mesh.clone(), vec![field.clone()]), "{version:?}");
                }
                let serial = serial::read_bytes_fields(path, &bytes).expect("read");
                assert!(read == serial, "{version:?}, binary {binary}");
            }
        }
    }

    #[test]
    fn broken_files_read_as_the_serial_reader_read_them() {
        let path = Path::new("x.msh");
        let mut next = crate::io::stream::xorshift(0x2545_f491_4f6c_dd1d);
        for (name, bytes) in files() {
            for k in 0..600 {
                let mut broken = bytes.clone();
                let at = (next() % bytes.len() as u64) as usize;
                match k % 3 {
                    0 => broken.truncate(at),
                    1 => broken[at] = next() as u8,
                    _ => {
                        // A byte of a small count or index changed.
                        let at = at & !3;
                        broken[at] ^= 1 << (next() % 8);
                    }
                }
                let new = outcome(|| read_bytes_fields(path, &broken));
                let old = outcome(|| serial::read_bytes_fields(path, &broken));
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

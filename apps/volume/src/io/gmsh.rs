//! Gmsh `.msh` files, versions 2.2 and 4.1, ASCII or binary. Read: the
//! nodes and the linear volume elements (tetrahedra, type 4; hexahedra,
//! 5; prisms, 6; pyramids, 7), by node tag (tags may be sparse); points,
//! lines and surface elements are skipped, other sections ignored.
//! Version 4.1 is parsed by the `mshio` crate, 2.2 here. Written: one
//! volume entity holding every node and cell, with a bounding box
//! (`$Entities`, 4.1) or physical and elementary tags 1 (2.2); binary
//! files are little-endian with 8-byte sizes.
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
use std::fmt::Write as _;
use std::path::Path;

use cavity::io::{MeshIoError, format_lines};

use super::{CellMesh, PointField, VolumeIoError, listed, unsupported, write_atomically};
use crate::mesh::CellVertices;

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
    let mut id: HashMap<u32, u32> = HashMap::new();
    let mut cells = Vec::new();
    let mut fields = Vec::new();
    while r.at < r.bytes.len() {
        let (_, header) = r.line()?;
        match header.trim() {
            "$NodeData" => {
                let node = |tag: u64| u32::try_from(tag).ok().and_then(|t| id.get(&t).copied());
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
                positions.reserve(n);
                for i in 0..n {
                    let (tag, p) = if binary {
                        let tag = r.int("a node")?;
                        let p = [
                            r.double("a node")?,
                            r.double("a node")?,
                            r.double("a node")?,
                        ];
                        (tag as u32, p)
                    } else {
                        let (_, l) = r.line()?;
                        let mut t = l.split_whitespace();
                        let tag: u32 = number(&r, t.next(), "the node tag")?;
                        let mut p = [0f64; 3];
                        for x in &mut p {
                            *x = number(&r, t.next(), "a coordinate")?;
                        }
                        (tag, p)
                    };
                    let p = p.map(|x| x as f32);
                    if p.iter().any(|x| !x.is_finite()) {
                        let message = format!("node {tag} has a non-finite coordinate");
                        return Err(if binary {
                            malformed(path, message)
                        } else {
                            r.error(message)
                        });
                    }
                    id.insert(tag, i as u32);
                    positions.push(p);
                }
                r.skip_to("$EndNodes")?;
            }
            "$Elements" => {
                let (_, l) = r.line()?;
                let m: usize = number(&r, l.split_whitespace().next(), "the element count")?;
                let mut read = 0;
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
                        read += count.max(1);
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
    node: &dyn Fn(u64) -> Option<u32>,
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

/// Element `tag` of type `ty` over node tags `nodes`: a volume cell kept,
/// a lower-dimensional element skipped.
fn element_22(
    r: &Reader<'_>,
    tag: u32,
    ty: u32,
    nodes: &[u32],
    id: &HashMap<u32, u32>,
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
        v.push(*id.get(n).ok_or_else(|| {
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

/// The Gmsh type and node list of a cell, or an error for a polyhedron.
fn element<'a>(
    path: &Path,
    i: usize,
    cell: &'a CellVertices,
) -> Result<(u32, &'a [u32]), VolumeIoError> {
    let ty = match cell {
        CellVertices::Tetrahedron(_) => 4,
        CellVertices::Hexahedron(_) => 5,
        CellVertices::Prism(_) => 6,
        CellVertices::Pyramid(_) => 7,
        CellVertices::Polyhedron(_) => {
            return Err(unsupported(
                path,
                format!("cell {i} is a general polyhedron, which Gmsh cannot hold (write .vtk)"),
            ));
        }
    };
    Ok((ty, listed(cell).expect("a cell of a fixed type")))
}

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

/// [`write`], with `field` (one value per position, checked by the
/// caller: `super::write_volume_field`) as a `$NodeData` view of one
/// component at time step 0 after the elements, named by its name
/// (double quotes in it written as single ones, line breaks as spaces).
///
/// # Errors
/// As [`write`].
pub fn write_field(
    path: &Path,
    mesh: &CellMesh,
    field: Option<&PointField>,
    options: super::WriteOptions,
) -> Result<(), VolumeIoError> {
    let mut elements = Vec::with_capacity(mesh.cells.len());
    for (i, c) in mesh.cells.iter().enumerate() {
        elements.push(element(path, i, c)?);
    }
    let mut bytes = match (options.msh_version, options.binary) {
        (MshVersion::V22, false) => write_v22_ascii(mesh, &elements),
        (MshVersion::V22, true) => write_v22_binary(mesh, &elements),
        (MshVersion::V41, binary) => write_v41(mesh, &elements, binary),
    };
    if let Some(f) = field {
        write_node_data(&mut bytes, f, options.binary);
    }
    write_atomically(path, &bytes)
}

/// Appends `field` as a `$NodeData` section (see [`write_field`]), the
/// nodes numbered from 1 in position order as the writers number them.
fn write_node_data(b: &mut Vec<u8>, field: &PointField, binary: bool) {
    let name: String = field
        .name
        .chars()
        .map(|c| match c {
            '"' => '\'',
            '\n' | '\r' => ' ',
            c => c,
        })
        .collect();
    b.extend(
        format!(
            "$NodeData\n1\n\"{name}\"\n1\n0\n3\n0\n1\n{}\n",
            field.values.len()
        )
        .bytes(),
    );
    if binary {
        for (i, v) in field.values.iter().enumerate() {
            b.extend((i as i32 + 1).to_le_bytes());
            b.extend(f64::from(*v).to_le_bytes());
        }
        b.extend(b"\n");
    } else {
        b.extend(
            format_lines(&field.values, |s, i, v| {
                let _ = writeln!(s, "{} {v}", i + 1);
            })
            .bytes(),
        );
    }
    b.extend(b"$EndNodeData\n");
}

fn write_v22_ascii(mesh: &CellMesh, elements: &[(u32, &[u32])]) -> Vec<u8> {
    let mut s = String::from("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n");
    let _ = writeln!(s, "{}", mesh.positions.len());
    s += &format_lines(&mesh.positions, |s, i, p| {
        let _ = writeln!(s, "{} {} {} {}", i + 1, p[0], p[1], p[2]);
    });
    let _ = write!(s, "$EndNodes\n$Elements\n{}\n", elements.len());
    s += &format_lines(elements, |s, i, (ty, v)| {
        let _ = write!(s, "{} {ty} 2 1 1", i + 1);
        for x in *v {
            let _ = write!(s, " {}", x + 1);
        }
        s.push('\n');
    });
    s += "$EndElements\n";
    s.into_bytes()
}

fn write_v22_binary(mesh: &CellMesh, elements: &[(u32, &[u32])]) -> Vec<u8> {
    let mut b = b"$MeshFormat\n2.2 1 8\n".to_vec();
    b.extend(1i32.to_le_bytes());
    b.extend(format!("\n$EndMeshFormat\n$Nodes\n{}\n", mesh.positions.len()).bytes());
    for (i, p) in mesh.positions.iter().enumerate() {
        b.extend((i as i32 + 1).to_le_bytes());
        for x in p {
            b.extend(f64::from(*x).to_le_bytes());
        }
    }
    b.extend(format!("\n$EndNodes\n$Elements\n{}\n", elements.len()).bytes());
    // One block per run of elements of a type.
    let mut i = 0;
    while i < elements.len() {
        let ty = elements[i].0;
        let run = elements[i..].iter().take_while(|e| e.0 == ty).count();
        for word in [ty as i32, run as i32, 2] {
            b.extend(word.to_le_bytes());
        }
        for (k, (_, v)) in elements[i..i + run].iter().enumerate() {
            for word in [(i + k) as i32 + 1, 1, 1] {
                b.extend(word.to_le_bytes());
            }
            for x in *v {
                b.extend((*x as i32 + 1).to_le_bytes());
            }
        }
        i += run;
    }
    b.extend(b"\n$EndElements\n");
    b
}

/// A block of elements of one type: the type, and each element's index
/// and vertices.
type Block<'a> = (u32, Vec<(usize, &'a [u32])>);

/// Element types in the order their blocks are written.
const TYPES: [u32; 4] = [4, 5, 6, 7];

fn write_v41(mesh: &CellMesh, elements: &[(u32, &[u32])], binary: bool) -> Vec<u8> {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in &mesh.positions {
        for k in 0..3 {
            lo[k] = lo[k].min(f64::from(p[k]));
            hi[k] = hi[k].max(f64::from(p[k]));
        }
    }
    if mesh.positions.is_empty() {
        (lo, hi) = ([0.0; 3], [0.0; 3]);
    }
    let n = mesh.positions.len();
    let blocks: Vec<Block<'_>> = TYPES
        .iter()
        .map(|&t| {
            let list: Vec<(usize, &[u32])> = elements
                .iter()
                .enumerate()
                .filter(|(_, e)| e.0 == t)
                .map(|(i, e)| (i, e.1))
                .collect();
            (t, list)
        })
        .filter(|(_, l)| !l.is_empty())
        .collect();
    let (first, last) = (elements.len().min(1), elements.len());
    if !binary {
        let mut s = String::from("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Entities\n0 0 0 1\n");
        let _ = writeln!(
            s,
            "1 {} {} {} {} {} {} 0 0",
            lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]
        );
        let _ = write!(
            s,
            "$EndEntities\n$Nodes\n1 {n} {} {n}\n3 1 0 {n}\n",
            n.min(1)
        );
        s += &format_lines(&mesh.positions, |s, i, _| {
            let _ = writeln!(s, "{}", i + 1);
        });
        s += &format_lines(&mesh.positions, |s, _, p| {
            let _ = writeln!(s, "{} {} {}", p[0], p[1], p[2]);
        });
        let _ = write!(
            s,
            "$EndNodes\n$Elements\n{} {last} {first} {last}\n",
            blocks.len()
        );
        for (t, list) in &blocks {
            let _ = writeln!(s, "3 1 {t} {}", list.len());
            s += &format_lines(list, |s, _, (i, v)| {
                let _ = write!(s, "{}", i + 1);
                for x in *v {
                    let _ = write!(s, " {}", x + 1);
                }
                s.push('\n');
            });
        }
        s += "$EndElements\n";
        return s.into_bytes();
    }
    let mut b = b"$MeshFormat\n4.1 1 8\n".to_vec();
    b.extend(1i32.to_le_bytes());
    b.extend(b"\n$EndMeshFormat\n$Entities\n");
    for count in [0u64, 0, 0, 1] {
        b.extend(count.to_le_bytes());
    }
    b.extend(1i32.to_le_bytes());
    for x in lo.iter().chain(&hi) {
        b.extend(x.to_le_bytes());
    }
    b.extend(0u64.to_le_bytes());
    b.extend(0u64.to_le_bytes());
    b.extend(b"\n$EndEntities\n$Nodes\n");
    for word in [1u64, n as u64, n.min(1) as u64, n as u64] {
        b.extend(word.to_le_bytes());
    }
    for word in [3i32, 1, 0] {
        b.extend(word.to_le_bytes());
    }
    b.extend((n as u64).to_le_bytes());
    for i in 0..n {
        b.extend((i as u64 + 1).to_le_bytes());
    }
    for p in &mesh.positions {
        for x in p {
            b.extend(f64::from(*x).to_le_bytes());
        }
    }
    b.extend(b"\n$EndNodes\n$Elements\n");
    for word in [blocks.len() as u64, last as u64, first as u64, last as u64] {
        b.extend(word.to_le_bytes());
    }
    for (t, list) in &blocks {
        for word in [3i32, 1, *t as i32] {
            b.extend(word.to_le_bytes());
        }
        b.extend((list.len() as u64).to_le_bytes());
        for (i, v) in list {
            b.extend((*i as u64 + 1).to_le_bytes());
            for x in *v {
                b.extend((u64::from(*x) + 1).to_le_bytes());
            }
        }
    }
    b.extend(b"\n$EndElements\n");
    b
}

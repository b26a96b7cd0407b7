//! The Gmsh reader of 1c8220a, element by element (before issue 55,
//! item 3), kept as the reference the parallel reader is checked against
//! (tests only): the same meshes, fields and errors for every file,
//! broken ones included.

use std::collections::HashMap;
use std::path::Path;

use super::{
    Reader, add_field, cell_of, is_volume, malformed, nodes_of, number, occurrences, read_v41,
};
use crate::io::{CellMesh, PointField, VolumeIoError, unsupported};
use crate::mesh::CellVertices;

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
pub(in crate::io) fn read_bytes_fields(
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

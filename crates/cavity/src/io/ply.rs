//! Stanford PLY: `vertex` elements with `x y z` (any scalar type), `face`
//! elements with a `vertex_indices` (or `vertex_index`) list of any integer
//! type, any count type. Other elements and properties are skipped (in
//! binary files by their sizes).
//!
//! The header is parsed here, line by line, so that bad counts are errors
//! naming the line. ASCII payloads are split into chunks at line breaks
//! and parsed in parallel (one element per line, as PLY requires); binary
//! payloads are decoded straight from the bytes.
//!
//! Longer than 700 lines as one file on purpose: the reader and writer of
//! one format share its property table and header parser; the ASCII and
//! binary paths differ only in how a value is decoded.

use std::io::Write;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rayon::prelude::*;

use super::text::{
    Parsed, count_newlines, join_parsed, line_chunks, lines, parse_f32, parse_f64, parse_i64,
    parse_usize, prefix_sums, push_float, push_int, show, words, write_chunked,
};
use super::{MeshIoError, PlyEncoding, VertexData, push_polygon};
use crate::TriMesh;

/// PLY scalar types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scalar {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    F32,
    F64,
}

impl Scalar {
    fn from_name(word: &[u8]) -> Option<Scalar> {
        Some(match word {
            b"char" | b"int8" => Scalar::I8,
            b"uchar" | b"uint8" => Scalar::U8,
            b"short" | b"int16" => Scalar::I16,
            b"ushort" | b"uint16" => Scalar::U16,
            b"int" | b"int32" => Scalar::I32,
            b"uint" | b"uint32" => Scalar::U32,
            b"float" | b"float32" => Scalar::F32,
            b"double" | b"float64" => Scalar::F64,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Scalar::I8 => "char",
            Scalar::U8 => "uchar",
            Scalar::I16 => "short",
            Scalar::U16 => "ushort",
            Scalar::I32 => "int",
            Scalar::U32 => "uint",
            Scalar::F32 => "float",
            Scalar::F64 => "double",
        }
    }

    fn size(self) -> usize {
        match self {
            Scalar::I8 | Scalar::U8 => 1,
            Scalar::I16 | Scalar::U16 => 2,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
            Scalar::F64 => 8,
        }
    }

    fn is_int(self) -> bool {
        !matches!(self, Scalar::F32 | Scalar::F64)
    }

    /// Whether an integer value fits the type.
    fn holds(self, v: i64) -> bool {
        match self {
            Scalar::I8 => i8::try_from(v).is_ok(),
            Scalar::U8 => u8::try_from(v).is_ok(),
            Scalar::I16 => i16::try_from(v).is_ok(),
            Scalar::U16 => u16::try_from(v).is_ok(),
            Scalar::I32 => i32::try_from(v).is_ok(),
            Scalar::U32 => u32::try_from(v).is_ok(),
            Scalar::F32 | Scalar::F64 => true,
        }
    }

    /// The integer at the start of `b` (which holds at least `size`
    /// bytes); `None` for floating-point types.
    fn int(self, b: &[u8], big: bool) -> Option<i64> {
        Some(match self {
            Scalar::I8 => i8::from_le_bytes(bytes(b, big)) as i64,
            Scalar::U8 => u8::from_le_bytes(bytes(b, big)) as i64,
            Scalar::I16 => i16::from_le_bytes(bytes(b, big)) as i64,
            Scalar::U16 => u16::from_le_bytes(bytes(b, big)) as i64,
            Scalar::I32 => i32::from_le_bytes(bytes(b, big)) as i64,
            Scalar::U32 => u32::from_le_bytes(bytes(b, big)) as i64,
            Scalar::F32 | Scalar::F64 => return None,
        })
    }

    /// The value at the start of `b` (which holds at least `size` bytes)
    /// as an `f32`, rounded once.
    fn coord(self, b: &[u8], big: bool) -> f32 {
        match self {
            Scalar::F32 => f32::from_le_bytes(bytes(b, big)),
            Scalar::F64 => f64::from_le_bytes(bytes(b, big)) as f32,
            t => t.int(b, big).unwrap_or(0) as f32,
        }
    }
}

/// The first `N` bytes of `b` in little-endian order (reversed if `big`).
fn bytes<const N: usize>(b: &[u8], big: bool) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&b[..N]);
    if big {
        a.reverse();
    }
    a
}

/// A property's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Scalar(Scalar),
    /// Count type, item type.
    List(Scalar, Scalar),
}

/// An element of the header.
struct Element {
    name: String,
    count: usize,
    properties: Vec<(String, Kind)>,
}

impl Element {
    /// Bytes per element in binary files, if it has no lists.
    fn stride(&self) -> Option<usize> {
        self.properties
            .iter()
            .map(|(_, k)| match k {
                Kind::Scalar(s) => Some(s.size()),
                Kind::List(..) => None,
            })
            .sum()
    }

    /// The fewest bytes an element takes in binary files.
    fn min_size(&self) -> usize {
        self.properties
            .iter()
            .map(|(_, k)| match k {
                Kind::Scalar(s) | Kind::List(s, _) => s.size(),
            })
            .sum()
    }

    /// What a count of these elements is called in messages.
    fn plural(&self) -> String {
        match self.name.as_str() {
            "vertex" => "vertices".into(),
            "face" => "faces".into(),
            n => format!("'{n}' elements"),
        }
    }
}

/// The parsed header.
struct Header {
    encoding: PlyEncoding,
    elements: Vec<Element>,
    /// Number of header lines.
    lines: usize,
    /// Bytes of the header, up to and including the end_header line break.
    len: usize,
}

fn header(data: &[u8], name: &str) -> Result<Header, MeshIoError> {
    let syntax = |line: usize, message: String| MeshIoError::Syntax {
        file: name.to_string(),
        line,
        message,
    };
    let mut encoding = None;
    let mut elements: Vec<Element> = Vec::new();
    let mut offset = 0;
    let mut line = 0;
    while offset < data.len() {
        let end = data[offset..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(data.len(), |k| offset + k + 1);
        line += 1;
        let text = &data[offset..end];
        let w: Vec<&[u8]> = words(text).collect();
        offset = end;
        if line == 1 {
            if w.len() != 1 || w[0] != b"ply" {
                return Err(syntax(1, "not a PLY file (expected 'ply')".into()));
            }
            continue;
        }
        match w.first().copied() {
            Some(b"format") => {
                encoding = Some(match (w.get(1).copied(), w.len()) {
                    (Some(b"ascii"), 3) => PlyEncoding::Ascii,
                    (Some(b"binary_little_endian"), 3) => PlyEncoding::BinaryLittleEndian,
                    (Some(b"binary_big_endian"), 3) => PlyEncoding::BinaryBigEndian,
                    _ => {
                        return Err(syntax(
                            line,
                            "expected 'format ascii|binary_little_endian|binary_big_endian VERSION'"
                                .into(),
                        ));
                    }
                });
            }
            Some(b"comment" | b"obj_info") => {}
            Some(b"element") => {
                let [_, elem, count] = w[..] else {
                    return Err(syntax(line, "expected 'element NAME COUNT'".into()));
                };
                let count = parse_usize(count).ok_or_else(|| {
                    let what = if count.iter().all(u8::is_ascii_digit) {
                        "too large"
                    } else {
                        "not a count"
                    };
                    syntax(line, format!("element count '{}' is {what}", show(count)))
                })?;
                elements.push(Element {
                    name: show(elem),
                    count,
                    properties: Vec::new(),
                });
            }
            Some(b"property") => {
                let kind_of = |t: &[u8]| {
                    Scalar::from_name(t)
                        .ok_or_else(|| syntax(line, format!("unknown property type '{}'", show(t))))
                };
                let (kind, prop) = match w[..] {
                    [_, b"list", count, item, prop] => {
                        (Kind::List(kind_of(count)?, kind_of(item)?), prop)
                    }
                    [_, t, prop] if t != b"list" => (Kind::Scalar(kind_of(t)?), prop),
                    _ => {
                        return Err(syntax(
                            line,
                            "expected 'property TYPE NAME' or 'property list COUNT_TYPE TYPE NAME'"
                                .into(),
                        ));
                    }
                };
                let Some(e) = elements.last_mut() else {
                    return Err(syntax(line, "property before any element".into()));
                };
                e.properties.push((show(prop), kind));
            }
            Some(b"end_header") => {
                let encoding = encoding.ok_or_else(|| MeshIoError::Invalid {
                    file: name.to_string(),
                    message: "PLY header has no format line".into(),
                })?;
                return Ok(Header {
                    encoding,
                    elements,
                    lines: line,
                    len: offset,
                });
            }
            _ => {
                let text: String = show(text).trim_end().chars().take(40).collect();
                return Err(syntax(line, format!("unknown PLY header line '{text}'")));
            }
        }
    }
    Err(MeshIoError::Invalid {
        file: name.to_string(),
        message: if line == 0 {
            "empty file".into()
        } else {
            "PLY header has no end_header line (truncated or not a PLY file)".into()
        },
    })
}

/// What the reader takes from the `vertex` and `face` elements.
struct Layout {
    /// Index of the vertex element.
    vertex: usize,
    /// Index and type of its x, y, z properties (`usize::MAX` where the
    /// element, being empty, lacks them).
    xyz: [(usize, Scalar); 3],
    /// Index of the face element and of its index list, if any.
    face: Option<(usize, usize)>,
}

fn layout(h: &Header, name: &str) -> Result<Layout, MeshIoError> {
    let find = |e: &str| h.elements.iter().position(|x| x.name == e);
    let vertex = find("vertex").ok_or_else(|| MeshIoError::Invalid {
        file: name.to_string(),
        message: "no vertex element".into(),
    })?;
    let ve = &h.elements[vertex];
    let mut xyz = [(usize::MAX, Scalar::F32); 3];
    for (c, key) in ["x", "y", "z"].iter().enumerate() {
        let found = ve.properties.iter().enumerate().find(|p| p.1.0 == *key);
        match found {
            Some((k, (_, Kind::Scalar(t)))) => xyz[c] = (k, *t),
            _ if ve.count == 0 => {}
            _ => {
                return Err(MeshIoError::Element {
                    file: name.to_string(),
                    element: "vertex",
                    index: 0,
                    message: format!("missing numeric property {key}"),
                });
            }
        }
    }
    let face = match find("face") {
        None => None,
        Some(f) => {
            let fe = &h.elements[f];
            let list = ["vertex_indices", "vertex_index"]
                .iter()
                .find_map(|key| fe.properties.iter().position(|p| p.0 == *key));
            match list {
                Some(k) if matches!(fe.properties[k].1, Kind::List(_, t) if t.is_int()) => {
                    Some((f, k))
                }
                _ if fe.count == 0 => None,
                _ => {
                    return Err(MeshIoError::Element {
                        file: name.to_string(),
                        element: "face",
                        index: 0,
                        message: "missing vertex_indices list".into(),
                    });
                }
            }
        }
    };
    Ok(Layout { vertex, xyz, face })
}

pub(super) fn read(data: &[u8], name: &str, polygons: &mut usize) -> Result<TriMesh, MeshIoError> {
    read_with(data, name, polygons, Walk::Parallel)
}

/// [`read`], binary elements with lists decoded as `walk` says.
fn read_with(
    data: &[u8],
    name: &str,
    polygons: &mut usize,
    walk: Walk,
) -> Result<TriMesh, MeshIoError> {
    let h = header(data, name)?;
    let l = layout(&h, name)?;
    let payload = &data[h.len..];
    match h.encoding {
        PlyEncoding::Ascii => read_ascii(payload, &h, &l, name, polygons),
        PlyEncoding::BinaryLittleEndian => {
            read_binary(payload, &h, &l, false, name, polygons, walk)
        }
        PlyEncoding::BinaryBigEndian => read_binary(payload, &h, &l, true, name, polygons, walk),
    }
}

fn truncated(name: &str, e: &Element, got: usize) -> MeshIoError {
    MeshIoError::Invalid {
        file: name.to_string(),
        message: format!(
            "file ends after {got} of {} {} (truncated)",
            e.count,
            e.plural()
        ),
    }
}

fn out_of_range(name: &str, f: usize, i: i64, nv: usize) -> MeshIoError {
    MeshIoError::Element {
        file: name.to_string(),
        element: "face",
        index: f,
        message: format!("index {i} out of range (mesh has {nv} vertices)"),
    }
}

fn read_ascii(
    payload: &[u8],
    h: &Header,
    l: &Layout,
    name: &str,
    polygons: &mut usize,
) -> Result<TriMesh, MeshIoError> {
    // First payload line of each element, and of none (saturating: counts
    // beyond the file are reported as truncation below).
    let starts: Vec<usize> = {
        let mut s = vec![0usize];
        for e in &h.elements {
            s.push(s[s.len() - 1].saturating_add(e.count));
        }
        s
    };
    let chunks = line_chunks(payload);
    let newlines: Vec<usize> = chunks.par_iter().map(|c| count_newlines(c)).collect();
    let first = prefix_sums(newlines.iter().copied(), 0);
    let parsed: Vec<Result<Parsed, MeshIoError>> = chunks
        .par_iter()
        .zip(first)
        .map(|(c, first)| ascii_chunk(c, first, &starts, h, l, name))
        .collect();
    let mesh = join_parsed(parsed, polygons)?;
    let unterminated = !payload.is_empty() && !payload.ends_with(b"\n");
    let total = newlines.iter().sum::<usize>() + unterminated as usize;
    for (k, e) in h.elements.iter().enumerate() {
        if total < starts[k + 1] {
            return Err(truncated(name, e, total.saturating_sub(starts[k])));
        }
    }
    Ok(mesh)
}

/// Parses the element lines of one ASCII chunk, whose first line is
/// payload line `first` (0-based).
fn ascii_chunk(
    data: &[u8],
    first: usize,
    starts: &[usize],
    h: &Header,
    l: &Layout,
    name: &str,
) -> Result<Parsed, MeshIoError> {
    let mut chunk = Parsed::default();
    let nv = h.elements[l.vertex].count;
    let mut poly = Vec::new();
    let mut group = starts.partition_point(|&s| s <= first).saturating_sub(1);
    for (i, line) in lines(data).enumerate() {
        let j = first + i;
        while group < h.elements.len() && j >= starts[group + 1] {
            group += 1;
        }
        if group >= h.elements.len() {
            break;
        }
        let is_face = l.face.is_some_and(|(f, _)| f == group);
        if group != l.vertex && !is_face {
            continue;
        }
        let e = &h.elements[group];
        let index = j - starts[group];
        let syntax = |message: String| MeshIoError::Syntax {
            file: name.to_string(),
            line: h.lines + 1 + j,
            message: format!("{} {index}: {message}", e.name),
        };
        let mut words = words(line);
        let mut p = [0f32; 3];
        for (k, (prop, kind)) in e.properties.iter().enumerate() {
            let mut next = || {
                words
                    .next()
                    .ok_or_else(|| syntax(format!("no value for property {prop}")))
            };
            match *kind {
                Kind::Scalar(t) => {
                    let w = next()?;
                    if group == l.vertex
                        && let Some(c) = l.xyz.iter().position(|x| x.0 == k)
                    {
                        let bad =
                            || syntax(format!("bad {} value '{}' for {prop}", t.name(), show(w)));
                        p[c] = match t {
                            Scalar::F32 => parse_f32(w).ok_or_else(bad)?,
                            Scalar::F64 => parse_f64(w).ok_or_else(bad)? as f32,
                            _ => match parse_i64(w) {
                                Some(v) if t.holds(v) => v as f32,
                                _ => return Err(bad()),
                            },
                        };
                    }
                }
                Kind::List(_, t) => {
                    let w = next()?;
                    let n = parse_usize(w).ok_or_else(|| {
                        syntax(format!("bad list length '{}' for {prop}", show(w)))
                    })?;
                    if is_face && l.face.is_some_and(|(_, fk)| fk == k) {
                        poly.clear();
                        for _ in 0..n {
                            let w = next()?;
                            let i = parse_i64(w).filter(|&i| t.holds(i)).ok_or_else(|| {
                                syntax(format!("bad {} index '{}' in {prop}", t.name(), show(w)))
                            })?;
                            if i < 0 || i as u64 >= nv as u64 {
                                return Err(out_of_range(name, index, i, nv));
                            }
                            poly.push(i as u32);
                        }
                    } else {
                        for _ in 0..n {
                            next()?;
                        }
                    }
                }
            }
        }
        if group == l.vertex {
            chunk.positions.push(p);
        } else {
            push_polygon(&mut chunk.faces, &poly, &mut chunk.polygons)
                .map_err(|m| face_error(name, index, m))?;
        }
    }
    Ok(chunk)
}

/// How [`read_binary`] decodes elements with lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Walk {
    /// An element whose lists have the same length in every element (a
    /// mesh of triangles: `3` before every face) is decoded in parallel at
    /// a fixed stride, its lengths checked on the way; any other is walked
    /// element by element.
    Parallel,
    /// Every element with lists walked element by element: the reference
    /// the parallel path is tested against.
    #[cfg_attr(not(test), allow(dead_code))]
    Serial,
}

fn read_binary(
    payload: &[u8],
    h: &Header,
    l: &Layout,
    big: bool,
    name: &str,
    polygons: &mut usize,
    walk: Walk,
) -> Result<TriMesh, MeshIoError> {
    let mut mesh = TriMesh::default();
    let mut rest = payload;
    for (k, e) in h.elements.iter().enumerate() {
        let is_face = l.face.is_some_and(|(f, _)| f == k);
        if let Some(stride) = e.stride()
            && !is_face
        {
            let bytes = stride.checked_mul(e.count).filter(|&n| n <= rest.len());
            let Some(bytes) = bytes else {
                return Err(truncated(name, e, rest.len() / stride.max(1)));
            };
            let (block, tail) = rest.split_at(bytes);
            rest = tail;
            if k == l.vertex && e.count > 0 {
                // Without lists, every property is a scalar at a fixed offset.
                let fixed = Fixed::of(e, block, big).expect("a fixed layout without lists");
                mesh.positions = positions(block, &fixed, l, big, |_| {});
            }
            continue;
        }
        if walk == Walk::Parallel
            && let Some(fixed) = Fixed::of(e, rest, big)
            && let Some(bytes) = read_fixed(rest, &fixed, k, h, l, big, name, &mut mesh, polygons)?
        {
            rest = &rest[bytes..];
            continue;
        }
        walk_element(&mut rest, k, h, l, big, name, &mut mesh, polygons)?;
    }
    Ok(mesh)
}

/// The layout of a binary element whose lists have in every element the
/// length they have in the first.
struct Fixed {
    /// Bytes per element.
    stride: usize,
    /// Offset of each property in an element.
    offsets: Vec<usize>,
    /// Each list's offset, count type and length.
    lists: Vec<(usize, Scalar, i64)>,
}

impl Fixed {
    /// The layout of the elements of `e` at the start of `rest` if all are
    /// laid out as the first: `None` when there is no element, a list's
    /// count type is not an integer, its length is negative, or the
    /// elements so laid out would not fit in `rest` (the walk then names
    /// the error).
    fn of(e: &Element, rest: &[u8], big: bool) -> Option<Fixed> {
        if e.count == 0 {
            return None;
        }
        let mut at = 0usize;
        let mut offsets = Vec::with_capacity(e.properties.len());
        let mut lists = Vec::new();
        for (_, kind) in &e.properties {
            offsets.push(at);
            at = match *kind {
                Kind::Scalar(t) => at.checked_add(t.size())?,
                Kind::List(ct, t) => {
                    let n = ct.int(rest.get(at..at.checked_add(ct.size())?)?, big)?;
                    let items = usize::try_from(n).ok()?.checked_mul(t.size())?;
                    lists.push((at, ct, n));
                    at.checked_add(ct.size())?.checked_add(items)?
                }
            };
        }
        let bytes = at.checked_mul(e.count)?;
        (at > 0 && bytes <= rest.len()).then_some(Fixed {
            stride: at,
            offsets,
            lists,
        })
    }

    /// Whether the lists of element `el` (`stride` bytes) have the lengths
    /// of the first element's.
    fn matches(&self, el: &[u8], big: bool) -> bool {
        self.lists
            .iter()
            .all(|&(at, ct, n)| ct.int(&el[at..], big) == Some(n))
    }
}

/// The positions of the vertex element laid out as `fixed` in `block`
/// (whole elements), decoded in parallel; `check` sees every element.
fn positions(
    block: &[u8],
    fixed: &Fixed,
    l: &Layout,
    big: bool,
    check: impl Fn(&[u8]) + Sync,
) -> Vec<[f32; 3]> {
    let at = l.xyz.map(|(x, t)| (fixed.offsets[x], t));
    let chunks = block.par_chunks_exact(fixed.stride);
    if !big && at.iter().all(|&(_, t)| t == Scalar::F32) {
        // The common case, without a branch on the type per value.
        let [x, y, z] = at.map(|(o, _)| o);
        let coord = |v: &[u8], o: usize| f32::from_le_bytes(bytes(&v[o..], false));
        chunks
            .map(|v| {
                check(v);
                [coord(v, x), coord(v, y), coord(v, z)]
            })
            .collect()
    } else {
        chunks
            .map(|v| {
                check(v);
                at.map(|(o, t)| t.coord(&v[o..], big))
            })
            .collect()
    }
}

/// Decodes element `k` of `h`, laid out as `fixed` at the start of
/// `rest`, in parallel: the vertex element's positions and the face
/// element's triangles into `mesh` (fans of polygons counted in
/// `polygons`), any other element only checked. Returns its bytes, or
/// `None` (`mesh` untouched) when an element's lists differ in length
/// from the first's, the faces have fewer than 3 corners, or the vertices
/// are too many to number in `u32`: the walk then decodes it, with its
/// errors. An index out of range is the error the walk gives.
#[allow(clippy::too_many_arguments)]
fn read_fixed(
    rest: &[u8],
    fixed: &Fixed,
    k: usize,
    h: &Header,
    l: &Layout,
    big: bool,
    name: &str,
    mesh: &mut TriMesh,
    polygons: &mut usize,
) -> Result<Option<usize>, MeshIoError> {
    let e = &h.elements[k];
    let len = fixed.stride * e.count;
    let block = &rest[..len];
    let mixed = AtomicBool::new(false);
    let check = |el: &[u8]| {
        if !fixed.matches(el, big) {
            mixed.store(true, Ordering::Relaxed);
        }
    };
    if k == l.vertex {
        let p = positions(block, fixed, l, big, check);
        if mixed.into_inner() {
            return Ok(None);
        }
        mesh.positions = p;
    } else if let Some((_, fk)) = l.face.filter(|&(f, _)| f == k) {
        let nv = h.elements[l.vertex].count;
        let Kind::List(ct, t) = e.properties[fk].1 else {
            unreachable!("the face element's index list is a list")
        };
        let at = fixed.offsets[fk];
        let n = fixed
            .lists
            .iter()
            .find(|&&(o, ..)| o == at)
            .map_or(0, |&(.., n)| n as usize);
        if n < 3 || u32::try_from(nv).is_err() {
            return Ok(None);
        }
        let first = at + ct.size();
        let at = (block, fixed.stride, first, t.size(), n, nv);
        let (faces, bad) = match (t, big) {
            (Scalar::I32, false) => {
                fan_faces(at, |b| i32::from_le_bytes(bytes(b, false)) as i64, check)
            }
            (Scalar::U32, false) => {
                fan_faces(at, |b| u32::from_le_bytes(bytes(b, false)) as i64, check)
            }
            _ => fan_faces(at, |b| t.int(b, big).unwrap_or(-1), check),
        };
        if mixed.into_inner() {
            return Ok(None);
        }
        if let Some(f) = bad {
            // The first index out of range in the first face holding one.
            let el = &block[f * fixed.stride..];
            let i = (0..n)
                .map(|c| t.int(&el[first + c * t.size()..], big).unwrap_or(-1))
                .find(|&i| i < 0 || i as u64 >= nv as u64)
                .expect("the face holds an index out of range");
            return Err(out_of_range(name, f, i, nv));
        }
        if n > 3 {
            *polygons += e.count;
        }
        mesh.faces = faces;
    } else if !fixed.lists.is_empty()
        && !block
            .par_chunks_exact(fixed.stride)
            .all(|el| fixed.matches(el, big))
    {
        return Ok(None);
    }
    Ok(Some(len))
}

/// The fan triangles of the faces in `block` (`at`: the block, its
/// elements' stride, the byte of their first index, the bytes of an
/// index, the `n >= 3` indices per face and the vertex count `nv`; an
/// index read by `index`), decoded in parallel, and the first face with an
/// index out of `0..nv` if any (its triangles then hold 0 there); `check`
/// sees every element.
fn fan_faces(
    at: (&[u8], usize, usize, usize, usize, usize),
    index: impl Fn(&[u8]) -> i64 + Sync,
    check: impl Fn(&[u8]) + Sync,
) -> (Vec<[u32; 3]>, Option<usize>) {
    let (block, stride, first, size, n, nv) = at;
    let bad = AtomicUsize::new(usize::MAX);
    let corner = |f: usize, el: &[u8], c: usize| {
        let i = index(&el[first + c * size..]);
        if i < 0 || i as u64 >= nv as u64 {
            bad.fetch_min(f, Ordering::Relaxed);
            0
        } else {
            i as u32
        }
    };
    let chunks = block.par_chunks_exact(stride).enumerate();
    let faces = if n == 3 {
        chunks
            .map(|(f, el)| {
                check(el);
                [corner(f, el, 0), corner(f, el, 1), corner(f, el, 2)]
            })
            .collect()
    } else {
        let mut faces = vec![[0u32; 3]; (n - 2) * (block.len() / stride)];
        faces
            .par_chunks_mut(n - 2)
            .zip(chunks)
            .for_each(|(out, (f, el))| {
                check(el);
                let a = corner(f, el, 0);
                let mut b = corner(f, el, 1);
                for (c, t) in out.iter_mut().enumerate() {
                    let next = corner(f, el, c + 2);
                    *t = [a, b, next];
                    b = next;
                }
            });
        faces
    };
    let bad = bad.into_inner();
    (faces, (bad != usize::MAX).then_some(bad))
}

/// Walks element `k` of `h` at the start of `rest` element by element,
/// moving `rest` past it: the vertex element's positions and the face
/// element's polygons (fan-triangulated) into `mesh`.
#[allow(clippy::too_many_arguments)]
fn walk_element(
    rest: &mut &[u8],
    k: usize,
    h: &Header,
    l: &Layout,
    big: bool,
    name: &str,
    mesh: &mut TriMesh,
    polygons: &mut usize,
) -> Result<(), MeshIoError> {
    let e = &h.elements[k];
    let nv = h.elements[l.vertex].count;
    let is_face = l.face.is_some_and(|(f, _)| f == k);
    let capacity = e.count.min(rest.len() / e.min_size().max(1));
    if is_face {
        mesh.faces.reserve(capacity);
    } else if k == l.vertex {
        mesh.positions.reserve(capacity);
    }
    let mut poly = Vec::new();
    for index in 0..e.count {
        let mut p = [0f32; 3];
        for (pk, (_, kind)) in e.properties.iter().enumerate() {
            match *kind {
                Kind::Scalar(t) => {
                    if rest.len() < t.size() {
                        return Err(truncated(name, e, index));
                    }
                    if k == l.vertex
                        && let Some(c) = l.xyz.iter().position(|x| x.0 == pk)
                    {
                        p[c] = t.coord(rest, big);
                    }
                    *rest = &rest[t.size()..];
                }
                Kind::List(ct, t) => {
                    if rest.len() < ct.size() {
                        return Err(truncated(name, e, index));
                    }
                    let n = ct.int(rest, big).ok_or_else(|| MeshIoError::Invalid {
                        file: name.to_string(),
                        message: format!("list length of {} is not an integer type", e.name),
                    })?;
                    *rest = &rest[ct.size()..];
                    let bytes = usize::try_from(n)
                        .ok()
                        .and_then(|n| n.checked_mul(t.size()))
                        .filter(|&b| b <= rest.len());
                    let Some(bytes) = bytes else {
                        return Err(if n < 0 {
                            MeshIoError::Invalid {
                                file: name.to_string(),
                                message: format!("{} {index}: list length {n}", e.name),
                            }
                        } else {
                            truncated(name, e, index)
                        });
                    };
                    if is_face && l.face.is_some_and(|(_, fk)| fk == pk) {
                        poly.clear();
                        for b in rest[..bytes].chunks_exact(t.size()) {
                            let i = t.int(b, big).unwrap_or(-1);
                            if i < 0 || i as u64 >= nv as u64 {
                                return Err(out_of_range(name, index, i, nv));
                            }
                            poly.push(i as u32);
                        }
                    }
                    *rest = &rest[bytes..];
                }
            }
        }
        if k == l.vertex {
            mesh.positions.push(p);
        } else if is_face {
            push_polygon(&mut mesh.faces, &poly, polygons)
                .map_err(|m| face_error(name, index, m))?;
        }
    }
    Ok(())
}

/// The header of `mesh` written with `data` in `encoding`.
fn written_header(mesh: &TriMesh, data: &VertexData<'_>, encoding: PlyEncoding) -> String {
    let format = match encoding {
        PlyEncoding::Ascii => "ascii",
        PlyEncoding::BinaryLittleEndian => "binary_little_endian",
        PlyEncoding::BinaryBigEndian => "binary_big_endian",
    };
    let mut head = format!(
        "ply\nformat {format} 1.0\nelement vertex {}\nproperty float x\nproperty float y\nproperty float z\n",
        mesh.positions.len()
    );
    if data.normals.is_some() {
        head.push_str("property float nx\nproperty float ny\nproperty float nz\n");
    }
    if let Some((name, _)) = data.scalar {
        head.push_str(&format!("property float {name}\n"));
    }
    head.push_str(&format!(
        "element face {}\nproperty list uchar int vertex_indices\nend_header\n",
        mesh.faces.len()
    ));
    head
}

/// The values of vertex `v` in the file's order: its position, then its
/// normal and its scalar where `data` has them.
fn vertex_values<'a>(
    mesh: &'a TriMesh,
    data: VertexData<'a>,
    v: usize,
) -> impl Iterator<Item = f32> + 'a {
    let n = data.normals.map(|n| n[v]);
    let x = data.scalar.map(|(_, x)| x[v]);
    mesh.positions[v]
        .into_iter()
        .chain(n.into_iter().flatten())
        .chain(x)
}

/// The binary body of a PLY file: the bytes of ranges of vertices and of
/// faces, which the streamed ([`write`]) and the mapped
/// ([`write_binary_mapped`]) writers share.
struct BinaryBody<'a> {
    mesh: &'a TriMesh,
    data: VertexData<'a>,
    big: bool,
}

impl BinaryBody<'_> {
    /// Bytes of a face: its corner count and three `int`s.
    const FACE_BYTES: usize = 13;

    /// Bytes of a vertex.
    fn vertex_bytes(&self) -> usize {
        12 + self.data.normals.map_or(0, |_| 12) + self.data.scalar.map_or(0, |_| 4)
    }

    /// The vertices' bytes as they lie in memory, where they are the
    /// file's (positions alone, little endian on a little-endian host).
    fn vertices_as_stored(&self) -> Option<&[u8]> {
        let d = &self.data;
        (!self.big && d.normals.is_none() && d.scalar.is_none() && cfg!(target_endian = "little"))
            .then(|| bytemuck::cast_slice(&self.mesh.positions))
    }

    /// The bytes of vertices `r` into `out` (exactly their length).
    fn vertices(&self, r: Range<usize>, out: &mut [u8]) {
        for (v, bytes) in r.zip(out.chunks_exact_mut(self.vertex_bytes())) {
            let values = vertex_values(self.mesh, self.data, v);
            for (x, b) in values.zip(bytes.as_chunks_mut::<4>().0) {
                *b = if self.big {
                    x.to_be_bytes()
                } else {
                    x.to_le_bytes()
                };
            }
        }
    }

    /// The bytes of faces `r` into `out` (exactly their length).
    fn faces(&self, r: Range<usize>, out: &mut [u8]) {
        for (f, bytes) in self.mesh.faces[r].iter().zip(out.as_chunks_mut::<13>().0) {
            bytes[0] = 3;
            for (&i, b) in f.iter().zip(bytes[1..].as_chunks_mut::<4>().0) {
                let i = i as i32;
                *b = if self.big {
                    i.to_be_bytes()
                } else {
                    i.to_le_bytes()
                };
            }
        }
    }
}

/// Appends `n` bytes to `buf` and fills them with `fill`.
fn append(buf: &mut Vec<u8>, n: usize, fill: impl FnOnce(&mut [u8])) {
    let start = buf.len();
    buf.resize(start + n, 0);
    fill(&mut buf[start..]);
}

pub(super) fn write(
    out: &mut (impl Write + Send),
    mesh: &TriMesh,
    data: VertexData<'_>,
    encoding: PlyEncoding,
) -> std::io::Result<()> {
    out.write_all(written_header(mesh, &data, encoding).as_bytes())?;
    if encoding == PlyEncoding::Ascii {
        write_chunked(out, mesh.positions.len(), |r, buf| {
            for v in r {
                for (k, x) in vertex_values(mesh, data, v).enumerate() {
                    if k > 0 {
                        buf.push(b' ');
                    }
                    push_float(buf, x);
                }
                buf.push(b'\n');
            }
        })?;
        return write_chunked(out, mesh.faces.len(), |r, buf| {
            for f in &mesh.faces[r] {
                buf.push(b'3');
                for &i in f {
                    buf.push(b' ');
                    push_int(buf, i as i32);
                }
                buf.push(b'\n');
            }
        });
    }
    let body = BinaryBody {
        mesh,
        data,
        big: encoding == PlyEncoding::BinaryBigEndian,
    };
    match body.vertices_as_stored() {
        Some(bytes) => out.write_all(bytes)?,
        None => write_chunked(out, mesh.positions.len(), |r, buf| {
            append(buf, body.vertex_bytes() * r.len(), |b| body.vertices(r, b));
        })?,
    }
    write_chunked(out, mesh.faces.len(), |r, buf| {
        append(buf, BinaryBody::FACE_BYTES * r.len(), |b| body.faces(r, b));
    })
}

/// Elements a part of [`write_binary_mapped`] holds.
const PART: usize = 1 << 16;

/// [`write`] of a binary `encoding` into `file` (a new temporary file,
/// empty, open for reading and writing) through a shared map
/// (`super::mapped`): its length is known from the header and the
/// element counts, so the parts of the vertices and faces are written at
/// their places by rayon's workers at once. `Ok(false)` where the file
/// cannot be mapped (nothing written: write it with [`write`]).
///
/// # Errors
/// A failed resize or reservation of the file (a full disk).
pub(super) fn write_binary_mapped(
    file: &std::fs::File,
    mesh: &TriMesh,
    data: VertexData<'_>,
    encoding: PlyEncoding,
) -> std::io::Result<bool> {
    let head = written_header(mesh, &data, encoding);
    let body = BinaryBody {
        mesh,
        data,
        big: encoding == PlyEncoding::BinaryBigEndian,
    };
    let per_vertex = body.vertex_bytes();
    let vertex_bytes = per_vertex * mesh.positions.len();
    let len = head.len() + vertex_bytes + BinaryBody::FACE_BYTES * mesh.faces.len();
    super::mapped::write_mapped(file, len, |bytes| {
        let (header, rest) = bytes.split_at_mut(head.len());
        header.copy_from_slice(head.as_bytes());
        let (vertices, faces) = rest.split_at_mut(vertex_bytes);
        let stored = body.vertices_as_stored();
        rayon::join(
            || {
                vertices
                    .par_chunks_mut(per_vertex * PART)
                    .enumerate()
                    .for_each(|(k, out)| {
                        let r = k * PART..k * PART + out.len() / per_vertex;
                        match stored {
                            Some(s) => {
                                out.copy_from_slice(&s[per_vertex * r.start..per_vertex * r.end])
                            }
                            None => body.vertices(r, out),
                        }
                    });
            },
            || {
                faces
                    .par_chunks_mut(BinaryBody::FACE_BYTES * PART)
                    .enumerate()
                    .for_each(|(k, out)| {
                        let r = k * PART..k * PART + out.len() / BinaryBody::FACE_BYTES;
                        body.faces(r, out);
                    });
            },
        );
        Ok(())
    })
}

/// The error of face `index` of file `name` that `push_polygon` rejected
/// with `message`.
fn face_error(name: &str, index: usize, message: String) -> MeshIoError {
    MeshIoError::Element {
        file: name.to_string(),
        element: "face",
        index,
        message,
    }
}

#[cfg(test)]
mod tests {
    //! The parallel decoding of binary elements with lists against the
    //! element-by-element walk: the same mesh, polygon count and error.

    use proptest::prelude::*;

    use super::*;

    /// `v` as a value of type `t` (wrapped or rounded as `as` does),
    /// little or big endian.
    fn put(buf: &mut Vec<u8>, t: Scalar, v: f64, big: bool) {
        let mut b = match t {
            Scalar::I8 => (v as i8).to_le_bytes().to_vec(),
            Scalar::U8 => (v as i64 as u8).to_le_bytes().to_vec(),
            Scalar::I16 => (v as i16).to_le_bytes().to_vec(),
            Scalar::U16 => (v as i64 as u16).to_le_bytes().to_vec(),
            Scalar::I32 => (v as i32).to_le_bytes().to_vec(),
            Scalar::U32 => (v as i64 as u32).to_le_bytes().to_vec(),
            Scalar::F32 => (v as f32).to_le_bytes().to_vec(),
            Scalar::F64 => v.to_le_bytes().to_vec(),
        };
        if big {
            b.reverse();
        }
        buf.extend(b);
    }

    /// A binary PLY file.
    #[derive(Clone, Debug)]
    struct Spec {
        big: bool,
        /// The type of the vertex coordinates.
        coord: Scalar,
        vertices: usize,
        /// Lengths of a `list uchar int extra` per vertex, if the
        /// vertices have one.
        vertex_list: Option<Vec<usize>>,
        /// The count and index types of `vertex_indices`.
        count: Scalar,
        index: Scalar,
        /// A `uchar flags` before the list.
        flags: bool,
        /// Lengths of a `list uchar float uv` after the list, if any.
        uv: Option<Vec<usize>>,
        faces: Vec<Vec<i64>>,
        /// An `edge` element after the faces, its lists' lengths.
        edges: Option<Vec<usize>>,
    }

    impl Spec {
        /// Triangles `faces` on `vertices` vertices, little endian, `list
        /// uchar int`.
        fn triangles(vertices: usize, faces: Vec<Vec<i64>>) -> Spec {
            Spec {
                big: false,
                coord: Scalar::F32,
                vertices,
                vertex_list: None,
                count: Scalar::U8,
                index: Scalar::I32,
                flags: false,
                uv: None,
                faces,
                edges: None,
            }
        }

        fn bytes(&self) -> Vec<u8> {
            let big = self.big;
            let mut h = format!(
                "ply\nformat binary_{}_endian 1.0\nelement vertex {}\n",
                if big { "big" } else { "little" },
                self.vertices
            );
            for c in ["x", "y", "z"] {
                h += &format!("property {} {c}\n", self.coord.name());
            }
            if self.vertex_list.is_some() {
                h += "property list uchar int extra\n";
            }
            h += &format!("element face {}\n", self.faces.len());
            if self.flags {
                h += "property uchar flags\n";
            }
            h += &format!(
                "property list {} {} vertex_indices\n",
                self.count.name(),
                self.index.name()
            );
            if self.uv.is_some() {
                h += "property list uchar float uv\n";
            }
            if let Some(e) = &self.edges {
                h += &format!(
                    "element edge {}\nproperty list ushort int vertex\n",
                    e.len()
                );
            }
            h += "end_header\n";
            let mut b = h.into_bytes();
            for v in 0..self.vertices {
                for c in 0..3 {
                    put(&mut b, self.coord, (3 * v + c) as f64 * 0.5, big);
                }
                if let Some(l) = &self.vertex_list {
                    put(&mut b, Scalar::U8, l[v] as f64, big);
                    for k in 0..l[v] {
                        put(&mut b, Scalar::I32, k as f64, big);
                    }
                }
            }
            for (f, face) in self.faces.iter().enumerate() {
                if self.flags {
                    put(&mut b, Scalar::U8, 7.0, big);
                }
                put(&mut b, self.count, face.len() as f64, big);
                for &i in face {
                    put(&mut b, self.index, i as f64, big);
                }
                if let Some(uv) = &self.uv {
                    put(&mut b, Scalar::U8, uv[f] as f64, big);
                    for k in 0..uv[f] {
                        put(&mut b, Scalar::F32, k as f64, big);
                    }
                }
            }
            for &n in self.edges.iter().flatten() {
                put(&mut b, Scalar::U16, n as f64, big);
                for k in 0..n {
                    put(&mut b, Scalar::I32, k as f64, big);
                }
            }
            b
        }
    }

    /// The mesh and polygon count, or the error's text, read with `walk`.
    fn read_as(data: &[u8], walk: Walk) -> Result<(TriMesh, usize), String> {
        let mut polygons = 0;
        read_with(data, "test.ply", &mut polygons, walk)
            .map(|m| (m, polygons))
            .map_err(|e| e.to_string())
    }

    /// What the parallel path and the walk both give (asserted equal).
    fn same(data: &[u8]) -> Result<(TriMesh, usize), String> {
        let parallel = read_as(data, Walk::Parallel);
        assert_eq!(parallel, read_as(data, Walk::Serial));
        parallel
    }

    /// `n` faces over `nv` vertices with `corners` corners each.
    fn fan(n: usize, nv: usize, corners: usize) -> Vec<Vec<i64>> {
        (0..n)
            .map(|f| (0..corners).map(|c| ((f + c) % nv) as i64).collect())
            .collect()
    }

    /// Whether the faces of `data` (after vertices of three `float`s) are
    /// decoded in parallel.
    fn faces_in_parallel(data: &[u8]) -> bool {
        let h = header(data, "test.ply").unwrap();
        let l = layout(&h, "test.ply").unwrap();
        let (f, _) = l.face.unwrap();
        let rest = &data[h.len + 12 * h.elements[l.vertex].count..];
        let big = h.encoding == PlyEncoding::BinaryBigEndian;
        let mut mesh = TriMesh::default();
        Fixed::of(&h.elements[f], rest, big).is_some_and(|fixed| {
            let read = read_fixed(rest, &fixed, f, &h, &l, big, "", &mut mesh, &mut 0);
            matches!(read, Ok(Some(_)))
        })
    }

    #[test]
    fn triangles_decode_in_parallel_as_walked() {
        let spec = Spec::triangles(1000, fan(200_000, 1000, 3));
        assert!(faces_in_parallel(&spec.bytes()));
        let (mesh, polygons) = same(&spec.bytes()).expect("reads");
        assert_eq!((mesh.faces.len(), polygons), (200_000, 0));
        assert_eq!(mesh.faces[5], [5, 6, 7]);
        assert_eq!(mesh.positions[2], [3.0, 3.5, 4.0]);
        for (index, count, big) in [
            (Scalar::U32, Scalar::U8, true),
            (Scalar::I16, Scalar::I32, false),
            (Scalar::U16, Scalar::U16, true),
            (Scalar::U8, Scalar::I8, false),
        ] {
            let spec = Spec {
                big,
                coord: Scalar::F64,
                index,
                count,
                flags: true,
                uv: Some(vec![2; 200]),
                edges: Some(vec![2; 10]),
                vertex_list: Some(vec![1; 100]),
                ..Spec::triangles(100, fan(200, 100, 3))
            };
            let (mesh, _) = same(&spec.bytes()).expect("reads");
            assert_eq!(mesh.faces[99], [99, 0, 1], "{index:?} {count:?}");
        }
    }

    #[test]
    fn polygons_of_one_size_are_fans_and_mixed_sizes_are_walked() {
        let pentagons = Spec::triangles(10, fan(100_000, 10, 5)).bytes();
        assert!(faces_in_parallel(&pentagons));
        let (mesh, polygons) = same(&pentagons).unwrap();
        assert_eq!((mesh.faces.len(), polygons), (300_000, 100_000));
        assert_eq!(&mesh.faces[3..6], &[[1, 2, 3], [1, 3, 4], [1, 4, 5]]);
        let mut faces = fan(100_000, 10, 3);
        faces[77_777] = vec![0, 1, 2, 3];
        let mixed = Spec::triangles(10, faces).bytes();
        assert!(!faces_in_parallel(&mixed));
        let (mesh, polygons) = same(&mixed).unwrap();
        assert_eq!((mesh.faces.len(), polygons), (100_001, 1));
        // Lists of other properties of one length per element or not.
        for uv in [vec![2; 1000], (0..1000).map(|f| f % 3).collect()] {
            let spec = Spec {
                uv: Some(uv),
                ..Spec::triangles(10, fan(1000, 10, 3))
            };
            assert_eq!(same(&spec.bytes()).unwrap().0.faces.len(), 1000);
        }
        let edges = Spec {
            edges: Some(vec![2, 2, 3]),
            vertex_list: Some((0..10).map(|v| v % 2).collect()),
            ..Spec::triangles(10, fan(10, 10, 3))
        };
        assert_eq!(same(&edges.bytes()).unwrap().0.positions.len(), 10);
    }

    #[test]
    fn indices_out_of_range_name_the_first_face() {
        let mut faces = fan(300_000, 50, 3);
        faces[250_001][2] = 50;
        faces[123_456][1] = -1;
        faces[123_456][2] = 99;
        let e = same(&Spec::triangles(50, faces.clone()).bytes()).unwrap_err();
        assert_eq!(
            e,
            "test.ply: face 123456: index -1 out of range (mesh has 50 vertices)"
        );
        let mut quads = fan(300_000, 50, 4);
        quads[200_000][3] = 1000;
        let e = same(&Spec::triangles(50, quads).bytes()).unwrap_err();
        assert_eq!(
            e,
            "test.ply: face 200000: index 1000 out of range (mesh has 50 vertices)"
        );
        // A repeated corner is the reader's check after the decoding.
        let e = same(&Spec::triangles(3, vec![vec![0, 1, 2], vec![1, 1, 2]]).bytes());
        assert!(e.is_ok());
    }

    #[test]
    fn short_faces_bad_lengths_and_truncations_give_the_walks_errors() {
        for corners in [0, 1, 2] {
            let e = same(&Spec::triangles(5, fan(10, 5, corners)).bytes()).unwrap_err();
            assert!(e.contains("face 0: face with"), "{e}");
        }
        let negative = Spec {
            count: Scalar::I8,
            ..Spec::triangles(5, fan(3, 5, 3))
        };
        let mut bytes = negative.bytes();
        // The length of the last face (before its three 4-byte indices).
        let last = bytes.len() - 13;
        bytes[last] = 0xff;
        assert_eq!(
            same(&bytes).unwrap_err(),
            "test.ply: face 2: list length -1"
        );
        let float_count = Spec {
            count: Scalar::F32,
            ..Spec::triangles(5, fan(3, 5, 3))
        };
        assert_eq!(
            same(&float_count.bytes()).unwrap_err(),
            "test.ply: list length of face is not an integer type"
        );
        let spec = Spec {
            flags: true,
            uv: Some(vec![1; 40]),
            ..Spec::triangles(20, fan(40, 20, 3))
        };
        let bytes = spec.bytes();
        let header = bytes
            .windows(11)
            .position(|w| w == b"end_header\n")
            .unwrap()
            + 11;
        for cut in header..bytes.len() {
            let e = same(&bytes[..cut]).unwrap_err();
            assert!(e.contains("(truncated)"), "{cut}: {e}");
        }
        assert!(same(&bytes).is_ok());
    }

    proptest! {
        #[test]
        fn any_binary_ply_reads_as_walked(
            big in any::<bool>(),
            vertices in 1usize..6,
            fixed in prop::option::of(0usize..6),
            lengths in prop::collection::vec(0usize..6, 0..40),
            indices in prop::collection::vec(-2i64..8, 240),
            types in (0usize..4, 0usize..5),
            flags in any::<bool>(),
            uv in prop::option::of(prop::collection::vec(0usize..3, 40)),
            cut in any::<prop::sample::Index>(),
        ) {
            let mut next = indices.iter().copied().cycle();
            let faces: Vec<Vec<i64>> = lengths
                .iter()
                .map(|&n| (0..fixed.unwrap_or(n)).map(|_| next.next().unwrap()).collect())
                .collect();
            let count = [Scalar::U8, Scalar::I8, Scalar::U16, Scalar::I32][types.0];
            let index = [Scalar::I32, Scalar::U32, Scalar::I16, Scalar::U16, Scalar::U8][types.1];
            let uv = uv.map(|mut uv| {
                uv.resize(faces.len(), 1);
                uv
            });
            let spec = Spec {
                big,
                count,
                index,
                flags,
                uv,
                ..Spec::triangles(vertices, faces)
            };
            let bytes = spec.bytes();
            same(&bytes).ok();
            same(&bytes[..cut.index(bytes.len() + 1)]).ok();
        }

        /// The mapped writer gives the streamed writer's bytes: any number
        /// of vertices and faces (parts of [`PART`] elements and a last
        /// short one), normals and a scalar or not, either byte order.
        #[test]
        fn mapped_writes_equal_streamed(
            vertices in prop_oneof![0usize..5, (PART - 2)..(PART + 3)],
            faces in prop_oneof![0usize..5, (2 * PART - 1)..(2 * PART + 2)],
            extra in 0usize..3,
            big in any::<bool>(),
        ) {
            use std::io::Read;
            let mesh = TriMesh {
                positions: (0..vertices).map(|v| [v as f32, -0.5 * v as f32, 1e-3]).collect(),
                faces: (0..faces as u32).map(|f| [f, f + 1, f.wrapping_mul(7)]).collect(),
            };
            let normals: Vec<[f32; 3]> = mesh.positions.iter().map(|p| [p[1], p[0], 1.0]).collect();
            let scalar: Vec<f32> = (0..vertices).map(|v| v as f32 / 3.0).collect();
            let data = VertexData {
                normals: (extra >= 1).then_some(&normals[..]),
                scalar: (extra == 2).then_some(("u", &scalar[..])),
            };
            let encoding = if big {
                PlyEncoding::BinaryBigEndian
            } else {
                PlyEncoding::BinaryLittleEndian
            };
            let mut streamed = Vec::new();
            write(&mut streamed, &mesh, data, encoding).unwrap();
            // tmpfs maps on Linux; elsewhere the file may not be mapped.
            let shm = std::path::Path::new("/dev/shm");
            let on_tmpfs = cfg!(target_os = "linux") && shm.is_dir();
            let mut file = if on_tmpfs {
                tempfile::tempfile_in(shm).unwrap()
            } else {
                tempfile::tempfile().unwrap()
            };
            let mapped = write_binary_mapped(&file, &mesh, data, encoding).unwrap();
            prop_assert!(mapped || !on_tmpfs, "a file on tmpfs is mapped");
            if mapped {
                let mut bytes = Vec::new();
                file.read_to_end(&mut bytes).unwrap();
                prop_assert!(bytes == streamed, "{} bytes, streamed {}", bytes.len(), streamed.len());
            }
        }
    }
}

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

use rayon::prelude::*;

use super::text::{
    count_newlines, line_chunks, lines, parse_f32, parse_f64, parse_i64, parse_usize, prefix_sums,
    push_f32, push_int, show, words, write_chunked,
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
    let h = header(data, name)?;
    let l = layout(&h, name)?;
    let payload = &data[h.len..];
    match h.encoding {
        PlyEncoding::Ascii => read_ascii(payload, &h, &l, name, polygons),
        PlyEncoding::BinaryLittleEndian => read_binary(payload, &h, &l, false, name, polygons),
        PlyEncoding::BinaryBigEndian => read_binary(payload, &h, &l, true, name, polygons),
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

/// What one ASCII chunk holds.
#[derive(Default)]
struct Chunk {
    positions: Vec<[f32; 3]>,
    faces: Vec<[u32; 3]>,
    polygons: usize,
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
    let parsed: Vec<Result<Chunk, MeshIoError>> = chunks
        .par_iter()
        .zip(first)
        .map(|(c, first)| ascii_chunk(c, first, &starts, h, l, name))
        .collect();
    let mut mesh = TriMesh::default();
    for chunk in parsed {
        let chunk = chunk?;
        mesh.positions.extend_from_slice(&chunk.positions);
        mesh.faces.extend_from_slice(&chunk.faces);
        *polygons += chunk.polygons;
    }
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
) -> Result<Chunk, MeshIoError> {
    let mut chunk = Chunk::default();
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

fn read_binary(
    payload: &[u8],
    h: &Header,
    l: &Layout,
    big: bool,
    name: &str,
    polygons: &mut usize,
) -> Result<TriMesh, MeshIoError> {
    let mut mesh = TriMesh::default();
    let nv = h.elements[l.vertex].count;
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
                let offsets = l.xyz.map(|(x, t)| {
                    let at: usize = e.properties[..x]
                        .iter()
                        .map(|(_, kind)| match kind {
                            Kind::Scalar(s) | Kind::List(s, _) => s.size(),
                        })
                        .sum();
                    (at, t)
                });
                mesh.positions = block
                    .par_chunks_exact(stride)
                    .map(|v| offsets.map(|(at, t)| t.coord(&v[at..], big)))
                    .collect();
            }
            continue;
        }
        // Elements with lists (or the faces): walk them one by one.
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
                        rest = &rest[t.size()..];
                    }
                    Kind::List(ct, t) => {
                        if rest.len() < ct.size() {
                            return Err(truncated(name, e, index));
                        }
                        let n = ct.int(rest, big).ok_or_else(|| MeshIoError::Invalid {
                            file: name.to_string(),
                            message: format!("list length of {} is not an integer type", e.name),
                        })?;
                        rest = &rest[ct.size()..];
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
                        rest = &rest[bytes..];
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
    }
    Ok(mesh)
}

pub(super) fn write(
    out: &mut impl Write,
    mesh: &TriMesh,
    data: VertexData<'_>,
    encoding: PlyEncoding,
) -> std::io::Result<()> {
    let VertexData { normals, scalar } = data;
    let format = match encoding {
        PlyEncoding::Ascii => "ascii",
        PlyEncoding::BinaryLittleEndian => "binary_little_endian",
        PlyEncoding::BinaryBigEndian => "binary_big_endian",
    };
    let mut head = format!(
        "ply\nformat {format} 1.0\nelement vertex {}\nproperty float x\nproperty float y\nproperty float z\n",
        mesh.positions.len()
    );
    if normals.is_some() {
        head.push_str("property float nx\nproperty float ny\nproperty float nz\n");
    }
    if let Some((name, _)) = scalar {
        head.push_str(&format!("property float {name}\n"));
    }
    head.push_str(&format!(
        "element face {}\nproperty list uchar int vertex_indices\nend_header\n",
        mesh.faces.len()
    ));
    out.write_all(head.as_bytes())?;
    let vertex = |v: usize| {
        let n = normals.map(|n| n[v]);
        let x = scalar.map(|(_, x)| x[v]);
        mesh.positions[v]
            .into_iter()
            .chain(n.into_iter().flatten())
            .chain(x)
    };
    if encoding == PlyEncoding::Ascii {
        write_chunked(out, mesh.positions.len(), |r, buf| {
            for v in r {
                for (k, x) in vertex(v).enumerate() {
                    if k > 0 {
                        buf.push(b' ');
                    }
                    push_f32(buf, x);
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
    let big = encoding == PlyEncoding::BinaryBigEndian;
    write_chunked(out, mesh.positions.len(), |r, buf| {
        for v in r {
            for x in vertex(v) {
                buf.extend_from_slice(&if big {
                    x.to_be_bytes()
                } else {
                    x.to_le_bytes()
                });
            }
        }
    })?;
    write_chunked(out, mesh.faces.len(), |r, buf| {
        for f in &mesh.faces[r] {
            buf.push(3);
            for &i in f {
                let i = i as i32;
                buf.extend_from_slice(&if big {
                    i.to_be_bytes()
                } else {
                    i.to_le_bytes()
                });
            }
        }
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

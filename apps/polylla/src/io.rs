//! Polylla's files: triangulations in, from Triangle's `.node` / `.ele`
//! pair (either names it; attributes and markers skipped, vertices
//! numbered from 0 or 1; the `.neigh` file beside them read when there) or a 2D OFF file (triangles; every `z` must be
//! zero); the polygonal mesh out as OFF or PLY (one face per polygon,
//! `z = 0`; [`PolygonFormat`] by the extension) and as an SVG picture (the triangulation in light lines, the polygons'
//! edges bold). Errors name the file and the line; outputs are written
//! atomically ([`cavity::io::write_bytes`]).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use cavity::io::{MeshIoError, push_float, push_int};
use rayon::prelude::*;

use crate::halfedge::HalfEdges;
use crate::lists::Polygons;
use crate::sequential::Polylla;
use crate::{PolyllaError, Triangulation};

/// The non-empty, comment-free lines of `text` with their 1-based numbers.
fn lines(text: &str) -> impl Iterator<Item = (usize, Vec<&str>)> {
    text.lines().enumerate().filter_map(|(i, l)| {
        let words: Vec<&str> = l
            .split('#')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        (!words.is_empty()).then_some((i + 1, words))
    })
}

/// A syntax error of `file` at `line`.
fn syntax(file: &Path, line: usize, message: String) -> PolyllaError {
    MeshIoError::Syntax {
        file: file.display().to_string(),
        line,
        message,
    }
    .into()
}

/// Word `i` of a line as a number.
fn number<T: std::str::FromStr>(
    file: &Path,
    (line, words): &(usize, Vec<&str>),
    i: usize,
    what: &str,
) -> Result<T, PolyllaError> {
    let w = words
        .get(i)
        .ok_or_else(|| syntax(file, *line, format!("the line ends before {what}")))?;
    w.parse()
        .map_err(|_| syntax(file, *line, format!("{what}: {w:?} is not a number")))
}

/// Record `i` of the `n` that the header on line `header` announces.
fn record<'a>(
    it: &mut impl Iterator<Item = (usize, Vec<&'a str>)>,
    file: &Path,
    header: usize,
    (i, n): (usize, usize),
    what: &str,
) -> Result<(usize, Vec<&'a str>), PolyllaError> {
    it.next()
        .ok_or_else(|| syntax(file, header, format!("{n} {what} announced, {i} found")))
}

/// The header line of `file` (its first record).
fn header<'a>(
    it: &mut impl Iterator<Item = (usize, Vec<&'a str>)>,
    file: &Path,
) -> Result<(usize, Vec<&'a str>), PolyllaError> {
    it.next()
        .ok_or_else(|| syntax(file, 1, "an empty file".into()))
}

/// The bytes of the file at `path`.
fn read_file(path: &Path) -> Result<Vec<u8>, PolyllaError> {
    std::fs::read(path).map_err(|source| {
        MeshIoError::Io {
            file: path.display().to_string(),
            source,
        }
        .into()
    })
}

/// The text of `file`'s bytes, or an error naming the line of the first
/// byte that is not UTF-8.
fn read_text<'a>(file: &Path, bytes: &'a [u8]) -> Result<&'a str, PolyllaError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        let line = 1 + bytes[..at].iter().filter(|&&b| b == b'\n').count();
        syntax(file, line, format!("byte {at} is not UTF-8 text"))
    })
}

/// Checks `n` records of `tokens` words each, announced on line `line`,
/// against the length of `text` before anything is allocated for them:
/// every word takes a character and a separator.
fn announced(
    file: &Path,
    line: usize,
    text: &str,
    (n, tokens): (usize, usize),
    what: &str,
) -> Result<usize, PolyllaError> {
    let most = text.len() / (2 * tokens);
    if n > most {
        return Err(syntax(
            file,
            line,
            format!(
                "{n} {what} announced, but the file's {} bytes hold at most {most}",
                text.len()
            ),
        ));
    }
    Ok(n)
}

/// Reads a triangulation: Triangle's pair for `.node` or `.ele`, 2D OFF
/// for `.off` (vertices 0-based).
///
/// # Errors
/// [`PolyllaError::File`] naming the file and line: a malformed line, a
/// vertex number out of range, a non-finite coordinate, a face that is
/// not a triangle, a non-zero `z`; [`PolyllaError::Input`] for another
/// extension.
pub fn read_triangulation(path: &Path) -> Result<Triangulation, PolyllaError> {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("node" | "ele") => read_triangle(path),
        Some("off") => read_off_bytes(path, &read_file(path)?),
        _ => Err(PolyllaError::Input(format!(
            "{}: unknown triangulation format (expected .node, .ele or .off)",
            path.display()
        ))),
    }
}

/// The `.node` and `.ele` files of the pair `path` names.
fn pair(path: &Path) -> (PathBuf, PathBuf) {
    (path.with_extension("node"), path.with_extension("ele"))
}

/// The vertices of Triangle's `.node` file (2D; attributes and markers
/// skipped) and the number the first has (0 or 1).
///
/// # Errors
/// [`PolyllaError::File`] naming the line: a malformed line, another
/// dimension than 2, a non-finite coordinate, a file that ends early.
pub fn read_node(node: &Path) -> Result<(Vec<[f64; 2]>, u32), PolyllaError> {
    read_node_bytes(node, &read_file(node)?)
}

/// [`read_node`] of the bytes of a `.node` file; `node` names it in
/// errors. The vertex count is checked against the file's length before
/// anything is allocated for the vertices.
///
/// # Errors
/// As [`read_node`].
pub fn read_node_bytes(node: &Path, bytes: &[u8]) -> Result<(Vec<[f64; 2]>, u32), PolyllaError> {
    let text = read_text(node, bytes)?;
    let mut it = lines(text);
    let header = header(&mut it, node)?;
    let n: usize = number(node, &header, 0, "the vertex count")?;
    let dim: usize = number(node, &header, 1, "the dimension")?;
    if dim != 2 {
        return Err(syntax(
            node,
            header.0,
            format!("dimension {dim}: a triangulation is 2D"),
        ));
    }
    let n = announced(node, header.0, text, (n, 3), "vertices")?;
    let mut positions = Vec::with_capacity(n);
    let mut base = 0;
    for i in 0..n {
        let l = record(&mut it, node, header.0, (i, n), "vertices")?;
        let index: u32 = number(node, &l, 0, "the vertex number")?;
        if i == 0 {
            base = index.min(1);
        }
        let p = [number(node, &l, 1, "x")?, number(node, &l, 2, "y")?];
        if p.iter().any(|x: &f64| !x.is_finite()) {
            return Err(syntax(
                node,
                l.0,
                format!("vertex {index} has a non-finite coordinate"),
            ));
        }
        positions.push(p);
    }
    Ok((positions, base))
}

fn read_triangle(path: &Path) -> Result<Triangulation, PolyllaError> {
    let (node, ele) = pair(path);
    let node_bytes = read_file(&node)?;
    let ele_bytes = read_file(&ele)?;
    let neigh = path.with_extension("neigh");
    let neigh_bytes = if neigh.exists() {
        Some(read_file(&neigh)?)
    } else {
        None
    };
    read_triangle_bytes(
        (&node, &node_bytes),
        (&ele, &ele_bytes),
        neigh_bytes.as_deref().map(|b| (neigh.as_path(), b)),
    )
}

/// A Triangle `.node` / `.ele` pair (and its `.neigh` file, if given) from
/// the files' bytes, each with the path that names it in errors. The counts
/// of the headers are checked against the files' lengths before anything
/// is allocated for their records.
///
/// # Errors
/// As [`read_triangulation`].
pub fn read_triangle_bytes(
    (node, node_bytes): (&Path, &[u8]),
    (ele, ele_bytes): (&Path, &[u8]),
    neigh: Option<(&Path, &[u8])>,
) -> Result<Triangulation, PolyllaError> {
    let (positions, base) = read_node_bytes(node, node_bytes)?;
    let n = positions.len();
    let text = read_text(ele, ele_bytes)?;
    let mut it = lines(text);
    let header = header(&mut it, ele)?;
    let m: usize = number(ele, &header, 0, "the triangle count")?;
    let per: usize = number(ele, &header, 1, "the nodes per triangle")?;
    if per != 3 {
        return Err(syntax(
            ele,
            header.0,
            format!("{per} nodes per triangle: linear triangles (3) only"),
        ));
    }
    let m = announced(ele, header.0, text, (m, 4), "triangles")?;
    let mut triangles = Vec::with_capacity(m);
    let mut first = 0;
    for i in 0..m {
        let l = record(&mut it, ele, header.0, (i, m), "triangles")?;
        if i == 0 {
            first = number::<u32>(ele, &l, 0, "the triangle number")?.min(1);
        }
        let mut t = [0u32; 3];
        for (k, x) in t.iter_mut().enumerate() {
            let v: u32 = number(ele, &l, k + 1, "a corner")?;
            if v < base || (v - base) as usize >= n {
                return Err(syntax(
                    ele,
                    l.0,
                    match n {
                        0 => format!("corner {v}, but the .node file has no vertices"),
                        _ => format!(
                            "corner {v}, but the vertices are numbered {base} to {}",
                            n as u64 + u64::from(base) - 1
                        ),
                    },
                ));
            }
            *x = v - base;
        }
        triangles.push(t);
    }
    let neighbours = match neigh {
        Some((path, bytes)) => Some(read_neighbours(path, bytes, m, first)?),
        None => None,
    };
    Ok(Triangulation {
        positions,
        triangles,
        neighbours,
    })
}

/// Triangle's `.neigh` file of `m` triangles numbered from `first`:
/// each triangle's neighbours opposite its corners, -1 for none.
fn read_neighbours(
    path: &Path,
    bytes: &[u8],
    m: usize,
    first: u32,
) -> Result<Vec<[u32; 3]>, PolyllaError> {
    let text = read_text(path, bytes)?;
    let mut it = lines(text);
    let header = header(&mut it, path)?;
    let n: usize = number(path, &header, 0, "the triangle count")?;
    if n != m {
        return Err(syntax(
            path,
            header.0,
            format!("{n} triangles, but the .ele file has {m}"),
        ));
    }
    let mut out = Vec::with_capacity(m);
    for i in 0..m {
        let l = record(&mut it, path, header.0, (i, m), "triangles")?;
        let mut t = [crate::halfedge::NONE; 3];
        for (k, x) in t.iter_mut().enumerate() {
            let u: i64 = number(path, &l, k + 1, "a neighbour")?;
            if u >= 0 {
                let u = u as u64;
                if u < u64::from(first) || u - u64::from(first) >= m as u64 {
                    return Err(syntax(
                        path,
                        l.0,
                        format!("neighbour {u} is not a triangle"),
                    ));
                }
                *x = (u - u64::from(first)) as u32;
            }
        }
        out.push(t);
    }
    Ok(out)
}

/// A 2D OFF triangulation from the bytes of its file; `path` names it in
/// errors. The counts are checked against the file's length before
/// anything is allocated for the vertices and faces.
///
/// # Errors
/// As [`read_triangulation`].
pub fn read_off_bytes(path: &Path, bytes: &[u8]) -> Result<Triangulation, PolyllaError> {
    let text = read_text(path, bytes)?;
    let mut it = lines(text);
    let first = header(&mut it, path)?;
    let counts = if first.1[0] == "OFF" && first.1.len() == 1 {
        it.next()
            .ok_or_else(|| syntax(path, first.0, "no counts".into()))?
    } else if first.1[0] == "OFF" {
        (first.0, first.1[1..].to_vec())
    } else {
        return Err(syntax(
            path,
            first.0,
            "not an OFF file (no OFF header)".into(),
        ));
    };
    let n: usize = number(path, &counts, 0, "the vertex count")?;
    let m: usize = number(path, &counts, 1, "the face count")?;
    let n = announced(path, counts.0, text, (n, 2), "vertices")?;
    let m = announced(path, counts.0, text, (m, 4), "faces")?;
    let mut positions = Vec::with_capacity(n);
    for i in 0..n {
        let l = record(&mut it, path, counts.0, (i, n), "vertices")?;
        let p: [f64; 2] = [number(path, &l, 0, "x")?, number(path, &l, 1, "y")?];
        let z: f64 = if l.1.len() > 2 {
            number(path, &l, 2, "z")?
        } else {
            0.0
        };
        if z != 0.0 {
            return Err(syntax(
                path,
                l.0,
                format!("vertex {i} has z = {z}: Polylla takes a planar (z = 0) triangulation"),
            ));
        }
        if p.iter().any(|x| !x.is_finite()) {
            return Err(syntax(
                path,
                l.0,
                format!("vertex {i} has a non-finite coordinate"),
            ));
        }
        positions.push(p);
    }
    let mut triangles = Vec::with_capacity(m);
    for i in 0..m {
        let l = record(&mut it, path, counts.0, (i, m), "faces")?;
        let k: usize = number(path, &l, 0, "the face's vertex count")?;
        if k != 3 {
            return Err(syntax(
                path,
                l.0,
                format!("face {i} has {k} vertices: a triangulation has triangles"),
            ));
        }
        let mut t = [0u32; 3];
        for (j, x) in t.iter_mut().enumerate() {
            *x = number(path, &l, j + 1, "a corner")?;
            if *x as usize >= n {
                return Err(syntax(
                    path,
                    l.0,
                    format!("face {i} names vertex {x}, but there are {n}"),
                ));
            }
        }
        triangles.push(t);
    }
    Ok(Triangulation {
        positions,
        triangles,
        neighbours: None,
    })
}

/// Items a piece of the writers' output ([`cavity::io::write_pieces`]).
const PIECE: usize = 1 << 14;

/// Writes `header`, then the vertices of `mesh` as `x y 0` lines, then
/// the polygons of `poly` as lines of their vertex count and vertices,
/// to `path` atomically, streamed: pieces of lines formatted in parallel
/// while the ones before are written.
fn write_polygon_text<P: Polygons + ?Sized>(
    path: &Path,
    header: &str,
    mesh: &HalfEdges,
    poly: &P,
) -> Result<(), PolyllaError> {
    let (vertices, polygons) = (mesh.positions.len(), poly.count());
    let range = |k: usize, n: usize| k * PIECE..((k + 1) * PIECE).min(n);
    Ok(cavity::io::write_streamed(path, |out| {
        out.write_all(header.as_bytes())?;
        cavity::io::write_pieces(out, vertices.div_ceil(PIECE), |k, buf| {
            for [x, y] in &mesh.positions[range(k, vertices)] {
                push_float(buf, *x);
                buf.push(b' ');
                push_float(buf, *y);
                buf.extend_from_slice(b" 0\n");
            }
        })?;
        cavity::io::write_pieces(out, polygons.div_ceil(PIECE), |k, buf| {
            for p in range(k, polygons) {
                let vertices = poly.vertices(mesh, p);
                push_int(buf, vertices.len());
                for &v in vertices.iter() {
                    buf.push(b' ');
                    push_int(buf, v);
                }
                buf.push(b'\n');
            }
        })
    })?)
}

/// Writes the polygons of `poly` (a [`Polylla`] result or its
/// [`PolygonLists`](crate::lists::PolygonLists)) over `mesh` as OFF: every
/// vertex (`z = 0`), one face per polygon in [`Polylla::polygons`]' order;
/// numbers in their shortest text that reads back exactly.
///
/// # Errors
/// [`PolyllaError::File`] when the file cannot be written.
pub fn write_off<P: Polygons + ?Sized>(
    path: &Path,
    mesh: &HalfEdges,
    poly: &P,
) -> Result<(), PolyllaError> {
    let header = format!("OFF\n{} {} 0\n", mesh.positions.len(), poly.count());
    write_polygon_text(path, &header, mesh, poly)
}

/// Writes the polygons of `poly` (as [`write_off`] takes them) over
/// `mesh` as ASCII PLY: every vertex
/// (`x y z` as `double`, `z = 0`), one face per polygon in
/// [`Polylla::polygons`]' order as a `vertex_indices` list (its count a
/// `uchar` while every polygon has fewer than 256 vertices, else a
/// `uint`).
///
/// # Errors
/// [`PolyllaError::File`] when the file cannot be written.
pub fn write_ply<P: Polygons + ?Sized>(
    path: &Path,
    mesh: &HalfEdges,
    poly: &P,
) -> Result<(), PolyllaError> {
    let longest = (0..poly.count())
        .into_par_iter()
        .map(|k| poly.vertices(mesh, k).len())
        .max()
        .unwrap_or(0);
    let count = if longest < 256 { "uchar" } else { "uint" };
    let header = format!(
        "ply\nformat ascii 1.0\ncomment Polylla polygons (cavity)\nelement vertex {}\n\
         property double x\nproperty double y\nproperty double z\nelement face {}\n\
         property list {count} int vertex_indices\nend_header\n",
        mesh.positions.len(),
        poly.count()
    );
    write_polygon_text(path, &header, mesh, poly)
}

/// The formats Polylla writes its polygons in, named by the output's
/// extension (any case).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolygonFormat {
    /// `.off`: [`write_off`].
    Off,
    /// `.ply`: [`write_ply`].
    Ply,
    /// `.svg`: [`write_svg`] (a picture: the polygons over the triangles).
    Svg,
}

impl PolygonFormat {
    /// The format `path`'s extension names.
    ///
    /// # Errors
    /// [`PolyllaError::Input`] naming `path` and the supported extensions
    /// for another extension or none.
    pub fn from_path(path: &Path) -> Result<PolygonFormat, PolyllaError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("off") => Ok(PolygonFormat::Off),
            Some("ply") => Ok(PolygonFormat::Ply),
            Some("svg") => Ok(PolygonFormat::Svg),
            _ => Err(PolyllaError::Input(format!(
                "{}: unknown output format: Polylla writes .off, .ply (polygon faces) or .svg (a picture)",
                path.display()
            ))),
        }
    }

    /// Writes `poly` over `mesh` to `path` in this format.
    ///
    /// # Errors
    /// [`PolyllaError::File`] when the file cannot be written.
    pub fn write(self, path: &Path, mesh: &HalfEdges, poly: &Polylla) -> Result<(), PolyllaError> {
        match self {
            PolygonFormat::Off => write_off(path, mesh, poly),
            PolygonFormat::Ply => write_ply(path, mesh, poly),
            PolygonFormat::Svg => write_svg(path, mesh, poly),
        }
    }
}

/// Writes an SVG picture of `poly` over `mesh`: the triangulation's edges
/// in thin grey, the polygons' edges in thick black, 1000 pixels across.
///
/// # Errors
/// [`PolyllaError::File`] when the file cannot be written.
pub fn write_svg(path: &Path, mesh: &HalfEdges, poly: &Polylla) -> Result<(), PolyllaError> {
    let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    for p in &mesh.positions {
        for k in 0..2 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    let span = (hi[0] - lo[0]).max(hi[1] - lo[1]).max(f64::MIN_POSITIVE);
    let scale = 1000.0 / span;
    let (w, h) = ((hi[0] - lo[0]) * scale, (hi[1] - lo[1]) * scale);
    let at = |v: u32| {
        let p = mesh.positions[v as usize];
        ((p[0] - lo[0]) * scale, h - (p[1] - lo[1]) * scale)
    };
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"-10 -10 {} {}\" width=\"{}\" height=\"{}\">\n",
        w + 20.0,
        h + 20.0,
        (w + 20.0).ceil(),
        (h + 20.0).ceil()
    );
    let mut segments = |edges: &mut dyn Iterator<Item = u32>, style: &str| {
        let _ = write!(s, "<path style=\"{style}\" d=\"");
        for e in edges {
            let ((ax, ay), (bx, by)) = (at(mesh.origin[e as usize]), at(mesh.target(e)));
            let _ = write!(s, "M{ax:.2} {ay:.2}L{bx:.2} {by:.2}");
        }
        s.push_str("\"/>\n");
    };
    let once = |h: u32| h < mesh.twin[h as usize];
    segments(
        &mut (0..mesh.len() as u32).filter(|&h| once(h)),
        "stroke:#bbb;stroke-width:0.5;fill:none",
    );
    segments(
        &mut (0..mesh.len() as u32).filter(|&h| once(h) && poly.frontier[h as usize]),
        "stroke:#000;stroke-width:1.5;fill:none",
    );
    s.push_str("</svg>\n");
    Ok(cavity::io::write_bytes(path, s.as_bytes())?)
}

//! STL, ASCII and binary. A file is binary when its size is exactly that of
//! a binary STL with the facet count at bytes 80..84 (binary files may start
//! with `solid` too); otherwise it is ASCII when it starts with `solid`, and
//! binary (and then truncated or padded) when not. Corners with bitwise-equal
//! positions become one vertex, numbered in order of first appearance;
//! facets whose corners coincide are dropped with a warning; facet normals
//! are ignored on reading and computed on writing.

use std::io::Write;
use std::ops::Range;
use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

use super::text::{
    concat, count_newlines, line_chunks, lines, parse_f32, prefix_sums, push_float, show, words,
    write_chunked,
};
use super::{MeshIoError, StlEncoding, push_polygon};
use crate::TriMesh;

/// Bytes before the facets of a binary STL: an 80-byte header and a `u32`
/// facet count.
const HEADER: usize = 84;
/// Bytes per facet of a binary STL: normal, 3 corners, attribute count.
const FACET: usize = 50;

pub(super) fn read(
    data: &[u8],
    name: &str,
    polygons: &mut usize,
    warnings: &mut Vec<String>,
) -> Result<TriMesh, MeshIoError> {
    let declared = data
        .get(80..HEADER)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
    let exact = declared.is_some_and(|n| n * FACET + HEADER == data.len());
    let starts_solid = is(words(&data[..data.len().min(256)]).next(), "solid");
    let corners = if exact || !starts_solid {
        Corners::Binary(BinaryFacets(binary(data, declared, name, warnings)?))
    } else {
        match ascii_corners(data, name, polygons) {
            Ok(c) => Corners::Ascii(c),
            // A binary file that starts with `solid` and has padding.
            Err(e) => match declared {
                Some(n) if n > 0 && n * FACET + HEADER <= data.len() => {
                    Corners::Binary(BinaryFacets(binary(data, declared, name, warnings)?))
                }
                _ => return Err(e),
            },
        }
    };
    let (mesh, dropped) = match &corners {
        Corners::Binary(facets) => merge(facets, name)?,
        Corners::Ascii(corners) => merge(&corners.as_slice(), name)?,
    };
    if dropped > 0 {
        warnings.push(format!(
            "{name}: {dropped} degenerate facets (coincident corners) were dropped"
        ));
    }
    Ok(mesh)
}

/// The corners of the facets of a file.
enum Corners<'a> {
    /// Binary facets, 50 bytes each.
    Binary(BinaryFacets<'a>),
    /// Corners of ASCII facets, three per triangle.
    Ascii(Vec<[f32; 3]>),
}

/// The facets of a binary STL file (whole ones: a multiple of 50 bytes).
struct BinaryFacets<'a>(&'a [u8]);

/// Corners, three per triangle, as [`merge`] reads them.
trait CornerList: Sync {
    /// How many.
    fn len(&self) -> usize;

    /// Calls `f` with the number and the bits of the position of each
    /// corner of `range` (whole triangles: it starts at a multiple of 3),
    /// in order.
    fn each(&self, range: Range<usize>, f: impl FnMut(usize, [u32; 3]));
}

impl CornerList for BinaryFacets<'_> {
    fn len(&self) -> usize {
        self.0.len() / FACET * 3
    }

    fn each(&self, range: Range<usize>, mut f: impl FnMut(usize, [u32; 3])) {
        let facets = &self.0[range.start / 3 * FACET..range.end.div_ceil(3) * FACET];
        for (k, facet) in facets.as_chunks::<FACET>().0.iter().enumerate() {
            let x = |at: usize| {
                u32::from_le_bytes([facet[at], facet[at + 1], facet[at + 2], facet[at + 3]])
            };
            for c in 0..3 {
                let at = 12 + 12 * c;
                f(range.start + 3 * k + c, [x(at), x(at + 4), x(at + 8)]);
            }
        }
    }
}

impl CornerList for &[[f32; 3]] {
    fn len(&self) -> usize {
        <[_]>::len(self)
    }

    fn each(&self, range: Range<usize>, mut f: impl FnMut(usize, [u32; 3])) {
        let start = range.start;
        for (k, p) in self[range].iter().enumerate() {
            f(start + k, p.map(f32::to_bits));
        }
    }
}

/// The facets of a binary STL file (checked: whole, with finite
/// coordinates); `declared` is the facet count of its header, if the file
/// has one.
fn binary<'a>(
    data: &'a [u8],
    declared: Option<usize>,
    name: &str,
    warnings: &mut Vec<String>,
) -> Result<&'a [u8], MeshIoError> {
    let Some(n) = declared else {
        return Err(MeshIoError::Invalid {
            file: name.to_string(),
            message: if data.is_empty() {
                "empty file".into()
            } else {
                format!(
                    "{} bytes: neither ASCII STL (no 'solid') nor binary STL (84-byte header)",
                    data.len()
                )
            },
        });
    };
    let facets = &data[HEADER..];
    if facets.len() / FACET < n {
        return Err(MeshIoError::Invalid {
            file: name.to_string(),
            message: format!(
                "file ends after {} of {n} facets (truncated)",
                facets.len() / FACET
            ),
        });
    }
    if facets.len() > n * FACET {
        warnings.push(format!(
            "{name}: {} bytes after the {n} facets of a binary STL were ignored",
            facets.len() - n * FACET
        ));
    }
    let facets = &facets[..n * FACET];
    check_finite(facets, name)?;
    Ok(facets)
}

/// Errors naming the first binary facet with a coordinate that is not
/// finite, if any (checked in parallel).
fn check_finite(facets: &[u8], name: &str) -> Result<(), MeshIoError> {
    let x = |f: &[u8], at: usize| f32::from_le_bytes([f[at], f[at + 1], f[at + 2], f[at + 3]]);
    let bad_corner =
        |f: &[u8]| (0..3).find(|c| (0..3).any(|k| !x(f, 12 + 12 * c + 4 * k).is_finite()));
    let Some(bad) = facets
        .par_chunks_exact(FACET)
        .position_first(|f| bad_corner(f).is_some())
    else {
        return Ok(());
    };
    let c = bad_corner(&facets[bad * FACET..]).expect("a non-finite corner");
    Err(MeshIoError::Element {
        file: name.to_string(),
        element: "facet",
        index: bad,
        message: format!("non-finite coordinate in corner {c}"),
    })
}

/// Whether `word` is `keyword`, in any case.
fn is(word: Option<&[u8]>, keyword: &str) -> bool {
    word.is_some_and(|w| w.eq_ignore_ascii_case(keyword.as_bytes()))
}

/// The corners of ASCII facets, three per triangle (facets with more
/// corners are fan-triangulated and counted in `polygons`).
fn ascii_corners(
    data: &[u8],
    name: &str,
    polygons: &mut usize,
) -> Result<Vec<[f32; 3]>, MeshIoError> {
    // Chunk ends moved forward to the next `facet` line, so that no facet
    // spans two chunks.
    let mut ends = Vec::new();
    let mut end = 0;
    for c in line_chunks(data) {
        end = end.max(c.as_ptr() as usize - data.as_ptr() as usize + c.len());
        while end < data.len() {
            let line = data[end..].split(|&b| b == b'\n').next().unwrap_or(b"");
            if is(words(line).next(), "facet") {
                break;
            }
            end = (end + line.len() + 1).min(data.len());
        }
        if ends.last() != Some(&end) {
            ends.push(end);
        }
    }
    let mut start = 0;
    let chunks: Vec<&[u8]> = ends
        .iter()
        .map(|&e| {
            let c = &data[start..e];
            start = e;
            c
        })
        .collect();
    let newlines: Vec<usize> = chunks.par_iter().map(|c| count_newlines(c)).collect();
    let parsed: Vec<Result<Facets, MeshIoError>> = chunks
        .par_iter()
        .zip(prefix_sums(newlines, 1))
        .map(|(c, line)| ascii_chunk(c, name, line))
        .collect();
    let parsed = parsed.into_iter().collect::<Result<Vec<Facets>, _>>()?;
    let many = parsed.iter().map(|f| f.polygons).sum::<usize>();
    let corners = concat(
        &parsed
            .iter()
            .map(|f| f.corners.as_slice())
            .collect::<Vec<_>>(),
    );
    if corners.is_empty() {
        return Err(MeshIoError::Invalid {
            file: name.to_string(),
            message: "ASCII STL without facets".into(),
        });
    }
    *polygons += many;
    Ok(corners)
}

/// The facets of a chunk of ASCII STL.
struct Facets {
    /// Triangles' corners, three per triangle.
    corners: Vec<[f32; 3]>,
    /// Facets with more than 3 corners.
    polygons: usize,
}

/// Parses the facets of one chunk whose first line is number `first_line`.
fn ascii_chunk(data: &[u8], name: &str, first_line: usize) -> Result<Facets, MeshIoError> {
    let mut corners = Vec::new();
    let mut polygons = 0;
    // The line of the open facet and its corners.
    let mut facet = None;
    let mut poly: Vec<[f32; 3]> = Vec::new();
    let mut index = Vec::new();
    let mut tris = Vec::new();
    for (i, line) in lines(data).enumerate() {
        let line_no = first_line + i;
        let syntax = |message: String| MeshIoError::Syntax {
            file: name.to_string(),
            line: line_no,
            message,
        };
        let mut w = words(line);
        let first = w.next();
        let Some(word) = first else { continue };
        let in_facet = |what: &str| match facet {
            Some(_) => Ok(()),
            None => Err(syntax(format!("'{what}' outside a facet"))),
        };
        if is(first, "solid") || is(first, "endsolid") {
            if let Some(f) = facet {
                return Err(syntax(format!(
                    "'{}' before the endfacet of the facet at line {f}",
                    show(word)
                )));
            }
        } else if is(first, "facet") {
            if let Some(f) = facet {
                return Err(syntax(format!(
                    "facet before the endfacet of the facet at line {f}"
                )));
            }
            facet = Some(line_no);
            poly.clear();
        } else if is(first, "outer") || is(first, "endloop") {
            in_facet(&show(word))?;
        } else if is(first, "vertex") {
            in_facet("vertex")?;
            let mut p = [0f32; 3];
            for c in &mut p {
                let x = w
                    .next()
                    .ok_or_else(|| syntax("vertex with fewer than 3 coordinates".into()))?;
                *c = parse_f32(x)
                    .filter(|c| c.is_finite())
                    .ok_or_else(|| syntax(format!("bad coordinate '{}'", show(x))))?;
            }
            poly.push(p);
        } else if is(first, "endfacet") {
            in_facet("endfacet")?;
            index.clear();
            index.extend(0..poly.len() as u32);
            tris.clear();
            push_polygon(&mut tris, &index, &mut polygons).map_err(syntax)?;
            corners.extend(tris.iter().flat_map(|t| t.map(|k| poly[k as usize])));
            facet = None;
        } else {
            return Err(syntax(format!("unexpected '{}' in ASCII STL", show(word))));
        }
    }
    if let Some(f) = facet {
        return Err(MeshIoError::Syntax {
            file: name.to_string(),
            line: f,
            message: "facet without endfacet (truncated?)".into(),
        });
    }
    Ok(Facets { corners, polygons })
}

/// Merges `corners` with bitwise-equal positions into vertices, numbered
/// in order of first appearance, and drops triangles whose corners
/// coincide; returns the mesh and the number dropped. `name` is the file
/// (too many corners to number in `u32` are an error).
///
/// In parallel and without a sort: each of a few ranges of corners sorts
/// its corners by a hash of their position into buckets (a counting sort,
/// corner order kept), each bucket goes through its corners of all
/// ranges in order with a small hash table to find the first corner of
/// each position, and the first corners are numbered by a prefix sum over
/// the ranges.
fn merge(corners: &impl CornerList, name: &str) -> Result<(TriMesh, usize), MeshIoError> {
    let n = corners.len();
    if u32::try_from(n).is_err() {
        return Err(MeshIoError::Invalid {
            file: name.to_string(),
            message: format!("{} facets: at most {} can be read", n / 3, u32::MAX / 3),
        });
    }
    // Contiguous ranges of whole triangles, one task each, in order.
    let parts = (4 * rayon::current_num_threads())
        .min(n.div_ceil(1 << 14))
        .max(1);
    let part_len = n.div_ceil(3 * parts).max(1) * 3;
    let part = |p: usize| (p * part_len).min(n)..((p + 1) * part_len).min(n);
    let bits = (n / BUCKET)
        .clamp(2, MAX_BUCKETS)
        .next_power_of_two()
        .trailing_zeros();
    let buckets = 1usize << bits;
    let bucket = |k: [u32; 3]| (hash(k) >> (64 - bits)) as usize;
    // Each range's corners (number and bits) sorted by bucket, and where
    // each bucket starts.
    let sorted: Vec<(Vec<Entry>, Vec<u32>)> = (0..parts)
        .into_par_iter()
        .map(|p| {
            let mut starts = vec![0u32; buckets + 1];
            corners.each(part(p), |_, k| starts[bucket(k) + 1] += 1);
            for b in 0..buckets {
                starts[b + 1] += starts[b];
            }
            let mut next = starts.clone();
            let mut out = vec![(0u32, [0u32; 3]); part(p).len()];
            corners.each(part(p), |c, k| {
                let b = bucket(k);
                out[next[b] as usize] = (c as u32, k);
                next[b] += 1;
            });
            (out, starts)
        })
        .collect();
    // The first corner at the position of each corner.
    let first: Vec<AtomicU32> = (0..n).into_par_iter().map(|_| AtomicU32::new(0)).collect();
    (0..buckets)
        .into_par_iter()
        .for_each_init(Vec::new, |table: &mut Vec<Entry>, b| {
            let len: usize = sorted.iter().map(|(_, s)| (s[b + 1] - s[b]) as usize).sum();
            let size = (2 * len).next_power_of_two();
            table.clear();
            table.resize(size, (u32::MAX, [0; 3]));
            for (out, starts) in &sorted {
                for &(c, k) in &out[starts[b] as usize..starts[b + 1] as usize] {
                    let mut slot = hash(k) as usize & (size - 1);
                    let r = loop {
                        match table[slot] {
                            (u32::MAX, _) => {
                                table[slot] = (c, k);
                                break c;
                            }
                            (r, q) if q == k => break r,
                            _ => slot = (slot + 1) & (size - 1),
                        }
                    };
                    first[c as usize].store(r, Ordering::Relaxed);
                }
            }
        });
    drop(sorted);
    let is_first = |c: usize| first[c].load(Ordering::Relaxed) as usize == c;
    // The vertices, first corners in order, and their numbers.
    let news: Vec<usize> = (0..parts)
        .into_par_iter()
        .map(|p| part(p).filter(|&c| is_first(c)).count())
        .collect();
    let mut id = vec![0u32; n];
    let mut positions = vec![[0f32; 3]; news.iter().sum()];
    let mut vertices = positions.as_mut_slice();
    let mut ranges = Vec::with_capacity(parts);
    for (&k, next) in news.iter().zip(prefix_sums(news.iter().copied(), 0)) {
        let (these, rest) = vertices.split_at_mut(k);
        ranges.push((these, next));
        vertices = rest;
    }
    id.par_chunks_mut(part_len)
        .zip(ranges)
        .enumerate()
        .for_each(|(p, (ids, (vertices, next)))| {
            let start = part(p).start;
            let mut v = 0;
            corners.each(part(p), |c, k| {
                if is_first(c) {
                    ids[c - start] = (next + v) as u32;
                    vertices[v] = k.map(f32::from_bits);
                    v += 1;
                }
            });
        });
    let id = &id;
    let faces: Vec<[u32; 3]> = first
        .par_chunks_exact(3)
        .map(|t| [&t[0], &t[1], &t[2]].map(|r| id[r.load(Ordering::Relaxed) as usize]))
        .filter(|t| t[0] != t[1] && t[1] != t[2] && t[2] != t[0])
        .collect();
    let dropped = n / 3 - faces.len();
    Ok((TriMesh { positions, faces }, dropped))
}

/// A corner's number and the bits of its position, as [`merge`] sorts
/// them.
type Entry = (u32, [u32; 3]);

/// Corners per bucket of [`merge`] (about, when there are few; a bucket's
/// table stays in the cache).
const BUCKET: usize = 2048;

/// The most buckets of [`merge`] (each range of corners writes to as many
/// places at once while it sorts).
const MAX_BUCKETS: usize = 4096;

/// A hash of a position's bits (the high bits pick a bucket of [`merge`],
/// the low bits a slot of its table).
fn hash(k: [u32; 3]) -> u64 {
    let mut h = (u64::from(k[0]) | (u64::from(k[1]) << 32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^= u64::from(k[2]).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    h ^ (h >> 33)
}

/// The unit normal of triangle `f` (zero when degenerate).
fn normal(mesh: &TriMesh, f: &[u32; 3]) -> [f32; 3] {
    let [a, b, c] = f.map(|v| mesh.positions[v as usize].map(f64::from));
    let e = [0, 1, 2].map(|k| b[k] - a[k]);
    let g = [0, 1, 2].map(|k| c[k] - a[k]);
    let n = [
        e[1] * g[2] - e[2] * g[1],
        e[2] * g[0] - e[0] * g[2],
        e[0] * g[1] - e[1] * g[0],
    ];
    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    if len > 0.0 && len.is_finite() {
        n.map(|x| (x / len) as f32)
    } else {
        [0.0; 3]
    }
}

pub(super) fn write(
    out: &mut (impl Write + Send),
    mesh: &TriMesh,
    encoding: StlEncoding,
) -> std::io::Result<()> {
    if encoding == StlEncoding::Ascii {
        out.write_all(b"solid cavity\n")?;
        write_chunked(out, mesh.faces.len(), |r, buf| {
            let vec3 = |buf: &mut Vec<u8>, tag: &[u8], p: [f32; 3]| {
                buf.extend_from_slice(tag);
                for x in p {
                    buf.push(b' ');
                    push_float(buf, x);
                }
                buf.push(b'\n');
            };
            for f in &mesh.faces[r] {
                vec3(buf, b"facet normal", normal(mesh, f));
                buf.extend_from_slice(b"  outer loop\n");
                for &v in f {
                    vec3(buf, b"    vertex", mesh.positions[v as usize]);
                }
                buf.extend_from_slice(b"  endloop\nendfacet\n");
            }
        })?;
        return out.write_all(b"endsolid cavity\n");
    }
    let count = u32::try_from(mesh.faces.len()).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "{} faces: binary STL holds at most 2^32 - 1",
                mesh.faces.len()
            ),
        )
    })?;
    let mut header = [b' '; 80];
    let text = b"binary STL written by cavity";
    header[..text.len()].copy_from_slice(text);
    out.write_all(&header)?;
    out.write_all(&count.to_le_bytes())?;
    write_chunked(out, mesh.faces.len(), |r, buf| {
        let start = buf.len();
        buf.resize(start + FACET * r.len(), 0);
        for (f, facet) in mesh.faces[r]
            .iter()
            .zip(buf[start..].as_chunks_mut::<FACET>().0)
        {
            let corners = f.map(|v| mesh.positions[v as usize]);
            let values = std::iter::once(normal(mesh, f)).chain(corners);
            for (x, b) in values.flatten().zip(facet.as_chunks_mut::<4>().0) {
                *b = x.to_le_bytes();
            }
            // The attribute byte count stays 0.
        }
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The merge as it was written first, one corner after another: the
    /// reference of the parallel one.
    fn merge_serially(corners: &[[f32; 3]]) -> (TriMesh, usize) {
        let mut first = std::collections::HashMap::new();
        let mut mesh = TriMesh::default();
        let id: Vec<u32> = corners
            .iter()
            .map(|p| {
                *first.entry(p.map(f32::to_bits)).or_insert_with(|| {
                    mesh.positions.push(*p);
                    (mesh.positions.len() - 1) as u32
                })
            })
            .collect();
        let mut dropped = 0;
        for &t in id.as_chunks::<3>().0 {
            if t[0] == t[1] || t[1] == t[2] || t[2] == t[0] {
                dropped += 1;
            } else {
                mesh.faces.push(t);
            }
        }
        (mesh, dropped)
    }

    /// `merge` of `corners`, as ASCII corners and as binary facets, both
    /// checked against the reference.
    fn check(corners: &[[f32; 3]]) -> (TriMesh, usize) {
        let want = merge_serially(corners);
        assert_eq!(merge(&corners, "test").unwrap(), want);
        let mut facets = Vec::new();
        for t in corners.as_chunks::<3>().0 {
            facets.extend([0u8; 12]);
            for x in t.as_flattened() {
                facets.extend(x.to_le_bytes());
            }
            facets.extend([0u8; 2]);
        }
        assert_eq!(merge(&BinaryFacets(&facets), "test").unwrap(), want);
        want
    }

    #[test]
    fn corners_merge_in_order_of_first_appearance() {
        // Many parts and buckets: a grid's corners, each used six times.
        let n = 300;
        let p = |i: usize, j: usize| [i as f32, j as f32, ((i * j) % 7) as f32];
        let mut corners = Vec::new();
        for i in (0..n).rev() {
            for j in 0..n {
                corners.extend([p(i, j), p(i + 1, j), p(i + 1, j + 1)]);
                corners.extend([p(i, j), p(i + 1, j + 1), p(i, j + 1)]);
            }
        }
        // Degenerate triangles, and -0.0 apart from 0.0.
        corners.extend([[0.0; 3], [0.0; 3], [1.0; 3]]);
        corners.extend([[0.0; 3], [-0.0, 0.0, 0.0], [1.0; 3]]);
        let (mesh, dropped) = check(&corners);
        assert_eq!(mesh.positions.len(), (n + 1) * (n + 1) + 1);
        assert_eq!(dropped, 1);
        assert_eq!(mesh.faces[0], [0, 1, 2]);
    }

    proptest! {
        #[test]
        fn any_corners_merge_as_serially(
            values in prop::collection::vec(0u8..4, 0..3000),
        ) {
            let corners: Vec<[f32; 3]> = values
                .as_chunks::<3>()
                .0
                .iter()
                .map(|v| v.map(|x| if x == 3 { -0.0 } else { x as f32 }))
                .collect();
            let whole = corners.len() / 3 * 3;
            check(&corners[..whole]);
        }
    }
}

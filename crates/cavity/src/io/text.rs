//! Shared pieces of the readers and writers: splitting a payload into chunks
//! at line breaks for parallel parsing, byte-level tokens and numbers, and
//! chunked parallel formatting of output.

use std::io::Write;
use std::ops::Range;

use rayon::prelude::*;

/// Bytes of a chunk handed to one parallel parsing task (at least).
const CHUNK_BYTES: usize = 1 << 20;

/// Elements formatted by one parallel writing task.
const WRITE_CHUNK: usize = 1 << 16;

/// Splits `data` into pieces that end just after a `\n` (the last piece
/// ends where `data` does), about `CHUNK_BYTES` long. Every piece is
/// non-empty; an empty `data` gives no pieces.
pub(super) fn line_chunks(data: &[u8]) -> Vec<&[u8]> {
    let target = CHUNK_BYTES.max(data.len() / (4 * rayon::current_num_threads()).max(1));
    let mut chunks = Vec::with_capacity(data.len() / target + 1);
    let mut rest = data;
    while !rest.is_empty() {
        let end = if rest.len() <= target {
            rest.len()
        } else {
            match rest[target..].iter().position(|&b| b == b'\n') {
                Some(k) => target + k + 1,
                None => rest.len(),
            }
        };
        let (chunk, tail) = rest.split_at(end);
        chunks.push(chunk);
        rest = tail;
    }
    chunks
}

/// Number of `\n` in `data`.
pub(super) fn count_newlines(data: &[u8]) -> usize {
    data.iter().filter(|&&b| b == b'\n').count()
}

/// Exclusive prefix sums of `counts`, starting at `start`.
pub(super) fn prefix_sums(counts: impl IntoIterator<Item = usize>, start: usize) -> Vec<usize> {
    let mut sum = start;
    counts
        .into_iter()
        .map(|c| {
            let s = sum;
            sum += c;
            s
        })
        .collect()
}

/// The lines of `data` (split at `\n`; a last line without `\n` counts,
/// an empty remainder after a final `\n` does not).
pub(super) fn lines(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    let empty = data.is_empty();
    let data = data.strip_suffix(b"\n").unwrap_or(data);
    data.split(|&b| b == b'\n').filter(move |_| !empty)
}

/// What one parallel parsing task of a text format gives.
#[derive(Default)]
pub(super) struct Parsed {
    /// The vertices of its lines.
    pub(super) positions: Vec<[f32; 3]>,
    /// The triangles of its lines (polygons fan-triangulated).
    pub(super) faces: Vec<[u32; 3]>,
    /// Its polygons with more than 3 corners.
    pub(super) polygons: usize,
}

/// The mesh of the tasks' results in order, the first error (in order)
/// if any; their polygons are added to `polygons`.
pub(super) fn join_parsed(
    parsed: Vec<Result<Parsed, super::MeshIoError>>,
    polygons: &mut usize,
) -> Result<crate::TriMesh, super::MeshIoError> {
    let parsed = parsed.into_iter().collect::<Result<Vec<Parsed>, _>>()?;
    *polygons += parsed.iter().map(|p| p.polygons).sum::<usize>();
    let positions: Vec<&[[f32; 3]]> = parsed.iter().map(|p| p.positions.as_slice()).collect();
    let faces: Vec<&[[u32; 3]]> = parsed.iter().map(|p| p.faces.as_slice()).collect();
    let (positions, faces) = rayon::join(|| concat(&positions), || concat(&faces));
    Ok(crate::TriMesh { positions, faces })
}

/// `parts` joined in order, copied in parallel.
pub(super) fn concat<T: Copy + Default + Send + Sync>(parts: &[&[T]]) -> Vec<T> {
    let mut all = vec![T::default(); parts.iter().map(|p| p.len()).sum()];
    let mut places = Vec::with_capacity(parts.len());
    let mut rest = all.as_mut_slice();
    for part in parts {
        let (place, tail) = rest.split_at_mut(part.len());
        places.push(place);
        rest = tail;
    }
    places
        .into_par_iter()
        .zip(parts)
        .for_each(|(place, part)| place.copy_from_slice(part));
    all
}

/// Whitespace as `str::split_whitespace` sees it, for ASCII bytes.
pub fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'\x0B' | b'\x0C')
}

/// The whitespace-separated words of `line`.
pub fn words(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|&b| is_space(b)).filter(|w| !w.is_empty())
}

/// `line` without what follows a `#`.
pub(super) fn strip_comment(line: &[u8]) -> &[u8] {
    match line.iter().position(|&b| b == b'#') {
        Some(k) => &line[..k],
        None => line,
    }
}

/// Bytes shown in a message.
pub(super) fn show(word: &[u8]) -> String {
    String::from_utf8_lossy(word).into_owned()
}

/// Parses a whole word as an `f32`, accepting what `str::parse::<f32>`
/// accepts (signs, exponents, `inf`, `nan`), correctly rounded.
pub fn parse_f32(word: &[u8]) -> Option<f32> {
    fast_float2::parse(word).ok()
}

/// Parses a whole word as an `f64`.
pub fn parse_f64(word: &[u8]) -> Option<f64> {
    fast_float2::parse(word).ok()
}

/// Parses a whole word as an integer: an optional sign and decimal digits,
/// as `str::parse::<i64>` does.
pub fn parse_i64(word: &[u8]) -> Option<i64> {
    let (neg, digits) = match word.first()? {
        b'-' => (true, &word[1..]),
        b'+' => (false, &word[1..]),
        _ => (false, word),
    };
    if digits.is_empty() {
        return None;
    }
    let mut v: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        let d = (d - b'0') as i64;
        v = v.checked_mul(10)?;
        v = if neg {
            v.checked_sub(d)?
        } else {
            v.checked_add(d)?
        };
    }
    Some(v)
}

/// Parses a whole word as a `usize` (optional `+`, decimal digits).
pub fn parse_usize(word: &[u8]) -> Option<usize> {
    match parse_i64(word) {
        Some(v) if word.first() != Some(&b'-') => usize::try_from(v).ok(),
        _ => None,
    }
}

/// Parses a whole word as a `u32` (optional `+`, decimal digits).
pub fn parse_u32(word: &[u8]) -> Option<u32> {
    parse_usize(word).and_then(|v| u32::try_from(v).ok())
}

/// Appends the shortest text that reads back as `x`, an `f32` or an
/// `f64` (`1` rather than `1.0`; exponents where shorter; `NaN`, `inf`,
/// `-inf`): the surface and polygon writers' numbers.
pub fn push_float(buf: &mut Vec<u8>, x: impl ryu::Float) {
    let mut b = ryu::Buffer::new();
    let s = b.format(x);
    buf.extend_from_slice(s.strip_suffix(".0").unwrap_or(s).as_bytes());
}

/// Appends the decimal text of `x`.
pub fn push_int(buf: &mut Vec<u8>, x: impl itoa::Integer) {
    buf.extend_from_slice(itoa::Buffer::new().format(x).as_bytes());
}

/// Writes `pieces` pieces to `out` in order, piece `k`'s bytes appended
/// by `fill(k, buffer)` to an empty buffer: the pieces of a batch (four
/// per thread of rayon's pool) are filled in parallel, and each batch is
/// filled while the batch before it is written. The buffers are kept
/// from batch to batch; at most two batches are held at once. The body
/// of every large output, the surface writers' (through
/// `write_chunked`) and other crates' (the volumetric writers).
///
/// # Errors
/// The first error of writing to `out`.
pub fn write_pieces<W: Write + Send + ?Sized>(
    out: &mut W,
    pieces: usize,
    fill: impl Fn(usize, &mut Vec<u8>) + Sync,
) -> std::io::Result<()> {
    if pieces == 0 {
        return Ok(());
    }
    let batch = (4 * rayon::current_num_threads()).clamp(1, pieces);
    let fill_batch = |first: usize, bufs: &mut Vec<Vec<u8>>| {
        bufs.resize_with(batch.min(pieces - first), Vec::new);
        bufs.par_iter_mut()
            .with_max_len(1)
            .enumerate()
            .for_each(|(k, buf)| {
                buf.clear();
                fill(first + k, buf);
            });
    };
    let (mut filled, mut next) = (Vec::new(), Vec::new());
    fill_batch(0, &mut filled);
    for first in (batch..pieces).step_by(batch) {
        let (written, ()) = rayon::join(
            || filled.iter().try_for_each(|b| out.write_all(b)),
            || fill_batch(first, &mut next),
        );
        written?;
        std::mem::swap(&mut filled, &mut next);
    }
    filled.iter().try_for_each(|b| out.write_all(b))
}

/// Writes the output for elements `0..n` ([`write_pieces`] of
/// `WRITE_CHUNK` elements each): `format` fills a buffer for a range of
/// elements.
pub(super) fn write_chunked<W: Write + Send + ?Sized>(
    out: &mut W,
    n: usize,
    format: impl Fn(Range<usize>, &mut Vec<u8>) + Sync,
) -> std::io::Result<()> {
    write_pieces(out, n.div_ceil(WRITE_CHUNK), |k, buf| {
        let start = k * WRITE_CHUNK;
        format(start..(start + WRITE_CHUNK).min(n), buf);
    })
}

/// The text of `items`, item `i` written by `line(text, i, item)`, the
/// items formatted in parallel chunks of `WRITE_CHUNK` items and joined in
/// order: the body of a text format written by another crate (the
/// volumetric and polygonal meshes' writers).
pub fn format_lines<T: Sync>(items: &[T], line: impl Fn(&mut String, usize, &T) + Sync) -> String {
    let parts: Vec<String> = items
        .par_chunks(WRITE_CHUNK)
        .enumerate()
        .map(|(k, chunk)| {
            let mut s = String::with_capacity(chunk.len() * 32);
            for (i, item) in chunk.iter().enumerate() {
                line(&mut s, k * WRITE_CHUNK + i, item);
            }
            s
        })
        .collect();
    parts.concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_parse_like_std() {
        for w in [
            "0",
            "+7",
            "-7",
            "9223372036854775807",
            "-9223372036854775808",
        ] {
            assert_eq!(parse_i64(w.as_bytes()), w.parse().ok(), "{w}");
        }
        for w in ["", "-", "+", "1x", "9223372036854775808", " 1", "1.0"] {
            assert_eq!(parse_i64(w.as_bytes()), None, "{w}");
        }
        assert_eq!(parse_usize(b"-0"), None);
        assert_eq!(parse_u32(b"4294967296"), None);
    }

    #[test]
    fn floats_round_trip() {
        for x in [
            0.0f32,
            -0.0,
            1.0,
            1.0e-7,
            3.4028235e38,
            -f32::MIN_POSITIVE,
            0.1,
            1.5e-45,
        ] {
            let mut buf = Vec::new();
            push_float(&mut buf, x);
            assert_eq!(parse_f32(&buf).map(f32::to_bits), Some(x.to_bits()));
        }
    }

    #[test]
    fn chunks_end_at_line_breaks() {
        let data: Vec<u8> = (0..300_000)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        let chunks = line_chunks(&data);
        assert!(chunks.len() > 1);
        assert_eq!(chunks.concat(), data);
        assert!(chunks.iter().all(|c| c.ends_with(b"\n")));
        assert_eq!(lines(b"a\n\nb").count(), 3);
        assert_eq!(lines(b"a\n").count(), 1);
        assert_eq!(lines(b"\n").count(), 1);
        assert_eq!(lines(b"").count(), 0);
    }
}

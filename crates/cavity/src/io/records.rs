//! Counted runs of text records parsed in parallel: the body of a section
//! that a header announces (`n` vertices, `m` cells), as the ASCII
//! volumetric formats hold them (issue 55, item 3).
//!
//! The run is cut into pieces of about a megabyte that end at a word (or
//! line) boundary; the words (or lines) of each piece are counted in
//! parallel, a batch of pieces at a time until the run is covered (the
//! first batch no larger than the run can be), and the
//! records are then parsed in parallel, each piece parsing the records
//! that start in it into its place in the output. Either function gives
//! `None` where the run is not what it expects (the file ends first, a
//! record does not parse, a `#` comment lies inside the run): the callers
//! then read the section with their serial readers, which name the line
//! and what is wrong. The fast and the serial reading give the same
//! records wherever both accept the file.

use rayon::prelude::*;

use super::text::is_space;

/// Bytes of a piece (at least; it runs on to the next boundary).
const PIECE: usize = 1 << 20;

/// Pieces cut and counted at once.
const BATCH: usize = 64;

/// Words a record may have ([`parse_records`]).
pub const MAX_WORDS: usize = 64;

/// A piece of a run: its bytes `start..end` of the whole and the units
/// (words or lines) that start in it, from unit `first` on.
struct Piece {
    start: usize,
    end: usize,
    first: usize,
    count: usize,
}

/// Cuts `bytes[at..]` into pieces that end just after a byte `cut`
/// accepts (or at the end of `bytes`) and counts the units starting in
/// each (`count` given the piece's bytes), a batch at a time, until
/// `need` units are counted or the bytes end; a unit takes `least` bytes
/// at least. The first batch covers the least bytes the run can take, in
/// pieces of at most [`PIECE`] bytes (a short run is not scanned past by
/// more than a piece); each later batch has twice the pieces, then
/// pieces twice as large, up to [`BATCH`] pieces of [`PIECE`] bytes.
/// `None` when the bytes end first.
fn pieces(
    bytes: &[u8],
    at: usize,
    (need, least): (usize, usize),
    cut: impl Fn(u8) -> bool,
    count: impl Fn(&[u8]) -> usize + Sync,
) -> Option<Vec<Piece>> {
    let mut out: Vec<Piece> = Vec::new();
    let (mut from, mut counted) = (at, 0usize);
    let run = need.saturating_mul(least).max(1);
    let mut size = run.clamp(1 << 12, PIECE);
    let mut batch = run.div_ceil(size).clamp(1, BATCH);
    while counted < need && from < bytes.len() {
        let mut ranges = Vec::with_capacity(batch);
        while ranges.len() < batch && from < bytes.len() {
            let target = (from + size).min(bytes.len());
            let end = bytes[target..]
                .iter()
                .position(|&b| cut(b))
                .map_or(bytes.len(), |k| target + k + 1);
            ranges.push(from..end);
            from = end;
        }
        let counts: Vec<usize> = ranges
            .par_iter()
            .map(|r| count(&bytes[r.clone()]))
            .collect();
        for (r, c) in ranges.into_iter().zip(counts) {
            out.push(Piece {
                start: r.start,
                end: r.end,
                first: counted,
                count: c,
            });
            counted += c;
        }
        if batch < BATCH {
            batch = (2 * batch).min(BATCH);
        } else {
            size = (2 * size).min(PIECE);
        }
    }
    (counted >= need).then_some(out)
}

/// Words starting in `piece`, which starts at a word's start or at
/// whitespace.
fn count_words(piece: &[u8]) -> usize {
    let mut before = true;
    let mut n = 0;
    for &b in piece {
        let space = is_space(b);
        n += usize::from(before && !space);
        before = space;
    }
    n
}

/// The word of `bytes` at or after `*at` (words are parted by
/// [`is_space`]), `*at` moved past it; `None`, `*at` at the end, when only
/// blanks are left.
pub fn next_word<'a>(bytes: &'a [u8], at: &mut usize) -> Option<&'a [u8]> {
    while *at < bytes.len() && is_space(bytes[*at]) {
        *at += 1;
    }
    let start = *at;
    while *at < bytes.len() && !is_space(bytes[*at]) {
        *at += 1;
    }
    (start < *at).then(|| &bytes[start..*at])
}

/// The `out` places of each piece's units among `0..n`, `per` units a
/// record: piece `k` gets the records whose first unit starts in it.
fn places<'o, T>(pieces: &[Piece], n: usize, per: usize, mut out: &'o mut [T]) -> Vec<&'o mut [T]> {
    let mut places = Vec::with_capacity(pieces.len());
    let mut taken = 0;
    for p in pieces {
        let last = (p.first + p.count).min(n * per).div_ceil(per).max(taken);
        let (place, rest) = out.split_at_mut(last - taken);
        places.push(place);
        out = rest;
        taken = last;
    }
    places
}

/// Parses `n` records of `per` whitespace-separated words each (at most
/// [`MAX_WORDS`]) from `bytes[at..]` in parallel, the records laid out
/// freely over lines: `record(i, words)` gives record `i`'s value. The
/// values in order and the offset just past the last record's last word;
/// `None` where the bytes end before, a word holds a `#`, `per` is 0 or
/// too large (for `n` > 0), or `record` gives `None`; for `n` = 0 no
/// records and `at`. `placeholder` fills the output before the records
/// are parsed into it (any value of `T`).
pub fn parse_records<T: Clone + Send>(
    bytes: &[u8],
    at: usize,
    n: usize,
    per: usize,
    placeholder: T,
    record: impl Fn(usize, &[&[u8]]) -> Option<T> + Sync,
) -> Option<(Vec<T>, usize)> {
    if n == 0 {
        return Some((Vec::new(), at));
    }
    if per == 0 || per > MAX_WORDS {
        return None;
    }
    let words = n.checked_mul(per)?;
    // A word and a blank after it.
    let pieces = pieces(bytes, at, (words, 2), is_space, count_words)?;
    let mut out = vec![placeholder; n];
    let places = places(&pieces, n, per, &mut out);
    // The end of the last record: the furthest a piece's records reach.
    let end = pieces
        .par_iter()
        .zip(places)
        .map(|(p, place)| {
            let first = p.first.div_ceil(per);
            if place.is_empty() {
                return Some(0);
            }
            // Skip to the first record starting in the piece.
            let mut at = p.start;
            for _ in 0..(first * per - p.first) {
                next_word(bytes, &mut at)?;
            }
            let mut buf = [&b""[..]; MAX_WORDS];
            for (i, value) in (first..).zip(place.iter_mut()) {
                for w in buf.iter_mut().take(per) {
                    let word = next_word(bytes, &mut at)?;
                    if word.contains(&b'#') {
                        return None;
                    }
                    *w = word;
                }
                *value = record(i, &buf[..per])?;
            }
            Some(at)
        })
        .try_reduce(|| at, |a, b| Some(a.max(b)))?;
    Some((out, end))
}

/// Parses the `n` lines of `bytes` from `at` on in parallel, `line(i, text)`
/// giving line `i`'s value (its text without the `\n`; a `\r` before it
/// stays, as whitespace). The values in order and the offset just past
/// the last line's `\n` (or the end of `bytes`, where the last line has
/// none); `None` where the bytes end before, a line holds a `#`, or
/// `line` gives `None`; for `n` = 0 no lines and `at`. `placeholder` as
/// for [`parse_records`].
pub fn parse_lines<T: Clone + Send>(
    bytes: &[u8],
    at: usize,
    n: usize,
    placeholder: T,
    line: impl Fn(usize, &[u8]) -> Option<T> + Sync,
) -> Option<(Vec<T>, usize)> {
    if n == 0 {
        return Some((Vec::new(), at));
    }
    let len = bytes.len();
    let starts = |piece: &[u8]| -> usize {
        let breaks = piece.iter().filter(|&&b| b == b'\n').count();
        // A last line without its `\n` ends the bytes.
        breaks + usize::from(!piece.ends_with(b"\n"))
    };
    let pieces = pieces(bytes, at, (n, 1), |b| b == b'\n', starts)?;
    debug_assert!(
        pieces
            .iter()
            .all(|p| p.end == len || bytes[p.end - 1] == b'\n')
    );
    let mut out = vec![placeholder; n];
    let places = places(&pieces, n, 1, &mut out);
    let end = pieces
        .par_iter()
        .zip(places)
        .map(|(p, place)| {
            if place.is_empty() {
                return Some(0);
            }
            let mut at = p.start;
            for (i, value) in (p.first..).zip(place.iter_mut()) {
                let rest = &bytes[at..p.end];
                let (text, next) = match rest.iter().position(|&b| b == b'\n') {
                    Some(k) => (&rest[..k], at + k + 1),
                    None => (rest, p.end),
                };
                if text.contains(&b'#') {
                    return None;
                }
                *value = line(i, text)?;
                at = next;
            }
            Some(at)
        })
        .try_reduce(|| at, |a, b| Some(a.max(b)))?;
    Some((out, end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::text::{parse_f32, parse_u32, words};

    /// The records of `text` read one word at a time, for comparison.
    fn serial(text: &[u8], n: usize, per: usize) -> Option<Vec<Vec<u32>>> {
        let mut w = words(text);
        (0..n)
            .map(|_| (0..per).map(|_| w.next().and_then(parse_u32)).collect())
            .collect()
    }

    #[test]
    fn records_over_pieces_read_as_one_at_a_time() {
        // Several pieces, records split across lines and pieces, CRLF.
        let mut text = b"header 7\n".to_vec();
        for i in 0..400_000u32 {
            let sep: &[u8] = match i % 5 {
                0 => b"\r\n",
                1 => b"  ",
                2 => b"\t",
                _ => b"\n",
            };
            text.extend_from_slice(i.to_string().as_bytes());
            text.extend_from_slice(sep);
        }
        text.extend_from_slice(b"# trailer\nEnd\n");
        let at = 9;
        for (n, per) in [
            (1, 1),
            (133_333, 3),
            (100_000, 4),
            (57_142, 7),
            (400_000, 1),
        ] {
            let (got, end) = parse_records(&text, at, n, per, Vec::new(), |_, w| {
                w.iter().map(|x| parse_u32(x)).collect::<Option<Vec<u32>>>()
            })
            .expect("read");
            assert_eq!(Some(got), serial(&text[at..], n, per), "{n} x {per}");
            let last = (n * per - 1).to_string();
            assert!(text[..end].ends_with(last.as_bytes()), "{n} x {per}");
        }
        // Past the end, into the comment, a bad word, no words.
        assert!(parse_records(&text, at, 400_001, 1, 0, |_, w| parse_u32(w[0])).is_none());
        assert!(parse_records(&text, at, 200_001, 2, 0, |_, w| Some(w.len())).is_none());
        assert!(parse_records(&text, at, 10, 3, 0, |_, w| (w[1] != b"13").then_some(0)).is_none());
        assert!(parse_records(&text, at, 1, 0, 0, |_, _| Some(0)).is_none());
        assert_eq!(
            parse_records(&text, at, 0, 3, 0, |_, _| Some(0)),
            Some((vec![], at))
        );
    }

    #[test]
    fn lines_over_pieces_read_as_split_lines() {
        let mut text = b"3\n".to_vec();
        for i in 0..300_000u32 {
            text.extend_from_slice(format!("{i} {}.5\n", i % 7).as_bytes());
        }
        let end_of = |n: usize| {
            2 + text[2..]
                .split_inclusive(|&b| b == b'\n')
                .take(n)
                .map(<[u8]>::len)
                .sum::<usize>()
        };
        for n in [1, 299_999, 300_000] {
            let (got, end) = parse_lines(&text, 2, n, (0, 0.0), |i, l| {
                assert!(l.starts_with(i.to_string().as_bytes()));
                let mut w = words(l);
                Some((parse_u32(w.next()?)?, parse_f32(w.next()?)?))
            })
            .expect("read");
            assert_eq!(got.len(), n);
            assert!(
                got.iter()
                    .enumerate()
                    .all(|(i, &(k, x))| k == i as u32 && x == (i % 7) as f32 + 0.5)
            );
            assert_eq!(end, end_of(n));
        }
        assert!(parse_lines(&text, 2, 300_001, 0, |_, _| Some(0)).is_none());
        // A last line without its line break.
        let short = b"1 2\n3 4";
        assert_eq!(
            parse_lines(short, 0, 2, 0, |_, l| Some(l.len())),
            Some((vec![3, 3], 7))
        );
        assert!(parse_lines(short, 0, 3, 0, |_, l| Some(l.len())).is_none());
        assert!(parse_lines(b"1 # x\n", 0, 1, 0, |_, _| Some(0)).is_none());
    }
}

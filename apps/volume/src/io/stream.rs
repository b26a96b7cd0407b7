//! The machinery of the parallel writers and readers (issue 55, item 3):
//! a file streamed into the temporary file that is renamed over the
//! destination ([`write_streamed`]), its body cut into pieces that rayon
//! fills in parallel, a batch at a time, the next batch filled while the
//! last is written ([`write_pieces`]); the counts of each cell type per
//! piece of cells ([`TypeCounts`]) that give the blocks of one type
//! without a list of them; binary records built on the stack
//! ([`Record`]); the numbers as text, as `{}` formats them, without an
//! allocation ([`push_f32`], [`push_int`]); and, for the readers, records
//! parsed in parallel into a vector in place ([`try_map`], [`append`]).
//!
//! No piece's bytes depend on how the body is cut: the output is the same
//! on any number of threads.

use std::io::{self, Write};
use std::ops::Range;
use std::path::Path;

use rayon::prelude::*;

use super::VolumeIoError;
use crate::mesh::CellVertices;

/// The writer a body is streamed to: the buffered temporary file.
pub(super) type Out<'a> = dyn Write + Send + 'a;

/// Writes the file at `path` through a temporary file beside it
/// ([`cavity::io::write_streamed`]: synced, given the mode of the file it
/// replaces, renamed over `path` once complete; removed on an error),
/// `write` streaming its bytes in order.
///
/// # Errors
/// [`VolumeIoError::File`] naming `path` when the file cannot be created
/// or written (the destination is then as it was).
pub(super) fn write_streamed(
    path: &Path,
    write: impl FnOnce(&mut Out<'_>) -> io::Result<()>,
) -> Result<(), VolumeIoError> {
    Ok(cavity::io::write_streamed(path, write)?)
}

/// Elements (vertices, cells, values) per piece of a body: a piece is
/// filled by one rayon task, into a buffer of about a megabyte (72 bytes
/// of a binary hexahedron, 50 of an ASCII one, times 16 ki).
pub(super) const PIECE: usize = 1 << 14;

/// The pieces of `n` elements: `ceil(n / PIECE)`.
pub(super) fn pieces_of(n: usize) -> usize {
    n.div_ceil(PIECE)
}

/// The elements of piece `k` of `n` elements.
pub(super) fn piece(k: usize, n: usize) -> Range<usize> {
    k * PIECE..((k + 1) * PIECE).min(n)
}

pub(super) use cavity::io::write_pieces;

/// Writes `n` elements of a body in pieces of [`PIECE`]
/// ([`write_pieces`]), `fill(range, buffer)` appending the bytes of the
/// elements of `range`.
///
/// # Errors
/// As [`write_pieces`].
pub(super) fn write_elements(
    out: &mut Out<'_>,
    n: usize,
    fill: impl Fn(Range<usize>, &mut Vec<u8>) + Sync,
) -> io::Result<()> {
    write_pieces(out, pieces_of(n), |k, buf| fill(piece(k, n), buf))
}

/// The cells of each type in each piece of a cell list ([`PIECE`]
/// cells), by [`type_index`]; polyhedra are not counted.
pub(super) struct TypeCounts {
    /// Per piece, the cells of each type.
    pub(super) per_piece: Vec<[usize; 4]>,
    /// The cells of each type.
    pub(super) total: [usize; 4],
}

impl TypeCounts {
    /// The counts of `cells`, the pieces in parallel.
    pub(super) fn of(cells: &[CellVertices]) -> TypeCounts {
        let per_piece: Vec<[usize; 4]> = cells
            .par_chunks(PIECE)
            .map(|chunk| {
                let mut c = [0usize; 4];
                for cell in chunk {
                    if let Some(t) = type_index(cell) {
                        c[t] += 1;
                    }
                }
                c
            })
            .collect();
        let mut total = [0usize; 4];
        for c in &per_piece {
            for t in 0..4 {
                total[t] += c[t];
            }
        }
        TypeCounts { per_piece, total }
    }
}

/// The index of a fixed cell type, in Gmsh's order of element types:
/// tetrahedron 0, hexahedron 1, prism 2, pyramid 3; `None` for a
/// polyhedron.
pub(super) fn type_index(cell: &CellVertices) -> Option<usize> {
    match cell {
        CellVertices::Tetrahedron(_) => Some(0),
        CellVertices::Hexahedron(_) => Some(1),
        CellVertices::Prism(_) => Some(2),
        CellVertices::Pyramid(_) => Some(3),
        CellVertices::Polyhedron(_) => None,
    }
}

/// The index of the first cell that is a polyhedron, searched in
/// parallel.
pub(super) fn first_polyhedron(cells: &[CellVertices]) -> Option<usize> {
    cells
        .par_iter()
        .position_first(|c| matches!(c, CellVertices::Polyhedron(_)))
}

/// A binary record of at most `N` bytes built on the stack and appended
/// to a buffer at once ([`Record::append_to`]): one capacity check and
/// one copy per record rather than per word.
pub(super) struct Record<const N: usize> {
    bytes: [u8; N],
    len: usize,
}

impl<const N: usize> Record<N> {
    /// An empty record.
    pub(super) fn new() -> Self {
        Record {
            bytes: [0; N],
            len: 0,
        }
    }

    /// Appends the bytes of a word.
    ///
    /// # Panics
    /// Past `N` bytes.
    #[inline]
    pub(super) fn put<const K: usize>(&mut self, word: [u8; K]) {
        self.bytes[self.len..self.len + K].copy_from_slice(&word);
        self.len += K;
    }

    /// Appends the record to `buf`.
    #[inline]
    pub(super) fn append_to(&self, buf: &mut Vec<u8>) {
        buf.extend_from_slice(&self.bytes[..self.len]);
    }
}

/// `f` of each of `0..n`, in parallel, written in place into the vector
/// (an indexed collect, without the lists a collect of `Option`s joins),
/// or `None` when `f` gives `None` for any (`placeholder` stands in for
/// those meanwhile): the records of a binary file parsed into values.
pub(super) fn try_map<T: Clone + Send + Sync>(
    n: usize,
    placeholder: T,
    f: impl Fn(usize) -> Option<T> + Sync,
) -> Option<Vec<T>> {
    use std::sync::atomic::{AtomicBool, Ordering};
    let failed = AtomicBool::new(false);
    let mut out = Vec::with_capacity(n);
    (0..n)
        .into_par_iter()
        .map(|i| {
            f(i).unwrap_or_else(|| {
                failed.store(true, Ordering::Relaxed);
                placeholder.clone()
            })
        })
        .collect_into_vec(&mut out);
    (!failed.into_inner()).then_some(out)
}

/// `items` appended to `list`: moved in when `list` is empty (the one
/// block of most files, no copy), else copied in parallel.
pub(super) fn append<T: Send>(list: &mut Vec<T>, items: Vec<T>) {
    if list.is_empty() {
        *list = items;
    } else {
        list.par_extend(items);
    }
}

/// Appends the decimal text of an integer, as `{}` formats it.
pub(super) use cavity::io::push_int;

/// Appends `x` as `{}` formats an `f32`: the shortest digits that read
/// back as `x`, without an exponent (`0.0000001`,
/// `340282350000000000000000000000000000000`), `-0` for negative zero,
/// `inf`, `-inf` and `NaN`. The digits are Ryu's (the `ryu` crate), which
/// are the standard library's but where `x` lies exactly halfway between
/// two shortest candidates: Ryu takes the even one, the standard library
/// the one above ([`halfway_above`]), as here. Checked for every `f32` by
/// the ignored test `every_f32_is_written_as_display_writes_it`.
pub(super) fn push_f32(buf: &mut Vec<u8>, x: f32) {
    if !x.is_finite() {
        buf.extend_from_slice(match x {
            x if x.is_nan() => b"NaN",
            x if x > 0.0 => b"inf",
            _ => b"-inf",
        });
        return;
    }
    let mut ryu = ryu::Buffer::new();
    let s = ryu.format_finite(x).as_bytes();
    let (negative, s) = match s.strip_prefix(b"-") {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    // Ryu writes `1234.0`, `12.34`, `0.001234`, `1e30` or `1.234e-7`:
    // the significant digits, and where the point goes among them.
    let (mantissa, exponent) = match s.iter().position(|&b| b == b'e') {
        Some(e) => {
            let exponent = std::str::from_utf8(&s[e + 1..])
                .ok()
                .and_then(|t| t.parse::<i32>().ok())
                .expect("Ryu's exponent");
            (&s[..e], exponent)
        }
        None => (s, 0),
    };
    let mut digits = [0u8; 48];
    let mut len = 0usize;
    let mut point = None;
    for &d in mantissa {
        if d == b'.' {
            point = Some(len as i32);
        } else {
            digits[len] = d;
            len += 1;
        }
    }
    let mut point = point.unwrap_or(len as i32) + exponent;
    // Without leading and trailing zeros: the digits `D` of `D * 10^E`.
    let lead = digits[..len].iter().take_while(|&&d| d == b'0').count();
    let trail = digits[lead..len]
        .iter()
        .rev()
        .take_while(|&&d| d == b'0')
        .count();
    let (start, end) = (lead, len - trail);
    point -= lead as i32;
    if negative {
        buf.push(b'-');
    }
    if start == end {
        buf.push(b'0');
        return;
    }
    let digits = &mut digits[start..end];
    let significant: u64 = digits.iter().fold(0, |v, &d| 10 * v + u64::from(d - b'0'));
    if halfway_above(x.abs(), significant, point - digits.len() as i32) {
        // The last digit is even (Ryu's choice of the two): no carry.
        *digits.last_mut().expect("a digit") += 1;
    }
    let len = digits.len();
    if point <= 0 {
        buf.extend_from_slice(b"0.");
        buf.extend(std::iter::repeat_n(b'0', (-point) as usize));
        buf.extend_from_slice(digits);
    } else if point as usize >= len {
        buf.extend_from_slice(digits);
        buf.extend(std::iter::repeat_n(b'0', point as usize - len));
    } else {
        let (int, frac) = digits.split_at(point as usize);
        buf.extend_from_slice(int);
        buf.push(b'.');
        buf.extend_from_slice(frac);
    }
}

/// Whether the positive finite `x` is exactly `(d + 1/2) * 10^e`: halfway
/// between the shortest decimal `d * 10^e` that Ryu gave and the next
/// one up, which the standard library's formatting takes instead. With
/// `x = m * 2^k` (`m` odd), `2x = (2d + 1) * 10^e` holds only when the
/// powers of two and five on both sides match.
fn halfway_above(x: f32, d: u64, e: i32) -> bool {
    let bits = x.to_bits();
    let (fraction, biased) = (bits & 0x7f_ffff, (bits >> 23) as i32);
    let (mut m, mut k) = if biased == 0 {
        (fraction, -149)
    } else {
        (fraction | 0x80_0000, biased - 150)
    };
    if m == 0 {
        return false;
    }
    let twos = m.trailing_zeros();
    m >>= twos;
    k += twos as i32;
    // 2 * m * 2^k = n * 2^e * 5^e, n = 2d + 1 odd: the twos give
    // k + 1 = e; the odd parts give m = n * 5^e (e >= 0) or
    // m * 5^-e = n (e < 0).
    let n = 2 * u128::from(d) + 1;
    if k + 1 != e {
        return false;
    }
    let fives = |p: u32| 5u128.checked_pow(p);
    if e >= 0 {
        fives(e as u32).and_then(|f| f.checked_mul(n)) == Some(u128::from(m))
    } else {
        fives(e.unsigned_abs()).and_then(|f| f.checked_mul(u128::from(m))) == Some(n)
    }
}

/// The tests' pseudo-random numbers: Marsaglia's xorshift64 from `state`
/// (not 0).
#[cfg(test)]
pub(super) fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

/// The tests' mixed cells: `cells` cells over `vertices` vertices, a
/// hexahedron, a tetrahedron, a prism and a pyramid in turn.
#[cfg(test)]
pub(super) fn mixed_cells(vertices: u32, cells: u32) -> Vec<CellVertices> {
    let v = |i: u32, k: u32| (i * 31 + k * 17) % vertices;
    (0..cells)
        .map(|i| match i % 4 {
            0 => CellVertices::Hexahedron([0, 1, 2, 3, 4, 5, 6, 7].map(|k| v(i, k))),
            1 => CellVertices::Tetrahedron([0, 1, 2, 3].map(|k| v(i, k))),
            2 => CellVertices::Prism([0, 1, 2, 3, 4, 5].map(|k| v(i, k))),
            _ => CellVertices::Pyramid([0, 1, 2, 3, 4].map(|k| v(i, k))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `x` as [`push_f32`] writes it.
    fn text(x: f32) -> String {
        let mut buf = Vec::new();
        push_f32(&mut buf, x);
        String::from_utf8(buf).expect("text")
    }

    #[test]
    fn floats_are_written_as_display_writes_them() {
        let special = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            0.1,
            1.0e-7,
            1.0e-6,
            1.0e-5,
            1.0e13,
            1.0e14,
            1.0e16,
            3.402_823_5e38,
            -f32::MIN_POSITIVE,
            1.5e-45,
            123_456.79,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ];
        for x in special {
            assert_eq!(text(x), format!("{x}"), "{x:e}");
        }
        // Every exponent, with pseudo-random mantissas.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..1_000_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let x = f32::from_bits(state as u32);
            assert_eq!(text(x), format!("{x}"), "bits {:#x}", x.to_bits());
        }
    }

    #[test]
    #[ignore = "issue 55: every f32 (2^32 of them), minutes on many cores"]
    fn every_f32_is_written_as_display_writes_it() {
        use std::io::Write as _;
        let wrong = (0..=u32::MAX >> 16).into_par_iter().find_map_any(|high| {
            let (mut mine, mut std) = (Vec::new(), Vec::new());
            for low in 0..=0xffffu32 {
                let x = f32::from_bits(high << 16 | low);
                mine.clear();
                std.clear();
                push_f32(&mut mine, x);
                write!(std, "{x}").expect("formatted");
                if mine != std {
                    return Some(x.to_bits());
                }
            }
            None
        });
        assert_eq!(wrong, None, "bits written otherwise than by Display");
    }

    #[test]
    fn pieces_are_written_in_order_whatever_the_batch() {
        for n in [0, 1, PIECE - 1, PIECE, PIECE + 1, 200 * PIECE + 17] {
            let mut out = Vec::new();
            write_elements(&mut out, n, |r, buf| {
                for i in r {
                    buf.extend_from_slice(&(i as u32).to_le_bytes());
                }
            })
            .expect("written");
            let expected: Vec<u8> = (0..n as u32).flat_map(u32::to_le_bytes).collect();
            assert_eq!(out, expected, "{n}");
        }
    }
}

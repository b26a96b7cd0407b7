//! Ternary entries: a column index `c` (below `2³¹`) with a sign, stored as
//! `c` for +1 and `!c` (its bitwise complement, negative as an `i32`) for
//! -1, as the ternary CSR format of the paper's section 3 keeps the sign
//! in the column index. Decoding needs no branch: the sign is the top bit
//! spread over the word (an arithmetic shift), and the index the entry
//! XOR that mask.

/// The entry of column `index` (below `2³¹`) with sign -1 when `negative`.
#[inline(always)]
pub fn encode(index: u32, negative: bool) -> u32 {
    if negative { !index } else { index }
}

/// The mask of `entry`'s sign: all ones for -1, zero for +1.
#[inline(always)]
fn mask(entry: u32) -> u32 {
    ((entry as i32) >> 31) as u32
}

/// The column index of `entry`.
#[inline(always)]
pub fn index(entry: u32) -> u32 {
    entry ^ mask(entry)
}

/// The sign of `entry`: 1 or -1.
#[inline(always)]
pub fn sign(entry: u32) -> i32 {
    mask(entry) as i32 | 1
}

/// Whether `entry` has sign -1.
#[inline(always)]
pub fn is_negative(entry: u32) -> bool {
    (entry as i32) < 0
}

/// `entry` with its sign carried over to column `index`: the transpose's
/// entry for row `index` of the entry's column.
#[inline(always)]
pub fn with_sign_of(index: u32, entry: u32) -> u32 {
    index ^ mask(entry)
}

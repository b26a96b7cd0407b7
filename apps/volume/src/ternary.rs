//! Ternary CSR matrices (the paper's section 3): a sparse matrix whose
//! entries are -1, 0 or +1, stored as CSR without a value array, each
//! entry's sign kept in its column index ([`crate::signed`]). The
//! boundary operators ∂2 and ∂3 of a [`crate::VolumeMesh`] are such
//! matrices, as are their transposes.

use rayon::prelude::*;

use crate::VolumeError;
use crate::signed::{index, with_sign_of};

/// A ternary CSR matrix of `rows()` rows and `columns()` columns.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct TernaryCsr {
    offsets: Vec<u32>,
    entries: Vec<u32>,
    columns: u32,
}

impl TernaryCsr {
    /// The matrix whose row `r` holds `entries[offsets[r]..offsets[r + 1]]`
    /// (signed entries, [`crate::signed::encode`]) over `columns` columns.
    ///
    /// # Errors
    /// [`VolumeError::Matrix`] unless `offsets` starts at 0, does not
    /// decrease and ends at `entries.len()`, and every entry's index is
    /// below `columns` (at most `2³¹ - 1`).
    pub fn new(offsets: Vec<u32>, entries: Vec<u32>, columns: u32) -> Result<Self, VolumeError> {
        let bad = |m: String| Err(VolumeError::Matrix(m));
        if columns > i32::MAX as u32 {
            return bad(format!("{columns} columns, more than 2^31 - 1"));
        }
        if offsets.first() != Some(&0) {
            return bad("the offsets do not start at 0".into());
        }
        if let Some(r) = offsets.par_windows(2).position_first(|w| w[1] < w[0]) {
            return bad(format!("the offsets decrease at row {r}"));
        }
        if offsets.last().map(|&o| o as usize) != Some(entries.len()) {
            return bad(format!(
                "the offsets end at {}, but there are {} entries",
                offsets.last().unwrap_or(&0),
                entries.len()
            ));
        }
        if let Some(i) = entries.par_iter().position_first(|&e| index(e) >= columns) {
            return bad(format!(
                "entry {i} is in column {}, past the {columns} columns",
                index(entries[i])
            ));
        }
        Ok(TernaryCsr {
            offsets,
            entries,
            columns,
        })
    }

    /// Rows.
    pub fn rows(&self) -> u32 {
        self.offsets.len() as u32 - 1
    }

    /// Columns.
    pub fn columns(&self) -> u32 {
        self.columns
    }

    /// The row offsets (`rows() + 1`, from 0 to the number of entries).
    pub fn offsets(&self) -> &[u32] {
        &self.offsets
    }

    /// The signed entries of every row, row after row.
    pub fn entries(&self) -> &[u32] {
        &self.entries
    }

    /// The signed entries of row `r`.
    pub fn row(&self, r: u32) -> &[u32] {
        &self.entries[self.offsets[r as usize] as usize..self.offsets[r as usize + 1] as usize]
    }

    /// Bytes of the offsets and entries.
    pub fn bytes(&self) -> usize {
        4 * (self.offsets.len() + self.entries.len())
    }

    /// The transpose, serially: row `c` lists the rows with an entry in
    /// column `c`, with that entry's sign, by ascending row (the order
    /// [`crate::transpose`] sorts its rows into).
    pub fn transpose_serial(&self) -> TernaryCsr {
        let mut counts = vec![0u32; self.columns as usize + 1];
        for &e in &self.entries {
            counts[index(e) as usize + 1] += 1;
        }
        for c in 0..self.columns as usize {
            counts[c + 1] += counts[c];
        }
        let offsets = counts;
        let mut cursor = offsets.clone();
        let mut entries = vec![0u32; self.entries.len()];
        for r in 0..self.rows() {
            for &e in self.row(r) {
                let c = index(e) as usize;
                entries[cursor[c] as usize] = with_sign_of(r, e);
                cursor[c] += 1;
            }
        }
        TernaryCsr {
            offsets,
            entries,
            columns: self.rows(),
        }
    }
}

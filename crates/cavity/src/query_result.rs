//! A query's whole result as rows in compressed form (what
//! [`crate::backend::Backend::query`] and [`crate::rounds::Rounds::query`]
//! return).

/// A query's result over all owned source elements, by source handle:
/// row `h` is `values[offsets[h]..offsets[h + 1]]`, in global handles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryResult {
    /// `n + 1` row offsets.
    pub offsets: Vec<u32>,
    /// Concatenated rows.
    pub values: Vec<u32>,
}

impl QueryResult {
    /// Row of source handle `h`.
    pub fn row(&self, h: u32) -> &[u32] {
        &self.values[self.offsets[h as usize] as usize..self.offsets[h as usize + 1] as usize]
    }

    /// Builds offsets from per-source counts.
    pub fn offsets_of(counts: &[u32]) -> Vec<u32> {
        let mut offsets = Vec::with_capacity(counts.len() + 1);
        let mut sum = 0u32;
        offsets.push(0);
        for &c in counts {
            sum += c;
            offsets.push(sum);
        }
        offsets
    }
}

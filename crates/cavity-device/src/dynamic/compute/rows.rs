//! A relation in compressed rows in shared memory ([`Rows`]): what a
//! block builds for its query and an element reads its neighbours from.

use crate::block::Shared;

/// A relation in compressed rows, built in shared memory: row `s` of the
/// source kind lists `entries[start(s)..end(s)]`.
pub struct Rows {
    /// `ends[s]`: end of row `s` (its start is `ends[s - 1]`, 0 for `s = 0`).
    pub(super) ends: Shared<u32>,
    pub(super) entries: Shared<u16>,
}

impl Rows {
    #[inline(always)]
    pub(in crate::dynamic) fn start(&self, s: u32) -> u32 {
        if s == 0 { 0 } else { self.ends.get(s - 1) }
    }
    #[inline(always)]
    pub(in crate::dynamic) fn end(&self, s: u32) -> u32 {
        self.ends.get(s)
    }
    #[inline(always)]
    pub(in crate::dynamic) fn entry(&self, i: u32) -> u32 {
        self.entries.get(i) as u32
    }
}

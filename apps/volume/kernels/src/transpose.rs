//! The transpose of a ternary CSR matrix (rows `offsets`, entries
//! [`crate::signed`]) by count, scan and fill (the paper's section 4,
//! Algorithm 1): [`CountColumns`] counts each column's entries, the host
//! scans the counts into the transpose's offsets
//! (`cavity_device::array::scan`), [`FillTranspose`] places each entry in
//! its column's row by an atomic cursor, and [`SortRows`] sorts each row of
//! the transpose by index, so that the result does not depend on the
//! order the atomics took.

use cavity_device::array::{In, InOut};

use crate::signed::{index, with_sign_of};
use crate::{BOUNDS, chunk};

cavity_device::kernel! {
    /// Adds one to `counts[c]` for each of the `n` entries of column `c`
    /// in `entries`; one block per chunk of entries.
    ///
    /// # Safety
    /// Checked: `entries` is only read, `counts` counted atomically.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel CountColumns(launch, entries: In<u32>, n: u32, counts: InOut<u32>) {
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            counts.fetch_add(index(entries.get(start + k)), 1);
        });
    }
}

cavity_device::kernel! {
    /// Writes, for each entry of row `r` (of `rows`) in column `c` with
    /// sign `s`, the entry `r` with sign `s` into row `c` of the transpose
    /// (`t_offsets`, `t_entries`), at the place `cursor[c]` (zero at the
    /// start) hands out; one block per chunk of rows. `offsets` holds
    /// `rows + 1` words delimiting `entries`, `t_offsets` the exclusive
    /// scan of the column counts.
    ///
    /// # Safety
    /// Checked: the inputs are only read; `cursor` and `t_entries` are
    /// written atomically.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel FillTranspose(
        launch,
        offsets: In<u32>,
        entries: In<u32>,
        rows: u32,
        t_offsets: In<u32>,
        cursor: InOut<u32>,
        t_entries: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, rows);
        launch.block.for_each(end - start, |k| {
            let r = start + k;
            for i in offsets.get(r)..offsets.get(r + 1) {
                let e = entries.get(i);
                let c = index(e);
                let at = t_offsets.get(c).wrapping_add(cursor.fetch_add(c, 1));
                t_entries.set(at, with_sign_of(r, e));
            }
        });
    }
}

cavity_device::kernel! {
    /// Sorts each of the `rows` rows of (`offsets`, `entries`) by index
    /// (insertion sort: the rows of a mesh's operators are short); one
    /// block per chunk of rows. `offsets` holds `rows + 1` words delimiting
    /// `entries`.
    ///
    /// # Safety
    /// Checked: `offsets` is only read; `entries` is read and written
    /// atomically (rows that overlap, which no matrix has, would only mix
    /// their entries).
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel SortRows(launch, offsets: In<u32>, entries: InOut<u32>, rows: u32) {
        let (start, end) = chunk(launch.block_idx, rows);
        launch.block.for_each(end - start, |k| {
            let r = start + k;
            let (a, b) = (offsets.get(r), offsets.get(r + 1));
            for i in a.saturating_add(1)..b {
                let x = entries.get(i);
                let mut j = i;
                while j > a && index(entries.get(j - 1)) > index(x) {
                    entries.set(j, entries.get(j - 1));
                    j -= 1;
                }
                entries.set(j, x);
            }
        });
    }
}

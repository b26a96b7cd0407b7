//! The transpose of a ternary CSR matrix (rows `offsets`, entries
//! [`crate::signed`]) by count, scan and fill (the paper's section 4,
//! Algorithm 1): [`CountColumns`] counts each column's entries, the host
//! scans the counts into the transpose's offsets (`cavity_arrays_kernels::scan`),
//! [`FillTranspose`] places each entry in its column's row by an atomic
//! cursor, and [`SortRows`] sorts each row of the transpose by index, so
//! that the result does not depend on the order the atomics took.

use crate::signed::{index, with_sign_of};
use crate::{BOUNDS, arrays, chunk};

cavity_device::kernel! {
    /// Adds one to `counts[c]` for each of the `n` entries of column `c`
    /// in `entries`; one block per chunk of entries.
    ///
    /// # Safety
    /// `entries` holds `n` words whose indices are below the length of
    /// `counts`.
    #[launch_bounds = BOUNDS]
    pub kernel CountColumns(launch, entries: u64, n: u32, counts: u64) {
        // SAFETY: the kernel's contract.
        let [entries, counts] = unsafe { arrays([entries, counts]) };
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            // SAFETY: `entries` is read only.
            let c = index(unsafe { entries.load_unshared(start + k) });
            counts.fetch_add(c, 1);
        });
    }
}

cavity_device::kernel! {
    /// Writes, for each entry of row `r` (of `rows`) in column `c` with
    /// sign `s`, the entry `r` with sign `s` into row `c` of the transpose
    /// (`t_offsets`, `t_entries`), at the place `cursor[c]` (zero at the
    /// start) hands out; one block per chunk of rows.
    ///
    /// # Safety
    /// `offsets` holds `rows + 1` words and `entries` the entries they
    /// delimit; `t_offsets` is the exclusive scan of the column counts
    /// (one word per column and the total), `cursor` one zeroed word per
    /// column, `t_entries` the total.
    #[launch_bounds = BOUNDS]
    pub kernel FillTranspose(
        launch,
        offsets: u64,
        entries: u64,
        rows: u32,
        t_offsets: u64,
        cursor: u64,
        t_entries: u64,
    ) {
        // SAFETY: the kernel's contract.
        let [offsets, entries, t_offsets, cursor, t_entries] =
            unsafe { arrays([offsets, entries, t_offsets, cursor, t_entries]) };
        let (start, end) = chunk(launch.block_idx, rows);
        launch.block.for_each(end - start, |k| {
            let r = start + k;
            // SAFETY: the inputs are read only; each place of `t_entries`
            // is handed to one entry by the atomic cursor.
            unsafe {
                for i in offsets.load_unshared(r)..offsets.load_unshared(r + 1) {
                    let e = entries.load_unshared(i);
                    let c = index(e);
                    let at = t_offsets.load_unshared(c) + cursor.fetch_add(c, 1);
                    t_entries.store_unshared(at, with_sign_of(r, e));
                }
            }
        });
    }
}

cavity_device::kernel! {
    /// Sorts each of the `rows` rows of (`offsets`, `entries`) by index
    /// (insertion sort: the rows of a mesh's operators are short); one
    /// block per chunk of rows.
    ///
    /// # Safety
    /// `offsets` holds `rows + 1` words and `entries` the entries they
    /// delimit; no other kernel touches them meanwhile.
    #[launch_bounds = BOUNDS]
    pub kernel SortRows(launch, offsets: u64, entries: u64, rows: u32) {
        // SAFETY: the kernel's contract.
        let [offsets, entries] = unsafe { arrays([offsets, entries]) };
        let (start, end) = chunk(launch.block_idx, rows);
        launch.block.for_each(end - start, |k| {
            let r = start + k;
            // SAFETY: one thread sorts each row.
            unsafe {
                let (a, b) = (offsets.load_unshared(r), offsets.load_unshared(r + 1));
                for i in a + 1..b {
                    let x = entries.load_unshared(i);
                    let mut j = i;
                    while j > a && index(entries.load_unshared(j - 1)) > index(x) {
                        entries.store_unshared(j, entries.load_unshared(j - 1));
                        j -= 1;
                    }
                    entries.store_unshared(j, x);
                }
            }
        });
    }
}

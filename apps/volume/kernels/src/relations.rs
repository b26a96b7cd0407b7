//! The indirect relations of the paper's section 4 by count, scan and
//! fill: [`FaceVertices`] reads each face's vertex loop off ∂2 and ∂1
//! (the tail of each signed edge, so the rows need no count), and
//! [`Compose`], counting then filling, builds the deduplicated product
//! of two relations (cell-edges from ∂3 and ∂2, cell-vertices from ∂3 and
//! face-vertices), each row's entries in the order they are first met;
//! `crate::SortRows` then sorts them.

use cavity_device::dynamic::global::GlobalU32;

use crate::signed::{index, is_negative};
use crate::{BOUNDS, arrays, chunk};

cavity_device::kernel! {
    /// Writes the vertex loop of each of the `faces` faces of ∂2
    /// (`offsets`, `entries`) to `out` at the same offsets: for each signed
    /// edge, its tail as the face runs through it (`edges` holds each
    /// edge's `(tail, head)`, two words).
    ///
    /// # Safety
    /// `offsets` holds `faces + 1` words delimiting `entries`, whose
    /// indices name edges of `edges`; `out` holds as many words as
    /// `entries`.
    #[launch_bounds = BOUNDS]
    pub kernel FaceVertices(launch, offsets: u64, entries: u64, faces: u32, edges: u64, out: u64) {
        // SAFETY: the kernel's contract.
        let [offsets, entries, edges, out] = unsafe { arrays([offsets, entries, edges, out]) };
        let (start, end) = chunk(launch.block_idx, faces);
        launch.block.for_each(end - start, |k| {
            let f = start + k;
            // SAFETY: the inputs are read only; each face's words of `out`
            // are written by one thread.
            unsafe {
                for i in offsets.load_unshared(f)..offsets.load_unshared(f + 1) {
                    let e = entries.load_unshared(i);
                    let end = u32::from(is_negative(e));
                    out.store_unshared(i, edges.load_unshared(2 * index(e) + end));
                }
            }
        });
    }
}

/// Calls `f` on each distinct index of row `r` of the product of `a` and
/// `b` (the indices of `b`'s rows named by `a`'s row, signs dropped), in
/// the order first met; returns how many there were. A repeat is found by
/// walking the row again up to it: rows are short.
///
/// # Safety
/// The arrays describe two CSR matrices, `a`'s indices naming `b`'s rows.
#[inline(always)]
unsafe fn distinct(
    (a_off, a_ent): (GlobalU32, GlobalU32),
    (b_off, b_ent): (GlobalU32, GlobalU32),
    r: u32,
    mut f: impl FnMut(u32, u32),
) -> u32 {
    let mut count = 0;
    // SAFETY: the caller's contract; read only.
    unsafe {
        let (a0, a1) = (a_off.load_unshared(r), a_off.load_unshared(r + 1));
        for i in a0..a1 {
            let row = index(a_ent.load_unshared(i));
            for j in b_off.load_unshared(row)..b_off.load_unshared(row + 1) {
                let x = index(b_ent.load_unshared(j));
                let mut seen = false;
                'earlier: for i2 in a0..=i {
                    let row2 = index(a_ent.load_unshared(i2));
                    let last = if i2 == i {
                        j
                    } else {
                        b_off.load_unshared(row2 + 1)
                    };
                    for j2 in b_off.load_unshared(row2)..last {
                        if index(b_ent.load_unshared(j2)) == x {
                            seen = true;
                            break 'earlier;
                        }
                    }
                }
                if !seen {
                    f(count, x);
                    count += 1;
                }
            }
        }
    }
    count
}

cavity_device::kernel! {
    /// Row `r` of the product of `a` (`rows` rows) and `b`, deduplicated:
    /// with `out` 0 (the counting pass), the number of its distinct
    /// indices goes to `offsets[r]`; otherwise (the filling pass,
    /// `offsets` the scan of the counts) the indices go to
    /// `out[offsets[r]..]`, in the order first met.
    ///
    /// # Safety
    /// The arrays describe two CSR matrices, `a`'s indices naming `b`'s
    /// rows; `offsets` holds `rows` words (`rows + 1` when filling) and
    /// `out` (unless 0) their total.
    #[launch_bounds = BOUNDS]
    pub kernel Compose(
        launch,
        a_offsets: u64,
        a_entries: u64,
        rows: u32,
        b_offsets: u64,
        b_entries: u64,
        offsets: u64,
        out: u64,
    ) {
        // SAFETY: the kernel's contract.
        let [ao, ae, bo, be, offsets, values] =
            unsafe { arrays([a_offsets, a_entries, b_offsets, b_entries, offsets, out]) };
        let (a, b) = ((ao, ae), (bo, be));
        let (start, end) = chunk(launch.block_idx, rows);
        launch.block.for_each(end - start, |k| {
            let r = start + k;
            // SAFETY: the kernel's contract; one thread writes each row's
            // count or its words of `out`.
            unsafe {
                if out == 0 {
                    offsets.store_unshared(r, distinct(a, b, r, |_, _| {}));
                } else {
                    let at = offsets.load_unshared(r);
                    distinct(a, b, r, |i, x| values.store_unshared(at + i, x));
                }
            }
        });
    }
}

//! The indirect relations of the paper's section 4 by count, scan and
//! fill: [`FaceVertices`] reads each face's vertex loop off ∂2 and ∂1
//! (the tail of each signed edge, so the rows need no count), and
//! [`Compose`], counting then filling, builds the deduplicated product
//! of two relations (cell-edges from ∂3 and ∂2, cell-vertices from ∂3 and
//! face-vertices), each row's entries in the order they are first met;
//! `crate::SortRows` then sorts them.

use cavity_device::array::{In, InOut, Ins};

use crate::signed::{index, is_negative};
use crate::{BOUNDS, chunk};

cavity_device::kernel! {
    /// Writes the vertex loop of each of the `faces` faces of ∂2
    /// (`offsets`, `entries`) to `out` at the same offsets: for each signed
    /// edge, its tail as the face runs through it (`edges` holds each
    /// edge's `(tail, head)`, two words).
    ///
    /// # Safety
    /// Checked: the inputs are only read, `out` written atomically.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel FaceVertices(
        launch,
        offsets: In<u32>,
        entries: In<u32>,
        faces: u32,
        edges: In<u32>,
        out: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, faces);
        launch.block.for_each(end - start, |k| {
            let f = start + k;
            for i in offsets.get(f)..offsets.get(f + 1) {
                let e = entries.get(i);
                let end = u32::from(is_negative(e));
                out.set(i, edges.get((2 * index(e)).wrapping_add(end)));
            }
        });
    }
}

/// Calls `f` on each distinct index of row `r` of the product of `a` and
/// `b` (the indices of `b`'s rows named by `a`'s row, signs dropped), in
/// the order first met; returns how many there were. A repeat is found by
/// walking the row again up to it: rows are short.
#[inline(always)]
fn distinct(
    [a_off, a_ent, b_off, b_ent]: [In<u32>; 4],
    r: u32,
    mut f: impl FnMut(u32, u32),
) -> u32 {
    let mut count = 0;
    let (a0, a1) = (a_off.get(r), a_off.get(r + 1));
    for i in a0..a1 {
        let row = index(a_ent.get(i));
        for j in b_off.get(row)..b_off.get(row + 1) {
            let x = index(b_ent.get(j));
            let mut seen = false;
            'earlier: for i2 in a0..=i {
                let row2 = index(a_ent.get(i2));
                let last = if i2 == i { j } else { b_off.get(row2 + 1) };
                for j2 in b_off.get(row2)..last {
                    if index(b_ent.get(j2)) == x {
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
    count
}

cavity_device::kernel! {
    /// Row `r` of the product of `a` (`rows` rows) and `b`, deduplicated:
    /// `ab` holds the offsets and entries of `a`, then of `b`. With `out`
    /// empty (the counting pass), the number of its distinct indices goes
    /// to `offsets[r]`; otherwise (the filling pass, `offsets` the scan of
    /// the counts) the indices go to `out[offsets[r]..]`, in the order
    /// first met.
    ///
    /// # Safety
    /// Checked: `ab` is only read, `offsets` and `out` written atomically.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel Compose(launch, ab: Ins<u32, 4>, rows: u32, offsets: InOut<u32>, out: InOut<u32>) {
        let (start, end) = chunk(launch.block_idx, rows);
        launch.block.for_each(end - start, |k| {
            let r = start + k;
            if out.is_empty() {
                offsets.set(r, distinct(*ab, r, |_, _| {}));
            } else {
                let at = offsets.get(r);
                distinct(*ab, r, |i, x| out.set(at.wrapping_add(i), x));
            }
        });
    }
}

//! The label phase (GPolylla's Algorithms 8-10): longest edges, then
//! frontier and seed edges in one pass, which also counts each vertex's
//! frontier edges for the repair.

use cavity_arrays_kernels::{BOUNDS, arrays, chunk};
use cavity_device::dynamic::global::GlobalU32;

use crate::{LONGEST, above, coordinate, rank};

cavity_device::kernel! {
    /// Writes in byte `f` of `longest` the corner `i` (0 to 2) of each of
    /// the `triangles` triangles' longest half-edge `3f + i`: the largest
    /// [`rank`] of the three. `mesh` holds the addresses of `origin`,
    /// `twin` and the positions.
    ///
    /// # Safety
    /// The arrays describe a half-edge triangulation of `triangles`
    /// triangles; `longest` holds a byte per triangle.
    #[launch_bounds = BOUNDS]
    pub kernel LongestEdges(launch, mesh: [u64; 3], triangles: u32, longest: u64) {
        // SAFETY: the kernel's contract.
        let [origin, twin, positions, longest] = unsafe { arrays([mesh[0], mesh[1], mesh[2], longest]) };
        let (start, end) = chunk(launch.block_idx, triangles);
        launch.block.for_each(end - start, |k| {
            let f = start + k;
            // SAFETY: read only inputs; one thread writes each triangle's
            // byte.
            unsafe {
                let point = |v: u32| [coordinate(positions, v, 0), coordinate(positions, v, 1)];
                let corner = [
                    point(origin.load_unshared(3 * f)),
                    point(origin.load_unshared(3 * f + 1)),
                    point(origin.load_unshared(3 * f + 2)),
                ];
                let key = |i: u32| {
                    let h = 3 * f + i;
                    rank(corner[i as usize], corner[((i + 1) % 3) as usize], h, twin.load_unshared(h))
                };
                let (mut best, mut best_key) = (0, key(0));
                for i in 1..3 {
                    let k = key(i);
                    if above(k, best_key) {
                        (best, best_key) = (i, k);
                    }
                }
                longest.store_byte_unshared(f, best as u8);
            }
        });
    }
}

/// Counts one more frontier edge at vertex `v` in `ends` (two bits per
/// vertex, 16 vertices a word: bit `2v % 32` set at the first, the next
/// bit at the second and later ones).
#[inline(always)]
pub fn count_end(ends: GlobalU32, v: u32) {
    let first = 1 << (2 * (v % 16));
    let old = ends.fetch_or_gpu(v / 16, first);
    if old & first != 0 && old & (first << 1) == 0 {
        ends.or(v / 16, first << 1);
    }
}

/// Whether `ends` counts exactly one frontier edge at vertex `v` (a
/// barrier tip).
///
/// # Safety
/// Nothing writes `ends` while the kernel runs.
#[inline(always)]
pub unsafe fn one_end(ends: GlobalU32, v: u32) -> bool {
    // SAFETY: the caller's contract.
    unsafe { ends.load_unshared(v / 16) >> (2 * (v % 16)) & 0b11 == 0b01 }
}

cavity_device::kernel! {
    /// Writes each triangle's label byte in `labels` (the frontier and
    /// seed bits of [`crate::FRONTIER`] and [`crate::SEED`]) over the
    /// `interior / 3` triangles, from the corners in `longest`: a
    /// half-edge is a frontier half-edge when its edge is on the boundary
    /// (its twin at or past `interior`) or the longest edge of neither
    /// triangle; a seed when its edge is a terminal edge (the longest of
    /// both triangles; the smaller half-edge) or a border terminal edge
    /// (the longest of its triangle, on the boundary). Each frontier edge
    /// is counted at both its vertices in `ends` ([`count_end`]). `mesh`
    /// holds the addresses of `origin`, `twin` and `longest`.
    ///
    /// # Safety
    /// The arrays describe a half-edge triangulation; `longest` and
    /// `labels` hold a byte per triangle, `ends` two bits per vertex,
    /// zeroed before.
    #[launch_bounds = BOUNDS]
    pub kernel Labels(launch, mesh: [u64; 3], interior: u32, labels: u64, ends: u64) {
        // SAFETY: the kernel's contract.
        let [origin, twin, longest] = unsafe { arrays(mesh) };
        // SAFETY: as above.
        let [labels, ends] = unsafe { arrays([labels, ends]) };
        let (start, end) = chunk(launch.block_idx, interior / 3);
        launch.block.for_each(end - start, |k| {
            let f = start + k;
            // SAFETY: read only inputs; one thread writes each triangle's
            // byte; the counts are atomic.
            unsafe {
                let own = longest.load_byte_unshared(f) & LONGEST;
                let mut label = 0;
                for i in 0..3 {
                    let h = 3 * f + i;
                    let t = twin.load_unshared(h);
                    let border = t >= interior;
                    let theirs = !border && u32::from(longest.load_byte_unshared(t / 3) & LONGEST) == t % 3;
                    let mine = u32::from(own) == i;
                    if border || (!mine && !theirs) {
                        label |= 1 << i;
                        count_end(ends, origin.load_unshared(h));
                        if border {
                            count_end(ends, origin.load_unshared(3 * f + (i + 1) % 3));
                        }
                    }
                    if mine && (border || (theirs && h < t)) {
                        label |= 1 << (3 + i);
                    }
                }
                labels.store_byte_unshared(f, label);
            }
        });
    }
}

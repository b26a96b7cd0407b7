//! The label phase (GPolylla's Algorithms 8-10): longest edges, then
//! frontier and seed edges in one pass, which also counts each vertex's
//! frontier edges for the repair.

use cavity_device::array::{BOUNDS, In, InOut, Ins, chunk};

use crate::{LONGEST, above, coordinate, rank};

cavity_device::kernel! {
    /// Writes in byte `f` of `longest` the corner `i` (0 to 2) of each of
    /// the `triangles` triangles' longest half-edge `3f + i`: the largest
    /// [`rank`] of the three. `mesh` holds `origin`, `twin` and the
    /// positions.
    ///
    /// # Safety
    /// Checked: the inputs are only read; one thread writes each
    /// triangle's byte, named by its index.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel LongestEdges(launch, mesh: Ins<u32, 3>, triangles: u32, longest: InOut<u32>) {
        let [origin, twin, positions] = *mesh;
        assert!(triangles <= longest.len().saturating_mul(4), "a byte per triangle");
        let (start, end) = chunk(launch.block_idx, triangles);
        launch.block.for_each(end - start, |k| {
            let f = start + k;
            let point = |v: u32| [coordinate(positions, v, 0), coordinate(positions, v, 1)];
            let at = f.wrapping_mul(3);
            let corner = [0, 1, 2].map(|i| point(origin.get(at.wrapping_add(i))));
            let key = |i: u32| {
                let h = at.wrapping_add(i);
                rank(corner[i as usize], corner[((i + 1) % 3) as usize], h, twin.get(h))
            };
            let (mut best, mut best_key) = (0, key(0));
            for i in 1..3 {
                let k = key(i);
                if above(k, best_key) {
                    (best, best_key) = (i, k);
                }
            }
            // SAFETY: one thread writes each triangle's byte.
            unsafe { longest.set_byte_unshared(f, best as u8) };
        });
    }
}

/// Counts one more frontier edge at vertex `v` in `ends` (two bits per
/// vertex, 16 vertices a word: bit `2v % 32` set at the first, the next
/// bit at the second and later ones).
#[inline(always)]
pub fn count_end(ends: InOut<u32>, v: u32) {
    let first = 1 << (2 * (v % 16));
    let old = ends.fetch_or(v / 16, first);
    if old & first != 0 && old & (first << 1) == 0 {
        ends.or(v / 16, first << 1);
    }
}

/// Whether `ends` counts exactly one frontier edge at vertex `v` (a
/// barrier tip).
#[inline(always)]
pub fn one_end(ends: In<u32>, v: u32) -> bool {
    ends.get(v / 16) >> (2 * (v % 16)) & 0b11 == 0b01
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
    /// is counted at both its vertices in `ends` ([`count_end`], zeroed
    /// before). `mesh` holds `origin`, `twin` and `longest`.
    ///
    /// # Safety
    /// Checked: the inputs are only read; one thread writes each
    /// triangle's byte, named by its index; the counts are atomic.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel Labels(launch, mesh: Ins<u32, 3>, interior: u32, labels: InOut<u32>, ends: InOut<u32>) {
        let [origin, twin, longest] = *mesh;
        let triangles = interior / 3;
        assert!(triangles <= labels.len().saturating_mul(4), "a byte per triangle");
        let (start, end) = chunk(launch.block_idx, triangles);
        launch.block.for_each(end - start, |k| {
            let f = start + k;
            let own = longest.byte(f) & LONGEST;
            let mut label = 0;
            for i in 0..3 {
                let h = 3 * f + i;
                let t = twin.get(h);
                let border = t >= interior;
                let theirs = !border && u32::from(longest.byte(t / 3) & LONGEST) == t % 3;
                let mine = u32::from(own) == i;
                if border || (!mine && !theirs) {
                    label |= 1 << i;
                    count_end(ends, origin.get(h));
                    if border {
                        count_end(ends, origin.get(3 * f + (i + 1) % 3));
                    }
                }
                if mine && (border || (theirs && h < t)) {
                    label |= 1 << (3 + i);
                }
            }
            // SAFETY: one thread writes each triangle's byte.
            unsafe { labels.set_byte_unshared(f, label) };
        });
    }
}

//! The label phase (GPolylla's Algorithms 8-10): longest edges, frontier
//! edges, seed edges.

use cavity_arrays_kernels::{BOUNDS, arrays, chunk};

use crate::{above, coordinate, rank};

cavity_device::kernel! {
    /// Marks each of the `triangles` triangles' longest half-edge in
    /// `longest` (zeroed before): the largest [`rank`] of `3f`, `3f + 1`,
    /// `3f + 2`. `mesh` holds the addresses of `origin`, `twin` and the
    /// positions.
    ///
    /// # Safety
    /// The arrays describe a half-edge triangulation of `triangles`
    /// triangles; `longest` holds a word per half-edge.
    #[launch_bounds = BOUNDS]
    pub kernel LongestEdges(launch, mesh: [u64; 3], triangles: u32, longest: u64) {
        // SAFETY: the kernel's contract.
        let [origin, twin, positions, longest] = unsafe { arrays([mesh[0], mesh[1], mesh[2], longest]) };
        let (start, end) = chunk(launch.block_idx, triangles);
        launch.block.for_each(end - start, |k| {
            let f = start + k;
            // SAFETY: read only inputs; one thread writes each triangle's
            // mark.
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
                longest.store_unshared(3 * f + best, 1);
            }
        });
    }
}

cavity_device::kernel! {
    /// Marks in `frontier` each of the `halfedges` half-edges whose edge is
    /// on the boundary (either half-edge at or past `interior`) or the
    /// longest edge of neither triangle.
    ///
    /// # Safety
    /// `twin`, `longest` and `frontier` hold a word per half-edge.
    #[launch_bounds = BOUNDS]
    pub kernel FrontierEdges(launch, twin: u64, longest: u64, counts: [u32; 2], frontier: u64) {
        let [interior, halfedges] = counts;
        // SAFETY: the kernel's contract.
        let [twin, longest, frontier] = unsafe { arrays([twin, longest, frontier]) };
        let (start, end) = chunk(launch.block_idx, halfedges);
        launch.block.for_each(end - start, |k| {
            let h = start + k;
            // SAFETY: read only inputs; one thread writes each word.
            unsafe {
                let t = twin.load_unshared(h);
                let border = h >= interior || t >= interior;
                let inner = longest.load_unshared(h) == 0 && longest.load_unshared(t) == 0;
                frontier.store_unshared(h, u32::from(border || inner));
            }
        });
    }
}

cavity_device::kernel! {
    /// Marks in `seeds` one half-edge of each terminal edge (the longest
    /// edge of both its triangles: the smaller half-edge) and each border
    /// terminal edge (the longest edge of its triangle, on the boundary),
    /// over the `interior` half-edges.
    ///
    /// # Safety
    /// `twin` and `longest` hold a word per half-edge, `seeds` one per
    /// interior half-edge.
    #[launch_bounds = BOUNDS]
    pub kernel SeedEdges(launch, twin: u64, longest: u64, interior: u32, seeds: u64) {
        // SAFETY: the kernel's contract.
        let [twin, longest, seeds] = unsafe { arrays([twin, longest, seeds]) };
        let (start, end) = chunk(launch.block_idx, interior);
        launch.block.for_each(end - start, |k| {
            let h = start + k;
            // SAFETY: read only inputs; one thread writes each word.
            unsafe {
                let t = twin.load_unshared(h);
                let seed = longest.load_unshared(h) != 0
                    && (t >= interior || (longest.load_unshared(t) != 0 && h < t));
                seeds.store_unshared(h, u32::from(seed));
            }
        });
    }
}

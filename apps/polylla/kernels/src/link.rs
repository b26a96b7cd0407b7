//! The polygons (GPolylla's Algorithms 12-14): each frontier half-edge
//! linked to its neighbours on its polygon, the seeds moved onto frontier
//! half-edges, each polygon marked once at its smallest half-edge.

use cavity_arrays_kernels::{BOUNDS, arrays, chunk};

use crate::{SEED, connectivity};

cavity_device::kernel! {
    /// For each of the `counts[1]` half-edges: an interior frontier one
    /// (below `counts[0]`, by `labels`) gets as `linked[0]` (its new
    /// `next`) the first frontier half-edge `n` turning clockwise
    /// (`next(twin(h))`) from its `next`, and is written as `linked[1]`
    /// (the new `prev`) of `n`, its one predecessor on the polygon; the
    /// others keep their `next` and `prev`. `mesh` holds the addresses of
    /// `twin`, the border half-edges' `next` and `prev`.
    ///
    /// # Safety
    /// The arrays describe a half-edge triangulation whose labels link
    /// the frontier half-edges into cycles; `labels` holds a byte per
    /// triangle, both arrays of `linked` a word per half-edge.
    #[launch_bounds = BOUNDS]
    pub kernel Relink(launch, mesh: [u64; 3], labels: u64, counts: [u32; 2], linked: [u64; 2]) {
        let [interior, halfedges] = counts;
        // SAFETY: the kernel's contract.
        let m = unsafe { connectivity(mesh, interior) };
        // SAFETY: as above.
        let [labels, new_next, new_prev] = unsafe { arrays([labels, linked[0], linked[1]]) };
        let (start, end) = chunk(launch.block_idx, halfedges);
        launch.block.for_each(end - start, |k| {
            let h = start + k;
            // SAFETY: read only inputs; one thread writes each word: the
            // `prev` of a frontier half-edge its predecessor's, the others
            // their own.
            unsafe {
                if h < interior && m.frontier(labels, h) {
                    let mut n = m.next(h);
                    while !m.frontier(labels, n) {
                        n = m.cw(n);
                    }
                    new_next.store_unshared(h, n);
                    new_prev.store_unshared(n, h);
                } else {
                    new_next.store_unshared(h, m.next(h));
                    new_prev.store_unshared(h, m.prev(h));
                }
            }
        });
    }
}

cavity_device::kernel! {
    /// Moves each seed of `labels` (over the `interior / 3` triangles)
    /// onto the first frontier half-edge turning clockwise around its
    /// origin, setting its bit in `moved`. `mesh` holds the addresses of
    /// `twin`, the border half-edges' `next` and `prev`.
    ///
    /// # Safety
    /// The arrays describe a half-edge triangulation; `labels` holds a
    /// byte per triangle, `moved` a bit per interior half-edge.
    #[launch_bounds = BOUNDS]
    pub kernel MoveSeeds(launch, mesh: [u64; 3], labels: u64, interior: u32, moved: u64) {
        // SAFETY: the kernel's contract.
        let m = unsafe { connectivity(mesh, interior) };
        // SAFETY: as above.
        let [labels, moved] = unsafe { arrays([labels, moved]) };
        let (start, end) = chunk(launch.block_idx, interior / 3);
        launch.block.for_each(end - start, |k| {
            let f = start + k;
            // SAFETY: read only inputs; the marks are atomic ORs.
            unsafe {
                let mut seeds = (labels.load_byte_unshared(f) & SEED) >> 3;
                while seeds != 0 {
                    let mut s = 3 * f + seeds.trailing_zeros();
                    seeds &= seeds - 1;
                    while !m.frontier(labels, s) {
                        s = m.cw(s);
                    }
                    moved.or(s / 32, 1 << (s % 32));
                }
            }
        });
    }
}

cavity_device::kernel! {
    /// Sets in `polygons` (a bit per interior half-edge) the bit of the
    /// smallest half-edge of the polygon of each of the `n` half-edges of
    /// `seeds` (walking `new_next` around it).
    ///
    /// # Safety
    /// `new_next` holds a word per half-edge, linking frontier half-edges
    /// into cycles; `seeds` holds `n` interior frontier half-edges.
    #[launch_bounds = BOUNDS]
    pub kernel PolygonSeeds(launch, new_next: u64, seeds: u64, n: u32, polygons: u64) {
        // SAFETY: the kernel's contract.
        let [new_next, seeds, polygons] = unsafe { arrays([new_next, seeds, polygons]) };
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            // SAFETY: read only inputs; the marks are atomic ORs.
            unsafe {
                let h = seeds.load_unshared(start + k);
                let (mut least, mut e) = (h, new_next.load_unshared(h));
                while e != h {
                    least = least.min(e);
                    e = new_next.load_unshared(e);
                }
                polygons.or(least / 32, 1 << (least % 32));
            }
        });
    }
}

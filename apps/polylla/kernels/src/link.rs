//! The polygons (GPolylla's Algorithms 12-14): each frontier half-edge
//! linked to its neighbours on its polygon, the seeds moved onto frontier
//! half-edges, each polygon marked once at its smallest half-edge.

use cavity_arrays_kernels::{BOUNDS, arrays, chunk};

cavity_device::kernel! {
    /// For each of the `counts[1]` half-edges: an interior frontier one
    /// (below `counts[0]`) gets as `new_next` the first frontier half-edge
    /// turning clockwise (`next(twin(h))`) from its `next`, and as
    /// `new_prev` the first turning counter-clockwise (`prev(twin(h))`)
    /// from its `prev`; the others keep theirs. `mesh` holds the addresses
    /// of `twin`, `next`, `prev` and `frontier`.
    ///
    /// # Safety
    /// The arrays hold a word per half-edge of one triangulation;
    /// `new_next` and `new_prev` too.
    #[launch_bounds = BOUNDS]
    pub kernel Relink(launch, mesh: [u64; 4], counts: [u32; 2], new_next: u64, new_prev: u64) {
        let [interior, halfedges] = counts;
        // SAFETY: the kernel's contract.
        let [twin, next, prev, frontier] = unsafe { arrays(mesh) };
        // SAFETY: as above.
        let [new_next, new_prev] = unsafe { arrays([new_next, new_prev]) };
        let (start, end) = chunk(launch.block_idx, halfedges);
        launch.block.for_each(end - start, |k| {
            let h = start + k;
            // SAFETY: read only inputs; one thread writes each word.
            unsafe {
                let (mut n, mut p) = (next.load_unshared(h), prev.load_unshared(h));
                if h < interior && frontier.load_unshared(h) != 0 {
                    while frontier.load_unshared(n) == 0 {
                        n = next.load_unshared(twin.load_unshared(n));
                    }
                    while frontier.load_unshared(p) == 0 {
                        p = prev.load_unshared(twin.load_unshared(p));
                    }
                }
                new_next.store_unshared(h, n);
                new_prev.store_unshared(h, p);
            }
        });
    }
}

cavity_device::kernel! {
    /// Moves each seed of `seeds` (one word per interior half-edge, below
    /// `interior`) onto the first frontier half-edge turning clockwise
    /// around its origin, marking it in `moved`. `mesh` holds the addresses
    /// of `twin`, `next` (the triangulation's) and `frontier`.
    ///
    /// # Safety
    /// The arrays hold a word per half-edge of one triangulation; `moved`
    /// one per interior half-edge.
    #[launch_bounds = BOUNDS]
    pub kernel MoveSeeds(launch, mesh: [u64; 3], interior: u32, seeds: u64, moved: u64) {
        // SAFETY: the kernel's contract.
        let [twin, next, frontier] = unsafe { arrays(mesh) };
        // SAFETY: as above.
        let [seeds, moved] = unsafe { arrays([seeds, moved]) };
        let (start, end) = chunk(launch.block_idx, interior);
        launch.block.for_each(end - start, |k| {
            let h = start + k;
            // SAFETY: read only inputs; the marks are atomic ORs of 1.
            unsafe {
                if seeds.load_unshared(h) == 0 {
                    return;
                }
                let mut s = h;
                while frontier.load_unshared(s) == 0 {
                    s = next.load_unshared(twin.load_unshared(s));
                }
                moved.fetch_or(s, 1);
            }
        });
    }
}

cavity_device::kernel! {
    /// Marks in `polygons` the smallest half-edge of the polygon of each
    /// seed of `moved` (walking `new_next` around it), over the `interior`
    /// half-edges.
    ///
    /// # Safety
    /// `new_next` holds a word per half-edge, linking frontier half-edges
    /// into cycles; `moved` and `polygons` one per interior half-edge.
    #[launch_bounds = BOUNDS]
    pub kernel PolygonSeeds(launch, new_next: u64, moved: u64, interior: u32, polygons: u64) {
        // SAFETY: the kernel's contract.
        let [new_next, moved, polygons] = unsafe { arrays([new_next, moved, polygons]) };
        let (start, end) = chunk(launch.block_idx, interior);
        launch.block.for_each(end - start, |k| {
            let h = start + k;
            // SAFETY: read only inputs; the marks are atomic ORs of 1.
            unsafe {
                if moved.load_unshared(h) == 0 {
                    return;
                }
                let (mut least, mut e) = (h, new_next.load_unshared(h));
                while e != h {
                    least = least.min(e);
                    e = new_next.load_unshared(e);
                }
                polygons.fetch_or(least, 1);
            }
        });
    }
}

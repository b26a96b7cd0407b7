//! The repair, done before the polygons are linked (GPolylla's
//! Algorithm 11): at each barrier tip, the middle edge becomes a frontier
//! edge and both its half-edges seeds.

use cavity_arrays_kernels::{BOUNDS, arrays, chunk};

cavity_device::kernel! {
    /// For each of the `vertices` vertices with exactly one frontier edge
    /// in `frontier` (a barrier tip), turning clockwise (`next(twin(h))`)
    /// from `edge_of_vertex`: marks the `degree / 2`-th half-edge out of
    /// it clockwise from the frontier one, and its twin, in `extra` and
    /// `seeds`, and counts the tip in `repaired[0]`. `mesh` holds the
    /// addresses of `twin`, `next` and `edge_of_vertex` (`u32::MAX` for a
    /// vertex of no triangle).
    ///
    /// # Safety
    /// The arrays describe a half-edge triangulation; `frontier` and
    /// `extra` hold a word per half-edge, `seeds` one per interior
    /// half-edge; `repaired` one word.
    #[launch_bounds = BOUNDS]
    pub kernel BarrierTips(
        launch,
        mesh: [u64; 3],
        vertices: u32,
        frontier: u64,
        extra: u64,
        seeds: u64,
        repaired: u64,
    ) {
        // SAFETY: the kernel's contract.
        let [twin, next, edge_of_vertex] = unsafe { arrays(mesh) };
        // SAFETY: as above.
        let [frontier, extra, seeds, repaired] = unsafe { arrays([frontier, extra, seeds, repaired]) };
        let (start, end) = chunk(launch.block_idx, vertices);
        launch.block.for_each(end - start, |k| {
            let v = start + k;
            // SAFETY: read only inputs; the marks are atomic ORs of 1.
            unsafe {
                let first = edge_of_vertex.load_unshared(v);
                if first == u32::MAX {
                    return;
                }
                let cw = |h: u32| next.load_unshared(twin.load_unshared(h));
                let (mut h, mut count, mut degree, mut tip) = (first, 0, 0, first);
                loop {
                    if frontier.load_unshared(h) != 0 {
                        count += 1;
                        tip = h;
                    }
                    degree += 1;
                    h = cw(h);
                    if h == first {
                        break;
                    }
                }
                if count != 1 {
                    return;
                }
                let mut m = tip;
                for _ in 0..degree / 2 {
                    m = cw(m);
                }
                let t = twin.load_unshared(m);
                extra.fetch_or(m, 1);
                extra.fetch_or(t, 1);
                seeds.fetch_or(m, 1);
                seeds.fetch_or(t, 1);
                repaired.fetch_add(0, 1);
            }
        });
    }
}

cavity_device::kernel! {
    /// `frontier[h] |= extra[h]` for the `n` half-edges.
    ///
    /// # Safety
    /// Both arrays hold `n` words.
    #[launch_bounds = BOUNDS]
    pub kernel MergeFrontier(launch, frontier: u64, extra: u64, n: u32) {
        // SAFETY: the kernel's contract.
        let [frontier, extra] = unsafe { arrays([frontier, extra]) };
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let h = start + k;
            // SAFETY: one thread reads and writes each word.
            unsafe { frontier.store_unshared(h, frontier.load_unshared(h) | extra.load_unshared(h)) };
        });
    }
}

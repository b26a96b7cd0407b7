//! The polygons (GPolylla's Algorithms 12-14): each frontier half-edge
//! linked to its neighbours on its polygon, the seeds moved onto frontier
//! half-edges, each polygon marked once at its smallest half-edge.

use cavity_device::array::{BOUNDS, In, InOut, Ins, chunk};

use crate::{Mesh, SEED};

cavity_device::kernel! {
    /// For each of the `counts[1]` half-edges: an interior frontier one
    /// (below `counts[0]`, by `labels`) gets as its new `next` (in
    /// `new_next`) the first frontier half-edge `n` turning clockwise
    /// (`next(twin(h))`) from its `next`, and is written as the new `prev`
    /// of `n` (in `new_prev`), its one predecessor on the polygon; the
    /// others keep their `next` and `prev`. `mesh` holds `twin`, the
    /// border half-edges' `next` and `prev`.
    ///
    /// # Safety
    /// Checked: the inputs are only read; one thread writes each word of
    /// `new_next`, named by its index, and the `prev` words with atomic
    /// stores.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel Relink(
        launch,
        mesh: Ins<u32, 3>,
        labels: In<u32>,
        counts: [u32; 2],
        new_next: InOut<u32>,
        new_prev: InOut<u32>,
    ) {
        let [interior, halfedges] = counts;
        let m = Mesh::new(*mesh, interior);
        let (start, end) = chunk(launch.block_idx, halfedges);
        launch.block.for_each(end - start, |k| {
            let h = start + k;
            let next = if h < interior && m.frontier(labels, h) {
                let mut n = m.next(h);
                while !m.frontier(labels, n) {
                    n = m.cw(n);
                }
                new_prev.set(n, h);
                n
            } else {
                new_prev.set(h, m.prev(h));
                m.next(h)
            };
            // SAFETY: one thread writes each word of `new_next`.
            unsafe { new_next.set_unshared(h, next) };
        });
    }
}

cavity_device::kernel! {
    /// Moves each seed of `labels` (over the `interior / 3` triangles)
    /// onto the first frontier half-edge turning clockwise around its
    /// origin, setting its bit in `moved`. `mesh` holds `twin`, the border
    /// half-edges' `next` and `prev`.
    ///
    /// # Safety
    /// Checked: the inputs are only read; the marks are atomic ORs.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel MoveSeeds(launch, mesh: Ins<u32, 3>, labels: In<u32>, interior: u32, moved: InOut<u32>) {
        let m = Mesh::new(*mesh, interior);
        let (start, end) = chunk(launch.block_idx, interior / 3);
        launch.block.for_each(end - start, |k| {
            let f = start + k;
            let mut seeds = u32::from(labels.byte(f) & SEED) >> 3;
            while seeds != 0 {
                let mut s = 3 * f + seeds.trailing_zeros();
                seeds &= seeds - 1;
                while !m.frontier(labels, s) {
                    s = m.cw(s);
                }
                moved.set_bit(s);
            }
        });
    }
}

cavity_device::kernel! {
    /// Sets in `polygons` (a bit per interior half-edge) the bit of the
    /// smallest half-edge of the polygon of each of the `n` half-edges of
    /// `seeds` (walking `new_next` around it), and writes the seed plus
    /// one in `ids` at each of the polygon's half-edges; a walk that finds
    /// its polygon's bit already set (another seed's walk of the same
    /// polygon) sets that bit in `shared` too, whose polygons' `ids` are
    /// then a mixture of their seeds' ([`crate::SharedIds`] writes them
    /// again). The ids let [`crate::Bridges`] find barrier edges.
    ///
    /// # Safety
    /// Checked: the inputs are only read; the marks are atomic ORs; the
    /// ids atomic stores (walks of one polygon may race on them, which
    /// `shared` records).
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel PolygonSeeds(
        launch,
        new_next: In<u32>,
        seeds: In<u32>,
        n: u32,
        polygons: InOut<u32>,
        ids: InOut<u32>,
        shared: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let h = seeds.get(start + k);
            let mark = h.wrapping_add(1);
            let (mut least, mut e) = (h, h);
            loop {
                ids.set(e, mark);
                least = least.min(e);
                e = new_next.get(e);
                if e == h {
                    break;
                }
            }
            let bit = 1 << (least % 32);
            if polygons.fetch_or(least / 32, bit) & bit != 0 {
                shared.set_bit(least);
            }
        });
    }
}

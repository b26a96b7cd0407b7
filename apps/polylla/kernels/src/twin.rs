//! The twins of the half-edges, found on the device from their origins
//! (so that only the border half-edges' twins cross the bus, issue 55):
//! the interior half-edges out of each vertex by count, scan and fill
//! ([`CountOut`], the backend's exclusive scan, [`FillOut`]), then each
//! interior half-edge from `a` to `b` finds the one from `b` to `a` among
//! those out of `b` ([`Twins`]; none on the boundary), and the border
//! half-edges and their twins name each other ([`BorderTwins`]). In a
//! triangulation each directed edge is one half-edge's, so the twins are
//! those of the host's structure whatever order the fill took.

use cavity_device::array::{BOUNDS, In, InOut, chunk};

/// No half-edge (the host's `halfedge::NONE`).
pub const NONE: u32 = u32::MAX;

/// The interior half-edge after `h` around its triangle.
#[inline(always)]
fn next(h: u32) -> u32 {
    if h % 3 == 2 { h - 2 } else { h + 1 }
}

cavity_device::kernel! {
    /// Adds one to `counts[v]` for each of the first `interior` half-edges
    /// out of vertex `v` (`origin`); one block per chunk of half-edges.
    ///
    /// # Safety
    /// Checked: `origin` is only read, `counts` counted atomically.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel CountOut(launch, origin: In<u32>, interior: u32, counts: InOut<u32>) {
        let (start, end) = chunk(launch.block_idx, interior);
        launch.block.for_each(end - start, |k| {
            counts.fetch_add(origin.get(start + k), 1);
        });
    }
}

cavity_device::kernel! {
    /// Writes each of the first `interior` half-edges into the row of its
    /// origin in `out` (rows from `offsets`, the exclusive scan of
    /// [`CountOut`]'s counts), at the place `cursor` (zero at the start)
    /// hands out; one block per chunk of half-edges.
    ///
    /// # Safety
    /// Checked: `origin` and `offsets` are only read; `cursor` and `out`
    /// are written atomically.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel FillOut(
        launch,
        origin: In<u32>,
        interior: u32,
        offsets: In<u32>,
        cursor: InOut<u32>,
        out: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, interior);
        launch.block.for_each(end - start, |k| {
            let h = start + k;
            let v = origin.get(h);
            out.set(offsets.get(v).wrapping_add(cursor.fetch_add(v, 1)), h);
        });
    }
}

cavity_device::kernel! {
    /// Writes in `twin[h]`, for each of the first `interior` half-edges
    /// `h` (from `a` to `b`, the origin of the next), the half-edge from
    /// `b` to `a` among those out of `b` (rows `offsets`, `out` of
    /// [`FillOut`]), or [`NONE`] when no triangle has it (a boundary
    /// edge); one block per chunk of half-edges.
    ///
    /// # Safety
    /// Checked: the inputs are only read; one thread writes each word of
    /// `twin`, named by its index.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel Twins(
        launch,
        origin: In<u32>,
        interior: u32,
        offsets: In<u32>,
        out: In<u32>,
        twin: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, interior);
        launch.block.for_each(end - start, |k| {
            let h = start + k;
            let (a, b) = (origin.get(h), origin.get(next(h)));
            let mut found = NONE;
            for i in offsets.get(b)..offsets.get(b.wrapping_add(1)) {
                let g = out.get(i);
                if origin.get(next(g)) == a {
                    found = g;
                    break;
                }
            }
            twin.set(h, found);
        });
    }
}

cavity_device::kernel! {
    /// Writes, for each border half-edge `interior + k` of the `border`,
    /// its twin `border_twin[k]` (an interior half-edge) and the twin's
    /// twin (the border half-edge) into `twin`; after [`Twins`], which
    /// left those interior half-edges [`NONE`].
    ///
    /// # Safety
    /// Checked: `border_twin` is only read; the twins' words, named by its
    /// contents, are written atomically.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel BorderTwins(
        launch,
        border_twin: In<u32>,
        interior: u32,
        border: u32,
        twin: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, border);
        launch.block.for_each(end - start, |k| {
            let g = interior.wrapping_add(start + k);
            let t = border_twin.get(start + k);
            twin.set(g, t);
            twin.set(t, g);
        });
    }
}

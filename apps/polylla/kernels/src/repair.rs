//! The repair, done before the polygons are linked (GPolylla's
//! Algorithm 11): at each barrier tip (a vertex of one frontier edge) the
//! middle edge of its star becomes a frontier edge and both its
//! half-edges seeds.

use cavity_device::array::{BOUNDS, In, InOut, Ins, chunk};
use cavity_device::block::SharedArena;

use crate::label::one_end;
use crate::{EXTRA_SHIFT, Mesh};

/// Shared-memory bytes of [`BarrierTips`] (its block's count of tips).
pub fn shared_bytes() -> usize {
    let mut arena = SharedArena::measuring();
    arena.alloc::<u32>(1);
    arena.used()
}

cavity_device::kernel! {
    /// For each of the `counts[1]` vertices that `ends` counts one
    /// frontier edge at (a barrier tip): turns clockwise (`next(twin(h))`)
    /// around it from `edge_of_vertex` to find its frontier half-edge (by
    /// `labels`) and its degree, and marks the `degree / 2`-th half-edge
    /// out of it clockwise from the frontier one, and its twin, in the
    /// extra bits of their triangles' bytes in `extra` (the bytes of
    /// [`crate::LongestEdges`], from bit [`EXTRA_SHIFT`]); adds the tips to
    /// `repaired[0]`. `mesh` holds `twin`, the border half-edges' `next`
    /// and `prev`; `star` `edge_of_vertex`, `labels` and `ends`;
    /// `counts[0]` is the interior half-edges. Dynamic shared memory:
    /// [`shared_bytes`].
    ///
    /// # Safety
    /// Checked: the inputs are only read; the marks are atomic ORs, the
    /// tips an atomic add.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel BarrierTips(
        launch,
        mesh: Ins<u32, 3>,
        counts: [u32; 2],
        star: Ins<u32, 3>,
        extra: InOut<u32>,
        repaired: InOut<u32>,
    ) {
        let [interior, vertices] = counts;
        let block = launch.block;
        let tips = launch.arena.alloc::<u32>(1);
        launch.arena.check();
        let m = Mesh::new(*mesh, interior);
        let [edge_of_vertex, labels, ends] = *star;
        if block.thread_idx() == 0 {
            tips.set(0, 0);
        }
        block.sync();
        let (start, end) = chunk(launch.block_idx, vertices);
        block.for_each(end - start, |k| {
            let v = start + k;
            let first = edge_of_vertex.get(v);
            if !one_end(ends, v) || first == u32::MAX {
                return;
            }
            let (mut h, mut degree, mut tip) = (first, 0u32, first);
            loop {
                if m.frontier(labels, h) {
                    tip = h;
                }
                degree = degree.wrapping_add(1);
                h = m.cw(h);
                if h == first {
                    break;
                }
            }
            let mut middle = tip;
            for _ in 0..degree / 2 {
                middle = m.cw(middle);
            }
            // A tip is an inner vertex (a boundary vertex has two
            // frontier edges on the boundary), so both half-edges of its
            // middle edge are interior ones.
            for x in [middle, m.twin(middle)] {
                if x < interior {
                    extra.or_byte(x / 3, 1 << (EXTRA_SHIFT + x % 3));
                }
            }
            block.shared_fetch_add(tips, 0, 1);
        });
        block.sync();
        if block.thread_idx() == 0 && tips.get(0) > 0 {
            repaired.fetch_add(0, tips.get(0));
        }
    }
}

cavity_device::kernel! {
    /// Adds the tips' new frontier half-edges (the extra bits of `extra`)
    /// to the frontier and seed bits of `labels`, over `words` words (four
    /// triangles' bytes each).
    ///
    /// # Safety
    /// Checked: `extra` is only read; one thread reads and writes each
    /// word of `labels`, named by its index.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel MergeExtra(launch, extra: In<u32>, labels: InOut<u32>, words: u32) {
        let (start, end) = chunk(launch.block_idx, words);
        launch.block.for_each(end - start, |k| {
            let w = start + k;
            let new = extra.get(w) >> EXTRA_SHIFT & 0x0707_0707;
            // SAFETY: one thread reads and writes each word.
            unsafe { labels.set_unshared(w, labels.get_unshared(w) | new | new << 3) };
        });
    }
}

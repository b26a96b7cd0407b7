//! The repair, done before the polygons are linked (GPolylla's
//! Algorithm 11): at each barrier tip (a vertex of one frontier edge) the
//! middle edge of its star becomes a frontier edge and both its
//! half-edges seeds.

use cavity_arrays_kernels::{BOUNDS, arrays, chunk};
use cavity_device::block::SharedArena;

use crate::label::one_end;
use crate::{EXTRA_SHIFT, connectivity};

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
    /// `repaired[0]`. `mesh` holds the addresses of `twin`, the border
    /// half-edges' `next` and `prev`; `star` those of `edge_of_vertex`,
    /// `labels` and `ends`; `counts[0]` is the interior half-edges.
    ///
    /// # Safety
    /// The arrays describe a half-edge triangulation; `labels` and `extra`
    /// hold a byte per triangle, `ends` two bits per vertex, `repaired`
    /// one word; dynamic shared memory is [`shared_bytes`].
    #[launch_bounds = BOUNDS]
    pub kernel BarrierTips(launch, mesh: [u64; 3], counts: [u32; 2], star: [u64; 3], extra: u64, repaired: u64) {
        let [interior, vertices] = counts;
        let block = launch.block;
        let tips = launch.arena.alloc::<u32>(1);
        launch.arena.check();
        // SAFETY: the kernel's contract.
        let m = unsafe { connectivity(mesh, interior) };
        // SAFETY: as above.
        let [edge_of_vertex, labels, ends] = unsafe { arrays(star) };
        // SAFETY: as above.
        let [extra, repaired] = unsafe { arrays([extra, repaired]) };
        if block.thread_idx() == 0 {
            tips.set(0, 0);
        }
        block.sync();
        let (start, end) = chunk(launch.block_idx, vertices);
        block.for_each(end - start, |k| {
            let v = start + k;
            // SAFETY: read only inputs; the marks are atomic ORs.
            unsafe {
                let first = edge_of_vertex.load_unshared(v);
                if !one_end(ends, v) || first == u32::MAX {
                    return;
                }
                let (mut h, mut degree, mut tip) = (first, 0, first);
                loop {
                    if m.frontier(labels, h) {
                        tip = h;
                    }
                    degree += 1;
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
                // frontier edges on the boundary), so both half-edges of
                // its middle edge are interior ones.
                for x in [middle, m.twin(middle)] {
                    if x < interior {
                        extra.or_byte(x / 3, 1 << (EXTRA_SHIFT + x % 3));
                    }
                }
                block.shared_fetch_add(tips, 0, 1);
            }
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
    /// Both arrays hold `words` words.
    #[launch_bounds = BOUNDS]
    pub kernel MergeExtra(launch, extra: u64, labels: u64, words: u32) {
        // SAFETY: the kernel's contract.
        let [extra, labels] = unsafe { arrays([extra, labels]) };
        let (start, end) = chunk(launch.block_idx, words);
        launch.block.for_each(end - start, |k| {
            let w = start + k;
            // SAFETY: one thread reads and writes each word.
            unsafe {
                let new = extra.load_unshared(w) >> EXTRA_SHIFT & 0x0707_0707;
                labels.store_unshared(w, labels.load_unshared(w) | new | new << 3);
            }
        });
    }
}

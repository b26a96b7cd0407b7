//! Boundary extraction and Laplacian smoothing of inner vertices (the
//! paper's section 4.2). The boundary is the boundary of the sum of all
//! cells: face `f` lies on it when the signs of the cells that use it (its
//! row of `d3 = ∂3ᵀ`) do not cancel, oriented by their sum's sign (one
//! cell in a manifold mesh; a face used twice the same way by two cells
//! of a non-manifold mesh is on it too). Its edges and their vertices are
//! marked by further passes, and each set is compacted by a scan; the
//! boundary faces' outward loops are gathered by a count, a scan and a
//! fill ([`LoopLengths`], [`SignedLoops`]).

use cavity_device::array::{In, InOut, Ins};

use crate::signed::{index, is_negative, sign};
use crate::{BOUNDS, chunk};

cavity_device::kernel! {
    /// For each of the `faces` rows of `d3` (`offsets`, `entries`): `keep`
    /// 1 when the signs of its cells do not cancel (0 otherwise), and
    /// `minus` 1 when their sum is negative. `keep` has one more word,
    /// left 0 (the scan's total goes there).
    ///
    /// # Safety
    /// Checked: the inputs are only read; one thread writes each face's
    /// words, named by its index.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel MarkBoundaryFaces(
        launch,
        offsets: In<u32>,
        entries: In<u32>,
        faces: u32,
        keep: InOut<u32>,
        minus: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, faces);
        launch.block.for_each(end - start, |k| {
            let f = start + k;
            let mut sum = 0i32;
            for i in offsets.get(f)..offsets.get(f + 1) {
                sum = sum.wrapping_add(sign(entries.get(i)));
            }
            // SAFETY: one thread writes each face's words.
            unsafe {
                keep.set_unshared(f, u32::from(sum != 0));
                minus.set_unshared(f, u32::from(sum < 0));
            }
        });
    }
}

cavity_device::kernel! {
    /// Sets `keep[e] = 1` for every edge `e` of each of the `count` faces
    /// listed in `faces` (signed) through ∂2 (`offsets`, `entries`).
    ///
    /// # Safety
    /// Checked: the inputs are only read, `keep` written atomically.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel MarkFaceEdges(
        launch,
        faces: In<u32>,
        count: u32,
        offsets: In<u32>,
        entries: In<u32>,
        keep: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, count);
        launch.block.for_each(end - start, |k| {
            let f = index(faces.get(start + k));
            for i in offsets.get(f)..offsets.get(f + 1) {
                keep.set(index(entries.get(i)), 1);
            }
        });
    }
}

cavity_device::kernel! {
    /// Sets `keep[v] = 1` for both vertices of each of the `count` edges
    /// listed in `list` (`edges`: each edge's two vertices).
    ///
    /// # Safety
    /// Checked: the inputs are only read, `keep` written atomically.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel MarkEdgeVertices(launch, list: In<u32>, count: u32, edges: In<u32>, keep: InOut<u32>) {
        let (start, end) = chunk(launch.block_idx, count);
        launch.block.for_each(end - start, |k| {
            let e = index(list.get(start + k));
            keep.set(edges.get(2 * e), 1);
            keep.set(edges.get((2 * e).wrapping_add(1)), 1);
        });
    }
}

cavity_device::kernel! {
    /// Sets `marks[x] = 1` for each of the `count` elements `x` listed in
    /// `list`.
    ///
    /// # Safety
    /// Checked: `list` is only read, `marks` written atomically.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel MarkListed(launch, list: In<u32>, count: u32, marks: InOut<u32>) {
        let (start, end) = chunk(launch.block_idx, count);
        launch.block.for_each(end - start, |k| marks.set(list.get(start + k), 1));
    }
}

cavity_device::kernel! {
    /// The lengths of the `count` listed faces' loops (`list`, signed
    /// faces; their rows of ∂2, `offsets`) into `lengths`, which has one
    /// more word, left 0 (the scan's total goes there).
    ///
    /// # Safety
    /// Checked: the inputs are only read; one thread writes each listed
    /// face's word.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel LoopLengths(
        launch,
        list: In<u32>,
        count: u32,
        offsets: In<u32>,
        lengths: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, count);
        launch.block.for_each(end - start, |k| {
            let f = index(list.get(start + k));
            lengths.set(start + k, offsets.get(f + 1).wrapping_sub(offsets.get(f)));
        });
    }
}

cavity_device::kernel! {
    /// The vertex loops of the `count` listed faces (`list`, signed) into
    /// `loops` from `starts` (the scan of [`LoopLengths`]): the tail of
    /// each signed edge of the face's row of ∂2 (`offsets`, `entries`; the
    /// edges' pairs `edges`, two words each), in the row's order, reversed
    /// where the face's sign is -1 (so that a boundary face faces out).
    ///
    /// # Safety
    /// Checked: the inputs are only read; one thread writes each listed
    /// face's loop.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel SignedLoops(
        launch,
        list: In<u32>,
        count: u32,
        d2: Ins<u32, 3>,
        starts: In<u32>,
        loops: InOut<u32>,
    ) {
        let [offsets, entries, edges] = *d2;
        let (start, end) = chunk(launch.block_idx, count);
        launch.block.for_each(end - start, |k| {
            let signed = list.get(start + k);
            let f = index(signed);
            let (a, b) = (offsets.get(f), offsets.get(f + 1));
            let len = b.wrapping_sub(a);
            let out = starts.get(start + k);
            for i in 0..len {
                let e = entries.get(a + i);
                let tail = edges.get((2 * index(e)).wrapping_add(u32::from(is_negative(e))));
                let at = if is_negative(signed) { len - 1 - i } else { i };
                loops.set(out.wrapping_add(at), tail);
            }
        });
    }
}

cavity_device::kernel! {
    /// One Laplacian smoothing step: each of the `vertices` vertices not
    /// marked in `fixed` moves to the average of its neighbours through
    /// its edges (its row of `d1 = ∂1ᵀ`, `offsets` and `entries`; the
    /// other end of edge `e` is `edges[2e + 1]` where the vertex is the
    /// tail, `edges[2e]` where it is the head); the others, and a vertex
    /// without edges, keep their position. Positions are three `f32` words
    /// per vertex, read from `from` and written to `to`.
    ///
    /// # Safety
    /// Checked: the inputs are only read; one thread writes each vertex of
    /// `to`, named by its index.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel SmoothInner(
        launch,
        offsets: In<u32>,
        entries: In<u32>,
        vertices: u32,
        edges: In<u32>,
        fixed: In<u32>,
        from: In<f32>,
        to: InOut<f32>,
    ) {
        // Three words a vertex of `to` without wrapping: one thread per
        // vertex writes its own.
        assert!(vertices <= to.len() / 3, "`to` holds three words per vertex");
        let (start, end) = chunk(launch.block_idx, vertices);
        launch.block.for_each(end - start, |k| {
            let v = start + k;
            let at = |w: u32, c: u32| from.get((3 * w).wrapping_add(c));
            let (a, b) = (offsets.get(v), offsets.get(v + 1));
            let mut p = [at(v, 0), at(v, 1), at(v, 2)];
            if fixed.get(v) == 0 && b > a {
                let mut sum = [0.0f32; 3];
                for i in a..b {
                    let e = entries.get(i);
                    // The vertex is the tail of a negative entry.
                    let other = edges.get((2 * index(e)).wrapping_add(u32::from(is_negative(e))));
                    for (c, s) in sum.iter_mut().enumerate() {
                        *s += at(other, c as u32);
                    }
                }
                p = sum.map(|s| s / (b - a) as f32);
            }
            for (c, x) in p.into_iter().enumerate() {
                // SAFETY: one thread writes each vertex's words.
                unsafe { to.set_unshared(3 * v + c as u32, x) };
            }
        });
    }
}

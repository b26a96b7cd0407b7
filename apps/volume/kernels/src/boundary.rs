//! Boundary extraction and Laplacian smoothing of inner vertices (the
//! paper's section 4.2). The boundary is the boundary of the sum of all
//! cells: face `f` lies on it when the signs of the cells that use it (its
//! row of `d3 = ∂3ᵀ`) do not cancel, oriented by their sum's sign (one
//! cell in a manifold mesh; a face used twice the same way by two cells
//! of a non-manifold mesh is on it too). Its edges and their vertices are
//! marked by further passes, and each set is compacted by a scan.

use crate::signed::{index, is_negative, sign};
use crate::{BOUNDS, arrays, chunk};

cavity_device::kernel! {
    /// For each of the `faces` rows of `d3` (`offsets`, `entries`): `keep`
    /// 1 when the signs of its cells do not cancel (0 otherwise), and
    /// `minus` 1 when their sum is negative. `keep` has one more word,
    /// left 0 (the scan's total goes there).
    ///
    /// # Safety
    /// `offsets` holds `faces + 1` words delimiting `entries`; `keep` and
    /// `minus` hold `faces` words.
    #[launch_bounds = BOUNDS]
    pub kernel MarkBoundaryFaces(launch, offsets: u64, entries: u64, faces: u32, keep: u64, minus: u64) {
        // SAFETY: the kernel's contract.
        let [offsets, entries, keep, minus] = unsafe { arrays([offsets, entries, keep, minus]) };
        let (start, end) = chunk(launch.block_idx, faces);
        launch.block.for_each(end - start, |k| {
            let f = start + k;
            // SAFETY: read only inputs; one thread writes each face's words.
            unsafe {
                let mut sum = 0i32;
                for i in offsets.load_unshared(f)..offsets.load_unshared(f + 1) {
                    sum += sign(entries.load_unshared(i));
                }
                keep.store_unshared(f, u32::from(sum != 0));
                minus.store_unshared(f, u32::from(sum < 0));
            }
        });
    }
}

cavity_device::kernel! {
    /// Sets `keep[e] = 1` for every edge `e` of each of the `count` faces
    /// listed in `faces` (signed) through ∂2 (`offsets`, `entries`).
    ///
    /// # Safety
    /// The faces are rows of ∂2, whose edges are below the length of
    /// `keep`.
    #[launch_bounds = BOUNDS]
    pub kernel MarkFaceEdges(launch, faces: u64, count: u32, offsets: u64, entries: u64, keep: u64) {
        // SAFETY: the kernel's contract.
        let [faces, offsets, entries, keep] = unsafe { arrays([faces, offsets, entries, keep]) };
        let (start, end) = chunk(launch.block_idx, count);
        launch.block.for_each(end - start, |k| {
            // SAFETY: read only inputs; every store writes the same 1.
            unsafe {
                let f = index(faces.load_unshared(start + k));
                for i in offsets.load_unshared(f)..offsets.load_unshared(f + 1) {
                    keep.store_unshared(index(entries.load_unshared(i)), 1);
                }
            }
        });
    }
}

cavity_device::kernel! {
    /// Sets `keep[v] = 1` for both vertices of each of the `count` edges
    /// listed in `list` (`edges`: each edge's two vertices).
    ///
    /// # Safety
    /// The listed edges are in `edges`, whose vertices are below the
    /// length of `keep`.
    #[launch_bounds = BOUNDS]
    pub kernel MarkEdgeVertices(launch, list: u64, count: u32, edges: u64, keep: u64) {
        // SAFETY: the kernel's contract.
        let [list, edges, keep] = unsafe { arrays([list, edges, keep]) };
        let (start, end) = chunk(launch.block_idx, count);
        launch.block.for_each(end - start, |k| {
            // SAFETY: read only inputs; every store writes the same 1.
            unsafe {
                let e = index(list.load_unshared(start + k));
                keep.store_unshared(edges.load_unshared(2 * e), 1);
                keep.store_unshared(edges.load_unshared(2 * e + 1), 1);
            }
        });
    }
}

cavity_device::kernel! {
    /// Sets `marks[x] = 1` for each of the `count` elements `x` listed in
    /// `list`.
    ///
    /// # Safety
    /// The listed elements are below the length of `marks`.
    #[launch_bounds = BOUNDS]
    pub kernel MarkListed(launch, list: u64, count: u32, marks: u64) {
        // SAFETY: the kernel's contract.
        let [list, marks] = unsafe { arrays([list, marks]) };
        let (start, end) = chunk(launch.block_idx, count);
        launch.block.for_each(end - start, |k| {
            // SAFETY: read only input; every store writes the same 1.
            unsafe { marks.store_unshared(list.load_unshared(start + k), 1) };
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
    /// `offsets` holds `vertices + 1` words delimiting `entries`, whose
    /// edges are in `edges`; `fixed` holds `vertices` words, `from` and
    /// `to` three per vertex.
    #[launch_bounds = BOUNDS]
    pub kernel SmoothInner(
        launch,
        offsets: u64,
        entries: u64,
        vertices: u32,
        edges: u64,
        fixed: u64,
        from: u64,
        to: u64,
    ) {
        // SAFETY: the kernel's contract.
        let [offsets, entries, edges, fixed, from, to] =
            unsafe { arrays([offsets, entries, edges, fixed, from, to]) };
        let (start, end) = chunk(launch.block_idx, vertices);
        launch.block.for_each(end - start, |k| {
            let v = start + k;
            // SAFETY: read only inputs; one thread writes each vertex of `to`.
            unsafe {
                let at = |w: u32, c: u32| f32::from_bits(from.load_unshared(3 * w + c));
                let (a, b) = (offsets.load_unshared(v), offsets.load_unshared(v + 1));
                let mut p = [at(v, 0), at(v, 1), at(v, 2)];
                if fixed.load_unshared(v) == 0 && b > a {
                    let mut sum = [0.0f32; 3];
                    for i in a..b {
                        let e = entries.load_unshared(i);
                        // The vertex is the tail of a negative entry.
                        let other = edges.load_unshared(2 * index(e) + u32::from(is_negative(e)));
                        for (c, s) in sum.iter_mut().enumerate() {
                            *s += at(other, c as u32);
                        }
                    }
                    p = sum.map(|s| s / (b - a) as f32);
                }
                for (c, x) in p.into_iter().enumerate() {
                    to.store_unshared(3 * v + c as u32, x.to_bits());
                }
            }
        });
    }
}

//! The polygons' vertex lists, gathered on the device for the writers:
//! each polygon's size by a walk from its seed ([`PolygonSizes`]), their
//! exclusive scan (the lists' offsets, by the backend's scan), and each
//! polygon's vertices written at its offset by a second walk
//! ([`PolygonVertices`]); so that the host reads the lists alone rather
//! than the polygons' links.

use cavity_device::array::{BOUNDS, In, InOut, chunk};

cavity_device::kernel! {
    /// Writes in `sizes[k]` the number of half-edges of polygon `k` of
    /// the `n` in `list` (its seed), walking `new_next` from the seed
    /// back to it.
    ///
    /// # Safety
    /// Checked: the inputs are only read; one thread writes each word of
    /// `sizes`, named by its index.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel PolygonSizes(launch, new_next: In<u32>, list: In<u32>, n: u32, sizes: InOut<u32>) {
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let h = list.get(start + k);
            let (mut e, mut size) = (h, 0u32);
            loop {
                size = size.wrapping_add(1);
                e = new_next.get(e);
                if e == h {
                    break;
                }
            }
            sizes.set(start + k, size);
        });
    }
}

cavity_device::kernel! {
    /// Writes the vertices of polygon `k` of the `n` in `list` (the
    /// `origin` of each of its half-edges, from its seed along
    /// `new_next`) into `vertices` from `offsets[k]` on.
    ///
    /// # Safety
    /// Checked: the inputs are only read; the vertices are atomic stores
    /// at places named by `offsets` (polygons that do not close where
    /// their sizes said may overwrite each other's, never outside
    /// `vertices`).
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel PolygonVertices(
        launch,
        new_next: In<u32>,
        origin: In<u32>,
        list: In<u32>,
        offsets: In<u32>,
        n: u32,
        vertices: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let h = list.get(start + k);
            let (mut e, mut at) = (h, offsets.get(start + k));
            loop {
                vertices.set(at, origin.get(e));
                at = at.wrapping_add(1);
                e = new_next.get(e);
                if e == h {
                    break;
                }
            }
        });
    }
}

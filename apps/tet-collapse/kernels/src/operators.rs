//! The tetrahedra of a volumetric mesh made on the device from its
//! cell-vertex relation ([`OrientCells`]), so that a mesh kept there as
//! ternary operators (`cavity_volume::ResidentMesh`) is collapsed without
//! leaving it. The collapsed mesh's operators are built back by the
//! volumetric structure's build (`cavity_volume::ResidentMesh::from_tetrahedra`).

use cavity_device::array::{In, InOut, Ins};

use crate::chunk;
use crate::geometry::signed_volume;

cavity_device::kernel! {
    @core
    /// The tetrahedra of a mesh's cell-vertex relation (`[offsets,
    /// entries]`, each of the `cells` rows four vertices, ascending) at
    /// `positions` (three words per vertex): each row into `tets` as a
    /// positively oriented tetrahedron, its first two vertices swapped
    /// where the row's signed volume is negative. `problems[0]` gets one
    /// plus the last cell whose row is not four vertices, `problems[1]`
    /// one plus the last whose volume is zero (atomic maxima; zero when
    /// none is).
    ///
    /// # Safety
    /// Checked: the inputs are only read; each cell writes its own words,
    /// the problems atomically.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel OrientCells(
        launch,
        relation: Ins<u32, 2>,
        positions: In<f32>,
        cells: u32,
        tets: InOut<u32>,
        problems: InOut<u32>,
    ) {
        let [offsets, entries] = *relation;
        let position = |v: u32| {
            let b = 3 * v;
            [
                f64::from(positions.get(b)),
                f64::from(positions.get(b + 1)),
                f64::from(positions.get(b + 2)),
            ]
        };
        let (start, end) = chunk(launch.block_idx, cells);
        launch.block.for_each(end - start, |k| {
            let c = start + k;
            let (first, next) = (offsets.get(c), offsets.get(c + 1));
            if next.wrapping_sub(first) != 4 {
                problems.fetch_max(0, c + 1);
                return;
            }
            let mut t = [
                entries.get(first),
                entries.get(first + 1),
                entries.get(first + 2),
                entries.get(first + 3),
            ];
            let volume = signed_volume(position(t[0]), position(t[1]), position(t[2]), position(t[3]));
            if volume < 0.0 {
                t.swap(0, 1);
            } else if volume.partial_cmp(&0.0) != Some(core::cmp::Ordering::Greater) {
                problems.fetch_max(1, c + 1);
            }
            for (i, v) in (0..).zip(t) {
                tets.set(4 * c + i, v);
            }
        });
    }
}

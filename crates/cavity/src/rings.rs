//! The host side of the higher-order queries (RXMesh section 6.2;
//! `cavity_device::dynamic::ring`): the rings' scratch, how many blocks a
//! launch takes, and the launch again with more room when a ring did not
//! fit.
//!
//! A ring kernel loops over the patches (block `b` takes patches `b`,
//! `b + grid`, ...) and keeps its rings in a scratch region per block, so
//! the scratch is `grid × cap.vertices × capacity` words: [`RingRoom`]
//! starts each ring at [`RingRoom::START`] entries and takes as many blocks
//! as [`RingRoom::BUDGET_WORDS`] allows (at most the patches, and at most
//! what the device runs at once); a launch whose overflow word is set runs
//! again with twice the entries per ring, up to [`RingRoom::MAX`]. The
//! room found is kept for the next launch on the same mesh.

use cavity_device::dynamic::layout::Capacity;
use cavity_device::dynamic::ring::{RingKernels, ring_status};

use crate::rounds::{Rounds, RunError};

/// The entries per ring the rings' launches use, grown as needed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingRoom {
    capacity: u32,
}

impl Default for RingRoom {
    fn default() -> Self {
        RingRoom {
            capacity: RingRoom::START,
        }
    }
}

impl RingRoom {
    /// Entries per ring at first (the center included): a 4-ring of a
    /// regular triangulation has 61 vertices, a 2-ring 19.
    pub const START: u32 = 32;
    /// The most entries per ring (the center included).
    pub const MAX: u32 = 1 << 16;
    /// The scratch's words at most (1 GiB), unless one block needs more.
    pub const BUDGET_WORDS: u64 = 1 << 28;

    /// Entries per ring.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Blocks of a launch over `patches` patches of capacity `cap`, the
    /// device running `parallel` blocks at once.
    pub fn grid(&self, cap: &Capacity, patches: u32, parallel: u32) -> u32 {
        let per_block = u64::from(cap.vertices) * u64::from(self.capacity);
        let budget = (Self::BUDGET_WORDS / per_block.max(1)).min(u64::from(u32::MAX)) as u32;
        patches.min(parallel).min(budget).max(1)
    }

    /// Runs `launch` with the current room until no ring overflows
    /// (`launch` returns its status word, `ring_status`), doubling the
    /// capacity after each overflow.
    ///
    /// # Errors
    /// `launch`'s; [`RunError::Fatal`] when a ring needs more than
    /// [`RingRoom::MAX`] entries, or reached a vertex whose owner the
    /// ribbon does not name.
    pub fn run<T>(
        &mut self,
        mut launch: impl FnMut(RingRoom) -> Result<(T, u32), RunError>,
    ) -> Result<T, RunError> {
        loop {
            let (out, status) = launch(*self)?;
            match status {
                0 => return Ok(out),
                ring_status::OVERFLOW if self.capacity < Self::MAX => self.capacity *= 2,
                ring_status::OVERFLOW => {
                    return Err(RunError::Fatal(
                        "a vertex's ring holds 65536 vertices or more: ask for fewer hops or a smaller neighbourhood",
                        &[],
                    ));
                }
                _ => {
                    return Err(RunError::Fatal(
                        "a ring reached a vertex whose owner its patch does not name (an invalid mesh: see DynamicMesh::validate)",
                        &[],
                    ));
                }
            }
        }
    }
}

/// A backend's run of ring computation `C`
/// (`cavity_device::dynamic::ring`) on the mesh it holds, between rounds:
/// the programming model's `for_each` with a higher-order query.
pub trait ForEachRing<C: RingKernels>: Rounds {
    /// Runs `c` on every owned active vertex with its ring, after the
    /// rings of all of them are complete in the launch (the scratch grown
    /// and the launch repeated while a ring does not fit; the GPU waits
    /// for the launch to learn that). A computation that reads what it
    /// writes would see a repeated launch's writes: write attributes `c`
    /// does not read.
    ///
    /// # Errors
    /// A kernel that cannot be loaded (its kernel crate's PTX was not
    /// added with `Backend::add_kernels`), a failed launch, or a ring of
    /// more than [`RingRoom::MAX`] vertices.
    fn for_each_ring(&mut self, c: &C) -> Result<(), RunError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_stays_within_the_budget_and_the_patches() {
        let cap = Capacity {
            vertices: 512,
            ..Capacity::default()
        };
        let room = RingRoom::default();
        assert_eq!(room.grid(&cap, 10, 1000), 10);
        assert_eq!(room.grid(&cap, 100_000, 64), 64);
        let budget = (RingRoom::BUDGET_WORDS / (512 * 32)) as u32;
        assert_eq!(room.grid(&cap, 1 << 30, u32::MAX), budget);
        assert_eq!(room.grid(&cap, 0, 8), 1);
    }

    #[test]
    fn overflows_double_the_room_up_to_the_limit() {
        let mut room = RingRoom::default();
        let mut seen = Vec::new();
        let out = room.run(|r| {
            let c = r.capacity();
            seen.push(c);
            Ok((c, u32::from(c < 128)))
        });
        assert_eq!(out.unwrap(), 128);
        assert_eq!(seen, [32, 64, 128]);
        assert_eq!(room.capacity(), 128);
        let err = room.run(|_| Ok(((), ring_status::OVERFLOW))).unwrap_err();
        assert!(err.to_string().contains("65536"), "{err}");
        let err = RingRoom::default()
            .run(|_| Ok(((), ring_status::NO_OWNER)))
            .unwrap_err();
        assert!(err.to_string().contains("owner"), "{err}");
    }
}

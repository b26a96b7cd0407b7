//! Read-only views of the ribbon hash tables: [`Frozen`], one table in
//! place, and [`Tables`], a copy of all of them as cells.

use std::cell::Cell;

use cavity_device::dynamic::hash::Slots;
use cavity_device::dynamic::layout::{Capacity, HASH_OVERFLOW};
use cavity_device::layout::Kind;

use super::DynamicMesh;

/// A ribbon hash table read in place: lookups only (the device crate's
/// cuckoo functions take any [`Slots`]), from any number of threads.
pub(super) struct Frozen<'a>(pub(super) &'a [u32]);

impl Slots for Frozen<'_> {
    fn slots(&self) -> u32 {
        self.0.len() as u32 - HASH_OVERFLOW
    }

    fn get(&self, i: u32) -> u32 {
        self.0[i as usize]
    }

    fn set(&self, _: u32, _: u32) {
        unreachable!("a frozen ribbon table is only read")
    }

    fn exchange(&self, _: u32, _: u32) -> u32 {
        unreachable!("a frozen ribbon table is only read")
    }

    fn compare_exchange(&self, _: u32, _: u32, _: u32) -> bool {
        unreachable!("a frozen ribbon table is only read")
    }
}

/// A copy of all ribbon hash tables as cells, for lookups through the
/// device crate's cuckoo functions (implemented for cells) without a
/// mutable borrow of the mesh.
pub(super) struct Tables {
    cells: Vec<Cell<u32>>,
    cap: Capacity,
}

impl Tables {
    pub(super) fn new(mesh: &DynamicMesh) -> Tables {
        Tables {
            cells: mesh.hash.iter().map(|&w| Cell::new(w)).collect(),
            cap: mesh.cap,
        }
    }

    /// The table of `kind` in patch `p`.
    pub(super) fn of(&self, p: u32, kind: Kind) -> &[Cell<u32>] {
        let cap = &self.cap;
        &self.cells[(cap.hash_stride() * p + cap.table_offset(kind)) as usize..]
            [..cap.table_words(kind) as usize]
    }
}

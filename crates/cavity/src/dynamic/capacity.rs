//! Growth room of the dynamic layout: the capacity factors, the fewest
//! spare patch slots, and the element slots of one kind.

use crate::settings::Setting;

use super::DynamicError;

/// Fewest slots per kind: room for the one-rings a small patch takes in
/// when it expands over its neighbours (patches of a few faces would
/// otherwise have no room to grow).
const MIN_SLOTS: u64 = 256;

/// Growth room of the dynamic layout (dynamic paper, section 5.1: patch
/// capacities fixed up front so that nothing is allocated while kernels
/// run).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CapacityFactors {
    /// Element slots per patch of each kind over the largest static local
    /// count of that kind (the capacity factor, at least 1). It also sizes
    /// the ribbon hash tables.
    pub elements: f32,
    /// Patch slots over the number of static patches (the patch factor, at
    /// least 1): room for patches created by slicing. Above 1, at least
    /// [`MIN_SPARE_PATCH_SLOTS`] slots are spare (small meshes).
    pub patches: f32,
}

/// Fewest spare patch slots when the patch factor is above 1. Small
/// inputs that grow a lot slice the most: remeshing a 192-face cube (one
/// patch) to 0.15 of its mean edge length (7200 faces out, 80 patch slots
/// from the expected growth) ran out of patch slots in 11 of 160 runs with
/// 64 spare slots, none in 200 runs at 0.15 and 0.1 with 256 (CPU backend,
/// 48 workers; test `remesh::a_small_mesh_refined_tenfold_keeps_its_patch_slots`).
/// The floor binds only on inputs of fewer patches than it (at 512 faces
/// per patch, under about 130 k faces at the default factor of 2), and a
/// slot of such a layout takes at most about 55 KB.
pub const MIN_SPARE_PATCH_SLOTS: u64 = 256;

impl Default for CapacityFactors {
    /// Twice the elements and twice the patches.
    fn default() -> Self {
        CapacityFactors {
            elements: 2.0,
            patches: 2.0,
        }
    }
}

impl CapacityFactors {
    /// No spare room: for static work (computations and reductions) on a
    /// mesh whose cavities never change it.
    pub const STATIC: CapacityFactors = CapacityFactors {
        elements: 1.0,
        patches: 1.0,
    };

    /// Checks that both factors are finite and at least 1.
    pub fn check(&self) -> Result<(), DynamicError> {
        for (setting, value) in [
            (Setting::CAPACITY_FACTOR, self.elements),
            (Setting::PATCH_FACTOR, self.patches),
        ] {
            if !value.is_finite() || value < 1.0 {
                return Err(DynamicError::Factor { setting, value });
            }
        }
        Ok(())
    }
}

/// Capacity of one kind: `count × factor`, at least one element, rounded up
/// to a multiple of 32. The product is taken in `f32`, the factor's own
/// precision, so that e.g. 10 × 1.1 is 11, not 12.
pub(super) fn slots(count: u32, factor: f32) -> u64 {
    ((count as f32 * factor).ceil() as u64)
        .max(MIN_SLOTS)
        .next_multiple_of(32)
}

//! The dynamic core (Mahmoud et al. 2024, "Dynamic Mesh Processing on the
//! GPU", sections 3-5): patches with capacity, ribbons in per-patch cuckoo
//! hash tables, patch locks, the queue scheduler, the cavity operator and
//! patch slicing.

pub mod cavity;
pub mod cleanup;
pub mod compute;
pub mod fill;
pub mod gather;
pub mod global;
pub mod hash;
pub mod indexed;
pub mod layout;
pub mod lock;
pub mod migrate;
pub mod patch;
pub mod patch_computation;
pub mod queue;
pub mod reduce;
pub mod ring;
pub mod scheduler;
pub mod slice;
pub mod update;

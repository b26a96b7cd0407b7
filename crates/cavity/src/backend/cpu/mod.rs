//! The CPU backend: the device crate's patch kernels run on the host, one
//! patch per rayon worker, each worker with its own shared-memory buffer
//! ([`cavity_device::block::HostBlock`]): [`backend`] launches kernels and
//! runs the static queries, [`rounds`] the dynamic rounds, whose
//! deterministic schedule picks its patches with [`territories`].

pub mod backend;
pub mod rounds;
pub mod territories;

pub use backend::{CpuBackend, Schedule};
pub use rounds::CpuRounds;

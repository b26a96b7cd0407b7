//! The kernels the benchmarks (`cavity-bench`) run beside the library's:
//! the global-memory baselines of RXMesh section 7 ([`baseline`]) and the
//! query benchmark's neighbour-sum workload ([`neighbor_sum`]). Built to
//! PTX by `cavity-bench`'s build script; the CPU backend runs the same
//! source.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

pub mod baseline;
pub mod neighbor_sum;

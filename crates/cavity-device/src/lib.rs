//! The kernels of cavity, written once against the [`block::Block`]
//! abstraction and compiled twice: to PTX for the GPU (`nvptx64-nvidia-cuda`,
//! see `gpu`) and as a plain rlib for the host, where the CPU backend runs the
//! very same patch kernels one patch per worker thread.
//!
//! Layout and algorithms follow RXMesh (Mahmoud et al. 2021, sections 5-6 and
//! appendices A-C) with the per-patch ribbon handling of the dynamic system
//! (Mahmoud et al. 2024, section 5.1 and appendix A).
#![no_std]
#![feature(core_float_math, stmt_expr_attributes)]
#![cfg_attr(target_arch = "nvptx64", feature(stdarch_nvptx, asm_experimental_arch))]
#![cfg_attr(
    all(target_arch = "nvptx64", feature = "core-entries"),
    feature(abi_ptx)
)]

pub mod array;
pub mod attribute;
pub mod block;
pub mod dynamic;
pub mod export;
pub mod flip;
pub mod geometry;
pub mod kernel;
pub mod layout;
pub mod query;

#[cfg(target_arch = "nvptx64")]
#[doc(hidden)]
pub mod gpu;

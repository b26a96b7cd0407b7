//! The kernels of cavity, written once against the [`block::Block`]
//! abstraction and compiled twice: to PTX for the GPU (`nvptx64-nvidia-cuda`,
//! see `gpu`) and as a plain rlib for the host, where the CPU backend runs the
//! very same patch kernels one patch per worker thread.
//!
//! Layout and algorithms follow RXMesh (Mahmoud et al. 2021, sections 5-6 and
//! appendices A-C) with the per-patch ribbon handling of the dynamic system
//! (Mahmoud et al. 2024, section 5.1 and appendix A).
//!
//! The pieces, by concept:
//!
//! - [`block`]: the block abstraction (thread index, barrier, shared memory,
//!   block-wide for-each and scan, atomics) with its host implementation
//!   [`block::HostBlock`]; `gpu` is the GPU's.
//! - [`layout`] and [`query`]: the static patch (FE, EV, ribbons) and the
//!   eight first-order queries built block-cooperatively in shared memory;
//!   [`export`] writes their rows out.
//! - [`dynamic`]: the dynamic core of the cavity operator: patches with
//!   spare slots, the ribbons' hash tables, patch locks with backoff, the
//!   queue scheduler, cavities (templates, criteria, fill-ins) and the
//!   maximal independent set, expansion, the update round, cleanup and
//!   slicing; the user's side of the model: per-element computations
//!   ([`dynamic::compute`]), ring and patch computations, reductions.
//! - [`patching`]: the face partition into patches on the device (Lloyd
//!   iterations by level-synchronous searches, seed addition, merging);
//!   [`patch_build`]: the patch layout built from a partition (owners,
//!   owned lists, ribbons, stashes, FE and EV) by scans and block sorts;
//!   [`topology`]: the mesh's global connectivity (VF, EV, EF, FE) built
//!   from its faces by counts, scans and fills.
//! - [`array`](mod@array): bounds-checked views of plain arrays, and the device-wide
//!   scan and compaction; [`kernel`](mod@kernel): how a kernel is declared
//!   (`kernel!`, `#[checked]`, launch bounds); [`attribute`]: typed
//!   attributes on elements; [`geometry`] and [`flip`]: shared geometry.
//!
//! The applications are kernel crates of their own written on this
//! public model, each built into its own PTX module: Delaunay edge flips
//! (`apps/delaunay/kernels`), vertex normals (`apps/normals/kernels`),
//! isotropic remeshing (`apps/remesh/kernels`), surface tracking
//! (`apps/track/kernels`), mean curvature flow (`apps/mcf/kernels`),
//! geodesic distance (`apps/geodesic/kernels`), bilateral denoising
//! (`apps/denoise/kernels`), volumetric meshes (`apps/volume/kernels`) and
//! Polylla polygonal meshes (`apps/polylla/kernels`); none lives here.
//!
//! A block-wide exclusive scan on the host block, as a kernel runs it in
//! shared memory:
//!
//! ```
//! use cavity_device::block::{Block, HostBlock, SharedArena, scan_scratch_len};
//!
//! // One block's shared memory: 256 bytes, 16-byte aligned.
//! let mut memory = [0u128; 16];
//! // SAFETY: `memory` is 256 bytes, aligned, and used by this arena only.
//! let mut arena = unsafe { SharedArena::new(memory.as_mut_ptr().cast(), 256) };
//! let block = HostBlock;
//! let data = arena.alloc::<u32>(5);
//! let scratch = arena.alloc::<u32>(scan_scratch_len(block.block_dim()));
//! arena.check();
//! block.for_each(5, |i| data.set(i, i + 1));
//! let total = block.scan(data, 5, scratch, false);
//! assert_eq!(total, 15);
//! let sums: Vec<u32> = (0..5).map(|i| data.get(i)).collect();
//! assert_eq!(sums, [0, 1, 3, 6, 10]);
//! ```
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
pub mod components;
pub mod dynamic;
pub mod export;
pub mod flip;
pub mod geometry;
pub mod kernel;
pub mod layout;
pub mod patch_build;
pub mod patching;
pub mod query;
pub mod survey;
pub mod topology;

#[cfg(target_arch = "nvptx64")]
#[doc(hidden)]
pub mod gpu;

//! The tetrahedral edge collapse's predicates and kernels (Ströter et al.
//! 2023, "Massively Parallel Adaptive Collapsing of Edges in Unstructured
//! Tetrahedral Meshes", sections 3.1-3.4), written once for the GPU, the
//! CPU backend and the sequential version on the host:
//!
//! - [`greedy`]: the greedy maximal independent set of the candidates, in
//!   rounds (Blelloch, Fineman and Shun 2012), one round of which is the
//!   atomic-minimum conflict detection of Gautron and Kanzler (2023), the
//!   paper's baseline;
//! - [`geometry`]: signed volumes in `f64` and the scale-free trial-volume
//!   test;
//! - [`star`]: what a predicate reads of the mesh ([`star::Star`]: the
//!   tetrahedra around a vertex, positions, boundary marks);
//! - [`link`]: the link condition of Dey et al. (1999) with the boundary
//!   closed by a vertex at infinity;
//! - [`boundary`]: the boundary vertex classes (face, ridge, corner) and
//!   the boundary predicate `Q` with the endpoint it keeps;
//! - [`collapse`]: whether one collapse is admissible, and where its kept
//!   vertex goes ([`collapse::check`]);
//! - [`criterion`]: the criteria (cost, placement, admissibility) and the
//!   three that ship: edge length, scalar-field error, harmonic index;
//! - [`operators`]: a volumetric mesh's tetrahedra made on the device
//!   from its cell-vertex relation (the collapsed mesh's operators are
//!   the volumetric structure's build);
//! - [`quality`]: the quality measures of section 4.6 per tetrahedron and
//!   reduced over a mesh.
#![no_std]
#![feature(core_float_math)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

pub mod boundary;
pub mod collapse;
pub mod criterion;
pub mod geometry;
pub mod greedy;
pub mod iteration;
pub mod link;
pub mod operators;
pub mod quality;
pub mod star;
pub use cavity_device::array::BOUNDS;

/// Items (tetrahedra, vertices, edges, candidates) per block of the
/// collapse's kernels: one per thread. An item's work is long and uneven
/// (a vertex's star, an edge's admissibility over two stars), so each
/// thread takes one: with the core kernels' 2048 items per block
/// ([`cavity_device::array::CHUNK`]) a thread took eight in turn, and a
/// mesh of a few thousand tetrahedra ran on one multiprocessor.
pub const ITEMS: u32 = BOUNDS.threads;

/// The items `[start, end)` of block `block` of `n` items in blocks of
/// [`ITEMS`].
#[inline(always)]
pub fn chunk(block: u32, n: u32) -> (u32, u32) {
    cavity_device::array::chunk_of(block, n, ITEMS)
}

/// Blocks for `n` items in blocks of [`ITEMS`] (at least one).
#[inline(always)]
pub fn blocks(n: u32) -> u32 {
    cavity_device::array::blocks_of(n, ITEMS)
}

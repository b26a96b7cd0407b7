//! Kernels over the ternary sparse boundary operators of a volumetric
//! mesh (Mueller-Roemer, Stork and Fellner, "Ternary Sparse Matrix
//! Representation for Volumetric Mesh Subdivision and Processing on GPUs",
//! sections 3-4): the count, scan and fill steps of a transpose and the
//! per-row sort that makes its result deterministic (Algorithm 1).
//!
//! - [`signed`]: the ternary entry (a column index with its sign, `!c` for
//!   -1), decoded without branches;
//! - [`cells`]: the operators built from cell-vertex lists, and the lists
//!   formed from the operators;
//! - [`transpose`]: [`CountColumns`], [`FillTranspose`], [`SortRows`];
//! - [`relations`]: the indirect relations, [`FaceVertices`],
//!   [`Compose`];
//! - [`boundary`]: boundary extraction and Laplacian smoothing of inner
//!   vertices;
//! - [`subdivide`]: one level of volumetric Catmull-Clark subdivision.
//!
//! Every kernel is checked (`cavity_device::kernel::CheckedKernel`): it
//! takes its arrays as bounds-checked views (`cavity_device::array`), so
//! that the host launches it without `unsafe`, and its work in chunks of
//! [`CHUNK`] items per block, so that the CPU backend's one-thread blocks
//! and the GPU's 256-thread blocks run the same launch (the scan and
//! compaction are the core's, `cavity_device::array`).
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

pub mod boundary;
pub mod cells;
pub mod relations;
pub mod signed;
pub mod subdivide;
pub mod transpose;

pub use boundary::{
    LoopLengths, MarkBoundaryFaces, MarkEdgeVertices, MarkFaceEdges, MarkListed, SignedLoops,
    SmoothInner,
};
pub use relations::{Compose, FaceVertices};
pub use subdivide::{
    CellCells, CellFaces, EdgeOperator, EdgePoints, FaceFaces, FacePoints, RowMeans, SplitEdges,
    SpokeEdges, Stride, VertexPoints,
};
pub use transpose::{CountColumns, FillTranspose, SortRows};

pub use cavity_device::array::{BOUNDS, CHUNK, blocks, chunk};

//! Kernels over the ternary sparse boundary operators of a volumetric
//! mesh (Mueller-Roemer, Stork and Fellner, "Ternary Sparse Matrix
//! Representation for Volumetric Mesh Subdivision and Processing on GPUs",
//! sections 3-4): the count, scan and fill steps of a transpose and the
//! per-row sort that makes its result deterministic (Algorithm 1).
//!
//! - [`signed`]: the ternary entry (a column index with its sign, `!c` for
//!   -1), decoded without branches;
//! - [`transpose`]: [`CountColumns`], [`FillTranspose`], [`SortRows`];
//! - [`relations`]: the indirect relations, [`FaceVertices`],
//!   [`Compose`];
//! - [`boundary`]: boundary extraction and Laplacian smoothing of inner
//!   vertices;
//! - [`subdivide`]: one level of volumetric Catmull-Clark subdivision.
//!
//! Every kernel takes its work in chunks of [`CHUNK`] items per block
//! (`cavity-arrays-kernels`, which also holds the scan and compaction), so
//! that the CPU backend's one-thread blocks and the GPU's 256-thread blocks
//! run the same launch.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

pub mod boundary;
pub mod relations;
pub mod signed;
pub mod subdivide;
pub mod transpose;

pub use boundary::{MarkBoundaryFaces, MarkEdgeVertices, MarkFaceEdges, MarkListed, SmoothInner};
pub use relations::{Compose, FaceVertices};
pub use subdivide::{
    CellCells, CellFaces, EdgeOperator, EdgePoints, FaceFaces, FacePoints, RowMeans, SplitEdges,
    SpokeEdges, Stride, VertexPoints,
};
pub use transpose::{CountColumns, FillTranspose, SortRows};

pub use cavity_arrays_kernels::{BOUNDS, CHUNK, arrays, blocks, chunk};

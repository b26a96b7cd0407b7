//! The cavity applications of isotropic remeshing (Botsch and Kobbelt
//! 2004; dynamic paper, section 6.3): the collapse of short edges that
//! keeps every new edge short and no face folded, and the edge flip that
//! brings the valences of the four vertices closer to 6 (4 on the
//! boundary; in the sum of squared differences). The split of long edges is
//! [`split::SplitLongEdges`]. Feature edges (a
//! dihedral angle whose cosine is below `feature_cos`) are neither flipped
//! nor collapsed. The valence flips read the valences of vertices their
//! patch does not own from a vertex attribute that [`StoreValences`], a
//! per-vertex computation, writes at the start of every sweep.
//!
//! The kernel half of the remeshing application crate (`apps/remesh`),
//! written on cavity's public model: two `CavityApp`s exported with
//! `cavity_kernels!` and one `ElementComputation` exported with
//! `element_kernels!`; the shape tests every phase shares are in [`shape`],
//! the valence flip in [`valence`], the collapse in [`collapse`] and
//! the separation of degenerate edges in [`separate`].
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

pub mod boundary;
pub mod collapse;
pub mod eigen;
pub mod separate;
pub mod shape;
pub mod smooth;
pub mod split;
pub mod valence;

pub use collapse::CollapseShortEdgesSafely;
pub use shape::SLIVER_SIN;
pub use valence::{ImproveValence, StoreValences};

//! Uniform isotropic remeshing (Botsch and Kobbelt 2004) on the dynamic
//! mesh, as in the dynamic paper, section 6.3: every iteration runs four
//! phases, each a full pass over the mesh before the next starts:
//!
//! 1. split every edge longer than 4/3 L (longest-edge bisection,
//!    `SplitLongEdges`);
//! 2. collapse every edge shorter than 4/5 L unless that makes an edge
//!    longer than 4/3 L, breaks the link condition, folds a face over or
//!    makes the mesh non-manifold (`CollapseShortEdgesSafely`; at most
//!    [`COLLAPSE_SWEEPS`] sweeps, so an edge that a neighbouring collapse
//!    turned short late may wait for the next iteration);
//! 3. flip edges that bring the valences of their four vertices closer to
//!    6 (4 on the boundary), in the sum of squared differences as in
//!    Botsch's PMP library (`ImproveValence`; at most [`FLIP_SWEEPS`]
//!    sweeps); in the last iteration only when the new edge is at most
//!    4/3 L (see `last_flips`);
//! 4. tangential smoothing: area-weighted relaxation projected on the
//!    tangent plane ([`smooth`](mod@smooth)).
//!
//! Open boundaries are remeshed along themselves, as CGAL's
//! `isotropic_remeshing` does: long boundary edges are split, short ones
//! collapse onto the boundary polyline, interior edges with one boundary
//! vertex collapse into it, and boundary vertices slide along the polyline
//! in smoothing; corners (a turning angle above the feature angle, 30° when
//! none is given) and the number of boundary loops stay. With
//! `keep_boundary` no boundary edge or vertex changes. With a feature
//! angle, edges whose dihedral angle exceeds it are kept.
//!
//! Degenerate input (scans: zero-length edges, caps) is repaired in every
//! iteration by the same operations: an edge shorter than
//! [`DEGENERATE_LENGTH`] L collapses past the length and shape limits, and
//! an edge opposite an angle of about 160° or more is flipped whatever the
//! valences; a degenerate edge that may not collapse is separated (one
//! vertex moves along an edge, or off the line of its faces of zero area).
//! After the last iteration a final repair ([`REPAIR_COLLAPSE_SWEEPS`]
//! sweeps of collapses and separations, which there also move the apex of
//! a cap that no flip takes off its line, then [`REPAIR_SWEEPS`] of cap
//! and small-angle flips) removes what the last smoothing left: no face
//! of zero area and no edge of zero length stays where a vertex can move
//! (issue 24).
//! [`remesh`] runs on the mesh moved into the unit box
//! ([`cavity::normalize`]), so that any coordinate scale gives the same
//! result.
//!
//! An application crate on cavity's public model, as RXMesh keeps its
//! `apps/`: the cavity applications and the valence computation are in
//! `cavity-remesh-kernels`, their PTX this crate's own module ([`PTX`]); this crate holds
//! the settings ([`settings`]), the phases ([`phases`]), the driver
//! ([`run`]), the file pipeline `cavity remesh` runs ([`pipeline`]), the
//! smoothing's host side ([`smooth`](mod@smooth)), the quality statistics ([`quality`]) and the benchmark
//! ([`bench`](mod@bench), `cavity bench remesh`). The flips read the valences of
//! vertices their patch does not own from the `u32` vertex attribute
//! [`VALENCE_ATTRIBUTE`] ([`attributes`]), which [`StoreValences`] writes
//! before every flip sweep.

pub mod bench;
pub mod phases;
pub mod pipeline;
pub mod ptx;
pub mod quality;
pub mod run;
pub mod settings;
pub mod smooth;

pub use cavity_remesh_kernels::{CollapseShortEdgesSafely, ImproveValence, StoreValences};
pub use phases::*;
pub use ptx::{PTX, add_kernels};
pub use quality::{Quality, mean_edge_length, mean_edge_length_with};
pub use run::*;
pub use settings::*;

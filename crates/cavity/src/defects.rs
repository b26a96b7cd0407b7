//! Defects of real input that the operations must survive: duplicate
//! faces, zero-area faces, zero-length edges and coincident vertices (scans
//! carry all four), their count ([`Defects::of`], printed by `cavity info`),
//! the removal of duplicate faces ([`remove_duplicate_faces`]), and the
//! check of an operation's output against its input ([`check_output`]).
//!
//! Tolerances are relative, so that a mesh scaled by any factor has the
//! same defects: an edge has zero length when it is at most
//! [`ZERO_LENGTH`] times the bounding-box diagonal; a face has zero area
//! when its height over its longest edge is at most [`ZERO_HEIGHT`] times
//! that edge (a cap, a needle or a point).

use glam::DVec3;
use rayon::prelude::*;

use crate::TriMesh;
use crate::mesh::MeshError;
use crate::stats::{MeshStats, topology_stats};
use crate::topology::Topology;

/// Edges at most this many bounding-box diagonals long have zero length
/// (about 8 units in the last place of an `f32` coordinate).
pub const ZERO_LENGTH: f64 = 1e-6;

/// Faces whose height over the longest edge is at most this many times
/// that edge have zero area (an angle near 180° or all three corners near
/// one line or point; about 8 units in the last place of an `f32`).
pub const ZERO_HEIGHT: f64 = 1e-6;

/// Counts of geometric and combinatorial defects of a mesh.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Defects {
    /// Faces with the same three vertices as an earlier face (in either
    /// orientation).
    pub duplicate_faces: usize,
    /// Faces of zero area (see [`ZERO_HEIGHT`]).
    pub zero_area_faces: usize,
    /// Unique edges of zero length (see [`ZERO_LENGTH`]).
    pub zero_length_edges: usize,
    /// Vertices at exactly the position of an earlier vertex.
    pub coincident_vertices: usize,
}

/// Vertex `v` of `mesh` in double precision.
fn point(mesh: &TriMesh, v: u32) -> DVec3 {
    DVec3::from(mesh.positions[v as usize].map(f64::from))
}

/// Diagonal of the axis-aligned bounding box of the vertices (0 without
/// vertices).
pub fn bounding_diagonal(mesh: &TriMesh) -> f64 {
    let (lo, hi) = bounds(mesh);
    if mesh.positions.is_empty() {
        0.0
    } else {
        (hi - lo).length()
    }
}

/// Corners of the bounding box of the vertices.
pub(crate) fn bounds(mesh: &TriMesh) -> (DVec3, DVec3) {
    mesh.positions
        .par_iter()
        .map(|p| DVec3::from(p.map(f64::from)))
        .fold(
            || (DVec3::INFINITY, DVec3::NEG_INFINITY),
            |(lo, hi), p| (lo.min(p), hi.max(p)),
        )
        .reduce(
            || (DVec3::INFINITY, DVec3::NEG_INFINITY),
            |(a, b), (c, d)| (a.min(c), b.max(d)),
        )
}

/// Whether triangle `t` of `mesh` has zero area (see [`ZERO_HEIGHT`]).
pub fn is_zero_area(mesh: &TriMesh, t: [u32; 3]) -> bool {
    let [a, b, c] = t.map(|v| point(mesh, v));
    let longest = [b - a, c - b, a - c]
        .iter()
        .map(|e| e.length_squared())
        .fold(0.0, f64::max);
    // Twice the area is the height times the longest edge.
    (b - a).cross(c - a).length() <= ZERO_HEIGHT * longest
}

/// Faces of `mesh` with zero area ([`is_zero_area`]).
pub fn count_zero_area(mesh: &TriMesh) -> usize {
    mesh.faces
        .par_iter()
        .filter(|&&t| is_zero_area(mesh, t))
        .count()
}

/// The sorted vertex triple of a face: equal for duplicates.
fn key(t: [u32; 3]) -> [u32; 3] {
    let mut k = t;
    k.sort_unstable();
    k
}

/// For every face, whether an earlier face has the same vertices.
fn duplicates(mesh: &TriMesh) -> Vec<bool> {
    let mut keys: Vec<([u32; 3], u32)> = mesh
        .faces
        .par_iter()
        .enumerate()
        .map(|(f, &t)| (key(t), f as u32))
        .collect();
    keys.par_sort_unstable();
    let mut repeated = vec![false; mesh.num_faces()];
    for w in keys.windows(2) {
        if w[0].0 == w[1].0 {
            repeated[w[1].1 as usize] = true;
        }
    }
    repeated
}

impl Defects {
    /// Counts the defects of `mesh` (indices must be in range).
    pub fn of(mesh: &TriMesh) -> Defects {
        Defects::with_topology(mesh, &Topology::new(mesh))
    }

    /// [`Defects::of`] with the topology of `mesh` given
    /// (`Topology::new(mesh)`), for a caller that has it.
    pub fn with_topology(mesh: &TriMesh, topology: &Topology) -> Defects {
        let duplicate_faces = duplicates_with(mesh, topology)
            .iter()
            .filter(|&&d| d)
            .count();
        let zero_area_faces = count_zero_area(mesh);
        let tolerance = ZERO_LENGTH * bounding_diagonal(mesh);
        let zero_length_edges = topology
            .ev
            .par_iter()
            .filter(|&&[a, b]| point(mesh, a).distance(point(mesh, b)) <= tolerance)
            .count();
        Defects {
            duplicate_faces,
            zero_area_faces,
            zero_length_edges,
            coincident_vertices: coincident_vertices(mesh),
        }
    }
}

/// Vertices of `mesh` at exactly the position of an earlier vertex (`-0.0`
/// and `0.0` the same), found by a parallel sort of the positions' bits.
pub fn coincident_vertices(mesh: &TriMesh) -> usize {
    let mut positions: Vec<[u32; 3]> = mesh
        .positions
        .par_iter()
        .map(|p| p.map(|c| (c + 0.0).to_bits()))
        .collect();
    positions.par_sort_unstable();
    positions.windows(2).filter(|w| w[0] == w[1]).count()
}

/// For every face, whether an earlier face has the same vertices, from
/// the topology of `mesh`: duplicates share their edges, so only the
/// faces of a face's first edge are compared (no sort).
fn duplicates_with(mesh: &TriMesh, topology: &Topology) -> Vec<bool> {
    (0..mesh.num_faces())
        .into_par_iter()
        .map(|f| {
            let k = key(mesh.faces[f]);
            topology
                .edge_faces(topology.fe[f][0])
                .iter()
                .any(|&g| (g as usize) < f && key(mesh.faces[g as usize]) == k)
        })
        .collect()
}

/// Removes every face with the same vertices as an earlier one (keeping
/// the first); returns how many were removed. Vertices stay as they are.
pub fn remove_duplicate_faces(mesh: &mut TriMesh) -> usize {
    remove_faces(mesh, &duplicates(mesh))
}

/// [`remove_duplicate_faces`] for a caller that needs the topology of the
/// result: the number removed and `Topology::new` of the mesh left. The
/// duplicates are found from the topology (taken a second time only when
/// there are any).
pub fn remove_duplicate_faces_with_topology(mesh: &mut TriMesh) -> (usize, Topology) {
    let topology = Topology::new(mesh);
    let removed = remove_faces(mesh, &duplicates_with(mesh, &topology));
    if removed == 0 {
        (0, topology)
    } else {
        (removed, Topology::new(mesh))
    }
}

/// Removes the faces marked in `remove`; returns how many.
pub(crate) fn remove_faces(mesh: &mut TriMesh, remove: &[bool]) -> usize {
    let before = mesh.faces.len();
    let mut f = 0;
    mesh.faces.retain(|_| {
        f += 1;
        !remove[f - 1]
    });
    before - mesh.faces.len()
}

/// What an operation promises to keep of its input, checked by
/// [`check_output`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keeps {
    /// The Euler characteristic and the number of boundary loops and
    /// components.
    pub topology: bool,
    /// No face of zero area (when the input had none, or the operation
    /// removes them).
    pub no_zero_area: bool,
}

/// An output that breaks a promise of its operation.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The output's faces name missing vertices or repeat one.
    #[error("the output is invalid: {0}")]
    Invalid(#[from] MeshError),
    /// A topological invariant changed.
    #[error("the output's {what} is {output}, the input's {input}: the result is corrupt")]
    Changed {
        /// What changed.
        what: &'static str,
        /// The input's value.
        input: i64,
        /// The output's value.
        output: i64,
    },
    /// The output has zero-area faces.
    #[error("the output has {0} faces of zero area (the first is face {1})")]
    ZeroArea(usize, usize),
}

/// Checks `output` against `input` (its topology statistics, taken before
/// the operation): manifold where the input was (no more non-manifold
/// edges or vertices), and what `keeps` promises.
///
/// # Errors
/// The first broken promise, with both values.
pub fn check_output(input: &MeshStats, output: &TriMesh, keeps: Keeps) -> Result<(), OutputError> {
    check_indices(output)?;
    check_stats(input, output, &topology_stats(output), None, keeps)
}

/// What an output's check reads of it, measured by a caller that has it
/// (`cavity::backend::Backend::survey` and its measures): its topology
/// statistics and its number of faces of zero area ([`is_zero_area`]).
#[derive(Clone, Copy, Debug)]
pub struct Measured<'a> {
    /// `topology_stats(output)`.
    pub stats: &'a MeshStats,
    /// `count_zero_area(output)`.
    pub zero_area_faces: usize,
}

/// [`check_output`] with what it reads of `output` measured
/// ([`Measured`]): the faces are looked at on the host only for their
/// indices, and for the first face of zero area where there is one.
///
/// # Errors
/// As [`check_output`].
pub fn check_output_with(
    input: &MeshStats,
    output: &TriMesh,
    measured: Measured<'_>,
    keeps: Keeps,
) -> Result<(), OutputError> {
    check_indices(output)?;
    check_stats(
        input,
        output,
        measured.stats,
        Some(measured.zero_area_faces),
        keeps,
    )
}

/// [`check_output`] once the output's indices are checked and its
/// statistics `stats` taken; its faces of zero area are looked for here
/// unless `zero_area` says there are none.
fn check_stats(
    input: &MeshStats,
    output: &TriMesh,
    stats: &MeshStats,
    zero_area: Option<usize>,
    keeps: Keeps,
) -> Result<(), OutputError> {
    let mut pairs = vec![
        (
            "number of non-manifold edges",
            input.non_manifold_edges,
            stats.non_manifold_edges,
            false,
        ),
        (
            "number of non-manifold vertices",
            input.non_manifold_vertices,
            stats.non_manifold_vertices,
            false,
        ),
    ];
    if keeps.topology {
        pairs.extend([
            (
                "number of boundary loops",
                input.boundary_loops,
                stats.boundary_loops,
                true,
            ),
            (
                "number of components",
                face_components(input),
                face_components(stats),
                true,
            ),
        ]);
        if face_euler(input) != face_euler(stats) {
            return Err(OutputError::Changed {
                what: "Euler characteristic",
                input: face_euler(input),
                output: face_euler(stats),
            });
        }
    }
    for (what, a, b, exact) in pairs {
        if b > a || (exact && a != b) {
            return Err(OutputError::Changed {
                what,
                input: a as i64,
                output: b as i64,
            });
        }
    }
    if keeps.no_zero_area && zero_area != Some(0) {
        let zero: Vec<usize> = output
            .faces
            .par_iter()
            .enumerate()
            .filter(|&(_, &t)| is_zero_area(output, t))
            .map(|(f, _)| f)
            .collect();
        if let Some(&first) = zero.first() {
            return Err(OutputError::ZeroArea(zero.len(), first));
        }
    }
    Ok(())
}

/// Checks that `mesh`'s faces name existing vertices, three different
/// ones (one parallel pass; the positions are not read).
///
/// # Errors
/// The first face found with an index out of range or a repeated vertex.
pub fn check_indices(mesh: &TriMesh) -> Result<(), MeshError> {
    let vertices = mesh.num_vertices();
    mesh.faces.par_iter().enumerate().try_for_each(|(face, t)| {
        for k in 0..3 {
            if t[k] as usize >= vertices {
                return Err(MeshError::IndexOutOfRange {
                    face,
                    index: t[k],
                    vertices,
                });
            }
            if t[k] == t[(k + 1) % 3] {
                return Err(MeshError::RepeatedVertex { face, corners: *t });
            }
        }
        Ok(())
    })
}

/// Components with at least one face.
fn face_components(s: &MeshStats) -> usize {
    s.components - s.isolated_vertices
}

/// The Euler characteristic without isolated vertices (the operations drop
/// them).
fn face_euler(s: &MeshStats) -> i64 {
    s.euler_characteristic - s.isolated_vertices as i64
}

//! Mesh quality as the dynamic paper's table 4 reports it for isotropic
//! remeshing (section 6.3): face count, shortest and longest edge as a
//! multiple of the target length L, smallest, largest and mean vertex
//! valence; plus the smallest angle and the share of edges in the
//! remeshing band [4/5 L, 4/3 L].

use std::sync::atomic::{AtomicU32, Ordering};

use glam::DVec3;
use rayon::prelude::*;

use cavity::TriMesh;
use cavity::backend::{Backend, BackendError, SurveyOn};
use cavity::defects::{ZERO_HEIGHT, ZERO_LENGTH, bounding_diagonal, count_zero_area};
use cavity::stats::Survey;
use cavity::topology::Topology;
pub use cavity::topology::{SUM_CHUNK, chunked_sum, mean_edge_length, mean_edge_length_with};

/// Table-4 statistics of a triangle mesh against a target edge length.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Quality {
    /// Faces.
    pub faces: usize,
    /// Vertices referenced by a face.
    pub vertices: usize,
    /// Unique edges.
    pub edges: usize,
    /// Shortest edge over L.
    pub min_edge: f64,
    /// Longest edge over L.
    pub max_edge: f64,
    /// Mean edge length (model units).
    pub mean_edge: f64,
    /// Smallest valence (edges per vertex) over vertices with a face.
    pub min_valence: u32,
    /// Largest valence.
    pub max_valence: u32,
    /// Mean valence.
    pub mean_valence: f64,
    /// Smallest interior angle of any face, in degrees (0 for a degenerate
    /// face).
    pub min_angle: f64,
    /// Share of edges with length in [4/5 L, 4/3 L] (0 to 1).
    pub in_band: f64,
    /// Smallest interior angle in degrees over the faces that touch no
    /// sharp boundary corner (a boundary vertex whose face angles sum to
    /// less than [`SHARP_CORNER`] degrees, or that is not on exactly two
    /// boundary edges) and lie in no component of fewer than
    /// [`DEBRIS_FACES`] faces: the smallest angle a remesher can be held to
    /// on a real scan (issue 24); 180 when no face counts.
    pub min_angle_away: f64,
    /// Faces of zero area (`cavity::defects::is_zero_area`).
    pub zero_area: usize,
    /// Edges of zero length (`cavity::defects::ZERO_LENGTH`).
    pub zero_length: usize,
    /// Boundary loops (as `MeshStats::boundary_loops`).
    pub boundary_loops: usize,
    /// Euler characteristic over the vertices with a face.
    pub euler: i64,
}

/// Boundary corners whose face angles sum to less than this many degrees
/// are sharp: [`Quality::min_angle_away`] leaves their faces out.
pub const SHARP_CORNER: f64 = 10.0;

/// Components of fewer faces are debris: [`Quality::min_angle_away`] leaves
/// them out.
pub const DEBRIS_FACES: usize = 8;

/// Vertex `v` of `mesh` in double precision.
fn length(mesh: &TriMesh, [a, b]: [u32; 2]) -> f64 {
    point(mesh, a).distance(point(mesh, b))
}

pub(crate) fn point(mesh: &TriMesh, v: u32) -> DVec3 {
    DVec3::from(mesh.positions[v as usize].map(f64::from))
}

/// Interior angles of triangle `t` of `mesh` at its three corners, in
/// degrees.
fn angles(mesh: &TriMesh, t: [u32; 3]) -> [f64; 3] {
    let p = t.map(|v| point(mesh, v));
    [0, 1, 2].map(|k| {
        let (u, v) = (p[(k + 1) % 3] - p[k], p[(k + 2) % 3] - p[k]);
        u.cross(v).length().atan2(u.dot(v)).to_degrees()
    })
}

/// Smallest interior angle of triangle `t` of `mesh`, in degrees: the
/// angle opposite the shortest side (law of sines), one `atan2` instead of
/// three.
fn smallest_angle(mesh: &TriMesh, t: [u32; 3]) -> f64 {
    let p = t.map(|v| point(mesh, v));
    // Side k runs from corner k + 1 to corner k + 2, opposite corner k.
    let side = |k: usize| (p[(k + 2) % 3] - p[(k + 1) % 3]).length_squared();
    let k = (0..3).fold(0, |a, k| if side(k) < side(a) { k } else { a });
    let (u, v) = (p[(k + 1) % 3] - p[k], p[(k + 2) % 3] - p[k]);
    u.cross(v).length().atan2(u.dot(v)).to_degrees()
}

/// For every vertex, whether it is a sharp boundary corner (see
/// [`Quality::min_angle_away`]).
fn sharp_corners(mesh: &TriMesh, survey: &Survey<'_>) -> Vec<bool> {
    (0..mesh.num_vertices() as u32)
        .into_par_iter()
        .map(|v| match survey.boundary_at[v as usize] {
            0 => false,
            2 => {
                let sum: f64 = survey
                    .vertex_faces(v)
                    .iter()
                    .map(|&f| {
                        let t = mesh.faces[f as usize];
                        let k = t.iter().position(|&x| x == v).unwrap_or(0);
                        angles(mesh, t)[k]
                    })
                    .sum();
                sum < SHARP_CORNER
            }
            _ => true,
        })
        .collect()
}

/// Faces a worker counts at a time in [`component_sizes`].
const RUN_CHUNK: usize = 1 << 12;

/// For every component root of `roots` (each vertex's component, as
/// [`Survey::roots`]), the number of faces of its component (faces joined
/// through shared vertices); 0 at a vertex that is no root.
fn root_face_counts(mesh: &TriMesh, roots: &[u32]) -> Vec<u32> {
    // Counted in runs of faces with the same root, one atomic add a run:
    // the faces of a large component would otherwise all add to one
    // counter at once.
    let size: Vec<AtomicU32> = (0..mesh.num_vertices())
        .into_par_iter()
        .map(|_| AtomicU32::new(0))
        .collect();
    mesh.faces.par_chunks(RUN_CHUNK).for_each(|chunk| {
        let mut run = (u32::MAX, 0);
        for t in chunk {
            let root = roots[t[0] as usize];
            if root != run.0 {
                if run.1 > 0 {
                    size[run.0 as usize].fetch_add(run.1, Ordering::Relaxed);
                }
                run = (root, 0);
            }
            run.1 += 1;
        }
        if run.1 > 0 {
            size[run.0 as usize].fetch_add(run.1, Ordering::Relaxed);
        }
    });
    size.into_par_iter().map(AtomicU32::into_inner).collect()
}

/// For every face, the number of faces of its component (`roots` as in
/// [`root_face_counts`]).
fn component_sizes(mesh: &TriMesh, roots: &[u32]) -> Vec<u32> {
    let size = root_face_counts(mesh, roots);
    mesh.faces
        .par_iter()
        .map(|t| size[roots[t[0] as usize] as usize])
        .collect()
}

impl Quality {
    /// The statistics of `mesh` against target length `target` (model
    /// units, positive).
    pub fn of(mesh: &TriMesh, target: f64) -> Quality {
        Quality::with_survey(mesh, &Survey::new(mesh), target)
    }

    /// [`Quality::of`] with the topology of `mesh` given
    /// (`Topology::new(mesh)`), for a caller that has it.
    pub fn with_topology(mesh: &TriMesh, topo: &Topology, target: f64) -> Quality {
        Quality::with_survey(mesh, &Survey::with_topology(mesh, topo), target)
    }

    /// [`Quality::of`] from the [`Survey`] of `mesh`, which its topology
    /// statistics read too (`Survey::stats`).
    pub fn with_survey(mesh: &TriMesh, survey: &Survey<'_>, target: f64) -> Quality {
        let lengths: Vec<f64> = survey.ev.par_iter().map(|&e| length(mesh, e)).collect();
        let (lo, hi) = (0.8 * target, 4.0 / 3.0 * target);
        let in_band = lengths.par_iter().filter(|&&l| l >= lo && l <= hi).count();
        let used: Vec<u32> = (0..mesh.num_vertices())
            .into_par_iter()
            .filter(|&v| survey.vf_offsets[v] < survey.vf_offsets[v + 1])
            .map(|v| survey.valence[v])
            .collect();
        let edges = lengths.len();
        // Minima do not depend on the order: the same for any workers.
        let smallest: Vec<f64> = mesh
            .faces
            .par_iter()
            .map(|&t| smallest_angle(mesh, t))
            .collect();
        Quality {
            faces: mesh.num_faces(),
            vertices: used.len(),
            edges,
            min_edge: lengths
                .par_iter()
                .copied()
                .reduce(|| f64::INFINITY, f64::min)
                / target,
            max_edge: lengths.par_iter().copied().reduce(|| 0.0, f64::max) / target,
            mean_edge: chunked_sum(&lengths, |&l| l) / edges.max(1) as f64,
            min_valence: used.par_iter().copied().min().unwrap_or(0),
            max_valence: used.par_iter().copied().max().unwrap_or(0),
            // Integer sums: exact in any order.
            mean_valence: used.par_iter().map(|&v| u64::from(v)).sum::<u64>() as f64
                / used.len().max(1) as f64,
            min_angle: smallest.par_iter().copied().reduce(|| 180.0, f64::min),
            in_band: in_band as f64 / edges.max(1) as f64,
            min_angle_away: {
                let sharp = sharp_corners(mesh, survey);
                let sizes = component_sizes(mesh, &survey.roots);
                mesh.faces
                    .par_iter()
                    .zip(sizes.par_iter())
                    .zip(smallest.par_iter())
                    .filter(|&((t, &size), _)| {
                        size as usize >= DEBRIS_FACES && !t.iter().any(|&v| sharp[v as usize])
                    })
                    .map(|(_, &angle)| angle)
                    .reduce(|| 180.0, f64::min)
            },
            zero_area: count_zero_area(mesh),
            zero_length: {
                let tolerance = ZERO_LENGTH * bounding_diagonal(mesh);
                lengths.par_iter().filter(|&&l| l <= tolerance).count()
            },
            boundary_loops: survey.boundary_loops,
            euler: used.len() as i64 - edges as i64 + mesh.num_faces() as i64,
        }
    }

    /// [`Quality::of`] measured on `backend` from its survey of `mesh`
    /// ([`Backend::survey`], which [`SurveyOn::stats`] gives the topology
    /// statistics of): the edges, valences and faces reduced there, a few
    /// numbers read back; the debris (components of fewer than
    /// [`DEBRIS_FACES`] faces) marked there too
    /// ([`SurveyOn::small_components`]). Equal to [`Quality::of`] but for the rounding of the
    /// mean edge length (a sum in another order) and of the angles
    /// (`libm`'s `atan2` on the device).
    ///
    /// # Errors
    /// A failed allocation, launch or copy on `backend`.
    pub fn on_survey(
        backend: &Backend,
        mesh: &TriMesh,
        survey: &SurveyOn,
        target: f64,
    ) -> Result<Quality, BackendError> {
        let stats = survey.stats();
        let zero = ZERO_LENGTH * bounding_diagonal(mesh);
        let lengths = survey.edge_lengths(backend, (0.8 * target, 4.0 / 3.0 * target), zero)?;
        let valences = survey.valences(backend)?;
        let debris = survey.small_components(backend, DEBRIS_FACES)?;
        let edges = stats.edges;
        let faces = stats.faces;
        Ok(Quality {
            faces,
            vertices: valences.used,
            edges,
            min_edge: lengths.min / target,
            max_edge: lengths.max / target,
            mean_edge: lengths.sum / edges.max(1) as f64,
            min_valence: valences.min,
            max_valence: valences.max,
            mean_valence: valences.sum as f64 / valences.used.max(1) as f64,
            min_angle: survey.smallest_angle(backend)?,
            in_band: lengths.in_band as f64 / edges.max(1) as f64,
            min_angle_away: survey.smallest_angle_away(backend, SHARP_CORNER, debris.as_ref())?,
            zero_area: survey.zero_area_faces(backend, ZERO_HEIGHT)?,
            zero_length: lengths.zero_length,
            boundary_loops: stats.boundary_loops,
            euler: valences.used as i64 - edges as i64 + faces as i64,
        })
    }
}

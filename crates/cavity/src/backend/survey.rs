//! A mesh surveyed by a backend ([`Backend::survey`]): its topology built
//! there (`Backend::build_topology`), then what the host's
//! [`Survey`](crate::stats::Survey) finds around each vertex (valence,
//! boundary edges, fans) counted by the kernels of
//! `cavity_device::survey`, and its components (sets of vertices joined
//! through faces) found by those of `cavity_device::components`, on either
//! backend from one source. The result, [`SurveyOn`], gives the mesh's topology
//! statistics ([`MeshStats`], equal to `cavity::stats::topology_stats`)
//! and the measures of an output's quality statistics (the dynamic
//! paper's table 4, section 6.3: edge lengths, valences, angles, faces of
//! zero area), each a reduction on the device read back as a few numbers,
//! so that an output's check and statistics need no survey of it on the
//! host (the host's passes left: the boundary loops' join, and what a
//! caller adds, such as the bounding box). [`Backend::survey_defects`]
//! adds an input's defects (duplicate faces, faces of zero area, edges of
//! zero length on the device; coincident vertices on the host beside it)
//! for `cavity info`.

use rayon::prelude::*;

use cavity_device::array::{blocks, partial_launch_bytes};
use cavity_device::components::{
    CountComponentFaces, FlattenSets, MarkSmallComponents, StartSets, UniteCorners,
};
use cavity_device::survey::{
    CountEdgeEnds, CountFans, FaceMeasure, ListBoundaryEdges, SharpCorners, VertexMeasure, measure,
};

use super::buffer::Buffer;
use super::error::BackendError;
use super::export::FacesOn;
use super::topology::{Relations, TopologyOn, combined, indices_in_range};
use super::{Backend, beside};
use crate::TriMesh;
use crate::components::ConcurrentSets;
use crate::defects::{Defects, ZERO_HEIGHT, ZERO_LENGTH, bounding_diagonal, coincident_vertices};
use crate::stats::MeshStats;

/// A mesh surveyed by a backend ([`Backend::survey`]; see the
/// [module](self)): its relations, positions, per-vertex counts and
/// components in the backend's buffers, its topology statistics on the
/// host.
pub struct SurveyOn {
    topology: TopologyOn<'static>,
    positions: Buffer<f32>,
    valence: Buffer<u32>,
    boundary_at: Buffer<u32>,
    /// Each vertex's root: the smallest vertex of its component.
    roots: Buffer<u32>,
    stats: MeshStats,
}

/// What the device's part of a survey leaves ([`Backend::survey_device`]).
struct Surveyed {
    topology: TopologyOn<'static>,
    positions: Buffer<f32>,
    valence: Buffer<u32>,
    boundary_at: Buffer<u32>,
    roots: Buffer<u32>,
    /// Isolated vertices, vertices of several fans, boundary edges,
    /// non-manifold edges, components.
    counts: [usize; 5],
    /// The boundary edges.
    boundary: Vec<[u32; 2]>,
}

/// The lengths of a mesh's unique edges ([`SurveyOn::edge_lengths`]), in
/// its units, in `f64`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EdgeLengths {
    /// The shortest (infinity for no edge).
    pub min: f64,
    /// The longest (0 for no edge).
    pub max: f64,
    /// The sum (its order is the device's: it may differ from a host sum
    /// in the last bits).
    pub sum: f64,
    /// Edges of length within the band asked for.
    pub in_band: usize,
    /// Edges no longer than the zero length asked for.
    pub zero_length: usize,
}

/// The valences (edges per vertex) of the vertices with a face
/// ([`SurveyOn::valences`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Valences {
    /// Vertices with a face.
    pub used: usize,
    /// The smallest valence (0 for no vertex with a face).
    pub min: u32,
    /// The largest.
    pub max: u32,
    /// The sum.
    pub sum: u64,
}

/// Which of the device's relations a survey reads.
fn relations<'a>(topology: &'a TopologyOn<'static>) -> &'a Relations {
    topology
        .relations()
        .expect("Backend::build_topology leaves the relations on the device")
}

/// The boundary loops of the `boundary` edges of a mesh of `nv` vertices:
/// the sets of boundary edges joined at their ends, each counted at its
/// root among the vertices on a boundary edge (as
/// `cavity::stats::MeshStats::boundary_loops`).
fn boundary_loops(nv: usize, boundary: Vec<[u32; 2]>) -> usize {
    if boundary.is_empty() {
        return 0;
    }
    let loops = ConcurrentSets::new(nv);
    boundary.par_iter().for_each(|&[a, b]| loops.union(a, b));
    let mut ends: Vec<u32> = boundary.into_iter().flatten().collect();
    ends.par_sort_unstable();
    ends.dedup();
    ends.par_iter().filter(|&&v| loops.find(v) == v).count()
}

/// `n` as a 32-bit count, or [`BackendError::TooLarge`].
fn count32(n: usize) -> Result<u32, BackendError> {
    u32::try_from(n).map_err(|_| BackendError::TooLarge(n))
}

impl Backend {
    /// The survey of `mesh` (indices in range, no face repeating a vertex:
    /// [`TriMesh::validate`] and the output checks' index check) on this
    /// backend: its topology built by `Backend::build_topology`, each
    /// vertex's valence, boundary edges and fans counted there, its
    /// boundary edges listed and read back (the host joins them into
    /// loops), and its components found there (a concurrent union-find,
    /// `cavity_device::components`). Its [`SurveyOn::stats`] equal
    /// `cavity::stats::topology_stats(mesh)`.
    ///
    /// # Errors
    /// [`BackendError::Index`] for a face's vertex past the vertices,
    /// [`BackendError::TooLarge`] past 32-bit counts; a failed allocation,
    /// launch or copy.
    pub fn survey(&self, mesh: &TriMesh) -> Result<SurveyOn, BackendError> {
        self.survey_with(mesh, None)
    }

    /// [`Backend::survey`] of `mesh` whose faces this backend holds
    /// already as `faces_on` (those of the export that gave `mesh`:
    /// `Exported::faces_on`), read where they lie rather than uploaded
    /// again (uploaded where `faces_on` is `None` or of another length).
    /// The indices are checked on `mesh.faces`, which `faces_on` must
    /// equal: the survey of other faces is theirs, not `mesh`'s.
    ///
    /// # Errors
    /// As [`Backend::survey`].
    pub fn survey_with(
        &self,
        mesh: &TriMesh,
        faces_on: Option<FacesOn>,
    ) -> Result<SurveyOn, BackendError> {
        // Checked once, for the topology's build and the components.
        indices_in_range(mesh)?;
        let topology = self.build_topology_in_range(mesh, faces_on.map(|f| f.0))?;
        self.survey_built(mesh, topology)
    }

    /// [`Backend::survey`] of `mesh` from its topology built already by
    /// this backend's kernels (as [`Backend::build_topology`] and, on the
    /// GPU, [`Backend::without_duplicate_faces`] give it), which the
    /// survey keeps rather than building it again:
    /// [`SurveyOn::into_topology`] gives it back. `topology` must be
    /// `mesh`'s: only its counts are checked. One held only on the host
    /// (the CPU backend's [`Backend::topology_on`]), or whose counts of
    /// faces or vertices are not `mesh`'s, is dropped and built again
    /// from `mesh`.
    ///
    /// # Errors
    /// As [`Backend::survey`].
    pub fn survey_topology(
        &self,
        mesh: &TriMesh,
        topology: TopologyOn<'static>,
    ) -> Result<SurveyOn, BackendError> {
        indices_in_range(mesh)?;
        let corners = 3 * mesh.num_faces();
        let built = topology.relations().is_some_and(|d| {
            d.fv.as_ref().is_some_and(|fv| fv.len() == corners)
                && d.vf_offsets.len() == mesh.num_vertices() + 1
        });
        let topology = if built {
            topology
        } else {
            drop(topology);
            self.build_topology_in_range(mesh, None)?
        };
        self.survey_built(mesh, topology)
    }

    /// The survey of `mesh` (indices checked) from `topology`, built by
    /// this backend's kernels from its faces.
    fn survey_built(
        &self,
        mesh: &TriMesh,
        topology: TopologyOn<'static>,
    ) -> Result<SurveyOn, BackendError> {
        let nv = mesh.num_vertices();
        let Surveyed {
            topology,
            positions,
            valence,
            boundary_at,
            roots,
            counts,
            boundary,
        } = self.survey_device(mesh, topology)?;
        let [
            isolated,
            many_fans,
            boundary_edges,
            non_manifold_edges,
            components,
        ] = counts;
        let boundary_loops = boundary_loops(nv, boundary);
        let edges = topology.num_edges();
        let stats = MeshStats {
            vertices: nv,
            edges,
            faces: mesh.num_faces(),
            isolated_vertices: isolated,
            components,
            boundary_edges,
            boundary_loops,
            non_manifold_edges,
            non_manifold_vertices: many_fans,
            euler_characteristic: nv as i64 - edges as i64 + mesh.num_faces() as i64,
        };
        Ok(SurveyOn {
            topology,
            positions,
            valence,
            boundary_at,
            roots,
            stats,
        })
    }

    /// The defects of `mesh` ([`Defects`], equal to
    /// `Defects::with_topology`'s) and its survey (whose
    /// [`SurveyOn::stats`] are its topology statistics), for `cavity info`:
    /// its topology built on this backend ([`Backend::build_topology`]),
    /// its duplicate faces counted there
    /// ([`TopologyOn::count_duplicate_faces`]), it surveyed there from that
    /// topology (as [`Backend::survey_topology`] does), and its faces of zero area and edges
    /// of zero length counted there ([`SurveyOn::zero_area_faces`],
    /// [`SurveyOn::zero_length_edges`]); its coincident vertices are found
    /// on the host meanwhile ([`coincident_vertices`], a parallel sort).
    ///
    /// # Errors
    /// As [`Backend::survey`].
    pub fn survey_defects(&self, mesh: &TriMesh) -> Result<(SurveyOn, Defects), BackendError> {
        let (surveyed, coincident_vertices) = beside(
            || -> Result<_, BackendError> {
                let topology = self.build_topology(mesh)?;
                let duplicate_faces = topology.count_duplicate_faces(self)?;
                let survey = self.survey_built(mesh, topology)?;
                let zero_area_faces = survey.zero_area_faces(self, ZERO_HEIGHT)?;
                let zero = ZERO_LENGTH * bounding_diagonal(mesh);
                let zero_length_edges = survey.zero_length_edges(self, zero)?;
                Ok((
                    survey,
                    [duplicate_faces, zero_area_faces, zero_length_edges],
                ))
            },
            || coincident_vertices(mesh),
        );
        let (survey, [duplicate_faces, zero_area_faces, zero_length_edges]) = surveyed?;
        let defects = Defects {
            duplicate_faces,
            zero_area_faces,
            zero_length_edges,
            coincident_vertices,
        };
        Ok((survey, defects))
    }

    /// The device's part of [`Backend::survey`]: the topology, the
    /// positions, the valences and boundary counts, the components, the
    /// counts of isolated vertices, vertices of several fans, boundary and
    /// non-manifold edges and components, and the boundary edges.
    fn survey_device(
        &self,
        mesh: &TriMesh,
        topology: TopologyOn<'static>,
    ) -> Result<Surveyed, BackendError> {
        let d = relations(&topology);
        let fv = d.fv.as_ref().expect("built from the faces");
        let (nv, edges) = (
            count32(mesh.num_vertices())?,
            count32(topology.num_edges())?,
        );
        let positions = self.upload(mesh.positions.as_flattened())?;
        let mut valence = self.zeros::<u32>(nv as usize)?;
        let mut boundary_at = self.zeros::<u32>(nv as usize)?;
        let params = (&d.ev, &d.ef_offsets, edges, &mut valence, &mut boundary_at);
        self.launch::<CountEdgeEnds>(blocks(edges), (0, 0), params)?;
        let mut fans = self.zeros::<u32>(nv as usize)?;
        let mut parent = self.zeros::<u32>(d.vf.len())?;
        let params = (
            fv,
            &d.fe,
            [&d.ef_offsets, &d.ef],
            [&d.vf_offsets, &d.vf],
            nv,
            &mut parent,
            &mut fans,
        );
        self.launch::<CountFans>(blocks(nv), (0, 0), params)?;
        drop(parent);
        let smem = partial_launch_bytes();
        let mut partials = self.zeros::<u32>(2 * blocks(nv.max(edges)) as usize)?;
        let mut vertex_count = |what| -> Result<usize, BackendError> {
            let params = (&d.vf_offsets, &valence, &fans, nv, what, &mut partials);
            self.launch::<VertexMeasure>(blocks(nv), smem, params)?;
            Ok(combined(self, &partials, blocks(nv), what)? as usize)
        };
        let isolated = vertex_count(measure::ISOLATED)?;
        let many_fans = vertex_count(measure::MANY_FANS)?;
        drop(fans);
        let mut edge_count = |what| -> Result<usize, BackendError> {
            let none = ((0.0, 0.0), 0.0);
            Ok(d.edge_measure(self, (&positions, edges), what, none, &mut partials)? as usize)
        };
        let boundary_edges = edge_count(measure::BOUNDARY)?;
        let non_manifold_edges = edge_count(measure::NON_MANIFOLD)?;
        let mut list = self.zeros::<u32>(1 + 2 * boundary_edges)?;
        let params = (&d.ev, &d.ef_offsets, edges, &mut list);
        self.launch::<ListBoundaryEdges>(blocks(edges), (0, 0), params)?;
        let words = self.read_back(&list, list.len())?;
        let boundary = words[1..].as_chunks::<2>().0.to_vec();
        let (roots, components) = self.components(fv, nv, count32(mesh.num_faces())?)?;
        Ok(Surveyed {
            topology,
            positions,
            valence,
            boundary_at,
            roots,
            counts: [
                isolated,
                many_fans,
                boundary_edges,
                non_manifold_edges,
                components,
            ],
            boundary,
        })
    }

    /// The components of `nv` vertices joined through the `faces` faces
    /// `fv` (three vertices each): each vertex's root (the smallest vertex
    /// of its component, as `cavity::components::ConcurrentSets::roots`),
    /// and their number.
    fn components(
        &self,
        fv: &Buffer<u32>,
        nv: u32,
        faces: u32,
    ) -> Result<(Buffer<u32>, usize), BackendError> {
        let mut roots = self.zeros::<u32>(nv as usize)?;
        let mut count = self.zeros::<u32>(1)?;
        self.launch::<StartSets>(blocks(nv), (0, 0), (nv, &mut roots))?;
        self.launch::<UniteCorners>(blocks(faces), (0, 0), (fv, faces, &mut roots))?;
        self.launch::<FlattenSets>(blocks(nv), (0, 0), (nv, &mut roots, &mut count))?;
        let components = self.element(&count, 0)? as usize;
        Ok((roots, components))
    }
}

impl SurveyOn {
    /// The topology the survey was taken from, its other buffers given
    /// back ([`Backend::survey_topology`]).
    pub fn into_topology(self) -> TopologyOn<'static> {
        self.topology
    }

    /// The topology statistics of the mesh surveyed (as
    /// `cavity::stats::topology_stats`).
    pub fn stats(&self) -> &MeshStats {
        &self.stats
    }

    /// Per vertex: the smallest vertex of its component (faces join their
    /// corners), as `cavity::stats::Survey::roots`, read back.
    ///
    /// # Errors
    /// A failed copy.
    pub fn roots(&self, b: &Backend) -> Result<Vec<u32>, BackendError> {
        b.read_back(&self.roots, self.roots.len())
    }

    /// Per vertex, 1 where its component has at least one face and fewer
    /// than `below` (debris beside a scan), else 0; `None` where no vertex
    /// is marked. Counted on the backend (`cavity_device::components`).
    ///
    /// # Errors
    /// A failed allocation, launch or copy.
    pub fn small_components(
        &self,
        b: &Backend,
        below: usize,
    ) -> Result<Option<Buffer<u32>>, BackendError> {
        let d = relations(&self.topology);
        let fv = d.fv.as_ref().expect("built from the faces");
        let (nv, faces) = (count32(self.stats.vertices)?, count32(self.stats.faces)?);
        let below = u32::try_from(below).unwrap_or(u32::MAX);
        let mut size = b.zeros::<u32>(nv as usize)?;
        let params = (fv, &self.roots, faces, &mut size);
        b.launch::<CountComponentFaces>(blocks(faces), (0, 0), params)?;
        let mut marks = b.zeros::<u32>(nv as usize + 1)?;
        let params = (&self.roots, &size, nv, below, &mut marks);
        b.launch::<MarkSmallComponents>(blocks(nv), (0, 0), params)?;
        Ok((b.element(&marks, nv as usize)? != 0).then_some(marks))
    }

    /// The lengths of the unique edges: extremes, sum, the edges within
    /// `[band.0, band.1]` and those no longer than `zero` (model units).
    ///
    /// # Errors
    /// A failed allocation, launch or copy.
    pub fn edge_lengths(
        &self,
        b: &Backend,
        band: (f64, f64),
        zero: f64,
    ) -> Result<EdgeLengths, BackendError> {
        let mut reduce = self.edge_measures(b, (band, zero))?;
        Ok(EdgeLengths {
            min: reduce(measure::LENGTH_MIN)?,
            max: reduce(measure::LENGTH_MAX)?,
            sum: reduce(measure::LENGTH_SUM)?,
            in_band: reduce(measure::IN_BAND)? as usize,
            zero_length: reduce(measure::ZERO_LENGTH)? as usize,
        })
    }

    /// The valences of the vertices with a face.
    ///
    /// # Errors
    /// A failed allocation, launch or copy.
    pub fn valences(&self, b: &Backend) -> Result<Valences, BackendError> {
        let d = relations(&self.topology);
        let nv = count32(self.stats.vertices)?;
        let grid = blocks(nv);
        let mut partials = b.zeros::<u32>(2 * grid as usize)?;
        let mut reduce = |what| -> Result<f64, BackendError> {
            // `fans` is not read by these measures: the valences stand in.
            let params = (
                &d.vf_offsets,
                &self.valence,
                &self.valence,
                nv,
                what,
                &mut partials,
            );
            b.launch::<VertexMeasure>(grid, partial_launch_bytes(), params)?;
            combined(b, &partials, grid, what)
        };
        let used = self.stats.vertices - self.stats.isolated_vertices;
        let (min, max) = (reduce(measure::VALENCE_MIN)?, reduce(measure::VALENCE_MAX)?);
        let extreme = |x: f64| if used == 0 { 0 } else { x as u32 };
        Ok(Valences {
            used,
            min: extreme(min),
            max: extreme(max),
            sum: reduce(measure::VALENCE_SUM)? as u64,
        })
    }

    /// The unique edges no longer than `zero` (model units; as
    /// `cavity::defects::Defects::zero_length_edges` with `zero` =
    /// `ZERO_LENGTH` times the bounding-box diagonal): one measure of
    /// [`SurveyOn::edge_lengths`].
    ///
    /// # Errors
    /// A failed allocation, launch or copy.
    pub fn zero_length_edges(&self, b: &Backend, zero: f64) -> Result<usize, BackendError> {
        let mut reduce = self.edge_measures(b, ((0.0, 0.0), zero))?;
        Ok(reduce(measure::ZERO_LENGTH)? as usize)
    }

    /// A reduction of the unique edges by measure
    /// (`cavity_device::survey::measure`), with the band and the zero
    /// length `(band, zero)` where the measure reads them, its partials in
    /// one buffer for every call.
    ///
    /// # Errors
    /// A failed allocation (here), launch or copy (in the reduction).
    fn edge_measures<'a>(
        &'a self,
        b: &'a Backend,
        (band, zero): ((f64, f64), f64),
    ) -> Result<impl FnMut(u32) -> Result<f64, BackendError> + 'a, BackendError> {
        let d = relations(&self.topology);
        let edges = count32(self.stats.edges)?;
        let mut partials = b.zeros::<u32>(2 * blocks(edges) as usize)?;
        Ok(move |what| {
            d.edge_measure(
                b,
                (&self.positions, edges),
                what,
                (band, zero),
                &mut partials,
            )
        })
    }

    /// Faces of zero area: height over the longest side at most
    /// `zero_height` times that side (as `cavity::defects::is_zero_area`
    /// with `cavity::defects::ZERO_HEIGHT`).
    ///
    /// # Errors
    /// A failed allocation, launch or copy.
    pub fn zero_area_faces(&self, b: &Backend, zero_height: f64) -> Result<usize, BackendError> {
        Ok(self.face_measure(b, measure::ZERO_AREA, zero_height, None)? as usize)
    }

    /// The smallest interior angle of any face, in degrees (180 for no
    /// face).
    ///
    /// # Errors
    /// A failed allocation, launch or copy.
    pub fn smallest_angle(&self, b: &Backend) -> Result<f64, BackendError> {
        self.face_measure(b, measure::ANGLE_MIN, 0.0, None)
    }

    /// The smallest interior angle, in degrees, of the faces with no
    /// vertex that is a sharp boundary corner (on a boundary edge, and
    /// either not on exactly two or with its faces' angles summing to less
    /// than `sharp_degrees`) or `excluded` (a flag per vertex on the
    /// backend, as [`SurveyOn::small_components`] gives; `None`: none);
    /// 180 for no such face.
    ///
    /// # Errors
    /// A failed allocation, launch or copy.
    ///
    /// # Panics
    /// When `excluded` holds fewer flags than vertices.
    pub fn smallest_angle_away(
        &self,
        b: &Backend,
        sharp_degrees: f64,
        excluded: Option<&Buffer<u32>>,
    ) -> Result<f64, BackendError> {
        if let Some(e) = excluded {
            assert!(e.len() >= self.stats.vertices, "a flag per vertex");
        }
        let d = relations(&self.topology);
        let fv = d.fv.as_ref().expect("built from the faces");
        let nv = count32(self.stats.vertices)?;
        let mut sharp = b.zeros::<u32>(nv as usize)?;
        let params = (
            fv,
            &self.positions,
            [&d.vf_offsets, &d.vf],
            &self.boundary_at,
            nv,
            sharp_degrees,
            &mut sharp,
        );
        b.launch::<SharpCorners>(blocks(nv), (0, 0), params)?;
        let flags = [&sharp, excluded.unwrap_or(&sharp)];
        self.face_measure(b, measure::ANGLE_MIN_AWAY, 0.0, Some(flags))
    }

    /// Measure `what` over the faces, with `flags` for `ANGLE_MIN_AWAY`.
    fn face_measure(
        &self,
        b: &Backend,
        what: u32,
        zero_height: f64,
        flags: Option<[&Buffer<u32>; 2]>,
    ) -> Result<f64, BackendError> {
        let d = relations(&self.topology);
        let fv = d.fv.as_ref().expect("built from the faces");
        let faces = count32(self.stats.faces)?;
        let grid = blocks(faces);
        let mut partials = b.zeros::<u32>(2 * grid as usize)?;
        let flags = flags.unwrap_or([&self.valence, &self.valence]);
        let params = (
            fv,
            &self.positions,
            flags,
            faces,
            what,
            zero_height,
            &mut partials,
        );
        b.launch::<FaceMeasure>(grid, partial_launch_bytes(), params)?;
        combined(b, &partials, grid, what)
    }
}

//! Approximate geodesic distance from one or more source vertices by
//! parallel toplesets propagation (Romero Calla, Fuentes Perez and
//! Montenegro 2019), as RXMesh section 8.2 and the dynamic paper's section
//! 6.1 run it, with each pass sweeping its patches several times. The
//! toplesets (the vertices' hops from the nearest source, a breadth-first
//! search) are found on the GPU level by level ([`toplesets_on`]), on the
//! CPU backend by the host ([`toplesets`]); the device relaxes the
//! vertices of the toplesets the band has reached
//! (`cavity-geodesic-kernels`), and the band moves on: its end by
//! [`GeodesicSettings::advance`] toplesets per pass, its start by patch (the error-driven advance): a pass visits the
//! patches where a distance fell by more than the tolerance in the pass
//! before, their neighbours and the patches of the toplesets it adds, and
//! sweeps each of them up to [`GeodesicSettings::sweeps`] times while a
//! distance in it still falls by more than the tolerance (a block-local
//! Jacobi iteration, as the block-based fast iterative method of Jeong
//! and Whitaker 2008 runs it), so that a distance crosses a patch in one
//! pass instead of one pass per hop. Each distance carries the source it
//! comes from, and a face unfolds only two distances of one source (two
//! of different sources give a virtual source that can undercut every
//! path). Where hops and distance disagree (long and short edges side by
//! side, non-manifold fins, several sources) a patch can stop before its
//! distances settle: passes along the edges only follow (Bellman-Ford,
//! over the patches where a distance changed and their neighbours) until
//! none changes by more than [`SETTLED`] of itself, so that the result is
//! 1-Lipschitz along the edges. On a mesh whose hops follow its distances
//! they change nothing.
//!
//! An application crate on cavity's public model: the per-vertex
//! computation is in `cavity-geodesic-kernels`, its PTX
//! this crate's own module ([`PTX`]). [`geodesic_distance`] takes a [`TriMesh`] at any
//! scale (it works in the unit box, `cavity::normalize`).

pub mod bench;

pub use cavity_geodesic_kernels::{
    GeodesicKeep, GeodesicRelax, TOPLESET_THREADS, along_edges, update_step,
};

use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use rayon::prelude::*;

use cavity::attributes::{Attr, AttributeLayout, AttributeSet};
use cavity::backend::buffer::Buffer;
use cavity::backend::{Backend, BackendError, PlaceError, TopologyOn, VertexFacesOn};
use cavity::computation::ComputationError;
use cavity::dynamic::CapacityFactors;
use cavity::normalize::Normalization;
use cavity::rounds::{ForEach, Rounds, RunError};
use cavity::settings::{NamesSettings, Setting};
use cavity::topology::Topology;
use cavity::{MeshError, TriMesh};

cavity::kernel_module!("cavity_geodesic_kernels.ptx");

use cavity_geodesic_kernels::ToplesetLevel;

/// The propagation's settings, as its errors name them.
pub mod setting {
    use cavity::settings::Setting;

    /// The convergence tolerance ([`crate::GeodesicSettings::tolerance`]).
    pub const TOLERANCE: Setting = Setting::new("tolerance", "the tolerance");

    /// The sweeps per pass ([`crate::GeodesicSettings::sweeps`]).
    pub const SWEEPS: Setting = Setting::new("sweeps", "the sweeps per pass");
}

/// Errors of [`geodesic_distance`].
#[derive(Debug, thiserror::Error)]
pub enum GeodesicError {
    /// The mesh has a non-finite coordinate or a bad face (the message
    /// names it).
    #[error(transparent)]
    Mesh(#[from] MeshError),
    /// No source was given.
    #[error("no source vertex given")]
    NoSource,
    /// A source is not a vertex of the mesh.
    #[error("source vertex {vertex} is out of range: the mesh has {vertices} vertices")]
    Source {
        /// The source given.
        vertex: u32,
        /// Vertices of the mesh.
        vertices: usize,
    },
    /// The tolerance is not in `(0, 1)`.
    #[error("the tolerance must be above 0 and below 1, got {0}")]
    Tolerance(f32),
    /// The sweeps per pass are not in `1..=MAX_SWEEPS`.
    #[error("the sweeps per pass must be from 1 to {MAX_SWEEPS}, got {0}")]
    Sweeps(u32),
    /// Laying the mesh out, the run, the GPU or an attribute failed.
    #[error(transparent)]
    Computation(#[from] ComputationError),
}

cavity::computation_error_from!(GeodesicError::Computation);

impl NamesSettings for GeodesicError {
    fn settings(&self) -> Vec<Setting> {
        match self {
            GeodesicError::Computation(e) => e.settings(),
            GeodesicError::Tolerance(_) => vec![setting::TOLERANCE],
            GeodesicError::Sweeps(_) => vec![setting::SWEEPS],
            _ => Vec::new(),
        }
    }
}

cavity::names_settings!(GeodesicError);

/// The relative change below which the passes after the band's stop:
/// a few units in the last place of an `f32`.
pub const SETTLED: f32 = 1e-6;

/// The most sweeps per pass ([`GeodesicSettings::sweeps`]).
pub const MAX_SWEEPS: u32 = 256;

/// What the propagation does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GeodesicSettings {
    /// Relative change below which a vertex has converged (in `(0, 1)`;
    /// RXMesh uses `1e-3`): a patch where no distance fell by more, and
    /// whose neighbours' did not, is not visited again.
    pub tolerance: f32,
    /// Faces per patch at most.
    pub patch_size: u32,
    /// Sweeps of each patch per pass, at most (`1..=MAX_SWEEPS`; 1 is
    /// RXMesh's one relaxation per pass); the band's end moves
    /// [`GeodesicSettings::advance`] toplesets per pass.
    pub sweeps: u32,
}

impl Default for GeodesicSettings {
    /// Tolerance `1e-3`, patches of 512 faces, 16 sweeps per pass.
    fn default() -> Self {
        GeodesicSettings {
            tolerance: 1e-3,
            patch_size: 512,
            sweeps: 16,
        }
    }
}

impl GeodesicSettings {
    /// Toplesets the band's end moves per pass: half the sweeps (at least
    /// one).
    pub fn advance(&self) -> u32 {
        (self.sweeps / 2).max(1)
    }

    /// Checks the settings.
    ///
    /// # Errors
    /// [`GeodesicError::Tolerance`] for a tolerance not in `(0, 1)`,
    /// [`GeodesicError::Sweeps`] for sweeps not in `1..=MAX_SWEEPS`.
    pub fn check(&self) -> Result<(), GeodesicError> {
        let t = self.tolerance;
        if t.is_nan() || t <= 0.0 || t >= 1.0 {
            return Err(GeodesicError::Tolerance(t));
        }
        if !(1..=MAX_SWEEPS).contains(&self.sweeps) {
            return Err(GeodesicError::Sweeps(self.sweeps));
        }
        Ok(())
    }
}

/// What a propagation did.
#[derive(Clone, Debug, PartialEq)]
pub struct GeodesicReport {
    /// Passes run while the band moved (each over the patches where a
    /// distance changed by more than the tolerance, their neighbours and
    /// those of the toplesets the band added).
    pub passes: u32,
    /// Passes along the edges after the band's (the first over every
    /// patch, the others over the patches where a distance changed and
    /// their neighbours), the last of which changed no vertex by more than
    /// [`SETTLED`] of itself (at most one per reached vertex; a few on a
    /// mesh whose hops follow its distances).
    pub settling_passes: u32,
    /// Toplesets (the largest hop count plus one).
    pub toplesets: u32,
    /// Vertices no source reaches (distance infinity).
    pub unreachable: usize,
    /// Seconds of the passes (band and settling, each with its marked
    /// patches taken), without finding the toplesets, patching and the
    /// transfers.
    pub propagation_seconds: f64,
    /// Device memory of the dynamic mesh with the propagation's
    /// attributes, bytes per face.
    pub bytes_per_face: f64,
    /// The device that ran it.
    pub device: String,
}

/// The toplesets of a mesh from its sources ([`toplesets`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toplesets {
    /// Per vertex, its hops from the nearest source along edges
    /// (`u32::MAX` for a vertex no source reaches).
    pub level: Vec<u32>,
    /// Per topleset, its number of vertices.
    pub sizes: Vec<u32>,
}

/// Toplesets of at least this many vertices are searched from in
/// parallel, smaller ones on one thread without atomic read-modify-writes
/// (a topleset of the dragon at 5 M faces has about 2 000 vertices).
const PARALLEL_TOPLESET: usize = 16_384;

/// Toplesets of `mesh` (with its topology, `Topology::new(mesh)`) from
/// `sources` (in range), by a breadth-first search one topleset at a time,
/// each large one in parallel (the result does not depend on the
/// threads).
pub fn toplesets(mesh: &TriMesh, topology: &Topology, sources: &[u32]) -> Toplesets {
    let n = mesh.positions.len();
    let level: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(u32::MAX)).collect();
    let mut frontier = Vec::new();
    for &s in sources {
        if level[s as usize].swap(0, Relaxed) == u32::MAX {
            frontier.push(s);
        }
    }
    let mut sizes = Vec::new();
    while !frontier.is_empty() {
        sizes.push(frontier.len() as u32);
        let next = sizes.len() as u32;
        let corners = |v: u32| {
            topology
                .vertex_faces(v)
                .iter()
                .flat_map(|&f| mesh.faces[f as usize])
        };
        let mut found: Vec<u32> = if frontier.len() >= PARALLEL_TOPLESET {
            frontier
                .par_iter()
                .flat_map_iter(|&v| {
                    corners(v).filter(|&u| {
                        level[u as usize]
                            .compare_exchange(u32::MAX, next, Relaxed, Relaxed)
                            .is_ok()
                    })
                })
                .collect()
        } else {
            // Alone on the arrays: plain loads and stores, no atomic
            // read-modify-write.
            let mut found = Vec::new();
            for &v in &frontier {
                for u in corners(v) {
                    if level[u as usize].load(Relaxed) == u32::MAX {
                        level[u as usize].store(next, Relaxed);
                        found.push(u);
                    }
                }
            }
            found
        };
        found.sort_unstable();
        frontier = found;
    }
    Toplesets {
        level: level.into_iter().map(AtomicU32::into_inner).collect(),
        sizes,
    }
}

/// Levels [`toplesets_on`] launches between two reads of the last one's
/// size: each read waits for the device (longer than a level takes), and
/// the levels past the last topleset find nothing.
const LEVELS_PER_READ: u32 = 16;

/// The most blocks a level of [`toplesets_on`] launches (a grid-stride
/// loop covers larger toplesets): a few a multiprocessor.
pub const MAX_TOPLESET_BLOCKS: u32 = 1024;

/// The toplesets of `mesh` (with its topology for `backend`,
/// `Backend::topology_on`, `TopologyOn::of`) from `sources` (in range) on
/// `backend` (issue 55 item 5): the same as [`toplesets`], found by a
/// level-synchronous breadth-first search on the device, one launch of
/// `cavity_geodesic_kernels::ToplesetLevel` per topleset (and up to 15
/// past the last, which find nothing), the sizes kept on the device and
/// the new ones read every 16 levels; the levels are copied back at the
/// end. The search reads the vertex-face relation and the faces where the
/// topology holds them on the backend (`TopologyOn::vertex_faces_on`: one
/// built there), else uploads them.
///
/// # Errors
/// A failed launch or copy; the GPU's kernels missing.
pub fn toplesets_on(
    backend: &Backend,
    mesh: &TriMesh,
    topology: &TopologyOn<'_>,
    sources: &[u32],
) -> Result<Toplesets, BackendError> {
    crate::add_kernels(backend)?;
    let d = backend;
    let n = mesh.num_vertices();
    let mut level = vec![u32::MAX; n];
    let mut visited = vec![0u32; n.div_ceil(32)];
    let mut first = Vec::new();
    for &s in sources {
        if level[s as usize] == u32::MAX {
            level[s as usize] = 0;
            visited[s as usize / 32] |= 1 << (s % 32);
            first.push(s);
        }
    }
    if first.is_empty() {
        return Ok(Toplesets {
            level,
            sizes: Vec::new(),
        });
    }
    // The vertex-face relation and the faces where the backend holds
    // them (a topology built there), else uploaded.
    let uploaded: [Buffer<u32>; 3];
    let uploaded_faces: Buffer<u32>;
    let (offsets, vf, faces) = match topology.vertex_faces_on() {
        Some(VertexFacesOn {
            offsets,
            faces,
            corners: Some(corners),
        }) => (offsets, faces, corners),
        Some(VertexFacesOn { offsets, faces, .. }) => {
            uploaded_faces = d.upload(mesh.faces.as_flattened())?;
            (offsets, faces, &uploaded_faces)
        }
        None => {
            let host = topology.host(d)?;
            uploaded = [
                d.upload(&host.vf_offsets)?,
                d.upload(&host.vf)?,
                d.upload(mesh.faces.as_flattened())?,
            ];
            (&uploaded[0], &uploaded[1], &uploaded[2])
        }
    };
    let first_on = d.upload(&first)?;
    let mut visited = d.upload(&visited)?;
    let mut level = d.upload(&level)?;
    let mut queue = d.zeros::<u32>(n)?;
    // Room for a place and a size a topleset, up to one a vertex and the
    // levels a batch launches past the last.
    let mut bounds = d.zeros::<u32>(2 * (n + LEVELS_PER_READ as usize + 2))?;
    let count = first.len() as u32;
    let (mut at, mut reached) = (0u32, count);
    let mut sizes = vec![count];
    loop {
        // One thread a vertex, and no topleset is larger than the
        // vertices not reached yet.
        let grid = (n as u32 - reached)
            .div_ceil(TOPLESET_THREADS)
            .clamp(1, MAX_TOPLESET_BLOCKS);
        for _ in 0..LEVELS_PER_READ {
            let params = (
                [offsets, vf, faces, &first_on],
                at,
                count,
                &mut visited,
                &mut level,
                &mut queue,
                &mut bounds,
            );
            d.launch::<ToplesetLevel>(grid, (0, 0), params)?;
            at += 1;
        }
        // The places and sizes of the toplesets this batch found.
        let first = sizes.len();
        let read = d.read_range(&bounds, 2 * first..2 * at as usize + 2)?;
        let found: Vec<u32> = (first..=at as usize)
            .map(|l| read[2 * (l - first) + 1])
            .take_while(|&size| size > 0)
            .collect();
        reached += found.iter().sum::<u32>();
        let done = found.len() < (at as usize + 1 - sizes.len());
        sizes.extend(found);
        if done {
            break;
        }
    }
    Ok(Toplesets {
        level: d.download(level, n)?,
        sizes,
    })
}

/// The range of toplesets each patch owns vertices of, so that a pass
/// visits only the patches with a vertex in its band or behind it.
struct PatchLevels {
    /// Per patch slot, the smallest and largest topleset of its owned
    /// vertices other than the sources and the unreachable (`None`: none).
    range: Vec<Option<(u32, u32)>>,
}

impl PatchLevels {
    /// From each vertex's owner patch and topleset, in element order.
    fn new(owners: &[u32], levels: &[[u32; 1]]) -> Self {
        let slots = owners.iter().max().map_or(0, |&p| p as usize + 1);
        let mut range: Vec<Option<(u32, u32)>> = vec![None; slots];
        for (&p, &[level]) in owners.iter().zip(levels) {
            if level != 0 && level != u32::MAX {
                let r = &mut range[p as usize];
                *r = Some(r.map_or((level, level), |(lo, hi)| (lo.min(level), hi.max(level))));
            }
        }
        PatchLevels { range }
    }

    /// The patches that own a vertex of a topleset in `[lo, hi)`,
    /// ascending.
    fn with_levels(&self, lo: u32, hi: u32) -> Vec<u32> {
        (0..self.range.len() as u32)
            .filter(|&p| self.range[p as usize].is_some_and(|(a, b)| a < hi && b >= lo))
            .collect()
    }

    /// `marked`, their `neighbours` and `also`, those with a vertex of a
    /// topleset, ascending, each once.
    fn around(&self, marked: &[u32], neighbours: &[Vec<u32>], also: Vec<u32>) -> Vec<u32> {
        let mut visit: Vec<u32> = marked
            .iter()
            .flat_map(|&p| std::iter::once(p).chain(neighbours[p as usize].iter().copied()))
            .filter(|&p| self.range.get(p as usize).is_some_and(Option::is_some))
            .chain(also)
            .collect();
        visit.sort_unstable();
        visit.dedup();
        visit
    }
}

/// The propagation's vertex attributes (names `geodesic_level`, ...): each
/// vertex's topleset, its distance and the one a relaxation computes, and
/// the source each comes from (read and written, ping-pong).
#[derive(Clone, Copy, Debug, AttributeSet)]
#[attributes(prefix = "geodesic", kind = "vertex")]
pub struct GeodesicAttributes {
    /// The vertex's topleset (hops from the nearest source).
    pub level: Attr<u32, 1>,
    /// The distance so far.
    pub distance: Attr<f32, 1>,
    /// The distance a relaxation computes.
    pub relaxed: Attr<f32, 1>,
    /// The source the distance comes from.
    pub source: Attr<u32, 1>,
    /// The source of the relaxed distance.
    pub source_next: Attr<u32, 1>,
}

/// The approximate geodesic distance of every vertex of `mesh` from the
/// nearest of `sources`, in input order and model units: 0 at the sources,
/// `f32::INFINITY` at a vertex no source reaches (another component, an
/// isolated vertex). Patches of at most `settings.patch_size` faces.
///
/// # Errors
/// A mesh with a non-finite coordinate or a bad face
/// ([`TriMesh::validate`]); no source or one out of range; a tolerance out
/// of range; a patch size out of range or a patch too large; a failed GPU
/// run.
pub fn geodesic_distance(
    mesh: &TriMesh,
    sources: &[u32],
    settings: &GeodesicSettings,
    backend: &Backend,
) -> Result<(Vec<f32>, GeodesicReport), GeodesicError> {
    checked(mesh, sources, settings)?;
    let topology = backend.topology_on(mesh)?;
    geodesic_distance_checked(mesh, &topology, sources, settings, backend)
}

/// [`geodesic_distance`] with the topology of `mesh` given
/// (`Topology::new(mesh)`), for a caller that has it.
///
/// # Errors
/// As [`geodesic_distance`].
pub fn geodesic_distance_with(
    mesh: &TriMesh,
    topology: &Topology,
    sources: &[u32],
    settings: &GeodesicSettings,
    backend: &Backend,
) -> Result<(Vec<f32>, GeodesicReport), GeodesicError> {
    let topology = TopologyOn::of(backend, topology)?;
    geodesic_distance_on(mesh, &topology, sources, settings, backend)
}

/// [`geodesic_distance`] from the topology of `mesh` made for `backend`
/// (`Backend::topology_on`, `TopologyOn::of`): one that keeps its patches
/// (`TopologyOn::keeping_patches`) reuses those of an earlier call at the
/// same patch size. On the GPU the toplesets read its vertex-face relation
/// on the device ([`toplesets_on`]); on the CPU backend its topology on
/// the host (one built by the kernels copied there for them).
///
/// # Errors
/// As [`geodesic_distance`].
pub fn geodesic_distance_on(
    mesh: &TriMesh,
    topology: &TopologyOn<'_>,
    sources: &[u32],
    settings: &GeodesicSettings,
    backend: &Backend,
) -> Result<(Vec<f32>, GeodesicReport), GeodesicError> {
    checked(mesh, sources, settings)?;
    geodesic_distance_checked(mesh, topology, sources, settings, backend)
}

/// Errors where [`geodesic_distance`] would: a mesh
/// [`TriMesh::validate`] rejects, no source or one out of range, settings
/// out of range.
fn checked(
    mesh: &TriMesh,
    sources: &[u32],
    settings: &GeodesicSettings,
) -> Result<(), GeodesicError> {
    mesh.validate()?;
    if sources.is_empty() {
        return Err(GeodesicError::NoSource);
    }
    if let Some(&vertex) = sources.iter().find(|&&s| s as usize >= mesh.num_vertices()) {
        return Err(GeodesicError::Source {
            vertex,
            vertices: mesh.num_vertices(),
        });
    }
    settings.check()
}

/// [`geodesic_distance_on`] of a mesh, sources and settings checked
/// ([`checked`]).
fn geodesic_distance_checked(
    mesh: &TriMesh,
    topology: &TopologyOn<'_>,
    sources: &[u32],
    settings: &GeodesicSettings,
    backend: &Backend,
) -> Result<(Vec<f32>, GeodesicReport), GeodesicError> {
    let t = settings.tolerance;
    crate::add_kernels(backend)?;
    // On the GPU by the device's search, while the host normalizes the
    // mesh; on the CPU backend by the host's, whose small toplesets run on
    // one thread without launches.
    let (toplesets, (normalization, normalized)) = cavity::backend::beside(
        || match backend {
            Backend::Cuda(_) => toplesets_on(backend, mesh, topology, sources),
            Backend::Cpu(_) => Ok(toplesets(mesh, &*topology.host(backend)?, sources)),
        },
        || {
            let normalization = Normalization::of(mesh);
            (normalization, normalization.apply(mesh))
        },
    );
    let Toplesets { level, sizes } = toplesets?;
    let mut layout = AttributeLayout::new();
    let GeodesicAttributes {
        level: level_attr,
        distance,
        relaxed,
        source,
        source_next,
    } = GeodesicAttributes::declare(&mut layout)?;
    // On the GPU patched and laid out on the device, where the layout
    // stays: the start is written there by input index, and only the
    // distances are read back.
    let placed = backend
        .place_on(
            &normalized,
            topology,
            settings.patch_size,
            CapacityFactors::STATIC,
            &layout,
        )
        .map_err(PlaceError::into_either::<GeodesicError>)?;
    let bytes_per_face = placed.bytes_per_face();
    // By input vertex: its topleset, its start (0 on a source, infinite
    // elsewhere) and its own source (a source's first position in
    // `sources`).
    let mut own_source = vec![u32::MAX; mesh.num_vertices()];
    for (k, &s) in sources.iter().enumerate().rev() {
        own_source[s as usize] = k as u32;
    }
    let by_input: Vec<[u32; 1]> = level.par_iter().map(|&l| [l]).collect();
    let start: Vec<[f32; 1]> = level
        .par_iter()
        .map(|&l| [if l == 0 { 0.0 } else { f32::INFINITY }])
        .collect();
    let source_start: Vec<[u32; 1]> = level
        .par_iter()
        .zip(&own_source)
        .map(|(&l, &own)| [if l == 0 { own } else { u32::MAX }])
        .collect();
    let count = sizes.len() as u32;
    let ran = backend.run_placed_without_mesh(placed, |r| -> Result<_, GeodesicError> {
        r.set_values_by_input(&level_attr, &by_input)?;
        r.set_values_by_input(&distance, &start)?;
        r.set_values_by_input(&relaxed, &start)?;
        r.set_values_by_input(&source, &source_start)?;
        r.set_values_by_input(&source_next, &source_start)?;
        // Each patch's toplesets, from its owned vertices'.
        let (sources_of, owners) = r.owner_patches(cavity::Kind::Vertex)?;
        let levels: Vec<[u32; 1]> = sources_of
            .par_iter()
            .map(|&s| [level[s as usize]])
            .collect();
        let patches = PatchLevels::new(&owners, &levels);
        let neighbours = r.neighbour_patches()?;
        let propagation = Instant::now();
        let (from, to) = (distance, relaxed);
        let sweeps = settings.sweeps;
        // The band's end moves half the sweeps a pass: a front that
        // outruns what the sweeps settle leaves rough distances to
        // correct again (at /4: 0.11 s at 16 sweeps and 8 toplesets,
        // 0.24 s at 32 and 16, 0.18 s at 16 and 4).
        let advance = settings.advance();
        let relax = |r: &mut cavity::backend::AnyRounds<'_>,
                     band_end: u32,
                     settling: bool,
                     patches: &[u32]|
         -> Result<Vec<u32>, RunError> {
            // The settling passes relax along the edges only, until no
            // vertex changes by more than `SETTLED` of itself.
            let pass = GeodesicRelax {
                level: level_attr,
                from,
                to,
                source_from: source,
                source_to: source_next,
                band_end,
                tolerance: if settling { SETTLED } else { t },
                edges_only: u32::from(settling),
                sweeps,
            };
            r.for_each_in(&pass, patches)?;
            r.for_each_in(&GeodesicKeep { pass }, patches)?;
            r.take_marked_patches()
        };
        // Each pass: the patches where a distance fell by more than the
        // tolerance and their neighbours, and those of the toplesets
        // the band's end adds.
        let beyond: u32 = sizes.iter().skip(1).sum();
        let (mut j, mut passes) = (1u32.min(count), 0u32);
        let mut marked = Vec::new();
        r.take_marked_patches()?;
        while passes <= count + beyond {
            let end = j.saturating_add(advance).min(count);
            let visit = patches.around(&marked, &neighbours, patches.with_levels(j, end));
            if visit.is_empty() {
                break;
            }
            passes += 1;
            marked = relax(r, end, false, &visit)?;
            j = end;
        }
        // The settling passes: the first over every patch with a
        // vertex of a topleset, each next one over the patches where a
        // distance changed by more than `SETTLED` and their neighbours.
        let mut settling = 0;
        let mut visit = patches.with_levels(1, count);
        while count > 1 && settling <= beyond && !visit.is_empty() {
            settling += 1;
            let marked = relax(r, count, true, &visit)?;
            visit = patches.around(&marked, &neighbours, Vec::new());
        }
        // Taking the marks waited for the last pass.
        let seconds = propagation.elapsed().as_secs_f64();
        Ok((passes, settling, seconds, r.owned_values(&from)?))
    })?;
    let (passes, settling_passes, propagation_seconds, (sources_of, values)) = ran.value;
    let mut distance = vec![f32::INFINITY; mesh.num_vertices()];
    for (&s, &[d]) in sources_of.iter().zip(&values) {
        distance[s as usize] = (f64::from(d) * normalization.scale) as f32;
    }
    for &s in sources {
        distance[s as usize] = 0.0;
    }
    let unreachable = distance.iter().filter(|d| d.is_infinite()).count();
    Ok((
        distance,
        GeodesicReport {
            passes,
            settling_passes,
            toplesets: count,
            unreachable,
            propagation_seconds,
            bytes_per_face,
            device: ran.device,
        },
    ))
}

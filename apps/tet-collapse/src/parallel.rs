//! The parallel collapse on a backend (Algorithm 1; kernels in
//! `cavity_tet_collapse_kernels::iteration`): every iteration rebuilds the
//! stars, the boundary classes and the edges on the device by count, scan
//! and fill, finds the admissible candidates, resolves conflicts in the
//! paper's two passes, and applies the winners by scans and compaction.
//! The host reads three counts per iteration (edges, removed vertices,
//! removed tetrahedra) and, per round of the second conflict pass, one
//! flag, and nothing else until the end; the stages are timed by marks on
//! the backend's queue (`Backend::mark`: CUDA events on the GPU) read
//! after the last iteration.

use cavity::backend::buffer::Buffer;
use cavity::backend::{Backend, BackendError, Mark};
use cavity_tet_collapse_kernels::blocks;
use cavity_tet_collapse_kernels::greedy::{GreedyDecide, GreedyIndices, GreedyKeys};
use cavity_tet_collapse_kernels::iteration::{
    CandidateSettings, CandidatesOf, Classify, CompactTets, CostsOf, CountEdges, CountStars,
    CriterionKernels, Decide, FillEdges, FillStars, MarkBoundary, Remap, RemoveTets, Settle,
    SortStars, TetConflicts, VertexCosts, VertexIndices, Winners,
};

use crate::{Conflicts, Iteration, Settings, TetMesh};

/// What a parallel run reports.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParallelReport {
    /// Each iteration's collapses and the tetrahedra left.
    pub iterations: Vec<Iteration>,
    /// Seconds rebuilding the stars, boundary and edges (the rebuild the
    /// paper names its bottleneck), summed over the iterations.
    pub rebuild_seconds: f64,
    /// The first iteration's share of `rebuild_seconds`: building the
    /// input's stars, boundary and edges.
    pub build_seconds: f64,
    /// Seconds finding the candidates and their admissibility.
    pub candidate_seconds: f64,
    /// Seconds resolving conflicts (both passes).
    pub conflict_seconds: f64,
    /// Seconds applying the collapses (scans, placement, compaction).
    pub apply_seconds: f64,
    /// Seconds building the collapsed mesh's boundary operators ∂1-∂3 on
    /// the device (`crate::operators::collapse_to_resident`; zero when
    /// the mesh is copied back instead).
    pub operator_seconds: f64,
    /// Rounds of the second conflict pass, summed over the iterations (one
    /// per iteration with [`Conflicts::Gautron`]).
    pub conflict_rounds: u32,
    /// The backend's name.
    pub device: String,
}

/// The mesh on the backend between iterations.
pub(crate) struct Resident {
    /// Four vertices per tetrahedron.
    pub(crate) tets: Buffer<u32>,
    /// Three coordinates per vertex.
    pub(crate) positions: Buffer<f32>,
    /// The field: one value per vertex, or none.
    pub(crate) values: Buffer<f32>,
    /// The boundary classes, once classified.
    pub(crate) class: Option<Buffer<u32>>,
    /// Vertices.
    pub(crate) vertices: u32,
    /// Tetrahedra.
    pub(crate) cells: u32,
}

/// `mesh` (with its per-vertex field `values`, empty for none)
/// collapsed on `backend` with `criterion` and `settings`, and the field
/// at the kept vertices. The criterion is a built-in one
/// (`kernels::iteration::Builtin`) or a user's whose kernels its kernel
/// crate declares (`kernels::criterion_kernels!`), that crate's PTX added
/// to `backend` first.
///
/// # Errors
/// A failed launch or copy ([`BackendError`]); the GPU's kernels missing.
pub fn collapse_parallel<C: CriterionKernels + bytemuck::Pod>(
    backend: &Backend,
    mesh: &TetMesh,
    values: &[f32],
    criterion: C,
    settings: &Settings,
) -> Result<(TetMesh, Vec<f32>, ParallelReport), BackendError> {
    collapse_parallel_observed(backend, mesh, values, criterion, settings, None)
}

/// [`collapse_parallel`], calling `observe` with the mesh after every
/// iteration (copied back for it: the tests' per-iteration checks).
///
/// # Errors
/// As [`collapse_parallel`].
pub fn collapse_parallel_observed<C: CriterionKernels + bytemuck::Pod>(
    backend: &Backend,
    mesh: &TetMesh,
    values: &[f32],
    criterion: C,
    settings: &Settings,
    observe: Option<&mut dyn FnMut(&TetMesh)>,
) -> Result<(TetMesh, Vec<f32>, ParallelReport), BackendError> {
    let (out, values, _, report) =
        collapse_parallel_classes(backend, mesh, values, &[], criterion, settings, observe)?;
    Ok((out, values, report))
}

/// [`collapse_parallel_observed`] starting from the boundary classes
/// `classes` (one per vertex, `kernels::boundary`; empty for none) and
/// returning the classes of the vertices left with the rest, so that runs
/// in sequence keep raising them as one run does (a corner stays a
/// corner: `crate::simplify`'s rounds).
///
/// # Errors
/// As [`collapse_parallel`].
pub fn collapse_parallel_classes<C: CriterionKernels + bytemuck::Pod>(
    backend: &Backend,
    mesh: &TetMesh,
    values: &[f32],
    classes: &[u32],
    criterion: C,
    settings: &Settings,
    observe: Option<&mut dyn FnMut(&TetMesh)>,
) -> Result<(TetMesh, Vec<f32>, Vec<u32>, ParallelReport), BackendError> {
    let (r, report) = run(backend, mesh, values, classes, criterion, settings, observe)?;
    let d = backend;
    let out = download(d, &r)?;
    let values = if values.is_empty() {
        Vec::new()
    } else {
        d.download(r.values, r.vertices as usize)?
    };
    let classes = match r.class {
        Some(class) => d.download(class, r.vertices as usize)?,
        None => Vec::new(),
    };
    Ok((out, values, classes, report))
}

/// The iterations of [`collapse_parallel_classes`], leaving the mesh on
/// the backend.
///
/// # Errors
/// As [`collapse_parallel`].
pub(crate) fn run<C: CriterionKernels + bytemuck::Pod>(
    backend: &Backend,
    mesh: &TetMesh,
    values: &[f32],
    classes: &[u32],
    criterion: C,
    settings: &Settings,
    observe: Option<&mut dyn FnMut(&TetMesh)>,
) -> Result<(Resident, ParallelReport), BackendError> {
    crate::add_kernels(backend)?;
    let d = backend;
    let r = Resident {
        tets: d.upload(mesh.tets.as_flattened())?,
        positions: d.upload(mesh.positions.as_flattened())?,
        values: d.upload(values)?,
        class: if classes.is_empty() {
            None
        } else {
            Some(d.upload(classes)?)
        },
        vertices: mesh.positions.len() as u32,
        cells: mesh.tets.len() as u32,
    };
    run_resident(d, r, criterion, settings, observe)
}

/// The iterations on a mesh already on the backend (its field, if any, in
/// `r.values`).
///
/// # Errors
/// As [`collapse_parallel`].
pub(crate) fn run_resident<C: CriterionKernels + bytemuck::Pod>(
    d: &Backend,
    mut r: Resident,
    criterion: C,
    settings: &Settings,
    mut observe: Option<&mut dyn FnMut(&TetMesh)>,
) -> Result<(Resident, ParallelReport), BackendError> {
    let has_values = !r.values.is_empty();
    let mut report = ParallelReport {
        device: d.name(),
        ..ParallelReport::default()
    };
    let target = settings.target_cells.unwrap_or(0) as u32;
    let mut marks = Vec::new();
    while (report.iterations.len() as u32) < settings.max_iterations && r.cells > target {
        let (collapses, stages) = iterate(d, &mut r, has_values, criterion, settings, &mut report)?;
        marks.push(stages);
        if let Some(observe) = observe.as_mut() {
            observe(&download(d, &r)?);
        }
        report.iterations.push(Iteration {
            collapses: collapses as usize,
            cells: r.cells as usize,
        });
        if collapses == 0 || collapses as usize <= settings.epsilon_c {
            break;
        }
    }
    for (i, m) in marks.iter().enumerate() {
        let rebuild = m.rebuilt.seconds_since(&m.start)?;
        if i == 0 {
            report.build_seconds = rebuild;
        }
        report.rebuild_seconds += rebuild;
        report.candidate_seconds += m.candidates.seconds_since(&m.rebuilt)?;
        report.conflict_seconds += m.resolved.seconds_since(&m.candidates)?;
        if let Some(applied) = &m.applied {
            report.apply_seconds += applied.seconds_since(&m.resolved)?;
        }
    }
    Ok((r, report))
}

/// The marks between an iteration's stages ([`Backend::mark`]).
struct StageMarks {
    /// Before the rebuild.
    start: Mark,
    /// After the rebuild and the classes.
    rebuilt: Mark,
    /// After the candidates and their admissibility.
    candidates: Mark,
    /// After both conflict passes.
    resolved: Mark,
    /// After the apply (`None` when nothing collapsed).
    applied: Option<Mark>,
}

/// The mesh of `r`, copied to the host.
fn download(d: &Backend, r: &Resident) -> Result<TetMesh, BackendError> {
    let positions = d.read_back(&r.positions, 3 * r.vertices as usize)?;
    let tets = d.read_back(&r.tets, 4 * r.cells as usize)?;
    Ok(TetMesh {
        positions: positions.as_chunks::<3>().0.to_vec(),
        tets: tets.as_chunks::<4>().0.to_vec(),
    })
}

/// What the device rebuilds of a mesh before each iteration.
pub(crate) struct Connectivity {
    /// The stars and the edge rows.
    pub(crate) rows: Rows,
    /// 1 per vertex on a boundary triangle.
    pub(crate) boundary: Buffer<u32>,
    /// Per tetrahedron, bit `i` for its boundary face `i`
    /// (`kernels::iteration::FACES`).
    pub(crate) faces: Buffer<u32>,
}

/// The stars and the edges of a mesh on the device: what both the
/// iteration and the operators' build (`crate::operators`) read.
pub(crate) struct Rows {
    /// The stars: `vertices + 1` offsets into `entries`.
    pub(crate) offsets: Buffer<u32>,
    /// The stars' tetrahedra, each row ascending.
    pub(crate) entries: Buffer<u32>,
    /// The edge rows: `vertices + 1` offsets into `edges`.
    pub(crate) edge_offsets: Buffer<u32>,
    /// The edges `(a, b)`, `a < b`, in rows by `a`, each row by `b`.
    pub(crate) edges: Buffer<u32>,
    /// The edges.
    pub(crate) edge_count: u32,
}

/// The stars, boundary and edges of the `m` tetrahedra `tets` over `n`
/// vertices at `positions` (with the field `values`) on the device
/// ([`rows`], with the boundary faces marked between: each face's
/// tetrahedra counted in a star). Reads one count back (the edges).
///
/// # Errors
/// A failed launch or copy.
fn connectivity(
    d: &Backend,
    tets: &Buffer<u32>,
    positions: &Buffer<f32>,
    values: &Buffer<f32>,
    n: u32,
    m: u32,
) -> Result<Connectivity, BackendError> {
    let mut boundary = d.zeros::<u32>(n as usize)?;
    let mut faces = d.zeros::<u32>(m as usize)?;
    let rows = rows(d, tets, [positions, values], n, m, |stars| {
        let params = (stars, [positions, values], m, &mut faces, &mut boundary);
        d.launch::<MarkBoundary>(blocks(m), (0, 0), params)
    })?;
    Ok(Connectivity {
        rows,
        boundary,
        faces,
    })
}

/// The stars (count, scan, fill and a per-row sort) and the edges (count,
/// scan and fill of each vertex's higher neighbours) of the `m`
/// tetrahedra `tets` over `n` vertices; `between` runs after the stars
/// with the mesh's words (`kernels::iteration::Arrays`, the star offsets
/// standing in for the boundary marks, which neither the edges nor it
/// read). Reads one count back (the edges).
///
/// # Errors
/// A failed launch or copy.
pub(crate) fn rows(
    d: &Backend,
    tets: &Buffer<u32>,
    geometry: [&Buffer<f32>; 2],
    n: u32,
    m: u32,
    between: impl FnOnce([&Buffer<u32>; 4]) -> Result<(), BackendError>,
) -> Result<Rows, BackendError> {
    let mut offsets = d.zeros::<u32>(n as usize + 1)?;
    d.launch::<CountStars>(blocks(4 * m), (0, 0), (tets, m, &mut offsets))?;
    d.exclusive_scan(&mut offsets, n + 1)?;
    let mut cursor = d.zeros::<u32>(n as usize)?;
    let mut entries = d.zeros::<u32>(4 * m as usize)?;
    let fill = (tets, m, &offsets, &mut cursor, &mut entries);
    d.launch::<FillStars>(blocks(4 * m), (0, 0), fill)?;
    d.launch::<SortStars>(blocks(n), (0, 0), (&offsets, &mut entries, n))?;
    drop(cursor);
    let mesh = [tets, &offsets, &entries, &offsets];
    between(mesh)?;
    let mut edge_offsets = d.zeros::<u32>(n as usize + 1)?;
    let mut upper = d.zeros::<u32>(12 * m as usize)?;
    let params = (mesh, geometry, n, &mut edge_offsets, &mut upper);
    d.launch::<CountEdges>(blocks(n), (0, 0), params)?;
    d.exclusive_scan(&mut edge_offsets, n + 1)?;
    let e = d.element(&edge_offsets, n as usize)?;
    let mut edges = d.zeros::<u32>(2 * e as usize)?;
    let params = ([&offsets, &edge_offsets, &upper], n, &mut edges);
    d.launch::<FillEdges>(blocks(n), (0, 0), params)?;
    Ok(Rows {
        offsets,
        entries,
        edge_offsets,
        edges,
        edge_count: e,
    })
}

/// One iteration on `r`; returns the collapses and the marks between its
/// stages.
fn iterate<C: CriterionKernels + bytemuck::Pod>(
    d: &Backend,
    r: &mut Resident,
    has_values: bool,
    criterion: C,
    settings: &Settings,
    report: &mut ParallelReport,
) -> Result<(u32, StageMarks), BackendError> {
    let (n, m) = (r.vertices, r.cells);
    let start = d.mark()?;
    let rebuilt_mesh = connectivity(d, &r.tets, &r.positions, &r.values, n, m)?;
    let faces = &rebuilt_mesh.faces;
    let Rows {
        edge_offsets,
        edges,
        edge_count: e,
        ..
    } = &rebuilt_mesh.rows;
    let e = *e;
    let geometry = [&r.positions, &r.values];
    let mesh = [
        &r.tets,
        &rebuilt_mesh.rows.offsets,
        &rebuilt_mesh.rows.entries,
        &rebuilt_mesh.boundary,
    ];
    // The classes.
    let mut class = d.zeros::<u32>(n as usize)?;
    let empty = d.zeros::<u32>(0)?;
    let previous = r.class.as_ref().unwrap_or(&empty);
    let epsilons = [settings.epsilon_f, settings.epsilon_r];
    let params = (mesh, geometry, faces, previous, epsilons, n, &mut class);
    d.launch::<Classify>(blocks(n), (0, 0), params)?;
    let rebuilt = d.mark()?;
    // Costs, the candidates' list, their admissibility.
    let mut cost = d.zeros::<f32>(e as usize)?;
    let mut marks = d.zeros::<u32>(e as usize + 1)?;
    let params = (mesh, geometry, edges, criterion, e, &mut cost, &mut marks);
    d.launch::<CostsOf<C>>(blocks(e), (0, 0), params)?;
    let (list, c) = d.compact(&mut marks, None, e)?;
    drop(marks);
    let mut collapse = d.zeros::<u32>(5 * e as usize)?;
    let mut value = d.zeros::<f32>(e as usize)?;
    let candidate = CandidateSettings {
        trial: settings.trial(),
        epsilon_r: settings.epsilon_r,
        edges: c,
        pad: 0,
    };
    let params = (
        mesh,
        geometry,
        [faces, &class, edges, &list, edge_offsets],
        candidate,
        criterion,
        &mut cost,
        &mut collapse,
        &mut value,
    );
    d.launch::<CandidatesOf<C>>(blocks(c), (0, 0), params)?;
    let candidates = d.mark()?;
    let mut won = d.zeros::<u32>(e as usize)?;
    let mut affected = d.zeros::<u32>(n as usize)?;
    match settings.conflicts {
        Conflicts::TwoPass => {
            // The first pass, then the second in rounds until every
            // winner is decided.
            let mut vertex_cost = d.zeros::<u32>(n as usize)?;
            let mut vertex_index = d.zeros::<u32>(n as usize)?;
            let params = ([edges, &list], &cost, c, &mut vertex_cost);
            d.launch::<VertexCosts>(blocks(c), (0, 0), params)?;
            let params = ([edges, &list, &vertex_cost], &cost, c, &mut vertex_index);
            d.launch::<VertexIndices>(blocks(c), (0, 0), params)?;
            let aux = [edges, &list, &vertex_cost, &vertex_index];
            let params = (aux, &cost, c, &mut won, &mut affected);
            d.launch::<Winners>(blocks(c), (0, 0), params)?;
            let mut beaten = d.zeros::<u32>(e as usize)?;
            loop {
                let params = (&r.tets, m, &affected, &cost, &won, &mut beaten);
                d.launch::<TetConflicts>(blocks(m), (0, 0), params)?;
                let mut undecided = d.zeros::<u32>(1)?;
                let params = (&list, c, &mut won, &mut beaten, &mut undecided);
                d.launch::<Decide>(blocks(c), (0, 0), params)?;
                report.conflict_rounds += 1;
                if d.element(&undecided, 0)? == 0 {
                    break;
                }
            }
        }
        Conflicts::Gautron | Conflicts::Greedy => loop {
            // Rounds of the descriptors' propagation; Gautron's is one.
            let mut tet_key = d.zeros::<u32>(m as usize)?;
            let mut tet_index = d.zeros::<u32>(m as usize)?;
            let aux = [edges, &list, &won];
            let params = (mesh, geometry, aux, &cost, c, &mut tet_key);
            d.launch::<GreedyKeys>(blocks(c), (0, 0), params)?;
            let aux = [edges, &list, &won, &tet_key];
            let params = (mesh, geometry, aux, &cost, c, &mut tet_index);
            d.launch::<GreedyIndices>(blocks(c), (0, 0), params)?;
            let mut undecided = d.zeros::<u32>(1)?;
            let aux = [edges, &list, &tet_key, &tet_index];
            let params = (
                mesh,
                geometry,
                aux,
                &cost,
                c,
                &mut won,
                &mut affected,
                &mut undecided,
            );
            d.launch::<GreedyDecide>(blocks(c), (0, 0), params)?;
            report.conflict_rounds += 1;
            if settings.conflicts == Conflicts::Gautron || d.element(&undecided, 0)? == 0 {
                break;
            }
        },
    }
    let mut removed = d.zeros::<u32>(n as usize + 1)?;
    let params = (&won, &collapse, &list, c, &mut removed);
    d.launch::<Settle>(blocks(c), (0, 0), params)?;
    d.exclusive_scan(&mut removed, n + 1)?;
    let resolved = d.mark()?;
    let collapses = d.element(&removed, n as usize)?;
    let mut marks = StageMarks {
        start,
        rebuilt,
        candidates,
        resolved,
        applied: None,
    };
    if collapses == 0 {
        r.class = Some(class);
        return Ok((0, marks));
    }
    // Apply.
    let mut tet_removed = d.zeros::<u32>(m as usize + 1)?;
    let params = (&r.tets, m, &affected, &won, &collapse, &mut tet_removed);
    d.launch::<RemoveTets>(blocks(m), (0, 0), params)?;
    d.exclusive_scan(&mut tet_removed, m + 1)?;
    let gone = d.element(&tet_removed, m as usize)?;
    let (n2, m2) = (n - collapses, m - gone);
    let mut map = d.zeros::<u32>(n as usize)?;
    let mut new_positions = d.zeros::<f32>(3 * n2 as usize)?;
    let mut new_values = d.zeros::<f32>(if has_values { n2 as usize } else { 0 })?;
    let mut new_class = d.zeros::<u32>(n2 as usize)?;
    let params = (
        [&removed, &affected, &won, &collapse, &class],
        [&r.positions, &r.values, &value],
        n,
        &mut map,
        &mut new_positions,
        &mut new_values,
        &mut new_class,
    );
    d.launch::<Remap>(blocks(n), (0, 0), params)?;
    let mut new_tets = d.zeros::<u32>(4 * m2 as usize)?;
    let params = (&r.tets, m, [&tet_removed, &map], &mut new_tets);
    d.launch::<CompactTets>(blocks(m), (0, 0), params)?;
    marks.applied = Some(d.mark()?);
    *r = Resident {
        tets: new_tets,
        positions: new_positions,
        values: new_values,
        class: Some(new_class),
        vertices: n2,
        cells: m2,
    };
    Ok((collapses, marks))
}

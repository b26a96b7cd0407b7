//! The native module of the `cavity` Python package (`cavity._cavity`):
//! the library's operations on numpy arrays, behind the keyword-only
//! functions of `pysrc/cavity/__init__.py`, which checks the arrays'
//! shapes and dtypes and casts them first (vertices `float32` `(n, 3)`,
//! faces `uint32` `(m, 3)`, both C-contiguous); their values (finite
//! coordinates, indices below `n`) are checked here, in one parallel pass. Each operation copies the arrays
//! in, releases the GIL while it works, and returns new arrays.
//!
//! Errors reach Python as exceptions, never as panics: a setting out of
//! range or a mesh the library refuses as `ValueError`, a device or run
//! failure as `RuntimeError` (with the driver's message), a file that
//! cannot be read or written as `OSError` naming it. The backend of each
//! device choice (`"auto"`, `"cuda"`, `"cpu"`) is opened once per process
//! and kept: a GPU's context starts once.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

mod resident;
mod tet;

use cavity::backend::{Backend, DeviceChoice};
use cavity::defects::{Keeps, OutputError, check_output, check_output_with, count_zero_area};
use cavity::io::{Format, read_mesh, write_mesh};
use cavity::mesh::MeshError;
use cavity::patcher::DEFAULT_PATCH_SIZE;
use cavity::settings::NamesSettings;
use cavity::stats::topology_stats_with;
use cavity::topology::Topology;
use cavity::{TriMesh, defects::remove_duplicate_faces_with_topology};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;

/// The backends opened so far, with the note of how each was chosen.
type Opened = Vec<(DeviceChoice, Arc<Backend>, String)>;

static BACKENDS: Mutex<Opened> = Mutex::new(Vec::new());

/// The backend of `device` (`"auto"`, `"cuda"` or `"cpu"`), opened at the
/// first call and kept, with its name and the note of how it was chosen.
fn backend(device: &str) -> PyResult<(Arc<Backend>, String)> {
    let choice: DeviceChoice = device
        .parse()
        .map_err(|e: String| PyValueError::new_err(format!("device: {e}")))?;
    let mut opened = BACKENDS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, b, note)) = opened.iter().find(|(c, _, _)| *c == choice) {
        return Ok((Arc::clone(b), note.clone()));
    }
    let (b, note) = Backend::select(choice)
        .map_err(|e| PyRuntimeError::new_err(format!("opening the device: {e}")))?;
    let b = Arc::new(b);
    opened.push((choice, Arc::clone(&b), note.clone()));
    Ok((b, note))
}

/// The seconds of the last operation's work in Rust ([`work`]), as `f64`
/// bits.
static LAST_WORK: AtomicU64 = AtomicU64::new(0);

/// Runs an operation's work `f` with the GIL released, timed: what the
/// library does between the arrays' copy in and their copy out, the
/// Rust call a Rust program would make ([`last_work_seconds`] reads it).
fn work<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> T {
    py.detach(|| {
        let start = Instant::now();
        let out = f();
        LAST_WORK.store(start.elapsed().as_secs_f64().to_bits(), Ordering::Relaxed);
        out
    })
}

/// The seconds the last operation spent in its Rust work (the library's
/// calls, without the arrays' copies and checks): with the call's own
/// time, the cost of calling from Python (`python/bench/cost.py`).
#[pyfunction]
fn last_work_seconds() -> f64 {
    f64::from_bits(LAST_WORK.load(Ordering::Relaxed))
}

/// A mesh of checked arrays: `vertices` `(n, 3)` and `faces` `(m, 3)`,
/// both C-contiguous (the Python side makes them so), copied in parallel
/// and validated here (the Python side leaves the full passes over the
/// arrays to this one): a non-finite coordinate is a `ValueError` naming
/// `V` and the vertex, a face out of range or repeating a vertex one
/// naming `F`.
fn mesh_of(vertices: &PyReadonlyArray2<f32>, faces: &PyReadonlyArray2<u32>) -> PyResult<TriMesh> {
    let (v, f) = (
        vertices
            .as_slice()
            .map_err(|e| PyValueError::new_err(format!("V: {e}")))?,
        faces
            .as_slice()
            .map_err(|e| PyValueError::new_err(format!("F: {e}")))?,
    );
    let mut mesh = TriMesh::default();
    mesh.positions
        .par_extend(v.as_chunks::<3>().0.par_iter().copied());
    mesh.faces
        .par_extend(f.as_chunks::<3>().0.par_iter().copied());
    mesh.validate().map_err(|e| match e {
        MeshError::NonFinite { vertex, position } => PyValueError::new_err(format!(
            "V: vertex {vertex} has a coordinate that is not finite in float32 ({position:?})"
        )),
        MeshError::IndexOutOfRange {
            face,
            index,
            vertices,
        } => PyValueError::new_err(format!(
            "F: index {index} (face {face}), but V has {vertices} vertices"
        )),
        e => PyValueError::new_err(format!("F: {e}")),
    })?;
    Ok(mesh)
}

/// `mesh` without its duplicate faces (as the CLI reads a file), with its
/// topology and the number removed.
fn cleaned(mut mesh: TriMesh) -> (TriMesh, Topology, usize) {
    let (removed, topology) = remove_duplicate_faces_with_topology(&mut mesh);
    (mesh, topology, removed)
}

/// `positions` as an `(n, 3)` `float32` array.
fn vertex_array<'py>(
    py: Python<'py>,
    positions: Vec<[f32; 3]>,
) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let n = positions.len();
    positions.into_flattened().into_pyarray(py).reshape([n, 3])
}

/// `faces` as an `(m, 3)` `uint32` array.
fn face_array<'py>(py: Python<'py>, faces: Vec<[u32; 3]>) -> PyResult<Bound<'py, PyArray2<u32>>> {
    let m = faces.len();
    faces.into_flattened().into_pyarray(py).reshape([m, 3])
}

/// A setting's error as a `ValueError` naming the keyword arguments it
/// asks to change (the settings' keys are the Python keywords: `dt`,
/// `iterations`, `length`).
fn settings_error(e: impl NamesSettings + std::fmt::Display) -> PyErr {
    let keys: Vec<&str> = e.settings().into_iter().map(|s| s.key()).collect();
    if keys.is_empty() {
        PyValueError::new_err(e.to_string())
    } else {
        PyValueError::new_err(format!("{}: {e}", keys.join(", ")))
    }
}

/// An output that breaks its operation's promise (the CLI's check before
/// writing: the topology kept, no face of zero area where the input had
/// none): a `RuntimeError` saying so; `check=False` returns it unchecked.
fn rejected(e: OutputError) -> PyErr {
    PyRuntimeError::new_err(format!(
        "the result failed its check ({e}); check=False returns it unchecked"
    ))
}

/// An operation's error as a Python exception: a `ValueError` naming the
/// settings when it asks for some to change (a patch size out of range, a
/// target length that would make too many faces), else a `RuntimeError`
/// with its message (a device or run failure, the driver's message in it).
fn op_error(e: impl NamesSettings + std::fmt::Display) -> PyErr {
    if e.settings().is_empty() {
        PyRuntimeError::new_err(e.to_string())
    } else {
        settings_error(e)
    }
}

/// `mesh` as its vertex and face arrays, with the device's `name`.
fn mesh_out(py: Python<'_>, mesh: TriMesh, name: String) -> PyResult<Remeshed<'_>> {
    Ok((
        vertex_array(py, mesh.positions)?,
        face_array(py, mesh.faces)?,
        name,
    ))
}

/// The flow's settings from the keyword arguments, checked.
fn mcf_settings(
    dt: f32,
    steps: u32,
    tolerance: f32,
    max_iterations: u32,
    patch_size: u32,
) -> PyResult<cavity_mcf::McfSettings> {
    let settings = cavity_mcf::McfSettings {
        dt,
        steps,
        tolerance,
        max_iterations,
        patch_size,
        ..Default::default()
    };
    settings.check().map_err(settings_error)?;
    Ok(settings)
}

/// The filter's settings from the keyword arguments, checked.
fn denoise_settings(
    iterations: u32,
    max_hops: u32,
    patch_size: u32,
) -> PyResult<cavity_denoise::DenoiseSettings> {
    let settings = cavity_denoise::DenoiseSettings {
        iterations,
        max_hops,
        patch_size,
    };
    settings.check().map_err(settings_error)?;
    Ok(settings)
}

/// The remeshing's settings from the keyword arguments (the CLI's
/// defaults for the rest), checked: `length` in model units, or a
/// multiple of the mean edge length when `relative`.
fn remesh_settings(
    length: f64,
    relative: bool,
    iterations: u32,
    feature_angle: Option<f64>,
    keep_boundary: bool,
) -> PyResult<cavity_remesh::RemeshSettings> {
    let settings = cavity_remesh::RemeshSettings {
        length: if relative {
            cavity_remesh::TargetLength::Relative(length)
        } else {
            cavity_remesh::TargetLength::Absolute(length)
        },
        iterations,
        feature_angle,
        keep_boundary,
        ..Default::default()
    };
    settings.check().map_err(settings_error)?;
    Ok(settings)
}

/// A long call's progress: the Python callable `callback(step, what)`,
/// called with the GIL from the work as each step starts (a remeshing
/// phase, a subdivision level). What it raises is kept and raised when the
/// work ends. Work that can stop between its steps (the remeshing) asks
/// [`Progress::stop`] before each: Python's pending signals are handled
/// there (Ctrl-C's `KeyboardInterrupt`), and it stops once anything was
/// raised.
pub(crate) struct Progress {
    callback: Option<Py<PyAny>>,
    raised: Mutex<Option<PyErr>>,
}

impl Progress {
    /// The progress reported to `callback` (none for `None`).
    pub(crate) fn new(callback: Option<Py<PyAny>>) -> Self {
        Progress {
            callback,
            raised: Mutex::new(None),
        }
    }

    /// Calls the callback with `step` and `what`, keeping the first error
    /// it raises (and calling it no more after one).
    pub(crate) fn report(&self, step: u32, what: &str) {
        let Some(callback) = &self.callback else {
            return;
        };
        let mut raised = self.raised.lock().unwrap_or_else(|e| e.into_inner());
        if raised.is_none() {
            *raised = Python::attach(|py| callback.call1(py, (step, what)).err());
        }
    }

    /// Whether the work should stop before its next step: something was
    /// raised, by the callback or by a signal's handler (Python's pending
    /// signals are handled here, with the GIL).
    pub(crate) fn stop(&self) -> bool {
        let mut raised = self.raised.lock().unwrap_or_else(|e| e.into_inner());
        if raised.is_none() {
            *raised = Python::attach(|py| py.check_signals().err());
        }
        raised.is_some()
    }

    /// The error the callback raised, if it did.
    pub(crate) fn raised(&self) -> PyResult<()> {
        match self.raised.lock().unwrap_or_else(|e| e.into_inner()).take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// `mesh` (duplicates removed, of topology `topology`) remeshed on `b`,
/// each phase reported to `progress`; with `check`, checked as the CLI
/// checks it before writing ([`rejected`]). Returns the mesh and the
/// device's name.
fn remeshed(
    b: &Backend,
    mesh: &TriMesh,
    topology: &Topology,
    settings: &cavity_remesh::RemeshSettings,
    check: bool,
    progress: &Progress,
) -> PyResult<(TriMesh, String)> {
    let layout = cavity_remesh::Layout::default();
    let mut phase = |iteration: u32, phase: cavity_remesh::Phase| {
        progress.report(iteration, phase.name());
    };
    let stop = || progress.stop();
    let mut hooks = cavity_remesh::Hooks {
        stop: Some(&stop),
        progress: Some(&mut phase),
        after_phase: None,
    };
    let run = cavity_remesh::remesh_with(mesh, topology, settings, b, layout, &mut hooks);
    // What was raised (Ctrl-C) comes first: it is why the run stopped.
    progress.raised()?;
    let run = run.map_err(op_error)?;
    if check {
        let input = topology_stats_with(mesh, topology);
        let keeps = Keeps {
            topology: true,
            no_zero_area: true,
        };
        check_output_with(&input, &run.mesh, run.measured(), keeps).map_err(rejected)?;
    }
    Ok((run.mesh, run.report.device))
}

/// A read mesh: vertices, faces, the reader's warnings.
type Read<'py> = (
    Bound<'py, PyArray2<f32>>,
    Bound<'py, PyArray2<u32>>,
    Vec<String>,
);

/// Reads a surface mesh file (OBJ, OFF, PLY, STL; the CLI's readers):
/// vertices `float32` `(n, 3)`, faces `uint32` `(m, 3)` (polygons
/// triangulated), and the reader's warnings.
#[pyfunction]
fn read<'py>(py: Python<'py>, path: &str) -> PyResult<Read<'py>> {
    let read = py
        .detach(|| read_mesh(std::path::Path::new(path)))
        .map_err(|e| PyOSError::new_err(e.to_string()))?;
    Ok((
        vertex_array(py, read.mesh.positions)?,
        face_array(py, read.mesh.faces)?,
        read.warnings,
    ))
}

/// Writes a surface mesh file in the format of its extension, through a
/// temporary file renamed into place (the CLI's writers).
#[pyfunction]
fn write(
    py: Python<'_>,
    path: &str,
    vertices: PyReadonlyArray2<f32>,
    faces: PyReadonlyArray2<u32>,
) -> PyResult<()> {
    let path = std::path::Path::new(path);
    let format = Format::from_path(path).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let mesh = mesh_of(&vertices, &faces)?;
    py.detach(|| write_mesh(path, &mesh, None, format))
        .map_err(|e| PyOSError::new_err(e.to_string()))
}

/// The name of the backend `device` opens, whether it is a GPU, and the
/// note of how it was chosen (`auto` says whether it found one).
#[pyfunction]
fn device_name(py: Python<'_>, device: &str) -> PyResult<(String, bool, String)> {
    let (b, note) = py.detach(|| backend(device))?;
    Ok((b.name(), matches!(*b, Backend::Cuda(_)), note))
}

/// The topology statistics of a mesh (duplicate faces counted, then
/// removed, as the CLI's `info` reads a file).
#[pyfunction]
fn info<'py>(
    py: Python<'py>,
    vertices: PyReadonlyArray2<f32>,
    faces: PyReadonlyArray2<u32>,
) -> PyResult<Bound<'py, PyDict>> {
    let mesh = mesh_of(&vertices, &faces)?;
    let (s, removed) = work(py, || {
        let (mesh, topology, removed) = cleaned(mesh);
        (topology_stats_with(&mesh, &topology), removed)
    });
    let d = PyDict::new(py);
    d.set_item("vertices", s.vertices)?;
    d.set_item("edges", s.edges)?;
    d.set_item("faces", s.faces)?;
    d.set_item("euler_characteristic", s.euler_characteristic)?;
    d.set_item("components", s.components)?;
    d.set_item("isolated_vertices", s.isolated_vertices)?;
    d.set_item("boundary_edges", s.boundary_edges)?;
    d.set_item("boundary_loops", s.boundary_loops)?;
    d.set_item("non_manifold_edges", s.non_manifold_edges)?;
    d.set_item("non_manifold_vertices", s.non_manifold_vertices)?;
    d.set_item("duplicate_faces", removed)?;
    Ok(d)
}

/// Area-weighted vertex normals (`cavity_normals::vertex_normals_with`),
/// `float32` `(n, 3)`, with the device's name.
#[pyfunction]
fn normals<'py>(
    py: Python<'py>,
    vertices: PyReadonlyArray2<f32>,
    faces: PyReadonlyArray2<u32>,
    patch_size: u32,
    device: &str,
) -> PyResult<(Bound<'py, PyArray2<f32>>, String)> {
    let mesh = mesh_of(&vertices, &faces)?;
    let (n, name) = work(py, || {
        let (b, _) = backend(device)?;
        let (mesh, topology, _) = cleaned(mesh);
        cavity_normals::vertex_normals_with(&mesh, &topology, patch_size, &b)
            .map(|n| (n, b.name()))
            .map_err(op_error)
    })?;
    Ok((vertex_array(py, n)?, name))
}

/// Implicit mean curvature flow (`cavity_mcf::smooth_with`): the moved
/// vertices `float32` `(n, 3)`, the CG iterations of each step, and the
/// device's name. Faces are the input's (duplicates kept in the output).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn smooth<'py>(
    py: Python<'py>,
    vertices: PyReadonlyArray2<f32>,
    faces: PyReadonlyArray2<u32>,
    dt: f32,
    steps: u32,
    tolerance: f32,
    max_iterations: u32,
    device: &str,
) -> PyResult<(Bound<'py, PyArray2<f32>>, Vec<u32>, String)> {
    let settings = mcf_settings(dt, steps, tolerance, max_iterations, DEFAULT_PATCH_SIZE)?;
    let mesh = mesh_of(&vertices, &faces)?;
    let (out, iterations, name) = work(py, || {
        let (b, _) = backend(device)?;
        let (cleaned, topology, _) = cleaned(mesh);
        let (out, report) =
            cavity_mcf::smooth_with(&cleaned, &topology, &settings, &b).map_err(op_error)?;
        let iterations = report.steps.iter().map(|s| s.iterations).collect();
        Ok::<_, PyErr>((out.positions, iterations, report.device))
    })?;
    Ok((vertex_array(py, out)?, iterations, name))
}

/// A remeshed mesh: vertices, faces, the device's name.
type Remeshed<'py> = (Bound<'py, PyArray2<f32>>, Bound<'py, PyArray2<u32>>, String);

/// Isotropic remeshing (`cavity_remesh::remesh_with`, the CLI's defaults
/// for what is not given): the new vertices and faces, and the device's
/// name. `length` is in model units when `relative` is false, else a
/// multiple of the input's mean edge length. With `check`, the output is
/// checked as the CLI checks it before writing ([`rejected`]). Each phase
/// is reported to `progress` ([`Progress`]).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn remesh<'py>(
    py: Python<'py>,
    vertices: PyReadonlyArray2<f32>,
    faces: PyReadonlyArray2<u32>,
    length: f64,
    relative: bool,
    iterations: u32,
    feature_angle: Option<f64>,
    keep_boundary: bool,
    check: bool,
    device: &str,
    progress: Option<Py<PyAny>>,
) -> PyResult<Remeshed<'py>> {
    let settings = remesh_settings(length, relative, iterations, feature_angle, keep_boundary)?;
    let mesh = mesh_of(&vertices, &faces)?;
    let progress = Progress::new(progress);
    let (out, name) = work(py, || {
        let (b, _) = backend(device)?;
        let (cleaned, topology, _) = cleaned(mesh);
        remeshed(&b, &cleaned, &topology, &settings, check, &progress)
    })?;
    mesh_out(py, out, name)
}

/// Geodesic distance from `sources` (`cavity_geodesic::geodesic_distance_with`),
/// `float32` `(n,)` in model units, with the device's name. The sources'
/// range is checked on the Python side (the library refuses one out of
/// range too).
#[pyfunction]
fn geodesic<'py>(
    py: Python<'py>,
    vertices: PyReadonlyArray2<f32>,
    faces: PyReadonlyArray2<u32>,
    sources: PyReadonlyArray1<u32>,
    device: &str,
) -> PyResult<(Bound<'py, PyArray1<f32>>, String)> {
    let mesh = mesh_of(&vertices, &faces)?;
    let sources = sources
        .as_slice()
        .map_err(|e| PyValueError::new_err(format!("sources: {e}")))?
        .to_vec();
    let settings = cavity_geodesic::GeodesicSettings::default();
    let (d, name) = work(py, || {
        let (b, _) = backend(device)?;
        let (cleaned, topology, _) = cleaned(mesh);
        cavity_geodesic::geodesic_distance_with(&cleaned, &topology, &sources, &settings, &b)
            .map(|(d, _)| (d, b.name()))
            .map_err(op_error)
    })?;
    Ok((d.into_pyarray(py), name))
}

/// Delaunay edge flips (`cavity_delaunay::delaunay_with`, the dynamic
/// mesh's default capacities): the flipped mesh (the vertices unmoved)
/// and the device's name; with `check`, checked as the CLI checks it
/// ([`rejected`]).
#[pyfunction]
fn delaunay<'py>(
    py: Python<'py>,
    vertices: PyReadonlyArray2<f32>,
    faces: PyReadonlyArray2<u32>,
    patch_size: u32,
    check: bool,
    device: &str,
) -> PyResult<Remeshed<'py>> {
    let mesh = mesh_of(&vertices, &faces)?;
    let (out, name) = work(py, || {
        let (b, _) = backend(device)?;
        let (cleaned, topology, _) = cleaned(mesh);
        let factors = cavity::dynamic::CapacityFactors::default();
        let (out, _, device) =
            cavity_delaunay::delaunay_with(&cleaned, &topology, patch_size, factors, &b)
                .map_err(op_error)?;
        if check {
            let input = topology_stats_with(&cleaned, &topology);
            let keeps = Keeps {
                topology: true,
                no_zero_area: count_zero_area(&cleaned) == 0,
            };
            check_output(&input, &out, keeps).map_err(rejected)?;
        }
        Ok::<_, PyErr>((out, device))
    })?;
    mesh_out(py, out, name)
}

/// Bilateral denoising (`cavity_denoise::denoise_with`): the moved
/// vertices `float32` `(n, 3)` and the device's name.
#[pyfunction]
fn denoise<'py>(
    py: Python<'py>,
    vertices: PyReadonlyArray2<f32>,
    faces: PyReadonlyArray2<u32>,
    iterations: u32,
    max_hops: u32,
    patch_size: u32,
    device: &str,
) -> PyResult<(Bound<'py, PyArray2<f32>>, String)> {
    let settings = denoise_settings(iterations, max_hops, patch_size)?;
    let mesh = mesh_of(&vertices, &faces)?;
    let (out, name) = work(py, || {
        let (b, _) = backend(device)?;
        let (cleaned, topology, _) = cleaned(mesh);
        cavity_denoise::denoise_with(&cleaned, &topology, &settings, &b)
            .map(|(out, _)| (out.positions, b.name()))
            .map_err(op_error)
    })?;
    Ok((vertex_array(py, out)?, name))
}

/// Polylla's polygons, their vertex lists and the positions.
type Polygons<'py> = (
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<u32>>,
);

/// Polylla polygons (GPolylla, `cavity_polylla::device::polygon_lists`) of
/// the Delaunay triangulation of `points` `(n, 2)` (spade, as the CLI
/// triangulates a `.node` file), or of the triangles `triangles`
/// `(m, 3)` over them: the positions `float64` `(n, 2)`, and each
/// polygon's vertices `indices[offsets[k]..offsets[k + 1]]` (`uint32`).
#[pyfunction]
#[pyo3(signature = (points, triangles, device))]
fn polylla<'py>(
    py: Python<'py>,
    points: PyReadonlyArray2<f64>,
    triangles: Option<PyReadonlyArray2<u32>>,
    device: &str,
) -> PyResult<Polygons<'py>> {
    let points = points
        .as_slice()
        .map_err(|e| PyValueError::new_err(format!("points: {e}")))?
        .as_chunks::<2>()
        .0
        .to_vec();
    let triangles = match triangles {
        Some(t) => Some(
            t.as_slice()
                .map_err(|e| PyValueError::new_err(format!("F: {e}")))?
                .as_chunks::<3>()
                .0
                .to_vec(),
        ),
        None => None,
    };
    let polylla_error = |argument: &str, e: cavity_polylla::PolyllaError| match e {
        cavity_polylla::PolyllaError::Backend(e) => PyRuntimeError::new_err(e.to_string()),
        e => PyValueError::new_err(format!("{argument}: {e}")),
    };
    let (positions, lists) = work(py, || {
        let (b, _) = backend(device)?;
        let mesh = match &triangles {
            None => cavity_polylla::generate::delaunay_half_edges(&points)
                .map_err(|e| polylla_error("points", e))?,
            Some(t) => cavity_polylla::HalfEdges::from_triangles(points, t)
                .map_err(|e| polylla_error("F", e))?,
        };
        let (lists, _) = cavity_polylla::device::polygon_lists(&b, &mesh)
            .map_err(|e| polylla_error("points", e))?;
        Ok::<_, PyErr>((mesh.positions, lists))
    })?;
    let n = positions.len();
    Ok((
        positions
            .into_flattened()
            .into_pyarray(py)
            .reshape([n, 2])?,
        lists.offsets.into_pyarray(py),
        lists.vertices.into_pyarray(py),
    ))
}

/// The module: the functions above, for `pysrc/cavity/__init__.py`.
#[pymodule]
fn _cavity(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(read, m)?)?;
    m.add_function(wrap_pyfunction!(write, m)?)?;
    m.add_function(wrap_pyfunction!(device_name, m)?)?;
    m.add_function(wrap_pyfunction!(last_work_seconds, m)?)?;
    m.add_function(wrap_pyfunction!(info, m)?)?;
    m.add_function(wrap_pyfunction!(normals, m)?)?;
    m.add_function(wrap_pyfunction!(smooth, m)?)?;
    m.add_function(wrap_pyfunction!(remesh, m)?)?;
    m.add_function(wrap_pyfunction!(geodesic, m)?)?;
    m.add_function(wrap_pyfunction!(delaunay, m)?)?;
    m.add_function(wrap_pyfunction!(denoise, m)?)?;
    m.add_function(wrap_pyfunction!(polylla, m)?)?;
    m.add_class::<resident::Mesh>()?;
    m.add_function(wrap_pyfunction!(tet::tet_read, m)?)?;
    m.add_function(wrap_pyfunction!(tet::tet_write, m)?)?;
    m.add_function(wrap_pyfunction!(tet::tet_subdivide, m)?)?;
    m.add_function(wrap_pyfunction!(tet::tet_boundary, m)?)?;
    m.add_function(wrap_pyfunction!(tet::tet_smooth, m)?)?;
    m.add_function(wrap_pyfunction!(tet::tet_simplify, m)?)?;
    Ok(())
}

//! The volumetric functions of the `cavity.tet` Python module: reading and
//! writing volumetric files, Catmull-Clark subdivision, the boundary
//! surface and Laplacian smoothing of the inner vertices
//! (`cavity_volume`, after Mahmoud et al. 2024, "A Ternary Sparse Matrix
//! Representation for Volumetric Mesh Subdivision and Processing on
//! GPUs"), and the parallel tetrahedral edge collapse
//! (`cavity_tet_collapse`).
//!
//! Cells cross as blocks of one fixed type each: a `uint32` array of width
//! 4 (tetrahedra), 5 (pyramids), 6 (prisms) or 8 (hexahedra), in the
//! vertex order of the VTK cell types; the Python side passes a list of
//! C-contiguous blocks and gets one back. General polyhedra have no block
//! and are refused.

use std::path::Path;

use cavity::backend::Backend;
use cavity_tet_collapse::kernels::criterion::Placement;
use cavity_tet_collapse::simplify::{Criterion, SimplifySettings, Target};
use cavity_tet_collapse::{TetMesh, checks::check_valid};
use cavity_volume::io::{CellMesh, WriteOptions, read_volume, write_volume_with};
use cavity_volume::quality::Validity;
use cavity_volume::subdivide::{plan, subdivide_valid};
use cavity_volume::{CellVertices, ResidentMesh, VolumeMesh, check_cells, check_count, setting};
use numpy::{
    IntoPyArray, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

use crate::{Progress, backend, face_array, op_error, settings_error, vertex_array, work};

/// Cell blocks: `uint32` arrays of one cell type each.
type Blocks<'py> = Vec<Bound<'py, PyArray2<u32>>>;

/// The cells of the blocks `cells` (`argument` names them in errors).
fn cells_of(cells: &[PyReadonlyArray2<u32>], argument: &str) -> PyResult<Vec<CellVertices>> {
    let mut out = Vec::new();
    for block in cells {
        let width = block.shape()[1];
        let words = block
            .as_slice()
            .map_err(|e| PyValueError::new_err(format!("{argument}: {e}")))?;
        let cell = |c: &[u32]| -> CellVertices {
            match c.len() {
                4 => CellVertices::Tetrahedron(c.try_into().expect("width 4")),
                5 => CellVertices::Pyramid(c.try_into().expect("width 5")),
                6 => CellVertices::Prism(c.try_into().expect("width 6")),
                _ => CellVertices::Hexahedron(c.try_into().expect("width 8")),
            }
        };
        match width {
            4 | 5 | 6 | 8 => out.extend(words.chunks_exact(width).map(cell)),
            _ => {
                return Err(PyValueError::new_err(format!(
                    "{argument}: a block of width {width}: cells are blocks of width 4 \
                     (tetrahedra), 5 (pyramids), 6 (prisms) or 8 (hexahedra)"
                )));
            }
        }
    }
    Ok(out)
}

/// The volumetric mesh of `vertices` and the blocks `cells`, its cells
/// oriented outward and checked (vertices in range, none repeated); no
/// cells is an error. Errors name the argument (`V` or `T`).
fn cell_mesh(
    vertices: &PyReadonlyArray2<f32>,
    cells: &[PyReadonlyArray2<u32>],
) -> PyResult<CellMesh> {
    let positions = vertices
        .as_slice()
        .map_err(|e| PyValueError::new_err(format!("V: {e}")))?
        .as_chunks::<3>()
        .0
        .to_vec();
    if let Some(i) = positions
        .iter()
        .position(|p| p.iter().any(|c| !c.is_finite()))
    {
        return Err(PyValueError::new_err(format!(
            "V: vertex {i} has a non-finite coordinate"
        )));
    }
    let cells = cells_of(cells, "T")?;
    if cells.is_empty() {
        return Err(PyValueError::new_err(format!(
            "T: no cells ({} vertices): a volumetric mesh needs at least one cell",
            positions.len()
        )));
    }
    check_cells(&cells, positions.len()).map_err(|e| PyValueError::new_err(format!("T: {e}")))?;
    Ok(CellMesh { positions, cells }.oriented())
}

/// `cells` as blocks of one type each, in the order each type first
/// appears (a polyhedron is refused: it has no block).
fn blocks<'py>(py: Python<'py>, cells: &[CellVertices]) -> PyResult<Blocks<'py>> {
    let mut by_width: Vec<(usize, Vec<u32>)> = Vec::new();
    for cell in cells {
        let vertices: &[u32] = match cell {
            CellVertices::Tetrahedron(c) => c,
            CellVertices::Pyramid(c) => c,
            CellVertices::Prism(c) => c,
            CellVertices::Hexahedron(c) => c,
            CellVertices::Polyhedron(_) => {
                return Err(PyValueError::new_err(
                    "a general polyhedron has no cell block: convert the file with \
                     `cavity tet convert` to a format of fixed cell types",
                ));
            }
        };
        let width = vertices.len();
        match by_width.iter_mut().find(|(w, _)| *w == width) {
            Some((_, words)) => words.extend_from_slice(vertices),
            None => by_width.push((width, vertices.to_vec())),
        }
    }
    by_width
        .into_iter()
        .map(|(width, words)| {
            let n = words.len() / width;
            words.into_pyarray(py).reshape([n, width])
        })
        .collect()
}

/// The validity setting of `plain`: the plain rules, or cells kept valid.
fn validity(plain: bool) -> Validity {
    if plain {
        Validity::Plain
    } else {
        Validity::Keep
    }
}

/// The mesh's boundary operators on `backend` (built there on the GPU,
/// on the host on the CPU backend, as the CLI builds them).
fn resident<'a>(b: &'a Backend, mesh: &CellMesh) -> PyResult<ResidentMesh<'a>> {
    match b {
        Backend::Cuda(_) => ResidentMesh::from_cells(b, &mesh.positions, &mesh.cells),
        Backend::Cpu(_) => VolumeMesh::from_cells(mesh.positions.clone(), &mesh.cells)
            .and_then(|m| ResidentMesh::upload(b, &m)),
    }
    .map_err(op_error)
}

/// Reads a volumetric mesh file (MEDIT `.mesh`, TetGen `.node`/`.ele`,
/// VTK `.vtk`, Gmsh `.msh`; the CLI's readers): vertices `float32`
/// `(n, 3)` and the cell blocks.
#[pyfunction]
pub(crate) fn tet_read<'py>(
    py: Python<'py>,
    path: &str,
) -> PyResult<(Bound<'py, PyArray2<f32>>, Blocks<'py>)> {
    let mesh = py
        .detach(|| read_volume(Path::new(path)))
        .map_err(|e| PyOSError::new_err(e.to_string()))?;
    Ok((vertex_array(py, mesh.positions)?, blocks(py, &mesh.cells)?))
}

/// Writes a volumetric mesh file in the format of its extension (Gmsh
/// 4.1 and VTK as ASCII unless `binary`), through a temporary file.
#[pyfunction]
pub(crate) fn tet_write(
    py: Python<'_>,
    path: &str,
    vertices: PyReadonlyArray2<f32>,
    cells: Vec<PyReadonlyArray2<u32>>,
    binary: bool,
) -> PyResult<()> {
    let mesh = cell_mesh(&vertices, &cells)?;
    let options = WriteOptions {
        binary,
        ..WriteOptions::default()
    };
    py.detach(|| write_volume_with(Path::new(path), &mesh, options))
        .map_err(|e| PyOSError::new_err(e.to_string()))
}

/// `levels` levels of volumetric Catmull-Clark subdivision
/// (`cavity_volume::subdivide::subdivide_valid`, every cell kept valid
/// unless `plain`, each level reported to `progress`): the new vertices,
/// the hexahedra (`(k, 8)`), and the device's name. The memory is
/// estimated first: a result past the host's or the device's memory is a
/// `ValueError` naming `levels`.
#[pyfunction]
pub(crate) fn tet_subdivide<'py>(
    py: Python<'py>,
    vertices: PyReadonlyArray2<f32>,
    cells: Vec<PyReadonlyArray2<u32>>,
    levels: u32,
    plain: bool,
    device: &str,
    progress: Option<Py<PyAny>>,
) -> PyResult<(Bound<'py, PyArray2<f32>>, Blocks<'py>, String)> {
    check_count(setting::LEVELS, levels).map_err(settings_error)?;
    let mesh = cell_mesh(&vertices, &cells)?;
    let progress = Progress::new(progress);
    let (positions, cells, name) = work(py, || {
        let (b, _) = backend(device)?;
        let volume = resident(&b, &mesh)?.download().map_err(op_error)?;
        let estimate = plan(&volume, levels, &b).map_err(op_error)?;
        estimate
            .check(
                levels,
                cavity::memory::available_host_bytes(),
                b.free_device_memory().ok().flatten(),
            )
            .map_err(op_error)?;
        let out = subdivide_valid(&b, &volume, levels, validity(plain), |level| {
            progress.report(level, "level");
        })
        .map_err(op_error)?;
        progress.raised()?;
        Ok::<_, PyErr>((out.mesh.positions().to_vec(), out.cells, b.name()))
    })?;
    Ok((vertex_array(py, positions)?, blocks(py, &cells)?, name))
}

/// The boundary surface of a volumetric mesh (`ResidentMesh::boundary_loops`):
/// its faces as triangles `(k, 3)` over the input's vertices, each facing
/// out of the mesh (a boundary polygon as a fan from its first vertex),
/// and the device's name.
#[pyfunction]
pub(crate) fn tet_boundary<'py>(
    py: Python<'py>,
    vertices: PyReadonlyArray2<f32>,
    cells: Vec<PyReadonlyArray2<u32>>,
    device: &str,
) -> PyResult<(Bound<'py, PyArray2<u32>>, String)> {
    let mesh = cell_mesh(&vertices, &cells)?;
    let (faces, name) = work(py, || {
        let (b, _) = backend(device)?;
        let (_, offsets, loops) = resident(&b, &mesh)?.boundary_loops().map_err(op_error)?;
        let mut faces = Vec::new();
        for w in offsets.windows(2) {
            let corners = &loops[w[0] as usize..w[1] as usize];
            for k in 1..corners.len().saturating_sub(1) {
                faces.push([corners[0], corners[k], corners[k + 1]]);
            }
        }
        Ok::<_, PyErr>((faces, b.name()))
    })?;
    Ok((face_array(py, faces)?, name))
}

/// `iterations` steps of Laplacian smoothing of the inner vertices
/// (`ResidentMesh::smooth_valid`, every cell kept valid unless `plain`):
/// the moved vertices `float32` `(n, 3)` and the device's name.
#[pyfunction]
pub(crate) fn tet_smooth<'py>(
    py: Python<'py>,
    vertices: PyReadonlyArray2<f32>,
    cells: Vec<PyReadonlyArray2<u32>>,
    iterations: u32,
    plain: bool,
    device: &str,
) -> PyResult<(Bound<'py, PyArray2<f32>>, String)> {
    check_count(setting::ITERATIONS, iterations).map_err(settings_error)?;
    let mesh = cell_mesh(&vertices, &cells)?;
    let (positions, name) = work(py, || {
        let (b, _) = backend(device)?;
        let (positions, _) = resident(&b, &mesh)?
            .smooth_valid(&mesh.positions, &mesh.cells, iterations, validity(plain))
            .map_err(op_error)?;
        Ok::<_, PyErr>((positions, b.name()))
    })?;
    Ok((vertex_array(py, positions)?, name))
}

/// A simplified tetrahedral mesh: vertices, tetrahedra, the field at the
/// kept vertices (empty without one), the device's name.
type Simplified<'py> = (
    Bound<'py, PyArray2<f32>>,
    Bound<'py, PyArray2<u32>>,
    Bound<'py, numpy::PyArray1<f32>>,
    String,
);

/// Parallel tetrahedral edge collapse (`cavity_tet_collapse::simplify`)
/// of a valid tetrahedral mesh `(n, 3)`, `(m, 4)` (those listed inside
/// out turned outward; then checked as the CLI checks its input, an
/// invalid element a `ValueError` naming it) towards at most `ratio` of
/// the cells, at most `cells` cells, or the target edge `length`
/// (at most one given; none runs the criterion to convergence), by the
/// `criterion` (`"length"`, `"field"` on `field` with `max_error`,
/// `"quality"`), the kept vertex at the edge's `"midpoint"` or
/// `"endpoint"`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(crate) fn tet_simplify<'py>(
    py: Python<'py>,
    vertices: PyReadonlyArray2<f32>,
    tets: PyReadonlyArray2<u32>,
    target: (Option<f64>, Option<usize>, Option<f64>),
    criterion: &str,
    field: Option<PyReadonlyArray1<f32>>,
    max_error: Option<f64>,
    placement: &str,
    device: &str,
) -> PyResult<Simplified<'py>> {
    let target = match target {
        (Some(r), _, _) => Some(Target::Ratio(r)),
        (_, Some(n), _) => Some(Target::Cells(n)),
        (_, _, Some(l)) => Some(Target::Length(l)),
        _ => None,
    };
    let criterion = match criterion {
        "length" => Criterion::Length,
        "field" => Criterion::Field { max_error },
        "quality" => Criterion::Quality,
        other => {
            return Err(PyValueError::new_err(format!(
                "criterion: {other:?}: one of \"length\", \"field\", \"quality\""
            )));
        }
    };
    let placement = match placement {
        "midpoint" => Placement::Midpoint,
        "endpoint" => Placement::Endpoint,
        other => {
            return Err(PyValueError::new_err(format!(
                "placement: {other:?}: one of \"midpoint\", \"endpoint\""
            )));
        }
    };
    let settings = SimplifySettings {
        target,
        criterion,
        placement,
        ..SimplifySettings::default()
    };
    let values = match &field {
        Some(f) => f
            .as_slice()
            .map_err(|e| PyValueError::new_err(format!("field: {e}")))?
            .to_vec(),
        None => Vec::new(),
    };
    let mesh = cell_mesh(&vertices, &[tets])?;
    let mesh = TetMesh::from_cells(mesh).map_err(|e| PyValueError::new_err(format!("T: {e}")))?;
    settings
        .check(mesh.positions.len(), &values)
        .map_err(settings_error)?;
    check_valid(&mesh, 0.0).map_err(|e| {
        PyValueError::new_err(format!(
            "T: {e}: the collapse needs a valid tetrahedral mesh (fix or remove that element)"
        ))
    })?;
    let (out, name) = work(py, || {
        let (b, _) = backend(device)?;
        let out = cavity_tet_collapse::simplify(&b, &mesh, &values, &settings).map_err(op_error)?;
        Ok::<_, PyErr>((out, b.name()))
    })?;
    let n = out.mesh.tets.len();
    Ok((
        vertex_array(py, out.mesh.positions)?,
        out.mesh
            .tets
            .into_flattened()
            .into_pyarray(py)
            .reshape([n, 4])?,
        out.values.into_pyarray(py),
        name,
    ))
}

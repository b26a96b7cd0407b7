//! The collapsed mesh handed to the volumetric structure without leaving
//! the device: after the last iteration, ∂1, ∂2 and ∂3 are built on the
//! backend from the tetrahedra by the volumetric structure's build
//! (`cavity_volume::ResidentMesh::from_tetrahedra`, numbered as
//! `cavity_volume::VolumeMesh::from_cells` numbers them) and become a
//! [`ResidentMesh`] with an empty relation cache: every relation of the
//! input's operators is stale after a collapse, and none is carried over.
//! [`collapse_resident`] takes its input from a [`ResidentMesh`] too (its
//! cell-vertex relation, oriented on the device), so that a mesh never
//! leaves the device between the volumetric operations and the collapse.

use std::time::Instant;

use cavity::backend::Backend;
use cavity_tet_collapse_kernels::blocks;
use cavity_tet_collapse_kernels::iteration::CriterionKernels;
use cavity_tet_collapse_kernels::operators::OrientCells;
use cavity_volume::{CellType, Relation, ResidentMesh};

use crate::parallel::{ParallelReport, Resident, run, run_resident};
use crate::{CollapseError, Settings, TetMesh};

/// [`crate::parallel::collapse_parallel`], leaving the collapsed mesh on
/// `backend` as a [`ResidentMesh`] (its operators built there, the time
/// in [`ParallelReport::operator_seconds`]) with the field at its
/// vertices (copied back; empty for none).
///
/// # Errors
/// A failed launch or copy ([`CollapseError::Backend`]); operators that do
/// not add up ([`CollapseError::Operators`]: a face's edge missing from the
/// edge rows, or edges named by no face, which a valid tetrahedral mesh
/// does not have).
pub fn collapse_to_resident<'a, C: CriterionKernels + bytemuck::Pod>(
    backend: &'a Backend,
    mesh: &TetMesh,
    values: &[f32],
    criterion: C,
    settings: &Settings,
) -> Result<(ResidentMesh<'a>, Vec<f32>, ParallelReport), CollapseError> {
    let (r, mut report) = run(backend, mesh, values, &[], criterion, settings, None)?;
    let values = if values.is_empty() {
        Vec::new()
    } else {
        backend.read_back(&r.values, r.vertices as usize)?
    };
    let start = Instant::now();
    let resident = resident_mesh(backend, r)?;
    resident.synchronize()?;
    report.operator_seconds = start.elapsed().as_secs_f64();
    Ok((resident, values, report))
}

/// `mesh`, a tetrahedral mesh on its backend, collapsed there with
/// `criterion` and `settings` and replaced by the result
/// ([`collapse_to_resident`]'s): its tetrahedra are the rows of its
/// cell-vertex relation, each oriented positively by its signed volume
/// (`kernels::operators::OrientCells`); `values` is its per-vertex field
/// (empty for none). The relations `mesh` had cached are all dropped: the
/// collapse changes every operator. Returns the field at the kept
/// vertices and the report.
///
/// # Errors
/// [`CollapseError::NotTetrahedron`] for a cell of another type (named by
/// its vertex count: 8 a hexahedron, 6 a prism, 5 a pyramid),
/// [`CollapseError::FlatCell`] for a cell of no volume (then `mesh` is
/// left as it was); [`CollapseError::FieldLength`] for a field of another
/// length than the vertices; else as [`collapse_to_resident`].
pub fn collapse_resident<C: CriterionKernels + bytemuck::Pod>(
    mesh: &mut ResidentMesh<'_>,
    values: &[f32],
    criterion: C,
    settings: &Settings,
) -> Result<(Vec<f32>, ParallelReport), CollapseError> {
    let d = mesh.backend();
    crate::add_kernels(d)?;
    let [vertices, _, _, cells] = mesh.counts();
    if !values.is_empty() && values.len() != vertices {
        return Err(CollapseError::FieldLength {
            values: values.len(),
            vertices,
        });
    }
    let m = cells as u32;
    let mut tets = d.zeros::<u32>(4 * cells)?;
    let mut problems = d.zeros::<u32>(2)?;
    let positions = d.copy(mesh.positions_on_device(), 3 * vertices)?;
    let (offsets, entries, _) = mesh.relation_on_device(Relation::CellVertices)?;
    let params = ([offsets, entries], &positions, m, &mut tets, &mut problems);
    d.launch::<OrientCells>(blocks(m), (0, 0), params)?;
    let [other, flat] = d.read_back(&problems, 2)?[..] else {
        unreachable!("two words read back");
    };
    if other > 0 {
        let cell = other as usize - 1;
        let rows = d.read_back(offsets, cell + 2)?;
        let cell_type = match rows[cell + 1] - rows[cell] {
            8 => CellType::Hexahedron,
            6 => CellType::Prism,
            5 => CellType::Pyramid,
            _ => CellType::Polyhedron,
        };
        return Err(CollapseError::NotTetrahedron { cell, cell_type });
    }
    if flat > 0 {
        return Err(CollapseError::FlatCell {
            cell: flat as usize - 1,
        });
    }
    let r = Resident {
        tets,
        positions,
        values: d.upload(values)?,
        class: None,
        vertices: vertices as u32,
        cells: m,
    };
    let (r, mut report) = run_resident(d, r, criterion, settings, None)?;
    let values = if values.is_empty() {
        Vec::new()
    } else {
        d.read_back(&r.values, r.vertices as usize)?
    };
    let start = Instant::now();
    *mesh = resident_mesh(d, r)?;
    mesh.synchronize()?;
    report.operator_seconds = start.elapsed().as_secs_f64();
    Ok((values, report))
}

/// `mesh` uploaded to `backend` and its operators built there (as after
/// a collapse): the same mesh as `cavity_volume::VolumeMesh::from_cells`
/// of its tetrahedra, uploaded.
///
/// # Errors
/// As [`collapse_to_resident`].
pub fn resident_of<'a>(
    backend: &'a Backend,
    mesh: &TetMesh,
) -> Result<ResidentMesh<'a>, CollapseError> {
    crate::add_kernels(backend)?;
    let r = Resident {
        tets: backend.upload(mesh.tets.as_flattened())?,
        positions: backend.upload(mesh.positions.as_flattened())?,
        values: backend.zeros(0)?,
        class: None,
        vertices: mesh.positions.len() as u32,
        cells: mesh.tets.len() as u32,
    };
    resident_mesh(backend, r)
}

/// The operators of `r` on `d`, built there from its tetrahedra by the
/// volumetric structure's build (`ResidentMesh::from_tetrahedra`: the
/// same mesh as `cavity_volume::VolumeMesh::from_cells`, numbered alike).
fn resident_mesh(d: &Backend, r: Resident) -> Result<ResidentMesh<'_>, CollapseError> {
    let counts = [r.vertices, r.cells];
    Ok(ResidentMesh::from_tetrahedra(
        d,
        r.positions,
        r.tets,
        counts,
    )?)
}

//! `cavity.Mesh`: a mesh kept between calls (issue 56 item 3). Made once
//! from `V` and `F` (checked, duplicate faces removed, as the plain
//! functions do at every call), it keeps its host arrays, its topology and,
//! on the GPU, the topology's relations and its patches on the device
//! (`TopologyOn::keeping_patches`): a pipeline of `normals`, `smooth`,
//! `denoise` and `geodesic` calls patches once, each call copying only the
//! current positions to the device. `remesh` replaces the mesh (a new
//! topology, patched at the next call).

use std::sync::Arc;

use cavity::TriMesh;
use cavity::backend::{Backend, TopologyOn};
use cavity::topology::Topology;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::{
    Progress, backend, cleaned, denoise_settings, face_array, mcf_settings, mesh_of, op_error,
    remesh_settings, remeshed, vertex_array, work,
};

/// A mesh kept between calls, with its topology and patches where its
/// device keeps them (see the [module](self)).
#[pyclass(module = "cavity._cavity")]
pub(crate) struct Mesh {
    backend: Arc<Backend>,
    mesh: TriMesh,
    topology: TopologyOn<'static>,
    patch_size: u32,
    duplicates: usize,
}

impl Mesh {
    /// The topology of `mesh` for `b`, keeping its patches.
    fn topology_of(b: &Backend, topology: Topology) -> PyResult<TopologyOn<'static>> {
        Ok(TopologyOn::of_owned(b, topology)
            .map_err(op_error)?
            .keeping_patches())
    }
}

#[pymethods]
impl Mesh {
    /// The mesh of `vertices` `(n, 3)` and `faces` `(m, 3)` on `device`,
    /// duplicate faces removed, its topology built and (on the GPU)
    /// uploaded; patched at the first call, in patches of at most
    /// `patch_size` faces.
    #[new]
    fn new(
        py: Python<'_>,
        vertices: PyReadonlyArray2<f32>,
        faces: PyReadonlyArray2<u32>,
        patch_size: u32,
        device: &str,
    ) -> PyResult<Self> {
        if patch_size == 0 || patch_size > cavity::patcher::MAX_PATCH_SIZE {
            return Err(PyValueError::new_err(format!(
                "patch_size must be from 1 to {}, not {patch_size}",
                cavity::patcher::MAX_PATCH_SIZE
            )));
        }
        let mesh = mesh_of(&vertices, &faces)?;
        work(py, || {
            let (b, _) = backend(device)?;
            let (mesh, topology, duplicates) = cleaned(mesh);
            let topology = Mesh::topology_of(&b, topology)?;
            Ok(Mesh {
                backend: b,
                mesh,
                topology,
                patch_size,
                duplicates,
            })
        })
    }

    /// The vertices, `float32` `(n, 3)` (a copy).
    #[getter]
    fn vertices<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        vertex_array(py, self.mesh.positions.clone())
    }

    /// The faces, `uint32` `(m, 3)` (a copy; duplicates removed).
    #[getter]
    fn faces<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u32>>> {
        face_array(py, self.mesh.faces.clone())
    }

    /// The duplicate faces removed when the mesh was made.
    #[getter]
    fn duplicate_faces(&self) -> usize {
        self.duplicates
    }

    /// The device's name.
    #[getter]
    fn device(&self) -> String {
        self.backend.name()
    }

    /// The most faces of a patch.
    #[getter]
    fn patch_size(&self) -> u32 {
        self.patch_size
    }

    /// Area-weighted unit vertex normals, `float32` `(n, 3)`.
    fn normals<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let normals = work(py, || {
            cavity_normals::vertex_normals_on(
                &self.mesh,
                &self.topology,
                self.patch_size,
                &self.backend,
            )
            .map_err(op_error)
        })?;
        vertex_array(py, normals)
    }

    /// Implicit mean curvature flow (as `cavity.smooth`): the mesh's
    /// vertices moved; returns the CG iterations of each step.
    fn smooth(
        &mut self,
        py: Python<'_>,
        dt: f32,
        steps: u32,
        tolerance: f32,
        max_iterations: u32,
    ) -> PyResult<Vec<u32>> {
        let settings = mcf_settings(dt, steps, tolerance, max_iterations, self.patch_size)?;
        let (out, report) = work(py, || {
            cavity_mcf::smooth_on(&self.mesh, &self.topology, &settings, &self.backend)
                .map_err(op_error)
        })?;
        self.mesh.positions = out.positions;
        Ok(report.steps.iter().map(|s| s.iterations).collect())
    }

    /// Bilateral denoising (as `cavity.denoise`): the mesh's vertices
    /// moved.
    fn denoise(&mut self, py: Python<'_>, iterations: u32, max_hops: u32) -> PyResult<()> {
        let settings = denoise_settings(iterations, max_hops, self.patch_size)?;
        let out = work(py, || {
            cavity_denoise::denoise_on(&self.mesh, &self.topology, &settings, &self.backend)
                .map_err(op_error)
        })?;
        self.mesh.positions = out.0.positions;
        Ok(())
    }

    /// Geodesic distance from `sources` (as `cavity.geodesic`), `float32`
    /// `(n,)`.
    fn geodesic<'py>(
        &self,
        py: Python<'py>,
        sources: PyReadonlyArray1<u32>,
    ) -> PyResult<Bound<'py, PyArray1<f32>>> {
        let sources = sources
            .as_slice()
            .map_err(|e| PyValueError::new_err(format!("sources: {e}")))?
            .to_vec();
        let settings = cavity_geodesic::GeodesicSettings {
            patch_size: self.patch_size,
            ..Default::default()
        };
        let (d, _) = work(py, || {
            cavity_geodesic::geodesic_distance_on(
                &self.mesh,
                &self.topology,
                &sources,
                &settings,
                &self.backend,
            )
            .map_err(op_error)
        })?;
        Ok(d.into_pyarray(py))
    }

    /// Isotropic remeshing (as `cavity.remesh`, each phase reported to
    /// `progress`): the mesh replaced by the result (its topology built,
    /// patched at the next call).
    #[allow(clippy::too_many_arguments)]
    fn remesh(
        &mut self,
        py: Python<'_>,
        length: f64,
        relative: bool,
        iterations: u32,
        feature_angle: Option<f64>,
        keep_boundary: bool,
        check: bool,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let settings = remesh_settings(length, relative, iterations, feature_angle, keep_boundary)?;
        let progress = Progress::new(progress);
        let (mesh, topology) = work(py, || {
            let host = self.topology.host(&self.backend).map_err(op_error)?;
            let (out, _) = remeshed(
                &self.backend,
                &self.mesh,
                &host,
                &settings,
                check,
                &progress,
            )?;
            let topology = Mesh::topology_of(&self.backend, Topology::new(&out))?;
            Ok::<_, PyErr>((out, topology))
        })?;
        self.mesh = mesh;
        self.topology = topology;
        Ok(())
    }
}

//! `cavity.Mesh`: a mesh kept between calls (issue 56 item 3). Made once
//! from `V` and `F` (checked, duplicate faces removed, as the plain
//! functions do at every call), it keeps its host arrays, its topology and,
//! on the GPU, the topology's relations and its patches on the device
//! (`TopologyOn::keeping_patches`): a pipeline of `normals`, `smooth`,
//! `denoise` and `geodesic` calls patches once, each call copying the
//! current positions to the device (`geodesic`'s search of the sources'
//! rings uploads the faces too, reading the vertex-face rows where they
//! lie). `remesh` replaces the mesh (a
//! new topology, patched at the next call).
//!
//! The state sits behind a lock (the class is frozen): a call reads it
//! while it works, so that a `progress` callback or another thread may
//! read the mesh meanwhile, and a call that moves or replaces the mesh
//! swaps its result in when it is done.

use std::sync::{Arc, RwLock, RwLockReadGuard};

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
#[pyclass(module = "cavity._cavity", frozen)]
pub(crate) struct Mesh {
    backend: Arc<Backend>,
    state: RwLock<State>,
    patch_size: u32,
}

/// What a [`Mesh`] call reads and may replace.
struct State {
    mesh: TriMesh,
    topology: TopologyOn<'static>,
    duplicates: usize,
}

impl Mesh {
    /// The topology of `mesh` for `b`, keeping its patches.
    fn topology_of(b: &Backend, topology: Topology) -> PyResult<TopologyOn<'static>> {
        Ok(TopologyOn::of_owned(b, topology)
            .map_err(op_error)?
            .keeping_patches())
    }

    /// The state, read.
    fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Moves the mesh's vertices to `positions`.
    fn moved(&self, positions: Vec<[f32; 3]>) {
        self.state
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .mesh
            .positions = positions;
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
                state: RwLock::new(State {
                    mesh,
                    topology,
                    duplicates,
                }),
                patch_size,
            })
        })
    }

    /// The vertices, `float32` `(n, 3)` (a copy).
    #[getter]
    fn vertices<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        vertex_array(py, self.read().mesh.positions.clone())
    }

    /// The number of vertices.
    #[getter]
    fn num_vertices(&self) -> usize {
        self.read().mesh.num_vertices()
    }

    /// The number of faces.
    #[getter]
    fn num_faces(&self) -> usize {
        self.read().mesh.num_faces()
    }

    /// How many times the mesh was patched (`TopologyOn::patchings`): once
    /// per topology while the patch size stays, which shows the patches
    /// reused.
    #[getter]
    fn patchings(&self) -> u32 {
        self.read().topology.patchings()
    }

    /// The faces, `uint32` `(m, 3)` (a copy; duplicates removed).
    #[getter]
    fn faces<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u32>>> {
        face_array(py, self.read().mesh.faces.clone())
    }

    /// The duplicate faces removed when the mesh was made (0 after a
    /// remeshing, whose output has none).
    #[getter]
    fn duplicate_faces(&self) -> usize {
        self.read().duplicates
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
            let state = self.read();
            cavity_normals::vertex_normals_on(
                &state.mesh,
                &state.topology,
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
        &self,
        py: Python<'_>,
        dt: f32,
        steps: u32,
        tolerance: f32,
        max_iterations: u32,
    ) -> PyResult<Vec<u32>> {
        let settings = mcf_settings(dt, steps, tolerance, max_iterations, self.patch_size)?;
        let (out, report) = work(py, || {
            let state = self.read();
            cavity_mcf::smooth_on(&state.mesh, &state.topology, &settings, &self.backend)
                .map_err(op_error)
        })?;
        self.moved(out.positions);
        Ok(report.steps.iter().map(|s| s.iterations).collect())
    }

    /// Bilateral denoising (as `cavity.denoise`): the mesh's vertices
    /// moved.
    fn denoise(&self, py: Python<'_>, iterations: u32, max_hops: u32) -> PyResult<()> {
        let settings = denoise_settings(iterations, max_hops, self.patch_size)?;
        let out = work(py, || {
            let state = self.read();
            cavity_denoise::denoise_on(&state.mesh, &state.topology, &settings, &self.backend)
                .map_err(op_error)
        })?;
        self.moved(out.0.positions);
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
            let state = self.read();
            cavity_geodesic::geodesic_distance_on(
                &state.mesh,
                &state.topology,
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
        &self,
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
            let state = self.read();
            let host = state.topology.host(&self.backend).map_err(op_error)?;
            let (out, _) = remeshed(
                &self.backend,
                &state.mesh,
                &host,
                &settings,
                check,
                &progress,
            )?;
            let topology = Mesh::topology_of(&self.backend, Topology::new(&out))?;
            Ok::<_, PyErr>((out, topology))
        })?;
        *self.state.write().unwrap_or_else(|e| e.into_inner()) = State {
            mesh,
            topology,
            duplicates: 0,
        };
        Ok(())
    }
}

//! A volumetric mesh that stays on a backend between operations (the
//! paper's section 4: the operators live on the GPU and the derived
//! relations are computed there on demand): [`ResidentMesh`] holds the
//! positions, ∂1, ∂2 and ∂3 on the backend and caches each relation
//! ([`Relation`]) the first time an operation asks for it.
//!
//! A change to the mesh drops the cached relations computed from what
//! changed ([`Relation::depends_on`]): [`ResidentMesh::set_cells`]
//! replaces ∂3 and drops the relations through the cells, keeping
//! face-vertices and the transposes of ∂1 and ∂2;
//! [`ResidentMesh::set_positions`] drops none. An operation that makes
//! new elements, as [`ResidentMesh::subdivide`], makes a new mesh with an
//! empty cache. [`ResidentMesh::clear_relations`] drops them all (to time
//! an operation with its relations, or to free their memory).

use cavity::backend::Backend;
use cavity_volume_kernels::{EdgeOperator, Stride, blocks};

use crate::VolumeError;
use cavity::backend::buffer::Buffer;

use crate::device::{Csr, CsrOps};
use crate::mesh::VolumeMesh;
use crate::relations::RelationOps;
use crate::ternary::TernaryCsr;

/// The derived relations of a mesh, each a ternary CSR matrix (sorted
/// rows; the indirect ones unsigned).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relation {
    /// Each face's vertex loop (∂2 then ∂1, by tails).
    FaceVertices,
    /// Each cell's edges (∂3 then ∂2).
    CellEdges,
    /// Each cell's vertices (∂3 then face-vertices).
    CellVertices,
    /// `d1 = ∂1ᵀ`: each vertex's edges.
    VertexEdges,
    /// `d2 = ∂2ᵀ`: each edge's faces.
    EdgeFaces,
    /// `d3 = ∂3ᵀ`: each face's cells, signed.
    FaceCells,
    /// The transposed face-vertices: each vertex's faces.
    VertexFaces,
    /// The transposed cell-edges: each edge's cells.
    EdgeCells,
    /// The transposed cell-vertices: each vertex's cells.
    VertexCells,
}

/// What a mesh is made of: the positions and the three boundary
/// operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    /// The vertex positions (no relation depends on them).
    Positions,
    /// ∂1, the edges' vertex pairs.
    Edges,
    /// ∂2, faces to signed edges.
    Faces,
    /// ∂3, cells to signed faces.
    Cells,
}

impl Relation {
    /// The operators the relation is computed from: a change to one of
    /// them drops it from a [`ResidentMesh`]'s cache.
    pub fn depends_on(self) -> &'static [Operator] {
        use Operator::{Cells, Edges, Faces};
        match self {
            Relation::FaceVertices | Relation::VertexFaces => &[Edges, Faces],
            Relation::CellEdges | Relation::EdgeCells => &[Faces, Cells],
            Relation::CellVertices | Relation::VertexCells => &[Edges, Faces, Cells],
            Relation::VertexEdges => &[Edges],
            Relation::EdgeFaces => &[Faces],
            Relation::FaceCells => &[Cells],
        }
    }

    /// Every relation, in the order of their cache slots.
    pub const ALL: [Relation; 9] = [
        Relation::FaceVertices,
        Relation::CellEdges,
        Relation::CellVertices,
        Relation::VertexEdges,
        Relation::EdgeFaces,
        Relation::FaceCells,
        Relation::VertexFaces,
        Relation::EdgeCells,
        Relation::VertexCells,
    ];
}

/// A mesh's operators and positions on a backend, with its cached
/// relations.
pub struct ResidentMesh<'a> {
    pub(crate) d: &'a Backend,
    /// Three coordinates per vertex.
    pub(crate) positions: Buffer<f32>,
    /// ∂1: two words per edge.
    pub(crate) pairs: Buffer<u32>,
    pub(crate) d2: Csr,
    pub(crate) d3: Csr,
    /// Vertices, edges, faces, cells.
    pub(crate) counts: [u32; 4],
    cache: [Option<Csr>; 9],
}

impl<'a> ResidentMesh<'a> {
    /// `mesh` copied to `backend`.
    ///
    /// # Errors
    /// [`VolumeError::Backend`] when the GPU's kernels are missing or a
    /// copy fails.
    pub fn upload(backend: &'a Backend, mesh: &VolumeMesh) -> Result<Self, VolumeError> {
        crate::add_kernels(backend)?;
        let d = backend;
        let coordinates: Vec<f32> = mesh.positions().iter().flatten().copied().collect();
        let pairs: Vec<u32> = mesh.edges().iter().flatten().copied().collect();
        Ok(ResidentMesh {
            positions: d.upload(&coordinates)?,
            pairs: d.upload(&pairs)?,
            d2: d.upload_csr(mesh.d2())?,
            d3: d.upload_csr(mesh.d3())?,
            counts: mesh.counts().map(|x| x as u32),
            cache: Default::default(),
            d,
        })
    }

    /// A mesh of parts already on the backend, with an empty cache.
    pub(crate) fn of_parts(
        d: &'a Backend,
        (positions, pairs): (Buffer<f32>, Buffer<u32>),
        d2: Csr,
        d3: Csr,
        counts: [u32; 4],
    ) -> Self {
        ResidentMesh {
            d,
            positions,
            pairs,
            d2,
            d3,
            counts,
            cache: Default::default(),
        }
    }

    /// The backend the mesh lives on.
    pub fn backend(&self) -> &'a Backend {
        self.d
    }

    /// The positions on the backend: three words per vertex.
    pub fn positions_on_device(&self) -> &Buffer<f32> {
        &self.positions
    }

    /// Relation `r` on the backend, computed (with the relations it is
    /// made of) unless cached: its row offsets (`rows + 1` words), its
    /// entries, and its rows; for work that stays on the device (the
    /// tetrahedral collapse reads the cell-vertex relation).
    ///
    /// # Errors
    /// [`VolumeError::Backend`] when a launch fails.
    pub fn relation_on_device(
        &mut self,
        r: Relation,
    ) -> Result<(&Buffer<u32>, &Buffer<u32>, u32), VolumeError> {
        self.ensure(r)?;
        let a = self.cached(r);
        Ok((&a.offsets, &a.entries, a.rows))
    }

    /// Vertices, edges, faces and cells.
    pub fn counts(&self) -> [usize; 4] {
        self.counts.map(|x| x as usize)
    }

    /// Bytes of the positions and the operators (∂1 pairs, ∂2 and ∂3 in
    /// ternary CSR), as [`VolumeMesh::bytes`] counts them; the cached
    /// relations not included.
    pub fn bytes(&self) -> usize {
        let [v, e, _, _] = self.counts();
        let csr = |a: &Csr| 4 * (a.rows as usize + 1 + a.nnz as usize);
        12 * v + 8 * e + csr(&self.d2) + csr(&self.d3)
    }

    /// The vertex positions, copied to the host (after the work launched
    /// so far).
    ///
    /// # Errors
    /// [`VolumeError::Backend`] when a copy fails.
    pub fn positions(&self) -> Result<Vec<[f32; 3]>, VolumeError> {
        let n = 3 * self.counts[0] as usize;
        let coordinates = self.d.read_back(&self.positions, n)?;
        let (points, _) = coordinates.as_chunks::<3>();
        Ok(points.to_vec())
    }

    /// The mesh, moved to the host (after the work launched so far).
    ///
    /// # Errors
    /// [`VolumeError::Backend`] when a copy fails; [`VolumeError::Matrix`]
    /// if the operators came back malformed.
    pub fn download(self) -> Result<VolumeMesh, VolumeError> {
        let d = self.d;
        let [v, e, _, _] = self.counts.map(|x| x as usize);
        let coordinates = d.download(self.positions, 3 * v)?;
        let (points, _) = coordinates.as_chunks::<3>();
        let pairs = d.download(self.pairs, 2 * e)?;
        let (pairs, _) = pairs.as_chunks::<2>();
        VolumeMesh::from_operators(
            points.to_vec(),
            pairs.to_vec(),
            d.download_csr(self.d2)?,
            d.download_csr(self.d3)?,
        )
    }

    /// Relation `r`, computed on the backend (with the relations it is
    /// made of) unless cached.
    ///
    /// # Errors
    /// [`VolumeError::Backend`] when a launch or a copy fails.
    pub fn relation(&mut self, r: Relation) -> Result<TernaryCsr, VolumeError> {
        self.ensure(r)?;
        let a = self.cached(r);
        let d = self.d;
        let offsets = d.read_back(&a.offsets, a.rows as usize + 1)?;
        TernaryCsr::new(offsets, d.read_back(&a.entries, a.nnz as usize)?, a.columns)
    }

    /// Computes every relation not cached yet.
    ///
    /// # Errors
    /// As [`ResidentMesh::relation`].
    pub fn prepare(&mut self) -> Result<(), VolumeError> {
        for r in Relation::ALL {
            self.ensure(r)?;
        }
        Ok(())
    }

    /// Drops the cached relations.
    pub fn clear_relations(&mut self) {
        self.cache = Default::default();
    }

    /// Whether relation `r` is cached.
    pub fn is_cached(&self, r: Relation) -> bool {
        self.cache[r as usize].is_some()
    }

    /// Drops the cached relations that depend on `changed`.
    fn invalidate(&mut self, changed: Operator) {
        for r in Relation::ALL {
            if r.depends_on().contains(&changed) {
                self.cache[r as usize] = None;
            }
        }
    }

    /// Replaces the positions (as many as the vertices); no relation
    /// depends on them, so the cache is kept.
    ///
    /// # Errors
    /// [`VolumeError::Matrix`] for another number of positions;
    /// [`VolumeError::Backend`] when the copy fails.
    pub fn set_positions(&mut self, positions: &[[f32; 3]]) -> Result<(), VolumeError> {
        if positions.len() != self.counts[0] as usize {
            return Err(VolumeError::Matrix(format!(
                "{} positions for {} vertices",
                positions.len(),
                self.counts[0]
            )));
        }
        let coordinates: Vec<f32> = positions.iter().flatten().copied().collect();
        self.positions = self.d.upload(&coordinates)?;
        self.invalidate(Operator::Positions);
        Ok(())
    }

    /// Replaces ∂3 by `cells` over the same faces (the cells may be
    /// fewer, more or others, as a part of the mesh is), dropping the
    /// cached relations that depend on the cells ([`Relation::depends_on`]);
    /// the others stay.
    ///
    /// # Errors
    /// [`VolumeError::Matrix`] when `cells` has another number of columns
    /// than the mesh has faces; [`VolumeError::Backend`] when the copy
    /// fails.
    pub fn set_cells(&mut self, cells: &TernaryCsr) -> Result<(), VolumeError> {
        if cells.columns() != self.counts[2] {
            return Err(VolumeError::Matrix(format!(
                "∂3 of {} columns for {} faces",
                cells.columns(),
                self.counts[2]
            )));
        }
        self.d3 = self.d.upload_csr(cells)?;
        self.counts[3] = cells.rows();
        self.invalidate(Operator::Cells);
        Ok(())
    }

    /// Cached relation `r` (after [`ResidentMesh::ensure`]).
    pub(crate) fn cached(&self, r: Relation) -> &Csr {
        self.cache[r as usize]
            .as_ref()
            .expect("the relation was computed")
    }

    /// Computes relation `r` (and those it is made of) unless cached.
    pub(crate) fn ensure(&mut self, r: Relation) -> Result<(), VolumeError> {
        if self.cache[r as usize].is_some() {
            return Ok(());
        }
        let base = match r {
            Relation::CellVertices | Relation::VertexFaces => Some(Relation::FaceVertices),
            Relation::EdgeCells => Some(Relation::CellEdges),
            Relation::VertexCells => Some(Relation::CellVertices),
            _ => None,
        };
        if let Some(b) = base {
            self.ensure(b)?;
        }
        let d = self.d;
        let [vertices, edges, _, _] = self.counts;
        let value = match r {
            Relation::FaceVertices => d.face_vertices(&self.d2, &self.pairs, vertices)?,
            Relation::CellEdges => d.compose(&self.d3, &self.d2)?,
            Relation::CellVertices => d.compose(&self.d3, self.cached(Relation::FaceVertices))?,
            Relation::VertexEdges => d.transpose(&self.edge_operator()?)?,
            Relation::EdgeFaces => d.transpose(&self.d2)?,
            Relation::FaceCells => d.transpose(&self.d3)?,
            Relation::VertexFaces => d.transpose(self.cached(Relation::FaceVertices))?,
            Relation::EdgeCells => d.transpose(self.cached(Relation::CellEdges))?,
            Relation::VertexCells => d.transpose(self.cached(Relation::CellVertices))?,
        };
        debug_assert!(r != Relation::VertexEdges || value.rows == vertices);
        debug_assert!(r != Relation::EdgeFaces || value.rows == edges);
        self.cache[r as usize] = Some(value);
        Ok(())
    }

    /// ∂1 as a ternary matrix on the backend (`-tail + head` per edge).
    fn edge_operator(&self) -> Result<Csr, VolumeError> {
        let d = self.d;
        let [vertices, edges, _, _] = self.counts;
        let (mut offsets, mut entries) =
            (d.zeros(edges as usize + 1)?, d.zeros(2 * edges as usize)?);
        d.launch::<Stride>(blocks(edges + 1), (0, 0), (&mut offsets, edges + 1, 2))?;
        d.launch::<EdgeOperator>(blocks(edges), (0, 0), (&self.pairs, edges, &mut entries))?;
        Ok(Csr {
            offsets,
            entries,
            rows: edges,
            columns: vertices,
            nnz: 2 * edges,
        })
    }

    /// Waits for the work launched so far (on the GPU; the CPU backend's
    /// launches return when done).
    ///
    /// # Errors
    /// [`VolumeError::Backend`] when the GPU reports a failure.
    pub fn synchronize(&self) -> Result<(), VolumeError> {
        if let Backend::Cuda(gpu) = self.d {
            gpu.synchronize()?;
        }
        Ok(())
    }
}

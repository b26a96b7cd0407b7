//! Boundary extraction and Laplacian smoothing of inner vertices on a
//! backend (the paper's section 4.2; kernels in
//! `cavity_volume_kernels::boundary`).

use cavity::backend::Backend;
use cavity_volume_kernels::{
    LoopLengths, MarkBoundaryFaces, MarkEdgeVertices, MarkFaceEdges, MarkListed, SignedLoops,
    SmoothInner, blocks,
};

use crate::VolumeError;
use cavity::backend::buffer::Buffer;

use crate::mesh::{CellVertices, VolumeMesh};
use crate::quality::{Quality, Validity, keep_valid, quality};
use crate::resident::{Relation, ResidentMesh};
use crate::signed::{encode, index, is_negative, sign};

/// The boundary of a mesh: the boundary of the sum of its cells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Boundary {
    /// The boundary faces, ascending, each signed to face out of the mesh
    /// (`crate::signed`: -1 where the face's stored loop points inward).
    /// A face is on the boundary when the signs its cells use it with do
    /// not cancel: in a manifold mesh, a face of one cell.
    pub faces: Vec<u32>,
    /// The edges of the boundary faces, ascending.
    pub edges: Vec<u32>,
    /// The vertices of the boundary edges, ascending.
    pub vertices: Vec<u32>,
}

/// The boundary of `mesh` on `backend`: `d3 = ∂3ᵀ` ([`crate::transpose`]), the
/// faces whose cells' signs do not cancel, then their edges and vertices,
/// each set compacted by a scan ([`ResidentMesh::boundary`] on the mesh
/// copied to the backend).
///
/// # Errors
/// [`VolumeError::Backend`] when the GPU's kernels are missing, a launch
/// or a copy fails.
pub fn boundary(backend: &Backend, mesh: &VolumeMesh) -> Result<Boundary, VolumeError> {
    ResidentMesh::upload(backend, mesh)?.boundary()
}

/// `iterations` steps of Laplacian smoothing of the inner vertices (those
/// not on the [`boundary`]) on `backend`: each step moves every inner
/// vertex to the average of its neighbours' positions of the step before
/// (through `d1 = ∂1ᵀ`). Returns the positions ([`ResidentMesh::smooth`]
/// on the mesh copied to the backend).
///
/// # Errors
/// As [`boundary`].
pub fn smooth(
    backend: &Backend,
    mesh: &VolumeMesh,
    iterations: u32,
) -> Result<Vec<[f32; 3]>, VolumeError> {
    let mut m = ResidentMesh::upload(backend, mesh)?;
    m.smooth(iterations)?;
    m.positions()
}

/// What [`smooth_valid`] did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SmoothReport {
    /// The cells' quality before the smoothing.
    pub before: Quality,
    /// And after.
    pub after: Quality,
    /// Cells the plain steps inverted, summed over the steps (with
    /// [`Validity::Plain`]: the cells inverted at the end).
    pub plain_inverted: usize,
    /// Vertex moves cut short to keep the cells valid, summed over the
    /// steps.
    pub relaxed_moves: usize,
}

/// The scaled Jacobian below which a smoothing step may not push a cell
/// (nor below the cell's value before the step, when that is smaller):
/// [`smooth_valid`]'s floor.
pub const SMOOTHING_FLOOR: f64 = 0.1;

/// `iterations` steps of Laplacian smoothing of the inner vertices
/// ([`smooth`]) on `backend` that, by default ([`Validity::Keep`]), invert
/// no cell: after each step the cells (`cells`, the mesh's cell-vertex
/// lists) are checked on the host and the vertices of a cell the step
/// inverts, or whose scaled Jacobian it lowers below the smaller of
/// [`SMOOTHING_FLOOR`] and the cell's value before the step, move only
/// part of the way, or stay ([`crate::quality::keep_valid`], the step
/// before as the fallback). So a cell valid before the smoothing stays
/// valid, no worse than `min(0.1, its scaled Jacobian in the input)` (a
/// cell inverted in the input keeps its vertices where they are). [`Validity::Plain`]
/// runs the plain steps on the backend and only reports. Returns the
/// positions and the cells' quality before and after.
///
/// # Errors
/// As [`boundary`].
pub fn smooth_valid(
    backend: &Backend,
    mesh: &VolumeMesh,
    cells: &[CellVertices],
    iterations: u32,
    validity: Validity,
) -> Result<(Vec<[f32; 3]>, SmoothReport), VolumeError> {
    let mut m = ResidentMesh::upload(backend, mesh)?;
    m.smooth_valid(mesh.positions(), cells, iterations, validity)
}

impl ResidentMesh<'_> {
    /// [`smooth_valid`] of this mesh, resident on its backend, whose
    /// positions are `positions` (on the host; the checks read them) and
    /// cells `cells`: its positions are replaced by the result's.
    ///
    /// # Errors
    /// As [`boundary`].
    pub fn smooth_valid(
        &mut self,
        positions: &[[f32; 3]],
        cells: &[CellVertices],
        iterations: u32,
        validity: Validity,
    ) -> Result<(Vec<[f32; 3]>, SmoothReport), VolumeError> {
        let before = quality(cells, positions);
        let (mut plain_inverted, mut relaxed_moves) = (0, 0);
        let positions = match validity {
            Validity::Plain => {
                self.smooth(iterations)?;
                self.positions()?
            }
            Validity::Keep => {
                let mut current = positions.to_vec();
                for _ in 0..iterations {
                    self.smooth(1)?;
                    let (next, r) =
                        keep_valid(cells, &current, &self.positions()?, SMOOTHING_FLOOR);
                    plain_inverted += r.plain_inverted;
                    relaxed_moves += r.relaxed_vertices;
                    if r.relaxed_vertices > 0 {
                        self.set_positions(&next)?;
                    }
                    current = next;
                }
                current
            }
        };
        let after = quality(cells, &positions);
        if validity == Validity::Plain {
            plain_inverted = after.inverted;
        }
        Ok((
            positions,
            SmoothReport {
                before,
                after,
                plain_inverted,
                relaxed_moves,
            },
        ))
    }
}

/// The boundary's faces (signed), edges and vertices on the backend, with
/// their counts.
type Marked = ([Buffer<u32>; 3], [u32; 3]);

impl ResidentMesh<'_> {
    /// The boundary's elements, on the backend.
    fn mark_boundary(&mut self) -> Result<Marked, VolumeError> {
        self.ensure(Relation::FaceCells)?;
        let d = self.d;
        let [vertices, edges, faces, _] = self.counts;
        let d3 = self.cached(Relation::FaceCells);
        let (mut keep, mut minus) = (d.zeros(faces as usize + 1)?, d.zeros(faces as usize)?);
        let params = (&d3.offsets, &d3.entries, faces, &mut keep, &mut minus);
        d.launch::<MarkBoundaryFaces>(blocks(faces), (0, 0), params)?;
        let (face_list, nf) = d.compact(&mut keep, Some(&minus), faces)?;
        let mut edge_keep = d.zeros(edges as usize + 1)?;
        let d2 = &self.d2;
        let params = (&face_list, nf, &d2.offsets, &d2.entries, &mut edge_keep);
        d.launch::<MarkFaceEdges>(blocks(nf), (0, 0), params)?;
        let (edge_list, ne) = d.compact(&mut edge_keep, None, edges)?;
        let mut vertex_keep = d.zeros(vertices as usize + 1)?;
        let params = (&edge_list, ne, &self.pairs, &mut vertex_keep);
        d.launch::<MarkEdgeVertices>(blocks(ne), (0, 0), params)?;
        let (vertex_list, nv) = d.compact(&mut vertex_keep, None, vertices)?;
        Ok(([face_list, edge_list, vertex_list], [nf, ne, nv]))
    }

    /// The boundary of the mesh (as [`boundary`]; `d3 = ∂3ᵀ` cached).
    ///
    /// # Errors
    /// As [`boundary`].
    pub fn boundary(&mut self) -> Result<Boundary, VolumeError> {
        let ([faces, edges, vertices], [nf, ne, nv]) = self.mark_boundary()?;
        let d = self.d;
        Ok(Boundary {
            faces: d.download(faces, nf as usize)?,
            edges: d.download(edges, ne as usize)?,
            vertices: d.download(vertices, nv as usize)?,
        })
    }

    /// The boundary of the mesh (as [`ResidentMesh::boundary`]) with its
    /// faces' vertex loops gathered on the backend, each facing out of
    /// the mesh (the face's loop reversed where its sign is -1): face
    /// `faces[i]`'s loop is `vertices[offsets[i]..offsets[i + 1]]`. Only
    /// the boundary and its loops are copied back.
    ///
    /// # Errors
    /// As [`boundary`].
    pub fn boundary_loops(&mut self) -> Result<(Boundary, Vec<u32>, Vec<u32>), VolumeError> {
        let ([faces, edges, vertices], [nf, ne, nv]) = self.mark_boundary()?;
        let d = self.d;
        let mut starts = d.zeros::<u32>(nf as usize + 1)?;
        d.launch::<LoopLengths>(
            blocks(nf),
            (0, 0),
            (&faces, nf, &self.d2.offsets, &mut starts),
        )?;
        d.exclusive_scan(&mut starts, nf + 1)?;
        let total = d.element(&starts, nf as usize)?;
        let mut loops = d.zeros::<u32>(total as usize)?;
        let d2 = [&self.d2.offsets, &self.d2.entries, &self.pairs];
        let params = (&faces, nf, d2, &starts, &mut loops);
        d.launch::<SignedLoops>(blocks(nf), (0, 0), params)?;
        let boundary = Boundary {
            faces: d.download(faces, nf as usize)?,
            edges: d.download(edges, ne as usize)?,
            vertices: d.download(vertices, nv as usize)?,
        };
        let offsets = d.download(starts, nf as usize + 1)?;
        Ok((boundary, offsets, d.download(loops, total as usize)?))
    }

    /// `iterations` steps of Laplacian smoothing of the inner vertices on
    /// the backend (as [`smooth`]), the mesh's positions replaced; the
    /// boundary and `d1 = ∂1ᵀ` cached.
    ///
    /// # Errors
    /// As [`boundary`].
    pub fn smooth(&mut self, iterations: u32) -> Result<(), VolumeError> {
        let ([_, _, fixed], [_, _, nv]) = self.mark_boundary()?;
        self.ensure(Relation::VertexEdges)?;
        let d = self.d;
        let vertices = self.counts[0];
        let mut marks = d.zeros(vertices as usize)?;
        d.launch::<MarkListed>(blocks(nv), (0, 0), (&fixed, nv, &mut marks))?;
        let mut to = d.copy(&self.positions, 3 * vertices as usize)?;
        for _ in 0..iterations {
            let d1 = self.cached(Relation::VertexEdges);
            let params = (
                &d1.offsets,
                &d1.entries,
                vertices,
                &self.pairs,
                &marks,
                &self.positions,
                &mut to,
            );
            d.launch::<SmoothInner>(blocks(vertices), (0, 0), params)?;
            std::mem::swap(&mut self.positions, &mut to);
        }
        Ok(())
    }
}

/// [`boundary`] serially (the reference and the benchmark's serial run).
pub fn boundary_serial(mesh: &VolumeMesh) -> Boundary {
    let d3 = mesh.d3().transpose_serial();
    let mut faces = Vec::new();
    let mut edge_marks = vec![false; mesh.edges().len()];
    for f in 0..d3.rows() {
        let sum: i32 = d3.row(f).iter().map(|&c| sign(c)).sum();
        if sum != 0 {
            faces.push(encode(f, sum < 0));
            for &e in mesh.d2().row(f) {
                edge_marks[index(e) as usize] = true;
            }
        }
    }
    let mut vertex_marks = vec![false; mesh.positions().len()];
    let edges: Vec<u32> = (0..edge_marks.len() as u32)
        .filter(|&e| edge_marks[e as usize])
        .collect();
    for &e in &edges {
        for v in mesh.edges()[e as usize] {
            vertex_marks[v as usize] = true;
        }
    }
    Boundary {
        faces,
        edges,
        vertices: (0..vertex_marks.len() as u32)
            .filter(|&v| vertex_marks[v as usize])
            .collect(),
    }
}

/// [`smooth`] serially, in the same order of additions (bit for bit the
/// same positions).
pub fn smooth_serial(mesh: &VolumeMesh, iterations: u32) -> Vec<[f32; 3]> {
    let mut fixed = vec![false; mesh.positions().len()];
    for v in boundary_serial(mesh).vertices {
        fixed[v as usize] = true;
    }
    let d1 = mesh.d1().transpose_serial();
    let mut from = mesh.positions().to_vec();
    for _ in 0..iterations {
        let to: Vec<[f32; 3]> = (0..from.len() as u32)
            .map(|v| {
                let row = d1.row(v);
                if fixed[v as usize] || row.is_empty() {
                    return from[v as usize];
                }
                let mut sum = [0.0f32; 3];
                for &e in row {
                    let [a, b] = mesh.edges()[index(e) as usize];
                    let other = if is_negative(e) { b } else { a };
                    for (c, s) in sum.iter_mut().enumerate() {
                        *s += from[other as usize][c];
                    }
                }
                sum.map(|s| s / row.len() as f32)
            })
            .collect();
        from = to;
    }
    from
}

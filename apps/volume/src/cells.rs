//! Cell-vertex lists and the boundary operators on a backend (issue 55
//! item 6): [`ResidentMesh::from_cells`] builds ∂1, ∂2 and ∂3 there from
//! the lists by count, scan and fill, numbered as the host's sort-based
//! [`VolumeMesh::from_cells`] numbers them (the kernels and their steps:
//! `cavity_volume_kernels::cells`), and [`ResidentMesh::cell_lists`]
//! forms the lists of a resident mesh there, as [`VolumeMesh::cells`]
//! forms them. Tetrahedra, pyramids, prisms and hexahedra are built on
//! the backend; a mesh with a general polyhedron is built on the host and
//! uploaded.

use cavity::backend::Backend;
use cavity::backend::buffer::Buffer;
use cavity_volume_kernels::cells::{
    CellLists, CountCellFaces, CountCellVertices, CountEdgeRows, FillEdgeRows, FindOwners,
    FindSlotEdges, MarkFirstSlots, NumberFaces, SignedCellFaces, SignedFaceEdges,
};
use cavity_volume_kernels::{Stride, blocks};
use rayon::prelude::*;

use crate::VolumeError;
use crate::device::{Csr, CsrOps};
use crate::mesh::{CellVertices, VolumeMesh, check_cells, split_by};
use crate::resident::ResidentMesh;

/// Cells whose vertex counts one thread sums.
const PIECE: usize = 1 << 16;

/// The exclusive scan of the cells' vertex counts, their total last
/// (fewer than 2^29 cells, so that it fits in 32 bits), in parallel
/// pieces; `None` when a cell is a polyhedron.
fn vertex_offsets(cells: &[CellVertices]) -> Option<Vec<u32>> {
    let count = |c: &CellVertices| c.listed().map(|(v, _)| v.len() as u32);
    let sums: Vec<u32> = cells
        .par_chunks(PIECE)
        .map(|p| p.iter().map(count).sum::<Option<u32>>())
        .collect::<Option<_>>()?;
    let mut offsets = vec![0u32; cells.len() + 1];
    let mut start = 0;
    let starts: Vec<u32> = sums
        .iter()
        .map(|&s| {
            start += s;
            start - s
        })
        .collect();
    offsets[1..]
        .par_chunks_mut(PIECE)
        .zip(cells.par_chunks(PIECE))
        .zip(starts)
        .for_each(|((out, piece), mut sum)| {
            for (o, c) in out.iter_mut().zip(piece) {
                sum += count(c).unwrap_or(0);
                *o = sum;
            }
        });
    Some(offsets)
}

impl<'a> ResidentMesh<'a> {
    /// The mesh of `cells` over the vertices at `positions` (model units),
    /// built on `backend`: the same mesh, numbered alike, as
    /// [`VolumeMesh::from_cells`] uploaded (every face and edge stored
    /// once, as the first cell that names it runs it). Tetrahedra,
    /// pyramids, prisms and hexahedra are built there by count, scan and
    /// fill (`cavity_volume_kernels::cells`; the GPU or the CPU backend's
    /// threads); a mesh with a general polyhedron, or one too large for
    /// the 32-bit words of the build (2^27 - 1 cells or more: four words
    /// per cell-vertex entry), is built on the host and uploaded. The
    /// cells are checked on the backend, and by the host's check when one
    /// is bad, for its error.
    ///
    /// # Errors
    /// As [`VolumeMesh::from_cells`]; a failed launch or copy
    /// ([`VolumeError::Backend`]); operators that do not add up
    /// ([`VolumeError::Matrix`]: a face's edge missing from the edge rows,
    /// which checked cells do not give).
    pub fn from_cells(
        backend: &'a Backend,
        positions: &[[f32; 3]],
        cells: &[CellVertices],
    ) -> Result<Self, VolumeError> {
        // The rows of the fixed types' vertices; a polyhedron's (and a
        // mesh too large for the build's 32-bit words) go to the host.
        let small = cells.len() < u32::MAX as usize / 32 && positions.len() < i32::MAX as usize;
        if !small || cells.is_empty() {
            return ResidentMesh::on_host(backend, positions, cells);
        }
        let Some(offsets) = vertex_offsets(cells) else {
            return ResidentMesh::on_host(backend, positions, cells);
        };
        let nnz = *offsets.last().unwrap_or(&0) as usize;
        crate::add_kernels(backend)?;
        let d = backend;
        let (n, m) = (positions.len() as u32, cells.len() as u32);
        let mut flat = vec![0u32; nnz];
        split_by(&mut flat, &offsets)
            .into_par_iter()
            .zip(cells.par_iter())
            .for_each(|(out, c)| {
                if let Some((v, _)) = c.listed() {
                    out.copy_from_slice(v);
                }
            });
        let rows = Csr {
            offsets: d.upload(&offsets)?,
            entries: d.upload(&flat)?,
            rows: m,
            columns: n,
            nnz: nnz as u32,
        };
        drop((offsets, flat));
        // The cells checked on the backend: the host's check gives the
        // error of a bad cell.
        let coordinates = d.upload(positions.as_flattened())?;
        match Self::build(d, coordinates, rows)? {
            Some(mesh) => Ok(mesh),
            None => {
                check_cells(cells, positions.len())?;
                Err(VolumeError::Matrix(
                    "the backend found a cell naming a vertex out of range or twice that the host's check accepts".into(),
                ))
            }
        }
    }

    /// The mesh of `cells` tetrahedra, four vertices each in `tets` (each
    /// positively oriented, as [`CellVertices::Tetrahedron`]), over
    /// `vertices` vertices whose positions are `positions` (three words
    /// each), all on `backend`: [`ResidentMesh::from_cells`] of them,
    /// without leaving the device (the tetrahedral collapse's result).
    ///
    /// # Errors
    /// [`VolumeError::Matrix`] for a tetrahedron naming a vertex past
    /// `vertices` or one twice, or buffers shorter than the counts; a
    /// failed launch ([`VolumeError::Backend`]).
    pub fn from_tetrahedra(
        backend: &'a Backend,
        positions: Buffer<f32>,
        tets: Buffer<u32>,
        [vertices, cells]: [u32; 2],
    ) -> Result<Self, VolumeError> {
        crate::add_kernels(backend)?;
        let d = backend;
        let short = positions.len() < 3 * vertices as usize || tets.len() < 4 * cells as usize;
        if short || cells >= u32::MAX / 32 || vertices >= i32::MAX as u32 {
            return Err(VolumeError::Matrix(format!(
                "{} position words and {} tetrahedron words for {vertices} vertices and {cells} tetrahedra (fewer than 2^27 - 1)",
                positions.len(),
                tets.len()
            )));
        }
        let mut offsets = d.zeros::<u32>(cells as usize + 1)?;
        d.launch::<Stride>(blocks(cells + 1), (0, 0), (&mut offsets, cells + 1, 4))?;
        let rows = Csr {
            offsets,
            entries: tets,
            rows: cells,
            columns: vertices,
            nnz: 4 * cells,
        };
        Self::build(d, positions, rows)?.ok_or_else(|| {
            VolumeError::Matrix(format!(
                "a tetrahedron names a vertex past the {vertices} vertices, or one twice"
            ))
        })
    }

    /// The operators of the cells of `rows` (their vertex rows, `columns`
    /// vertices) on `d` with the vertices' `coordinates` (the steps of
    /// `cavity_volume_kernels::cells`); `None` when a cell has a vertex
    /// count of no fixed type, or names a vertex out of range or twice.
    fn build(
        d: &'a Backend,
        coordinates: Buffer<f32>,
        rows: Csr,
    ) -> Result<Option<Self>, VolumeError> {
        let (n, m, nnz) = (rows.columns, rows.rows, rows.nnz as usize);
        let mut occurrences = d.zeros::<u32>(m as usize + 1)?;
        let mut bad = d.zeros::<u32>(1)?;
        let params = (
            [&rows.offsets, &rows.entries],
            m,
            n,
            &mut occurrences,
            &mut bad,
        );
        d.launch::<CountCellFaces>(blocks(m), (0, 0), params)?;
        if d.element(&bad, 0)? != 0 {
            return Ok(None);
        }
        d.exclusive_scan(&mut occurrences, m + 1)?;
        let o = d.element(&occurrences, m as usize)?;
        // The star: each vertex's cells, ascending.
        let star = d.transpose(&rows)?;
        let mesh = [&rows.offsets, &rows.entries, &star.offsets, &star.entries];

        // ∂3: the occurrences' first occurrences found, the faces
        // numbered.
        let mut owner = d.zeros::<u32>(o as usize)?;
        let mut face_first = d.zeros::<u32>(m as usize + 1)?;
        let params = (mesh, &occurrences, m, &mut owner, &mut face_first);
        d.launch::<FindOwners>(blocks(m), (0, 0), params)?;
        d.exclusive_scan(&mut face_first, m + 1)?;
        let f = d.element(&face_first, m as usize)?;
        let mut number = d.zeros::<u32>(o as usize)?;
        let mut face_cell = d.zeros::<u32>(f as usize)?;
        let mut face_local = d.zeros::<u32>(f as usize)?;
        let mut face_offsets = d.zeros::<u32>(f as usize + 1)?;
        let ins = [&rows.offsets, &occurrences, &owner, &face_first];
        let params = (
            ins,
            m,
            &mut number,
            &mut face_cell,
            &mut face_local,
            &mut face_offsets,
        );
        d.launch::<NumberFaces>(blocks(m), (0, 0), params)?;
        drop(face_first);
        let mut d3 = d.zeros::<u32>(o as usize)?;
        d.launch::<SignedCellFaces>(blocks(o), (0, 0), (&owner, &number, o, &mut d3))?;
        drop((owner, number));
        d.exclusive_scan(&mut face_offsets, f + 1)?;
        let slots = d.element(&face_offsets, f as usize)?;

        // The edge rows: each vertex's higher neighbours.
        let mut edge_offsets = d.zeros::<u32>(n as usize + 1)?;
        let mut upper = d.zeros::<u32>(4 * nnz)?;
        let params = (mesh, n, &mut edge_offsets, &mut upper);
        d.launch::<CountEdgeRows>(blocks(n), (0, 0), params)?;
        d.exclusive_scan(&mut edge_offsets, n + 1)?;
        let e = d.element(&edge_offsets, n as usize)?;
        let mut lower = d.zeros::<u32>(e as usize)?;
        let mut higher = d.zeros::<u32>(e as usize)?;
        let params = (
            [&star.offsets, &edge_offsets, &upper],
            n,
            &mut lower,
            &mut higher,
        );
        d.launch::<FillEdgeRows>(blocks(n), (0, 0), params)?;
        drop((upper, star));

        // ∂2 and ∂1: each slot's edge, the edges numbered by their first
        // slots.
        let mut slot_edge = d.zeros::<u32>(slots as usize)?;
        let mut first = d.zeros::<u32>(e as usize)?;
        let mut missing = d.zeros::<u32>(1)?;
        let params = (
            [&face_cell, &face_local, &face_offsets],
            [&rows.offsets, &rows.entries, &edge_offsets, &higher],
            f,
            &mut slot_edge,
            &mut first,
            &mut missing,
        );
        d.launch::<FindSlotEdges>(blocks(f), (0, 0), params)?;
        drop((face_cell, face_local, rows, edge_offsets));
        let mut numbers = d.zeros::<u32>(slots as usize + 1)?;
        let params = (&slot_edge, &first, slots, &mut numbers);
        d.launch::<MarkFirstSlots>(blocks(slots), (0, 0), params)?;
        d.exclusive_scan(&mut numbers, slots + 1)?;
        let [lost, named] = [
            d.element(&missing, 0)?,
            d.element(&numbers, slots as usize)?,
        ];
        if lost > 0 {
            return Err(VolumeError::Matrix(format!(
                "{lost} face edges missing from the edge rows"
            )));
        }
        // The mesh's edges are those its stored face loops name: a cell
        // edge that runs only through a later cell's loop of a face
        // stored with another loop (the same vertices in another cyclic
        // order) has a row but no number, as on the host.
        let e = named;
        let mut d2 = d.zeros::<u32>(slots as usize)?;
        let mut pairs = d.zeros::<u32>(2 * e as usize)?;
        let ins = [&slot_edge, &first, &numbers, &lower, &higher];
        d.launch::<SignedFaceEdges>(blocks(slots), (0, 0), (ins, slots, &mut d2, &mut pairs))?;
        let faces = Csr {
            offsets: face_offsets,
            entries: d2,
            rows: f,
            columns: e,
            nnz: slots,
        };
        let cells = Csr {
            offsets: occurrences,
            entries: d3,
            rows: m,
            columns: f,
            nnz: o,
        };
        Ok(Some(ResidentMesh::of_parts(
            d,
            (coordinates, pairs),
            faces,
            cells,
            [n, e, f, m],
        )))
    }

    /// [`VolumeMesh::from_cells`] uploaded to `backend`.
    fn on_host(
        backend: &'a Backend,
        positions: &[[f32; 3]],
        cells: &[CellVertices],
    ) -> Result<Self, VolumeError> {
        ResidentMesh::upload(backend, &VolumeMesh::from_cells(positions.to_vec(), cells)?)
    }

    /// The mesh's cells as cell-vertex lists, formed on its backend: the
    /// same lists as [`VolumeMesh::cells`] of the mesh downloaded (each
    /// cell's vertices in its type's order, told from its faces' sizes;
    /// `cavity_volume_kernels::cells::CellLists`). `None` when a cell is
    /// a polyhedron of no fixed type, whose lists the host forms
    /// ([`VolumeMesh::cells`]).
    ///
    /// # Errors
    /// [`VolumeError::Backend`] when a launch or a copy fails.
    pub fn cell_lists(&self) -> Result<Option<Vec<CellVertices>>, VolumeError> {
        let d = self.d;
        let m = self.counts[3];
        let ops = [
            &self.d3.offsets,
            &self.d3.entries,
            &self.d2.offsets,
            &self.d2.entries,
            &self.pairs,
        ];
        let mut offsets = d.zeros::<u32>(m as usize + 1)?;
        d.launch::<CountCellVertices>(blocks(m), (0, 0), (ops, m, &mut offsets))?;
        d.exclusive_scan(&mut offsets, m + 1)?;
        let total = d.element(&offsets, m as usize)?;
        let mut vertices: Buffer<u32> = d.zeros(total as usize)?;
        d.launch::<CellLists>(blocks(m), (0, 0), (ops, m, &offsets, &mut vertices))?;
        let offsets = d.download(offsets, m as usize + 1)?;
        let vertices = d.download(vertices, total as usize)?;
        if offsets.par_windows(2).any(|w| w[0] == w[1]) {
            return Ok(None);
        }
        Ok(Some(
            offsets
                .par_windows(2)
                .map(|w| CellVertices::of_listed(&vertices[w[0] as usize..w[1] as usize]))
                .collect(),
        ))
    }
}

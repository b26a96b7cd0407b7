//! Volumetric Catmull-Clark subdivision (Joy and MacCracken, "The
//! Refinement Rules for Catmull-Clark Solids", 1996) on the boundary
//! operators, as the paper's section 4.3 does it.
//!
//! One level maps a mesh of `V` vertices, `E` edges, `F` faces and `C`
//! cells to one of (eqs. 1-4)
//!
//! - `V + E + F + C` vertices: each vertex kept, then a point per edge,
//!   face and cell, in that order;
//! - `nnz(∂1) + nnz(∂2) + nnz(∂3)` edges: each edge split in two
//!   ("edge-edges", `2e` from the tail to the edge point and `2e + 1` on
//!   to the head, eq. 9), an edge from each edge point of a face to its
//!   face point ("face-edges", numbered by the entry of ∂2, eq. 10) and
//!   from each face point of a cell to its cell point ("cell-edges", by
//!   the entry of ∂3);
//! - `nnz(face-vertices) + nnz(cell-edges)` quadrilateral faces: one per
//!   corner of each face ("face-faces", by the entry of ∂2, oriented as
//!   the face, fig. 7), then one per edge of each cell ("cell-faces", by
//!   the entry of the cell-edges relation, through the edge point, the
//!   two face points of the cell's faces at that edge and the cell point,
//!   its normal along the edge's direction, fig. 7);
//! - `nnz(cell-vertices)` cells: one per vertex of each cell, enclosed by
//!   the face-faces of the cell's faces at that vertex and the cell-faces
//!   of its edges at that vertex (a hexahedron at a vertex of three faces,
//!   as every vertex of a tetrahedron or hexahedron; a polyhedron of
//!   `2k` quadrilaterals at a vertex of `k` faces, as a pyramid's apex,
//!   fig. 2).
//!
//! Positions (eqs. 5-8 and Joy and MacCracken's rules, which reproduce
//! tricubic B-splines on regular hexahedral grids), with cell, face and
//! edge centres the averages of their vertices:
//!
//! - cell point: the cell centre (eq. 5);
//! - face point: the face centre on the boundary, else the average of the
//!   face centre and the mean centre of its cells (eq. 8);
//! - edge point, inside: `(C + 2A + (n - 3)M) / n` over the edge's `n`
//!   faces, `C` the mean centre of its cells, `A` of its faces, `M` its
//!   midpoint; on the boundary (surface Catmull-Clark over the boundary
//!   faces): `(M + A_b) / 2`, `A_b` the mean centre of its two boundary
//!   faces, or `M` where it has another number of them (a crease);
//! - vertex point, inside: `(C + 3A + 3M + P) / 8`, the means over its
//!   cells, faces and edges (centres and midpoints), `P` the vertex; on
//!   the boundary: `(Q + 2R + (n - 3)P) / n` over its `n` boundary edges
//!   and its boundary faces (`Q` their mean centre, `R` the edges' mean
//!   midpoint); `P` where a crease edge or fewer than three boundary
//!   edges meet.
//!
//! **Validity** (issue 52): the smoothed positions can invert cells
//! where the mesh is thin (a boundary vertex pulled inward past the cell
//! across the part). [`subdivide_valid`] checks every new cell after each
//! level (the scaled Jacobian, [`crate::quality`]) and, by default
//! ([`Validity::Keep`]), relaxes the vertices of each inverted cell
//! towards the **linear split** ([`linear_split`]: every new point at the
//! plain centre of its edge, face or cell, the old vertices kept) until no
//! cell is inverted ([`crate::quality::keep_valid`]; it ends, at the
//! latest with those cells' vertices at the linear split). What is
//! guaranteed: no output cell is inverted whose cell of the linear split
//! is valid. The linear split of a tetrahedron of positive volume is
//! always valid (its four hexahedra are the affine image of those of a
//! regular tetrahedron, whose corners are all positive); that of a
//! hexahedron, prism or pyramid is the cell's trilinear (or linear)
//! interpolation at the half-way points, valid for any affine image of
//! the reference cell and for moderately distorted ones, but a strongly
//! twisted hexahedron can be valid at its corners and not at the half-way
//! points: such cells, and flat input cells, are counted in
//! [`LevelReport::quality`] rather than fixed. [`Validity::Plain`] keeps
//! the plain rules (and still reports). The check and the relaxation run
//! on the host in parallel (rayon), between the levels the backend runs.

mod levels;

use cavity::backend::Backend;
use cavity_volume_kernels::{
    CellCells, CellFaces, EdgePoints, FaceFaces, FacePoints, RowMeans, SplitEdges, SpokeEdges,
    Stride, VertexPoints, blocks,
};

use crate::VolumeError;
use crate::device::Csr;
use crate::mesh::VolumeMesh;
pub use crate::quality::Validity;
use crate::relations::{compose_serial, face_vertices_serial};
use crate::resident::{Relation, ResidentMesh};
use crate::signed::{encode, index, is_negative, sign};
use crate::ternary::TernaryCsr;
pub use cavity_volume_kernels::subdivide::{half_from, half_to};
pub use levels::{LevelReport, Plan, Subdivided, linear_split, plan, subdivide_valid};

/// Element counts of a mesh: vertices, edges, faces, cells.
pub type Counts = [usize; 4];

/// The counts after one level of subdivision of a mesh of `counts` whose
/// ∂1, ∂2 and ∂3 hold `nnz` entries and whose face-vertices, cell-edges
/// and cell-vertices relations hold `relations` (eqs. 1-4).
pub fn counts_after(counts: Counts, nnz: [usize; 3], relations: [usize; 3]) -> Counts {
    let [v, e, f, c] = counts;
    let [fv, ce, cv] = relations;
    [v + e + f + c, nnz.iter().sum(), fv + ce, cv]
}

/// Checks a subdivided mesh's `counts`: elements below `2³¹` (the
/// ternary entries' indices), and the words of each array (three per
/// position, two per edge, four per face, up to eight per cell) below
/// `2³²`.
fn check_counts(counts: Counts) -> Result<(), VolumeError> {
    let words = [3, 2, 4, 8];
    for ((what, n), w) in ["vertices", "edges", "faces", "cells"]
        .into_iter()
        .zip(counts)
        .zip(words)
    {
        if n > i32::MAX as usize || n.saturating_mul(w) > u32::MAX as usize {
            return Err(VolumeError::TooLarge { what, count: n });
        }
    }
    Ok(())
}

/// The relations a level of subdivision reads, serially.
struct Relations {
    face_vertices: TernaryCsr,
    cell_edges: TernaryCsr,
    cell_vertices: TernaryCsr,
}

/// One level of Catmull-Clark subdivision of `mesh`, serially: the
/// reference the backends' [`subdivide`] is
/// tested against (the same mesh, bit for bit) and the benchmark's serial
/// run.
///
/// # Errors
/// [`VolumeError::TooLarge`] as [`subdivide`].
pub fn subdivide_serial(mesh: &VolumeMesh) -> Result<VolumeMesh, VolumeError> {
    let face_vertices = face_vertices_serial(mesh);
    let relations = Relations {
        cell_edges: compose_serial(mesh.d3(), mesh.d2()),
        cell_vertices: compose_serial(mesh.d3(), &face_vertices),
        face_vertices,
    };
    let counts = counts_after(
        mesh.counts(),
        [
            2 * mesh.edges().len(),
            mesh.d2().entries().len(),
            mesh.d3().entries().len(),
        ],
        [
            relations.face_vertices.entries().len(),
            relations.cell_edges.entries().len(),
            relations.cell_vertices.entries().len(),
        ],
    );
    check_counts(counts)?;
    let positions = positions_serial(mesh, &relations);
    let edges = edges_serial(mesh);
    let faces = faces_serial(mesh, &relations);
    let cells = cells_serial(mesh, &relations);
    VolumeMesh::from_operators(
        positions,
        edges,
        TernaryCsr::new(faces.0, faces.1, counts[1] as u32)?,
        TernaryCsr::new(cells.0, cells.1, counts[2] as u32)?,
    )
}

/// The new edges: edge-edges, face-edges, cell-edges.
fn edges_serial(mesh: &VolumeMesh) -> Vec<[u32; 2]> {
    let [v, e, f, _] = mesh.counts().map(|x| x as u32);
    let mut edges = Vec::new();
    for (i, &[a, b]) in mesh.edges().iter().enumerate() {
        edges.push([a, v + i as u32]);
        edges.push([v + i as u32, b]);
    }
    for (rows, from, to) in [(mesh.d2(), v, v + e), (mesh.d3(), v + e, v + e + f)] {
        for r in 0..rows.rows() {
            for &x in rows.row(r) {
                edges.push([from + index(x), to + r]);
            }
        }
    }
    edges
}

/// The new faces as ∂2: face-faces, then cell-faces.
fn faces_serial(mesh: &VolumeMesh, relations: &Relations) -> (Vec<u32>, Vec<u32>) {
    let d2 = mesh.d2();
    let two_e = 2 * mesh.edges().len() as u32;
    let nnz2 = d2.entries().len() as u32;
    let mut entries = Vec::new();
    for f in 0..d2.rows() {
        let (start, end) = (d2.offsets()[f as usize], d2.offsets()[f as usize + 1]);
        for o in start..end {
            let prev = if o == start { end - 1 } else { o - 1 };
            let (here, before) = (d2.entries()[o as usize], d2.entries()[prev as usize]);
            entries.extend([
                half_from(here),
                encode(two_e + o, false),
                encode(two_e + prev, true),
                half_to(before),
            ]);
        }
    }
    let d3 = mesh.d3();
    for c in 0..d3.rows() {
        for &e in relations.cell_edges.row(c) {
            // The entries of ∂3 and ∂2 of the cell's two faces at `e`: the
            // one whose outward loop runs along `e` and the one against it.
            let (mut along, mut against) = ((0, 0), (0, 0));
            for o3 in d3.offsets()[c as usize]..d3.offsets()[c as usize + 1] {
                let face = d3.entries()[o3 as usize];
                let f = index(face);
                for o2 in d2.offsets()[f as usize]..d2.offsets()[f as usize + 1] {
                    let x = d2.entries()[o2 as usize];
                    if index(x) == index(e) {
                        if sign(face) * sign(x) > 0 {
                            along = (o3, o2);
                        } else {
                            against = (o3, o2);
                        }
                    }
                }
            }
            entries.extend([
                encode(two_e + against.1, false),
                encode(two_e + nnz2 + against.0, false),
                encode(two_e + nnz2 + along.0, true),
                encode(two_e + along.1, true),
            ]);
        }
    }
    let offsets = (0..=entries.len() as u32 / 4).map(|i| 4 * i).collect();
    (offsets, entries)
}

/// The new cells as ∂3: per vertex of each cell, the face-faces of the
/// cell's faces there and the cell-faces of its edges there.
fn cells_serial(mesh: &VolumeMesh, relations: &Relations) -> (Vec<u32>, Vec<u32>) {
    let (d2, d3) = (mesh.d2(), mesh.d3());
    let nnz2 = d2.entries().len() as u32;
    let fv = &relations.face_vertices;
    let ce = &relations.cell_edges;
    let (mut offsets, mut entries) = (vec![0u32], Vec::new());
    for c in 0..d3.rows() {
        for &v in relations.cell_vertices.row(c) {
            for &face in d3.row(c) {
                let f = index(face) as usize;
                for o2 in d2.offsets()[f]..d2.offsets()[f + 1] {
                    if fv.entries()[o2 as usize] == v {
                        entries.push(encode(o2, is_negative(face)));
                    }
                }
            }
            for q in ce.offsets()[c as usize]..ce.offsets()[c as usize + 1] {
                let [a, b] = mesh.edges()[ce.entries()[q as usize] as usize];
                if a == v || b == v {
                    entries.push(encode(nnz2 + q, b == v));
                }
            }
            offsets.push(entries.len() as u32);
        }
    }
    (offsets, entries)
}

/// `sum / n` of three coordinates.
fn mean(sum: [f32; 3], n: usize) -> [f32; 3] {
    sum.map(|s| s / n as f32)
}

/// `a + b` by coordinates.
fn add(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

/// `a * s`.
fn scale(a: [f32; 3], s: f32) -> [f32; 3] {
    a.map(|x| x * s)
}

/// The mean of `points[i]` over the indices of `row` (signs dropped).
fn row_mean(row: &[u32], points: &[[f32; 3]], keep: impl Fn(u32) -> bool) -> ([f32; 3], usize) {
    let mut sum = [0.0f32; 3];
    let mut n = 0;
    for &x in row {
        if keep(index(x)) {
            sum = add(sum, points[index(x) as usize]);
            n += 1;
        }
    }
    (mean(sum, n.max(1)), n)
}

/// The new positions: vertex, edge, face and cell points.
fn positions_serial(mesh: &VolumeMesh, relations: &Relations) -> Vec<[f32; 3]> {
    let p = mesh.positions();
    let cell_centres: Vec<[f32; 3]> = (0..relations.cell_vertices.rows())
        .map(|c| row_mean(relations.cell_vertices.row(c), p, |_| true).0)
        .collect();
    let face_centres: Vec<[f32; 3]> = (0..relations.face_vertices.rows())
        .map(|f| row_mean(relations.face_vertices.row(f), p, |_| true).0)
        .collect();
    let midpoints: Vec<[f32; 3]> = mesh
        .edges()
        .iter()
        .map(|&[a, b]| scale(add(p[a as usize], p[b as usize]), 0.5))
        .collect();
    let face_cells = mesh.d3().transpose_serial();
    let on_boundary: Vec<bool> = (0..face_cells.rows())
        .map(|f| face_cells.row(f).iter().map(|&c| sign(c)).sum::<i32>() != 0)
        .collect();
    let face_points = (0..face_cells.rows()).map(|f| {
        let centre = face_centres[f as usize];
        if on_boundary[f as usize] {
            return centre;
        }
        let cells = row_mean(face_cells.row(f), &cell_centres, |_| true).0;
        scale(add(centre, cells), 0.5)
    });
    let edge_faces = mesh.d2().transpose_serial();
    let edge_cells = relations.cell_edges.transpose_serial();
    // 0: inside, 1: on a smooth part of the boundary, 2: a crease.
    let edge_kind: Vec<u8> = (0..edge_faces.rows())
        .map(|e| {
            let n = edge_faces
                .row(e)
                .iter()
                .filter(|&&f| on_boundary[index(f) as usize])
                .count();
            match n {
                0 => 0,
                2 => 1,
                _ => 2,
            }
        })
        .collect();
    let edge_points = (0..edge_faces.rows()).map(|e| {
        let m = midpoints[e as usize];
        match edge_kind[e as usize] {
            0 => {
                let (a, n) = row_mean(edge_faces.row(e), &face_centres, |_| true);
                let c = row_mean(edge_cells.row(e), &cell_centres, |_| true).0;
                let sum = add(add(c, scale(a, 2.0)), scale(m, n as f32 - 3.0));
                mean(sum, n)
            }
            1 => {
                let b = row_mean(edge_faces.row(e), &face_centres, |f| {
                    on_boundary[f as usize]
                })
                .0;
                scale(add(m, b), 0.5)
            }
            _ => m,
        }
    });
    let vertex_edges = mesh.d1().transpose_serial();
    let vertex_faces = relations.face_vertices.transpose_serial();
    let vertex_cells = relations.cell_vertices.transpose_serial();
    let vertex_points = (0..p.len() as u32).map(|v| {
        let here = p[v as usize];
        let edges = vertex_edges.row(v);
        if edges.iter().any(|&e| edge_kind[index(e) as usize] == 2) {
            return here;
        }
        if edges.iter().any(|&e| edge_kind[index(e) as usize] == 1) {
            let (r, n) = row_mean(edges, &midpoints, |e| edge_kind[e as usize] == 1);
            let q = row_mean(vertex_faces.row(v), &face_centres, |f| {
                on_boundary[f as usize]
            })
            .0;
            if n < 3 {
                return here;
            }
            let sum = add(add(q, scale(r, 2.0)), scale(here, n as f32 - 3.0));
            return mean(sum, n);
        }
        if vertex_cells.row(v).is_empty() {
            return here;
        }
        let c = row_mean(vertex_cells.row(v), &cell_centres, |_| true).0;
        let a = row_mean(vertex_faces.row(v), &face_centres, |_| true).0;
        let m = row_mean(edges, &midpoints, |_| true).0;
        let sum = add(add(c, scale(a, 3.0)), add(scale(m, 3.0), here));
        scale(sum, 0.125)
    });
    let mut out: Vec<[f32; 3]> = vertex_points.collect();
    out.extend(edge_points);
    out.extend(face_points);
    out.extend(cell_centres);
    out
}

/// `levels` levels of Catmull-Clark subdivision of `mesh` on `backend`
/// (the mesh stays there between levels: [`ResidentMesh::subdivide`]),
/// equal to as many [`subdivide_serial`] levels, bit for bit.
///
/// # Errors
/// [`VolumeError::TooLarge`] when a level's mesh would have more than
/// `2³¹ - 1` elements of a kind (or more words in an array than 32-bit
/// indices reach); [`VolumeError::Backend`] when the GPU's kernels are
/// missing, a launch or a copy fails (out of memory included).
pub fn subdivide(
    backend: &Backend,
    mesh: &VolumeMesh,
    levels: u32,
) -> Result<VolumeMesh, VolumeError> {
    let mut m = ResidentMesh::upload(backend, mesh)?;
    for _ in 0..levels {
        m = m.subdivide()?;
    }
    m.download()
}

impl<'a> ResidentMesh<'a> {
    /// One level of Catmull-Clark subdivision on the backend: the new
    /// mesh, resident on the same backend (its relations not computed);
    /// the relations it needs are computed and cached on this one.
    ///
    /// # Errors
    /// As [`subdivide`].
    pub fn subdivide(&mut self) -> Result<ResidentMesh<'a>, VolumeError> {
        self.prepare()?;
        let d = self.d;
        let [v, e, f, c] = self.counts;
        let (nnz2, nnz3) = (self.d2.nnz, self.d3.nnz);
        let fv = self.cached(Relation::FaceVertices);
        let ce = self.cached(Relation::CellEdges);
        let cv = self.cached(Relation::CellVertices);
        let counts = counts_after(
            self.counts(),
            [2 * e as usize, nnz2 as usize, nnz3 as usize],
            [fv.nnz as usize, ce.nnz as usize, cv.nnz as usize],
        );
        check_counts(counts)?;
        let [nv, ne, nf, nc] = counts.map(|x| x as u32);
        let two_e = 2 * e;

        // ∂1: edge-edges, face-edges, cell-edges.
        let mut pairs = d.zeros(2 * ne as usize)?;
        let (d2, d3) = (&self.d2, &self.d3);
        {
            let (edge_edges, spokes) = pairs.view_mut().split_at(2 * two_e as usize);
            let (face_edges, cell_edges) = spokes.split_at(2 * nnz2 as usize);
            d.launch::<SplitEdges>(blocks(e), (0, 0), (&self.pairs, e, v, edge_edges))?;
            let params = (&d2.offsets, &d2.entries, f, [v, v + e], face_edges);
            d.launch::<SpokeEdges>(blocks(f), (0, 0), params)?;
            let bases = [v + e, v + e + f];
            let params = (&d3.offsets, &d3.entries, c, bases, cell_edges);
            d.launch::<SpokeEdges>(blocks(c), (0, 0), params)?;
        }

        // ∂2: face-faces, cell-faces, four edges each.
        let mut face_offsets = d.zeros(nf as usize + 1)?;
        let mut face_entries = d.zeros(4 * nf as usize)?;
        d.launch::<Stride>(blocks(nf + 1), (0, 0), (&mut face_offsets, nf + 1, 4))?;
        let params = (&d2.offsets, &d2.entries, f, two_e, &mut face_entries);
        d.launch::<FaceFaces>(blocks(f), (0, 0), params)?;
        let ops = [
            &d3.offsets,
            &d3.entries,
            &d2.offsets,
            &d2.entries,
            &ce.offsets,
            &ce.entries,
        ];
        let params = (ops, c, [two_e, nnz2], &mut face_entries);
        d.launch::<CellFaces>(blocks(c), (0, 0), params)?;

        // ∂3: count, scan, fill.
        let mut cell_offsets = d.zeros(nc as usize + 1)?;
        let ops = [
            &d3.offsets,
            &d3.entries,
            &d2.offsets,
            &fv.entries,
            &ce.offsets,
            &ce.entries,
            &cv.offsets,
            &cv.entries,
        ];
        let mut none = d.zeros::<u32>(0)?;
        let params = (ops, c, &self.pairs, nnz2, &mut cell_offsets, &mut none);
        d.launch::<CellCells>(blocks(c), (0, 0), params)?;
        d.exclusive_scan(&mut cell_offsets, nc + 1)?;
        let total = d.element(&cell_offsets, nc as usize)?;
        let mut cell_entries = d.zeros(total as usize)?;
        let params = (
            ops,
            c,
            &self.pairs,
            nnz2,
            &mut cell_offsets,
            &mut cell_entries,
        );
        d.launch::<CellCells>(blocks(c), (0, 0), params)?;

        // Positions: cell points (the centres), face, edge, vertex points,
        // numbered vertices, edges, faces, cells.
        let mut positions = d.zeros::<f32>(3 * nv as usize)?;
        let (mut face_centres, mut on_boundary, mut kinds) = (
            d.zeros::<f32>(3 * f as usize)?,
            d.zeros::<u32>(f as usize)?,
            d.zeros::<u32>(e as usize)?,
        );
        let old = &self.positions;
        let rows = |r: Relation| {
            let a = self.cached(r);
            [&a.offsets, &a.entries]
        };
        let (fcells, efaces, ecells) = (
            rows(Relation::FaceCells),
            rows(Relation::EdgeFaces),
            rows(Relation::EdgeCells),
        );
        let (vedges, vfaces, vcells) = (
            rows(Relation::VertexEdges),
            rows(Relation::VertexFaces),
            rows(Relation::VertexCells),
        );
        {
            let (moved, face_and_cells) = positions.view_mut().split_at(3 * (v + e) as usize);
            let (face_points, mut cell_points) = face_and_cells.split_at(3 * f as usize);
            let (vertex_points, edge_points) = moved.split_at(3 * v as usize);
            let params = (&cv.offsets, &cv.entries, c, old, cell_points.reborrow());
            d.launch::<RowMeans>(blocks(c), (0, 0), params)?;
            let params = (&d2.offsets, &fv.entries, f, old, &mut face_centres);
            d.launch::<RowMeans>(blocks(f), (0, 0), params)?;
            let cell_centres = cell_points.into_view();
            let centres = [face_centres.view(), cell_centres];
            let params = (fcells, centres, f, &mut on_boundary, face_points);
            d.launch::<FacePoints>(blocks(f), (0, 0), params)?;
            let points = [old.view(), face_centres.view(), cell_centres];
            let words = [
                self.pairs.view(),
                efaces[0].view(),
                efaces[1].view(),
                ecells[0].view(),
                ecells[1].view(),
                on_boundary.view(),
            ];
            let params = (words, points, e, &mut kinds, edge_points);
            d.launch::<EdgePoints>(blocks(e), (0, 0), params)?;
            let words = [
                self.pairs.view(),
                vedges[0].view(),
                vedges[1].view(),
                vfaces[0].view(),
                vfaces[1].view(),
                vcells[0].view(),
                vcells[1].view(),
                on_boundary.view(),
                kinds.view(),
            ];
            d.launch::<VertexPoints>(blocks(v), (0, 0), (words, points, v, vertex_points))?;
        }
        let faces = Csr {
            offsets: face_offsets,
            entries: face_entries,
            rows: nf,
            columns: ne,
            nnz: 4 * nf,
        };
        let cells = Csr {
            offsets: cell_offsets,
            entries: cell_entries,
            rows: nc,
            columns: nf,
            nnz: total,
        };
        Ok(ResidentMesh::of_parts(
            d,
            (positions, pairs),
            faces,
            cells,
            [nv, ne, nf, nc],
        ))
    }
}

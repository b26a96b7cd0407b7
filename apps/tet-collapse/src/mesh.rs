//! The tetrahedral mesh the collapse works on ([`TetMesh`]): positions as
//! read and tetrahedra as four vertex indices, positively oriented.

use cavity_volume::CellVertices;
use cavity_volume::io::CellMesh;
use rayon::prelude::*;

use crate::CollapseError;

/// A tetrahedral mesh: `positions` (model units, as read) and `tets`,
/// each four indices into `positions` ordered so that its signed volume
/// `det(p1 - p0, p2 - p0, p3 - p0) / 6` is positive (the orientation of
/// `cavity_volume`: faces `(0 2 1)`, `(0 1 3)`, `(1 2 3)`, `(0 3 2)`
/// face out).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TetMesh {
    /// Vertex positions.
    pub positions: Vec<[f32; 3]>,
    /// Tetrahedra.
    pub tets: Vec<[u32; 4]>,
}

impl TetMesh {
    /// The tetrahedra of `mesh`, each turned to positive orientation
    /// (vertices 1 and 2 swapped where its signed volume is negative).
    ///
    /// # Errors
    /// [`CollapseError::NotTetrahedron`] for a cell of another type;
    /// [`CollapseError::VertexOutOfRange`] for a vertex past the
    /// positions; [`CollapseError::RepeatedVertex`] for a tetrahedron that
    /// names a vertex twice.
    pub fn from_cells(mesh: CellMesh) -> Result<TetMesh, CollapseError> {
        let CellMesh { positions, cells } = mesh;
        let n = positions.len();
        let tets = cells
            .into_par_iter()
            .enumerate()
            .map(|(cell, c)| {
                let CellVertices::Tetrahedron(t) = c else {
                    return Err(CollapseError::NotTetrahedron {
                        cell,
                        cell_type: c.cell_type(),
                    });
                };
                if let Some(&vertex) = t.iter().find(|&&v| v as usize >= n) {
                    return Err(CollapseError::VertexOutOfRange {
                        cell,
                        vertex,
                        vertices: n,
                    });
                }
                if (0..4).any(|i| (i + 1..4).any(|j| t[i] == t[j])) {
                    return Err(CollapseError::RepeatedVertex { cell, vertices: t });
                }
                let [a, b, c, d] = t;
                Ok(if signed_volume(&positions, t) < 0.0 {
                    [a, c, b, d]
                } else {
                    t
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(TetMesh { positions, tets })
    }

    /// The mesh as cells, for the writers.
    pub fn to_cells(&self) -> CellMesh {
        CellMesh {
            positions: self.positions.clone(),
            cells: self
                .tets
                .iter()
                .map(|&t| CellVertices::Tetrahedron(t))
                .collect(),
        }
    }

    /// Every edge once, as `[low, high]` vertex pairs, sorted.
    pub fn edges(&self) -> Vec<[u32; 2]> {
        let mut edges: Vec<[u32; 2]> = self
            .tets
            .par_iter()
            .flat_map_iter(|t| {
                TET_EDGES.iter().map(move |&[i, j]| {
                    let (a, b) = (t[i], t[j]);
                    [a.min(b), a.max(b)]
                })
            })
            .collect();
        edges.par_sort_unstable();
        edges.dedup();
        edges
    }
}

/// The six edges of a tetrahedron, as corner pairs.
pub const TET_EDGES: [[usize; 2]; 6] = [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]];

/// Tetrahedron `t`'s signed volume at `positions`, in `f64`: positive
/// when positively oriented.
pub fn signed_volume(positions: &[[f32; 3]], t: [u32; 4]) -> f64 {
    let p = t.map(|v| positions[v as usize].map(f64::from));
    cavity_tet_collapse_kernels::geometry::signed_volume(p[0], p[1], p[2], p[3])
}

//! Indexed triangle meshes as read from and written to files.

use rayon::prelude::*;

/// A triangle mesh as indexed faces: the input and output form of every
/// algorithm in this crate.
///
/// `positions[v]` is vertex `v` in model units; `faces[f]` lists the three
/// vertex indices of face `f` in counter-clockwise (outward) order.
/// Vertices referenced by no face (isolated vertices) are allowed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TriMesh {
    /// Vertex positions, `[x, y, z]`.
    pub positions: Vec<[f32; 3]>,
    /// Triangles as three vertex indices into `positions`.
    pub faces: Vec<[u32; 3]>,
}

impl TriMesh {
    /// Number of vertices.
    pub fn num_vertices(&self) -> usize {
        self.positions.len()
    }

    /// Number of faces.
    pub fn num_faces(&self) -> usize {
        self.faces.len()
    }

    /// Checks what every algorithm assumes of its input, as the file
    /// readers do: finite coordinates, face indices in range, no face that
    /// repeats a vertex. Reports the first problem.
    ///
    /// # Errors
    /// [`MeshError`] naming the vertex or face.
    pub fn validate(&self) -> Result<(), MeshError> {
        // In parallel; the first problem in order is the one reported.
        if let Some(vertex) = self
            .positions
            .par_iter()
            .position_first(|p| p.iter().any(|c| !c.is_finite()))
        {
            return Err(MeshError::NonFinite {
                vertex,
                position: self.positions[vertex],
            });
        }
        let vertices = self.positions.len();
        let bad = |t: &[u32; 3]| {
            t.iter().any(|&i| i as usize >= vertices)
                || t[0] == t[1]
                || t[1] == t[2]
                || t[2] == t[0]
        };
        let Some(face) = self.faces.par_iter().position_first(bad) else {
            return Ok(());
        };
        let t = self.faces[face];
        match t.iter().find(|&&i| i as usize >= vertices) {
            Some(&index) => Err(MeshError::IndexOutOfRange {
                face,
                index,
                vertices,
            }),
            None => Err(MeshError::RepeatedVertex { face, corners: t }),
        }
    }
}

/// What [`TriMesh::validate`] found wrong.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MeshError {
    /// A vertex has a non-finite coordinate: fix or drop the vertex.
    #[error("vertex {vertex} has a non-finite coordinate {position:?}")]
    NonFinite {
        /// The vertex.
        vertex: usize,
        /// Its position.
        position: [f32; 3],
    },
    /// A face names a vertex that does not exist.
    #[error("face {face} names vertex {index}, but the mesh has {vertices} vertices")]
    IndexOutOfRange {
        /// The face.
        face: usize,
        /// The index out of range.
        index: u32,
        /// Vertices of the mesh.
        vertices: usize,
    },
    /// A face names a vertex twice (no area, no orientation): drop it.
    #[error("face {face} repeats a vertex: {corners:?}")]
    RepeatedVertex {
        /// The face.
        face: usize,
        /// Its corners.
        corners: [u32; 3],
    },
}

impl TriMesh {
    /// One step of midpoint subdivision: every edge gets its midpoint and
    /// every triangle becomes four (faces ×4, orientation kept). Used to
    /// grow the bundled real meshes to benchmark sizes.
    pub fn subdivide(&self) -> TriMesh {
        let topo = crate::topology::Topology::new(self);
        let nv = self.positions.len() as u32;
        let mut positions = self.positions.clone();
        positions.extend(topo.ev.iter().map(|&[a, b]| {
            let (p, q) = (self.positions[a as usize], self.positions[b as usize]);
            [0, 1, 2].map(|c| 0.5 * (p[c] + q[c]))
        }));
        let mut faces = Vec::with_capacity(4 * self.faces.len());
        for (f, t) in self.faces.iter().enumerate() {
            let m = topo.fe[f].map(|e| nv + e);
            faces.push([t[0], m[0], m[2]]);
            faces.push([t[1], m[1], m[0]]);
            faces.push([t[2], m[2], m[1]]);
            faces.push(m);
        }
        TriMesh { positions, faces }
    }

    /// Subdivides until the mesh has at least `faces` faces.
    pub fn subdivide_to(&self, faces: usize) -> TriMesh {
        let mut mesh = self.clone();
        while mesh.num_faces() < faces && mesh.num_faces() > 0 {
            mesh = mesh.subdivide();
        }
        mesh
    }
}

//! The CPU reference mesh: a plain, serial, obviously-correct indexed mesh
//! with sorted adjacency, independent of patching and kernels. It is the
//! oracle every query test compares against, and computes the topology
//! statistics of `cavity info`.

use std::collections::BTreeMap;

use crate::TriMesh;

/// Errors for input the reference mesh cannot represent.
#[derive(Debug, thiserror::Error)]
pub enum ReferenceError {
    /// A face index is not a vertex.
    #[error("face {face} refers to vertex {index}, but the mesh has {vertices} vertices")]
    IndexOutOfRange {
        /// Face number.
        face: usize,
        /// The bad index.
        index: u32,
        /// Vertex count.
        vertices: usize,
    },
    /// A face repeats a vertex.
    #[error("face {face} repeats vertex {vertex} (degenerate triangle)")]
    DegenerateFace {
        /// Face number.
        face: usize,
        /// The repeated vertex.
        vertex: u32,
    },
}

/// Topology statistics of a mesh.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MeshStats {
    /// Vertex count.
    pub vertices: usize,
    /// Edge count (unique unordered vertex pairs of the faces).
    pub edges: usize,
    /// Face count.
    pub faces: usize,
    /// Vertices referenced by no face.
    pub isolated_vertices: usize,
    /// Connected components (faces connect their vertices; an isolated
    /// vertex is a component of its own).
    pub components: usize,
    /// Edges with exactly one face.
    pub boundary_edges: usize,
    /// Connected components of the graph of boundary edges.
    pub boundary_loops: usize,
    /// Edges with three or more faces.
    pub non_manifold_edges: usize,
    /// Vertices with faces whose faces form more than one fan (faces
    /// connected through edges of exactly two faces around the vertex).
    pub non_manifold_vertices: usize,
    /// V - E + F.
    pub euler_characteristic: i64,
}

/// The reference mesh: faces, edges as sorted vertex pairs and every
/// incidence as sorted lists.
#[derive(Clone, Debug)]
pub struct ReferenceMesh {
    faces: Vec<[u32; 3]>,
    edges: Vec<[u32; 2]>,
    edge_of: BTreeMap<(u32, u32), u32>,
    vertex_edges: Vec<Vec<u32>>,
    vertex_faces: Vec<Vec<u32>>,
    edge_faces: Vec<Vec<u32>>,
}

fn key(a: u32, b: u32) -> (u32, u32) {
    (a.min(b), a.max(b))
}

impl ReferenceMesh {
    /// Builds the reference mesh; errors on out-of-range indices and
    /// degenerate faces.
    pub fn new(mesh: &TriMesh) -> Result<ReferenceMesh, ReferenceError> {
        let nv = mesh.positions.len();
        for (f, t) in mesh.faces.iter().enumerate() {
            for k in 0..3 {
                if t[k] as usize >= nv {
                    return Err(ReferenceError::IndexOutOfRange {
                        face: f,
                        index: t[k],
                        vertices: nv,
                    });
                }
                if t[k] == t[(k + 1) % 3] {
                    return Err(ReferenceError::DegenerateFace {
                        face: f,
                        vertex: t[k],
                    });
                }
            }
        }
        let mut edge_of = BTreeMap::new();
        for t in &mesh.faces {
            for k in 0..3 {
                edge_of.insert(key(t[k], t[(k + 1) % 3]), 0);
            }
        }
        let mut edges = Vec::with_capacity(edge_of.len());
        for (i, (k, v)) in edge_of.iter_mut().enumerate() {
            *v = i as u32;
            edges.push([k.0, k.1]);
        }
        let mut vertex_edges = vec![Vec::new(); nv];
        for (e, &[a, b]) in edges.iter().enumerate() {
            vertex_edges[a as usize].push(e as u32);
            vertex_edges[b as usize].push(e as u32);
        }
        let mut vertex_faces = vec![Vec::new(); nv];
        let mut edge_faces = vec![Vec::new(); edges.len()];
        for (f, t) in mesh.faces.iter().enumerate() {
            for k in 0..3 {
                vertex_faces[t[k] as usize].push(f as u32);
                edge_faces[edge_of[&key(t[k], t[(k + 1) % 3])] as usize].push(f as u32);
            }
        }
        Ok(ReferenceMesh {
            faces: mesh.faces.clone(),
            edges,
            edge_of,
            vertex_edges,
            vertex_faces,
            edge_faces,
        })
    }

    /// Vertex count.
    pub fn num_vertices(&self) -> usize {
        self.vertex_faces.len()
    }
    /// Edge count.
    pub fn num_edges(&self) -> usize {
        self.edges.len()
    }
    /// Face count.
    pub fn num_faces(&self) -> usize {
        self.faces.len()
    }

    /// EV of edge `e` as `(min, max)`. Edges are numbered in increasing
    /// `(min, max)` order.
    pub fn edge_vertices(&self, e: u32) -> [u32; 2] {
        self.edges[e as usize]
    }

    /// The edge joining `a` and `b`, if any (either order).
    pub fn edge_index(&self, a: u32, b: u32) -> Option<u32> {
        self.edge_of.get(&key(a, b)).copied()
    }

    /// VV: adjacent vertices, sorted.
    pub fn vv(&self, v: u32) -> Vec<u32> {
        let mut out: Vec<u32> = self.vertex_edges[v as usize]
            .iter()
            .map(|&e| {
                let [a, b] = self.edges[e as usize];
                if a == v { b } else { a }
            })
            .collect();
        out.sort_unstable();
        out
    }
    /// VE: incident edges, sorted.
    pub fn ve(&self, v: u32) -> Vec<u32> {
        self.vertex_edges[v as usize].clone()
    }
    /// VF: incident faces, sorted.
    pub fn vf(&self, v: u32) -> Vec<u32> {
        self.vertex_faces[v as usize].clone()
    }
    /// EV: the two vertices, sorted.
    pub fn ev(&self, e: u32) -> Vec<u32> {
        self.edges[e as usize].to_vec()
    }
    /// EF: incident faces, sorted.
    pub fn ef(&self, e: u32) -> Vec<u32> {
        self.edge_faces[e as usize].clone()
    }
    /// FV: the face's vertices in its own order.
    pub fn fv(&self, f: u32) -> [u32; 3] {
        self.faces[f as usize]
    }
    /// FE: edges `(v0,v1)`, `(v1,v2)`, `(v2,v0)` in this order.
    pub fn fe(&self, f: u32) -> [u32; 3] {
        let t = self.faces[f as usize];
        [0, 1, 2].map(|k| self.edge_of[&key(t[k], t[(k + 1) % 3])])
    }
    /// FF: faces sharing an edge with `f`, without `f`, sorted, no duplicates.
    pub fn ff(&self, f: u32) -> Vec<u32> {
        let mut out: Vec<u32> = self
            .fe(f)
            .iter()
            .flat_map(|&e| self.edge_faces[e as usize].iter().copied())
            .filter(|&g| g != f)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The corners after `v` in face `f`: `(next, after next)`.
    fn around(&self, f: u32, v: u32) -> (u32, u32) {
        let t = self.faces[f as usize];
        let k = t.iter().position(|&x| x == v).expect("v in face");
        (t[(k + 1) % 3], t[(k + 2) % 3])
    }

    /// Whether `v` is a manifold interior vertex: every incident edge has
    /// exactly two faces, and the faces around `v` form one closed,
    /// consistently oriented cycle.
    pub fn is_manifold_interior_vertex(&self, v: u32) -> bool {
        let faces = &self.vertex_faces[v as usize];
        if faces.is_empty()
            || self.vertex_edges[v as usize]
                .iter()
                .any(|&e| self.edge_faces[e as usize].len() != 2)
        {
            return false;
        }
        // Follow next -> after-next links from the first face.
        let mut visited = 0;
        let (first, _) = self.around(faces[0], v);
        let mut at = first;
        loop {
            let step: Vec<u32> = faces
                .iter()
                .filter(|&&f| self.around(f, v).0 == at)
                .map(|&f| self.around(f, v).1)
                .collect();
            if step.len() != 1 {
                return false;
            }
            at = step[0];
            visited += 1;
            if at == first {
                return visited == faces.len();
            }
            if visited > faces.len() {
                return false;
            }
        }
    }

    /// For a manifold interior vertex: whether `ring` lists its neighbours
    /// in rotational order, i.e. every `(v, ring[i], ring[i + 1])` (cyclic)
    /// is a face up to rotation, or every `(v, ring[i + 1], ring[i])` is.
    pub fn is_rotational_order(&self, v: u32, ring: &[u32]) -> bool {
        let n = ring.len();
        if n == 0 || n != self.vertex_faces[v as usize].len() {
            return false;
        }
        let has = |a: u32, b: u32| {
            self.vertex_faces[v as usize]
                .iter()
                .any(|&f| self.around(f, v) == (a, b))
        };
        (0..n).all(|i| has(ring[i], ring[(i + 1) % n]))
            || (0..n).all(|i| has(ring[(i + 1) % n], ring[i]))
    }

    /// V - E + F.
    pub fn euler_characteristic(&self) -> i64 {
        self.num_vertices() as i64 - self.num_edges() as i64 + self.num_faces() as i64
    }

    /// Whether every edge has one or two faces.
    pub fn is_edge_manifold(&self) -> bool {
        self.edge_faces.iter().all(|f| f.len() <= 2)
    }

    /// Topology statistics.
    pub fn stats(&self) -> MeshStats {
        let nv = self.num_vertices();
        let mut uf = UnionFind::new(nv);
        for t in &self.faces {
            uf.union(t[0], t[1]);
            uf.union(t[1], t[2]);
        }
        let components = (0..nv as u32).filter(|&v| uf.find(v) == v).count();
        let boundary: Vec<u32> = (0..self.num_edges() as u32)
            .filter(|&e| self.edge_faces[e as usize].len() == 1)
            .collect();
        let mut loops = UnionFind::new(nv);
        let mut on_boundary = vec![false; nv];
        for &e in &boundary {
            let [a, b] = self.edges[e as usize];
            loops.union(a, b);
            on_boundary[a as usize] = true;
            on_boundary[b as usize] = true;
        }
        let boundary_loops = (0..nv as u32)
            .filter(|&v| on_boundary[v as usize] && loops.find(v) == v)
            .count();
        let non_manifold_vertices = (0..nv as u32).filter(|&v| self.fans(v) > 1).count();
        MeshStats {
            vertices: nv,
            edges: self.num_edges(),
            faces: self.num_faces(),
            isolated_vertices: self.vertex_faces.iter().filter(|f| f.is_empty()).count(),
            components,
            boundary_edges: boundary.len(),
            boundary_loops,
            non_manifold_edges: self.edge_faces.iter().filter(|f| f.len() > 2).count(),
            non_manifold_vertices,
            euler_characteristic: self.euler_characteristic(),
        }
    }

    /// Number of fans around `v`: groups of its faces connected through
    /// incident edges that have exactly two faces.
    fn fans(&self, v: u32) -> usize {
        let faces = &self.vertex_faces[v as usize];
        let mut uf = UnionFind::new(faces.len());
        for &e in &self.vertex_edges[v as usize] {
            let ef = &self.edge_faces[e as usize];
            if ef.len() == 2 {
                let i = faces.binary_search(&ef[0]).expect("face of v") as u32;
                let j = faces.binary_search(&ef[1]).expect("face of v") as u32;
                uf.union(i, j);
            }
        }
        (0..faces.len() as u32).filter(|&i| uf.find(i) == i).count()
    }
}

/// Union-find over `0..n`.
struct UnionFind {
    parent: Vec<u32>,
}

impl UnionFind {
    fn new(n: usize) -> Self {
        UnionFind {
            parent: (0..n as u32).collect(),
        }
    }
    fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let p = self.parent[x as usize];
            self.parent[x as usize] = self.parent[p as usize];
            x = p;
        }
        x
    }
    fn union(&mut self, a: u32, b: u32) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.parent[a.max(b) as usize] = a.min(b);
        }
    }
}

//! The CPU reference mesh: a plain, serial, obviously-correct indexed mesh
//! with sorted adjacency, independent of patching and kernels. It is the
//! oracle every query test compares against, and the serial oracle of the
//! topology statistics (`cavity::stats`), which `cavity info` computes in
//! parallel. It ships with no library crate: the tests and the serial
//! peers of the benchmarks depend on it.
//!
//! Edges come from sorting all face sides by their vertex pair; every
//! incidence (VF, VE, EF) is then built the same way: list the
//! `(row, value)` pairs straight from the faces or edges, bucket them by row
//! (a counting sort) and sort each row, giving a CSR table. Nothing is
//! quadratic, so a mesh of a million faces builds in well under a second
//! in an optimised build.
//!
//! The input may be any indexed triangle soup: boundaries, edges with three
//! or more faces, vertices where several fans meet, isolated vertices,
//! several components and duplicate faces are all represented faithfully.
//! Only faces that repeat a vertex or name a vertex that does not exist are
//! rejected (see [`ReferenceError`]).
//!
//! All indices (vertices, edges, faces) are `u32` in input numbering. The
//! query methods take an element index and panic, like slice indexing, when
//! it is out of range; [`ReferenceMesh::edge_index`],
//! [`ReferenceMesh::is_manifold_interior_vertex`] and
//! [`ReferenceMesh::is_rotational_order`] answer `None` / `false` instead.

use cavity::TriMesh;
pub use cavity::stats::MeshStats;

/// Input that the reference mesh cannot represent.
#[derive(Debug, thiserror::Error)]
pub enum ReferenceError {
    /// Face `face` names vertex `index`, but there are only `vertices`
    /// vertices.
    #[error("face {face} refers to vertex {index}, but the mesh has {vertices} vertices")]
    IndexOutOfRange {
        /// Face number.
        face: usize,
        /// The bad vertex index.
        index: u32,
        /// Vertex count of the mesh.
        vertices: usize,
    },
    /// Face `face` lists vertex `vertex` more than once (a degenerate
    /// triangle with no well-defined edges).
    #[error("face {face} repeats vertex {vertex} (degenerate triangle)")]
    DegenerateFace {
        /// Face number.
        face: usize,
        /// The repeated vertex.
        vertex: u32,
    },
    /// More vertices, edges or faces than `u32` indices can number.
    #[error("the mesh has {count} {what}, more than u32 indices can number")]
    TooLarge {
        /// `"vertices"`, `"edges"` or `"faces"`.
        what: &'static str,
        /// The element count.
        count: usize,
    },
}

/// Rows of sorted `u32` values: row `r` is
/// `values[offsets[r]..offsets[r + 1]]`.
#[derive(Clone, Debug)]
struct Csr {
    offsets: Vec<usize>,
    values: Vec<u32>,
}

impl Csr {
    /// Groups `(row, value)` pairs into `rows` rows, each sorted by value
    /// (a counting sort by row, then each row sorted). Every `row` must be
    /// below `rows`.
    fn group(rows: usize, pairs: impl Iterator<Item = (u32, u32)> + Clone) -> Csr {
        let mut offsets = vec![0usize; rows + 1];
        for (r, _) in pairs.clone() {
            offsets[r as usize + 1] += 1;
        }
        for r in 0..rows {
            offsets[r + 1] += offsets[r];
        }
        let mut values = vec![0u32; offsets[rows]];
        let mut fill = offsets.clone();
        for (r, value) in pairs {
            values[fill[r as usize]] = value;
            fill[r as usize] += 1;
        }
        for r in 0..rows {
            values[offsets[r]..offsets[r + 1]].sort_unstable();
        }
        Csr { offsets, values }
    }

    fn rows(&self) -> usize {
        self.offsets.len() - 1
    }

    fn row(&self, r: u32) -> &[u32] {
        &self.values[self.offsets[r as usize]..self.offsets[r as usize + 1]]
    }
}

/// The reference mesh: faces as given, edges as sorted vertex pairs, and
/// every incidence (VF, VE, EF) as sorted lists.
#[derive(Clone, Debug)]
pub struct ReferenceMesh {
    /// FV: the input faces.
    faces: Vec<[u32; 3]>,
    /// EV: `[min, max]`, sorted, unique; the position is the edge index.
    edges: Vec<[u32; 2]>,
    /// FE: edges `(v0,v1)`, `(v1,v2)`, `(v2,v0)` of each face.
    face_edges: Vec<[u32; 3]>,
    /// VF rows, one per vertex.
    vertex_faces: Csr,
    /// VE rows, one per vertex.
    vertex_edges: Csr,
    /// EF rows, one per edge.
    edge_faces: Csr,
}

/// The unordered pair `{a, b}` as `[min, max]`.
fn pair(a: u32, b: u32) -> [u32; 2] {
    [a.min(b), a.max(b)]
}

impl ReferenceMesh {
    /// Builds the reference mesh of `mesh`.
    ///
    /// # Errors
    /// [`ReferenceError::IndexOutOfRange`] for a face naming a vertex
    /// `>= mesh.positions.len()`, [`ReferenceError::DegenerateFace`] for a
    /// face repeating a vertex (the first bad face is reported), and
    /// [`ReferenceError::TooLarge`] when the counts do not fit `u32`.
    pub fn new(mesh: &TriMesh) -> Result<ReferenceMesh, ReferenceError> {
        let nv = mesh.positions.len();
        let nf = mesh.faces.len();
        if u32::try_from(nv).is_err() {
            return Err(ReferenceError::TooLarge {
                what: "vertices",
                count: nv,
            });
        }
        if u32::try_from(nf).is_err() {
            return Err(ReferenceError::TooLarge {
                what: "faces",
                count: nf,
            });
        }
        for (face, t) in mesh.faces.iter().enumerate() {
            if let Some(&index) = t.iter().find(|&&x| x as usize >= nv) {
                return Err(ReferenceError::IndexOutOfRange {
                    face,
                    index,
                    vertices: nv,
                });
            }
            for k in 0..3 {
                if t[k] == t[(k + 1) % 3] {
                    return Err(ReferenceError::DegenerateFace { face, vertex: t[k] });
                }
            }
        }

        // Every face side as (vertex pair, corner `3 * f + k`), the pair
        // packed as `min << 32 | max` so that integer order is `(min, max)`
        // order. Sorted, the runs of equal pairs are the edges, numbered in
        // increasing pair order.
        let mut sides: Vec<(u64, usize)> = Vec::with_capacity(3 * nf);
        for (f, t) in mesh.faces.iter().enumerate() {
            for k in 0..3 {
                let [a, b] = pair(t[k], t[(k + 1) % 3]);
                sides.push(((a as u64) << 32 | b as u64, 3 * f + k));
            }
        }
        sides.sort_unstable();
        let mut edges: Vec<[u32; 2]> = Vec::new();
        let mut face_edges = vec![[0u32; 3]; nf];
        let mut last = None;
        for &(key, corner) in &sides {
            if last != Some(key) {
                edges.push([(key >> 32) as u32, key as u32]);
                last = Some(key);
            }
            face_edges[corner / 3][corner % 3] = (edges.len() - 1) as u32;
        }
        drop(sides);
        if u32::try_from(edges.len()).is_err() {
            return Err(ReferenceError::TooLarge {
                what: "edges",
                count: edges.len(),
            });
        }

        let vertex_faces = Csr::group(
            nv,
            (0..nf as u32).flat_map(|f| mesh.faces[f as usize].map(|v| (v, f))),
        );
        let vertex_edges = Csr::group(
            nv,
            (0..edges.len() as u32).flat_map(|e| edges[e as usize].map(|v| (v, e))),
        );
        let edge_faces = Csr::group(
            edges.len(),
            (0..nf as u32).flat_map(|f| face_edges[f as usize].map(|e| (e, f))),
        );
        Ok(ReferenceMesh {
            faces: mesh.faces.clone(),
            edges,
            face_edges,
            vertex_faces,
            vertex_edges,
            edge_faces,
        })
    }

    /// Vertex count (isolated vertices included).
    pub fn num_vertices(&self) -> usize {
        self.vertex_faces.rows()
    }

    /// Edge count: the unique unordered vertex pairs of the faces.
    pub fn num_edges(&self) -> usize {
        self.edges.len()
    }

    /// Face count.
    pub fn num_faces(&self) -> usize {
        self.faces.len()
    }

    /// EV of edge `e` as `[min, max]`. Edges are the unique unordered vertex
    /// pairs of the faces, numbered in increasing `(min, max)` order.
    pub fn edge_vertices(&self, e: u32) -> [u32; 2] {
        self.edges[e as usize]
    }

    /// The edge joining `a` and `b` (either order), or `None` when no face
    /// has both.
    pub fn edge_index(&self, a: u32, b: u32) -> Option<u32> {
        self.edges.binary_search(&pair(a, b)).ok().map(|e| e as u32)
    }

    /// VV: the vertices sharing an edge with `v`, sorted.
    pub fn vv(&self, v: u32) -> Vec<u32> {
        let mut out: Vec<u32> = self
            .vertex_edges
            .row(v)
            .iter()
            .map(|&e| {
                let [a, b] = self.edges[e as usize];
                if a == v { b } else { a }
            })
            .collect();
        out.sort_unstable();
        out
    }

    /// The vertex k-ring of `v`: the vertices at most `k` edges away from
    /// `v` along the mesh's edges, `v` excluded, sorted (empty for `k = 0`;
    /// [`vv`](Self::vv) for `k = 1`). A serial breadth-first search over
    /// VV: the oracle of the higher-order queries (RXMesh section 6.2).
    pub fn k_ring(&self, v: u32, k: u32) -> Vec<u32> {
        self.ring_where(v, k, |_| true)
    }

    /// The ring of `v` through the vertices `admits` accepts: the vertices
    /// `admits` accepts that a path of at most `k` edges joins to `v`
    /// through accepted vertices only, `v` excluded, sorted (the k-ring
    /// when it accepts every vertex; RXMesh's denoising neighbourhood when
    /// it accepts the vertices inside a ball around `v`, section 8.3).
    pub fn ring_where(&self, v: u32, k: u32, mut admits: impl FnMut(u32) -> bool) -> Vec<u32> {
        let mut seen = std::collections::BTreeSet::from([v]);
        let mut frontier = vec![v];
        for _ in 0..k {
            let mut next = Vec::new();
            for &u in &frontier {
                for w in self.vv(u) {
                    if !seen.contains(&w) && admits(w) {
                        seen.insert(w);
                        next.push(w);
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            frontier = next;
        }
        seen.remove(&v);
        seen.into_iter().collect()
    }

    /// VE: the edges incident to `v`, sorted.
    pub fn ve(&self, v: u32) -> Vec<u32> {
        self.vertex_edges.row(v).to_vec()
    }

    /// VF: the faces incident to `v`, sorted.
    pub fn vf(&self, v: u32) -> Vec<u32> {
        self.vertex_faces.row(v).to_vec()
    }

    /// EV: the two vertices of `e`, sorted (same as
    /// [`edge_vertices`](Self::edge_vertices)).
    pub fn ev(&self, e: u32) -> Vec<u32> {
        self.edges[e as usize].to_vec()
    }

    /// EF: the faces incident to `e`, sorted (duplicate faces appear once
    /// each, under their own indices).
    pub fn ef(&self, e: u32) -> Vec<u32> {
        self.edge_faces.row(e).to_vec()
    }

    /// FV: the vertices of `f` in the face's own order.
    pub fn fv(&self, f: u32) -> [u32; 3] {
        self.faces[f as usize]
    }

    /// FE: the edges `(v0,v1)`, `(v1,v2)`, `(v2,v0)` of `f`, in this order.
    pub fn fe(&self, f: u32) -> [u32; 3] {
        self.face_edges[f as usize]
    }

    /// FF: the faces sharing an edge with `f`, `f` itself excluded, sorted,
    /// without duplicates.
    pub fn ff(&self, f: u32) -> Vec<u32> {
        let mut out: Vec<u32> = self.face_edges[f as usize]
            .iter()
            .flat_map(|&e| self.edge_faces.row(e).iter().copied())
            .filter(|&g| g != f)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The wedges of `v`, sorted: for each face `(v, a, b)` (up to cyclic
    /// rotation) around `v`, the pair `(a, b)`.
    fn wedges(&self, v: u32) -> Vec<(u32, u32)> {
        let mut out: Vec<(u32, u32)> = self
            .vertex_faces
            .row(v)
            .iter()
            .filter_map(|&f| {
                let t = self.faces[f as usize];
                let k = t.iter().position(|&x| x == v)?;
                Some((t[(k + 1) % 3], t[(k + 2) % 3]))
            })
            .collect();
        out.sort_unstable();
        out
    }

    /// Whether `v` is a manifold interior vertex: it has faces, every
    /// incident edge has exactly two faces, and the faces around `v` form a
    /// single, consistently oriented cycle. That is, writing each face at
    /// `v` as `(v, a, b)`, every neighbour is the `a` of exactly one face
    /// and the `b` of exactly one face, and following `a -> b` from any
    /// neighbour visits all faces before coming back. `false` for an
    /// out-of-range `v`.
    pub fn is_manifold_interior_vertex(&self, v: u32) -> bool {
        if v as usize >= self.num_vertices() {
            return false;
        }
        let wedges = self.wedges(v);
        if wedges.is_empty()
            || self
                .vertex_edges
                .row(v)
                .iter()
                .any(|&e| self.edge_faces.row(e).len() != 2)
        {
            return false;
        }
        // Each neighbour starts exactly one wedge ...
        if wedges.windows(2).any(|w| w[0].0 == w[1].0) {
            return false;
        }
        // ... and ends exactly one, so `a -> b` is a permutation of the
        // neighbours ...
        let starts: Vec<u32> = wedges.iter().map(|w| w.0).collect();
        let mut ends: Vec<u32> = wedges.iter().map(|w| w.1).collect();
        ends.sort_unstable();
        if starts != ends {
            return false;
        }
        // ... made of a single cycle.
        let first = starts[0];
        let mut at = first;
        for step in 1..=wedges.len() {
            let Ok(i) = starts.binary_search(&at) else {
                return false;
            };
            at = wedges[i].1;
            if at == first {
                return step == wedges.len();
            }
        }
        false
    }

    /// For a manifold interior vertex `v`: whether `ring` (a cyclic
    /// sequence) lists its neighbours in rotational order, i.e. for every
    /// `i` some face is `(v, ring[i], ring[i + 1 mod n])` up to cyclic
    /// rotation, or for every `i` some face is `(v, ring[i + 1 mod n],
    /// ring[i])` (either direction, but the same for the whole ring).
    /// `false` when `v` is not a manifold interior vertex.
    ///
    /// Since the faces around `v` form one cycle of length `n`, `ring` must
    /// have length `n`, and each step is forced, this holds exactly for the
    /// `2n` rotations and reflections of the true ring.
    pub fn is_rotational_order(&self, v: u32, ring: &[u32]) -> bool {
        if !self.is_manifold_interior_vertex(v) {
            return false;
        }
        let wedges = self.wedges(v);
        let n = ring.len();
        if n != wedges.len() {
            return false;
        }
        let is_wedge = |a: u32, b: u32| wedges.binary_search(&(a, b)).is_ok();
        (0..n).all(|i| is_wedge(ring[i], ring[(i + 1) % n]))
            || (0..n).all(|i| is_wedge(ring[(i + 1) % n], ring[i]))
    }

    /// Euler characteristic `V - E + F` (isolated vertices included).
    pub fn euler_characteristic(&self) -> i64 {
        self.num_vertices() as i64 - self.num_edges() as i64 + self.num_faces() as i64
    }

    /// Whether every edge has at most two faces.
    pub fn is_edge_manifold(&self) -> bool {
        (0..self.num_edges() as u32).all(|e| self.edge_faces.row(e).len() <= 2)
    }

    /// Number of fans around `v`: maximal sets of its faces connected
    /// through incident edges with exactly two faces. 0 for an isolated
    /// vertex.
    fn fans(&self, v: u32) -> usize {
        let faces = self.vertex_faces.row(v);
        let mut sets = UnionFind::new(faces.len());
        for &e in self.vertex_edges.row(v) {
            if let &[f, g] = self.edge_faces.row(e) {
                // Both faces hold `v`, so both are in `faces`.
                if let (Ok(i), Ok(j)) = (faces.binary_search(&f), faces.binary_search(&g)) {
                    sets.union(i, j);
                }
            }
        }
        sets.count()
    }

    /// Topology statistics; see [`MeshStats`] for the definitions.
    pub fn stats(&self) -> MeshStats {
        let nv = self.num_vertices();
        let ne = self.num_edges() as u32;
        let degree = |e: u32| self.edge_faces.row(e).len();

        let mut components = vertex_components(nv, &self.faces);
        let boundary: Vec<[u32; 2]> = (0..ne)
            .filter(|&e| degree(e) == 1)
            .map(|e| self.edges[e as usize])
            .collect();
        let boundary_edges = boundary.len();
        let boundary_loops = boundary_loops(nv, &boundary);

        MeshStats {
            vertices: nv,
            edges: self.num_edges(),
            faces: self.num_faces(),
            isolated_vertices: (0..nv as u32)
                .filter(|&v| self.vertex_faces.row(v).is_empty())
                .count(),
            components: components.count(),
            boundary_edges,
            boundary_loops,
            non_manifold_edges: (0..ne).filter(|&e| degree(e) >= 3).count(),
            non_manifold_vertices: (0..nv as u32).filter(|&v| self.fans(v) > 1).count(),
            euler_characteristic: self.euler_characteristic(),
        }
    }
}

/// The vertices `0..nv` in sets joined through the corners of `faces`.
pub fn vertex_components(nv: usize, faces: &[[u32; 3]]) -> UnionFind {
    let mut sets = UnionFind::new(nv);
    for t in faces {
        sets.union(t[0] as usize, t[1] as usize);
        sets.union(t[1] as usize, t[2] as usize);
    }
    sets
}

/// Connected components of the graph of the boundary edges `boundary`
/// over vertices `0..nv` (see [`MeshStats::boundary_loops`]).
pub fn boundary_loops(nv: usize, boundary: &[[u32; 2]]) -> usize {
    let mut loops = UnionFind::new(nv);
    let mut on_boundary = vec![false; nv];
    for &[a, b] in boundary {
        loops.union(a as usize, b as usize);
        on_boundary[a as usize] = true;
        on_boundary[b as usize] = true;
    }
    (0..nv)
        .filter(|&v| on_boundary[v] && loops.find(v) == v)
        .count()
}

/// Disjoint sets over `0..n` (union-find with path halving).
pub struct UnionFind {
    parent: Vec<usize>,
}

impl UnionFind {
    /// `n` singleton sets.
    pub fn new(n: usize) -> UnionFind {
        UnionFind {
            parent: (0..n).collect(),
        }
    }

    /// The representative of `x`'s set.
    pub fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    /// Joins the sets of `a` and `b`.
    pub fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.parent[a.max(b)] = a.min(b);
        }
    }

    /// Number of sets.
    pub fn count(&mut self) -> usize {
        (0..self.parent.len())
            .filter(|&x| self.find(x) == x)
            .count()
    }
}

//! A mesh's topology statistics (counts, components, boundary loops,
//! non-manifold elements, Euler characteristic), computed in parallel
//! from a [`Survey`] of its vertices: what `cavity info` prints and what
//! an operation's output is checked against (`defects::check_output`).
//!
//! The survey reads only the vertex-face relation (VF): around each
//! vertex, the other corners of its faces, sorted, give its edges with
//! their numbers of faces, its valence and its fans, without the
//! face-edge and edge-face relations of [`Topology`]. A backend takes the
//! same survey on the device (`cavity::backend::Backend::survey`).

use std::borrow::Cow;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use rayon::prelude::*;

use crate::TriMesh;
use crate::components::{ConcurrentSets, count_roots, vertex_sets};
use crate::topology::{Topology, par_csr, transpose3};

/// Topology statistics of a mesh ([`topology_stats`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MeshStats {
    /// Vertex count (including isolated vertices).
    pub vertices: usize,
    /// Edge count: the unique unordered vertex pairs of the faces.
    pub edges: usize,
    /// Face count (duplicate faces counted each time).
    pub faces: usize,
    /// Vertices referenced by no face.
    pub isolated_vertices: usize,
    /// Connected components of the vertex graph in which each face connects
    /// its three vertices; every isolated vertex is a component of its own.
    pub components: usize,
    /// Edges with exactly one face.
    pub boundary_edges: usize,
    /// Connected components of the graph made of the boundary edges and
    /// their endpoints. Boundary curves that touch at a vertex (which is
    /// then necessarily non-manifold, e.g. a figure-eight boundary) are
    /// one component and so count as one loop.
    pub boundary_loops: usize,
    /// Edges with three or more faces.
    pub non_manifold_edges: usize,
    /// Vertices whose faces form more than one fan, a fan being a maximal
    /// set of the vertex's faces connected through incident edges that have
    /// exactly two faces. Isolated vertices (no fan) are not counted; the
    /// endpoints of an edge with three or more faces always are.
    pub non_manifold_vertices: usize,
    /// `V - E + F`.
    pub euler_characteristic: i64,
}

/// The topology statistics of `mesh` ([`MeshStats`]), computed in
/// parallel from its [`Survey`] (the serial reference mesh of
/// `cavity-reference` is the oracle; a test compares the two on every
/// generated mesh). `mesh`'s indices must be in range and no face may
/// repeat a vertex.
pub fn topology_stats(mesh: &TriMesh) -> MeshStats {
    Survey::new(mesh).stats()
}

/// [`topology_stats`] with the topology of `mesh` given
/// (`Topology::new(mesh)`), for a caller that has it: its VF is surveyed.
pub fn topology_stats_with(mesh: &TriMesh, topo: &Topology) -> MeshStats {
    Survey::with_topology(mesh, topo).stats()
}

/// What one pass over the vertices of a mesh finds from its vertex-face
/// relation (VF): the unique edges, each vertex's valence, boundary edges
/// and fans, the boundary loops, and the components (sets of vertices
/// joined through faces). What [`MeshStats`] and an output's quality
/// statistics read, at about half the cost of [`Topology::new`] (no
/// face-edge or edge-face relation is built).
///
/// Around vertex `v`, the two other corners of each of its faces are
/// sorted: a run of corner `w` holds the faces of edge `(v, w)` (no face
/// repeats a vertex), so its length is the edge's number of faces, the
/// runs are `v`'s neighbours, and the faces of each run of two are joined
/// into `v`'s fans. Each edge is counted at its smaller end.
#[derive(Clone, Debug)]
pub struct Survey<'a> {
    /// VF offsets: the faces of `v` are `vf[vf_offsets[v]..vf_offsets[v + 1]]`.
    pub vf_offsets: Cow<'a, [u32]>,
    /// VF values, increasing within each vertex.
    pub vf: Cow<'a, [u32]>,
    /// The unique edges `[a, b]`, `a < b`, in increasing `(a, b)` order
    /// (as [`Topology::ev`]).
    pub ev: Vec<[u32; 2]>,
    /// Per vertex: its neighbours (the edges at it).
    pub valence: Vec<u32>,
    /// Per vertex: its edges with exactly one face.
    pub boundary_at: Vec<u32>,
    /// Per vertex: the fans of its faces (0 for an isolated vertex).
    pub fans: Vec<u32>,
    /// Per vertex: the smallest vertex of its component (faces join their
    /// corners).
    pub roots: Vec<u32>,
    /// Edges with exactly one face.
    pub boundary_edges: usize,
    /// Edges with three or more faces.
    pub non_manifold_edges: usize,
    /// Components of the boundary edges (see [`MeshStats::boundary_loops`]).
    pub boundary_loops: usize,
    /// Faces of the mesh surveyed.
    faces: usize,
}

impl Survey<'static> {
    /// The survey of `mesh` (indices in range, no face repeating a
    /// vertex), its VF built here ([`transpose3`]).
    pub fn new(mesh: &TriMesh) -> Survey<'static> {
        let (vf_offsets, vf) = transpose3(mesh.num_vertices(), &mesh.faces);
        Survey::with_vf(mesh, Cow::Owned(vf_offsets), Cow::Owned(vf))
    }
}

impl<'a> Survey<'a> {
    /// The survey of `mesh` from the VF of its topology (borrowed).
    pub fn with_topology(mesh: &TriMesh, topo: &'a Topology) -> Survey<'a> {
        Survey::with_vf(
            mesh,
            Cow::Borrowed(&topo.vf_offsets[..]),
            Cow::Borrowed(&topo.vf[..]),
        )
    }

    /// The survey of `mesh` from its VF (see [`Survey::vf_offsets`]).
    fn with_vf(mesh: &TriMesh, vf_offsets: Cow<'a, [u32]>, vf: Cow<'a, [u32]>) -> Survey<'a> {
        let nv = mesh.num_vertices();
        let zeros =
            || -> Vec<AtomicU32> { (0..nv).into_par_iter().map(|_| AtomicU32::new(0)).collect() };
        let (valence, boundary_at, fans) = (zeros(), zeros(), zeros());
        let (boundary_edges, non_manifold_edges) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let loops = ConcurrentSets::new(nv);
        let ((_, ev), roots) = rayon::join(
            || {
                par_csr(nv, |v, out: &mut Vec<[u32; 2]>| {
                    let faces = &vf[vf_offsets[v] as usize..vf_offsets[v + 1] as usize];
                    Around::with(mesh, v as u32, faces, |at| {
                        let (mut neighbours, mut boundary, mut non_manifold) = (0, 0, 0);
                        for (w, run) in at.runs() {
                            neighbours += 1;
                            let ahead = w > v as u32;
                            if ahead {
                                out.push([v as u32, w]);
                            }
                            if run.len() == 1 {
                                boundary_at[v].fetch_add(1, Ordering::Relaxed);
                                if ahead {
                                    boundary += 1;
                                    loops.union(v as u32, w);
                                }
                            } else if run.len() >= 3 && ahead {
                                non_manifold += 1;
                            }
                        }
                        valence[v].store(neighbours, Ordering::Relaxed);
                        fans[v].store(at.fans() as u32, Ordering::Relaxed);
                        // Few vertices have either: the shared counters are
                        // rarely touched.
                        if boundary > 0 {
                            boundary_edges.fetch_add(boundary, Ordering::Relaxed);
                        }
                        if non_manifold > 0 {
                            non_manifold_edges.fetch_add(non_manifold, Ordering::Relaxed);
                        }
                    });
                })
            },
            || vertex_sets(nv, &mesh.faces).roots(),
        );
        let inner = |a: Vec<AtomicU32>| -> Vec<u32> {
            a.into_par_iter().map(AtomicU32::into_inner).collect()
        };
        let boundary_at = inner(boundary_at);
        // A boundary loop is a set of boundary edges: counted at its root
        // among the vertices on a boundary edge.
        let boundary_loops = (0..nv as u32)
            .into_par_iter()
            .filter(|&v| boundary_at[v as usize] > 0 && loops.find(v) == v)
            .count();
        Survey {
            vf_offsets,
            vf,
            ev,
            valence: inner(valence),
            boundary_at,
            fans: inner(fans),
            roots,
            boundary_edges: boundary_edges.into_inner(),
            non_manifold_edges: non_manifold_edges.into_inner(),
            boundary_loops,
            faces: mesh.num_faces(),
        }
    }

    /// The faces of vertex `v`.
    pub fn vertex_faces(&self, v: u32) -> &[u32] {
        &self.vf[self.vf_offsets[v as usize] as usize..self.vf_offsets[v as usize + 1] as usize]
    }

    /// The topology statistics of the mesh surveyed.
    pub fn stats(&self) -> MeshStats {
        let nv = self.valence.len();
        let isolated_vertices = (0..nv)
            .into_par_iter()
            .filter(|&v| self.vf_offsets[v] == self.vf_offsets[v + 1])
            .count();
        MeshStats {
            vertices: nv,
            edges: self.ev.len(),
            faces: self.faces,
            isolated_vertices,
            components: count_roots(&self.roots),
            boundary_edges: self.boundary_edges,
            boundary_loops: self.boundary_loops,
            non_manifold_edges: self.non_manifold_edges,
            non_manifold_vertices: self.fans.par_iter().filter(|&&f| f > 1).count(),
            euler_characteristic: nv as i64 - self.ev.len() as i64 + self.faces as i64,
        }
    }
}

/// Faces around a vertex whose corners live on the stack.
const ON_STACK: usize = 32;

/// The other two corners of a vertex's faces, sorted by corner: each run
/// of one corner `w` holds the faces of edge `(v, w)` (as indices into
/// the vertex's faces).
struct Around<'a> {
    faces: usize,
    corners: &'a [(u32, u32)],
}

impl Around<'_> {
    /// Calls `survey` with the corners around `v`, whose faces (VF,
    /// increasing) are `faces`: on the stack for up to [`ON_STACK`] faces.
    fn with<R>(mesh: &TriMesh, v: u32, faces: &[u32], survey: impl FnOnce(&Around<'_>) -> R) -> R {
        let mut stack = [(0u32, 0u32); 2 * ON_STACK];
        let mut heap = Vec::new();
        let corners: &mut [(u32, u32)] = if faces.len() <= ON_STACK {
            &mut stack[..2 * faces.len()]
        } else {
            heap.resize(2 * faces.len(), (0, 0));
            &mut heap
        };
        for (i, &f) in faces.iter().enumerate() {
            let t = mesh.faces[f as usize];
            let at = t.iter().position(|&x| x == v).unwrap_or(0);
            corners[2 * i] = (t[(at + 1) % 3], i as u32);
            corners[2 * i + 1] = (t[(at + 2) % 3], i as u32);
        }
        corners.sort_unstable();
        survey(&Around {
            faces: faces.len(),
            corners,
        })
    }

    /// Each neighbour `w` with the pairs of its run.
    fn runs(&self) -> impl Iterator<Item = (u32, &[(u32, u32)])> {
        self.corners
            .chunk_by(|a, b| a.0 == b.0)
            .map(|run| (run[0].0, run))
    }

    /// The fans: the faces joined through the edges with exactly two
    /// faces.
    fn fans(&self) -> usize {
        let mut stack = [0u32; ON_STACK];
        let mut heap = Vec::new();
        let parent: &mut [u32] = if self.faces <= ON_STACK {
            &mut stack[..self.faces]
        } else {
            heap.resize(self.faces, 0);
            &mut heap
        };
        for (i, p) in parent.iter_mut().enumerate() {
            *p = i as u32;
        }
        let root = |parent: &mut [u32], mut x: u32| {
            while parent[x as usize] != x {
                parent[x as usize] = parent[parent[x as usize] as usize];
                x = parent[x as usize];
            }
            x
        };
        let mut sets = self.faces;
        for (_, run) in self.runs() {
            if let [a, b] = run {
                let (a, b) = (root(parent, a.1), root(parent, b.1));
                if a != b {
                    parent[a.max(b) as usize] = a.min(b);
                    sets -= 1;
                }
            }
        }
        sets
    }
}

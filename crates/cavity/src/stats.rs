//! A mesh's topology statistics (counts, components, boundary loops,
//! non-manifold elements, Euler characteristic), computed in parallel
//! from its [`Topology`]: what `cavity info` prints and what an
//! operation's output is checked against (`defects::check_output`).

use rayon::prelude::*;

use crate::TriMesh;
use crate::components::{count_roots, edge_components, vertex_sets};
use crate::topology::Topology;

/// Topology statistics of a mesh ([`topology_stats`]).
#[derive(Clone, Debug, PartialEq, Eq)]
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
/// parallel from [`Topology`] (the serial reference mesh of
/// `cavity-reference` is the oracle; a test compares the two on every
/// generated mesh). `mesh`'s indices must
/// be in range and no face may repeat a vertex.
pub fn topology_stats(mesh: &TriMesh) -> MeshStats {
    topology_stats_with(mesh, &Topology::new(mesh))
}

/// [`topology_stats`] with the topology of `mesh` given
/// (`Topology::new(mesh)`), for a caller that has it.
pub fn topology_stats_with(mesh: &TriMesh, topo: &Topology) -> MeshStats {
    let nv = mesh.num_vertices();
    let degree = |e: usize| (topo.ef_offsets[e + 1] - topo.ef_offsets[e]) as usize;
    let boundary = topo.boundary_edges();
    let ((components, boundary_loops), non_manifold_vertices) = rayon::join(
        || {
            rayon::join(
                || count_roots(&vertex_sets(nv, &mesh.faces).roots()),
                || edge_components(nv, &boundary),
            )
        },
        || {
            (0..nv as u32)
                .into_par_iter()
                .filter(|&v| fans(mesh, topo, v) > 1)
                .count()
        },
    );
    MeshStats {
        vertices: nv,
        edges: topo.ev.len(),
        faces: mesh.num_faces(),
        isolated_vertices: (0..nv)
            .into_par_iter()
            .filter(|&v| topo.vf_offsets[v] == topo.vf_offsets[v + 1])
            .count(),
        components,
        boundary_edges: boundary.len(),
        boundary_loops,
        non_manifold_edges: (0..topo.ev.len())
            .into_par_iter()
            .filter(|&e| degree(e) >= 3)
            .count(),
        non_manifold_vertices,
        euler_characteristic: nv as i64 - topo.ev.len() as i64 + mesh.num_faces() as i64,
    }
}

/// Fans around `v`: its faces joined through its edges with exactly two
/// faces. The faces of edge `(v, w)` are those of `v`'s faces that hold
/// `w` (no face repeats a vertex): the other two corners of `v`'s faces,
/// sorted, give each edge's faces as a run, with no look-up of the edges.
fn fans(mesh: &TriMesh, topo: &Topology, v: u32) -> usize {
    /// Faces around a vertex whose sets live on the stack.
    const ON_STACK: usize = 32;
    let faces = topo.vertex_faces(v);
    let (mut stack, mut heap) = (([0u32; ON_STACK], [(0u32, 0u32); 2 * ON_STACK]), None);
    let (parent, corners) = if faces.len() <= ON_STACK {
        (&mut stack.0[..faces.len()], &mut stack.1[..2 * faces.len()])
    } else {
        let (p, c) = heap.insert((vec![0u32; faces.len()], vec![(0u32, 0u32); 2 * faces.len()]));
        (&mut p[..], &mut c[..])
    };
    for (i, &f) in faces.iter().enumerate() {
        parent[i] = i as u32;
        let t = mesh.faces[f as usize];
        let at = t.iter().position(|&x| x == v).unwrap_or(0);
        corners[2 * i] = (t[(at + 1) % 3], i as u32);
        corners[2 * i + 1] = (t[(at + 2) % 3], i as u32);
    }
    corners.sort_unstable();
    let root = |parent: &mut [u32], mut x: u32| {
        while parent[x as usize] != x {
            parent[x as usize] = parent[parent[x as usize] as usize];
            x = parent[x as usize];
        }
        x
    };
    let mut sets = faces.len();
    let mut start = 0;
    while start < corners.len() {
        let w = corners[start].0;
        let run = corners[start..].iter().take_while(|c| c.0 == w).count();
        if run == 2 {
            let (a, b) = (
                root(parent, corners[start].1),
                root(parent, corners[start + 1].1),
            );
            if a != b {
                parent[a.max(b) as usize] = a.min(b);
                sets -= 1;
            }
        }
        start += run;
    }
    sets
}

//! The reference mesh: every query on hand-checked small meshes, a brute
//! force re-derivation of every query from the definitions on random grids
//! and triangle soups, consistency properties, rotational order, errors,
//! and a million-face build.
//!
//! Longer than 700 lines as one file on purpose: every query's checks
//! (hand-checked, brute force, properties) sit together, one section per
//! way of checking.

use std::time::Instant;

use cavity::TriMesh;
use cavity_reference::{MeshStats, ReferenceError, ReferenceMesh};
use proptest::prelude::*;

fn trimesh(nv: usize, faces: &[[u32; 3]]) -> TriMesh {
    TriMesh {
        positions: vec![[0.0; 3]; nv],
        faces: faces.to_vec(),
    }
}

fn mesh(nv: usize, faces: &[[u32; 3]]) -> ReferenceMesh {
    ReferenceMesh::new(&trimesh(nv, faces)).unwrap()
}

/// Every query of every element, written out by hand.
struct Expected<'a> {
    vv: &'a [&'a [u32]],
    ve: &'a [&'a [u32]],
    vf: &'a [&'a [u32]],
    ev: &'a [[u32; 2]],
    ef: &'a [&'a [u32]],
    fe: &'a [[u32; 3]],
    ff: &'a [&'a [u32]],
}

/// Compares every query of `m` with `x`, FV with `faces`, and with the
/// brute-force oracle.
fn check_all(m: &ReferenceMesh, faces: &[[u32; 3]], x: &Expected) {
    assert_eq!(m.num_vertices(), x.vv.len());
    assert_eq!(m.num_edges(), x.ev.len());
    assert_eq!(m.num_faces(), faces.len());
    for v in 0..m.num_vertices() as u32 {
        assert_eq!(m.vv(v), x.vv[v as usize], "VV of {v}");
        assert_eq!(m.ve(v), x.ve[v as usize], "VE of {v}");
        assert_eq!(m.vf(v), x.vf[v as usize], "VF of {v}");
    }
    for e in 0..m.num_edges() as u32 {
        let [a, b] = x.ev[e as usize];
        assert_eq!(m.edge_vertices(e), [a, b], "EV of {e}");
        assert_eq!(m.ev(e), vec![a, b], "EV of {e}");
        assert_eq!(m.edge_index(a, b), Some(e));
        assert_eq!(m.edge_index(b, a), Some(e));
        assert_eq!(m.ef(e), x.ef[e as usize], "EF of {e}");
    }
    for f in 0..m.num_faces() as u32 {
        assert_eq!(m.fv(f), faces[f as usize], "FV of {f}");
        assert_eq!(m.fe(f), x.fe[f as usize], "FE of {f}");
        assert_eq!(m.ff(f), x.ff[f as usize], "FF of {f}");
    }
    check_naive(m, m.num_vertices(), faces);
    check_consistency(m);
}

fn stats(
    [vertices, edges, faces, isolated_vertices, components]: [usize; 5],
    [
        boundary_edges,
        boundary_loops,
        non_manifold_edges,
        non_manifold_vertices,
    ]: [usize; 4],
    euler_characteristic: i64,
) -> MeshStats {
    MeshStats {
        vertices,
        edges,
        faces,
        isolated_vertices,
        components,
        boundary_edges,
        boundary_loops,
        non_manifold_edges,
        non_manifold_vertices,
        euler_characteristic,
    }
}

// ---------------------------------------------------------------------
// Brute force: every query straight from its definition, by scanning.

/// The definitions, evaluated by scanning all faces.
struct Naive<'a> {
    nv: usize,
    faces: &'a [[u32; 3]],
    edges: Vec<[u32; 2]>,
}

impl<'a> Naive<'a> {
    fn new(nv: usize, faces: &'a [[u32; 3]]) -> Self {
        let mut edges: Vec<[u32; 2]> = faces
            .iter()
            .flat_map(|t| (0..3).map(move |k| [t[k].min(t[(k + 1) % 3]), t[k].max(t[(k + 1) % 3])]))
            .collect();
        edges.sort();
        edges.dedup();
        Naive { nv, faces, edges }
    }
    fn faces_with(&self, vs: &[u32]) -> Vec<u32> {
        (0..self.faces.len() as u32)
            .filter(|&f| vs.iter().all(|v| self.faces[f as usize].contains(v)))
            .collect()
    }
    fn vv(&self, v: u32) -> Vec<u32> {
        (0..self.nv as u32)
            .filter(|&u| u != v && !self.faces_with(&[u, v]).is_empty())
            .collect()
    }
    fn ve(&self, v: u32) -> Vec<u32> {
        (0..self.edges.len() as u32)
            .filter(|&e| self.edges[e as usize].contains(&v))
            .collect()
    }
    fn edge(&self, a: u32, b: u32) -> u32 {
        self.edges
            .iter()
            .position(|&e| e == [a.min(b), a.max(b)])
            .unwrap() as u32
    }
    fn fe(&self, f: u32) -> [u32; 3] {
        let t = self.faces[f as usize];
        [0, 1, 2].map(|k| self.edge(t[k], t[(k + 1) % 3]))
    }
    fn ff(&self, f: u32) -> Vec<u32> {
        let t = self.faces[f as usize];
        (0..self.faces.len() as u32)
            .filter(|&g| {
                g != f
                    && self.faces[g as usize]
                        .iter()
                        .filter(|v| t.contains(v))
                        .count()
                        >= 2
            })
            .collect()
    }
    /// Labels of the connected components of a graph on `0..n`, by
    /// relaxing edge by edge until nothing changes.
    fn labels(n: usize, links: &[(usize, usize)]) -> Vec<usize> {
        let mut label: Vec<usize> = (0..n).collect();
        loop {
            let mut changed = false;
            for &(a, b) in links {
                let l = label[a].min(label[b]);
                if label[a] != l || label[b] != l {
                    label[a] = l;
                    label[b] = l;
                    changed = true;
                }
            }
            if !changed {
                return label;
            }
        }
    }
    fn stats(&self) -> MeshStats {
        let nv = self.nv;
        let efc = |e: &[u32; 2]| self.faces_with(e).len();
        let links: Vec<(usize, usize)> = self
            .faces
            .iter()
            .flat_map(|t| {
                [
                    (t[0] as usize, t[1] as usize),
                    (t[1] as usize, t[2] as usize),
                ]
            })
            .collect();
        let label = Self::labels(nv, &links);
        let components = (0..nv).filter(|&v| label[v] == v).count();
        let boundary: Vec<(usize, usize)> = self
            .edges
            .iter()
            .filter(|e| efc(e) == 1)
            .map(|e| (e[0] as usize, e[1] as usize))
            .collect();
        let label = Self::labels(nv, &boundary);
        let boundary_loops = (0..nv)
            .filter(|&v| label[v] == v && boundary.iter().any(|&(a, b)| a == v || b == v))
            .count();
        let non_manifold_vertices = (0..nv as u32)
            .filter(|&v| {
                let fs = self.faces_with(&[v]);
                let mut links = Vec::new();
                for i in 0..fs.len() {
                    for j in 0..fs.len() {
                        let (s, t) = (self.faces[fs[i] as usize], self.faces[fs[j] as usize]);
                        // Faces i and j share an edge (v, u) with exactly two faces.
                        for &u in &s {
                            if u != v
                                && t.contains(&u)
                                && i != j
                                && self.faces_with(&[u, v]).len() == 2
                            {
                                links.push((i, j));
                            }
                        }
                    }
                }
                let label = Self::labels(fs.len(), &links);
                (0..fs.len()).filter(|&i| label[i] == i).count() > 1
            })
            .count();
        MeshStats {
            vertices: nv,
            edges: self.edges.len(),
            faces: self.faces.len(),
            isolated_vertices: (0..nv as u32)
                .filter(|&v| self.faces_with(&[v]).is_empty())
                .count(),
            components,
            boundary_edges: boundary.len(),
            boundary_loops,
            non_manifold_edges: self.edges.iter().filter(|e| efc(e) >= 3).count(),
            non_manifold_vertices,
            euler_characteristic: nv as i64 - self.edges.len() as i64 + self.faces.len() as i64,
        }
    }
}

/// Every query and the statistics of `m` against the brute force.
fn check_naive(m: &ReferenceMesh, nv: usize, faces: &[[u32; 3]]) {
    let n = Naive::new(nv, faces);
    assert_eq!(m.num_vertices(), nv);
    assert_eq!(m.num_edges(), n.edges.len());
    assert_eq!(m.num_faces(), faces.len());
    for v in 0..nv as u32 {
        assert_eq!(m.vv(v), n.vv(v), "VV of {v}");
        assert_eq!(m.ve(v), n.ve(v), "VE of {v}");
        assert_eq!(m.vf(v), n.faces_with(&[v]), "VF of {v}");
    }
    for (e, &[a, b]) in n.edges.iter().enumerate() {
        assert_eq!(m.edge_vertices(e as u32), [a, b]);
        assert_eq!(m.ev(e as u32), vec![a, b]);
        assert_eq!(m.ef(e as u32), n.faces_with(&[a, b]), "EF of {e}");
    }
    for f in 0..faces.len() as u32 {
        assert_eq!(m.fv(f), faces[f as usize]);
        assert_eq!(m.fe(f), n.fe(f), "FE of {f}");
        assert_eq!(m.ff(f), n.ff(f), "FF of {f}");
    }
    assert_eq!(m.stats(), n.stats());
}

/// The incidence relations agree with each other.
fn check_consistency(m: &ReferenceMesh) {
    let (nv, ne, nf) = (
        m.num_vertices() as u32,
        m.num_edges() as u32,
        m.num_faces() as u32,
    );
    let sorted_unique = |x: &[u32]| x.windows(2).all(|w| w[0] < w[1]);
    let mut handshake = 0;
    for v in 0..nv {
        let (vv, ve, vf) = (m.vv(v), m.ve(v), m.vf(v));
        assert!(sorted_unique(&vv) && sorted_unique(&ve) && sorted_unique(&vf));
        assert_eq!(vv.len(), ve.len());
        handshake += ve.len();
        for &u in &vv {
            assert!(m.vv(u).contains(&v), "VV not symmetric: {v} {u}");
            assert!(m.edge_index(u, v).is_some());
        }
        for &e in &ve {
            assert!(m.ev(e).contains(&v));
        }
        for &f in &vf {
            assert!(m.fv(f).contains(&v));
        }
    }
    assert_eq!(handshake, 2 * ne as usize);
    let mut prev = None;
    for e in 0..ne {
        let [a, b] = m.edge_vertices(e);
        assert!(a < b && prev < Some([a, b]), "edges numbered by (min, max)");
        prev = Some([a, b]);
        for v in m.ev(e) {
            assert!(m.ve(v).contains(&e));
        }
        let ef = m.ef(e);
        assert!(!ef.is_empty() && sorted_unique(&ef));
        for &f in &ef {
            assert!(m.fe(f).contains(&e));
        }
    }
    for f in 0..nf {
        let t = m.fv(f);
        for v in t {
            assert!(m.vf(v).contains(&f));
        }
        let fe = m.fe(f);
        for k in 0..3 {
            assert_eq!(m.edge_index(t[k], t[(k + 1) % 3]), Some(fe[k]));
            assert!(m.ef(fe[k]).contains(&f));
        }
        let ff = m.ff(f);
        assert!(sorted_unique(&ff) && !ff.contains(&f));
        for &g in &ff {
            assert!(m.ff(g).contains(&f), "FF not symmetric: {f} {g}");
        }
    }
    assert_eq!(m.euler_characteristic(), nv as i64 - ne as i64 + nf as i64);
    assert_eq!(m.stats().euler_characteristic, m.euler_characteristic());
    assert_eq!(m.is_edge_manifold(), m.stats().non_manifold_edges == 0);
}

/// Whether `candidate` is a rotation or reflection of the cyclic `ring`.
fn is_dihedral(ring: &[u32], candidate: &[u32]) -> bool {
    let n = ring.len();
    n == candidate.len()
        && (0..n).any(|s| {
            (0..n).all(|i| candidate[i] == ring[(i + s) % n])
                || (0..n).all(|i| candidate[i] == ring[(s + n - i) % n])
        })
}

/// Every rotation and reflection of `ring` is accepted around `v`, and
/// swapping two neighbouring entries is rejected when that changes the
/// cyclic order (n >= 4).
fn check_ring(m: &ReferenceMesh, v: u32, ring: &[u32]) {
    let n = ring.len();
    assert!(m.is_manifold_interior_vertex(v));
    for s in 0..n {
        let rotated: Vec<u32> = (0..n).map(|i| ring[(i + s) % n]).collect();
        let reflected: Vec<u32> = rotated.iter().rev().copied().collect();
        assert!(m.is_rotational_order(v, &rotated), "{v}: {rotated:?}");
        assert!(m.is_rotational_order(v, &reflected), "{v}: {reflected:?}");
        if n >= 4 {
            let mut swapped = rotated.clone();
            swapped.swap(0, 1);
            assert!(!m.is_rotational_order(v, &swapped), "{v}: {swapped:?}");
        }
    }
    assert!(!m.is_rotational_order(v, &ring[1..]));
    let mut longer = ring.to_vec();
    longer.push(ring[0]);
    assert!(!m.is_rotational_order(v, &longer));
    assert!(!m.is_rotational_order(v, &[]));
}

// ---------------------------------------------------------------------
// Hand-checked meshes.

#[test]
fn single_triangle() {
    let faces = [[0, 1, 2]];
    let m = mesh(3, &faces);
    check_all(
        &m,
        &faces,
        &Expected {
            vv: &[&[1, 2], &[0, 2], &[0, 1]],
            ve: &[&[0, 1], &[0, 2], &[1, 2]],
            vf: &[&[0], &[0], &[0]],
            ev: &[[0, 1], [0, 2], [1, 2]],
            ef: &[&[0], &[0], &[0]],
            fe: &[[0, 2, 1]],
            ff: &[&[]],
        },
    );
    assert_eq!(m.stats(), stats([3, 3, 1, 0, 1], [3, 1, 0, 0], 1));
    assert!(m.is_edge_manifold());
    for v in 0..3 {
        assert!(!m.is_manifold_interior_vertex(v));
        assert!(!m.is_rotational_order(v, &[0, 1, 2]));
    }
    assert_eq!(m.edge_index(0, 0), None);
    assert_eq!(m.edge_index(0, 7), None);
}

#[test]
fn two_triangles_sharing_an_edge() {
    let faces = [[0, 1, 2], [2, 1, 3]];
    let m = mesh(4, &faces);
    check_all(
        &m,
        &faces,
        &Expected {
            vv: &[&[1, 2], &[0, 2, 3], &[0, 1, 3], &[1, 2]],
            ve: &[&[0, 1], &[0, 2, 3], &[1, 2, 4], &[3, 4]],
            vf: &[&[0], &[0, 1], &[0, 1], &[1]],
            ev: &[[0, 1], [0, 2], [1, 2], [1, 3], [2, 3]],
            ef: &[&[0], &[0], &[0, 1], &[1], &[1]],
            fe: &[[0, 2, 1], [2, 3, 4]],
            ff: &[&[1], &[0]],
        },
    );
    assert_eq!(m.stats(), stats([4, 5, 2, 0, 1], [4, 1, 0, 0], 1));
    assert_eq!(m.edge_index(0, 3), None);
    assert!((0..4).all(|v| !m.is_manifold_interior_vertex(v)));
}

const TETRA: [[u32; 3]; 4] = [[0, 2, 1], [0, 1, 3], [1, 2, 3], [2, 0, 3]];

#[test]
fn tetrahedron() {
    let m = mesh(4, &TETRA);
    check_all(
        &m,
        &TETRA,
        &Expected {
            vv: &[&[1, 2, 3], &[0, 2, 3], &[0, 1, 3], &[0, 1, 2]],
            ve: &[&[0, 1, 2], &[0, 3, 4], &[1, 3, 5], &[2, 4, 5]],
            vf: &[&[0, 1, 3], &[0, 1, 2], &[0, 2, 3], &[1, 2, 3]],
            ev: &[[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]],
            ef: &[&[0, 1], &[0, 3], &[1, 3], &[0, 2], &[1, 2], &[2, 3]],
            fe: &[[1, 3, 0], [0, 4, 2], [3, 5, 4], [1, 2, 5]],
            ff: &[&[1, 2, 3], &[0, 2, 3], &[0, 1, 3], &[0, 1, 2]],
        },
    );
    assert_eq!(m.stats(), stats([4, 6, 4, 0, 1], [0, 0, 0, 0], 2));
    assert_eq!(m.euler_characteristic(), 2);
    // Around 3: faces (3,0,1), (3,1,2), (3,2,0).
    check_ring(&m, 3, &[0, 1, 2]);
    // Around 0: faces (0,2,1), (0,1,3), (0,3,2).
    check_ring(&m, 0, &[2, 1, 3]);
    assert!(!m.is_rotational_order(3, &[0, 1]));
    assert!(!m.is_rotational_order(3, &[0, 1, 1]));
    assert!(!m.is_rotational_order(3, &[0, 1, 3]));
    assert!(!m.is_rotational_order(4, &[0, 1, 2]));
    assert!(!m.is_manifold_interior_vertex(4));
}

/// Vertices +x, -x, +y, -y, +z, -z; faces outward.
const OCTA: [[u32; 3]; 8] = [
    [0, 2, 4],
    [2, 1, 4],
    [1, 3, 4],
    [3, 0, 4],
    [2, 0, 5],
    [1, 2, 5],
    [3, 1, 5],
    [0, 3, 5],
];

#[test]
fn octahedron() {
    let m = mesh(6, &OCTA);
    check_all(
        &m,
        &OCTA,
        &Expected {
            vv: &[
                &[2, 3, 4, 5],
                &[2, 3, 4, 5],
                &[0, 1, 4, 5],
                &[0, 1, 4, 5],
                &[0, 1, 2, 3],
                &[0, 1, 2, 3],
            ],
            ve: &[
                &[0, 1, 2, 3],
                &[4, 5, 6, 7],
                &[0, 4, 8, 9],
                &[1, 5, 10, 11],
                &[2, 6, 8, 10],
                &[3, 7, 9, 11],
            ],
            vf: &[
                &[0, 3, 4, 7],
                &[1, 2, 5, 6],
                &[0, 1, 4, 5],
                &[2, 3, 6, 7],
                &[0, 1, 2, 3],
                &[4, 5, 6, 7],
            ],
            ev: &[
                [0, 2],
                [0, 3],
                [0, 4],
                [0, 5],
                [1, 2],
                [1, 3],
                [1, 4],
                [1, 5],
                [2, 4],
                [2, 5],
                [3, 4],
                [3, 5],
            ],
            ef: &[
                &[0, 4],
                &[3, 7],
                &[0, 3],
                &[4, 7],
                &[1, 5],
                &[2, 6],
                &[1, 2],
                &[5, 6],
                &[0, 1],
                &[4, 5],
                &[2, 3],
                &[6, 7],
            ],
            fe: &[
                [0, 8, 2],
                [4, 6, 8],
                [5, 10, 6],
                [1, 2, 10],
                [0, 3, 9],
                [4, 9, 7],
                [5, 7, 11],
                [1, 11, 3],
            ],
            ff: &[
                &[1, 3, 4],
                &[0, 2, 5],
                &[1, 3, 6],
                &[0, 2, 7],
                &[0, 5, 7],
                &[1, 4, 6],
                &[2, 5, 7],
                &[3, 4, 6],
            ],
        },
    );
    assert_eq!(m.stats(), stats([6, 12, 8, 0, 1], [0, 0, 0, 0], 2));
    check_ring(&m, 4, &[0, 2, 1, 3]);
    check_ring(&m, 5, &[0, 3, 1, 2]);
    check_ring(&m, 0, &[2, 4, 3, 5]);
    // A shuffled ring: 0 and 1 are opposite around 4.
    assert!(!m.is_rotational_order(4, &[0, 1, 2, 3]));
    // The neighbours of another vertex.
    assert!(!m.is_rotational_order(4, &[2, 4, 3, 5]));
}

/// The (n+1) x (m+1) vertex grid, vertex (i, j) at `j * (n + 1) + i`,
/// position (i, j, 0); quad (i, j) split along (i,j)-(i+1,j+1) unless
/// `diag` says otherwise, kept when `keep` says so; faces counter-clockwise
/// seen from +z, in quad order (row by row), two per quad.
fn grid(
    n: u32,
    m: u32,
    diag: impl Fn(u32, u32) -> bool,
    keep: impl Fn(u32, u32) -> bool,
) -> TriMesh {
    let id = |i: u32, j: u32| j * (n + 1) + i;
    let mut positions = Vec::new();
    for j in 0..=m {
        for i in 0..=n {
            positions.push([i as f32, j as f32, 0.0]);
        }
    }
    let mut faces = Vec::new();
    for j in 0..m {
        for i in 0..n {
            if !keep(i, j) {
                continue;
            }
            let (a, b, c, d) = (id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1));
            if diag(i, j) {
                faces.extend([[a, b, d], [b, c, d]]);
            } else {
                faces.extend([[a, b, c], [a, c, d]]);
            }
        }
    }
    TriMesh { positions, faces }
}

/// The k-ring on a regular grid (a triangular lattice: an interior
/// vertex's k-ring has 3k(k+1) vertices), at a corner, across a hole, at a
/// non-manifold edge and in a component of its own.
#[test]
fn k_rings() {
    let t = grid(8, 8, |_, _| false, |_, _| true);
    let m = ReferenceMesh::new(&t).unwrap();
    let centre = 4 * 9 + 4;
    for k in 0..=4 {
        assert_eq!(m.k_ring(centre, k).len() as u32, 3 * k * (k + 1), "k = {k}");
    }
    assert_eq!(m.k_ring(centre, 1), m.vv(centre));
    // Every vertex of the 9 x 9 grid is at most 8 hops from a corner.
    assert_eq!(m.k_ring(0, 8).len(), 80);
    assert_eq!(m.k_ring(0, 100).len(), 80);
    // Corner (0, 0) with diagonals (i,j)-(i+1,j+1): (1, 0), (1, 1), (0, 1).
    assert_eq!(m.k_ring(0, 1), [1, 9, 10]);
    // A hole: the ring goes around it.
    let holed = grid(
        4,
        4,
        |_, _| false,
        |i, j| !(1..3).contains(&i) || !(1..3).contains(&j),
    );
    let h = ReferenceMesh::new(&holed).unwrap();
    assert!(
        !h.k_ring(0, 2).contains(&12),
        "the hole's centre has no face"
    );
    // Three triangles on edge 0-1 and a separate triangle.
    let fin = mesh(8, &[[0, 1, 2], [1, 0, 3], [0, 1, 4], [5, 6, 7]]);
    assert_eq!(fin.k_ring(2, 1), [0, 1]);
    assert_eq!(fin.k_ring(2, 2), [0, 1, 3, 4]);
    assert_eq!(fin.k_ring(5, 3), [6, 7]);
}

/// A ring a ball bounds: on the unit lattice with diagonals (i,j)-(i+1,j+1),
/// the centre's ring within 1 is its four axis neighbours; within 1.5 it
/// adds the two diagonal neighbours and, two hops away, the two corners of
/// the 3 x 3 block that are no neighbours (sqrt 2 away); a ball that
/// excludes a vertex also cuts the paths through it.
#[test]
fn rings_within_a_ball() {
    let t = grid(8, 8, |_, _| false, |_, _| true);
    let m = ReferenceMesh::new(&t).unwrap();
    let centre = 4 * 9 + 4;
    let positions = &t.positions;
    let within = |r: f32| {
        let c = positions[centre as usize];
        move |w: u32| {
            let p = positions[w as usize];
            (p[0] - c[0]).hypot(p[1] - c[1]) <= r
        }
    };
    assert_eq!(m.ring_where(centre, 8, within(1.0)), [31, 39, 41, 49]);
    assert_eq!(
        m.ring_where(centre, 8, within(1.5)),
        [30, 31, 32, 39, 41, 48, 49, 50]
    );
    assert_eq!(m.k_ring(centre, 1), [30, 31, 39, 41, 49, 50]);
    assert_eq!(m.ring_where(centre, 8, |_| true), m.k_ring(centre, 8));
    // Only vertices of row 4 admitted: the path left and right along it.
    let row = |w: u32| w / 9 == 4;
    assert_eq!(m.ring_where(centre, 2, row), [38, 39, 41, 42]);
    assert!(m.ring_where(centre, 3, |_| false).is_empty());
}

#[test]
fn grid_with_a_hole() {
    // A 3x3 grid of quads without the center quad: an annulus.
    let t = grid(3, 3, |_, _| false, |i, j| (i, j) != (1, 1));
    let m = ReferenceMesh::new(&t).unwrap();
    // 12 horizontal + 12 vertical + 8 diagonal edges; 12 outer and 4 inner
    // boundary edges.
    assert_eq!(m.stats(), stats([16, 32, 16, 0, 1], [16, 2, 0, 0], 0));
    // Vertex 5 = (1,1): its diagonal to 10 = (2,2) was in the hole.
    assert_eq!(m.vv(5), vec![0, 1, 4, 6, 9]);
    assert_eq!(m.vf(5), vec![0, 1, 3, 6]);
    assert_eq!(m.vv(10), vec![6, 9, 11, 14, 15]);
    assert_eq!(m.vf(10), vec![9, 12, 14, 15]);
    assert_eq!(m.edge_index(5, 10), None);
    assert_eq!(m.ef(m.edge_index(0, 5).unwrap()), vec![0, 1]);
    assert_eq!(m.ef(m.edge_index(5, 6).unwrap()), vec![3]);
    assert_eq!(m.ef(m.edge_index(9, 5).unwrap()), vec![6]);
    // The faces on quad (1,0): [1,2,6] and [1,6,5].
    assert_eq!(m.fv(3), [1, 6, 5]);
    assert_eq!(m.ff(3), vec![0, 2]);
    // Every vertex is on a boundary.
    assert!((0..16).all(|v| !m.is_manifold_interior_vertex(v)));
    check_naive(&m, 16, &t.faces);
    check_consistency(&m);
}

#[test]
fn closed_fan() {
    let faces = [[0, 1, 2], [0, 2, 3], [0, 3, 4], [0, 4, 5], [0, 5, 1]];
    let m = mesh(6, &faces);
    check_all(
        &m,
        &faces,
        &Expected {
            vv: &[
                &[1, 2, 3, 4, 5],
                &[0, 2, 5],
                &[0, 1, 3],
                &[0, 2, 4],
                &[0, 3, 5],
                &[0, 1, 4],
            ],
            ve: &[
                &[0, 1, 2, 3, 4],
                &[0, 5, 6],
                &[1, 5, 7],
                &[2, 7, 8],
                &[3, 8, 9],
                &[4, 6, 9],
            ],
            vf: &[
                &[0, 1, 2, 3, 4],
                &[0, 4],
                &[0, 1],
                &[1, 2],
                &[2, 3],
                &[3, 4],
            ],
            ev: &[
                [0, 1],
                [0, 2],
                [0, 3],
                [0, 4],
                [0, 5],
                [1, 2],
                [1, 5],
                [2, 3],
                [3, 4],
                [4, 5],
            ],
            ef: &[
                &[0, 4],
                &[0, 1],
                &[1, 2],
                &[2, 3],
                &[3, 4],
                &[0],
                &[4],
                &[1],
                &[2],
                &[3],
            ],
            fe: &[[0, 5, 1], [1, 7, 2], [2, 8, 3], [3, 9, 4], [4, 6, 0]],
            ff: &[&[1, 4], &[0, 2], &[1, 3], &[2, 4], &[0, 3]],
        },
    );
    assert_eq!(m.stats(), stats([6, 10, 5, 0, 1], [5, 1, 0, 0], 1));
    check_ring(&m, 0, &[1, 2, 3, 4, 5]);
    assert!(!m.is_rotational_order(0, &[1, 3, 2, 4, 5]));
    assert!(!m.is_rotational_order(0, &[1, 2, 3, 5, 4]));
    assert!((1..6).all(|v| !m.is_manifold_interior_vertex(v)));
}

#[test]
fn open_fan() {
    let faces = [[0, 1, 2], [0, 2, 3], [0, 3, 4], [0, 4, 5]];
    let m = mesh(6, &faces);
    check_all(
        &m,
        &faces,
        &Expected {
            vv: &[
                &[1, 2, 3, 4, 5],
                &[0, 2],
                &[0, 1, 3],
                &[0, 2, 4],
                &[0, 3, 5],
                &[0, 4],
            ],
            ve: &[
                &[0, 1, 2, 3, 4],
                &[0, 5],
                &[1, 5, 6],
                &[2, 6, 7],
                &[3, 7, 8],
                &[4, 8],
            ],
            vf: &[&[0, 1, 2, 3], &[0], &[0, 1], &[1, 2], &[2, 3], &[3]],
            ev: &[
                [0, 1],
                [0, 2],
                [0, 3],
                [0, 4],
                [0, 5],
                [1, 2],
                [2, 3],
                [3, 4],
                [4, 5],
            ],
            ef: &[
                &[0],
                &[0, 1],
                &[1, 2],
                &[2, 3],
                &[3],
                &[0],
                &[1],
                &[2],
                &[3],
            ],
            fe: &[[0, 5, 1], [1, 6, 2], [2, 7, 3], [3, 8, 4]],
            ff: &[&[1], &[0, 2], &[1, 3], &[2]],
        },
    );
    assert_eq!(m.stats(), stats([6, 9, 4, 0, 1], [6, 1, 0, 0], 1));
    // The centre is on the boundary.
    assert!(!m.is_manifold_interior_vertex(0));
    assert!(!m.is_rotational_order(0, &[1, 2, 3, 4, 5]));
}

#[test]
fn three_triangles_on_one_edge() {
    let faces = [[0, 1, 2], [1, 0, 3], [0, 1, 4]];
    let m = mesh(5, &faces);
    check_all(
        &m,
        &faces,
        &Expected {
            vv: &[&[1, 2, 3, 4], &[0, 2, 3, 4], &[0, 1], &[0, 1], &[0, 1]],
            ve: &[&[0, 1, 2, 3], &[0, 4, 5, 6], &[1, 4], &[2, 5], &[3, 6]],
            vf: &[&[0, 1, 2], &[0, 1, 2], &[0], &[1], &[2]],
            ev: &[[0, 1], [0, 2], [0, 3], [0, 4], [1, 2], [1, 3], [1, 4]],
            ef: &[&[0, 1, 2], &[0], &[1], &[2], &[0], &[1], &[2]],
            fe: &[[0, 4, 1], [0, 2, 5], [0, 6, 3]],
            ff: &[&[1, 2], &[0, 2], &[0, 1]],
        },
    );
    // The six boundary edges meet at 0 and 1: one boundary component.
    // Vertices 0 and 1 each have three one-face fans.
    assert_eq!(m.stats(), stats([5, 7, 3, 0, 1], [6, 1, 1, 2], 1));
    assert!(!m.is_edge_manifold());
    assert!((0..5).all(|v| !m.is_manifold_interior_vertex(v)));
}

#[test]
fn two_tetrahedra_at_a_vertex() {
    // The second tetrahedron is the first with 1, 2, 3 moved to 4, 5, 6.
    let mut faces = TETRA.to_vec();
    faces.extend(
        TETRA
            .iter()
            .map(|t| t.map(|v| if v == 0 { 0 } else { v + 3 })),
    );
    let m = mesh(7, &faces);
    assert_eq!(m.vv(0), vec![1, 2, 3, 4, 5, 6]);
    assert_eq!(m.ve(0), vec![0, 1, 2, 3, 4, 5]);
    assert_eq!(m.vf(0), vec![0, 1, 3, 4, 5, 7]);
    assert_eq!(m.vv(5), vec![0, 4, 6]);
    assert_eq!(m.ff(4), vec![5, 6, 7]);
    // V - E + F = 7 - 12 + 8: two spheres (2 + 2) glued at one vertex (-1).
    assert_eq!(m.stats(), stats([7, 12, 8, 0, 1], [0, 0, 0, 1], 3));
    assert!(m.is_edge_manifold());
    assert!(!m.is_manifold_interior_vertex(0));
    assert!(!m.is_rotational_order(0, &[2, 1, 3]));
    assert!((1..7).all(|v| m.is_manifold_interior_vertex(v)));
    check_ring(&m, 6, &[4, 5, 0]);
    check_naive(&m, 7, &faces);
    check_consistency(&m);
}

#[test]
fn isolated_vertex() {
    let faces = [[0, 1, 3]];
    let m = mesh(4, &faces);
    check_all(
        &m,
        &faces,
        &Expected {
            vv: &[&[1, 3], &[0, 3], &[], &[0, 1]],
            ve: &[&[0, 1], &[0, 2], &[], &[1, 2]],
            vf: &[&[0], &[0], &[], &[0]],
            ev: &[[0, 1], [0, 3], [1, 3]],
            ef: &[&[0], &[0], &[0]],
            fe: &[[0, 2, 1]],
            ff: &[&[]],
        },
    );
    assert_eq!(m.stats(), stats([4, 3, 1, 1, 2], [3, 1, 0, 0], 2));
    assert!(!m.is_manifold_interior_vertex(2));
    assert!(!m.is_rotational_order(2, &[]));
}

#[test]
fn two_components() {
    let faces = [[0, 1, 2], [3, 4, 5]];
    let m = mesh(6, &faces);
    check_all(
        &m,
        &faces,
        &Expected {
            vv: &[&[1, 2], &[0, 2], &[0, 1], &[4, 5], &[3, 5], &[3, 4]],
            ve: &[&[0, 1], &[0, 2], &[1, 2], &[3, 4], &[3, 5], &[4, 5]],
            vf: &[&[0], &[0], &[0], &[1], &[1], &[1]],
            ev: &[[0, 1], [0, 2], [1, 2], [3, 4], [3, 5], [4, 5]],
            ef: &[&[0], &[0], &[0], &[1], &[1], &[1]],
            fe: &[[0, 2, 1], [3, 5, 4]],
            ff: &[&[], &[]],
        },
    );
    assert_eq!(m.stats(), stats([6, 6, 2, 0, 2], [6, 2, 0, 0], 2));
}

#[test]
fn mixed_defects() {
    // Three faces on edge 0-1, a separate triangle, an isolated vertex 8.
    let faces = [[0, 1, 2], [1, 0, 3], [0, 1, 4], [5, 6, 7]];
    let m = mesh(9, &faces);
    assert_eq!(m.stats(), stats([9, 10, 4, 1, 3], [9, 2, 1, 2], 3));
    check_naive(&m, 9, &faces);
    check_consistency(&m);
}

#[test]
fn two_triangles_at_a_vertex() {
    // A figure-eight boundary through vertex 0: one boundary component.
    let faces = [[0, 1, 2], [0, 3, 4]];
    let m = mesh(5, &faces);
    assert_eq!(m.stats(), stats([5, 6, 2, 0, 1], [6, 1, 0, 1], 1));
    assert_eq!(m.vv(0), vec![1, 2, 3, 4]);
    assert_eq!(m.ff(0), Vec::<u32>::new());
    check_naive(&m, 5, &faces);
}

#[test]
fn duplicate_faces() {
    // The same face twice, same orientation: every edge has two faces, but
    // the orientation is inconsistent, so no vertex is manifold interior.
    let faces = [[0, 1, 2], [1, 2, 0]];
    let m = mesh(3, &faces);
    assert_eq!(m.ef(0), vec![0, 1]);
    assert_eq!(m.ff(0), vec![1]);
    assert_eq!(m.stats(), stats([3, 3, 2, 0, 1], [0, 0, 0, 0], 2));
    assert!((0..3).all(|v| !m.is_manifold_interior_vertex(v)));
    check_naive(&m, 3, &faces);
    // Opposite orientations: a closed two-face sphere.
    let faces = [[0, 1, 2], [0, 2, 1]];
    let m = mesh(3, &faces);
    assert_eq!(m.stats(), stats([3, 3, 2, 0, 1], [0, 0, 0, 0], 2));
    assert!((0..3).all(|v| m.is_manifold_interior_vertex(v)));
    assert!(m.is_rotational_order(0, &[1, 2]));
    assert!(m.is_rotational_order(0, &[2, 1]));
    assert!(!m.is_rotational_order(0, &[1, 1]));
    // Three copies: a non-manifold edge everywhere.
    let faces = [[0, 1, 2], [0, 2, 1], [2, 1, 0]];
    let m = mesh(3, &faces);
    assert_eq!(m.stats(), stats([3, 3, 3, 0, 1], [0, 0, 3, 3], 3));
    check_naive(&m, 3, &faces);
}

#[test]
fn empty_and_faceless() {
    let m = mesh(0, &[]);
    assert_eq!(m.stats(), stats([0; 5], [0; 4], 0));
    assert!(m.is_edge_manifold());
    assert!(!m.is_manifold_interior_vertex(0));
    assert_eq!(m.edge_index(0, 1), None);
    let m = mesh(3, &[]);
    assert_eq!(m.stats(), stats([3, 0, 0, 3, 3], [0; 4], 3));
    assert_eq!(m.vv(2), Vec::<u32>::new());
}

#[test]
fn bad_faces_are_errors() {
    let err = ReferenceMesh::new(&trimesh(3, &[[0, 1, 2], [0, 1, 5]])).unwrap_err();
    assert!(matches!(
        err,
        ReferenceError::IndexOutOfRange {
            face: 1,
            index: 5,
            vertices: 3
        }
    ));
    assert!(err.to_string().contains("vertex 5"), "{err}");
    for t in [[0, 1, 1], [1, 0, 1], [2, 2, 0], [1, 1, 1]] {
        let err = ReferenceMesh::new(&trimesh(3, &[[0, 1, 2], t])).unwrap_err();
        assert!(
            matches!(err, ReferenceError::DegenerateFace { face: 1, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("repeats"), "{err}");
    }
    assert!(ReferenceMesh::new(&trimesh(0, &[[0, 1, 2]])).is_err());
    assert!(ReferenceMesh::new(&trimesh(3, &[[u32::MAX, 1, 2]])).is_err());
}

/// A grid with its boundary coned to an extra apex vertex: a sphere.
/// Returns the mesh and the apex's ring (the grid boundary, walked against
/// the grid's orientation).
fn coned_grid(n: u32, m: u32, diag: impl Fn(u32, u32) -> bool) -> (TriMesh, Vec<u32>) {
    let mut t = grid(n, m, diag, |_, _| true);
    let id = |i: u32, j: u32| j * (n + 1) + i;
    // The boundary counter-clockwise: along j = 0, i = n, j = m, i = 0.
    let mut boundary: Vec<u32> = (0..n).map(|i| id(i, 0)).collect();
    boundary.extend((0..m).map(|j| id(n, j)));
    boundary.extend((1..=n).rev().map(|i| id(i, m)));
    boundary.extend((1..=m).rev().map(|j| id(0, j)));
    let apex = t.positions.len() as u32;
    t.positions.push([0.0, 0.0, -1.0]);
    let k = boundary.len();
    for i in 0..k {
        // Grid side a -> b, so the cone face runs b -> a.
        t.faces.push([boundary[(i + 1) % k], boundary[i], apex]);
    }
    // Around the apex: faces (apex, b, a), so b -> a: the reversed boundary.
    boundary.reverse();
    (t, boundary)
}

// ---------------------------------------------------------------------
// Properties.

fn grid_params() -> impl Strategy<Value = (u32, u32, Vec<bool>, Vec<bool>)> {
    (1u32..=8, 1u32..=8).prop_flat_map(|(n, m)| {
        let q = (n * m) as usize;
        (
            Just(n),
            Just(m),
            proptest::collection::vec(any::<bool>(), q),
            proptest::collection::vec(prop::bool::weighted(0.8), q),
        )
    })
}

fn soup() -> impl Strategy<Value = (usize, Vec<[u32; 3]>)> {
    (3usize..=9).prop_flat_map(|nv| {
        let face = proptest::sample::subsequence((0..nv as u32).collect::<Vec<_>>(), 3)
            .prop_shuffle()
            .prop_map(|v| [v[0], v[1], v[2]]);
        (Just(nv + 1), proptest::collection::vec(face, 0..14))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// k-rings grow with k, are symmetric (u in the k-ring of v exactly
    /// when v is in the k-ring of u), and the (k+1)-ring is the k-ring
    /// with the VV neighbours of its vertices.
    #[test]
    fn k_rings_are_symmetric_and_nested((n, m, diag, keep) in grid_params(), k in 1u32..4) {
        let t = grid(n, m, |i, j| diag[(j * n + i) as usize], |i, j| keep[(j * n + i) as usize]);
        let r = ReferenceMesh::new(&t).unwrap();
        let nv = t.positions.len() as u32;
        for v in 0..nv {
            let ring = r.k_ring(v, k);
            let grown = r.k_ring(v, k + 1);
            prop_assert!(ring.iter().all(|u| grown.contains(u)));
            let mut expanded: Vec<u32> = ring
                .iter()
                .chain(&[v])
                .flat_map(|&u| r.vv(u))
                .chain(ring.iter().copied())
                .filter(|&u| u != v)
                .collect();
            expanded.sort_unstable();
            expanded.dedup();
            prop_assert_eq!(&expanded, &grown);
            for &u in &ring {
                prop_assert!(r.k_ring(u, k).contains(&v));
            }
        }
    }

    #[test]
    fn full_grids((n, m, diag, _) in grid_params()) {
        let t = grid(n, m, |i, j| diag[(j * n + i) as usize], |_, _| true);
        let r = ReferenceMesh::new(&t).unwrap();
        check_consistency(&r);
        check_naive(&r, t.positions.len(), &t.faces);
        let nv = ((n + 1) * (m + 1)) as usize;
        let ne = (n * (m + 1) + m * (n + 1) + n * m) as usize;
        prop_assert_eq!(
            r.stats(),
            stats([nv, ne, 2 * (n * m) as usize, 0, 1], [2 * (n + m) as usize, 1, 0, 0], 1)
        );
        prop_assert_eq!(r.euler_characteristic(), 1);
        for j in 0..=m {
            for i in 0..=n {
                let v = j * (n + 1) + i;
                let interior = 0 < i && i < n && 0 < j && j < m;
                prop_assert_eq!(r.is_manifold_interior_vertex(v), interior);
            }
        }
    }

    #[test]
    fn grids_with_holes((n, m, diag, keep) in grid_params()) {
        let t = grid(n, m, |i, j| diag[(j * n + i) as usize], |i, j| keep[(j * n + i) as usize]);
        let r = ReferenceMesh::new(&t).unwrap();
        check_consistency(&r);
        check_naive(&r, t.positions.len(), &t.faces);
        prop_assert!(r.is_edge_manifold());
    }

    #[test]
    fn interior_rings_of_grids(
        (n, m, diag, _) in grid_params(),
        keys in proptest::collection::vec(any::<u16>(), 8),
    ) {
        let t = grid(n, m, |i, j| diag[(j * n + i) as usize], |_, _| true);
        let r = ReferenceMesh::new(&t).unwrap();
        for v in 0..r.num_vertices() as u32 {
            if !r.is_manifold_interior_vertex(v) {
                continue;
            }
            // Counter-clockwise by angle, as the faces are.
            let p = t.positions[v as usize];
            let angle = |u: &u32| {
                let q = t.positions[*u as usize];
                (q[1] - p[1]).atan2(q[0] - p[0])
            };
            let mut ring = r.vv(v);
            ring.sort_by(|a, b| angle(a).total_cmp(&angle(b)));
            check_ring(&r, v, &ring);
            // A random permutation is accepted exactly when it is a rotation
            // or reflection.
            let mut order: Vec<usize> = (0..ring.len()).collect();
            order.sort_by_key(|&i| (keys[i % keys.len()], i));
            let shuffled: Vec<u32> = order.iter().map(|&i| ring[i]).collect();
            prop_assert_eq!(r.is_rotational_order(v, &shuffled), is_dihedral(&ring, &shuffled));
        }
    }

    #[test]
    fn coned_grids_are_spheres((n, m, diag, _) in grid_params(), keys in proptest::collection::vec(any::<u16>(), 1..40)) {
        let (t, ring) = coned_grid(n, m, |i, j| diag[(j * n + i) as usize]);
        let r = ReferenceMesh::new(&t).unwrap();
        check_consistency(&r);
        let s = r.stats();
        prop_assert_eq!(s.euler_characteristic, 2);
        prop_assert_eq!((s.boundary_edges, s.boundary_loops, s.components), (0, 0, 1));
        prop_assert_eq!((s.non_manifold_edges, s.non_manifold_vertices), (0, 0));
        for v in 0..r.num_vertices() as u32 {
            prop_assert!(r.is_manifold_interior_vertex(v));
        }
        let apex = (r.num_vertices() - 1) as u32;
        check_ring(&r, apex, &ring);
        let mut order: Vec<usize> = (0..ring.len()).collect();
        order.sort_by_key(|&i| (keys[i % keys.len()], i));
        let shuffled: Vec<u32> = order.iter().map(|&i| ring[i]).collect();
        prop_assert_eq!(r.is_rotational_order(apex, &shuffled), is_dihedral(&ring, &shuffled));
    }

    #[test]
    fn soups_match_the_brute_force((nv, faces) in soup()) {
        let r = ReferenceMesh::new(&trimesh(nv, &faces)).unwrap();
        check_consistency(&r);
        check_naive(&r, nv, &faces);
        for v in 0..nv as u32 {
            // A manifold interior vertex has as many faces as neighbours,
            // and its ring is found by walking the faces.
            if r.is_manifold_interior_vertex(v) {
                prop_assert_eq!(r.vf(v).len(), r.vv(v).len());
                prop_assert!(r.ve(v).iter().all(|&e| r.ef(e).len() == 2));
            }
        }
    }

    #[test]
    fn arbitrary_faces_never_panic(
        nv in 0usize..6,
        faces in proptest::collection::vec(proptest::array::uniform3(0u32..7), 0..8),
    ) {
        let bad = faces.iter().any(|t| {
            t.iter().any(|&v| v as usize >= nv) || t[0] == t[1] || t[1] == t[2] || t[2] == t[0]
        });
        match ReferenceMesh::new(&trimesh(nv, &faces)) {
            Ok(r) => {
                prop_assert!(!bad);
                check_naive(&r, nv, &faces);
            }
            Err(_) => prop_assert!(bad),
        }
    }
}

#[test]
fn a_million_faces() {
    let n = 708;
    let t = grid(n, n, |i, j| (i ^ j) & 1 == 0, |_, _| true);
    assert!(t.faces.len() >= 1_000_000);
    let start = Instant::now();
    let r = ReferenceMesh::new(&t).unwrap();
    let s = r.stats();
    let built = start.elapsed();
    let interior = (0..r.num_vertices() as u32)
        .filter(|&v| r.is_manifold_interior_vertex(v))
        .count();
    eprintln!(
        "{} faces: build + stats {:.3} s, all vertex checks {:.3} s",
        t.faces.len(),
        built.as_secs_f64(),
        start.elapsed().as_secs_f64()
    );
    assert_eq!(interior, ((n - 1) * (n - 1)) as usize);
    assert_eq!(s.euler_characteristic, 1);
    assert_eq!((s.boundary_edges, s.boundary_loops), (4 * n as usize, 1));
    assert_eq!(s.components, 1);
    // Face 0 is the corner triangle (0, 1, n + 1): two boundary sides.
    assert_eq!(r.ff(0), vec![1]);
}

//! The reference mesh on hand-checked cases.

use cavity::TriMesh;
use cavity::reference::ReferenceMesh;

fn mesh(nv: usize, faces: &[[u32; 3]]) -> ReferenceMesh {
    let m = TriMesh {
        positions: vec![[0.0; 3]; nv],
        faces: faces.to_vec(),
    };
    ReferenceMesh::new(&m).unwrap()
}

const TETRA: [[u32; 3]; 4] = [[0, 2, 1], [0, 1, 3], [1, 2, 3], [2, 0, 3]];

#[test]
fn tetrahedron() {
    let m = mesh(4, &TETRA);
    let s = m.stats();
    assert_eq!((s.vertices, s.edges, s.faces), (4, 6, 4));
    assert_eq!(s.euler_characteristic, 2);
    assert_eq!(
        (s.components, s.boundary_loops, s.boundary_edges),
        (1, 0, 0)
    );
    assert_eq!((s.non_manifold_edges, s.non_manifold_vertices), (0, 0));
    assert_eq!(m.vv(0), vec![1, 2, 3]);
    assert_eq!(m.vf(3), vec![1, 2, 3]);
    assert_eq!(m.ff(0), vec![1, 2, 3]);
    let e = m.edge_index(2, 0).unwrap();
    assert_eq!(m.edge_vertices(e), [0, 2]);
    assert_eq!(m.ef(e), vec![0, 3]);
    assert_eq!(
        m.fe(0),
        [e, m.edge_index(2, 1).unwrap(), m.edge_index(1, 0).unwrap()]
    );
    for v in 0..4 {
        assert!(m.is_manifold_interior_vertex(v));
    }
    // Around 3: faces (3,0,1), (3,1,2), (3,2,0) give the ring 0, 1, 2.
    assert!(m.is_rotational_order(3, &[0, 1, 2]));
    assert!(m.is_rotational_order(3, &[2, 1, 0]));
    assert!(!m.is_rotational_order(3, &[0, 1]));
}

#[test]
fn defects_are_counted() {
    // Two triangles sharing an edge, a third on the same edge
    // (non-manifold edge), an isolated vertex, a separate triangle.
    let m = mesh(9, &[[0, 1, 2], [1, 0, 3], [0, 1, 4], [5, 6, 7]]);
    let s = m.stats();
    assert_eq!(s.non_manifold_edges, 1);
    assert_eq!(s.isolated_vertices, 1);
    assert_eq!(s.components, 3);
    assert_eq!(s.euler_characteristic, 9 - 10 + 4);
    assert!(!m.is_edge_manifold());
    assert!(!m.is_manifold_interior_vertex(0));
    // Two tetrahedra sharing vertex 0: a non-manifold vertex.
    let mut faces = TETRA.to_vec();
    faces.extend(
        TETRA
            .iter()
            .map(|f| f.map(|v| if v == 0 { 0 } else { v + 3 })),
    );
    let s = mesh(7, &faces).stats();
    assert_eq!(s.non_manifold_vertices, 1);
    assert_eq!(s.euler_characteristic, 3);
}

#[test]
fn boundary_loops_of_a_strip_with_a_hole() {
    // A 3x3 grid of quads (2 triangles each) without the center quad.
    let id = |i: u32, j: u32| j * 4 + i;
    let mut faces = Vec::new();
    for j in 0..3 {
        for i in 0..3 {
            if (i, j) != (1, 1) {
                faces.push([id(i, j), id(i + 1, j), id(i + 1, j + 1)]);
                faces.push([id(i, j), id(i + 1, j + 1), id(i, j + 1)]);
            }
        }
    }
    let s = mesh(16, &faces).stats();
    assert_eq!(s.boundary_loops, 2);
    assert_eq!(s.euler_characteristic, 0);
}

#[test]
fn bad_faces_are_errors() {
    let m = TriMesh {
        positions: vec![[0.0; 3]; 3],
        faces: vec![[0, 1, 5]],
    };
    assert!(
        ReferenceMesh::new(&m)
            .unwrap_err()
            .to_string()
            .contains("vertex 5")
    );
    let m = TriMesh {
        positions: vec![[0.0; 3]; 3],
        faces: vec![[0, 1, 1]],
    };
    assert!(
        ReferenceMesh::new(&m)
            .unwrap_err()
            .to_string()
            .contains("repeats")
    );
}

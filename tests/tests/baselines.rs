//! The PDE baseline of the query benchmark (Directed Edges, run here on the
//! host through the same device-crate function the GPU kernel calls) agrees
//! with the reference mesh on every manifold input, and its construction
//! refuses exactly the non-manifold ones.

use cavity::topology::Topology;
use cavity::{Query, TriMesh};
use cavity_bench::directed_edges::DirectedEdgesMesh;
use cavity_bench_kernels::baseline::pde_sum;
use cavity_device::block::Scatter;
use cavity_reference::ReferenceMesh;
use cavity_tests::{any_mesh, fan, grid, reference_row};
use proptest::prelude::*;

/// Small integers, so that sums are exact in any order.
fn attribute(n: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 7919) % 101) as f32).collect()
}

fn check(mesh: &TriMesh) -> Result<(), String> {
    let reference = ReferenceMesh::new(mesh).map_err(|e| e.to_string())?;
    let stats = reference.stats();
    let manifold = stats.non_manifold_edges == 0 && stats.non_manifold_vertices == 0;
    let topo = Topology::new(mesh);
    let de = match DirectedEdgesMesh::new(mesh, &topo) {
        Ok(de) => de,
        Err(_) if !manifold => return Ok(()),
        Err(e) => return Err(format!("manifold mesh refused: {e}")),
    };
    if !manifold {
        return Err("non-manifold mesh accepted".into());
    }
    for query in Query::ALL {
        let sources = match query.source() {
            cavity::Kind::Vertex => reference.num_vertices(),
            cavity::Kind::Edge => reference.num_edges(),
            cavity::Kind::Face => reference.num_faces(),
        };
        let targets = match query.target() {
            cavity::Kind::Vertex => reference.num_vertices(),
            cavity::Kind::Edge => reference.num_edges(),
            cavity::Kind::Face => reference.num_faces(),
        };
        let attr = attribute(targets);
        let mut out = vec![0f32; sources];
        let scatter = Scatter::new(&mut out);
        for i in 0..sources as u32 {
            pde_sum(query, i, &de.view(), de.max_valence, &attr, &scatter);
        }
        for i in 0..sources as u32 {
            let expected = reference_row(&reference, query, i);
            let want: f32 = expected.iter().map(|&t| attr[t as usize]).sum();
            if out[i as usize] != want {
                return Err(format!(
                    "{} of element {i}: PDE sums {}, reference {want}",
                    query.name(),
                    out[i as usize]
                ));
            }
        }
    }
    Ok(())
}

#[test]
fn open_and_closed_meshes() {
    check(&grid(5, 4, &[true, false, false], false, &[])).unwrap();
    check(&grid(6, 5, &[false, true], true, &[])).unwrap();
    check(&grid(6, 5, &[false], false, &[3, 17])).unwrap();
    check(&fan(7, false)).unwrap();
    check(&fan(6, true)).unwrap();
}

#[test]
fn orientation_errors_are_refused() {
    let mut mesh = grid(3, 3, &[false], false, &[]);
    mesh.faces[4].swap(0, 1);
    let topo = Topology::new(&mesh);
    assert!(DirectedEdgesMesh::new(&mesh, &topo).is_err());
}

proptest! {
    #[test]
    fn pde_matches_the_reference(mesh in any_mesh()) {
        check(&mesh).map_err(TestCaseError::fail)?;
    }
}

//! The example against plain serial implementations, on the backend
//! `CAVITY_TEST_DEVICE` names (`cpu` by default, `cuda` on a GPU machine):
//! after the splits no interior vertex has more edges than the limit and
//! the counts and topology are those of vertex splits; the smoothing
//! equals a serial Laplacian over the split mesh.

use cavity::TriMesh;
use cavity::backend::{Backend, DeviceChoice};
use cavity_reference::ReferenceMesh;
use smooth_split::{Settings, run};

fn backend() -> Backend {
    let choice: DeviceChoice = std::env::var("CAVITY_TEST_DEVICE")
        .unwrap_or_else(|_| "cpu".into())
        .parse()
        .expect("CAVITY_TEST_DEVICE");
    Backend::select(choice).expect("backend").0
}

/// A wheel of `k` triangles around an interior centre (valence `k`) next
/// to an `n × n` torus of unit squares split in two (valence 6).
fn wheel_and_torus(k: u32, n: u32) -> TriMesh {
    let mut positions = vec![[0.0, 0.0, 5.0]];
    let mut faces = Vec::new();
    for i in 0..k {
        let a = i as f32 / k as f32 * std::f32::consts::TAU;
        positions.push([a.cos(), a.sin(), 5.0]);
        faces.push([0, 1 + i, 1 + (i + 1) % k]);
    }
    let base = positions.len() as u32;
    for i in 0..n {
        for j in 0..n {
            let (u, v) = (i as f32 / n as f32, j as f32 / n as f32);
            let (a, b) = (u * std::f32::consts::TAU, v * std::f32::consts::TAU);
            let r = 3.0 + b.cos();
            positions.push([r * a.cos(), r * a.sin(), b.sin()]);
        }
    }
    let at = |i: u32, j: u32| base + (i % n) * n + (j % n);
    for i in 0..n {
        for j in 0..n {
            faces.push([at(i, j), at(i + 1, j), at(i + 1, j + 1)]);
            faces.push([at(i, j), at(i + 1, j + 1), at(i, j + 1)]);
        }
    }
    TriMesh { positions, faces }
}

fn euler(m: &TriMesh) -> i64 {
    let r = ReferenceMesh::new(m).unwrap();
    r.num_vertices() as i64 - r.num_edges() as i64 + m.faces.len() as i64
}

/// The largest valence of a vertex whose edges all have two faces.
fn largest_interior_valence(m: &TriMesh) -> usize {
    let r = ReferenceMesh::new(m).unwrap();
    (0..r.num_vertices() as u32)
        .filter(|&v| {
            let edges = r.ve(v);
            !edges.is_empty() && edges.iter().all(|&e| r.ef(e).len() == 2)
        })
        .map(|v| r.vv(v).len())
        .max()
        .unwrap_or(0)
}

/// `steps` Laplacian steps of every vertex, serially.
fn serial_smoothing(m: &TriMesh, steps: u32, lambda: f32) -> Vec<[f32; 3]> {
    let r = ReferenceMesh::new(m).unwrap();
    let mut p = m.positions.clone();
    for _ in 0..steps {
        p = (0..p.len() as u32)
            .map(|v| {
                let ring = r.vv(v);
                let here = p[v as usize];
                if ring.is_empty() {
                    return here;
                }
                let mut mean = [0.0f32; 3];
                for &n in &ring {
                    for k in 0..3 {
                        mean[k] += p[n as usize][k] / ring.len() as f32;
                    }
                }
                [0, 1, 2].map(|k| here[k] + lambda * (mean[k] - here[k]))
            })
            .collect();
    }
    p
}

#[test]
fn splits_and_smoothing_match_serial_implementations() {
    let input = wheel_and_torus(23, 12);
    assert_eq!(largest_interior_valence(&input), 23);
    let settings = Settings {
        max_valence: 8,
        steps: 6,
        lambda: 0.5,
        patch_size: 64,
    };
    let out = run(&backend(), &input, &settings).expect("the example runs");
    assert!(out.splits >= 3, "{} splits", out.splits);
    let split = &out.split;
    assert_eq!(
        split.positions.len(),
        input.positions.len() + out.splits as usize
    );
    assert_eq!(
        split.faces.len(),
        input.faces.len() + 2 * out.splits as usize
    );
    assert_eq!(euler(split), euler(&input));
    assert!(largest_interior_valence(split) <= 8);
    assert_eq!(out.mesh.faces, split.faces);
    let serial = serial_smoothing(split, settings.steps, settings.lambda);
    for (v, (got, want)) in out.mesh.positions.iter().zip(&serial).enumerate() {
        for k in 0..3 {
            assert!(
                (got[k] - want[k]).abs() <= 1e-4 * want[k].abs().max(1.0),
                "vertex {v}: {got:?}, serial {want:?}"
            );
        }
    }
}

//! The plain serial bilateral denoising (Fleishman et al. 2003, with
//! RXMesh's neighbourhoods, section 8.3): one vertex after another on one
//! thread, in `f64`, over the reference mesh's VV, each neighbourhood a
//! breadth-first search with visit marks as RXMesh's OpenMesh version
//! gathers it. The oracle of the tests and the single-thread baseline of
//! the benchmark; the same rules as `cavity-denoise-kernels` (the
//! vertex's own weight, `σc` the shortest edge of nonzero length, the
//! vertices that stay).

use cavity::TriMesh;
use cavity_reference::{ReferenceError, ReferenceMesh};

use crate::MIN_SIGMA_S;

type V3 = [f64; 3];

fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// `mesh` after `iterations` iterations of the filter with neighbourhoods
/// of at most `max_hops` hops (faces and vertex order kept).
///
/// # Errors
/// A mesh the reference mesh refuses (an index out of range).
pub fn denoise(mesh: &TriMesh, iterations: u32, max_hops: u32) -> Result<TriMesh, ReferenceError> {
    let reference = ReferenceMesh::new(mesh)?;
    let n = mesh.positions.len();
    let vv: Vec<Vec<u32>> = (0..n as u32).map(|v| reference.vv(v)).collect();
    let mut positions: Vec<V3> = mesh.positions.iter().map(|p| p.map(f64::from)).collect();
    // Visit marks: the vertex whose search last saw each vertex.
    let mut mark = vec![u32::MAX; n];
    let mut ring = Vec::new();
    for _ in 0..iterations {
        mark.fill(u32::MAX);
        let mut normals = vec![[0.0f64; 3]; n];
        for face in &mesh.faces {
            let [a, b, c] = face.map(|v| positions[v as usize]);
            let m = cross(sub(b, a), sub(c, a));
            for &v in face {
                let normal = &mut normals[v as usize];
                for k in 0..3 {
                    normal[k] += m[k];
                }
            }
        }
        let mut next = positions.clone();
        for v in 0..n {
            let p = positions[v];
            let length = dot(normals[v], normals[v]).sqrt();
            let sigma_c = vv[v]
                .iter()
                .map(|&u| dot(sub(positions[u as usize], p), sub(positions[u as usize], p)).sqrt())
                .filter(|&l| l > 0.0)
                .fold(f64::INFINITY, f64::min);
            if length == 0.0 || !sigma_c.is_finite() {
                continue;
            }
            let normal = normals[v].map(|x| x / length);
            // The neighbourhood: hop by hop through the vertices inside
            // the ball of radius 2 σc.
            let radius = 2.0 * sigma_c;
            ring.clear();
            mark[v] = v as u32;
            let mut frontier = (0, 0);
            let mut hop = 0;
            let mut start = true;
            while hop < max_hops && (start || frontier.0 < frontier.1) {
                let from: Vec<u32> = if start {
                    vec![v as u32]
                } else {
                    ring[frontier.0..frontier.1].to_vec()
                };
                start = false;
                let before = ring.len();
                for u in from {
                    for &w in &vv[u as usize] {
                        let d = sub(positions[w as usize], p);
                        if mark[w as usize] != v as u32 && dot(d, d).sqrt() <= radius {
                            mark[w as usize] = v as u32;
                            ring.push(w);
                        }
                    }
                }
                frontier = (before, ring.len());
                hop += 1;
            }
            if ring.is_empty() {
                continue;
            }
            let h = |w: u32| dot(sub(positions[w as usize], p), normal);
            let count = (ring.len() + 1) as f64;
            let sum: f64 = ring.iter().map(|&w| h(w).abs()).sum();
            let sum_sqs: f64 = ring.iter().map(|&w| h(w) * h(w)).sum();
            let deviation = (sum_sqs / count - (sum / count).powi(2)).max(0.0).sqrt();
            let min = f64::from(MIN_SIGMA_S);
            let sigma_s = if deviation < min {
                deviation + min
            } else {
                deviation
            };
            let (mut moved, mut weights) = (0.0, 1.0);
            for &w in &ring {
                let d = sub(positions[w as usize], p);
                let hw = h(w);
                let weight = (-dot(d, d) / (2.0 * sigma_c * sigma_c)).exp()
                    * (-hw * hw / (2.0 * sigma_s * sigma_s)).exp();
                moved += weight * hw;
                weights += weight;
            }
            let by = moved / weights;
            next[v] = [0, 1, 2].map(|k| p[k] + normal[k] * by);
        }
        positions = next;
    }
    Ok(TriMesh {
        positions: positions.iter().map(|p| p.map(|x| x as f32)).collect(),
        faces: mesh.faces.clone(),
    })
}

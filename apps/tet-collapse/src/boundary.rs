//! The boundary vertices' classes on the host (section 3.1, the rules in
//! `cavity_tet_collapse_kernels::boundary`): from the outward boundary
//! triangles (`crate::checks::boundary_surface`), each triangle's unit
//! normal, the sharp boundary edges (normals across them differing by more
//! than `ε_R`) and each boundary vertex's class.

use std::collections::HashMap;

use cavity_tet_collapse_kernels::boundary::{INTERIOR, classify};
use cavity_tet_collapse_kernels::geometry::{cross, dot, sub};
use rayon::prelude::*;

/// The classes of a mesh's vertices and its sharp boundary edges.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Classes {
    /// Per vertex: `INTERIOR`, `FACE`, `RIDGE` or `CORNER`
    /// (`cavity_tet_collapse_kernels::boundary`).
    pub class: Vec<u32>,
    /// Per vertex: whether it is on a boundary triangle.
    pub on_boundary: Vec<bool>,
    /// The sharp boundary edges, `(low, high)`.
    pub sharp: std::collections::HashSet<(u32, u32)>,
}

/// The unit normal of triangle `t` at `positions` (zero for a triangle of
/// no area).
fn normal(positions: &[[f32; 3]], t: [u32; 3]) -> [f64; 3] {
    let p = t.map(|v| positions[v as usize].map(f64::from));
    let n = cross(sub(p[1], p[0]), sub(p[2], p[0]));
    let l = dot(n, n).sqrt();
    if l > 0.0 { n.map(|c| c / l) } else { [0.0; 3] }
}

/// The classes of the `vertices` vertices of a mesh at `positions` whose
/// boundary triangles (outward) are `triangles`, with thresholds
/// `epsilon_f` and `epsilon_r` (`1 - n_i · n_j`). A boundary edge is sharp
/// when its two triangles' normals differ by more than `epsilon_r`, or
/// when it does not have exactly two boundary triangles (a non-manifold
/// boundary edge is kept as a feature).
pub fn classify_vertices(
    positions: &[[f32; 3]],
    triangles: &[[u32; 3]],
    vertices: usize,
    epsilon_f: f64,
    epsilon_r: f64,
) -> Classes {
    let normals: Vec<[f64; 3]> = triangles
        .par_iter()
        .map(|&t| normal(positions, t))
        .collect();
    let mut around: Vec<Vec<u32>> = vec![Vec::new(); vertices];
    let mut edges: HashMap<(u32, u32), Vec<u32>> = HashMap::new();
    for (i, t) in triangles.iter().enumerate() {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            around[a as usize].push(i as u32);
            edges
                .entry((a.min(b), a.max(b)))
                .or_default()
                .push(i as u32);
        }
    }
    let sharp: std::collections::HashSet<(u32, u32)> = edges
        .iter()
        .filter(|(_, ts)| {
            ts.len() != 2 || dot(normals[ts[0] as usize], normals[ts[1] as usize]) < 1.0 - epsilon_r
        })
        .map(|(&e, _)| e)
        .collect();
    let mut sharp_count = vec![0u32; vertices];
    for &(a, b) in &sharp {
        sharp_count[a as usize] += 1;
        sharp_count[b as usize] += 1;
    }
    let class = (0..vertices)
        .into_par_iter()
        .map(|v| {
            let n: Vec<[f64; 3]> = around[v].iter().map(|&t| normals[t as usize]).collect();
            classify(&n, n.len(), sharp_count[v], epsilon_f)
        })
        .collect::<Vec<u32>>();
    let on_boundary = class.iter().map(|&c| c != INTERIOR).collect();
    Classes {
        class,
        on_boundary,
        sharp,
    }
}

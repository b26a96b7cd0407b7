//! Mesh generators of the property tests: grids with holes, fans, unions,
//! defects, shuffled orders, spheres, and proptest strategies over them.

use cavity::TriMesh;
use proptest::prelude::*;
use std::collections::BTreeSet;

/// An `n × m` grid of quads split into triangles (diagonal direction from
/// `flip`), `wrap` joining opposite sides into a torus (closed, every vertex
/// manifold interior), faces listed in `holes` removed.
pub fn grid(n: u32, m: u32, flip: &[bool], wrap: bool, holes: &[usize]) -> TriMesh {
    let (cols, rows) = if wrap { (n, m) } else { (n + 1, m + 1) };
    let id = |i: u32, j: u32| (j % rows) * cols + (i % cols);
    let mut positions = Vec::new();
    for j in 0..rows {
        for i in 0..cols {
            let (x, y) = (i as f32, j as f32);
            if wrap {
                let (a, b) = (
                    x / n as f32 * std::f32::consts::TAU,
                    y / m as f32 * std::f32::consts::TAU,
                );
                let r = 3.0 + b.cos();
                positions.push([r * a.cos(), r * a.sin(), b.sin()]);
            } else {
                positions.push([x, y, 0.0]);
            }
        }
    }
    let mut faces = Vec::new();
    for j in 0..m {
        for i in 0..n {
            let (a, b, c, d) = (id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1));
            if flip
                .get((j * n + i) as usize % flip.len().max(1))
                .copied()
                .unwrap_or(false)
            {
                faces.push([a, b, d]);
                faces.push([b, c, d]);
            } else {
                faces.push([a, b, c]);
                faces.push([a, c, d]);
            }
        }
    }
    let holes: BTreeSet<usize> = holes.iter().map(|h| h % faces.len().max(1)).collect();
    let faces = faces
        .into_iter()
        .enumerate()
        .filter(|(k, _)| !holes.contains(k))
        .map(|(_, f)| f)
        .collect();
    TriMesh { positions, faces }
}

/// A fan of `k` triangles around a center vertex, closed when `closed`.
pub fn fan(k: u32, closed: bool) -> TriMesh {
    let mut positions = vec![[0.0, 0.0, 0.0]];
    let rim = if closed { k } else { k + 1 };
    for i in 0..rim {
        let a = i as f32 / rim as f32 * std::f32::consts::TAU;
        positions.push([a.cos(), a.sin(), 0.0]);
    }
    let faces = (0..k).map(|i| [0, 1 + i, 1 + (i + 1) % rim]).collect();
    TriMesh { positions, faces }
}

/// Concatenates meshes (several components).
pub fn concat(parts: &[TriMesh]) -> TriMesh {
    let mut out = TriMesh::default();
    for p in parts {
        let base = out.positions.len() as u32;
        out.positions.extend(&p.positions);
        out.faces.extend(
            p.faces
                .iter()
                .map(|f| [f[0] + base, f[1] + base, f[2] + base]),
        );
    }
    out
}

/// Adds `k` triangles hinged on the edge of face 0's first two corners
/// (non-manifold edge), and `isolated` vertices referenced by no face.
pub fn add_defects(mut mesh: TriMesh, k: u32, isolated: u32) -> TriMesh {
    if let Some(&[a, b, _]) = mesh.faces.first() {
        for i in 0..k {
            let v = mesh.positions.len() as u32;
            mesh.positions.push([0.5, 0.5, 1.0 + i as f32]);
            mesh.faces.push([b, a, v]);
        }
    }
    for i in 0..isolated {
        mesh.positions.push([-1.0 - i as f32, 0.0, 0.0]);
    }
    mesh
}

/// Renumbers vertices and reorders faces by the permutations from `seed`,
/// rotating each face's corners too.
pub fn shuffle(mesh: &TriMesh, seed: u64) -> TriMesh {
    let mut s = seed | 1;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let nv = mesh.positions.len();
    let mut perm: Vec<u32> = (0..nv as u32).collect();
    for i in (1..nv).rev() {
        perm.swap(i, rnd() as usize % (i + 1));
    }
    let mut positions = vec![[0.0; 3]; nv];
    for (v, &p) in perm.iter().enumerate() {
        positions[p as usize] = mesh.positions[v];
    }
    let mut faces: Vec<[u32; 3]> = mesh
        .faces
        .iter()
        .map(|f| {
            let r = (rnd() % 3) as usize;
            [0, 1, 2].map(|k| perm[f[(k + r) % 3] as usize])
        })
        .collect();
    let nf = faces.len();
    for i in (1..nf).rev() {
        faces.swap(i, rnd() as usize % (i + 1));
    }
    TriMesh { positions, faces }
}

/// A unit sphere: an icosahedron subdivided `levels` times (20 × 4^levels
/// faces), every vertex projected on the sphere.
pub fn unit_sphere(levels: u32) -> TriMesh {
    let t = (1.0 + 5f32.sqrt()) / 2.0;
    let mut mesh = TriMesh {
        positions: vec![
            [-1.0, t, 0.0],
            [1.0, t, 0.0],
            [-1.0, -t, 0.0],
            [1.0, -t, 0.0],
            [0.0, -1.0, t],
            [0.0, 1.0, t],
            [0.0, -1.0, -t],
            [0.0, 1.0, -t],
            [t, 0.0, -1.0],
            [t, 0.0, 1.0],
            [-t, 0.0, -1.0],
            [-t, 0.0, 1.0],
        ],
        faces: vec![
            [0, 11, 5],
            [0, 5, 1],
            [0, 1, 7],
            [0, 7, 10],
            [0, 10, 11],
            [1, 5, 9],
            [5, 11, 4],
            [11, 10, 2],
            [10, 7, 6],
            [7, 1, 8],
            [3, 9, 4],
            [3, 4, 2],
            [3, 2, 6],
            [3, 6, 8],
            [3, 8, 9],
            [4, 9, 5],
            [2, 4, 11],
            [6, 2, 10],
            [8, 6, 7],
            [9, 8, 1],
        ],
    };
    for _ in 0..levels {
        mesh = mesh.subdivide();
        for p in &mut mesh.positions {
            let l = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
            *p = p.map(|c| c / l);
        }
    }
    mesh
}

/// A mix of generated meshes: grids with holes (open or torus), fans,
/// non-manifold edges, isolated vertices, several components, shuffled.
pub fn any_mesh() -> impl Strategy<Value = TriMesh> {
    (
        1u32..14,
        1u32..14,
        proptest::collection::vec(any::<bool>(), 1..16),
        any::<bool>(),
        proptest::collection::vec(any::<usize>(), 0..12),
        0u32..4,
        0u32..3,
        0u32..9,
        any::<u64>(),
    )
        .prop_map(|(n, m, flip, wrap, holes, nm, iso, fan_k, seed)| {
            let wrap = wrap && n >= 3 && m >= 3;
            let mut parts = vec![add_defects(grid(n, m, &flip, wrap, &holes), nm, iso)];
            if fan_k >= 3 {
                parts.push(fan(fan_k, fan_k % 2 == 0));
            }
            shuffle(&concat(&parts), seed)
        })
}

/// Small random triangle soups: 4 to 9 vertices, up to 12 distinct-corner
/// faces in any orientation, so edges shared by three or more faces,
/// repeated faces, faces meeting at a vertex only and inconsistent
/// orientations are common.
pub fn soup() -> impl Strategy<Value = TriMesh> {
    (4u32..10).prop_flat_map(|nv| {
        let corner = 0..nv;
        let face = (corner.clone(), corner.clone(), corner)
            .prop_filter("distinct corners", |(a, b, c)| a != b && b != c && a != c)
            .prop_map(|(a, b, c)| [a, b, c]);
        proptest::collection::vec(face, 1..13).prop_map(move |faces| TriMesh {
            positions: (0..nv).map(|i| [i as f32, (i * i) as f32, 0.0]).collect(),
            faces,
        })
    })
}

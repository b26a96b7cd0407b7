//! Tetrahedral meshes for the suites of the collapse (issue 54): plain
//! builders of cube grids split into Kuhn tetrahedra and the proptest
//! strategy [`any_tet_mesh`] drawing perturbed grids, grids with holes,
//! several components, slivers, shuffled orders and scales from `1e-30`
//! to `1e30`. Every mesh built here passes
//! `cavity_tet_collapse::checks::check_valid(mesh, 0.0)`, names every
//! position, and has a closed, manifold and oriented boundary per
//! component. Each test file uses a part of it.
#![allow(dead_code)]

use cavity_tet_collapse::TetMesh;
use cavity_tet_collapse::kernels::geometry::is_valid_tet;
use proptest::prelude::*;
use proptest::test_runner::{RngAlgorithm, TestRng};

/// The generator's random numbers for `seed`.
pub fn rng(seed: u64) -> TestRng {
    let bytes: Vec<u8> = (0..4).flat_map(|_| seed.to_le_bytes()).collect();
    TestRng::from_seed(RngAlgorithm::ChaCha, &bytes)
}

/// The cube at `c` of a grid of `n` cubes: `x + n_x (y + n_y z)`.
fn cube_index(n: [u32; 3], c: [u32; 3]) -> usize {
    (c[0] + n[0] * (c[1] + n[1] * c[2])) as usize
}

/// The grid vertex at `v`: `x + (n_x + 1)(y + (n_y + 1) z)`.
fn vertex_index(n: [u32; 3], v: [u32; 3]) -> u32 {
    v[0] + (n[0] + 1) * (v[1] + (n[1] + 1) * v[2])
}

/// Whether the cubes around grid vertex `v` are all kept (cubes outside
/// the grid count as removed): `v` is inside the kept cubes.
fn inside(n: [u32; 3], kept: &[bool], v: [u32; 3]) -> bool {
    around(n, kept, v) == 0xff
}

/// The eight cubes around grid vertex `v` as a mask, bit `dx + 2 dy + 4
/// dz` for the cube from `v - 1 + d` (outside the grid: not kept).
fn around(n: [u32; 3], kept: &[bool], v: [u32; 3]) -> u8 {
    let mut mask = 0u8;
    for bit in 0..8 {
        let d = [bit & 1, (bit >> 1) & 1, (bit >> 2) & 1];
        let c: [i64; 3] = std::array::from_fn(|k| i64::from(v[k]) - 1 + i64::from(d[k]));
        let within = (0..3).all(|k| c[k] >= 0 && c[k] < i64::from(n[k]));
        if within && kept[cube_index(n, c.map(|x| x as u32))] {
            mask |= 1 << bit;
        }
    }
    mask
}

/// Whether the cubes of `mask` (of a 2 × 2 × 2 block, see [`around`])
/// are connected through shared faces (bits differing in one place).
fn face_connected(mask: u8) -> bool {
    if mask == 0 {
        return true;
    }
    let mut reached = 1u8 << mask.trailing_zeros();
    loop {
        let mut next = reached;
        for bit in 0..8 {
            if reached & (1 << bit) != 0 {
                for k in 0..3 {
                    next |= (1 << (bit ^ (1 << k))) & mask;
                }
            }
        }
        if next == reached {
            return reached == mask;
        }
        reached = next;
    }
}

/// Whether the boundary of the kept cubes is a manifold at grid vertex
/// `v`: around it the kept cubes are connected through faces and so are
/// the removed ones (otherwise two kept cubes touch along an edge or at
/// the vertex alone, or two removed ones do).
fn manifold_at(n: [u32; 3], kept: &[bool], v: [u32; 3]) -> bool {
    let mask = around(n, kept, v);
    face_connected(mask) && face_connected(!mask)
}

/// Cubes of a grid of `n` removed at random: each with probability
/// `share`, in random order, where the boundary stays a manifold at its
/// eight corners ([`manifold_at`]) and it is not the last cube. Per cube,
/// whether it is kept.
pub fn holes(n: [u32; 3], share: f64, rng: &mut TestRng) -> Vec<bool> {
    let count = (n[0] * n[1] * n[2]) as usize;
    let mut kept = vec![true; count];
    let mut left = count;
    for c in shuffled_indices(count, rng) {
        if left == 1 || !rng.random_bool(share) {
            continue;
        }
        let at = [
            c as u32 % n[0],
            c as u32 / n[0] % n[1],
            c as u32 / (n[0] * n[1]),
        ];
        kept[c] = false;
        let corners_fine = (0..8).all(|bit| {
            let v = [
                at[0] + (bit & 1),
                at[1] + ((bit >> 1) & 1),
                at[2] + ((bit >> 2) & 1),
            ];
            manifold_at(n, &kept, v)
        });
        if corners_fine {
            left -= 1;
        } else {
            kept[c] = true;
        }
    }
    kept
}

/// `0..count` in random order (Fisher-Yates).
fn shuffled_indices(count: usize, rng: &mut TestRng) -> Vec<usize> {
    let mut order: Vec<usize> = (0..count).collect();
    for i in (1..count).rev() {
        order.swap(i, rng.random_range(0..=i));
    }
    order
}

/// A grid of `nx × ny × nz` unit cubes from the origin, each split into
/// six positively oriented tetrahedra along its diagonal from its least
/// to its greatest corner (the Kuhn or Freudenthal split, conforming
/// across cubes), the vertices inside the box moved by up to `jitter`
/// (a share of the unit spacing) along each axis at random by `seed`,
/// each move cut short where it would make a tetrahedron nearly flat
/// ([`jitter_inside`]): every tetrahedron stays valid at any jitter.
pub fn grid(nx: u32, ny: u32, nz: u32, jitter: f32, seed: u64) -> TetMesh {
    grid_keeping([nx, ny, nz], jitter, seed, |_| true)
}

/// [`grid`] of `n` cubes with only the cubes at `[x, y, z]` where `keep`
/// says so; unreferenced vertices are dropped (vertices keep the order of
/// their grid index `x + (n_x + 1)(y + (n_y + 1) z)`, tetrahedra the
/// order of their cube, six per cube).
pub fn grid_keeping(
    n: [u32; 3],
    jitter: f32,
    seed: u64,
    keep: impl Fn([u32; 3]) -> bool,
) -> TetMesh {
    let mut kept = Vec::new();
    for z in 0..n[2] {
        for y in 0..n[1] {
            for x in 0..n[0] {
                kept.push(keep([x, y, z]));
            }
        }
    }
    cubes(n, &kept, jitter, 0, &mut rng(seed))
}

/// The mesh of the kept cubes of a grid of `n` ([`grid_keeping`]), the
/// vertices inside the box jittered, then `slivers` vertices inside the
/// kept cubes each moved close to the plane of the opposite face of one
/// of its tetrahedra ([`sliver`]).
fn cubes(n: [u32; 3], kept: &[bool], jitter: f32, slivers: u32, rng: &mut TestRng) -> TetMesh {
    let mut positions = Vec::new();
    for z in 0..=n[2] {
        for y in 0..=n[1] {
            for x in 0..=n[0] {
                positions.push([x as f32, y as f32, z as f32]);
            }
        }
    }
    let mut tets = Vec::new();
    for z in 0..n[2] {
        for y in 0..n[1] {
            for x in 0..n[0] {
                if !kept[cube_index(n, [x, y, z])] {
                    continue;
                }
                let at = |d: [u32; 3]| vertex_index(n, [x + d[0], y + d[1], z + d[2]]);
                // The path from the least corner along axes a, b, c: its
                // determinant is the sign of the permutation (a b c).
                for [a, b, c] in [
                    [0, 1, 2],
                    [1, 2, 0],
                    [2, 0, 1],
                    [0, 2, 1],
                    [2, 1, 0],
                    [1, 0, 2],
                ] {
                    let mut first = [0; 3];
                    first[a] = 1;
                    let mut second = first;
                    second[b] = 1;
                    let mut third = second;
                    third[c] = 1;
                    let t = [at([0; 3]), at(first), at(second), at(third)];
                    let even = (a + 1) % 3 == b;
                    tets.push(if even { t } else { [t[0], t[2], t[1], t[3]] });
                }
            }
        }
    }
    let mut mesh = TetMesh { positions, tets };
    if jitter > 0.0 {
        jitter_inside(&mut mesh, n, jitter, rng);
    }
    let candidates: Vec<u32> = (0..=n[2])
        .flat_map(|z| (0..=n[1]).flat_map(move |y| (0..=n[0]).map(move |x| [x, y, z])))
        .filter(|&v| inside(n, kept, v))
        .map(|v| vertex_index(n, v))
        .collect();
    if !candidates.is_empty() {
        for _ in 0..slivers {
            let v = candidates[rng.random_range(0..candidates.len())];
            sliver(&mut mesh, v, rng);
        }
    }
    compact(mesh)
}

/// Each vertex strictly inside the box of `n` cubes, in index order,
/// moved by up to `jitter` along each axis at random; where that would
/// make one of its tetrahedra's volume less than `1e-4` times its longest
/// edge cubed (the split cube's tetrahedra have 0.032), the move is
/// halved, up to four times, and else left out. Up to a jitter of 0.2 no
/// move was cut in a thousand grids of 4 × 4 × 4 cubes; from 0.25 on a
/// few are, and from 0.3 on some tetrahedra would invert without it.
fn jitter_inside(mesh: &mut TetMesh, n: [u32; 3], jitter: f32, rng: &mut TestRng) {
    let mut star = vec![Vec::new(); mesh.positions.len()];
    for (i, t) in mesh.tets.iter().enumerate() {
        for &v in t {
            star[v as usize].push(i);
        }
    }
    for z in 1..n[2] {
        for y in 1..n[1] {
            for x in 1..n[0] {
                let v = vertex_index(n, [x, y, z]) as usize;
                let offset: [f32; 3] = std::array::from_fn(|_| rng.random_range(-jitter..=jitter));
                let from = mesh.positions[v];
                let mut share = 1.0;
                for _ in 0..5 {
                    mesh.positions[v] = std::array::from_fn(|k| from[k] + share * offset[k]);
                    let fine = star[v]
                        .iter()
                        .all(|&t| is_valid_tet(corners(&mesh.positions, mesh.tets[t]), 1e-4));
                    if fine {
                        break;
                    }
                    mesh.positions[v] = from;
                    share /= 2.0;
                }
            }
        }
    }
}

/// The corners of `t` at `positions`, in `f64`.
fn corners(positions: &[[f32; 3]], t: [u32; 4]) -> [[f64; 3]; 4] {
    t.map(|v| positions[v as usize].map(f64::from))
}

/// Moves vertex `v` of `mesh` towards a random point of the face
/// opposite it in one of its tetrahedra, to between 0.1 % and 3 % of its
/// distance from there: that tetrahedron becomes flat (its volume a
/// thousandth to a thirtieth of before). Where that would make one of
/// its tetrahedra's volume less than `1e-5` times its longest edge cubed
/// (valid with a margin for the rounding of later scaling), the move is
/// halved, up to eight times, and else left out.
fn sliver(mesh: &mut TetMesh, v: u32, rng: &mut TestRng) {
    let star: Vec<[u32; 4]> = mesh
        .tets
        .iter()
        .filter(|t| t.contains(&v))
        .copied()
        .collect();
    let t = star[rng.random_range(0..star.len())];
    let face: Vec<[f64; 3]> = t
        .iter()
        .filter(|&&w| w != v)
        .map(|&w| mesh.positions[w as usize].map(f64::from))
        .collect();
    let mut weights: [f64; 3] = std::array::from_fn(|_| rng.random_range(0.05..1.0));
    let total: f64 = weights.iter().sum();
    weights = weights.map(|w| w / total);
    let target: [f64; 3] = std::array::from_fn(|k| (0..3).map(|i| weights[i] * face[i][k]).sum());
    let from = mesh.positions[v as usize];
    let mut step = 1.0 - rng.random_range(1e-3..3e-2);
    for _ in 0..8 {
        let to: [f32; 3] = std::array::from_fn(|k| {
            let p = f64::from(from[k]);
            (p + step * (target[k] - p)) as f32
        });
        mesh.positions[v as usize] = to;
        if star
            .iter()
            .all(|&s| is_valid_tet(corners(&mesh.positions, s), 1e-5))
        {
            return;
        }
        step /= 2.0;
    }
    mesh.positions[v as usize] = from;
}

/// `mesh` without the positions no tetrahedron names, the others in
/// their order.
fn compact(mesh: TetMesh) -> TetMesh {
    let mut new = vec![u32::MAX; mesh.positions.len()];
    for &v in mesh.tets.iter().flatten() {
        new[v as usize] = 0;
    }
    let mut positions = Vec::new();
    for (v, p) in mesh.positions.iter().enumerate() {
        if new[v] == 0 {
            new[v] = positions.len() as u32;
            positions.push(*p);
        }
    }
    let tets = mesh
        .tets
        .iter()
        .map(|t| t.map(|v| new[v as usize]))
        .collect();
    TetMesh { positions, tets }
}

/// `a` and `b` as one mesh, `b` moved by `offset`.
pub fn together(a: &TetMesh, b: &TetMesh, offset: [f32; 3]) -> TetMesh {
    let base = a.positions.len() as u32;
    let mut mesh = a.clone();
    mesh.positions.extend(
        b.positions
            .iter()
            .map(|p| std::array::from_fn(|k| p[k] + offset[k])),
    );
    mesh.tets.extend(b.tets.iter().map(|t| t.map(|v| v + base)));
    mesh
}

/// `mesh` with its vertices and tetrahedra in random order by `seed`, and
/// each tetrahedron's corners turned by a random even permutation (the
/// orientation kept).
pub fn shuffle(mesh: &TetMesh, seed: u64) -> TetMesh {
    const EVEN: [[usize; 4]; 12] = [
        [0, 1, 2, 3],
        [0, 2, 3, 1],
        [0, 3, 1, 2],
        [1, 0, 3, 2],
        [1, 2, 0, 3],
        [1, 3, 2, 0],
        [2, 0, 1, 3],
        [2, 1, 3, 0],
        [2, 3, 0, 1],
        [3, 0, 2, 1],
        [3, 1, 0, 2],
        [3, 2, 1, 0],
    ];
    let mut rng = rng(seed);
    let order = shuffled_indices(mesh.positions.len(), &mut rng);
    let mut new = vec![0u32; order.len()];
    for (i, &old) in order.iter().enumerate() {
        new[old] = i as u32;
    }
    let positions = order.iter().map(|&old| mesh.positions[old]).collect();
    let tets = shuffled_indices(mesh.tets.len(), &mut rng)
        .into_iter()
        .map(|i| {
            let t = mesh.tets[i].map(|v| new[v as usize]);
            EVEN[rng.random_range(0..EVEN.len())].map(|k| t[k])
        })
        .collect();
    TetMesh { positions, tets }
}

/// `mesh` with every position multiplied by `scale` (in `f32`).
pub fn scaled(mesh: &TetMesh, scale: f32) -> TetMesh {
    TetMesh {
        positions: mesh
            .positions
            .iter()
            .map(|p| p.map(|x| x * scale))
            .collect(),
        tets: mesh.tets.clone(),
    }
}

/// What [`any_tet_mesh`] draws.
#[derive(Clone, Debug)]
struct Recipe {
    /// Cubes per side of the first grid.
    n: [u32; 3],
    /// The jitter of the vertices inside the box, a share of the spacing.
    jitter: f32,
    /// The seed of the random choices.
    seed: u64,
    /// Whether cubes are removed (about a third, [`holes`]).
    holes: bool,
    /// The cubes per side of a second grid beside the first, if any.
    second: Option<[u32; 3]>,
    /// Vertices moved to make slivers, per grid.
    slivers: u32,
    /// Whether vertices, tetrahedra and corners are shuffled.
    shuffle: bool,
    /// The scale, `10^exponent`.
    exponent: i32,
}

/// The mesh of `recipe`.
fn build(recipe: &Recipe) -> TetMesh {
    let mut rng = rng(recipe.seed);
    let mut part = |n: [u32; 3]| {
        let count = (n[0] * n[1] * n[2]) as usize;
        let kept = if recipe.holes {
            holes(n, 0.35, &mut rng)
        } else {
            vec![true; count]
        };
        cubes(n, &kept, recipe.jitter, recipe.slivers, &mut rng)
    };
    let mut mesh = part(recipe.n);
    if let Some(m) = recipe.second {
        let other = part(m);
        mesh = together(&mesh, &other, [recipe.n[0] as f32 + 2.0, 0.5, 0.0]);
    }
    if recipe.shuffle {
        mesh = shuffle(&mesh, recipe.seed ^ 0x5eed);
    }
    scaled(&mesh, 10f64.powi(recipe.exponent) as f32)
}

/// Tetrahedral meshes drawn from: grids of 1 to 5 cubes per side with the
/// vertices inside jittered by up to 0.35 of the spacing, with or without
/// holes (removed cubes, [`holes`]), with or without a second grid beside
/// the first (two components), with up to three sliver vertices per grid,
/// shuffled or not, scaled by `10^k` for `k` in `-30..=30`. Every one is
/// valid (`check_valid(mesh, 0.0)`) with a closed, manifold and oriented
/// boundary per component.
pub fn any_tet_mesh() -> impl Strategy<Value = TetMesh> {
    (
        proptest::array::uniform3(1u32..=5),
        0.0f32..0.35,
        any::<u64>(),
        any::<bool>(),
        proptest::option::of(proptest::array::uniform3(1u32..=3)),
        0u32..=3,
        any::<bool>(),
        -30i32..=30,
    )
        .prop_map(
            |(n, jitter, seed, holes, second, slivers, shuffle, exponent)| {
                build(&Recipe {
                    n,
                    jitter,
                    seed,
                    holes,
                    second,
                    slivers,
                    shuffle,
                    exponent,
                })
            },
        )
}

/// A ball: an octahedron subdivided `levels` times and pushed onto the
/// unit sphere, each triangle joined to the centre (vertex 0), so that
/// the centre has `8 × 4^levels` tetrahedra (past the local array of the
/// edge build, which then reads the mesh).
pub fn ball(levels: u32) -> TetMesh {
    let mut positions = vec![[0.0f32; 3]];
    let mut triangles: Vec<[u32; 3]> = Vec::new();
    let corners = [
        [1.0, 0.0, 0.0],
        [-1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, -1.0, 0.0],
        [0.0, 0.0, 1.0],
        [0.0, 0.0, -1.0],
    ];
    positions.extend(corners);
    for (x, y) in [(1, 3), (3, 2), (2, 4), (4, 1)] {
        triangles.push([x, y, 5]);
        triangles.push([y, x, 6]);
    }
    let mut middle = std::collections::HashMap::new();
    for _ in 0..levels {
        let mut next = Vec::new();
        for t in &triangles {
            let m: Vec<u32> = (0..3)
                .map(|i| {
                    let (a, b) = (t[i], t[(i + 1) % 3]);
                    *middle.entry((a.min(b), a.max(b))).or_insert_with(|| {
                        let (p, q) = (positions[a as usize], positions[b as usize]);
                        let mid: Vec<f32> = (0..3).map(|k| 0.5 * (p[k] + q[k])).collect();
                        let l = mid.iter().map(|c| c * c).sum::<f32>().sqrt();
                        positions.push([mid[0] / l, mid[1] / l, mid[2] / l]);
                        positions.len() as u32 - 1
                    })
                })
                .collect();
            next.extend([
                [t[0], m[0], m[2]],
                [m[0], t[1], m[1]],
                [m[2], m[1], t[2]],
                [m[0], m[1], m[2]],
            ]);
        }
        triangles = next;
    }
    let mut mesh = TetMesh {
        positions,
        tets: Vec::new(),
    };
    mesh.tets = triangles
        .iter()
        .map(|&[a, b, c]| {
            let t = [0, a, b, c];
            if cavity_tet_collapse::mesh::signed_volume(&mesh.positions, t) < 0.0 {
                [0, a, c, b]
            } else {
                t
            }
        })
        .collect();
    mesh
}

/// The timing tests' mesh: a perturbed grid of `CAVITY_TET_GRID`³ cubes
/// (40 by default, six tetrahedra each; jitter 0.2, seed 1).
pub fn timing_grid() -> TetMesh {
    let n: u32 = std::env::var("CAVITY_TET_GRID")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    grid(n, n, n, 0.2, 1)
}

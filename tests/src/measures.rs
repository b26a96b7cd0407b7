//! Measures of meshes that the tests of the cavity operations assert on:
//! Euler characteristic, edge lengths and their spread, faces up in the
//! plane, sorted faces, and the edges an edge flip could still take.

use cavity::TriMesh;
use cavity_device::geometry::smallest_angle_sin;
use cavity_reference::ReferenceMesh;

/// Euler characteristic of `m`, by the reference mesh.
pub fn euler(m: &TriMesh) -> i64 {
    ReferenceMesh::new(m).expect("valid").euler_characteristic()
}

/// Longest edge of `m` among those whose face count passes `faces`.
pub fn longest_where(m: &TriMesh, faces: impl Fn(usize) -> bool) -> f32 {
    let r = ReferenceMesh::new(m).expect("valid");
    (0..r.num_edges() as u32)
        .filter(|&e| faces(r.ef(e).len()))
        .map(|e| edge_length(m, r.edge_vertices(e)))
        .fold(0.0, f32::max)
}

/// Length of the edge from `a` to `b`.
pub fn edge_length(m: &TriMesh, [a, b]: [u32; 2]) -> f32 {
    let (p, q) = (m.positions[a as usize], m.positions[b as usize]);
    ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt()
}

/// Longest edge.
pub fn longest(m: &TriMesh) -> f32 {
    longest_where(m, |_| true)
}

/// Normal of the face `[a, b, c]` of `m`, twice its area long.
pub fn tri_normal(m: &TriMesh, [a, b, c]: [u32; 3]) -> glam::Vec3 {
    let p = |v: u32| glam::Vec3::from(m.positions[v as usize]);
    (p(b) - p(a)).cross(p(c) - p(a))
}

/// Whether every face of a mesh in the plane z = 0 faces up.
pub fn faces_up(m: &TriMesh) -> bool {
    m.faces.iter().all(|&f| tri_normal(m, f).z > 0.0)
}

/// An interior edge `ab` whose flip to `cd` passes `accept([a, b, c, d])`,
/// folds nothing over and makes no sliver: no new face's smallest angle
/// has a sine under `sliver_sin` and under the old faces' (the oracle of
/// the flips that find no such edge left; they bound it by
/// `cavity_remesh_kernels::SLIVER_SIN`, which the shared library cannot
/// name: it depends on no application).
pub fn acceptable_flip(
    m: &TriMesh,
    sliver_sin: f32,
    accept: impl Fn(&ReferenceMesh, [u32; 4]) -> bool,
) -> Option<[u32; 2]> {
    let r = ReferenceMesh::new(m).expect("valid");
    (0..r.num_edges() as u32).find_map(|e| {
        let faces = r.ef(e);
        if faces.len() != 2 {
            return None;
        }
        let [a, b] = r.edge_vertices(e);
        let opposite = |f: u32| r.fv(f).into_iter().find(|&v| v != a && v != b);
        let (c, d) = (opposite(faces[0])?, opposite(faces[1])?);
        if c == d || r.edge_index(c, d).is_some() {
            return None;
        }
        let unfolded = tri_normal(m, [c, d, a]).dot(tri_normal(m, [d, c, b])) > 0.0;
        // No sliver: the new faces' smallest angle is at least the one of
        // sine `sliver_sin` (10° for remeshing's and tracking's flips) or
        // the old faces'.
        let sin = |t: [u32; 3]| {
            let [p, q, s] = t.map(|v| m.positions[v as usize]);
            smallest_angle_sin(p, q, s)
        };
        let old = sin([a, b, c]).min(sin([b, a, d]));
        let no_sliver = sin([c, d, a]).min(sin([d, c, b])) >= old.min(sliver_sin);
        (unfolded && no_sliver && accept(&r, [a, b, c, d])).then_some([a, b])
    })
}

/// Standard deviation of the edge lengths over their mean.
pub fn length_spread(m: &TriMesh) -> f32 {
    let r = ReferenceMesh::new(m).expect("valid");
    let l: Vec<f32> = (0..r.num_edges() as u32)
        .map(|e| edge_length(m, r.edge_vertices(e)))
        .collect();
    let mean = l.iter().sum::<f32>() / l.len() as f32;
    (l.iter().map(|x| (x - mean).powi(2)).sum::<f32>() / l.len() as f32).sqrt() / mean
}

/// The faces of `m`, sorted (the dynamic mesh lists them by patch).
pub fn sorted_faces(m: &TriMesh) -> Vec<[u32; 3]> {
    let mut f = m.faces.clone();
    f.sort();
    f
}

/// The diagonal of `mesh`'s bounding box (at least the smallest positive
/// `f64`, so that it can divide).
pub fn diagonal(mesh: &TriMesh) -> f64 {
    let (mut lo, mut hi) = (glam::DVec3::INFINITY, glam::DVec3::NEG_INFINITY);
    for p in &mesh.positions {
        let p = glam::DVec3::from(p.map(f64::from));
        (lo, hi) = (lo.min(p), hi.max(p));
    }
    (hi - lo).length().max(f64::MIN_POSITIVE)
}

//! Dirty meshes: a clean generated mesh with the defects of scans added
//! (duplicate faces, jagged holes, folded slivers, collapsed and unmerged
//! vertices), and what was added.

use cavity::TriMesh;
use cavity_reference::ReferenceMesh;
use proptest::prelude::*;
use std::collections::BTreeSet;

use crate::generators::any_mesh;

/// What [`dirty_mesh`] did to its clean mesh.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dirt {
    /// Faces added again (half of them the other way round).
    pub duplicate_faces: usize,
    /// Zero-area slivers folded into an edge (a vertex at the edge's
    /// midpoint, the sliver on the edge).
    pub slivers: usize,
    /// Vertices moved onto a neighbour (a zero-length edge, two zero-area
    /// faces).
    pub collapsed_edges: usize,
    /// Vertices given an unmerged copy at the same position (a seam, as an
    /// STL-style scan leaves) or an unused one.
    pub coincident: usize,
    /// Faces removed by walks over face neighbours (jagged holes).
    pub hole_faces: usize,
    /// The power of ten the coordinates were scaled by.
    pub scale_exponent: i32,
}

/// Scan-like dirty meshes: an [`any_mesh`] with jagged holes (walks of
/// removed faces), zero-area slivers and zero-length edges, coincident
/// vertices (unmerged seams and unused copies), duplicate faces (some the
/// other way round), scaled by a power of ten from 1e-30 to 1e30 and moved
/// off the origin by a few times its size. Returns the mesh and what was
/// done to it.
pub fn dirty_mesh() -> impl Strategy<Value = (TriMesh, Dirt)> {
    (
        any_mesh(),
        (0usize..3, 1usize..12),
        0usize..3,
        0usize..3,
        0usize..4,
        0usize..3,
        -30i32..=30,
        any::<u64>(),
    )
        .prop_map(
            |(mesh, (walks, steps), slivers, collapsed, coincident, duplicates, exp, seed)| {
                let mut rnd = xorshift(seed);
                let mut dirt = Dirt {
                    scale_exponent: exp,
                    ..Dirt::default()
                };
                let mut m = mesh;
                for _ in 0..walks {
                    dirt.hole_faces += jagged_hole(&mut m, steps, &mut rnd);
                }
                for _ in 0..slivers {
                    dirt.slivers += fold_sliver(&mut m, &mut rnd) as usize;
                }
                for _ in 0..collapsed {
                    dirt.collapsed_edges += collapse_onto_neighbour(&mut m, &mut rnd) as usize;
                }
                for i in 0..coincident {
                    dirt.coincident += unmerge(&mut m, i % 2 == 0, &mut rnd) as usize;
                }
                for i in 0..duplicates {
                    if m.faces.is_empty() {
                        break;
                    }
                    let [a, b, c] = m.faces[rnd() as usize % m.faces.len()];
                    m.faces.push(if i % 2 == 0 { [a, b, c] } else { [a, c, b] });
                    dirt.duplicate_faces += 1;
                }
                let s = 10f64.powi(exp);
                let shift = [3.0, -2.0, 5.0];
                for p in &mut m.positions {
                    for (c, o) in p.iter_mut().zip(shift) {
                        *c = ((*c as f64 + o) * s) as f32;
                    }
                }
                (m, dirt)
            },
        )
}

/// A xorshift generator seeded by `seed`.
fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed | 1;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

/// Removes up to `steps` faces along a random walk over edge-adjacent faces
/// (never the last face); returns how many.
fn jagged_hole(m: &mut TriMesh, steps: usize, rnd: &mut impl FnMut() -> u64) -> usize {
    if m.faces.len() < 2 {
        return 0;
    }
    let Ok(r) = ReferenceMesh::new(m) else {
        return 0;
    };
    let mut gone = BTreeSet::new();
    let mut f = (rnd() as usize % m.faces.len()) as u32;
    for _ in 0..steps.min(m.faces.len() - 1) {
        gone.insert(f);
        let next: Vec<u32> = r.ff(f).into_iter().filter(|g| !gone.contains(g)).collect();
        if next.is_empty() {
            break;
        }
        f = next[rnd() as usize % next.len()];
    }
    let mut i = 0;
    m.faces.retain(|_| {
        i += 1;
        !gone.contains(&(i - 1))
    });
    gone.len()
}

/// Splits a random face's first edge at its midpoint and folds a zero-area
/// sliver onto the edge: `[a, b, c]` becomes `[a, m, c]`, `[m, b, c]` and
/// the sliver `[a, b, m]` (orientation kept). Returns whether it did.
fn fold_sliver(m: &mut TriMesh, rnd: &mut impl FnMut() -> u64) -> bool {
    if m.faces.is_empty() {
        return false;
    }
    let f = rnd() as usize % m.faces.len();
    let [a, b, c] = m.faces[f];
    let [pa, pb] = [a, b].map(|v| m.positions[v as usize]);
    let v = m.positions.len() as u32;
    m.positions.push([0, 1, 2].map(|k| 0.5 * (pa[k] + pb[k])));
    m.faces[f] = [a, v, c];
    m.faces.push([v, b, c]);
    m.faces.push([a, b, v]);
    true
}

/// Moves a random face's first vertex onto its second (a zero-length edge,
/// zero-area faces around it). Returns whether it did.
fn collapse_onto_neighbour(m: &mut TriMesh, rnd: &mut impl FnMut() -> u64) -> bool {
    if m.faces.is_empty() {
        return false;
    }
    let [a, b, _] = m.faces[rnd() as usize % m.faces.len()];
    m.positions[a as usize] = m.positions[b as usize];
    true
}

/// Gives a random face's first vertex a coincident copy: used by that face
/// alone (`seam`: the face comes loose along the vertex, as an unmerged
/// STL-style scan does) or by nothing. Returns whether it did.
fn unmerge(m: &mut TriMesh, seam: bool, rnd: &mut impl FnMut() -> u64) -> bool {
    if m.faces.is_empty() {
        return false;
    }
    let f = rnd() as usize % m.faces.len();
    let v = m.faces[f][0];
    let copy = m.positions.len() as u32;
    m.positions.push(m.positions[v as usize]);
    if seam {
        m.faces[f][0] = copy;
    }
    true
}

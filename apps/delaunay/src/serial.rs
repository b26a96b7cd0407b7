//! A serial Delaunay flipper over indexed faces (Lawson's algorithm with a
//! stack of edges to test), the benchmark's single-core CPU comparison:
//! what a plain serial program does for the same criterion
//! ([`crate::cotangent`] test and [`crate::TOLERANCE`]).

use std::collections::{HashMap, HashSet};

use cavity::TriMesh;

use crate::{TOLERANCE, cotangent};

const NONE: u32 = u32::MAX;

/// Flips every non-Delaunay interior edge of a consistently oriented mesh
/// in place until none is left; returns the number of flips and the
/// seconds spent flipping (after the adjacency is built, as the GPU time
/// excludes patching). Edges with more than two faces, or whose two faces
/// traverse them the same way, are left alone, as is a flip that would
/// duplicate an edge.
pub fn flip_serial(mesh: &mut TriMesh) -> (u64, f64) {
    let nf = mesh.faces.len();
    let mut fv: Vec<u32> = mesh.faces.iter().flatten().copied().collect();
    let mut twin = vec![NONE; 3 * nf];
    let mut by_ends: HashMap<(u32, u32), u32> = HashMap::with_capacity(3 * nf);
    let mut uses: HashMap<(u32, u32), u32> = HashMap::with_capacity(3 * nf);
    let key = |a: u32, b: u32| (a.min(b), a.max(b));
    for h in 0..3 * nf as u32 {
        let (a, b) = (fv[h as usize], fv[next(h) as usize]);
        by_ends.insert((a, b), h);
        *uses.entry(key(a, b)).or_insert(0) += 1;
    }
    for h in 0..3 * nf as u32 {
        let (a, b) = (fv[h as usize], fv[next(h) as usize]);
        if uses[&key(a, b)] == 2
            && let Some(&t) = by_ends.get(&(b, a))
        {
            twin[h as usize] = t;
        }
    }
    let mut edges: HashSet<(u32, u32)> = uses.keys().copied().collect();
    drop(by_ends);
    drop(uses);
    let mut stack: Vec<u32> = (0..3 * nf as u32)
        .filter(|&h| twin[h as usize] != NONE && h < twin[h as usize])
        .collect();
    let pos = |v: u32| mesh.positions[v as usize];
    let start = std::time::Instant::now();
    let mut flips = 0;
    while let Some(h) = stack.pop() {
        let t = twin[h as usize];
        if t == NONE {
            continue;
        }
        let (hn, hp, tn, tp) = (next(h), prev(h), next(t), prev(t));
        let (a, b) = (fv[h as usize], fv[hn as usize]);
        let (c, d) = (fv[hp as usize], fv[tp as usize]);
        if c == d || edges.contains(&key(c, d)) {
            continue;
        }
        let (Some(x), Some(y)) = (
            cotangent(pos(c), pos(a), pos(b)),
            cotangent(pos(d), pos(a), pos(b)),
        ) else {
            continue;
        };
        if x + y >= -TOLERANCE {
            continue;
        }
        // Faces (a, b, c) and (b, a, d) become (a, d, c) and (b, c, d).
        let (f, g) = (h / 3 * 3, t / 3 * 3);
        let outer = [
            twin[tn as usize],
            twin[hp as usize],
            twin[hn as usize],
            twin[tp as usize],
        ];
        fv[f as usize..f as usize + 3].copy_from_slice(&[a, d, c]);
        fv[g as usize..g as usize + 3].copy_from_slice(&[b, c, d]);
        let new_twins = [
            (f, outer[0]),
            (f + 1, g + 1),
            (f + 2, outer[1]),
            (g, outer[2]),
            (g + 1, f + 1),
            (g + 2, outer[3]),
        ];
        for (x, y) in new_twins {
            twin[x as usize] = y;
            if y != NONE && y != f + 1 && y != g + 1 {
                twin[y as usize] = x;
            }
        }
        edges.remove(&key(a, b));
        edges.insert(key(c, d));
        flips += 1;
        for x in [f, f + 2, g, g + 2] {
            if twin[x as usize] != NONE {
                stack.push(x);
            }
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    for (i, face) in mesh.faces.iter_mut().enumerate() {
        face.copy_from_slice(&fv[3 * i..3 * i + 3]);
    }
    (flips, seconds)
}

fn next(h: u32) -> u32 {
    if h % 3 == 2 { h - 2 } else { h + 1 }
}

fn prev(h: u32) -> u32 {
    if h % 3 == 0 { h + 2 } else { h - 1 }
}

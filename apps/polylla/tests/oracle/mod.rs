//! An oracle of Polylla's regions, shared by the Polylla suites: the
//! label phase recomputed from the triangles' vertex coordinates alone
//! (no `Polylla::frontier`, no library code), and a check that the
//! polygons returned are exactly the terminal-edge regions after the
//! barrier repair; plus non-Delaunay inputs (random edge flips) and the
//! files the readers take.
//!
//! **The tie rule.** Edges are ranked by squared length, ties by the
//! edge's smallest *slot*: triangle `f`, turned counter-clockwise (its
//! second and third corners swapped when listed clockwise), has slots
//! `3f + i` from corner `i` to corner `i + 1`; an inner edge has two slots
//! and is named by the smaller. It is the rule the library documents (its
//! half-edges are numbered as these slots), so that every edge has one
//! rank seen from either side and a region holds no inner vertex.
//!
//! **Vertices visited twice.** GPolylla (section 3.1) names *barrier
//! edges*, frontier edges with the same region on both sides, and section
//! 3.2 (the traversal and repair phases) calls "non-simple" exactly the
//! polygons with barrier edges: the repair (section 3.2, phase 3; section
//! 5.3, Algorithm 6, unchanged from the sequential Polylla; section 6.4 on
//! the GPU) splits them at barrier tips and nowhere else. A region that
//! meets itself at a single vertex, with no barrier edge, is never split
//! by the paper, so its polygon passes that vertex twice (a weakly simple
//! polygon): the paper allows it. It forbids a polygon that walks an edge
//! twice. [`check`] accepts a vertex visited `k` times only where the
//! polygon's triangles around it form `k` separate fans (a true pinch of
//! the region), never as a walk along a barrier edge or a spur.

use std::collections::{BTreeMap, BTreeSet};

use cavity_polylla::Polylla;

/// The label phase of a triangulation, recomputed from its coordinates.
#[derive(Debug)]
pub struct Labels {
    /// The triangles, counter-clockwise.
    pub triangles: Vec<[u32; 3]>,
    /// The triangle left of each directed edge `(a, b)`, with its slot.
    pub left: BTreeMap<(u32, u32), (usize, usize)>,
    /// Each edge (its vertices ascending): its smallest slot and its
    /// squared length.
    pub edges: BTreeMap<(u32, u32), (usize, f64)>,
    /// The frontier edges: on the boundary, or the longest edge of
    /// neither of its two triangles.
    pub frontier: BTreeSet<(u32, u32)>,
    /// Each triangle's terminal-edge region (a union-find root).
    pub region: Vec<usize>,
    /// The barrier edges: inner frontier edges with one region on both
    /// sides.
    pub barriers: BTreeSet<(u32, u32)>,
    /// The barrier tips (vertices of exactly one frontier edge), each with
    /// its middle edge: the `degree / 2`-th edge clockwise around the tip
    /// from its frontier edge.
    pub tips: BTreeMap<u32, (u32, u32)>,
}

/// `(a, b)` with its vertices ascending.
pub fn undirected(a: u32, b: u32) -> (u32, u32) {
    (a.min(b), a.max(b))
}

/// Twice the signed area of `(a, b, c)`.
fn orient(a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> f64 {
    (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
}

/// The root of `x` in union-find `parent`, paths halved.
fn root(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

impl Labels {
    /// The labels of `triangles` over `positions`.
    pub fn new(positions: &[[f64; 2]], triangles: &[[u32; 3]]) -> Labels {
        let p = |v: u32| positions[v as usize];
        let triangles: Vec<[u32; 3]> = triangles
            .iter()
            .map(|&[a, b, c]| {
                if orient(p(a), p(b), p(c)) > 0.0 {
                    [a, b, c]
                } else {
                    [a, c, b]
                }
            })
            .collect();
        let mut left = BTreeMap::new();
        let mut edges: BTreeMap<(u32, u32), (usize, f64)> = BTreeMap::new();
        for (f, t) in triangles.iter().enumerate() {
            for i in 0..3 {
                let (a, b) = (t[i], t[(i + 1) % 3]);
                left.insert((a, b), (f, 3 * f + i));
                let d = [p(b)[0] - p(a)[0], p(b)[1] - p(a)[1]];
                let e = edges
                    .entry(undirected(a, b))
                    .or_insert((3 * f + i, d[0] * d[0] + d[1] * d[1]));
                e.0 = e.0.min(3 * f + i);
            }
        }
        let rank = |e: (u32, u32)| {
            let (slot, len) = edges[&e];
            (len, slot)
        };
        let longest: Vec<(u32, u32)> = triangles
            .iter()
            .map(|t| {
                (0..3)
                    .map(|i| undirected(t[i], t[(i + 1) % 3]))
                    .max_by(|&x, &y| {
                        let (a, b) = (rank(x), rank(y));
                        a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))
                    })
                    .expect("three edges")
            })
            .collect();
        let longest_of: BTreeSet<(u32, u32)> = longest.iter().copied().collect();
        let inner = |(a, b): (u32, u32)| left.contains_key(&(a, b)) && left.contains_key(&(b, a));
        let frontier: BTreeSet<(u32, u32)> = edges
            .keys()
            .copied()
            .filter(|&e| !inner(e) || !longest_of.contains(&e))
            .collect();
        let mut parent: Vec<usize> = (0..triangles.len()).collect();
        for &(a, b) in edges.keys() {
            if inner((a, b)) && !frontier.contains(&(a, b)) {
                let (x, y) = (
                    root(&mut parent, left[&(a, b)].0),
                    root(&mut parent, left[&(b, a)].0),
                );
                parent[x] = y;
            }
        }
        let region: Vec<usize> = (0..triangles.len()).map(|f| root(&mut parent, f)).collect();
        let barriers = frontier
            .iter()
            .copied()
            .filter(|&(a, b)| inner((a, b)) && region[left[&(a, b)].0] == region[left[&(b, a)].0])
            .collect();
        let mut count = vec![0usize; positions.len()];
        for &(a, b) in &frontier {
            count[a as usize] += 1;
            count[b as usize] += 1;
        }
        let mut tips = BTreeMap::new();
        for (&(a, b), _) in edges.iter().filter(|(e, _)| frontier.contains(e)) {
            for (v, w) in [(a, b), (b, a)] {
                if count[v as usize] == 1 {
                    // Clockwise around `v`: from edge (v, w) the next is
                    // the edge (v, x) of the triangle (w, v, x) right of
                    // it.
                    let ring = {
                        let mut ring = vec![w];
                        let mut x = w;
                        loop {
                            let (f, _) = left[&(x, v)];
                            let t = triangles[f];
                            let i = t.iter().position(|&u| u == v).expect("v is a corner");
                            x = t[(i + 1) % 3];
                            if x == w {
                                break;
                            }
                            ring.push(x);
                        }
                        ring
                    };
                    let m = ring[ring.len() / 2];
                    tips.insert(v, undirected(v, m));
                }
            }
        }
        Labels {
            triangles,
            left,
            edges,
            frontier,
            region,
            barriers,
            tips,
        }
    }

    /// Whether edge `(a, b)` has a triangle on both sides.
    pub fn inner(&self, (a, b): (u32, u32)) -> bool {
        self.left.contains_key(&(a, b)) && self.left.contains_key(&(b, a))
    }

    /// The terminal-edge regions.
    pub fn regions(&self) -> usize {
        self.region.iter().collect::<BTreeSet<_>>().len()
    }

    /// The edges that may split an edge a polygon would walk twice after
    /// the tips' repair (a barrier edge, or a tip's middle edge that did
    /// not split its polygon): the two other edges of the triangle left of
    /// that edge's smaller slot.
    pub fn chords(&self) -> BTreeSet<(u32, u32)> {
        let mut out = BTreeSet::new();
        for &(a, b) in self.barriers.iter().chain(self.tips.values()) {
            let (f, _) = if self.left[&(a, b)].1 < self.left[&(b, a)].1 {
                self.left[&(a, b)]
            } else {
                self.left[&(b, a)]
            };
            let t = self.triangles[f];
            for i in 0..3 {
                let e = undirected(t[i], t[(i + 1) % 3]);
                if e != (a, b) {
                    out.insert(e);
                }
            }
        }
        out
    }
}

/// What [`check`] found of a valid Polylla mesh.
#[derive(Debug, Default)]
pub struct Found {
    /// Terminal-edge regions.
    pub regions: usize,
    /// Polygons.
    pub polygons: usize,
    /// Barrier edges.
    pub barriers: usize,
    /// Barrier tips.
    pub tips: usize,
    /// Edges walked that are not frontier edges nor tips' middle edges:
    /// the splits of the barrier edges the tips left (bridges).
    pub chords: usize,
    /// Repeated visits of vertices by polygons (each visit after a
    /// polygon's first of a vertex, where its region meets itself).
    pub pinches: usize,
}

/// The half-edges of the polygon through `seed` along `next`, or an error
/// when the walk leaves the half-edges or does not come back to `seed`
/// within them.
fn cycle(next: &[u32], seed: u32) -> Result<Vec<u32>, String> {
    let mut out = vec![seed];
    let mut h = *next
        .get(seed as usize)
        .ok_or(format!("polygon {seed} names no half-edge"))?;
    while h != seed {
        if h as usize >= next.len() || out.len() == next.len() {
            return Err(format!("the polygon of {seed} does not close"));
        }
        out.push(h);
        h = next[h as usize];
    }
    Ok(out)
}

/// Checks that `poly`, computed from `triangles` over `positions` (its
/// half-edges leaving vertices `origin`), holds exactly the terminal-edge
/// regions after the repair, with [`Labels`] of the coordinates alone:
///
/// - every polygon is a closed walk of directed edges of the triangles
///   (each with a triangle on its left), no half-edge, directed edge or
///   undirected edge twice, and no directed edge in two polygons;
/// - both sides of every inner edge are walked or neither, every boundary
///   edge from inside; every frontier edge is walked, every barrier tip's
///   middle edge too, and every other edge walked is a chord of a barrier
///   edge or middle edge ([`Labels::chords`]), no more of them than
///   barrier edges and tips: the
///   polygons are split only where the repair splits them;
/// - cutting the triangles along the walked edges leaves pieces, each
///   bounded by exactly one polygon and each polygon bounding one (each a
///   connected set of triangles), each inside one region; a region with no
///   barrier edge is exactly one polygon;
/// - a polygon visits a vertex `k > 1` times only where its triangles
///   around the vertex form `k` separate fans (see the module's notes).
pub fn check(
    positions: &[[f64; 2]],
    triangles: &[[u32; 3]],
    origin: &[u32],
    poly: &Polylla,
) -> Result<Found, String> {
    let labels = Labels::new(positions, triangles);
    let mut found = Found {
        regions: labels.regions(),
        barriers: labels.barriers.len(),
        tips: labels.tips.len(),
        ..Found::default()
    };
    // Each polygon's directed edges; the polygon walking each.
    let mut walks: Vec<Vec<(u32, u32)>> = Vec::new();
    let mut by: BTreeMap<(u32, u32), usize> = BTreeMap::new();
    for &seed in &poly.polygons {
        let half = cycle(&poly.next, seed)?;
        let lib = poly
            .try_polygon_edges(seed)
            .map_err(|e| format!("polygon {seed}: {e}"))?;
        if lib != half {
            return Err(format!("polygon {seed}: try_polygon_edges differs"));
        }
        let distinct: BTreeSet<u32> = half.iter().copied().collect();
        if distinct.len() != half.len() {
            return Err(format!("polygon {seed} walks a half-edge twice"));
        }
        let walk: Vec<(u32, u32)> = (0..half.len())
            .map(|i| {
                (
                    origin[half[i] as usize],
                    origin[half[(i + 1) % half.len()] as usize],
                )
            })
            .collect();
        let mut seen = BTreeSet::new();
        for &(a, b) in &walk {
            if !labels.left.contains_key(&(a, b)) {
                return Err(format!(
                    "polygon {seed} walks ({a}, {b}), no triangle's edge that way"
                ));
            }
            if !seen.insert(undirected(a, b)) {
                return Err(format!(
                    "polygon {seed} ({} edges) walks edge ({a}, {b}) twice",
                    walk.len()
                ));
            }
            if let Some(other) = by.insert((a, b), walks.len()) {
                return Err(format!(
                    "directed edge ({a}, {b}) in polygons {} and {seed}",
                    poly.polygons[other]
                ));
            }
        }
        walks.push(walk);
    }
    found.polygons = walks.len();
    let walked: BTreeSet<(u32, u32)> = by.keys().map(|&(a, b)| undirected(a, b)).collect();
    for &(a, b) in labels.edges.keys() {
        let sides = [(a, b), (b, a)].map(|d| labels.left.contains_key(&d) && by.contains_key(&d));
        if labels.inner((a, b)) && sides[0] != sides[1] {
            return Err(format!("edge ({a}, {b}) is walked on one side only"));
        }
        if !labels.inner((a, b)) && !sides.contains(&true) {
            return Err(format!("boundary edge ({a}, {b}) is walked by no polygon"));
        }
        if labels.frontier.contains(&(a, b)) && !walked.contains(&(a, b)) {
            return Err(format!("frontier edge ({a}, {b}) is in no polygon"));
        }
    }
    let middles: BTreeSet<(u32, u32)> = labels.tips.values().copied().collect();
    if let Some(e) = middles.iter().find(|e| !walked.contains(e)) {
        return Err(format!("the middle edge {e:?} of a barrier tip is not cut"));
    }
    let chords = labels.chords();
    for e in walked.difference(&labels.frontier) {
        if middles.contains(e) {
            continue;
        }
        if !chords.contains(e) {
            return Err(format!(
                "edge {e:?} is cut, but it is no frontier edge, tip's middle edge or barrier edge's chord"
            ));
        }
        found.chords += 1;
    }
    if found.chords > labels.barriers.len() + labels.tips.len() {
        return Err(format!(
            "{} chords cut for {} barrier edges and {} tips",
            found.chords,
            labels.barriers.len(),
            labels.tips.len()
        ));
    }
    // The pieces of triangles the walked edges leave.
    let mut parent: Vec<usize> = (0..labels.triangles.len()).collect();
    for &(a, b) in labels.edges.keys() {
        if labels.inner((a, b)) && !walked.contains(&(a, b)) {
            let (x, y) = (
                root(&mut parent, labels.left[&(a, b)].0),
                root(&mut parent, labels.left[&(b, a)].0),
            );
            parent[x] = y;
        }
    }
    let piece: Vec<usize> = (0..labels.triangles.len())
        .map(|f| root(&mut parent, f))
        .collect();
    // Visits of each vertex against the fans of the polygon's triangles
    // around it: a fan starts at a triangle `(v, a, b)` whose neighbour
    // across `(v, a)` (clockwise around `v`) is outside the polygon.
    for (p, walk) in walks.iter().enumerate() {
        let c = piece[labels.left[&walk[0]].0];
        let mut visits: BTreeMap<u32, usize> = BTreeMap::new();
        for &(a, _) in walk {
            *visits.entry(a).or_default() += 1;
        }
        for (&v, &k) in &visits {
            let fans = labels
                .triangles
                .iter()
                .enumerate()
                .filter(|&(f, t)| piece[f] == c && t.contains(&v))
                .filter(|&(_, t)| {
                    let i = t.iter().position(|&u| u == v).expect("a corner");
                    labels
                        .left
                        .get(&(t[(i + 1) % 3], v))
                        .is_none_or(|&(g, _)| piece[g] != c)
                })
                .count();
            if fans != k {
                return Err(format!(
                    "polygon {} visits vertex {v} {k} times, its triangles make {fans} fans there",
                    poly.polygons[p]
                ));
            }
            found.pinches += k - 1;
        }
    }
    let mut bounds: BTreeMap<usize, usize> = BTreeMap::new();
    for (p, walk) in walks.iter().enumerate() {
        let mine: BTreeSet<usize> = walk.iter().map(|d| piece[labels.left[d].0]).collect();
        if mine.len() != 1 {
            return Err(format!(
                "polygon {} bounds {} pieces of triangles",
                poly.polygons[p],
                mine.len()
            ));
        }
        let c = *mine.first().expect("one piece");
        if let Some(q) = bounds.insert(c, p) {
            return Err(format!(
                "polygons {} and {} bound one piece of triangles",
                poly.polygons[q], poly.polygons[p]
            ));
        }
    }
    let pieces: BTreeSet<usize> = piece.iter().copied().collect();
    if pieces.len() != walks.len() {
        return Err(format!(
            "{} pieces of triangles, {} polygons",
            pieces.len(),
            walks.len()
        ));
    }
    let mut region_of_piece: BTreeMap<usize, usize> = BTreeMap::new();
    let mut pieces_of_region: BTreeMap<usize, usize> = BTreeMap::new();
    for (f, &c) in piece.iter().enumerate() {
        let r = labels.region[f];
        match region_of_piece.insert(c, r) {
            Some(s) if s != r => {
                return Err(format!(
                    "polygon {} spans two regions",
                    poly.polygons[bounds[&c]]
                ));
            }
            Some(_) => {}
            None => *pieces_of_region.entry(r).or_default() += 1,
        }
    }
    let barred: BTreeSet<usize> = labels
        .barriers
        .iter()
        .map(|&(a, b)| labels.region[labels.left[&(a, b)].0])
        .collect();
    if let Some((r, n)) = pieces_of_region
        .iter()
        .find(|&(r, &n)| n != 1 && !barred.contains(r))
    {
        return Err(format!(
            "a region with no barrier edge (triangle {r}) is {n} polygons"
        ));
    }
    Ok(found)
}

/// `triangles` over integer-valued `positions` after up to `flips` random
/// edge flips (seeded): each picks an inner edge and flips it when both
/// new triangles are positively oriented (a strictly convex
/// quadrilateral), so the result is a valid, generally non-Delaunay
/// triangulation of the same points. Returns the triangles
/// counter-clockwise and the flips made.
pub fn flipped(
    positions: &[[f64; 2]],
    triangles: &[[u32; 3]],
    flips: usize,
    seed: u64,
) -> (Vec<[u32; 3]>, usize) {
    use rand::{RngExt, SeedableRng};
    let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(seed);
    let p = |v: u32| positions[v as usize];
    let mut tris = Labels::new(positions, triangles).triangles;
    let mut done = 0;
    for _ in 0..flips {
        let f = rng.random_range(0..tris.len());
        let i = rng.random_range(0..3usize);
        let t = tris[f];
        let (a, b, c) = (t[i], t[(i + 1) % 3], t[(i + 2) % 3]);
        let Some(g) = tris
            .iter()
            .position(|u| (0..3).any(|j| u[j] == b && u[(j + 1) % 3] == a))
        else {
            continue;
        };
        let u = tris[g];
        let j = u.iter().position(|&x| x == b).expect("shared");
        let d = u[(j + 2) % 3];
        if orient(p(a), p(d), p(c)) > 0.0 && orient(p(d), p(b), p(c)) > 0.0 {
            tris[f] = [a, d, c];
            tris[g] = [d, b, c];
            done += 1;
        }
    }
    (tris, done)
}

/// `n` random points of a 100 x 100 lattice (seeded): integer
/// coordinates, so that orientations are exact.
pub fn lattice_points(n: usize, seed: u64) -> Vec<[f64; 2]> {
    use rand::{RngExt, SeedableRng};
    let mut rng = rand_xorshift::XorShiftRng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let mut c = || f64::from(rng.random_range(0..100u32));
            [c(), c()]
        })
        .collect()
}

/// Triangle's `.node` and `.ele` files of a triangulation (numbered from
/// 1) in `dir`, named `name`; the `.ele` path.
pub fn write_triangle(
    dir: &std::path::Path,
    name: &str,
    positions: &[[f64; 2]],
    triangles: &[[u32; 3]],
) -> std::path::PathBuf {
    let mut node = format!("{} 2 0 0\n", positions.len());
    for (i, p) in positions.iter().enumerate() {
        node += &format!("{} {} {}\n", i + 1, p[0], p[1]);
    }
    let mut ele = format!("{} 3 0\n", triangles.len());
    for (i, f) in triangles.iter().enumerate() {
        ele += &format!("{} {} {} {}\n", i + 1, f[0] + 1, f[1] + 1, f[2] + 1);
    }
    std::fs::write(dir.join(format!("{name}.node")), node).expect("writes the .node");
    let ele_path = dir.join(format!("{name}.ele"));
    std::fs::write(&ele_path, ele).expect("writes the .ele");
    ele_path
}

/// A 2D OFF file of a triangulation in `dir`, named `name`; its path.
pub fn write_off_triangles(
    dir: &std::path::Path,
    name: &str,
    positions: &[[f64; 2]],
    triangles: &[[u32; 3]],
) -> std::path::PathBuf {
    let mut s = format!("OFF\n{} {} 0\n", positions.len(), triangles.len());
    for p in positions {
        s += &format!("{} {} 0\n", p[0], p[1]);
    }
    for f in triangles {
        s += &format!("3 {} {} {}\n", f[0], f[1], f[2]);
    }
    let path = dir.join(format!("{name}.off"));
    std::fs::write(&path, s).expect("writes the OFF file");
    path
}

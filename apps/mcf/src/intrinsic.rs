//! The intrinsic Delaunay Laplacian of a triangle mesh (Sharp and Crane
//! 2020, "A Laplacian for Nonmanifold Triangle Meshes", SGP 2020, sections
//! 4.5-4.6), on the host in `f64`.
//!
//! The mesh becomes an *intrinsic triangulation*: per face its three
//! vertices, per edge its length, nothing else (the positions are read
//! once, for the lengths). Every length is first lengthened by the
//! *intrinsic mollification* (section 4.5), then *intrinsic edge flips*
//! replace every interior edge that fails the *Delaunay condition*
//! (`cot α + cot β ≥ 0`, the angles opposite the edge) by the other
//! diagonal of its two triangles laid out in the plane, until none fails
//! (Fisher et al. 2007, "An Algorithm for the Construction of Intrinsic
//! Delaunay Triangulations with Applications to Digital Geometry
//! Processing"; Bobenko and Springborn 2007, "A Discrete Laplace-Beltrami
//! Operator for Simplicial Surfaces"). The surface's metric does not
//! change: the vertices, the total area and the geometry are the input's,
//! only the triangulation over them. The cotan Laplacian of the result has
//! non-negative weights on every interior edge (a maximum principle) and
//! keeps the cotan Laplacian's linear precision on flat regions.
//!
//! The triangulation is a Δ-complex: after flips two edges may join the
//! same two vertices and an edge may join a vertex to itself, so the
//! flips go through the half-edges only. An edge is flipped only when two
//! faces use it in opposite directions; boundary edges (one face),
//! non-manifold edges (three faces or more) and edges of two faces
//! oriented inconsistently stay as they are and keep their faces'
//! cotangents (Sharp and Crane flip on their tufted cover of the mesh,
//! where every edge has two sides; here only the manifold, consistently
//! oriented edges are flipped). A face whose lengths fail the strict
//! triangle inequality (a degenerate face without mollification) adds no
//! weight and no area and its edges are not flipped.

/// A missing twin: the edge of the half-edge is not flippable.
const NONE: usize = usize::MAX;

/// An edge is flipped only when `cos α + cos β` (negative exactly when
/// `cot α + cot β` is: `α + β > π`) is below minus this fraction of the
/// cosines' magnitudes (`(a² + b² + c²) / 2ab` per triangle, which bounds
/// the rounding of the law of cosines): the co-circular quadrilaterals of
/// a regular grid (`α + β = π`) are left alone.
const DELAUNAY_TOLERANCE: f64 = 1e-12;

/// Flips at most this many times the number of edges: rounding can never
/// flip forever.
const FLIPS_PER_EDGE: usize = 100;

/// The intrinsic Delaunay Laplacian of a triangle mesh (Sharp and Crane
/// 2020, sections 4.5-4.6): the cotan weights and the lumped vertex areas
/// of the intrinsic Delaunay triangulation of the mesh's (mollified) edge
/// lengths ([`intrinsic_delaunay_laplacian`]): the Laplacian of a
/// function `u` at vertex `i` is `Σ_j w_ij (u_j - u_i) / mass_i`, over row
/// `i`.
#[derive(Clone, Debug, PartialEq)]
pub struct IntrinsicLaplacian {
    /// Lumped (barycentric) vertex areas of the intrinsic triangulation: a
    /// third of each intrinsic face's area to each corner; one per vertex
    /// (0 for a vertex without faces). Squared units of the positions.
    pub mass: Vec<f64>,
    /// CSR rows, one per vertex: `offsets[v]..offsets[v+1]` index
    /// `neighbours` and `weights`; `vertices + 1` entries.
    pub offsets: Vec<u32>,
    /// Each row's neighbours, ascending, distinct, never the row's own
    /// vertex. Symmetric: j in row i iff i in row j, with the same weight
    /// bits.
    pub neighbours: Vec<u32>,
    /// The cotan weight `w_ij = ½ Σ cot` of the angles opposite every
    /// intrinsic edge joining i and j (an intrinsic triangulation may have
    /// several edges between one pair: their weights are summed; a loop
    /// edge from i to i contributes nothing). Unitless.
    pub weights: Vec<f64>,
    /// Intrinsic edge flips made.
    pub flips: usize,
}

/// The intrinsic Delaunay Laplacian (Sharp and Crane 2020, sections
/// 4.5-4.6) of the mesh of `positions` (one per vertex, any units) and
/// `faces` (three distinct vertex indices each, below `positions.len()`;
/// the caller validates them): every edge lengthened by `mollify` (an
/// absolute length in the units of the positions, Sharp and Crane's
/// intrinsic mollification, section 4.5; 0 for none), the interior edges
/// flipped intrinsically until every one is Delaunay (section 4.6), the
/// cotan weights and barycentric areas of the result assembled into one
/// CSR row per vertex.
///
/// The flips start from every flippable edge (two faces using it in
/// opposite directions) and push the four outer edges of each flipped
/// quadrilateral; a flip that would make a degenerate triangle is
/// skipped, and the flips stop after 100 per edge whatever rounding does.
/// O(n) beside the flips, single-threaded. Never panics: degenerate faces
/// (zero-length edges, zero area) and non-finite lengths add nothing.
pub fn intrinsic_delaunay_laplacian(
    positions: &[[f32; 3]],
    faces: &[[u32; 3]],
    mollify: f64,
) -> IntrinsicLaplacian {
    let mut triangulation = IntrinsicTriangulation::new(positions, faces, mollify);
    let flips = triangulation.flip_to_delaunay();
    triangulation.laplacian(positions.len(), flips)
}

/// The half-edge after `h` in its face.
fn next(h: usize) -> usize {
    if h % 3 == 2 { h - 2 } else { h + 1 }
}

/// The area of a triangle of edge lengths `a`, `b`, `c` by Heron's formula
/// in Kahan's stable form ("Miscalculating Area and Angles of a
/// Needle-like Triangle"); 0 unless the lengths satisfy the strict
/// triangle inequality (and are positive and finite).
fn triangle_area(a: f64, b: f64, c: f64) -> f64 {
    let (mut a, mut b, mut c) = (a, b, c);
    if a < b {
        std::mem::swap(&mut a, &mut b);
    }
    if b < c {
        std::mem::swap(&mut b, &mut c);
    }
    if a < b {
        std::mem::swap(&mut a, &mut b);
    }
    let p = (a + (b + c)) * (c - (a - b)) * (c + (a - b)) * (a + (b - c));
    if c > 0.0 && p > 0.0 && p.is_finite() {
        0.25 * p.sqrt()
    } else {
        0.0
    }
}

/// The area and corner cotangents of an intrinsic triangle.
#[derive(Clone, Copy)]
struct Triangle {
    /// Its area (positive).
    area: f64,
    /// The cotangent of each corner (law of cosines over the area).
    cot: [f64; 3],
}

impl Triangle {
    /// The triangle of lengths `l`, `l[s]` the edge from corner `s` to
    /// corner `s + 1` (corner `s` is opposite `l[s + 1]`); `None` when the
    /// lengths fail the strict triangle inequality or a cotangent is not
    /// finite.
    fn new(l: [f64; 3]) -> Option<Triangle> {
        let area = triangle_area(l[0], l[1], l[2]);
        if area <= 0.0 {
            return None;
        }
        let q = 4.0 * area;
        let [a, b, c] = [l[0] * l[0], l[1] * l[1], l[2] * l[2]];
        let cot = [(a + c - b) / q, (b + a - c) / q, (c + b - a) / q];
        (cot[0].is_finite() && cot[1].is_finite() && cot[2].is_finite())
            .then_some(Triangle { area, cot })
    }
}

/// An intrinsic triangulation: half-edge `h` of face `h / 3` runs from
/// its vertex `vertex[h]` to `vertex[next(h)]`, along edge `edge[h]` of
/// length `length[edge[h]]`; `twin[h]` is the other half-edge of a
/// flippable edge ([`NONE`] otherwise) and `half[e]` one half-edge of edge
/// `e`.
struct IntrinsicTriangulation {
    vertex: Vec<u32>,
    twin: Vec<usize>,
    edge: Vec<usize>,
    half: Vec<usize>,
    length: Vec<f64>,
}

impl IntrinsicTriangulation {
    /// The triangulation of the mesh, every edge's length from the
    /// positions plus `mollify`. The half-edges are grouped by their
    /// vertex pair (a counting sort by the smaller vertex, then each
    /// vertex's few by the larger one, stably): each group is one edge,
    /// flippable when it has two half-edges of opposite directions.
    fn new(positions: &[[f32; 3]], faces: &[[u32; 3]], mollify: f64) -> IntrinsicTriangulation {
        let vertex: Vec<u32> = faces.iter().flatten().copied().collect();
        let halves = vertex.len();
        let ends = |h: usize| {
            let (a, b) = (vertex[h], vertex[next(h)]);
            (a.min(b) as usize, a.max(b))
        };
        let mut start = vec![0usize; positions.len() + 1];
        for h in 0..halves {
            start[ends(h).0 + 1] += 1;
        }
        for v in 0..positions.len() {
            start[v + 1] += start[v];
        }
        let mut fill = start.clone();
        // (the larger vertex, the half-edge), by the smaller vertex.
        let mut order = vec![(0u32, 0usize); halves];
        for h in 0..halves {
            let (v, w) = ends(h);
            order[fill[v]] = (w, h);
            fill[v] += 1;
        }
        let mut twin = vec![NONE; halves];
        let mut edge = vec![0usize; halves];
        let mut half = Vec::with_capacity(halves / 2 + 1);
        let mut length = Vec::with_capacity(halves / 2 + 1);
        for v in 0..positions.len() {
            let row = &mut order[start[v]..start[v + 1]];
            row.sort_by_key(|&(w, _)| w);
            for group in row.chunk_by(|x, y| x.0 == y.0) {
                let e = length.len();
                let (p, q) = (positions[v], positions[group[0].0 as usize]);
                let d = [0, 1, 2].map(|k| f64::from(p[k]) - f64::from(q[k]));
                length.push((d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() + mollify);
                half.push(group[0].1);
                for &(_, h) in group {
                    edge[h] = e;
                }
                if let [(_, g), (_, h)] = *group
                    && vertex[g] != vertex[h]
                {
                    twin[g] = h;
                    twin[h] = g;
                }
            }
        }
        IntrinsicTriangulation {
            vertex,
            twin,
            edge,
            half,
            length,
        }
    }

    /// The lengths of the face of half-edge `h`, from `h` on.
    fn lengths_from(&self, h: usize) -> [f64; 3] {
        let (h1, h2) = (next(h), next(next(h)));
        [
            self.length[self.edge[h]],
            self.length[self.edge[h1]],
            self.length[self.edge[h2]],
        ]
    }

    /// Flips intrinsic edges until every flippable edge satisfies the
    /// Delaunay condition (or the budget of [`FLIPS_PER_EDGE`] per edge is
    /// spent); returns the flips made.
    fn flip_to_delaunay(&mut self) -> usize {
        let edges = self.length.len();
        let budget = FLIPS_PER_EDGE.saturating_mul(edges);
        let mut queued = vec![false; edges];
        let mut queue: Vec<usize> = (0..edges)
            .filter(|&e| self.twin[self.half[e]] != NONE)
            .collect();
        for &e in &queue {
            queued[e] = true;
        }
        let mut flips = 0;
        while flips < budget
            && let Some(e) = queue.pop()
        {
            queued[e] = false;
            let h = self.half[e];
            if self.flip_if_not_delaunay(h) {
                flips += 1;
                let t = self.twin[h];
                for x in [next(h), next(next(h)), next(t), next(next(t))] {
                    let outer = self.edge[x];
                    if self.twin[x] != NONE && !queued[outer] {
                        queued[outer] = true;
                        queue.push(outer);
                    }
                }
            }
        }
        flips
    }

    /// Flips the edge of half-edge `h` when it is flippable, its two faces
    /// are distinct and non-degenerate, it fails the Delaunay condition and
    /// the flip makes no degenerate triangle; says whether it did. (An edge
    /// whose two sides are in one face, after flips around a vertex of
    /// degree 2, has no quadrilateral to flip in.)
    ///
    /// With `h = i → j` in face `(i, j, k)` and its twin `t = j → i` in
    /// face `(j, i, l)`, the faces become `(k, l, j)` (from `h`, now
    /// `k → l`) and `(l, k, i)` (from `t`), the other diagonal of the
    /// quadrilateral `i l j k`, whose length comes from the two triangles
    /// laid out in the plane on either side of `i j`.
    fn flip_if_not_delaunay(&mut self, h: usize) -> bool {
        let t = self.twin[h];
        if t == NONE || h / 3 == t / 3 {
            return false;
        }
        let [c, a0, b0] = self.lengths_from(h);
        let [_, a1, b1] = self.lengths_from(t);
        // cos k + cos l against the tolerance, times 2 a0 b0 · 2 a1 b1: no
        // division, no root on the common path (a Delaunay edge).
        let (d0, d1) = (2.0 * a0 * b0, 2.0 * a1 * b1);
        let (a0b0, a1b1, cc) = (a0 * a0 + b0 * b0, a1 * a1 + b1 * b1, c * c);
        let cosines = (a0b0 - cc) * d1 + (a1b1 - cc) * d0;
        let magnitudes = (a0b0 + cc) * d1 + (a1b1 + cc) * d0;
        let delaunay = cosines >= -DELAUNAY_TOLERANCE * magnitudes;
        if delaunay || cosines.is_nan() {
            return false;
        }
        let (area0, area1) = (triangle_area(c, a0, b0), triangle_area(c, a1, b1));
        if area0 <= 0.0 || area1 <= 0.0 {
            return false;
        }
        // i at (0, 0), j at (c, 0), k at (xk, y0) above, l at (xl, -y1)
        // below: xk - xl and y0 + y1.
        let dx = (b0 * b0 - a0 * a0 - a1 * a1 + b1 * b1) / (2.0 * c);
        let dy = 2.0 * (area0 + area1) / c;
        let d = (dx * dx + dy * dy).sqrt();
        if triangle_area(d, b1, a0) <= 0.0 || triangle_area(d, b0, a1) <= 0.0 {
            return false;
        }
        let (h1, h2, t1, t2) = (next(h), next(next(h)), next(t), next(next(t)));
        let (i, j, k, l) = (
            self.vertex[h],
            self.vertex[t],
            self.vertex[h2],
            self.vertex[t2],
        );
        // Where the data of each outer half-edge goes: l → j to h1,
        // j → k to h2, k → i to t1, i → l to t2.
        let moved = |x: usize| match x {
            _ if x == t2 => h1,
            _ if x == h1 => h2,
            _ if x == h2 => t1,
            _ if x == t1 => t2,
            _ => x,
        };
        let sources = [(h1, t2), (h2, h1), (t1, h2), (t2, t1)];
        let new = sources.map(|(_, from)| (self.edge[from], moved(self.twin[from])));
        for ((to, _), (edge, twin)) in sources.into_iter().zip(new) {
            self.edge[to] = edge;
            self.twin[to] = twin;
            self.half[edge] = to;
        }
        for (to, _) in sources {
            if self.twin[to] != NONE {
                let other = self.twin[to];
                self.twin[other] = to;
            }
        }
        [self.vertex[h], self.vertex[h1], self.vertex[h2]] = [k, l, j];
        [self.vertex[t], self.vertex[t1], self.vertex[t2]] = [l, k, i];
        self.length[self.edge[h]] = d;
        true
    }

    /// The cotan weights and barycentric areas of the triangulation over
    /// `vertices` vertices, as CSR rows: each edge's weight summed over its
    /// faces, then over the edges of each vertex pair (a counting sort by
    /// the smaller vertex, then by the larger), each pair's sum written to
    /// both rows.
    fn laplacian(&self, vertices: usize, flips: usize) -> IntrinsicLaplacian {
        let mut mass = vec![0.0; vertices];
        let mut edge_weight = vec![0.0; self.length.len()];
        for f in 0..self.vertex.len() / 3 {
            let Some(tri) = Triangle::new(self.lengths_from(3 * f)) else {
                continue;
            };
            for s in 0..3 {
                mass[self.vertex[3 * f + s] as usize] += tri.area / 3.0;
                edge_weight[self.edge[3 * f + (s + 1) % 3]] += 0.5 * tri.cot[s];
            }
        }
        let ends = |e: usize| {
            let h = self.half[e];
            let (a, b) = (self.vertex[h], self.vertex[next(h)]);
            (a.min(b), a.max(b))
        };
        let mut start = vec![0usize; vertices + 1];
        for e in 0..self.length.len() {
            let (a, b) = ends(e);
            if a != b {
                start[a as usize + 1] += 1;
            }
        }
        for v in 0..vertices {
            start[v + 1] += start[v];
        }
        let mut fill = start.clone();
        let mut upper = vec![(0u32, 0.0f64); start[vertices]];
        for (e, &w) in edge_weight.iter().enumerate() {
            let (a, b) = ends(e);
            if a != b {
                upper[fill[a as usize]] = (b, w);
                fill[a as usize] += 1;
            }
        }
        // Each row's pairs ascending, duplicates summed in place: the first
        // `distinct[a]` of row `a`.
        let mut distinct = vec![0usize; vertices];
        let mut degree = vec![0u32; vertices];
        for a in 0..vertices {
            let row = &mut upper[start[a]..start[a + 1]];
            row.sort_by_key(|&(b, _)| b);
            let mut n = 0;
            for k in 0..row.len() {
                if n > 0 && row[n - 1].0 == row[k].0 {
                    row[n - 1].1 += row[k].1;
                } else {
                    row[n] = row[k];
                    n += 1;
                }
            }
            distinct[a] = n;
            degree[a] += n as u32;
            for &(b, _) in &row[..n] {
                degree[b as usize] += 1;
            }
        }
        // The pairs (a, b, w), a < b, ascending.
        let pairs = || {
            (0..vertices).flat_map(|a| {
                upper[start[a]..start[a] + distinct[a]]
                    .iter()
                    .map(move |&(b, w)| (a as u32, b, w))
            })
        };
        let mut offsets = Vec::with_capacity(vertices + 1);
        offsets.push(0u32);
        for v in 0..vertices {
            offsets.push(offsets[v] + degree[v]);
        }
        let entries = offsets[vertices] as usize;
        let mut fill: Vec<usize> = offsets[..vertices].iter().map(|&o| o as usize).collect();
        let mut neighbours = vec![0u32; entries];
        let mut weights = vec![0.0; entries];
        // The smaller neighbours first (ascending a), then the larger.
        for (a, b, w) in pairs() {
            let slot = &mut fill[b as usize];
            neighbours[*slot] = a;
            weights[*slot] = w;
            *slot += 1;
        }
        for (a, b, w) in pairs() {
            let slot = &mut fill[a as usize];
            neighbours[*slot] = b;
            weights[*slot] = w;
            *slot += 1;
        }
        IntrinsicLaplacian {
            mass,
            offsets,
            neighbours,
            weights,
            flips,
        }
    }
}

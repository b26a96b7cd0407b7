//! One level of volumetric Catmull-Clark subdivision on the boundary
//! operators (the paper's section 4.3; the host crate's `subdivide`
//! module gives the numbering and the position rules): the new ∂1
//! ([`SplitEdges`], [`SpokeEdges`]), ∂2 ([`FaceFaces`], [`CellFaces`],
//! offsets by [`Stride`]), ∂3 by count, scan and fill ([`CellCells`]),
//! and the positions ([`RowMeans`] for the cell and face centres,
//! [`FacePoints`], [`EdgePoints`], [`VertexPoints`]). Every thread takes
//! one element (an edge, a face, a cell or a vertex) and writes the new
//! elements numbered by its entries, so no two threads write one word of
//! a valid mesh; the kernels are checked, so words numbered by the
//! entries are written atomically (an invalid mesh only mixes values).

use cavity_device::array::{In, InOut, Ins};

use crate::signed::{encode, index, is_negative, sign};
use crate::{BOUNDS, chunk};

/// The edge-edge of signed edge `e` at the vertex the signed edge starts
/// from, signed to run from that vertex to the edge point (eq. 9: edge
/// `e` splits into `2e`, tail to edge point, and `2e + 1`, edge point to
/// head).
#[inline(always)]
pub fn half_from(e: u32) -> u32 {
    let i = index(e);
    if is_negative(e) {
        encode(2 * i + 1, true)
    } else {
        encode(2 * i, false)
    }
}

/// The edge-edge of signed edge `e` at the vertex the signed edge ends at,
/// signed to run from the edge point to that vertex.
#[inline(always)]
pub fn half_to(e: u32) -> u32 {
    let i = index(e);
    if is_negative(e) {
        encode(2 * i, true)
    } else {
        encode(2 * i + 1, false)
    }
}

cavity_device::kernel! {
    /// Splits each of the `edges` edges `e = (a, b)` of `pairs` (two words
    /// each) at its edge point `vertices + e`: `out` gets `(a, vertices +
    /// e)` at `2e` and `(vertices + e, b)` at `2e + 1` (two words each).
    ///
    /// # Safety
    /// Checked: `pairs` is only read; one thread writes each edge's four
    /// words, named by its index.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel SplitEdges(launch, pairs: In<u32>, edges: u32, vertices: u32, out: InOut<u32>) {
        assert!(edges <= out.len() / 4, "`out` holds four words per edge");
        let (start, end) = chunk(launch.block_idx, edges);
        launch.block.for_each(end - start, |k| {
            let e = start + k;
            let point = vertices.wrapping_add(e);
            // SAFETY: one thread writes each edge's words.
            unsafe {
                out.set_unshared(4 * e, pairs.get(2 * e));
                out.set_unshared(4 * e + 1, point);
                out.set_unshared(4 * e + 2, point);
                out.set_unshared(4 * e + 3, pairs.get(2 * e + 1));
            }
        });
    }
}

cavity_device::kernel! {
    /// The spokes of each of the `rows` rows of a boundary operator
    /// (`offsets`, `entries`): for entry `o` of row `r`, the edge
    /// `(from + index, to + r)` goes to `out` at `o` (two words each), as
    /// the face-edges from ∂2 (edge points to face points, eq. 10) and
    /// the cell-edges from ∂3 (face points to cell points).
    ///
    /// # Safety
    /// Checked: the inputs are only read, `out` written atomically.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel SpokeEdges(
        launch,
        offsets: In<u32>,
        entries: In<u32>,
        rows: u32,
        bases: [u32; 2],
        out: InOut<u32>,
    ) {
        let [from, to] = bases;
        let (start, end) = chunk(launch.block_idx, rows);
        launch.block.for_each(end - start, |k| {
            let r = start + k;
            for o in offsets.get(r)..offsets.get(r + 1) {
                out.set(o.wrapping_mul(2), from.wrapping_add(index(entries.get(o))));
                out.set(o.wrapping_mul(2).wrapping_add(1), to.wrapping_add(r));
            }
        });
    }
}

cavity_device::kernel! {
    /// `out[i] = step * i` for `i < n`: the offsets of rows of `step`
    /// entries each (the quadrilaterals of ∂2, the pairs of ∂1).
    ///
    /// # Safety
    /// Checked: one thread writes each word, named by its index.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel Stride(launch, out: InOut<u32>, n: u32, step: u32) {
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let i = start + k;
            // SAFETY: one thread writes each word.
            unsafe { out.set_unshared(i, step.wrapping_mul(i)) };
        });
    }
}

cavity_device::kernel! {
    /// ∂1 of the `edges` edges of `pairs` as ternary entries: `-tail` at
    /// `2e`, `+head` at `2e + 1` (the offsets are [`Stride`] 2).
    ///
    /// # Safety
    /// Checked: `pairs` is only read; one thread writes each edge's two
    /// words, named by its index.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel EdgeOperator(launch, pairs: In<u32>, edges: u32, out: InOut<u32>) {
        assert!(edges <= out.len() / 2, "`out` holds two words per edge");
        let (start, end) = chunk(launch.block_idx, edges);
        launch.block.for_each(end - start, |k| {
            let e = start + k;
            // SAFETY: one thread writes each edge's words.
            unsafe {
                out.set_unshared(2 * e, encode(pairs.get(2 * e), true));
                out.set_unshared(2 * e + 1, pairs.get(2 * e + 1));
            }
        });
    }
}

cavity_device::kernel! {
    /// The face-faces of each of the `faces` faces of ∂2 (`offsets`,
    /// `entries`): the corner at entry `o` (the tail of edge `o`, between
    /// edge `o - 1` and edge `o` of the loop) becomes the quadrilateral
    /// from that vertex to the edge point of edge `o`, the face point and
    /// the edge point of edge `o - 1`, oriented as the face (fig. 7); its
    /// four signed edges go to `out` at `4o` (face-edges numbered
    /// `two_e + o`).
    ///
    /// # Safety
    /// Checked: the inputs are only read, `out` written atomically.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel FaceFaces(
        launch,
        offsets: In<u32>,
        entries: In<u32>,
        faces: u32,
        two_e: u32,
        out: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, faces);
        launch.block.for_each(end - start, |k| {
            let f = start + k;
            let (a, b) = (offsets.get(f), offsets.get(f + 1));
            if b <= a {
                return;
            }
            let mut prev = b - 1;
            let mut before = entries.get(prev);
            for o in a..b {
                let here = entries.get(o);
                let at = o.wrapping_mul(4);
                out.set(at, half_from(here));
                out.set(at.wrapping_add(1), two_e.wrapping_add(o));
                out.set(at.wrapping_add(2), encode(two_e.wrapping_add(prev), true));
                out.set(at.wrapping_add(3), half_to(before));
                (prev, before) = (o, here);
            }
        });
    }
}

/// The entries of ∂3 and ∂2 of the two faces of cell `c` at edge `e`:
/// the one whose outward loop runs along `e`, then the one against it.
/// `ops` holds ∂3's offsets and entries, then ∂2's.
#[inline(always)]
fn faces_at_edge([d3o, d3e, d2o, d2e]: [In<u32>; 4], c: u32, e: u32) -> ([u32; 2], [u32; 2]) {
    let (mut along, mut against) = ([0; 2], [0; 2]);
    for o3 in d3o.get(c)..d3o.get(c + 1) {
        let face = d3e.get(o3);
        let f = index(face);
        for o2 in d2o.get(f)..d2o.get(f + 1) {
            let x = d2e.get(o2);
            if index(x) == e {
                if sign(face) * sign(x) > 0 {
                    along = [o3, o2];
                } else {
                    against = [o3, o2];
                }
            }
        }
    }
    (along, against)
}

cavity_device::kernel! {
    /// The cell-faces of each of the `cells` cells: for entry `q` of the
    /// cell's row of the cell-edges relation (edge `e`), the quadrilateral
    /// from `e`'s edge point to the face point of the cell's face that runs
    /// against `e`, the cell point and the face point of the face that runs
    /// along it (its normal along `e`, fig. 7); its signed edges go to
    /// `out` at `4 * (nnz2 + q)` (face-edges `two_e + o2`, cell-edges
    /// `two_e + nnz2 + o3`). `ops` holds ∂3's offsets and entries, ∂2's,
    /// and the cell-edges'.
    ///
    /// # Safety
    /// Checked: the inputs are only read, `out` written atomically.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel CellFaces(launch, ops: Ins<u32, 6>, cells: u32, counts: [u32; 2], out: InOut<u32>) {
        let [d3o, d3e, d2o, d2e, ceo, cee] = *ops;
        let [two_e, nnz2] = counts;
        let (start, end) = chunk(launch.block_idx, cells);
        launch.block.for_each(end - start, |k| {
            let c = start + k;
            for q in ceo.get(c)..ceo.get(c + 1) {
                let e = cee.get(q);
                let (along, against) = faces_at_edge([d3o, d3e, d2o, d2e], c, e);
                let at = nnz2.wrapping_add(q).wrapping_mul(4);
                let cell_edges = two_e.wrapping_add(nnz2);
                out.set(at, two_e.wrapping_add(against[1]));
                out.set(at.wrapping_add(1), cell_edges.wrapping_add(against[0]));
                out.set(at.wrapping_add(2), encode(cell_edges.wrapping_add(along[0]), true));
                out.set(at.wrapping_add(3), encode(two_e.wrapping_add(along[1]), true));
            }
        });
    }
}

cavity_device::kernel! {
    /// The cell-cells of each of the `cells` cells, one per entry `r` of
    /// the cell's row of the cell-vertices relation (vertex `v`): the
    /// face-faces of the cell's faces at `v` (entry `o2` of ∂2 where the
    /// face's loop passes `v`, signed as the cell uses the face), then the
    /// cell-faces of the cell's edges at `v` (`nnz2 + q` for entry `q` of
    /// cell-edges, +1 where `v` is the edge's tail). With `out` empty (the
    /// counting pass) the number of faces goes to `offsets[r]`; otherwise
    /// (`offsets` their scan) the faces go to `out[offsets[r]..]`. `ops`
    /// holds ∂3's offsets and entries, ∂2's offsets, the face-vertices'
    /// entries (∂2's offsets), cell-edges' offsets and entries,
    /// cell-vertices' offsets and entries; `pairs` the edges (two words
    /// each).
    ///
    /// # Safety
    /// Checked: the inputs are only read, `offsets` and `out` written
    /// atomically.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel CellCells(
        launch,
        ops: Ins<u32, 8>,
        cells: u32,
        pairs: In<u32>,
        nnz2: u32,
        offsets: InOut<u32>,
        out: InOut<u32>,
    ) {
        let [d3o, d3e, d2o, fve, ceo, cee, cvo, cve] = *ops;
        let filling = !out.is_empty();
        let (start, end) = chunk(launch.block_idx, cells);
        launch.block.for_each(end - start, |k| {
            let c = start + k;
            for r in cvo.get(c)..cvo.get(c + 1) {
                let v = cve.get(r);
                let mut n = 0u32;
                let mut at = if filling { offsets.get(r) } else { 0 };
                let mut push = |x: u32| {
                    if filling {
                        out.set(at, x);
                        at = at.wrapping_add(1);
                    }
                    n = n.wrapping_add(1);
                };
                for o3 in d3o.get(c)..d3o.get(c + 1) {
                    let face = d3e.get(o3);
                    let f = index(face);
                    for o2 in d2o.get(f)..d2o.get(f + 1) {
                        if fve.get(o2) == v {
                            push(encode(o2, is_negative(face)));
                        }
                    }
                }
                for q in ceo.get(c)..ceo.get(c + 1) {
                    let e = cee.get(q);
                    let (a, b) = (pairs.get(2 * e), pairs.get((2 * e).wrapping_add(1)));
                    if a == v || b == v {
                        push(encode(nnz2.wrapping_add(q), b == v));
                    }
                }
                if !filling {
                    offsets.set(r, n);
                }
            }
        });
    }
}

/// Three coordinates.
type Point = [f32; 3];

/// `a + b`.
#[inline(always)]
fn add(a: Point, b: Point) -> Point {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

/// `a * s`.
#[inline(always)]
fn scale(a: Point, s: f32) -> Point {
    [a[0] * s, a[1] * s, a[2] * s]
}

/// `sum / n` (`n` at least 1).
#[inline(always)]
fn mean(sum: Point, n: u32) -> Point {
    let n = if n == 0 { 1.0 } else { n as f32 };
    [sum[0] / n, sum[1] / n, sum[2] / n]
}

/// Point `i` of `points` (three `f32` words each).
#[inline(always)]
fn point(points: In<f32>, i: u32) -> Point {
    let at = i.wrapping_mul(3);
    [
        points.get(at),
        points.get(at.wrapping_add(1)),
        points.get(at.wrapping_add(2)),
    ]
}

/// Stores `p` as point `i` of `points`, the thread's own.
///
/// # Safety
/// No other thread reads or writes point `i` during the launch.
#[inline(always)]
unsafe fn store_point(points: InOut<f32>, i: u32, p: Point) {
    for (c, x) in p.into_iter().enumerate() {
        // SAFETY: the caller's contract.
        unsafe { points.set_unshared(3 * i + c as u32, x) };
    }
}

/// The mean of the points that row `r` (`offsets`, `entries`) names and
/// `keep` keeps, with how many there were.
#[inline(always)]
fn row_mean(
    (offsets, entries): (In<u32>, In<u32>),
    r: u32,
    points: In<f32>,
    keep: impl Fn(u32) -> bool,
) -> (Point, u32) {
    let mut sum = [0.0f32; 3];
    let mut n = 0;
    for i in offsets.get(r)..offsets.get(r + 1) {
        let x = index(entries.get(i));
        if keep(x) {
            sum = add(sum, point(points, x));
            n += 1;
        }
    }
    (mean(sum, n), n)
}

cavity_device::kernel! {
    /// The mean of the points each of the `rows` rows (`offsets`,
    /// `entries`) names, to `out` (point `r`): the cell centres from the
    /// cell-vertices, the face centres from the face-vertices (eqs. 5-6).
    ///
    /// # Safety
    /// Checked: the inputs are only read; one thread writes each point of
    /// `out`, named by its index.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel RowMeans(
        launch,
        offsets: In<u32>,
        entries: In<u32>,
        rows: u32,
        points: In<f32>,
        out: InOut<f32>,
    ) {
        assert!(rows <= out.len() / 3, "`out` holds a point per row");
        let (start, end) = chunk(launch.block_idx, rows);
        launch.block.for_each(end - start, |k| {
            let r = start + k;
            let p = row_mean((offsets, entries), r, points, |_| true).0;
            // SAFETY: one thread writes each point.
            unsafe { store_point(out, r, p) };
        });
    }
}

cavity_device::kernel! {
    /// The face points of the `faces` faces (eq. 8): a face whose cells'
    /// signs (its row of `∂3ᵀ`) do not cancel is on the boundary (1 in
    /// `on_boundary`) and keeps its centre; another moves halfway to the
    /// mean centre of its cells. `rows` holds `∂3ᵀ`'s offsets and entries,
    /// `centres` the face centres and the cell centres.
    ///
    /// # Safety
    /// Checked: the inputs are only read; one thread writes each face's
    /// words, named by its index.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel FacePoints(
        launch,
        rows: Ins<u32, 2>,
        centres: Ins<f32, 2>,
        faces: u32,
        on_boundary: InOut<u32>,
        out: InOut<f32>,
    ) {
        let [fco, fce] = *rows;
        let [face_centres, cell_centres] = *centres;
        assert!(faces <= out.len() / 3, "`out` holds a point per face");
        let (start, end) = chunk(launch.block_idx, faces);
        launch.block.for_each(end - start, |f| {
            let f = start + f;
            let mut sum = 0i32;
            for i in fco.get(f)..fco.get(f + 1) {
                sum = sum.wrapping_add(sign(fce.get(i)));
            }
            let centre = point(face_centres, f);
            let p = if sum != 0 {
                centre
            } else {
                scale(add(centre, row_mean((fco, fce), f, cell_centres, |_| true).0), 0.5)
            };
            // SAFETY: one thread writes each face's words.
            unsafe {
                on_boundary.set_unshared(f, u32::from(sum != 0));
                store_point(out, f, p);
            }
        });
    }
}

cavity_device::kernel! {
    /// The edge points of the `edges` edges: inside, `(C + 2A + (n - 3)M) /
    /// n` over the edge's `n` faces (`A` their mean centre, `C` its cells'
    /// mean centre, `M` its midpoint); on the boundary, halfway between `M`
    /// and the mean centre of its two boundary faces, or `M` at a crease
    /// (another number of boundary faces). `kinds` gets 0 inside, 1 on the
    /// boundary, 2 at a crease. `words` holds `pairs`, `∂2ᵀ`'s offsets and
    /// entries, the transposed cell-edges', the faces' boundary words;
    /// `points` the positions, the face centres and the cell centres.
    ///
    /// # Safety
    /// Checked: the inputs are only read; one thread writes each edge's
    /// words, named by its index.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel EdgePoints(
        launch,
        words: Ins<u32, 6>,
        points: Ins<f32, 3>,
        edges: u32,
        kinds: InOut<u32>,
        out: InOut<f32>,
    ) {
        let [pairs, efo, efe, eco, ece, on_boundary] = *words;
        let [positions, face_centres, cell_centres] = *points;
        assert!(edges <= out.len() / 3, "`out` holds a point per edge");
        let (start, end) = chunk(launch.block_idx, edges);
        launch.block.for_each(end - start, |e| {
            let e = start + e;
            let (a, b) = (pairs.get(2 * e), pairs.get((2 * e).wrapping_add(1)));
            let m = scale(add(point(positions, a), point(positions, b)), 0.5);
            let boundary = |f: u32| on_boundary.get(f) != 0;
            let (centres, outer) = row_mean((efo, efe), e, face_centres, boundary);
            let kind = match outer {
                0 => 0,
                2 => 1,
                _ => 2,
            };
            let p = match kind {
                0 => {
                    let (a, n) = row_mean((efo, efe), e, face_centres, |_| true);
                    let c = row_mean((eco, ece), e, cell_centres, |_| true).0;
                    mean(add(add(c, scale(a, 2.0)), scale(m, n as f32 - 3.0)), n)
                }
                1 => scale(add(m, centres), 0.5),
                _ => m,
            };
            // SAFETY: one thread writes each edge's words.
            unsafe {
                kinds.set_unshared(e, kind);
                store_point(out, e, p);
            }
        });
    }
}

cavity_device::kernel! {
    /// The vertex points of the `vertices` vertices: inside, `(C + 3A + 3M
    /// + P) / 8` (the mean centres of its cells and faces, the mean
    /// midpoint of its edges, its position); on the boundary, `(Q + 2R +
    /// (n - 3)P) / n` over its `n` boundary edges (`R` their mean
    /// midpoint) and its boundary faces (`Q` their mean centre); its
    /// position at a crease, with fewer than three boundary edges, or
    /// without cells. `words` holds `pairs`, `∂1ᵀ`'s offsets and entries,
    /// the transposed face-vertices', the transposed cell-vertices', the
    /// faces' boundary words and the edges' kinds; `points` the positions,
    /// the face centres and the cell centres.
    ///
    /// # Safety
    /// Checked: the inputs are only read; one thread writes each vertex's
    /// point, named by its index.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel VertexPoints(
        launch,
        words: Ins<u32, 9>,
        points: Ins<f32, 3>,
        vertices: u32,
        out: InOut<f32>,
    ) {
        let [pairs, veo, vee, vfo, vfe, vco, vce, on_boundary, kinds] = *words;
        let [positions, face_centres, cell_centres] = *points;
        assert!(vertices <= out.len() / 3, "`out` holds a point per vertex");
        let (start, end) = chunk(launch.block_idx, vertices);
        launch.block.for_each(end - start, |v| {
            let v = start + v;
            let here = point(positions, v);
            let (e0, e1) = (veo.get(v), veo.get(v + 1));
            let mut most = 0;
            for i in e0..e1 {
                most = most.max(kinds.get(index(vee.get(i))));
            }
            // The mean midpoint of the edges, or of the boundary ones.
            let midpoints = |outer: bool| {
                let mut sum = [0.0f32; 3];
                let mut n = 0;
                for i in e0..e1 {
                    let e = index(vee.get(i));
                    if !outer || kinds.get(e) == 1 {
                        let (a, b) = (pairs.get(2 * e), pairs.get((2 * e).wrapping_add(1)));
                        sum = add(sum, scale(add(point(positions, a), point(positions, b)), 0.5));
                        n += 1;
                    }
                }
                (mean(sum, n), n)
            };
            let p = if most == 2 || (most == 0 && vco.get(v) == vco.get(v + 1)) {
                here
            } else if most == 1 {
                let (r, n) = midpoints(true);
                let boundary = |f: u32| on_boundary.get(f) != 0;
                let q = row_mean((vfo, vfe), v, face_centres, boundary).0;
                if n < 3 {
                    here
                } else {
                    mean(add(add(q, scale(r, 2.0)), scale(here, n as f32 - 3.0)), n)
                }
            } else {
                let c = row_mean((vco, vce), v, cell_centres, |_| true).0;
                let a = row_mean((vfo, vfe), v, face_centres, |_| true).0;
                let m = midpoints(false).0;
                scale(add(add(c, scale(a, 3.0)), add(scale(m, 3.0), here)), 0.125)
            };
            // SAFETY: one thread writes each vertex's point.
            unsafe { store_point(out, v, p) };
        });
    }
}

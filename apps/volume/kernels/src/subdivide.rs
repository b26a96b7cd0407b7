//! One level of volumetric Catmull-Clark subdivision on the boundary
//! operators (the paper's section 4.3; the host crate's `subdivide`
//! module gives the numbering and the position rules): the new ∂1
//! ([`SplitEdges`], [`SpokeEdges`]), ∂2 ([`FaceFaces`], [`CellFaces`],
//! offsets by [`Stride`]), ∂3 by count, scan and fill ([`CellCells`]),
//! and the positions ([`RowMeans`] for the cell and face centres,
//! [`FacePoints`], [`EdgePoints`], [`VertexPoints`]). Every thread takes
//! one element (an edge, a face, a cell or a vertex) and writes the new
//! elements numbered by its entries, so no two threads write one word.

use cavity_device::dynamic::global::GlobalU32;

use crate::signed::{encode, index, is_negative, sign};
use crate::{BOUNDS, arrays, chunk};

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
    /// `pairs` holds `2 * edges` words, `out` `4 * edges`.
    #[launch_bounds = BOUNDS]
    pub kernel SplitEdges(launch, pairs: u64, edges: u32, vertices: u32, out: u64) {
        // SAFETY: the kernel's contract.
        let [pairs, out] = unsafe { arrays([pairs, out]) };
        let (start, end) = chunk(launch.block_idx, edges);
        launch.block.for_each(end - start, |k| {
            let e = start + k;
            // SAFETY: read only input; one thread writes each edge's words.
            unsafe {
                let point = vertices + e;
                out.store_unshared(4 * e, pairs.load_unshared(2 * e));
                out.store_unshared(4 * e + 1, point);
                out.store_unshared(4 * e + 2, point);
                out.store_unshared(4 * e + 3, pairs.load_unshared(2 * e + 1));
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
    /// `offsets` holds `rows + 1` words delimiting `entries`; `out` two
    /// words per entry.
    #[launch_bounds = BOUNDS]
    pub kernel SpokeEdges(launch, offsets: u64, entries: u64, rows: u32, bases: [u32; 2], out: u64) {
        // SAFETY: the kernel's contract.
        let [offsets, entries, out] = unsafe { arrays([offsets, entries, out]) };
        let [from, to] = bases;
        let (start, end) = chunk(launch.block_idx, rows);
        launch.block.for_each(end - start, |k| {
            let r = start + k;
            // SAFETY: read only inputs; one thread writes each row's entries.
            unsafe {
                for o in offsets.load_unshared(r)..offsets.load_unshared(r + 1) {
                    out.store_unshared(2 * o, from + index(entries.load_unshared(o)));
                    out.store_unshared(2 * o + 1, to + r);
                }
            }
        });
    }
}

cavity_device::kernel! {
    /// `out[i] = step * i` for `i < n`: the offsets of rows of `step`
    /// entries each (the quadrilaterals of ∂2, the pairs of ∂1).
    ///
    /// # Safety
    /// `out` holds `n` words.
    #[launch_bounds = BOUNDS]
    pub kernel Stride(launch, out: u64, n: u32, step: u32) {
        // SAFETY: the kernel's contract.
        let [out] = unsafe { arrays([out]) };
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let i = start + k;
            // SAFETY: one thread writes each word.
            unsafe { out.store_unshared(i, step * i) };
        });
    }
}

cavity_device::kernel! {
    /// ∂1 of the `edges` edges of `pairs` as ternary entries: `-tail` at
    /// `2e`, `+head` at `2e + 1` (the offsets are [`Stride`] 2).
    ///
    /// # Safety
    /// `pairs` holds `2 * edges` words, `out` as many.
    #[launch_bounds = BOUNDS]
    pub kernel EdgeOperator(launch, pairs: u64, edges: u32, out: u64) {
        // SAFETY: the kernel's contract.
        let [pairs, out] = unsafe { arrays([pairs, out]) };
        let (start, end) = chunk(launch.block_idx, edges);
        launch.block.for_each(end - start, |k| {
            let e = start + k;
            // SAFETY: read only input; one thread writes each edge's words.
            unsafe {
                out.store_unshared(2 * e, encode(pairs.load_unshared(2 * e), true));
                out.store_unshared(2 * e + 1, pairs.load_unshared(2 * e + 1));
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
    /// `offsets` holds `faces + 1` words delimiting `entries`; `out` four
    /// words per entry.
    #[launch_bounds = BOUNDS]
    pub kernel FaceFaces(launch, offsets: u64, entries: u64, faces: u32, two_e: u32, out: u64) {
        // SAFETY: the kernel's contract.
        let [offsets, entries, out] = unsafe { arrays([offsets, entries, out]) };
        let (start, end) = chunk(launch.block_idx, faces);
        launch.block.for_each(end - start, |k| {
            let f = start + k;
            // SAFETY: read only inputs; one thread writes each face's quads.
            unsafe {
                let (a, b) = (offsets.load_unshared(f), offsets.load_unshared(f + 1));
                let mut prev = b - 1;
                let mut before = entries.load_unshared(prev);
                for o in a..b {
                    let here = entries.load_unshared(o);
                    out.store_unshared(4 * o, half_from(here));
                    out.store_unshared(4 * o + 1, two_e + o);
                    out.store_unshared(4 * o + 2, encode(two_e + prev, true));
                    out.store_unshared(4 * o + 3, half_to(before));
                    (prev, before) = (o, here);
                }
            }
        });
    }
}

/// The entries of ∂3 and ∂2 of the two faces of cell `c` at edge `e`:
/// the one whose outward loop runs along `e`, then the one against it.
///
/// # Safety
/// The arrays describe ∂3 and ∂2; `c` is a row of ∂3.
#[inline(always)]
unsafe fn faces_at_edge(
    [d3o, d3e, d2o, d2e]: [GlobalU32; 4],
    c: u32,
    e: u32,
) -> ([u32; 2], [u32; 2]) {
    let (mut along, mut against) = ([0; 2], [0; 2]);
    // SAFETY: the caller's contract; read only.
    unsafe {
        for o3 in d3o.load_unshared(c)..d3o.load_unshared(c + 1) {
            let face = d3e.load_unshared(o3);
            let f = index(face);
            for o2 in d2o.load_unshared(f)..d2o.load_unshared(f + 1) {
                let x = d2e.load_unshared(o2);
                if index(x) == e {
                    if sign(face) * sign(x) > 0 {
                        along = [o3, o2];
                    } else {
                        against = [o3, o2];
                    }
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
    /// `two_e + nnz2 + o3`). `ops` holds the addresses of ∂3's offsets and
    /// entries, ∂2's, and the cell-edges'.
    ///
    /// # Safety
    /// The arrays describe ∂3, ∂2 and cell-edges of a mesh of closed cells;
    /// `out` holds four words per face-face and cell-face.
    #[launch_bounds = BOUNDS]
    pub kernel CellFaces(launch, ops: [u64; 6], cells: u32, counts: [u32; 2], out: u64) {
        // SAFETY: the kernel's contract.
        let [d3o, d3e, d2o, d2e, ceo, cee, out] =
            unsafe { arrays([ops[0], ops[1], ops[2], ops[3], ops[4], ops[5], out]) };
        let [two_e, nnz2] = counts;
        let (start, end) = chunk(launch.block_idx, cells);
        launch.block.for_each(end - start, |k| {
            let c = start + k;
            // SAFETY: read only inputs; one thread writes each cell's quads.
            unsafe {
                for q in ceo.load_unshared(c)..ceo.load_unshared(c + 1) {
                    let e = cee.load_unshared(q);
                    let (along, against) = faces_at_edge([d3o, d3e, d2o, d2e], c, e);
                    let at = 4 * (nnz2 + q);
                    out.store_unshared(at, two_e + against[1]);
                    out.store_unshared(at + 1, two_e + nnz2 + against[0]);
                    out.store_unshared(at + 2, encode(two_e + nnz2 + along[0], true));
                    out.store_unshared(at + 3, encode(two_e + along[1], true));
                }
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
    /// cell-edges, +1 where `v` is the edge's tail). With `out` 0 (the
    /// counting pass) the number of faces goes to `offsets[r]`; otherwise
    /// (`offsets` their scan) the faces go to `out[offsets[r]..]`. `ops`
    /// holds the addresses of ∂3's offsets and entries, ∂2's offsets, the
    /// face-vertices' entries (∂2's offsets), cell-edges' offsets and
    /// entries, cell-vertices' offsets and entries.
    ///
    /// # Safety
    /// The arrays describe the operators and relations of one mesh, `pairs`
    /// its edges (two words each); `offsets` holds a word per cell-vertex
    /// entry (one more when filling), `out` (unless 0) their total.
    #[launch_bounds = BOUNDS]
    pub kernel CellCells(
        launch,
        ops: [u64; 8],
        cells: u32,
        pairs: u64,
        nnz2: u32,
        offsets: u64,
        out: u64,
    ) {
        // SAFETY: the kernel's contract.
        let [d3o, d3e, d2o, fve, ceo, cee, cvo, cve] = unsafe { arrays(ops) };
        // SAFETY: as above.
        let [pairs, offsets, values] = unsafe { arrays([pairs, offsets, out]) };
        let (start, end) = chunk(launch.block_idx, cells);
        launch.block.for_each(end - start, |k| {
            let c = start + k;
            // SAFETY: read only inputs; one thread writes each cell's words.
            unsafe {
                for r in cvo.load_unshared(c)..cvo.load_unshared(c + 1) {
                    let v = cve.load_unshared(r);
                    let mut n = 0;
                    let mut at = if out == 0 { 0 } else { offsets.load_unshared(r) };
                    let mut push = |x: u32| {
                        if out != 0 {
                            values.store_unshared(at, x);
                            at += 1;
                        }
                        n += 1;
                    };
                    for o3 in d3o.load_unshared(c)..d3o.load_unshared(c + 1) {
                        let face = d3e.load_unshared(o3);
                        let f = index(face);
                        for o2 in d2o.load_unshared(f)..d2o.load_unshared(f + 1) {
                            if fve.load_unshared(o2) == v {
                                push(encode(o2, is_negative(face)));
                            }
                        }
                    }
                    for q in ceo.load_unshared(c)..ceo.load_unshared(c + 1) {
                        let e = cee.load_unshared(q);
                        let (a, b) = (pairs.load_unshared(2 * e), pairs.load_unshared(2 * e + 1));
                        if a == v || b == v {
                            push(encode(nnz2 + q, b == v));
                        }
                    }
                    if out == 0 {
                        offsets.store_unshared(r, n);
                    }
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
///
/// # Safety
/// `points` holds point `i`.
#[inline(always)]
unsafe fn point(points: GlobalU32, i: u32) -> Point {
    // SAFETY: the caller's contract.
    unsafe {
        [
            f32::from_bits(points.load_unshared(3 * i)),
            f32::from_bits(points.load_unshared(3 * i + 1)),
            f32::from_bits(points.load_unshared(3 * i + 2)),
        ]
    }
}

/// Stores `p` as point `i` of `points`.
///
/// # Safety
/// `points` holds point `i`, written by this thread only.
#[inline(always)]
unsafe fn store_point(points: GlobalU32, i: u32, p: Point) {
    // SAFETY: the caller's contract.
    unsafe {
        for (c, x) in p.into_iter().enumerate() {
            points.store_unshared(3 * i + c as u32, x.to_bits());
        }
    }
}

/// The mean of the points that row `r` (`offsets`, `entries`) names and
/// `keep` keeps, with how many there were.
///
/// # Safety
/// `offsets` delimits `entries`, whose indices name points of `points`.
#[inline(always)]
unsafe fn row_mean(
    (offsets, entries): (GlobalU32, GlobalU32),
    r: u32,
    points: GlobalU32,
    keep: impl Fn(u32) -> bool,
) -> (Point, u32) {
    let mut sum = [0.0f32; 3];
    let mut n = 0;
    // SAFETY: the caller's contract; read only.
    unsafe {
        for i in offsets.load_unshared(r)..offsets.load_unshared(r + 1) {
            let x = index(entries.load_unshared(i));
            if keep(x) {
                sum = add(sum, point(points, x));
                n += 1;
            }
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
    /// `offsets` holds `rows + 1` words delimiting `entries`, whose indices
    /// name points of `points`; `out` holds `rows` points.
    #[launch_bounds = BOUNDS]
    pub kernel RowMeans(launch, offsets: u64, entries: u64, rows: u32, points: u64, out: u64) {
        // SAFETY: the kernel's contract.
        let [offsets, entries, points, out] = unsafe { arrays([offsets, entries, points, out]) };
        let (start, end) = chunk(launch.block_idx, rows);
        launch.block.for_each(end - start, |k| {
            let r = start + k;
            // SAFETY: read only inputs; one thread writes each point.
            unsafe { store_point(out, r, row_mean((offsets, entries), r, points, |_| true).0) };
        });
    }
}

cavity_device::kernel! {
    /// The face points of the `faces` faces (eq. 8): a face whose cells'
    /// signs (its row of `∂3ᵀ`) do not cancel is on the boundary (1 in
    /// `on_boundary`) and keeps its centre; another moves halfway to the
    /// mean centre of its cells. `ops` holds `∂3ᵀ`'s offsets and entries,
    /// the face centres and the cell centres.
    ///
    /// # Safety
    /// The arrays hold a row, a word and a point per face, a point per
    /// cell; `out` a point per face.
    #[launch_bounds = BOUNDS]
    pub kernel FacePoints(launch, ops: [u64; 4], faces: u32, on_boundary: u64, out: u64) {
        // SAFETY: the kernel's contract.
        let [fco, fce, face_centres, cell_centres] = unsafe { arrays(ops) };
        // SAFETY: as above.
        let [on_boundary, out] = unsafe { arrays([on_boundary, out]) };
        let (start, end) = chunk(launch.block_idx, faces);
        launch.block.for_each(end - start, |f| {
            let f = start + f;
            // SAFETY: read only inputs; one thread writes each face's words.
            unsafe {
                let mut sum = 0;
                for i in fco.load_unshared(f)..fco.load_unshared(f + 1) {
                    sum += sign(fce.load_unshared(i));
                }
                let centre = point(face_centres, f);
                let p = if sum != 0 {
                    centre
                } else {
                    scale(add(centre, row_mean((fco, fce), f, cell_centres, |_| true).0), 0.5)
                };
                on_boundary.store_unshared(f, u32::from(sum != 0));
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
    /// boundary, 2 at a crease. `ops` holds `pairs`, the positions, `∂2ᵀ`'s
    /// offsets and entries, the transposed cell-edges', the face centres,
    /// the cell centres and the faces' boundary words.
    ///
    /// # Safety
    /// The arrays belong to one mesh; `kinds` holds a word per edge, `out`
    /// a point per edge.
    #[launch_bounds = BOUNDS]
    pub kernel EdgePoints(launch, ops: [u64; 9], edges: u32, kinds: u64, out: u64) {
        // SAFETY: the kernel's contract.
        let [pairs, positions, efo, efe, eco, ece, face_centres, cell_centres, on_boundary] =
            unsafe { arrays(ops) };
        // SAFETY: as above.
        let [kinds, out] = unsafe { arrays([kinds, out]) };
        let (start, end) = chunk(launch.block_idx, edges);
        launch.block.for_each(end - start, |e| {
            let e = start + e;
            // SAFETY: read only inputs; one thread writes each edge's words.
            unsafe {
                let (a, b) = (pairs.load_unshared(2 * e), pairs.load_unshared(2 * e + 1));
                let m = scale(add(point(positions, a), point(positions, b)), 0.5);
                let boundary = |f: u32| on_boundary.load_unshared(f) != 0;
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
                kinds.store_unshared(e, kind);
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
    /// without cells. `ops` holds `pairs`, the positions, `∂1ᵀ`'s offsets
    /// and entries, the transposed face-vertices', the transposed
    /// cell-vertices', the face centres, the cell centres, the faces'
    /// boundary words and the edges' kinds.
    ///
    /// # Safety
    /// The arrays belong to one mesh; `out` holds a point per vertex.
    #[launch_bounds = BOUNDS]
    pub kernel VertexPoints(launch, ops: [u64; 12], vertices: u32, out: u64) {
        // SAFETY: the kernel's contract.
        let [pairs, positions, veo, vee, vfo, vfe, vco, vce, face_centres, cell_centres, on_boundary, kinds] =
            unsafe { arrays(ops) };
        // SAFETY: as above.
        let [out] = unsafe { arrays([out]) };
        let (start, end) = chunk(launch.block_idx, vertices);
        launch.block.for_each(end - start, |v| {
            let v = start + v;
            // SAFETY: read only inputs; one thread writes each vertex's point.
            unsafe {
                let here = point(positions, v);
                let (e0, e1) = (veo.load_unshared(v), veo.load_unshared(v + 1));
                let mut most = 0;
                for i in e0..e1 {
                    most = most.max(kinds.load_unshared(index(vee.load_unshared(i))));
                }
                // The mean midpoint of the edges, or of the boundary ones.
                let midpoints = |outer: bool| {
                    let mut sum = [0.0f32; 3];
                    let mut n = 0;
                    for i in e0..e1 {
                        let e = index(vee.load_unshared(i));
                        if !outer || kinds.load_unshared(e) == 1 {
                            let (a, b) = (pairs.load_unshared(2 * e), pairs.load_unshared(2 * e + 1));
                            sum = add(sum, scale(add(point(positions, a), point(positions, b)), 0.5));
                            n += 1;
                        }
                    }
                    (mean(sum, n), n)
                };
                let p = if most == 2 || (most == 0 && vco.load_unshared(v) == vco.load_unshared(v + 1)) {
                    here
                } else if most == 1 {
                    let (r, n) = midpoints(true);
                    let boundary = |f: u32| on_boundary.load_unshared(f) != 0;
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
                store_point(out, v, p);
            }
        });
    }
}

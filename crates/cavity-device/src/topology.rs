//! The mesh's global connectivity built on the device from its faces alone,
//! as `cavity::topology::Topology` builds it on the host and equal to it
//! entry for entry: the vertex-face rows (VF), the unique edges numbered
//! in increasing `(min, max)` order (EV), each edge's faces (EF) and each
//! face's edges (FE). One thread a vertex or a corner, by counts, scans and
//! fills (the count-scan-fill construction of sparse relations of Mahmoud
//! et al. 2024, "A Ternary Sparse Matrix Representation for Volumetric
//! Mesh Subdivision and Processing on GPUs", section 4, Algorithm 1):
//!
//! 1. VF: [`CountCorners`] counts each vertex's corners, the host scans the
//!    counts into the rows' offsets, [`FillVertexFaces`] places each
//!    corner's face by an atomic cursor, [`SortVertexFaces`] sorts each row
//!    ([`shell_sort`]) so that the result does not depend on the order the
//!    atomics took (a face with a repeated vertex is listed once a
//!    corner);
//! 2. sides: each vertex `a` has the sides `(a, b)`, `b >= a`, of the
//!    faces around it ([`CountSides`], a scan, [`FillSides`]), sorted by
//!    `(b, corner)`: the runs of equal `b` are `a`'s edges, each with its
//!    faces in increasing order; [`FillSides`] counts the runs;
//! 3. edges: after a scan of the runs' counts (each vertex's first edge),
//!    [`FillEdges`] writes EV, EF's offsets (the runs' starts) and faces,
//!    and FE (each side's corner gets its run's edge).
//!
//! [`MarkDuplicateFaces`] marks the faces with the vertices of an earlier
//! one. (The edges' lengths are summed by `crate::survey::EdgeMeasure`.)

use crate::array::{BOUNDS, In, InOut, chunk};

/// Gaps of [`shell_sort`]: Ciura's sequence (to 701), extended by factors
/// of 2.25 to rows of millions of entries. A row of a few entries sorts by
/// insertion (the last gap); a long one (the sides of a fan's apex, its
/// neighbours numbered at random) in a few dozen steps an entry rather than
/// insertion's `n / 4`.
const GAPS: [u32; 17] = [
    1_149_241, 510_774, 227_011, 100_894, 44_842, 19_930, 8_858, 3_937, 1_750, 701, 301, 132, 57,
    23, 10, 4, 1,
];

/// Sorts the entries `[lo, hi)` of an array in increasing order of their
/// keys, read by `get` and written by `set` (Shell sort over `GAPS`, in
/// place; one thread). Public for the tests, which sort arrays of every
/// length through it.
#[inline(always)]
pub fn shell_sort(lo: u32, hi: u32, get: impl Fn(u32) -> u64, set: impl Fn(u32, u64)) {
    let n = hi.saturating_sub(lo);
    for gap in GAPS {
        if gap >= n {
            continue;
        }
        for i in lo + gap..hi {
            let x = get(i);
            let mut j = i;
            while j >= lo + gap && get(j - gap) > x {
                set(j, get(j - gap));
                j -= gap;
            }
            set(j, x);
        }
    }
}

/// The rows `[offsets[v], offsets[v + 1])` of the vertices in the block's
/// chunk of `vertices`, each passed to `each(v, start, end)`.
#[inline(always)]
fn rows_of<B: crate::block::Block>(
    launch: &crate::kernel::Launch<'_, B>,
    offsets: &In<u32>,
    vertices: u32,
    mut each: impl FnMut(u32, u32, u32),
) {
    let (start, end) = chunk(launch.block_idx, vertices);
    launch.block.for_each(end - start, |k| {
        let v = start + k;
        each(v, offsets.get(v), offsets.get(v + 1));
    });
}

/// Calls `each(upper, corner)` for every side `(a, upper)` with
/// `upper >= a` of the distinct faces of vertex `a`'s sorted VF row
/// `[lo, hi)` (`faces`: three vertices a face), `corner` being `3 f + k`
/// for the side from corner `k` to corner `k + 1` of face `f`.
#[inline(always)]
fn sides_of(
    faces: &In<u32>,
    vf: &In<u32>,
    a: u32,
    (lo, hi): (u32, u32),
    mut each: impl FnMut(u32, u32),
) {
    for i in lo..hi {
        let f = vf.get(i);
        if i > lo && vf.get(i - 1) == f {
            continue;
        }
        for k in 0..3u32 {
            let x = faces.get((3 * f).wrapping_add(k));
            let y = faces.get((3 * f).wrapping_add(if k == 2 { 0 } else { k + 1 }));
            if x.min(y) == a {
                each(x.max(y), (3 * f).wrapping_add(k));
            }
        }
    }
}

crate::kernel! {
    @core
    /// Adds one to `counts[v]` for each of the `corners` corners (`faces`,
    /// three vertices a face, flattened) at vertex `v`; one block per
    /// chunk of corners.
    ///
    /// # Safety
    /// Checked: `faces` is only read, `counts` counted atomically.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel CountCorners(launch, faces: In<u32>, corners: u32, counts: InOut<u32>) {
        let (start, end) = chunk(launch.block_idx, corners);
        launch.block.for_each(end - start, |k| {
            counts.fetch_add(faces.get(start + k), 1);
        });
    }
}

crate::kernel! {
    @core
    /// Writes the face of each of the `corners` corners (`faces`) into its
    /// vertex's row of `vf` (`vf_offsets`: the exclusive scan of
    /// [`CountCorners`]'s counts) at the place `cursor[v]` (zero at the
    /// start) hands out; one block per chunk of corners.
    ///
    /// # Safety
    /// Checked: the inputs are only read; `cursor` and `vf` are written
    /// atomically.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel FillVertexFaces(
        launch,
        faces: In<u32>,
        corners: u32,
        vf_offsets: In<u32>,
        cursor: InOut<u32>,
        vf: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, corners);
        launch.block.for_each(end - start, |k| {
            let c = start + k;
            let v = faces.get(c);
            vf.set(vf_offsets.get(v).wrapping_add(cursor.fetch_add(v, 1)), c / 3);
        });
    }
}

crate::kernel! {
    @core
    /// Sorts each of the `vertices` rows of (`vf_offsets`, `vf`) in
    /// increasing order; one block per chunk of rows.
    ///
    /// # Safety
    /// Checked: `vf_offsets` is only read; `vf` is read and written
    /// atomically (rows that overlap, which no offsets make, would only
    /// mix their entries).
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel SortVertexFaces(launch, vf_offsets: In<u32>, vertices: u32, vf: InOut<u32>) {
        rows_of(launch, &vf_offsets, vertices, |_, lo, hi| {
            shell_sort(lo, hi, |i| u64::from(vf.get(i)), |i, x| vf.set(i, x as u32));
        });
    }
}

crate::kernel! {
    @core
    /// `counts[a]`: the sides `(a, b)`, `b >= a`, of the distinct faces
    /// around each of the `vertices` vertices `a` (`faces`; `vf`: the
    /// sorted VF rows, `[offsets, faces]`); one block per chunk of
    /// vertices.
    ///
    /// # Safety
    /// Checked: the inputs are only read; each thread writes its vertex's
    /// count.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel CountSides(
        launch,
        faces: In<u32>,
        vf: crate::array::Ins<u32, 2>,
        vertices: u32,
        counts: InOut<u32>,
    ) {
        let [vf_offsets, vf_faces] = &vf.0;
        rows_of(launch, vf_offsets, vertices, |a, lo, hi| {
            let mut count = 0;
            sides_of(&faces, vf_faces, a, (lo, hi), |_, _| count += 1);
            counts.set(a, count);
        });
    }
}

crate::kernel! {
    @core
    /// Writes the sides of each of the `vertices` vertices `a` (as
    /// [`CountSides`] counts them) into its rows of `upper` (the side's
    /// other end) and `corner` (`3 f + k`), from `side_offsets[a]` (the
    /// exclusive scan of the counts), sorted by `(upper, corner)`, and the
    /// number of distinct uppers (`a`'s edges) into `edge_counts[a]`; one
    /// block per chunk of vertices.
    ///
    /// # Safety
    /// Checked: the inputs are only read; each thread writes its vertex's
    /// rows and count (rows that overlap, which no offsets make, would
    /// only mix their entries).
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel FillSides(
        launch,
        faces: In<u32>,
        vf: crate::array::Ins<u32, 2>,
        side_offsets: In<u32>,
        vertices: u32,
        upper: InOut<u32>,
        corner: InOut<u32>,
        edge_counts: InOut<u32>,
    ) {
        let [vf_offsets, vf_faces] = &vf.0;
        let (start, end) = chunk(launch.block_idx, vertices);
        launch.block.for_each(end - start, |k| {
            let a = start + k;
            let (lo, hi) = (side_offsets.get(a), side_offsets.get(a + 1));
            let mut at = lo;
            sides_of(&faces, vf_faces, a, (vf_offsets.get(a), vf_offsets.get(a + 1)), |b, c| {
                upper.set(at, b);
                corner.set(at, c);
                at += 1;
            });
            let get = |i: u32| u64::from(upper.get(i)) << 32 | u64::from(corner.get(i));
            let set = |i: u32, x: u64| {
                upper.set(i, (x >> 32) as u32);
                corner.set(i, x as u32);
            };
            shell_sort(lo, hi, get, set);
            let mut edges = 0;
            for i in lo..hi {
                if i == lo || upper.get(i - 1) != upper.get(i) {
                    edges += 1;
                }
            }
            edge_counts.set(a, edges);
        });
    }
}

crate::kernel! {
    @core
    /// The edges of each of the `vertices` vertices `a` from its sorted
    /// sides (`sides`: `[offsets, upper, corner]`, as [`FillSides`] left
    /// them), numbered from `edge_offsets[a]` (the exclusive scan of
    /// [`FillSides`]' counts, `vertices + 1` words): `ev` (two words an
    /// edge, `[a, upper]`), `ef_offsets` (a run's first side; the last
    /// vertex's thread also writes the end, the number of sides), `ef`
    /// (each side's face) and `fe` (each side's corner gets its edge); one
    /// block per chunk of vertices.
    ///
    /// # Safety
    /// Checked: the inputs are only read; each thread writes its vertex's
    /// edges and sides and the corners of its sides (each corner is one
    /// vertex's side).
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel FillEdges(
        launch,
        sides: crate::array::Ins<u32, 3>,
        edge_offsets: In<u32>,
        vertices: u32,
        ev: InOut<u32>,
        ef_offsets: InOut<u32>,
        ef: InOut<u32>,
        fe: InOut<u32>,
    ) {
        let [side_offsets, upper, corner] = &sides.0;
        rows_of(launch, side_offsets, vertices, |a, lo, hi| {
            let mut e = edge_offsets.get(a);
            for i in lo..hi {
                let b = upper.get(i);
                if i == lo || upper.get(i - 1) != b {
                    ev.set(2 * e, a);
                    ev.set(2 * e + 1, b);
                    ef_offsets.set(e, i);
                    e += 1;
                }
                let c = corner.get(i);
                ef.set(i, c / 3);
                fe.set(c, e - 1);
            }
            if a + 1 == vertices {
                ef_offsets.set(edge_offsets.get(vertices), side_offsets.get(vertices));
            }
        });
    }
}

/// Face `f`'s vertices (`faces`: three a face), sorted: equal for faces
/// with the same vertices.
#[inline(always)]
fn sorted_corners(faces: &In<u32>, f: u32) -> [u32; 3] {
    let at = |k: u32| faces.get((3 * f).wrapping_add(k));
    let (a, b, c) = (at(0), at(1), at(2));
    let (lo, hi) = (a.min(b), a.max(b));
    if c < lo {
        [c, lo, hi]
    } else if c < hi {
        [lo, c, hi]
    } else {
        [lo, hi, c]
    }
}

crate::kernel! {
    @core
    /// `marks[f]` (1 or 0) for each of the `count` faces (`faces`): whether
    /// an earlier face has the same vertices, looked for among the faces of
    /// its first edge (`fe`: three edges a face; `ef`: `[offsets, faces]`),
    /// which a duplicate shares; `total[0]` counts the marked faces (zero
    /// at the start). One block per chunk of faces.
    ///
    /// # Safety
    /// Checked: the inputs are only read; each thread writes its faces'
    /// marks, the count is added atomically.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel MarkDuplicateFaces(
        launch,
        faces: In<u32>,
        fe: In<u32>,
        ef: crate::array::Ins<u32, 2>,
        count: u32,
        marks: InOut<u32>,
        total: InOut<u32>,
    ) {
        let [ef_offsets, ef_faces] = &ef.0;
        let (start, end) = chunk(launch.block_idx, count);
        launch.block.for_each(end - start, |k| {
            let f = start + k;
            let key = sorted_corners(&faces, f);
            let e = fe.get(3 * f);
            let mut repeated = false;
            for i in ef_offsets.get(e)..ef_offsets.get(e.wrapping_add(1)) {
                let g = ef_faces.get(i);
                if g < f && sorted_corners(&faces, g) == key {
                    repeated = true;
                }
            }
            marks.set(f, u32::from(repeated));
            if repeated {
                total.fetch_add(0, 1);
            }
        });
    }
}

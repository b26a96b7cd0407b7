//! A mesh surveyed on the device from its relations (as
//! [`crate::topology`] builds them): what `cavity::stats::Survey` finds on
//! the host around each vertex, and the measures of an output's quality
//! statistics (the dynamic paper's table 4, section 6.3), as one thread an
//! edge, a vertex or a face and partial reductions the host combines in
//! block order ([`write_partial`]):
//!
//! - [`CountEdgeEnds`]: each vertex's edges (its valence) and boundary
//!   edges (exactly one face), by atomic counts over the edges;
//!   [`ListBoundaryEdges`] lists the boundary edges, whose components the
//!   host counts as boundary loops;
//! - [`CountFans`]: each vertex's fans, its faces joined through its edges
//!   of exactly two faces (a union-find over the vertex's VF row);
//! - [`SharpCorners`]: the boundary corners whose face angles sum to less
//!   than a given angle, or that are not on exactly two boundary edges;
//! - [`EdgeMeasure`], [`VertexMeasure`], [`FaceMeasure`]: sums, minima,
//!   maxima and counts over the edges, vertices and faces (the
//!   [`measure`] constants name them).

use crate::array::{BOUNDS, In, InOut, Ins, chunk, write_partial};
use crate::block::{Block, combine_scratch_len};
use crate::geometry::double::{cross, dot, norm, sub};
use crate::kernel::Launch;

/// What [`EdgeMeasure`], [`VertexMeasure`] and [`FaceMeasure`] reduce.
pub mod measure {
    /// Edges: the sum of their lengths.
    pub const LENGTH_SUM: u32 = 0;
    /// Edges: the shortest length.
    pub const LENGTH_MIN: u32 = 1;
    /// Edges: the longest length.
    pub const LENGTH_MAX: u32 = 2;
    /// Edges: those of length within `[low, high]`.
    pub const IN_BAND: u32 = 3;
    /// Edges: those of length at most `zero`.
    pub const ZERO_LENGTH: u32 = 4;
    /// Edges: those with exactly one face.
    pub const BOUNDARY: u32 = 5;
    /// Edges: those with three or more faces.
    pub const NON_MANIFOLD: u32 = 6;
    /// Vertices: those with no face.
    pub const ISOLATED: u32 = 7;
    /// Vertices: those with more than one fan.
    pub const MANY_FANS: u32 = 8;
    /// Vertices with a face: the smallest valence.
    pub const VALENCE_MIN: u32 = 9;
    /// Vertices with a face: the largest valence.
    pub const VALENCE_MAX: u32 = 10;
    /// Vertices with a face: the sum of their valences.
    pub const VALENCE_SUM: u32 = 11;
    /// Faces: the smallest interior angle, in degrees.
    pub const ANGLE_MIN: u32 = 12;
    /// Faces with no vertex flagged in either of two per-vertex arrays:
    /// the smallest interior angle, in degrees (180 for none).
    pub const ANGLE_MIN_AWAY: u32 = 13;
    /// Faces: those of zero area (height at most `zero_height` times the
    /// longest side).
    pub const ZERO_AREA: u32 = 14;

    /// The neutral value of measure `what`'s reduction: the starting
    /// value of a block with no items.
    #[inline(always)]
    pub fn neutral(what: u32) -> f64 {
        match what {
            LENGTH_MIN | VALENCE_MIN => f64::INFINITY,
            ANGLE_MIN | ANGLE_MIN_AWAY => 180.0,
            LENGTH_MAX | VALENCE_MAX => 0.0,
            _ => 0.0,
        }
    }

    /// Measure `what`'s reduction of two values.
    #[inline(always)]
    pub fn combine(what: u32, a: f64, b: f64) -> f64 {
        match what {
            LENGTH_MIN | VALENCE_MIN | ANGLE_MIN | ANGLE_MIN_AWAY => a.min(b),
            LENGTH_MAX | VALENCE_MAX => a.max(b),
            _ => a + b,
        }
    }
}

/// Point `v` of `positions` (three `f32` a vertex) in `f64`.
#[inline(always)]
fn point(positions: &In<f32>, v: u32) -> [f64; 3] {
    let at = |c: u32| f64::from(positions.get((3 * v).wrapping_add(c)));
    [at(0), at(1), at(2)]
}

/// The angle between `u` and `w`, in degrees.
#[inline(always)]
fn angle(u: [f64; 3], w: [f64; 3]) -> f64 {
    libm::atan2(norm(cross(u, w)), dot(u, w)).to_degrees()
}

/// The corners of face `f` (`faces`: three vertices a face).
#[inline(always)]
fn corners(faces: &In<u32>, positions: &In<f32>, f: u32) -> [[f64; 3]; 3] {
    let at = |k: u32| point(positions, faces.get((3 * f).wrapping_add(k)));
    [at(0), at(1), at(2)]
}

/// The interior angle at corner `k` of a triangle, in degrees.
#[inline(always)]
fn corner_angle(p: &[[f64; 3]; 3], k: usize) -> f64 {
    angle(sub(p[(k + 1) % 3], p[k]), sub(p[(k + 2) % 3], p[k]))
}

/// The smallest interior angle of a triangle, in degrees: the angle
/// opposite its shortest side (the lowest corner among equal sides).
#[inline(always)]
fn smallest_angle(p: &[[f64; 3]; 3]) -> f64 {
    // Side k runs from corner k + 1 to corner k + 2, opposite corner k.
    let side = |k: usize| {
        let d = sub(p[(k + 2) % 3], p[(k + 1) % 3]);
        dot(d, d)
    };
    let mut k = 0;
    for j in 1..3 {
        if side(j) < side(k) {
            k = j;
        }
    }
    corner_angle(p, k)
}

/// Whether a triangle has zero area: its height over the longest side at
/// most `zero_height` times that side (twice the area against
/// `zero_height` times the longest side squared).
#[inline(always)]
fn zero_area(p: &[[f64; 3]; 3], zero_height: f64) -> bool {
    let [a, b, c] = *p;
    let longest = [sub(b, a), sub(c, b), sub(a, c)]
        .iter()
        .map(|e| dot(*e, *e))
        .fold(0.0, f64::max);
    norm(cross(sub(b, a), sub(c, a))) <= zero_height * longest
}

/// Calls `each(item)` for every item of the block's chunk of `n`, then
/// writes the reduction of measure `what` of the values `each` returned
/// as the block's partial.
#[inline(always)]
fn reduce<B: Block>(
    launch: &mut Launch<'_, B>,
    n: u32,
    what: u32,
    partials: &InOut<u32>,
    mut each: impl FnMut(u32) -> f64,
) {
    let (start, end) = chunk(launch.block_idx, n);
    let mut value = measure::neutral(what);
    launch.block.for_each(end - start, |k| {
        value = measure::combine(what, value, each(start + k));
    });
    let scratch = launch
        .arena
        .alloc::<u32>(combine_scratch_len(launch.block.block_dim()));
    launch.arena.check();
    let combine = |a, b| measure::combine(what, a, b);
    write_partial(
        launch.block,
        scratch,
        value,
        combine,
        partials,
        launch.block_idx,
    );
}

/// The number of faces of edge `e` (`ef_offsets`: the EF rows' offsets).
#[inline(always)]
fn faces_of(ef_offsets: &In<u32>, e: u32) -> u32 {
    ef_offsets
        .get(e.wrapping_add(1))
        .wrapping_sub(ef_offsets.get(e))
}

crate::kernel! {
    @core
    /// For each of the `edges` edges (`ev`: two vertices each;
    /// `ef_offsets`: their EF rows' offsets), adds one to `valence` at both
    /// ends, and to `boundary_at` at both ends of an edge with exactly one
    /// face; one block per chunk of edges.
    ///
    /// # Safety
    /// Checked: the inputs are only read, the counts added atomically.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel CountEdgeEnds(
        launch,
        ev: In<u32>,
        ef_offsets: In<u32>,
        edges: u32,
        valence: InOut<u32>,
        boundary_at: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, edges);
        launch.block.for_each(end - start, |k| {
            let e = start + k;
            let (a, b) = (ev.get(2 * e), ev.get(2 * e + 1));
            valence.fetch_add(a, 1);
            valence.fetch_add(b, 1);
            if faces_of(&ef_offsets, e) == 1 {
                boundary_at.fetch_add(a, 1);
                boundary_at.fetch_add(b, 1);
            }
        });
    }
}

crate::kernel! {
    @core
    /// Lists the edges with exactly one face among the `edges` edges (`ev`,
    /// `ef_offsets` as [`CountEdgeEnds`] reads them) in `list`: word 0
    /// counts them (zero at the start), edge `i` of the list is words
    /// `1 + 2 i` and `2 + 2 i`, in no particular order; one block per
    /// chunk of edges.
    ///
    /// # Safety
    /// Checked: the inputs are only read; the count hands out the places.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel ListBoundaryEdges(
        launch,
        ev: In<u32>,
        ef_offsets: In<u32>,
        edges: u32,
        list: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, edges);
        launch.block.for_each(end - start, |k| {
            let e = start + k;
            if faces_of(&ef_offsets, e) == 1 {
                let i = list.fetch_add(0, 1);
                list.set(1 + 2 * i, ev.get(2 * e));
                list.set(2 + 2 * i, ev.get(2 * e + 1));
            }
        });
    }
}

crate::kernel! {
    @core
    /// `fans[v]`: the fans of each of the `vertices` vertices, its faces
    /// (its sorted VF row, `vf`: `[offsets, faces]`) joined through its
    /// edges of exactly two faces (`fe`: three edges a face, the edge of
    /// the side from corner `k` to corner `k + 1` at `3 f + k`; `ef`:
    /// `[offsets, faces]`), by a union-find over the row in `parent` (as
    /// long as `vf`'s faces); one block per chunk of vertices.
    ///
    /// # Safety
    /// Checked: the inputs are only read; each thread writes its vertex's
    /// row of `parent` and its count.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel CountFans(
        launch,
        faces: In<u32>,
        fe: In<u32>,
        ef: Ins<u32, 2>,
        vf: Ins<u32, 2>,
        vertices: u32,
        parent: InOut<u32>,
        fans: InOut<u32>,
    ) {
        let [vf_offsets, vf_faces] = &vf.0;
        let [ef_offsets, ef_faces] = &ef.0;
        let (start, end) = chunk(launch.block_idx, vertices);
        launch.block.for_each(end - start, |k| {
            let v = start + k;
            let (lo, hi) = (vf_offsets.get(v), vf_offsets.get(v + 1));
            // SAFETY: the VF rows do not overlap (their offsets are a scan,
            // `Backend::survey`), so no other thread writes this thread's
            // row of `parent` during the launch.
            let get = |i: u32| unsafe { parent.get_unshared(i) };
            // SAFETY: as for `get`: no other thread reads or writes the row.
            let set = |i: u32, x: u32| unsafe { parent.set_unshared(i, x) };
            for i in lo..hi {
                set(i, i);
            }
            let root = |mut x: u32| {
                while get(x) != x {
                    let up = get(get(x));
                    set(x, up);
                    x = up;
                }
                x
            };
            let mut sets = hi - lo;
            for i in lo..hi {
                let f = vf_faces.get(i);
                let mut at = 0;
                while at < 2 && faces.get((3 * f).wrapping_add(at)) != v {
                    at += 1;
                }
                // The sides at v: from corner `at`, and into it.
                for side in [at, (at + 2) % 3] {
                    let e = fe.get((3 * f).wrapping_add(side));
                    if faces_of(ef_offsets, e) != 2 {
                        continue;
                    }
                    let s = ef_offsets.get(e);
                    let g = if ef_faces.get(s) == f { ef_faces.get(s + 1) } else { ef_faces.get(s) };
                    // g's place in the sorted row: the first entry not
                    // below it.
                    let (mut a, mut b) = (lo, hi);
                    while a < b {
                        let m = a + (b - a) / 2;
                        if vf_faces.get(m) < g { a = m + 1 } else { b = m }
                    }
                    if a == hi || vf_faces.get(a) != g {
                        continue;
                    }
                    let (x, y) = (root(i), root(a));
                    if x != y {
                        set(x.max(y), x.min(y));
                        sets -= 1;
                    }
                }
            }
            fans.set(v, sets);
        });
    }
}

crate::kernel! {
    @core
    /// `sharp[v]` (1 or 0) for each of the `vertices` vertices: whether it
    /// is a sharp boundary corner, on a boundary edge (`boundary_at`) and
    /// either not on exactly two, or with its faces' angles at it (`vf`:
    /// `[offsets, faces]`, `faces` at `positions`) summing to less than
    /// `degrees`; one block per chunk of vertices.
    ///
    /// # Safety
    /// Checked: the inputs are only read; each thread writes its vertex's
    /// flag.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel SharpCorners(
        launch,
        faces: In<u32>,
        positions: In<f32>,
        vf: Ins<u32, 2>,
        boundary_at: In<u32>,
        vertices: u32,
        degrees: f64,
        sharp: InOut<u32>,
    ) {
        let [vf_offsets, vf_faces] = &vf.0;
        let (start, end) = chunk(launch.block_idx, vertices);
        launch.block.for_each(end - start, |k| {
            let v = start + k;
            let flag = match boundary_at.get(v) {
                0 => false,
                2 => {
                    let mut sum = 0.0;
                    for i in vf_offsets.get(v)..vf_offsets.get(v + 1) {
                        let f = vf_faces.get(i);
                        let mut at = 0;
                        while at < 2 && faces.get((3 * f).wrapping_add(at)) != v {
                            at += 1;
                        }
                        sum += corner_angle(&corners(&faces, &positions, f), at as usize);
                    }
                    sum < degrees
                }
                _ => true,
            };
            sharp.set(v, u32::from(flag));
        });
    }
}

crate::kernel! {
    @core
    /// Measure `what` ([`measure`]: `LENGTH_SUM` to `NON_MANIFOLD`) over
    /// the `edges` edges (`ev`: two vertices each, at `positions`;
    /// `ef_offsets`: their EF rows' offsets), lengths in `f64`; `low`,
    /// `high`: the band's ends; `zero`: the zero length. Partial `b` of `partials` is
    /// block `b`'s ([`write_partial`]). Dynamic shared memory
    /// [`partial_shared_bytes`](crate::array::partial_shared_bytes).
    ///
    /// # Safety
    /// Checked: the inputs are only read; one thread of each block writes
    /// its partial.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel EdgeMeasure(
        launch,
        ev: In<u32>,
        ef_offsets: In<u32>,
        positions: In<f32>,
        edges: u32,
        what: u32,
        low: f64,
        high: f64,
        zero: f64,
        partials: InOut<u32>,
    ) {
        reduce(launch, edges, what, &partials, |e| {
            let length = || {
                let d = sub(point(&positions, ev.get(2 * e + 1)), point(&positions, ev.get(2 * e)));
                norm(d)
            };
            let count = |yes: bool| if yes { 1.0 } else { 0.0 };
            match what {
                measure::IN_BAND => {
                    let l = length();
                    count(l >= low && l <= high)
                }
                measure::ZERO_LENGTH => count(length() <= zero),
                measure::BOUNDARY => count(faces_of(&ef_offsets, e) == 1),
                measure::NON_MANIFOLD => count(faces_of(&ef_offsets, e) >= 3),
                _ => length(),
            }
        });
    }
}

crate::kernel! {
    @core
    /// Measure `what` ([`measure`]: `ISOLATED` to `VALENCE_SUM`) over the
    /// `vertices` vertices (`vf_offsets`: their VF rows' offsets;
    /// `valence`, `fans`: per vertex). Partials as [`EdgeMeasure`]'s.
    ///
    /// # Safety
    /// Checked: the inputs are only read; one thread of each block writes
    /// its partial.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel VertexMeasure(
        launch,
        vf_offsets: In<u32>,
        valence: In<u32>,
        fans: In<u32>,
        vertices: u32,
        what: u32,
        partials: InOut<u32>,
    ) {
        reduce(launch, vertices, what, &partials, |v| {
            let used = vf_offsets.get(v) < vf_offsets.get(v + 1);
            match what {
                measure::ISOLATED => if used { 0.0 } else { 1.0 },
                measure::MANY_FANS => if fans.get(v) > 1 { 1.0 } else { 0.0 },
                _ if !used => measure::neutral(what),
                _ => f64::from(valence.get(v)),
            }
        });
    }
}

crate::kernel! {
    @core
    /// Measure `what` ([`measure`]: `ANGLE_MIN` to `ZERO_AREA`) over the
    /// `count` faces (`faces`: three vertices each, at `positions`);
    /// `flags`: two per-vertex arrays, a face with a vertex nonzero in
    /// either left out of `ANGLE_MIN_AWAY`. Partials as [`EdgeMeasure`]'s.
    ///
    /// # Safety
    /// Checked: the inputs are only read; one thread of each block writes
    /// its partial.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel FaceMeasure(
        launch,
        faces: In<u32>,
        positions: In<f32>,
        flags: Ins<u32, 2>,
        count: u32,
        what: u32,
        zero_height: f64,
        partials: InOut<u32>,
    ) {
        let [first, second] = &flags.0;
        reduce(launch, count, what, &partials, |f| {
            let p = corners(&faces, &positions, f);
            match what {
                measure::ZERO_AREA => if zero_area(&p, zero_height) { 1.0 } else { 0.0 },
                measure::ANGLE_MIN_AWAY => {
                    let flagged = (0..3).any(|k| {
                        let v = faces.get((3 * f).wrapping_add(k));
                        first.get(v) != 0 || second.get(v) != 0
                    });
                    if flagged { 180.0 } else { smallest_angle(&p) }
                }
                _ => smallest_angle(&p),
            }
        });
    }
}

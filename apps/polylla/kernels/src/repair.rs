//! The repair. Before the polygons are linked (GPolylla's Algorithm 11):
//! at each barrier tip (a vertex of one frontier edge) the middle edge of
//! its star becomes a frontier edge and both its half-edges seeds. After
//! they are linked (issue 52): every barrier edge left (a polygon walking
//! an edge in both directions, where its region wraps around other
//! regions and no barrier tip ends the edge) is split by one more
//! frontier edge ([`Bridges`], [`bridge_chord`]), and only the polygons
//! split are linked again: [`RelinkChords`] around the chords' ends,
//! [`SplitPolygons`] from the chords' half-edges.

use cavity_device::array::{BOUNDS, In, InOut, Ins, chunk};
use cavity_device::block::SharedArena;

use crate::label::one_end;
use crate::{EXTRA_SHIFT, Mesh};

/// Marks half-edge `x` and its twin, when interior, in the extra bits of
/// their triangles' bytes in `extra` (from bit [`EXTRA_SHIFT`]).
#[inline(always)]
fn mark_extra(m: &Mesh, extra: InOut<u32>, x: u32) {
    for y in [x, m.twin(x)] {
        if y < m.interior {
            extra.or_byte(y / 3, 1 << (EXTRA_SHIFT + y % 3));
        }
    }
}

/// Shared-memory bytes of [`BarrierTips`] (its block's count of tips).
pub fn shared_bytes() -> usize {
    let mut arena = SharedArena::measuring();
    arena.alloc::<u32>(1);
    arena.used()
}

cavity_device::kernel! {
    /// For each of the `counts[1]` vertices that `ends` counts one
    /// frontier edge at (a barrier tip): turns clockwise (`next(twin(h))`)
    /// around it from `edge_of_vertex` to find its frontier half-edge (by
    /// `labels`) and its degree, and marks the `degree / 2`-th half-edge
    /// out of it clockwise from the frontier one, and its twin, in the
    /// extra bits of their triangles' bytes in `extra` (the bytes of
    /// [`crate::LongestEdges`], from bit [`EXTRA_SHIFT`]); adds the tips to
    /// `repaired[0]`. `mesh` holds `twin`, the border half-edges' `next`
    /// and `prev`; `star` `edge_of_vertex`, `labels` and `ends`;
    /// `counts[0]` is the interior half-edges. Dynamic shared memory:
    /// [`shared_bytes`].
    ///
    /// # Safety
    /// Checked: the inputs are only read; the marks are atomic ORs, the
    /// tips an atomic add.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel BarrierTips(
        launch,
        mesh: Ins<u32, 3>,
        counts: [u32; 2],
        star: Ins<u32, 3>,
        extra: InOut<u32>,
        repaired: InOut<u32>,
    ) {
        let [interior, vertices] = counts;
        let block = launch.block;
        let tips = launch.arena.alloc::<u32>(1);
        launch.arena.check();
        let m = Mesh::new(*mesh, interior);
        let [edge_of_vertex, labels, ends] = *star;
        if block.thread_idx() == 0 {
            tips.set(0, 0);
        }
        block.sync();
        let (start, end) = chunk(launch.block_idx, vertices);
        block.for_each(end - start, |k| {
            let v = start + k;
            let first = edge_of_vertex.get(v);
            if !one_end(ends, v) || first == u32::MAX {
                return;
            }
            let (mut h, mut degree, mut tip) = (first, 0u32, first);
            loop {
                if m.frontier(labels, h) {
                    tip = h;
                }
                degree = degree.wrapping_add(1);
                h = m.cw(h);
                if h == first {
                    break;
                }
            }
            let mut middle = tip;
            for _ in 0..degree / 2 {
                middle = m.cw(middle);
            }
            // A tip is an inner vertex (a boundary vertex has two
            // frontier edges on the boundary), so both half-edges of its
            // middle edge are interior ones.
            mark_extra(&m, extra, middle);
            block.shared_fetch_add(tips, 0, 1);
        });
        block.sync();
        if block.thread_idx() == 0 && tips.get(0) > 0 {
            repaired.fetch_add(0, tips.get(0));
        }
    }
}

cavity_device::kernel! {
    /// Adds the tips' new frontier half-edges (the extra bits of `extra`)
    /// to the frontier and seed bits of `labels`, over `words` words (four
    /// triangles' bytes each).
    ///
    /// # Safety
    /// Checked: `extra` is only read; one thread reads and writes each
    /// word of `labels`, named by its index.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel MergeExtra(launch, extra: In<u32>, labels: InOut<u32>, words: u32) {
        let (start, end) = chunk(launch.block_idx, words);
        launch.block.for_each(end - start, |k| {
            let w = start + k;
            let new = extra.get(w) >> EXTRA_SHIFT & 0x0707_0707;
            // SAFETY: one thread reads and writes each word.
            unsafe { labels.set_unshared(w, labels.get_unshared(w) | new | new << 3) };
        });
    }
}

/// The new frontier edge that splits the polygon walking barrier edge `h`
/// in both directions (`h` the smaller of its half-edges; `labels` the
/// frontier bits, `new_next` the polygons' links): `(w, u)` of `h`'s
/// triangle `(u, v, w)` when the polygon's half-edge out of `w` at the
/// triangle's corner (the first frontier half-edge clockwise from `w → u`)
/// comes before `twin(h)` walking from `h`, else `(v, w)`. The rule, and
/// why the chord separates the two half-edges of `h`, of the host's
/// `sequential::bridge_chord`.
#[inline(always)]
pub fn bridge_chord(m: &Mesh, labels: In<u32>, new_next: In<u32>, h: u32) -> u32 {
    let (a, b) = (m.next(h), m.prev(h));
    let mut x = b;
    while !m.frontier(labels, x) {
        x = m.cw(x);
    }
    let t = m.twin(h);
    let mut g = new_next.get(h);
    while g != t && g != x {
        g = new_next.get(g);
    }
    if g == x { b } else { a }
}

cavity_device::kernel! {
    /// Writes in `ids` the least half-edge plus one at every half-edge of
    /// each of the `n` polygons of `polygons` (their least half-edges,
    /// walking `new_next`): the polygons that several seeds walked in
    /// [`crate::PolygonSeeds`].
    ///
    /// # Safety
    /// Checked: the inputs are only read; each polygon's words of `ids`
    /// are written by the one thread walking it (atomic stores).
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel SharedIds(launch, new_next: In<u32>, polygons: In<u32>, n: u32, ids: InOut<u32>) {
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let p = polygons.get(start + k);
            let mark = p.wrapping_add(1);
            let mut e = p;
            loop {
                ids.set(e, mark);
                e = new_next.get(e);
                if e == p {
                    break;
                }
            }
        });
    }
}

cavity_device::kernel! {
    /// For each interior half-edge `h` below its twin (`counts[0]` of
    /// them): when both lie on one polygon (equal non-zero `ids`, a half-edge
    /// of that polygon plus one, written by [`crate::PolygonSeeds`] and
    /// [`SharedIds`]), `h`'s edge is a barrier edge: its [`bridge_chord`]
    /// is marked, both half-edges, in the extra bits of `extra` (the bytes
    /// of [`crate::LongestEdges`]) and in `chords` (a bit per interior
    /// half-edge: the seeds of the pieces, [`SplitPolygons`]), and
    /// counted in `found[1]`. The thread of the polygon's least barrier
    /// half-edge (walking the polygon once) takes the polygon's bit out of
    /// `polygons` (those of [`crate::PolygonSeeds`]), which its pieces
    /// replace. The chords are chosen on the polygons as they are
    /// (no launch reads the extra bits). `mesh` holds `twin`, the border
    /// half-edges' `next` and `prev`; `walk` the labels, `new_next` and
    /// `ids`.
    ///
    /// # Safety
    /// Checked: the inputs are only read; the marks are atomic ORs, the
    /// count an atomic add, a polygon's bit cleared by one thread with an
    /// atomic subtraction (of a bit that is set, so no borrow).
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel Bridges(
        launch,
        mesh: Ins<u32, 3>,
        interior: u32,
        walk: Ins<u32, 3>,
        extra: InOut<u32>,
        found: InOut<u32>,
        polygons: InOut<u32>,
        chords: InOut<u32>,
    ) {
        let m = Mesh::new(*mesh, interior);
        let [labels, new_next, ids] = *walk;
        // Whether `e`, a half-edge of polygon `id` (or `id` zero), is the
        // smaller half-edge of a barrier edge.
        let barrier = |e: u32, id: u32| {
            let t = m.twin(e);
            e < t && t < interior && id != 0 && ids.get(t) == id
        };
        let (start, end) = chunk(launch.block_idx, interior);
        launch.block.for_each(end - start, |k| {
            let h = start + k;
            let id = ids.get(h);
            if !barrier(h, id) {
                return;
            }
            let chord = bridge_chord(&m, labels, new_next, h);
            mark_extra(&m, extra, chord);
            chords.set_bit(chord);
            chords.set_bit(m.twin(chord));
            found.fetch_add(1, 1);
            let (mut least, mut first, mut e) = (h, true, new_next.get(h));
            while e != h {
                least = least.min(e);
                first &= e > h || !barrier(e, id);
                e = new_next.get(e);
            }
            if first {
                polygons.fetch_add(least / 32, (1u32 << (least % 32)).wrapping_neg());
            }
        });
    }
}

cavity_device::kernel! {
    /// For each of the `counts[1]` half-edges `x` of `chords` (both
    /// half-edges of each new frontier edge of [`Bridges`], already in
    /// `labels`), the links [`crate::Relink`] gives with those labels, and
    /// only those that the chords change: `x`'s new `next` is the first
    /// frontier half-edge `n` turning clockwise from `next(x)` (`x` the new
    /// `prev` of `n`), and `x` is the new `next` of `p`, the twin of the
    /// first frontier half-edge turning counter-clockwise around `x`'s
    /// origin from `x` (`p` the new `prev` of `x`). Every other frontier
    /// half-edge keeps its successor (its clockwise turn meets no chord
    /// first) and its predecessor. `mesh` holds `twin`, the border
    /// half-edges' `next` and `prev`; `counts[0]` is the interior
    /// half-edges.
    ///
    /// # Safety
    /// Checked: the inputs are only read; the links are atomic stores,
    /// and threads that write the same word (two chords at one corner)
    /// write the same value.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel RelinkChords(
        launch,
        mesh: Ins<u32, 3>,
        labels: In<u32>,
        counts: [u32; 2],
        chords: In<u32>,
        new_next: InOut<u32>,
        new_prev: InOut<u32>,
    ) {
        let [interior, n] = counts;
        let m = Mesh::new(*mesh, interior);
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let x = chords.get(start + k);
            let mut after = m.next(x);
            while !m.frontier(labels, after) {
                after = m.cw(after);
            }
            new_next.set(x, after);
            new_prev.set(after, x);
            let mut before = m.ccw(x);
            while !m.frontier(labels, before) {
                before = m.ccw(before);
            }
            let p = m.twin(before);
            new_next.set(p, x);
            new_prev.set(x, p);
        });
    }
}

cavity_device::kernel! {
    /// Sets in `polygons` (a bit per interior half-edge) the bit of the
    /// smallest half-edge of the polygon of each of the `n` half-edges of
    /// `seeds` (walking `new_next` around it): the pieces of the polygons
    /// that [`Bridges`] split, from their chords' half-edges (every piece
    /// has one).
    ///
    /// # Safety
    /// Checked: the inputs are only read; the marks are atomic ORs.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel SplitPolygons(launch, new_next: In<u32>, seeds: In<u32>, n: u32, polygons: InOut<u32>) {
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let h = seeds.get(start + k);
            let (mut least, mut e) = (h, new_next.get(h));
            while e != h {
                least = least.min(e);
                e = new_next.get(e);
            }
            polygons.set_bit(least);
        });
    }
}

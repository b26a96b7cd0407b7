//! The greedy conflict resolution: the collapses of an iteration are the
//! lexicographically first maximal independent set of the admissible
//! candidates by cost (ties to the lower index), two candidates being in
//! conflict when a tetrahedron has a vertex of each (the relation of the
//! paper's second pass, section 3.3), found in rounds as by Blelloch,
//! Fineman and Shun ("Greedy Sequential Maximal Independent Set and
//! Matching are Parallel on Average", 2012): in each round every
//! undecided candidate marks the tetrahedra around its vertices with its
//! descriptor (Gautron and Kanzler's atomic propagation,
//! `crate::gautron`), a collapsing one marks them taken; a candidate that
//! holds all of its tetrahedra collapses, one that meets a taken
//! tetrahedron is out. The set is the one the sequential order of the
//! candidates would take, so an iteration collapses as many edges as the
//! candidates allow.
//!
//! One round alone is the conflict detection of Gautron and Kanzler
//! (2023), the baseline of the paper's section 4 (figs. 6-8): each
//! admissible candidate propagates its edge descriptor (cost, then index)
//! to every tetrahedron around both of its vertices by atomic minima, and
//! collapses when it holds every one of them. The 64-bit descriptor is
//! taken in two 32-bit atomic passes: the least cost ([`GreedyKeys`], the
//! cost's bits in an order-preserving key), then the least index among
//! the edges of that cost ([`GreedyIndices`]); [`GreedyDecide`] decides.
//! The minima are kept complemented, as atomic maxima over arrays that
//! start at zero.

use cavity_device::array::{In, InOut, Ins};

use crate::chunk;
use crate::iteration::{Arrays, COLLAPSES, ordered};
use crate::star::Star;

/// The mark of a tetrahedron that a collapsing candidate holds (above
/// every complemented key).
pub const TAKEN: u32 = u32::MAX;
/// The state of a candidate next to a collapsing one. A candidate with a
/// finite cost and state 0 is undecided; [`COLLAPSES`] collapses.
pub const OUT: u32 = 3;

/// A candidate's complemented ordered cost when it is undecided: state 0
/// and a finite cost (an admissible candidate).
#[inline(always)]
fn undecided_key(state: u32, cost: f32) -> Option<u32> {
    (state == 0 && cost != f32::INFINITY).then_some(!ordered(cost))
}

/// Calls `f(t)` for every tetrahedron around `a` or `b`.
#[inline(always)]
fn for_each_around<F: FnMut(u32)>(s: &Arrays, a: u32, b: u32, mut f: F) {
    for v in [a, b] {
        for i in 0..s.star_len(v) {
            f(s.star_tet(v, i));
        }
    }
}

cavity_device::kernel! {
    @core
    /// Starts a round: each undecided candidate of `list` (`state` 0,
    /// finite `cost`) raises `tet_key[t]` (zero at the
    /// start) to its complemented ordered cost for every tetrahedron `t`
    /// around its vertices; a collapsing one ([`COLLAPSES`]) sets
    /// [`TAKEN`]. `aux` is `[edges, list, state]`.
    ///
    /// # Safety
    /// Checked: the inputs are only read; the maxima are atomic.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel GreedyKeys(
        launch,
        mesh: Ins<u32, 4>,
        geometry: Ins<f32, 2>,
        aux: Ins<u32, 3>,
        cost: In<f32>,
        candidates: u32,
        tet_key: InOut<u32>,
    ) {
        let s = Arrays::new(mesh, geometry);
        let [edges, list, state] = *aux;
        let (start, end) = chunk(launch.block_idx, candidates);
        launch.block.for_each(end - start, |k| {
            let e = list.get(start + k);
            let st = state.get(e);
            let key = if st == COLLAPSES {
                TAKEN
            } else if let Some(key) = undecided_key(st, cost.get(e)) {
                key
            } else {
                return;
            };
            for_each_around(&s, edges.get(2 * e), edges.get(2 * e + 1), |t| {
                tet_key.fetch_max(t, key);
            });
        });
    }
}

cavity_device::kernel! {
    @core
    /// Each undecided candidate raises `tet_index[t]` (zero at the start)
    /// to its complemented index for every tetrahedron `t` around its
    /// vertices whose key is its own (`tet_key`). `aux` is `[edges, list,
    /// state, tet_key]`.
    ///
    /// # Safety
    /// Checked: the inputs are only read; the maxima are atomic.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel GreedyIndices(
        launch,
        mesh: Ins<u32, 4>,
        geometry: Ins<f32, 2>,
        aux: Ins<u32, 4>,
        cost: In<f32>,
        candidates: u32,
        tet_index: InOut<u32>,
    ) {
        let s = Arrays::new(mesh, geometry);
        let [edges, list, state, tet_key] = *aux;
        let (start, end) = chunk(launch.block_idx, candidates);
        launch.block.for_each(end - start, |k| {
            let e = list.get(start + k);
            let Some(key) = undecided_key(state.get(e), cost.get(e)) else {
                return;
            };
            for_each_around(&s, edges.get(2 * e), edges.get(2 * e + 1), |t| {
                if tet_key.get(t) == key {
                    tet_index.fetch_max(t, !e);
                }
            });
        });
    }
}

cavity_device::kernel! {
    @core
    /// Ends a round: an undecided candidate next to a [`TAKEN`]
    /// tetrahedron is [`OUT`]; one that holds every tetrahedron
    /// around its vertices (key and index its own) collapses
    /// ([`COLLAPSES`], `e + 1` in `affected` at both vertices); the others
    /// stay undecided and are counted in `undecided[0]`. `aux` is
    /// `[edges, list, tet_key, tet_index]`.
    ///
    /// # Safety
    /// Checked: the inputs are only read; each candidate writes its own
    /// state, a collapsing one its vertices' words (it holds every
    /// tetrahedron around them, so no other collapsing candidate shares a
    /// vertex with it); the count is an atomic add.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel GreedyDecide(
        launch,
        mesh: Ins<u32, 4>,
        geometry: Ins<f32, 2>,
        aux: Ins<u32, 4>,
        cost: In<f32>,
        candidates: u32,
        state: InOut<u32>,
        affected: InOut<u32>,
        undecided: InOut<u32>,
    ) {
        let s = Arrays::new(mesh, geometry);
        let [edges, list, tet_key, tet_index] = *aux;
        let (start, end) = chunk(launch.block_idx, candidates);
        launch.block.for_each(end - start, |k| {
            let e = list.get(start + k);
            let Some(key) = undecided_key(state.get(e), cost.get(e)) else {
                return;
            };
            let (a, b) = (edges.get(2 * e), edges.get(2 * e + 1));
            let (mut taken, mut holds) = (false, true);
            for_each_around(&s, a, b, |t| {
                let kt = tet_key.get(t);
                taken |= kt == TAKEN;
                holds &= kt == key && tet_index.get(t) == !e;
            });
            if taken {
                state.set(e, OUT);
            } else if holds {
                state.set(e, COLLAPSES);
                affected.set(a, e + 1);
                affected.set(b, e + 1);
            } else {
                undecided.fetch_add(0, 1);
            }
        });
    }
}

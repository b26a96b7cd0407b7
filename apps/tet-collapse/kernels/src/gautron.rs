//! The conflict detection of Gautron and Kanzler (2023), the baseline of
//! the paper's section 4 (figs. 6-8): instead of the two passes of
//! `crate::iteration`, each admissible candidate propagates its edge
//! descriptor (cost, then index) to every tetrahedron around both of its
//! vertices by atomic minima, and collapses when it holds every one of
//! them. The 64-bit descriptor is taken in two 32-bit atomic passes: the
//! least cost ([`PropagateCost`], the cost's bits in an order-preserving
//! key) then the least index among the edges of that cost
//! ([`PropagateIndex`]); [`GautronWinners`] decides. The minima are kept
//! complemented, as atomic maxima over arrays that start at zero.

use cavity_device::array::{In, InOut, Ins};

use crate::chunk;
use crate::iteration::{Arrays, COLLAPSES};
use crate::star::Star;

/// `x`'s bits as a key whose unsigned order is the order of the floats
/// (negative ones complemented, the others with the sign bit set).
#[inline(always)]
pub fn ordered(x: f32) -> u32 {
    let b = x.to_bits();
    if b & 0x8000_0000 != 0 {
        !b
    } else {
        b | 0x8000_0000
    }
}

/// Calls `f(t)` for every tetrahedron around `a` or `b` (one around both
/// twice).
#[inline(always)]
fn for_each_around<F: FnMut(u32)>(s: &Arrays, a: u32, b: u32, mut f: F) {
    for v in [a, b] {
        for i in 0..s.star_len(v) {
            f(s.star_tet(v, i));
        }
    }
}

cavity_device::kernel! {
    /// Lowers the complemented `tet_cost[t]` (zero at the start: no
    /// candidate) to the ordered cost key of each admissible candidate
    /// around tetrahedron `t`; over the `candidates` of `list` (`aux` is
    /// `[edges, list]`).
    ///
    /// # Safety
    /// Checked: the inputs are only read; the minima are atomic.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel PropagateCost(
        launch,
        mesh: Ins<u32, 4>,
        geometry: Ins<f32, 2>,
        aux: Ins<u32, 2>,
        cost: In<f32>,
        candidates: u32,
        tet_cost: InOut<u32>,
    ) {
        let s = Arrays::new(mesh, geometry);
        let [edges, list] = *aux;
        let (start, end) = chunk(launch.block_idx, candidates);
        launch.block.for_each(end - start, |k| {
            let e = list.get(start + k);
            let c = cost.get(e);
            if c == f32::INFINITY {
                return;
            }
            let key = ordered(c);
            for_each_around(&s, edges.get(2 * e), edges.get(2 * e + 1), |t| {
                tet_cost.fetch_max(t, !key);
            });
        });
    }
}

cavity_device::kernel! {
    /// Lowers the complemented `tet_index[t]` (zero at the start) to the
    /// index of each admissible candidate around `t` whose cost key is the
    /// least there (`tet_cost[t]`, complemented).
    ///
    /// # Safety
    /// Checked: the inputs are only read; the minima are atomic.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel PropagateIndex(
        launch,
        mesh: Ins<u32, 4>,
        geometry: Ins<f32, 2>,
        aux: Ins<u32, 3>,
        cost: In<f32>,
        candidates: u32,
        tet_index: InOut<u32>,
    ) {
        let s = Arrays::new(mesh, geometry);
        let [edges, list, tet_cost] = *aux;
        let (start, end) = chunk(launch.block_idx, candidates);
        launch.block.for_each(end - start, |k| {
            let e = list.get(start + k);
            let c = cost.get(e);
            if c == f32::INFINITY {
                return;
            }
            let key = ordered(c);
            for_each_around(&s, edges.get(2 * e), edges.get(2 * e + 1), |t| {
                if tet_cost.get(t) == !key {
                    tet_index.fetch_max(t, !e);
                }
            });
        });
    }
}

cavity_device::kernel! {
    /// An admissible candidate collapses ([`COLLAPSES`] in `state`, `e +
    /// 1` in `affected` at both vertices) when every tetrahedron around
    /// its vertices holds its descriptor (`tet_cost`, `tet_index`,
    /// complemented); `aux`
    /// is `[edges, list, tet_cost, tet_index]`.
    ///
    /// # Safety
    /// Checked: the inputs are only read; a winner holds every
    /// tetrahedron around its vertices, so no other winner shares a vertex
    /// with it and its words have one writer.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel GautronWinners(
        launch,
        mesh: Ins<u32, 4>,
        geometry: Ins<f32, 2>,
        aux: Ins<u32, 4>,
        cost: In<f32>,
        candidates: u32,
        state: InOut<u32>,
        affected: InOut<u32>,
    ) {
        let s = Arrays::new(mesh, geometry);
        let [edges, list, tet_cost, tet_index] = *aux;
        let (start, end) = chunk(launch.block_idx, candidates);
        launch.block.for_each(end - start, |k| {
            let e = list.get(start + k);
            let c = cost.get(e);
            if c == f32::INFINITY {
                return;
            }
            let key = ordered(c);
            let (a, b) = (edges.get(2 * e), edges.get(2 * e + 1));
            let mut holds = true;
            for_each_around(&s, a, b, |t| {
                holds &= tet_cost.get(t) == !key && tet_index.get(t) == !e;
            });
            if holds {
                state.set(e, COLLAPSES);
                affected.set(a, e + 1);
                affected.set(b, e + 1);
            }
        });
    }
}

//! Conflict resolution between cavities: marking the deleted elements
//! with cavity keys (propagation) and the maximal independent set.

use crate::block::Block;
use crate::layout::Kind;

use super::super::patch::PatchCopy;
use super::{CavityApp, Ctx, NONE, Template, Work, state};

/// Marks each cavity's deleted elements ([`CavityApp::deleted`] and what
/// lies on them) with its key (the smallest key wins an element) and drops
/// the cavities that lost one of their elements to another. Resets every
/// cavity to undecided first; with `survivors`, only the cavities in the
/// independent set so far stay in the game (after an expansion, so that
/// cavities left out for want of a neighbour cannot take the place of
/// those the patch expanded for).
#[inline(always)]
pub fn propagate<B: Block, A: CavityApp>(ctx: &Ctx<'_, B>, app: &A, survivors: bool) {
    let (block, copy, work) = (ctx.block, ctx.copy, ctx.work);
    let n = work.cavities();
    block.for_each(copy.count(Kind::Vertex), |v| work.cav[0].set(v, NONE));
    block.for_each(copy.count(Kind::Edge), |e| work.cav[1].set(e, NONE));
    block.for_each(copy.count(Kind::Face), |f| work.cav[2].set(f, NONE));
    block.for_each(n, |c| {
        let keep = !survivors || work.state.get(c) == state::WON;
        work.state
            .set(c, if keep { state::UNDECIDED } else { state::LOST });
    });
    block.sync();
    mark(ctx, app);
    verify(ctx, app);
}

/// Most rounds of [`maximize`] per pass.
pub const MAX_SET_ROUNDS: u32 = 8;

/// Grows the cavities [`propagate`] left undecided (each holds all of its
/// elements) into a maximal set of cavities with disjoint deleted
/// elements, for an application whose cavities conflict only when they
/// delete a common element ([`CavityApp::JOINS_BOUNDARY`] false): the
/// undecided cavities join the set, and the cavities that lost only to
/// cavities outside it compete again for the elements nobody in the set
/// holds, in rounds until none is left (at most [`MAX_SET_ROUNDS`]). One
/// round of smallest-key-wins keeps about one cavity in `d + 1` of `d`
/// mutually overlapping ones; the sequential greedy algorithm in key
/// order (Blelloch et al. 2012; dynamic paper, section 5.2), which this
/// computes when the rounds run out before [`MAX_SET_ROUNDS`], keeps
/// several times more where short or long edges cluster, so that a pass
/// fills more of them. Call after
/// `propagate(.., false)`; [`independent_set`] then admits what the last
/// round left undecided.
#[inline(always)]
pub fn maximize<B: Block, A: CavityApp>(ctx: &Ctx<'_, B>, app: &A) {
    let (block, copy, work) = (ctx.block, ctx.copy, ctx.work);
    let n = work.cavities();
    let st = work.state;
    for _ in 0..MAX_SET_ROUNDS {
        let mut lost = false;
        block.for_each(n, |c| match st.get(c) {
            state::UNDECIDED => st.set(c, state::WON),
            state::LOST => lost = true,
            _ => {}
        });
        if !block.sync_any(lost) {
            break;
        }
        for kind in Kind::ALL {
            let cav = work.cav[kind as usize];
            block.for_each(copy.count(kind), |l| {
                if !held(work, cav.get(l)) {
                    cav.set(l, NONE);
                }
            });
        }
        block.sync();
        let mut again = false;
        block.for_each(n, |c| {
            if st.get(c) != state::LOST {
                return;
            }
            let mut free = true;
            app.deleted(ctx, work.seeds.get(c) as u32, |kind, l| {
                free &= work.cav[kind as usize].get(l) == NONE
            });
            st.set(c, if free { state::UNDECIDED } else { BLOCKED });
            again |= free;
        });
        if !block.sync_any(again) {
            break;
        }
        mark(ctx, app);
        verify(ctx, app);
    }
    block.for_each(n, |c| {
        if st.get(c) == BLOCKED {
            st.set(c, state::LOST);
        }
    });
    block.sync();
}

/// State of a cavity within [`maximize`]: it lost an element to a cavity
/// in the set, so it stays out (`state::LOST` afterwards).
const BLOCKED: u16 = u16::MAX;

/// Whether `k` is the key of a cavity in the independent set (which holds
/// the elements marked with it).
#[inline(always)]
fn held(work: &Work, k: u32) -> bool {
    k != NONE && work.state.get(k & 0xffff) == state::WON
}

/// The marking of [`propagate`]: every undecided cavity marks its deleted
/// elements and what lies on them with the smallest key, leaving alone the
/// elements a cavity in the set holds.
#[inline(always)]
fn mark<B: Block, A: CavityApp>(ctx: &Ctx<'_, B>, app: &A) {
    let (block, copy, work) = (ctx.block, ctx.copy, ctx.work);
    block.for_each_spread(work.cavities(), |c| {
        if work.state.get(c) != state::UNDECIDED {
            return;
        }
        let (s, k) = (work.seeds.get(c) as u32, work.keys.get(c));
        app.deleted(ctx, s, |kind, l| {
            let cav = work.cav[kind as usize];
            if !held(work, cav.get(l)) {
                block.shared_min(cav, l, k);
            }
        });
    });
    block.sync();
    let del_v = A::TEMPLATE.deletes_vertices();
    if del_v {
        block.for_each(copy.count(Kind::Edge), |e| {
            if copy.is_active(Kind::Edge, e) && !held(work, work.cav[1].get(e)) {
                for v in copy.edge_vertices(e) {
                    let k = work.cav[0].get(v);
                    if k != NONE && !held(work, k) {
                        block.shared_min(work.cav[1], e, k);
                    }
                }
            }
        });
        block.sync();
    }
    block.for_each(copy.count(Kind::Face), |f| {
        if copy.is_active(Kind::Face, f) && !held(work, work.cav[2].get(f)) {
            let mut m = work.cav[2].get(f);
            for i in 0..3 {
                m = m.min(work.cav[1].get(copy.face_edge(f, i).0));
            }
            if del_v {
                for v in copy.face_vertices(f) {
                    m = m.min(work.cav[0].get(v));
                }
            }
            work.cav[2].set(f, m);
        }
    });
    block.sync();
}

/// The verification of [`propagate`]: an undecided cavity that does not
/// hold all of its elements loses.
#[inline(always)]
fn verify<B: Block, A: CavityApp>(ctx: &Ctx<'_, B>, app: &A) {
    let (block, copy, work) = (ctx.block, ctx.copy, ctx.work);
    // Cavity `k` loses to the holder of key `to`: for good when that is a
    // cavity of the set.
    let lose = |k: u32, to: u32| {
        let c = k & 0xffff;
        if held(work, k) {
            return;
        }
        if held(work, to) {
            work.state.set(c, BLOCKED);
        } else if work.state.get(c) == state::UNDECIDED {
            work.state.set(c, state::LOST);
        }
    };
    block.for_each_spread(work.cavities(), |c| {
        if work.state.get(c) != state::UNDECIDED {
            return;
        }
        let (s, k) = (work.seeds.get(c) as u32, work.keys.get(c));
        let mut to = k;
        app.deleted(ctx, s, |kind, l| {
            let found = work.cav[kind as usize].get(l);
            if found != k && !held(work, to) {
                to = found;
            }
        });
        if to != k {
            lose(k, to);
        }
    });
    let del_v = A::TEMPLATE.deletes_vertices();
    if del_v {
        block.for_each(copy.count(Kind::Edge), |e| {
            if copy.is_active(Kind::Edge, e) {
                for v in copy.edge_vertices(e) {
                    let (k, ke) = (work.cav[0].get(v), work.cav[1].get(e));
                    if k != NONE && ke != k {
                        lose(k, ke);
                    }
                }
            }
        });
    }
    block.for_each(copy.count(Kind::Face), |f| {
        if copy.is_active(Kind::Face, f) {
            let kf = work.cav[2].get(f);
            for i in 0..3 {
                let k = work.cav[1].get(copy.face_edge(f, i).0);
                if k != NONE && k != kf {
                    lose(k, kf);
                }
            }
            if del_v {
                for v in copy.face_vertices(f) {
                    let k = work.cav[0].get(v);
                    if k != NONE && k != kf {
                        lose(k, kf);
                    }
                }
            }
        }
    });
    block.sync();
}

/// Calls `f(v, c)` for every vertex `v` of the closure of every cavity `c`
/// with `pick(c)` (a vertex may come more than once).
#[inline(always)]
pub fn for_each_closure_vertex<B: Block>(
    block: &B,
    copy: &PatchCopy,
    work: &Work,
    template: Template,
    pick: impl Fn(u32) -> bool,
    mut f: impl FnMut(u32, u32),
) {
    block.for_each(copy.count(Kind::Face), |x| {
        let k = work.cav[2].get(x);
        if k != NONE && copy.is_active(Kind::Face, x) && pick(k & 0xffff) {
            for v in copy.face_vertices(x) {
                f(v, k & 0xffff);
            }
        }
    });
    block.for_each(copy.count(Kind::Edge), |x| {
        let k = work.cav[1].get(x);
        if k != NONE && copy.is_active(Kind::Edge, x) && pick(k & 0xffff) {
            for v in copy.edge_vertices(x) {
                f(v, k & 0xffff);
            }
        }
    });
    if template.deletes_vertices() {
        block.for_each(copy.count(Kind::Vertex), |x| {
            let k = work.cav[0].get(x);
            if k != NONE && pick(k & 0xffff) {
                f(x, k & 0xffff);
            }
        });
    }
}

/// Blelloch, Fineman and Shun's greedy maximal independent set (2012) over
/// the cavities' conflict graph, in parallel rounds: an undecided cavity
/// whose key is the smallest on every vertex of its closure joins the set,
/// and the undecided cavities sharing a vertex with it drop out. With random
/// priorities this returns the set the sequential greedy algorithm would.
///
/// With `joins_boundary` false ([`CavityApp::JOINS_BOUNDARY`]) cavities
/// conflict only when they delete a common element (dynamic paper, section
/// 6.3: edge splits proceed concurrently as long as their faces lie in
/// separate cavities). [`propagate`] has already dropped every cavity that
/// lost an element, so the undecided cavities all join; the ones that lost
/// get another chance in the next pass.
#[inline(always)]
pub fn independent_set<B: Block>(
    block: &B,
    copy: &PatchCopy,
    work: &Work,
    template: Template,
    joins_boundary: bool,
) {
    let n = work.cavities();
    let st = work.state;
    let undecided = |c: u32| st.get(c) == state::UNDECIDED;
    if !joins_boundary {
        block.for_each(n, |c| {
            if undecided(c) {
                st.set(c, state::WON);
            }
        });
        block.sync();
        return;
    }
    let taken = |v: u32| work.taken.bit(v);
    block.fill(work.taken, 0);
    block.sync();
    loop {
        block.for_each(n, |c| work.scratch.set(c, 0));
        for_each_closure_vertex(block, copy, work, template, undecided, |v, _| {
            work.vmark.set(v, NONE)
        });
        block.sync();
        for_each_closure_vertex(block, copy, work, template, undecided, |v, c| {
            block.shared_min(work.vmark, v, work.keys.get(c))
        });
        block.sync();
        for_each_closure_vertex(block, copy, work, template, undecided, |v, c| {
            if work.vmark.get(v) != work.keys.get(c) || taken(v) {
                work.scratch.set(c, 1);
            }
        });
        block.sync();
        block.for_each(n, |c| {
            if undecided(c) && work.scratch.get(c) == 0 {
                st.set(c, state::WON);
            }
        });
        block.sync();
        for_each_closure_vertex(
            block,
            copy,
            work,
            template,
            |c| st.get(c) == state::WON,
            |v, _| {
                block.shared_set_bit(work.taken, v);
            },
        );
        block.sync();
        for_each_closure_vertex(block, copy, work, template, undecided, |v, c| {
            if taken(v) {
                st.set(c, state::LOST);
            }
        });
        block.sync();
        let mut left = false;
        block.for_each(n, |c| left |= undecided(c));
        if !block.sync_any(left) {
            break;
        }
    }
}

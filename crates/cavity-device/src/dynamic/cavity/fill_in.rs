//! The fill-in stage: groups each surviving cavity's faces, orders its
//! boundary, runs the application's fill-in and deletes what it replaced.

use crate::block::{Block, Shared};
use crate::layout::Kind;

use super::super::patch::PatchCopy;
use super::{CTL_FILLED, CavityApp, Ctx, FillIn, NONE, state};

/// Fills in every cavity in the independent set: groups the faces by
/// cavity, orders each boundary into a loop, calls `app.fill` (which
/// reserves the new elements' slots, [`CavityApp::max_new`], at its first
/// new element) and, when it accepts, deletes the cavity's elements. A
/// cavity whose reservation did not fit is left `NO_ROOM`. Returns after a
/// barrier.
#[inline(always)]
pub fn fill<B: Block, A: CavityApp>(block: &B, ctx: &Ctx<'_, B>, app: &A) {
    let copy = ctx.copy;
    let work = ctx.work;
    let n = work.cavities();
    let won = |c: u32| work.state.get(c) == state::WON;
    // Faces per cavity: count, scan, place (afterwards scratch[c] is the end
    // of cavity c's faces, which start at scratch[c - 1]).
    block.for_each(n + 1, |c| work.scratch.set(c, 0));
    block.sync();
    let nf = copy.count(Kind::Face);
    block.for_each(nf, |f| {
        let k = work.cav[2].get(f);
        if k != NONE && copy.is_active(Kind::Face, f) && won(k & 0xffff) {
            block.shared_fetch_add(work.scratch, k & 0xffff, 1);
        }
    });
    block.sync();
    block.scan(work.scratch, n + 1, work.scan, false);
    block.sync();
    block.for_each(nf, |f| {
        let k = work.cav[2].get(f);
        if k != NONE && copy.is_active(Kind::Face, f) && won(k & 0xffff) {
            let at = block.shared_fetch_add(work.scratch, k & 0xffff, 1);
            work.faces.set(at, f as u16);
        }
    });
    block.sync();
    // One cavity per warp where they are few: fill-ins take different
    // paths.
    block.for_each_spread(n, |c| {
        if !won(c) {
            return;
        }
        let key = work.keys.get(c);
        let start = if c == 0 { 0 } else { work.scratch.get(c - 1) };
        let end = work.scratch.get(c);
        // Boundary half-edges: the deleted faces' edges that stay.
        let b0 = 3 * start;
        let mut nb = 0;
        for i in start..end {
            let f = work.faces.get(i) as u32;
            for j in 0..3 {
                let (e, r) = copy.face_edge(f, j);
                if work.cav[1].get(e) != key {
                    work.boundary.set(b0 + nb, (e << 1) | r as u32);
                    nb += 1;
                }
            }
        }
        let closed = order_loop(copy, work.boundary, b0, nb);
        let want = app.max_new(nb);
        let mut fill = FillIn {
            ctx,
            cavity: c,
            faces: (start, end),
            boundary: (b0, b0 + nb),
            closed,
            base: None,
            used: [0; 3],
            limit: [0, 1, 2].map(|k| want[k].min(A::MAX_NEW[k])),
            no_room: false,
        };
        let accepted = app.fill(&mut fill);
        if fill.no_room {
            fill.discard();
            work.state.set(c, state::NO_ROOM);
        } else if accepted {
            work.state.set(c, state::FILLED);
            block.shared_fetch_add(work.ctl, CTL_FILLED, 1);
        } else {
            fill.discard();
            work.state.set(c, state::DECLINED);
            let s = work.seeds.get(c) as u32;
            block.shared_set_bit(work.declined, s);
        }
    });
    block.sync();
    // Delete what the filled cavities claimed (every element whose key is
    // a filled cavity's, faces or not: a bare edge or vertex goes too). The
    // new elements sit in slots that were free at the last propagation, or
    // above the high-water marks, which are raised only after this.
    for kind in Kind::ALL {
        block.for_each(copy.count(kind), |x| {
            let k = work.cav[kind as usize].get(x);
            if k != NONE && work.state.get(k & 0xffff) == state::FILLED && copy.is_active(kind, x) {
                copy.set_bit(block, kind, true, x, false);
                copy.set_bit(block, kind, false, x, false);
            }
        });
    }
    block.sync();
}

/// Orders the `n` boundary half-edges at `b[start..]` so that each ends
/// where the next starts, beginning an open chain at its free end. Returns
/// whether they form one closed loop.
#[inline(always)]
fn order_loop(copy: &PatchCopy, b: Shared<u32>, start: u32, n: u32) -> bool {
    let from = |h: u32| copy.edge_vertices(h >> 1)[(h & 1) as usize];
    let to = |h: u32| copy.edge_vertices(h >> 1)[1 - (h & 1) as usize];
    if n == 0 {
        return false;
    }
    // An open chain starts at the half-edge nothing ends at.
    for i in 0..n {
        let fi = from(b.get(start + i));
        if !(0..n).any(|j| to(b.get(start + j)) == fi) {
            let t = b.get(start);
            b.set(start, b.get(start + i));
            b.set(start + i, t);
            break;
        }
    }
    for i in 0..n - 1 {
        let end = to(b.get(start + i));
        match (i + 1..n).find(|&j| from(b.get(start + j)) == end) {
            Some(j) => {
                let t = b.get(start + i + 1);
                b.set(start + i + 1, b.get(start + j));
                b.set(start + j, t);
            }
            None => return false,
        }
    }
    to(b.get(start + n - 1)) == from(b.get(start))
}

//! Free slots of the working copy: which slots a fill-in may reuse, the
//! per-kind free lists, and taking slots from them.

use crate::block::Block;
use crate::layout::Kind;

use super::super::patch::PatchCopy;
use super::{CTL_CURSOR, CTL_FREE, CTL_NO_ROOM, Work};

/// Marks the slots a fill-in of this processing may take once they are
/// free (`Work::fresh`): the slots free at load, and those of owned edges
/// and faces with a vertex two faces away from every element the patch
/// does not own. No other patch names those. (A vertex may be named
/// through an edge without faces that another patch owns and this one
/// does not hold, so vertex slots wait for the cleanup.) A patch names
/// elements of faces near what it owns: the faces incident to its own
/// elements or sharing an edge with its faces (the static ribbon,
/// `cavity::patched`; a dynamic patch keeps only the former,
/// [`crate::dynamic::cleanup::mark_needed`]), with their closure. Such a face
/// here either touches an element this patch does not own, or shares an
/// edge with a face of the other patch that does; either way each of its
/// vertices lies on a face that shares a vertex with a face touching a
/// not-owned element (the patch holds every face incident to what it
/// owns). The slots of elements a fill-in deletes are then reused in the
/// next pass instead of after the cleanup, and a patch does more
/// collapses per processing before it runs out of room; copies that an
/// expansion brings in are named by their old owners and leave the set
/// ([`reserved_copy_slot`]). Within a round a neighbour may hold copies it
/// does not need: when its expansion copied from this patch and failed
/// (`named`, [`crate::dynamic::layout::flag::NAMED`]), only the slots free at load
/// are reused. Call after loading, before any expansion; uses
/// `work.taken` and the first words of `work.vmark` as scratch.
#[inline(always)]
pub fn mark_fresh<B: Block>(block: &B, copy: &PatchCopy, work: &Work, named: bool) {
    let near = work.vmark;
    let words = copy.cap.mask_words(Kind::Vertex);
    block.fill(work.taken, 0);
    block.for_each(words, |w| near.set(w, 0));
    block.sync();
    let faces = copy.count(Kind::Face);
    let active = |f: u32| copy.is_active(Kind::Face, f);
    block.for_each(faces, |f| {
        if !active(f) {
            return;
        }
        let vs = copy.face_vertices(f);
        let touches = !copy.is_owned(Kind::Face, f)
            || (0..3).any(|i| !copy.is_owned(Kind::Edge, copy.face_edge(f, i).0))
            || vs.iter().any(|&v| !copy.is_owned(Kind::Vertex, v));
        if touches {
            for v in vs {
                block.shared_set_bit(work.taken, v);
            }
        }
    });
    block.sync();
    block.for_each(faces, |f| {
        if !active(f) {
            return;
        }
        let vs = copy.face_vertices(f);
        if vs.iter().any(|&v| work.taken.bit(v)) {
            for v in vs {
                block.shared_set_bit(near, v);
            }
        }
    });
    block.sync();
    let inner = |v: u32| !near.bit(v);
    for kind in Kind::ALL {
        let fresh = work.fresh[kind as usize];
        let count = copy.count(kind);
        block.for_each(copy.cap.mask_words(kind), |w| {
            let mut word = 0;
            for b in 0..32 {
                let l = w * 32 + b;
                let reusable = if l >= count || !copy.is_active(kind, l) {
                    true
                } else if named || !copy.is_owned(kind, l) {
                    false
                } else {
                    match kind {
                        Kind::Vertex => false,
                        Kind::Edge => copy.edge_vertices(l).into_iter().any(inner),
                        Kind::Face => copy.face_vertices(l).into_iter().any(inner),
                    }
                };
                word |= (reusable as u32) << b;
            }
            fresh.set(w, word);
        });
    }
    block.sync();
}

/// Builds the free lists (the free slots [`mark_fresh`] allows, ascending)
/// and resets their cursors; clears the declined and waiting marks of free
/// seed slots (of `seed` kind), which a new element may take. Called at
/// every pass: the slots of elements deleted in an earlier pass that no
/// other patch names are taken again; the others wait for the cleanup.
#[inline(always)]
pub fn build_free_lists<B: Block>(block: &B, copy: &PatchCopy, work: &Work, seed: Kind) {
    for kind in Kind::ALL {
        let cap = copy.cap.of(kind);
        let fresh = work.fresh[kind as usize];
        let free = |i: u32| !copy.is_active(kind, i) && fresh.bit(i);
        block.for_each(cap + 1, |i| work.flags.set(i, (i < cap && free(i)) as u32));
        block.sync();
        let total = block.scan(work.flags, cap + 1, work.scan, false);
        block.sync();
        block.for_each(cap, |i| {
            if free(i) {
                work.free[kind as usize].set(work.flags.get(i), i as u16);
            }
        });
        if block.thread_idx() == 0 {
            work.ctl.set(CTL_CURSOR + kind as u32, 0);
            work.ctl.set(CTL_FREE + kind as u32, total);
        }
        block.sync();
    }
    block.for_each(copy.cap.mask_words(seed), |w| {
        let active = copy.active_word(seed, w);
        work.declined.set(w, work.declined.get(w) & active);
        work.waiting.set(w, work.waiting.get(w) & active);
    });
    block.sync();
}

/// Reserves `counts[k]` free slots of each kind `k` for the copies an
/// expansion brings in, all or none: the first free-list position per
/// kind, or `None` (nothing reserved) when one kind has too few. One
/// thread, while no other takes slots.
#[inline(always)]
pub fn take_slots(work: &Work, counts: [u32; 3]) -> Option<[u32; 3]> {
    let at = [0, 1, 2].map(|k| work.ctl.get(CTL_CURSOR + k));
    let fits = (0..3).all(|k| at[k as usize] + counts[k as usize] <= work.ctl.get(CTL_FREE + k));
    if !fits {
        return None;
    }
    for k in 0..3 {
        work.ctl
            .set(CTL_CURSOR + k, at[k as usize] + counts[k as usize]);
    }
    Some(at)
}

/// The slot at free-list position `at` of `kind`, reserved by
/// [`take_slots`] for a copy; the slot leaves `Work::fresh`, since the
/// copy's old owner names it.
#[inline(always)]
pub fn reserved_copy_slot<B: Block>(block: &B, work: &Work, kind: Kind, at: u32) -> u32 {
    let l = work.free[kind as usize].get(at) as u32;
    block.shared_fetch_and(work.fresh[kind as usize], l / 32, !(1 << (l % 32)));
    l
}

/// Takes a free slot of `kind` for a copied or new element; `None` when the
/// patch is full.
#[inline(always)]
pub fn take_slot<B: Block>(block: &B, work: &Work, kind: Kind, n: u32) -> Option<u32> {
    let cursor = CTL_CURSOR + kind as u32;
    let free = work.ctl.get(CTL_FREE + kind as u32);
    // A request that does not fit leaves the cursor where it was, so that
    // smaller requests after it still succeed.
    let mut at = work.ctl.get(cursor);
    loop {
        if at + n > free {
            block.shared_fetch_or(work.ctl, CTL_NO_ROOM, 1);
            return None;
        }
        if n == 0 {
            return Some(at);
        }
        let seen = block.shared_compare_exchange(work.ctl, cursor, at, at + n);
        if seen == at {
            return Some(at);
        }
        at = seen;
    }
}

/// Raises the high-water marks over the slots taken from the free lists
/// (one thread, after a barrier).
#[inline(always)]
pub fn commit_counts(copy: &PatchCopy, work: &Work) {
    for kind in Kind::ALL {
        let k = kind as u32;
        let used = work.ctl.get(CTL_CURSOR + k).min(work.ctl.get(CTL_FREE + k));
        if used > 0 {
            let top = work.free[k as usize].get(used - 1) as u32 + 1;
            if top > copy.counts.get(k) {
                copy.counts.set(k, top);
            }
        }
    }
}

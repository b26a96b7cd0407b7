//! Patch slicing (dynamic paper, section 5.1, "patch slicing"): a patch
//! that ran out of element slots in an update round (flagged
//! [`flag::SLICE`]) is split in two at the end of the round. The patch's
//! owned faces are split into two connected halves by Lloyd's iterations
//! over the face adjacency inside the patch (two seeds, a multi-source
//! breadth-first search assigns every face to its nearer seed, each seed
//! moves to its half's centre: the face farthest from the half's border);
//! when that leaves the second half under a quarter of the owned faces
//! (a seed in a small component), by position instead (`balance`).
//! The second half moves to a fresh patch slot with its ribbon and
//! attributes; the first patch keeps forwarding entries for the moved
//! elements that the kept half or another patch may hold a copy of (those
//! on a face that keeps an element that did not move), so the next
//! calibration re-points every other patch's ribbon; the other moved
//! elements leave the first patch at once, and the next compaction drops
//! what it no longer needs. This relies on a patch holding every face
//! around what it owns (checked by the host's `validate`).
//!
//! One block per patch; blocks slice different patches and read nothing
//! but their own patch and the attributes of its ribbon's owners, so the
//! kernel needs no locks (no update kernel runs meanwhile).
//!
//! Longer than 700 lines as one file on purpose: slicing is one kernel
//! whose phases (the halves, the balance, the move, the forwarding) share
//! the private work arrays of the slice and are read in order.

use crate::block::{Block, Shared, SharedArena};
use crate::kernel::DYNAMIC_BOUNDS;
use crate::layout::Kind;

use super::cavity::{self, NONE};
use super::cleanup::mark_needed;
use super::hash::{self, RIBBON};
use super::layout::RawDynamicMesh;
use super::layout::{COUNT_STASH, Capacity, LOCAL_BITS, NO_PATCH, flag, stat};
use super::patch::{DynMesh, PatchCopy};
use super::queue;

/// Lloyd iterations (seed placement, then this many assignments).
pub const LLOYD_ITERATIONS: u32 = 3;

/// Fewest owned faces of a patch worth slicing: a sixty-fourth of the
/// face capacity (at least 2). A patch out of room that owns fewer is full
/// of ribbon (the neighbourhoods of its cavities' closures, e.g. the stars
/// of high-valence vertices): halving what it owns would not make room,
/// and slicing it again and again would only use up patch slots.
pub fn min_owned_faces(cap: &Capacity) -> u32 {
    (cap.faces / 64).max(2)
}

/// `ctl` entries.
const C_PART: u32 = 0;
const C_SEEDS: u32 = 1;
const C_OWNED: u32 = 3;
const C_FATAL: u32 = 4;
const C_STASH: u32 = 5;
const C_CENTRES: u32 = 6;
/// Entries `C_BOX..C_BOX + 6`: per axis, the largest [`order_key`] of the
/// owned faces' centroids and the largest complement of one (the
/// bounding box of [`balance`]).
const C_BOX: u32 = 8;
const CTL_LEN: u32 = 14;

struct Windows {
    copy: PatchCopy,
    part: PatchCopy,
    ef_count: Shared<u32>,
    ef: Shared<u16>,
    /// Per face: `(hops << 1) | half` from the last assignment, or NONE.
    label: Shared<u32>,
    /// Per face: `(hops << 1) | half` from the half's border, or NONE;
    /// in `balance`, the [`order_key`] of the face's position.
    inner: Shared<u32>,
    /// Bitmasks per kind: owned elements that move to the new patch.
    moves: [Shared<u32>; 3],
    /// Bitmasks per kind: first the elements the new patch holds; in
    /// `hand_over`, the moved elements that keep a forwarding entry.
    need: [Shared<u32>; 3],
    /// Per vertex or edge: the smallest owned face incident to it.
    first: Shared<u32>,
    /// Scan input and output (one entry per slot of the largest kind).
    index: Shared<u32>,
    /// Per kind: local index in the new patch of a held element.
    local: [Shared<u16>; 3],
    scan: Shared<u32>,
    ctl: Shared<u32>,
}

fn windows(arena: &mut SharedArena, cap: &Capacity, threads: u32) -> Windows {
    let largest = cap.vertices.max(cap.edges).max(cap.faces);
    let masks = |arena: &mut SharedArena| {
        [
            arena.alloc(cap.vertices / 32),
            arena.alloc(cap.edges / 32),
            arena.alloc(cap.faces / 32),
        ]
    };
    Windows {
        copy: PatchCopy::alloc(arena, *cap, 0),
        part: PatchCopy::alloc(arena, *cap, 0),
        ef_count: arena.alloc(cap.edges),
        ef: arena.alloc(2 * cap.edges),
        label: arena.alloc(cap.faces),
        inner: arena.alloc(cap.faces),
        moves: masks(arena),
        need: masks(arena),
        first: arena.alloc(cap.vertices.max(cap.edges)),
        index: arena.alloc(largest + 1),
        local: [
            arena.alloc(cap.vertices),
            arena.alloc(cap.edges),
            arena.alloc(cap.faces),
        ],
        scan: arena.alloc(crate::block::scan_scratch_len(threads)),
        ctl: arena.alloc(CTL_LEN),
    }
}

/// Shared memory of [`slice()`] for capacity `cap` and `threads` threads per
/// block, in bytes.
pub fn shared_bytes(cap: &Capacity, threads: u32) -> usize {
    let mut arena = SharedArena::measuring();
    windows(&mut arena, cap, threads);
    arena.used()
}

/// The half of face `f` in an assignment (`label` entry); unreached faces
/// stay in the first half.
#[inline(always)]
fn half(label: u32) -> u32 {
    if label == NONE { 0 } else { label & 1 }
}

/// The neighbour of owned face `f` across its corner-`i` edge when that
/// edge is manifold and the neighbour is owned too.
#[inline(always)]
fn neighbour(w: &Windows, f: u32, i: u32) -> Option<u32> {
    let (e, _) = w.copy.face_edge(f, i);
    if w.ef_count.get(e) != 2 {
        return None;
    }
    let (a, b) = (w.ef.get(2 * e) as u32, w.ef.get(2 * e + 1) as u32);
    let g = if a == f { b } else { a };
    w.copy.is_owned(Kind::Face, g).then_some(g)
}

/// Breadth-first search over the owned faces from the faces `source` gives
/// a half, stepping only where `follow(from, to)`: `out[f]` becomes
/// `(hops << 1) | half` of the nearest source (ties to the smaller half),
/// [`NONE`] where unreached. Returns after a barrier.
#[inline(always)]
fn search<B: Block>(
    block: &B,
    w: &Windows,
    out: Shared<u32>,
    source: impl Fn(u32) -> Option<u32>,
    follow: impl Fn(u32, u32) -> bool,
) {
    let copy = &w.copy;
    let nf = copy.count(Kind::Face);
    block.for_each(nf, |f| {
        let s = if copy.is_owned(Kind::Face, f) {
            source(f)
        } else {
            None
        };
        out.set(f, s.unwrap_or(NONE));
    });
    block.sync();
    let mut hops = 0;
    loop {
        let mut grew = false;
        block.for_each(nf, |f| {
            let l = out.get(f);
            if l == NONE || l >> 1 != hops {
                return;
            }
            for i in 0..3 {
                if let Some(g) = neighbour(w, f, i) {
                    // Faces reached in an earlier level hold less than
                    // `next`; this level's writers only lower a value to
                    // `hops + 1` with a half, so a read racing with them at
                    // most repeats a write the minimum settles.
                    let next = ((hops + 1) << 1) | (l & 1);
                    if follow(f, g) && out.get(g) > next {
                        block.shared_min(out, g, next);
                        grew = true;
                    }
                }
            }
        });
        if !block.sync_any(grew) {
            break;
        }
        hops += 1;
    }
}

/// Slices patch `p` when it is flagged [`flag::SLICE`] (one block per
/// patch; see the module documentation). The new patch takes the next
/// patch slot (`queue_state[queue::PATCHES]`) and the declined marks
/// of the moved seeds of kind `seed` (the kind of the application whose
/// round flagged `p`; `split_declined`); both patches are flagged
/// `DIRTY | CHANGED` and enqueued. Sets `stat::FATAL` to
/// [`stat::FATAL_PATCH_SLOTS`] when no patch slot is left and to
/// [`stat::FATAL_TOO_SMALL`] when the patch owns fewer than
/// [`min_owned_faces`]; does nothing once a fatal error is recorded. A
/// patch flagged [`flag::CROWDED`] instead is sliced only when it owns a
/// quarter of the face slots or more and a sixteenth of the patch slots
/// stays free; else the flag is cleared.
#[inline(always)]
pub fn slice<B: Block>(block: &B, arena: &mut SharedArena, mesh: &DynMesh, p: u32, seed: Kind) {
    let flags = mesh.flags.load(p);
    if flags & (flag::SLICE | flag::CROWDED) == 0 {
        return;
    }
    // After a fatal error (in a round launched before the host read the
    // status of the round that asked for the slicing) nothing is sliced.
    // Read by one thread: another block may record an error meanwhile.
    let t0 = block.thread_idx() == 0;
    if block.sync_any(t0 && mesh.failed()) {
        return;
    }
    // A crowded patch (`flag::CROWDED`) is sliced only where that is cheap:
    // no error, and a reserve of patch slots for the patches that must be.
    let optional = flags & flag::SLICE == 0;
    let mut w = windows(arena, &mesh.cap, block.block_dim());
    arena.check();
    w.copy.p = p;
    let cap = mesh.cap;
    let ctl = w.ctl;
    let copy = w.copy;
    copy.load(block, mesh);
    if t0 {
        for i in 0..CTL_LEN {
            ctl.set(i, 0);
        }
        ctl.set(C_SEEDS, NONE);
    }
    block.sync();
    let nf = copy.count(Kind::Face);
    block.for_each(nf, |f| {
        if copy.is_owned(Kind::Face, f) {
            block.shared_min(ctl, C_SEEDS, f);
            block.shared_fetch_add(ctl, C_OWNED, 1);
        }
    });
    block.sync();
    if optional && ctl.get(C_OWNED) < cap.faces / 4 {
        if t0 {
            mesh.flags.fetch_and(p, !flag::CROWDED);
        }
        return;
    }
    if ctl.get(C_OWNED) < min_owned_faces(&cap) {
        if t0 {
            mesh.stats.store(stat::FATAL, stat::FATAL_TOO_SMALL);
        }
        return;
    }
    if t0 {
        let spare = if optional { cap.patches / 16 } else { 0 };
        ctl.set(C_PART, claim_slot(mesh, spare).unwrap_or(NONE));
    }
    cavity::build_edge_faces(block, &copy, w.ef_count, w.ef);
    let q = ctl.get(C_PART);
    if q == NONE {
        if t0 {
            if optional {
                mesh.flags.fetch_and(p, !flag::CROWDED);
            } else {
                mesh.stats.store(stat::FATAL, stat::FATAL_PATCH_SLOTS);
            }
        }
        return;
    }
    place_seeds(block, &w);
    for it in 0..LLOYD_ITERATIONS {
        let seeds = [ctl.get(C_SEEDS), ctl.get(C_SEEDS + 1)];
        block.sync();
        search(
            block,
            &w,
            w.label,
            |f| seeds.iter().position(|&s| s == f).map(|h| h as u32),
            |_, _| true,
        );
        if it + 1 < LLOYD_ITERATIONS {
            move_seeds(block, &w);
        }
    }
    balance(block, mesh, &w);
    choose_moves(block, &w);
    for mask in w.need {
        block.fill(mask, 0);
    }
    block.sync();
    mark_needed(block, &copy, w.need, |kind, l| {
        w.moves[kind as usize].bit(l)
    });
    block.sync();
    w.part.p = q;
    let part = w.part;
    build_part(block, mesh, &w, &part);
    hand_over(block, &w, q);
    if ctl.get(C_FATAL) != 0 {
        if t0 {
            mesh.stats.store(stat::FATAL, ctl.get(C_FATAL));
        }
        return;
    }
    split_declined(block, mesh, &w, seed);
    copy.store(block, mesh);
    part.store(block, mesh);
    super::global::fence();
    block.sync();
    if t0 {
        let before = mesh.flags.fetch_and(p, !(flag::SLICE | flag::CROWDED));
        let stale = before & flag::NEW_SWEEP;
        mesh.flags.fetch_or(p, flag::DIRTY | flag::CHANGED);
        mesh.flags.store(q, flag::DIRTY | flag::CHANGED | stale);
        mesh.locks.store(q, 0);
        // A crowded patch is queued already.
        if before & flag::QUEUED == 0 {
            mesh.enqueue(p);
        }
        mesh.enqueue(q);
    }
}

/// Moves the declined marks (`mesh.declined`) of the seeds of kind `seed`
/// that move to the new patch `w.part.p` there, at their new local
/// indices, and clears them in the patch: a seed whose fill-in declined in
/// the sweep stays out of it in either half (as when a neighbour takes it:
/// `migrate::carry_declined`). Both halves keep the sweep's marks, so a
/// half does not expand for the cavities its patch declined before it ran
/// out of room.
#[inline(always)]
fn split_declined<B: Block>(block: &B, mesh: &DynMesh, w: &Windows, seed: Kind) {
    let words = mesh.cap.declined_words();
    let k = seed as usize;
    let (from, to) = (w.copy.p * words, w.part.p * words);
    block.for_each(words, |i| mesh.declined.store(to + i, 0));
    super::global::fence();
    block.sync();
    block.for_each(w.copy.count(seed), |l| {
        if w.moves[k].bit(l) && mesh.declined.load(from + l / 32) >> (l % 32) & 1 == 1 {
            let m = w.local[k].get(l) as u32;
            mesh.declined.fetch_or(to + m / 32, 1 << (m % 32));
        }
    });
    block.sync();
    block.for_each(mesh.cap.of(seed) / 32, |i| {
        mesh.declined.fetch_and(from + i, !w.moves[k].get(i));
    });
}

/// Takes the next patch slot (one thread); `None` when all are in use but
/// `spare`.
#[inline(always)]
fn claim_slot(mesh: &DynMesh, spare: u32) -> Option<u32> {
    let mut n = mesh.queue_state.load(queue::PATCHES);
    loop {
        if n + spare >= mesh.cap.patches {
            return None;
        }
        let seen = mesh.queue_state.compare_exchange(queue::PATCHES, n, n + 1);
        if seen == n {
            return Some(n);
        }
        n = seen;
    }
}

/// First seeds: the smallest owned face, and an owned face it does not
/// reach when there is one, else the farthest from it.
#[inline(always)]
fn place_seeds<B: Block>(block: &B, w: &Windows) {
    let ctl = w.ctl;
    let s0 = ctl.get(C_SEEDS);
    search(block, w, w.label, |f| (f == s0).then_some(0), |_, _| true);
    block.for_each(w.copy.count(Kind::Face), |f| {
        if w.copy.is_owned(Kind::Face, f) {
            let l = w.label.get(f);
            let hops = if l == NONE { 0xffff } else { l >> 1 };
            block.shared_max(ctl, C_CENTRES, (hops << 16) | f);
        }
    });
    block.sync();
    if block.thread_idx() == 0 {
        ctl.set(C_SEEDS + 1, ctl.get(C_CENTRES) & 0xffff);
    }
    block.sync();
}

/// Moves each half's seed to its centre: the face of the half farthest
/// from the half's border (faces next to the other half, to faces the
/// patch does not own, or on a boundary or non-manifold edge).
#[inline(always)]
fn move_seeds<B: Block>(block: &B, w: &Windows) {
    let ctl = w.ctl;
    let side = |f: u32| half(w.label.get(f));
    let border = |f: u32| {
        (0..3).any(|i| match neighbour(w, f, i) {
            Some(g) => side(g) != side(f),
            None => true,
        })
    };
    search(
        block,
        w,
        w.inner,
        |f| border(f).then(|| side(f)),
        |f, g| side(f) == side(g),
    );
    block.for_each(2, |h| ctl.set(C_CENTRES + h, 0));
    block.sync();
    block.for_each(w.copy.count(Kind::Face), |f| {
        let l = w.inner.get(f);
        if l != NONE {
            block.shared_max(ctl, C_CENTRES + (l & 1), (((l >> 1) + 1) << 16) | f);
        }
    });
    block.sync();
    if block.thread_idx() == 0 {
        for h in 0..2 {
            let c = ctl.get(C_CENTRES + h);
            if c != 0 {
                ctl.set(C_SEEDS + h, c & 0xffff);
            }
        }
    }
    block.sync();
}

/// Owned faces of the patch for which `pred` holds (every thread gets
/// the count; returns after a barrier). Uses the `C_CENTRES` entry.
#[inline(always)]
fn count_owned<B: Block>(block: &B, w: &Windows, pred: impl Fn(u32) -> bool) -> u32 {
    let (ctl, copy) = (w.ctl, &w.copy);
    if block.thread_idx() == 0 {
        ctl.set(C_CENTRES, 0);
    }
    block.sync();
    block.for_each(copy.count(Kind::Face), |f| {
        if copy.is_owned(Kind::Face, f) && pred(f) {
            block.shared_fetch_add(ctl, C_CENTRES, 1);
        }
    });
    block.sync();
    let n = ctl.get(C_CENTRES);
    block.sync();
    n
}

/// Splits the owned faces by position when the assignment gives the
/// second half under a quarter of them: the faces whose centroids lie from
/// the median on, along the longest side of the centroids' bounding box,
/// move. Lloyd's iterations cannot leave a component of the owned faces
/// (they step across manifold edges between owned faces only), so a
/// second seed in a small component of its own (a face whose neighbours
/// are across boundary or non-manifold edges, or not owned) would move
/// just that component, and a patch slicing again and again by a face or
/// two would use up the patch slots. The halves of the fallback need not
/// be connected, but each is compact in space, so neither borders many
/// more patches than the patch did (a split by local index scattered the
/// halves: surface tracking on a 1000 x 1000 grid then gave a patch more
/// than 64 neighbours).
#[inline(always)]
fn balance<B: Block>(block: &B, mesh: &DynMesh, w: &Windows) {
    let (ctl, copy) = (w.ctl, &w.copy);
    let owned = ctl.get(C_OWNED);
    if 4 * count_owned(block, w, |f| half(w.label.get(f)) == 1) >= owned {
        return;
    }
    let nf = copy.count(Kind::Face);
    block.for_each(nf, |f| {
        if copy.is_owned(Kind::Face, f) {
            let c = vertex_sum(block, mesh, copy, f);
            for (a, &x) in c.iter().enumerate() {
                let k = order_key(x);
                block.shared_max(ctl, C_BOX + 2 * a as u32, k);
                block.shared_max(ctl, C_BOX + 2 * a as u32 + 1, !k);
            }
        }
    });
    block.sync();
    let extent = |a: usize| {
        let at = C_BOX + 2 * a as u32;
        from_order_key(ctl.get(at)) - from_order_key(!ctl.get(at + 1))
    };
    let axis = (1..3).fold(0, |best, a| if extent(a) > extent(best) { a } else { best });
    block.for_each(nf, |f| {
        if copy.is_owned(Kind::Face, f) {
            w.inner
                .set(f, order_key(vertex_sum(block, mesh, copy, f)[axis]));
        }
    });
    block.sync();
    // Faces in the order of `key << LOCAL_BITS | local index` (distinct):
    // the first half is the smallest prefix holding at least half of the
    // owned faces, so exactly the last ⌊owned / 2⌋ move, however many
    // positions are equal.
    let order = |f: u32| (w.inner.get(f) as u64) << LOCAL_BITS | f as u64;
    let first = smallest(0, 1 << (32 + LOCAL_BITS), |c| {
        2 * count_owned(block, w, |f| order(f) < c) >= owned
    });
    block.for_each(nf, |f| {
        if copy.is_owned(Kind::Face, f) {
            w.label.set(f, (order(f) >= first) as u32);
        }
    });
    block.sync();
}

/// The smallest `x` in `lo..=hi` for which `holds` (which is monotone and
/// holds at `hi`).
#[inline(always)]
fn smallest(mut lo: u64, mut hi: u64, mut holds: impl FnMut(u64) -> bool) -> u64 {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if holds(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// The sum of the positions of the vertices of face `f` of the working
/// copy (three times its centroid), read from their owners (a ribbon
/// copy's own attributes may be stale: smoothing and advection write the
/// owner's).
#[inline(always)]
fn vertex_sum<B: Block>(block: &B, mesh: &DynMesh, copy: &PatchCopy, f: u32) -> [f32; 3] {
    let mut c = [0.0; 3];
    for v in copy.face_vertices(f) {
        let owner = copy.owner_or_self(block, Kind::Vertex, v);
        for (a, x) in c.iter_mut().enumerate() {
            *x += f32::from_bits(mesh.vertex_attrs.load(mesh.attr_at(
                Kind::Vertex,
                owner,
                a as u32,
            )));
        }
    }
    c
}

/// A key that orders `f32` values as numbers (the larger value, the
/// larger key; NaN aside).
#[inline(always)]
fn order_key(x: f32) -> u32 {
    let b = x.to_bits();
    if b >> 31 == 1 { !b } else { b | 0x8000_0000 }
}

/// The value of an [`order_key`].
#[inline(always)]
fn from_order_key(k: u32) -> f32 {
    f32::from_bits(if k >> 31 == 1 { k & 0x7fff_ffff } else { !k })
}

/// Marks what moves: the owned faces of the second half, and each owned
/// vertex and edge whose smallest incident owned face moves.
#[inline(always)]
fn choose_moves<B: Block>(block: &B, w: &Windows) {
    let copy = &w.copy;
    for mask in w.moves {
        block.fill(mask, 0);
    }
    block.sync();
    let nf = copy.count(Kind::Face);
    block.for_each(nf, |f| {
        if copy.is_owned(Kind::Face, f) && half(w.label.get(f)) == 1 {
            block.shared_set_bit(w.moves[2], f);
        }
    });
    for kind in [Kind::Vertex, Kind::Edge] {
        block.fill(w.first, NONE);
        block.sync();
        block.for_each(nf, |f| {
            if !copy.is_owned(Kind::Face, f) {
                return;
            }
            for i in 0..3 {
                let x = match kind {
                    Kind::Vertex => copy.face_vertices(f)[i as usize],
                    _ => copy.face_edge(f, i).0,
                };
                block.shared_min(w.first, x, f);
            }
        });
        block.sync();
        block.for_each(copy.count(kind), |x| {
            let f = w.first.get(x);
            if copy.is_owned(kind, x) && f != NONE && w.moves[2].bit(f) {
                block.shared_set_bit(w.moves[kind as usize], x);
            }
        });
        block.sync();
    }
}

/// Builds the new patch in `part`: the held elements renumbered in order,
/// FE and EV translated, masks, ribbon entries naming each not-owned
/// element's owner, the stash, and the vertex attributes.
#[inline(always)]
fn build_part<B: Block>(block: &B, mesh: &DynMesh, w: &Windows, part: &PatchCopy) {
    let copy = &w.copy;
    for kind in Kind::ALL {
        let k = kind as usize;
        let n = copy.count(kind);
        block.for_each(n + 1, |l| {
            w.index.set(l, (l < n && w.need[k].bit(l)) as u32)
        });
        block.sync();
        let total = block.scan(w.index, n + 1, w.scan, false);
        block.sync();
        block.for_each(n, |l| {
            if w.need[k].bit(l) {
                w.local[k].set(l, w.index.get(l) as u16);
            }
        });
        if block.thread_idx() == 0 {
            part.counts.set(kind as u32, total);
        }
        block.sync();
    }
    block.fill(part.masks, 0);
    block.fill(part.hash, hash::EMPTY);
    block.fill(part.stash, NO_PATCH);
    if block.thread_idx() == 0 {
        part.counts.set(COUNT_STASH, 0);
    }
    block.sync();
    let fatal = |code: u32| block.shared_max(w.ctl, C_FATAL, code);
    for kind in Kind::ALL {
        let k = kind as usize;
        block.for_each(copy.count(kind), |l| {
            if !w.need[k].bit(l) {
                return;
            }
            let m = w.local[k].get(l) as u32;
            match kind {
                Kind::Face => {
                    for i in 0..3 {
                        let (e, r) = copy.face_edge(l, i);
                        let h = ((w.local[1].get(e) as u32) << 1) | r as u32;
                        part.fe.set(3 * m + i, h as u16);
                    }
                }
                Kind::Edge => {
                    for (i, v) in copy.edge_vertices(l).into_iter().enumerate() {
                        part.ev.set(2 * m + i as u32, w.local[0].get(v));
                    }
                }
                Kind::Vertex => {}
            }
            part.set_bit(block, kind, true, m, true);
            let Some(owner) = copy.owner(block, kind, l) else {
                fatal(stat::FATAL_CHAIN);
                return;
            };
            mesh.copy_attrs(kind, owner, (part.p, m));
            if w.moves[k].bit(l) {
                part.set_bit(block, kind, false, m, true);
                return;
            }
            let Some(s) = part.stash_index_or_add(block, owner.0) else {
                fatal(stat::FATAL_STASH);
                return;
            };
            if !hash::insert::<RIBBON, _>(&part.table(block, kind), hash::entry(m, s, owner.1)) {
                fatal(stat::FATAL_HASH);
            }
        });
    }
    block.sync();
}

/// Gives the moved elements up in the old patch. Every moved vertex, and
/// the moved edges and faces that the half it keeps or another patch may
/// hold a copy of (what owning everything but the moved elements needs by
/// the ribbon rule: other patches hold copies of the faces next to what
/// they own, which this patch holds as its ribbon), become not-owned with
/// forwarding entries naming their place in the new patch `q`; the rest
/// leave the patch. Vertices always keep one: a patch owning a faceless
/// edge (face and edge deletions leave them) holds its vertices, and this
/// patch need not hold that edge, so it cannot tell whether someone names
/// the vertex. Forwarding entries for every moved edge and face would fill the
/// ribbon tables: a full patch moves half of what it owns.
#[inline(always)]
fn hand_over<B: Block>(block: &B, w: &Windows, q: u32) {
    let copy = &w.copy;
    for mask in w.need {
        block.fill(mask, 0);
    }
    block.sync();
    mark_needed(block, copy, w.need, |kind, l| {
        !w.moves[kind as usize].bit(l)
    });
    block.sync();
    if block.thread_idx() == 0 {
        match copy.stash_index_or_add(block, q) {
            Some(s) => w.ctl.set(C_STASH, s),
            None => w.ctl.set(C_FATAL, stat::FATAL_STASH),
        }
    }
    block.sync();
    if w.ctl.get(C_FATAL) != 0 {
        return;
    }
    let s = w.ctl.get(C_STASH);
    for kind in Kind::ALL {
        let k = kind as usize;
        block.for_each(copy.count(kind), |l| {
            if !w.moves[k].bit(l) {
                return;
            }
            copy.set_bit(block, kind, false, l, false);
            if kind != Kind::Vertex && !w.need[k].bit(l) {
                copy.set_bit(block, kind, true, l, false);
                return;
            }
            let e = hash::entry(l, s, w.local[k].get(l) as u32);
            if !hash::insert::<RIBBON, _>(&copy.table(block, kind), e) {
                block.shared_max(w.ctl, C_FATAL, stat::FATAL_HASH);
            }
        });
    }
    block.sync();
}

crate::kernel! {
    @core
    /// Patch slicing: one block per patch slot in use splits the patches
    /// flagged `SLICE` ([`slice()`]); `seed` is the seed kind (`Kind as u32`)
    /// of the application whose round flagged them.
    ///
    /// # Safety
    /// The mesh describes live arrays of a dynamic mesh; no update kernel
    /// runs meanwhile; dynamic shared memory is
    /// [`shared_bytes`]`(&mesh.cap, threads)`.
    #[launch_bounds = DYNAMIC_BOUNDS]
    #[host_zeroed_shared]
    pub kernel Slice(launch, mesh: RawDynamicMesh, seed: u32) {
        // SAFETY: the kernel's contract.
        let m = unsafe { DynMesh::new(&mesh) };
        let seed = Kind::ALL[seed as usize % 3];
        slice(launch.block, launch.arena, &m, launch.block_idx, seed);
    }
}

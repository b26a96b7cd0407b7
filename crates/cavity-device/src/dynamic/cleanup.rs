//! The cleanup kernels run between update rounds, when no block is changing
//! patches (dynamic paper, section 5.1; RXMesh's dynamic cleanup):
//!
//! 1. [`calibrate`]: every ribbon entry is pointed straight at the element's
//!    current owner (a migration leaves a forwarding entry in the old
//!    owner), and ribbon copies of elements deleted by their owner are
//!    deactivated; patches with no `DIRTY` patch around them are skipped.
//! 2. [`compact`]: ribbon copies a patch no longer needs (not incident to
//!    what it owns) are dropped, the ribbon tables rebuilt, the patch stash
//!    compacted, the high-water marks lowered and the round's `DIRTY` flag
//!    cleared; patches that did not change and whose ribbon the calibration
//!    left alone are skipped; `NAMED` is cleared (the neighbours that
//!    copied from a patch dropped the copies they do not need); the
//!    scheduler's round is closed (`queue::close_round`). Slots freed
//!    here are reused from the next round on: nothing names them any more.

use crate::block::{Block, Shared, SharedArena};
use crate::kernel::DYNAMIC_BOUNDS;
use crate::layout::Kind;

use super::hash::{self, RIBBON};
use super::layout::RawDynamicMesh;
use super::layout::{COUNT_STASH, Capacity, NO_PATCH, STASH_SIZE, flag, stat};
use super::patch::{DynMesh, PatchCopy};
use super::queue;

/// Longest ownership chain the cleanup follows (a round moves an element at
/// most once, so one forwarding hop is the most a round leaves).
const MAX_HOPS: u32 = 4;

/// Points patch `p`'s ribbon entries at the current owners and deactivates
/// copies of deleted elements (global memory; one block per patch, all
/// patches at once: each block writes only its own patch). When the patch
/// stash has no room for a new owner, the entries no ribbon entry uses any
/// more are freed and the rest is pointed again; `stat::FATAL_STASH` only
/// when that does not make room either. Does nothing unless `p` or a patch
/// in its stash is `DIRTY` (`near_change`), and follows only the entries
/// that name a `DIRTY` owner.
#[inline(always)]
pub fn calibrate<B: Block>(block: &B, mesh: &DynMesh, p: u32) {
    if !near_change(block, mesh, p) {
        return;
    }
    if block.sync_any(repoint(block, mesh, p)) {
        reclaim_stash(block, mesh, p);
        block.sync();
        if block.sync_any(repoint(block, mesh, p)) && block.thread_idx() == 0 {
            mesh.stats.store(stat::FATAL, stat::FATAL_STASH);
        }
    }
}

/// Whether patch `p` or a patch in its stash changed since the last
/// cleanup (`DIRTY`), the only case in which an entry of `p` can be stale:
/// entries name owners through `p`'s stash, and an element changes owner
/// or dies only in a `DIRTY` patch (a commit marks the committing patch, a
/// migration the patch it took from, a slicing both halves). The same in
/// every thread.
#[inline(always)]
fn near_change<B: Block>(block: &B, mesh: &DynMesh, p: u32) -> bool {
    let mut dirty = false;
    block.for_each(STASH_SIZE + 1, |i| {
        let q = if i == STASH_SIZE {
            p
        } else {
            mesh.stash.load(p * STASH_SIZE + i)
        };
        dirty |= q != NO_PATCH && mesh.flags.load(q) & flag::DIRTY != 0;
    });
    block.sync_any(dirty)
}

/// Frees the entries of patch `p`'s stash that no ribbon entry of an
/// active, not-owned element names (only `p`'s own tables hold its stash
/// indices).
#[inline(always)]
fn reclaim_stash<B: Block>(block: &B, mesh: &DynMesh, p: u32) {
    let cap = mesh.cap;
    block.for_each(STASH_SIZE, |s| {
        let named = Kind::ALL.into_iter().any(|kind| {
            let base = p * cap.hash_stride() + cap.table_offset(kind);
            (0..cap.table_words(kind)).any(|i| {
                let e = mesh.hash.load(base + i);
                let l = hash::key_of(e);
                e != hash::EMPTY
                    && hash::value_of(e).0 == s
                    && mesh.bit(p, kind, true, l)
                    && !mesh.bit(p, kind, false, l)
            })
        });
        if !named {
            mesh.stash.store(p * STASH_SIZE + s, NO_PATCH);
        }
    });
}

/// The pointing pass of [`calibrate`]; returns (in this thread) whether an
/// entry found the stash full and was left as it was.
#[inline(always)]
fn repoint<B: Block>(block: &B, mesh: &DynMesh, p: u32) -> bool {
    let mut full = false;
    for kind in Kind::ALL {
        let table = mesh.table(p, kind);
        block.for_each(mesh.count(p, kind), |l| {
            if !mesh.bit(p, kind, true, l) || mesh.bit(p, kind, false, l) {
                return;
            }
            let Some((q0, l0)) = mesh.owner(p, kind, l) else {
                mesh.stats.store(stat::FATAL, stat::FATAL_CHAIN);
                return;
            };
            // An element leaves its owner or dies only in a DIRTY patch
            // (see `near_change`): an entry that names an owner that is
            // not DIRTY still names the live element there.
            if mesh.flags.load(q0) & flag::DIRTY == 0 {
                return;
            }
            let (mut q, mut lq) = (q0, l0);
            let mut hops = 0;
            let live = loop {
                if !mesh.bit(q, kind, true, lq) {
                    break false;
                }
                if mesh.bit(q, kind, false, lq) {
                    break true;
                }
                hops += 1;
                match mesh.owner(q, kind, lq) {
                    Some(next) if hops < MAX_HOPS => (q, lq) = next,
                    _ => {
                        mesh.stats.store(stat::FATAL, stat::FATAL_CHAIN);
                        return;
                    }
                }
            };
            if !live || (q, lq) != (q0, l0) {
                mesh.flags.fetch_or(p, flag::TOUCHED | flag::CHANGED);
            }
            if !live {
                mesh.set_bit(p, kind, true, l, false);
            } else if (q, lq) != (q0, l0) {
                if q == p {
                    mesh.stats.store(stat::FATAL, stat::FATAL_CHAIN);
                    return;
                }
                match mesh.stash_index_or_add(p, q) {
                    Some(s) => {
                        hash::upsert(&table, hash::entry(l, s, lq));
                    }
                    None => full = true,
                }
            }
        });
    }
    full
}

/// Shared memory of [`compact`] in bytes.
pub fn compact_shared_bytes(cap: &Capacity, threads: u32) -> usize {
    let mut arena = SharedArena::measuring();
    compact_windows(&mut arena, cap, threads);
    arena.used()
}

struct CompactWindows {
    copy: PatchCopy,
    need: [Shared<u32>; 3],
    entries: Shared<u32>,
    remap: Shared<u32>,
    top: Shared<u32>,
}

fn compact_windows(arena: &mut SharedArena, cap: &Capacity, _threads: u32) -> CompactWindows {
    CompactWindows {
        copy: PatchCopy::alloc(arena, *cap, 0),
        need: [
            arena.alloc(cap.vertices / 32),
            arena.alloc(cap.edges / 32),
            arena.alloc(cap.faces / 32),
        ],
        entries: arena.alloc(cap.hash_stride()),
        remap: arena.alloc(STASH_SIZE),
        top: arena.alloc(4),
    }
}

/// Drops the ribbon copies patch `p` does not need, rebuilds its ribbon
/// tables and stash, lowers its high-water marks and clears `DIRTY`.
#[inline(always)]
pub fn compact<B: Block>(block: &B, arena: &mut SharedArena, mesh: &DynMesh, p: u32) {
    let cap = mesh.cap;
    if p == 0 && block.thread_idx() == 0 {
        queue::close_round(mesh.queue_state);
    }
    let flags = mesh.flags.load(p);
    if flags & flag::NAMED != 0 && block.thread_idx() == 0 {
        mesh.flags.fetch_and(p, !flag::NAMED);
    }
    // Patches that neither changed nor had their ribbon touched are as the
    // last compaction left them.
    if flags & (flag::DIRTY | flag::TOUCHED) == 0 {
        return;
    }
    let w = compact_windows(arena, &cap, block.block_dim());
    arena.check();
    let mut copy = w.copy;
    copy.p = p;
    copy.load(block, mesh);
    for (k, kind) in Kind::ALL.into_iter().enumerate() {
        block.for_each(cap.of(kind) / 32, |i| w.need[k].set(i, 0));
    }
    block.for_each(STASH_SIZE, |s| w.remap.set(s, 0));
    block.for_each(4, |i| w.top.set(i, 0));
    block.sync();
    mark_needed(block, &copy, w.need, |kind, l| copy.is_owned(kind, l));
    block.sync();
    // Keep the entries of needed copies (by slot), then clear the tables.
    block.for_each(cap.hash_stride(), |i| {
        let e = copy.hash.get(i);
        let kind = cap.table_kind(i);
        let keep = e != hash::EMPTY
            && copy.is_active(kind, hash::key_of(e))
            && w.need[kind as usize].bit(hash::key_of(e));
        w.entries.set(i, if keep { e } else { hash::EMPTY });
        if keep {
            w.remap.set(hash::value_of(e).0, 1);
        }
    });
    block.sync();
    for (k, kind) in Kind::ALL.into_iter().enumerate() {
        block.for_each(copy.count(kind), |l| {
            if copy.is_active(kind, l) && !copy.is_owned(kind, l) && !w.need[k].bit(l) {
                copy.set_bit(block, kind, true, l, false);
            }
        });
    }
    block.for_each(cap.hash_stride(), |i| copy.hash.set(i, hash::EMPTY));
    block.sync();
    // Stash: used entries keep their order, compacted to the front.
    if block.thread_idx() == 0 {
        let mut n = 0;
        for s in 0..STASH_SIZE {
            let q = copy.stash.get(s);
            if w.remap.get(s) == 1 && q != NO_PATCH {
                w.remap.set(s, n);
                copy.stash.set(n, q);
                n += 1;
            } else {
                w.remap.set(s, NO_PATCH);
            }
        }
        for s in n..STASH_SIZE {
            copy.stash.set(s, NO_PATCH);
        }
        copy.counts.set(COUNT_STASH, n);
    }
    block.sync();
    block.for_each(cap.hash_stride(), |i| {
        let e = w.entries.get(i);
        if e != hash::EMPTY {
            let kind = cap.table_kind(i);
            let (s, ol) = hash::value_of(e);
            let ok = hash::insert::<RIBBON, _>(
                &copy.table(block, kind),
                hash::entry(hash::key_of(e), w.remap.get(s), ol),
            );
            if !ok {
                mesh.stats.store(stat::FATAL, stat::FATAL_HASH);
            }
        }
    });
    // High-water marks: one past the last active element.
    for (k, kind) in Kind::ALL.into_iter().enumerate() {
        block.for_each(copy.count(kind), |l| {
            if copy.is_active(kind, l) {
                block.shared_max(w.top, k as u32, l + 1);
            }
        });
    }
    block.sync();
    if block.thread_idx() == 0 {
        for k in 0..3 {
            copy.counts.set(k, w.top.get(k));
        }
    }
    block.sync();
    copy.store(block, mesh);
    if block.thread_idx() == 0 {
        mesh.flags.fetch_and(p, !(flag::DIRTY | flag::TOUCHED));
    }
}

/// Sets `need[kind]` bits (cleared by the caller) of what a patch holding
/// `copy`'s elements needs when it owns the elements `owned` accepts: those
/// elements and every active face incident to them, with the faces' edges
/// and vertices and the owned edges' vertices (the ribbon rule of the
/// dynamic paper, section 5.1). Visible after a barrier.
#[inline(always)]
pub fn mark_needed<B: Block>(
    block: &B,
    copy: &PatchCopy,
    need: [Shared<u32>; 3],
    owned: impl Fn(Kind, u32) -> bool,
) {
    block.for_each(copy.count(Kind::Face), |f| {
        if !copy.is_active(Kind::Face, f) {
            return;
        }
        let mut needed = owned(Kind::Face, f);
        for i in 0..3 {
            needed |= owned(Kind::Edge, copy.face_edge(f, i).0);
        }
        for v in copy.face_vertices(f) {
            needed |= owned(Kind::Vertex, v);
        }
        if needed {
            block.shared_set_bit(need[2], f);
            for i in 0..3 {
                block.shared_set_bit(need[1], copy.face_edge(f, i).0);
            }
            for v in copy.face_vertices(f) {
                block.shared_set_bit(need[0], v);
            }
        }
    });
    block.for_each(copy.count(Kind::Edge), |e| {
        if copy.is_active(Kind::Edge, e) && owned(Kind::Edge, e) {
            block.shared_set_bit(need[1], e);
            for v in copy.edge_vertices(e) {
                block.shared_set_bit(need[0], v);
            }
        }
    });
    block.for_each(copy.count(Kind::Vertex), |v| {
        if copy.is_active(Kind::Vertex, v) && owned(Kind::Vertex, v) {
            block.shared_set_bit(need[0], v);
        }
    });
}

crate::kernel! {
    @core
    /// Cleanup, first kernel: one block per patch points the ribbon entries
    /// at the current owners ([`calibrate`]).
    ///
    /// # Safety
    /// The mesh describes live arrays of a dynamic mesh; no update kernel
    /// runs meanwhile; no shared memory.
    #[launch_bounds = DYNAMIC_BOUNDS]
    pub kernel Calibrate(launch, mesh: RawDynamicMesh) {
        // SAFETY: the kernel's contract.
        let m = unsafe { DynMesh::new(&mesh) };
        calibrate(launch.block, &m, launch.block_idx);
    }
}

crate::kernel! {
    @core
    /// Cleanup, second kernel: one block per patch drops surplus ribbon
    /// elements and clears the round's flags ([`compact`]).
    ///
    /// # Safety
    /// As for [`Calibrate`]; dynamic shared memory is
    /// [`compact_shared_bytes`]`(&mesh.cap, threads)`.
    #[launch_bounds = DYNAMIC_BOUNDS]
    #[host_zeroed_shared]
    pub kernel Compact(launch, mesh: RawDynamicMesh) {
        // SAFETY: the kernel's contract.
        let m = unsafe { DynMesh::new(&mesh) };
        compact(launch.block, launch.arena, &m, launch.block_idx);
    }
}

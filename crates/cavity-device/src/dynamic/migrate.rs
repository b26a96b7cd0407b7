//! Patch expansion (dynamic paper, sections 4.1 and 5.2, fig. 5): before a
//! cavity is filled in, its patch must own every element of the cavity's
//! closure. For closure elements owned by a neighbour patch `q`, one thread
//! locks `q` (spin lock with backoff, bounded tries); the block copies into
//! its working copy every face of `q` incident to the wanted elements (with
//! their edges and vertices: the one-rings the new owner must see), then
//! takes ownership: clears `q`'s owned bits, leaves a forwarding entry in
//! `q`'s ribbon table, moves the attributes, marks `q` changed in this round
//! and unlocks it. Cavities whose neighbour cannot be locked drop out and
//! are retried later; nothing global changes before every copy succeeded.
//! A neighbour this processing already took elements from is `DIRTY` but
//! may be locked again for a further step (no other block touches a
//! `DIRTY` patch, so this block's view of it is current).
//!
//! Invariant kept (checked by the host's `validate`): a patch holds every
//! face incident to an element it owns, so the owner of a vertex or edge
//! sees its whole star, and only the owner changes it.
//!
//! Longer than 700 lines as one file on purpose: migration is one step of
//! the patch expansion whose parts (closures, copies, inverse tables,
//! ownership) share the private view of the source patch (`Source`).

use core::cell::Cell;

use crate::block::{Block, Shared, SharedArena};
use crate::layout::Kind;

use super::cavity::{
    self, CTL_FATAL, CTL_LOCKED, CTL_NEED, CTL_NO_ROOM, CTL_TAKEN, CTL_WAITING, NONE, Template,
    Work,
};
use super::global::fence;
use super::hash::{self, INVERSE, RIBBON};
use super::layout::{Capacity, LOCAL_BITS, LOCAL_MASK, STASH_SIZE, flag, stat};
use super::lock;
use super::patch::{DynMesh, PatchCopy, SharedTable};

/// Shared-memory windows of the migration.
#[derive(Clone, Copy)]
pub struct Migration {
    /// Per kind, bitmask of local elements the cavities need to own.
    pub need: [Shared<u32>; 3],
    /// Per kind, bitmask over the neighbour's local elements wanted.
    pub want: [Shared<u32>; 3],
    /// Bitmasks over the neighbour's vertices and edges already mapped.
    pub claimed: [Shared<u32>; 2],
    /// Neighbour-local vertex / edge → local index here.
    pub map: [Shared<u16>; 2],
    /// Neighbour faces to copy.
    pub list: Shared<u16>,
    /// Inverse ribbon tables: (stash index, owner-local) → local, by kind.
    pub inverse: Shared<u32>,
    /// Length of `list`, and of the pending list of a copy phase.
    pub len: Shared<u32>,
    /// Per stash index `s` of a locked neighbour: this patch's index in
    /// that neighbour's stash (where its forwarding entries point).
    pub back: Shared<u32>,
}

impl Migration {
    /// Windows for capacity `cap`.
    #[inline(always)]
    pub fn alloc(arena: &mut SharedArena, cap: &Capacity) -> Self {
        Migration {
            need: [
                arena.alloc(cap.vertices / 32),
                arena.alloc(cap.edges / 32),
                arena.alloc(cap.faces / 32),
            ],
            want: [
                arena.alloc(cap.vertices / 32),
                arena.alloc(cap.edges / 32),
                arena.alloc(cap.faces / 32),
            ],
            claimed: [arena.alloc(cap.vertices / 32), arena.alloc(cap.edges / 32)],
            map: [arena.alloc(cap.vertices), arena.alloc(cap.edges)],
            list: arena.alloc(cap.faces),
            inverse: arena.alloc(cap.hash_stride()),
            len: arena.alloc(LEN_ENTRIES),
            back: arena.alloc(STASH_SIZE),
        }
    }

    fn inverse_table<'b, B: Block>(
        &self,
        block: &'b B,
        cap: &Capacity,
        kind: Kind,
    ) -> SharedTable<'b, B> {
        SharedTable {
            block,
            words: self.inverse,
            base: cap.table_offset(kind),
            slots: cap.hash_slots(kind),
        }
    }
}

/// What [`visit_closures`] does with a not-owned closure element.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// Mark it needed and its owner's stash bit.
    Collect,
    /// Drop the cavity when its owner was not locked.
    DropUnlocked,
    /// Drop the cavity (no further migration in this round).
    DropAll,
}

/// Visits every element of the closure of every cavity in the independent
/// set that the patch does not own, and acts as `what` says. A dropped
/// cavity is lost and its seed waits (`Work::waiting`). Returns, after a
/// barrier, whether a cavity was dropped.
#[inline(always)]
pub fn visit_closures<B: Block>(
    block: &B,
    copy: &PatchCopy,
    work: &Work,
    mig: &Migration,
    template: Template,
    what: Needs,
) -> bool {
    let dropped = Cell::new(false);
    let visit = |kind: Kind, l: u32, c: u32| {
        if copy.is_owned(kind, l) {
            return;
        }
        let s = hash::lookup(&copy.table(block, kind), l).map(|x| x.0);
        let locked = |s: u32| work.ctl.bit(CTL_LOCKED * 32 + s);
        match (what, s) {
            (Needs::Collect, Some(s)) => {
                block.shared_set_bit(mig.need[kind as usize], l);
                block.shared_set_bit(work.ctl, CTL_NEED * 32 + s);
            }
            (Needs::DropUnlocked, Some(s)) if locked(s) => {}
            _ => {
                dropped.set(true);
                work.state.set(c, cavity::state::LOST);
                block.shared_set_bit(work.waiting, work.seeds.get(c) as u32);
                work.ctl.set(CTL_WAITING, 1);
            }
        }
    };
    let won = |k: u32| k != NONE && work.state.get(k & 0xffff) == cavity::state::WON;
    block.for_each(copy.count(Kind::Face), |f| {
        let k = work.cav[2].get(f);
        if won(k) && copy.is_active(Kind::Face, f) {
            visit(Kind::Face, f, k & 0xffff);
            for i in 0..3 {
                visit(Kind::Edge, copy.face_edge(f, i).0, k & 0xffff);
            }
            for v in copy.face_vertices(f) {
                visit(Kind::Vertex, v, k & 0xffff);
            }
        }
    });
    block.for_each(copy.count(Kind::Edge), |e| {
        let k = work.cav[1].get(e);
        if won(k) && copy.is_active(Kind::Edge, e) {
            visit(Kind::Edge, e, k & 0xffff);
            for v in copy.edge_vertices(e) {
                visit(Kind::Vertex, v, k & 0xffff);
            }
        }
    });
    if template.deletes_vertices() {
        block.for_each(copy.count(Kind::Vertex), |v| {
            let k = work.cav[0].get(v);
            if won(k) {
                visit(Kind::Vertex, v, k & 0xffff);
            }
        });
    }
    block.sync_any(dropped.get())
}

/// What a migration did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expansion {
    /// Nothing was needed, or no neighbour could be locked.
    Unchanged,
    /// Elements changed owner: the patch must commit.
    Changed,
    /// Out of room (or a fatal capacity): nothing global changed; the
    /// working copy may hold extra ribbon copies (consistent ones), and the
    /// cavities that needed the expansion must be dropped.
    Failed,
}

/// Expands the patch so that it owns the closures of the cavities in the
/// independent set (see the module documentation). Cavities it could not
/// serve are marked lost. Every thread calls it.
#[inline(always)]
pub fn migrate<B: Block>(
    block: &B,
    mesh: &DynMesh,
    copy: &PatchCopy,
    work: &Work,
    mig: &Migration,
    template: Template,
) -> Expansion {
    let p = copy.p;
    let t0 = block.thread_idx() == 0;
    for w in mig.need {
        block.fill(w, 0);
    }
    block.for_each(2, |i| {
        work.ctl.set(CTL_NEED + i, 0);
        work.ctl.set(CTL_LOCKED + i, 0);
    });
    block.sync();
    let dropped = visit_closures(block, copy, work, mig, template, Needs::Collect);
    let any = work.ctl.get(CTL_NEED) | work.ctl.get(CTL_NEED + 1) != 0;
    if !any {
        return Expansion::Unchanged;
    }
    // The neighbours are locked side by side, one thread each (the stash
    // names each neighbour once); a neighbour already changed in this
    // round is given back (its ribbon copies here may be stale), unless
    // this block changed it (then nobody else has since: a DIRTY patch is
    // neither processed nor expanded into).
    block.for_each(STASH_SIZE, |s| {
        if work.ctl.bit(CTL_NEED * 32 + s) {
            let q = copy.stash.get(s);
            if lock::try_lock(mesh.locks, q, p) {
                let ours = work.ctl.bit(CTL_TAKEN * 32 + s);
                if ours || mesh.flags.load(q) & flag::DIRTY == 0 {
                    block.shared_set_bit(work.ctl, CTL_LOCKED * 32 + s);
                } else {
                    lock::unlock(mesh.locks, q);
                }
            }
        }
    });
    block.sync();
    fence();
    // Keep only the cavities whose neighbours are all locked, recollect
    // what they need, and give back the neighbours no cavity needs now (a
    // neighbour is marked changed only when elements leave it). Nothing to
    // do when every needed neighbour is locked and no cavity was dropped
    // (the usual case): the needs stand.
    let all_locked =
        (0..2).all(|i| work.ctl.get(CTL_NEED + i) & !work.ctl.get(CTL_LOCKED + i) == 0);
    if dropped || !all_locked {
        visit_closures(block, copy, work, mig, template, Needs::DropUnlocked);
        for w in mig.need {
            block.fill(w, 0);
        }
        block.for_each(2, |i| work.ctl.set(CTL_NEED + i, 0));
        block.sync();
        visit_closures(block, copy, work, mig, template, Needs::Collect);
        // The locked set as it is, read before any thread clears a bit of
        // it.
        let locked = [0, 1].map(|i| work.ctl.get(CTL_LOCKED + i));
        block.sync();
        block.for_each(STASH_SIZE, |s| {
            let was_locked = (locked[(s / 32) as usize] >> (s % 32)) & 1 == 1;
            if was_locked && !work.ctl.bit(CTL_NEED * 32 + s) {
                block.shared_fetch_and(work.ctl, CTL_LOCKED + s / 32, !(1 << (s % 32)));
                lock::unlock(mesh.locks, copy.stash.get(s));
            }
        });
        block.sync();
    }
    build_inverse(block, copy, work, mig);
    // Copy the wanted stars of every locked neighbour.
    for s in 0..STASH_SIZE {
        if work.ctl.bit(CTL_LOCKED * 32 + s) {
            copy_from(block, mesh, copy, work, mig, s);
        }
    }
    // Room for a forwarding entry: this patch in each neighbour's stash
    // (one thread per neighbour; the block holds each one's lock). The
    // errors so far are read before any thread records a full stash.
    let earlier = t0 && work.ctl.get(CTL_NO_ROOM) | work.ctl.get(CTL_FATAL) != 0;
    block.sync();
    let mut full = false;
    block.for_each(STASH_SIZE, |s| {
        if work.ctl.bit(CTL_LOCKED * 32 + s) {
            match mesh.stash_index_or_add(copy.stash.get(s), p) {
                Some(back) => mig.back.set(s, back),
                None => {
                    work.ctl.set(CTL_FATAL, stat::FATAL_STASH);
                    full = true;
                }
            }
        }
    });
    let failed = block.sync_any(full || earlier);
    if !failed {
        take_ownership(block, mesh, copy, work, mig, template.seed_kind());
    }
    block.sync();
    fence();
    block.sync();
    block.for_each(STASH_SIZE, |s| {
        if work.ctl.bit(CTL_LOCKED * 32 + s) {
            let q = copy.stash.get(s);
            if failed {
                mesh.flags.fetch_or(q, flag::NAMED);
            } else {
                mesh.flags.fetch_or(q, flag::DIRTY | flag::CHANGED);
                block.shared_set_bit(work.ctl, CTL_TAKEN * 32 + s);
            }
            lock::unlock(mesh.locks, q);
        }
    });
    if t0 && failed {
        mesh.add_stat(stat::CAPACITY, 1);
    }
    let locked = work.ctl.get(CTL_LOCKED) | work.ctl.get(CTL_LOCKED + 1) != 0;
    block.sync();
    if failed {
        Expansion::Failed
    } else if locked {
        Expansion::Changed
    } else {
        Expansion::Unchanged
    }
}

/// Fills the inverse ribbon tables from the patch's ribbon tables.
#[inline(always)]
fn build_inverse<B: Block>(block: &B, copy: &PatchCopy, work: &Work, mig: &Migration) {
    let cap = copy.cap;
    block.for_each(cap.hash_stride(), |i| mig.inverse.set(i, hash::EMPTY));
    block.sync();
    block.for_each(cap.hash_stride(), |i| {
        let e = copy.hash.get(i);
        if e != hash::EMPTY {
            let kind = cap.table_kind(i);
            let (s, ol) = hash::value_of(e);
            let inv = ((s << LOCAL_BITS | ol) << INVERSE) | hash::key_of(e);
            if !hash::insert::<INVERSE, _>(&mig.inverse_table(block, &cap, kind), inv) {
                work.ctl.set(CTL_FATAL, stat::FATAL_HASH);
            }
        }
    });
    block.sync();
}

/// The neighbour being copied from, with everything a copy touches.
struct Source<'a, B: Block> {
    block: &'a B,
    mesh: &'a DynMesh,
    copy: &'a PatchCopy,
    work: &'a Work,
    mig: &'a Migration,
    q: u32,
    /// `q`'s index in this patch's stash.
    s: u32,
}

impl<B: Block> Clone for Source<'_, B> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<B: Block> Copy for Source<'_, B> {}

/// The owner identity of neighbour `q`'s local `lq` of `kind` as this
/// patch names it: the stash index (or `None` for this patch itself) and
/// the owner-local index. Entries name owners as of the last cleanup, in
/// `q` as here, so identities compare; the one exception is an element
/// this patch took over in an earlier pass of this processing, found
/// through the forwarding entry it left in the old owner. An element `q`
/// owns (most of what is copied) is named by `q`'s stash index without a
/// search. Returns `None` (a fatal error) when the element cannot be
/// resolved or the stash is full.
#[inline(always)]
fn identity<B: Block>(src: &Source<'_, B>, kind: Kind, lq: u32) -> Option<(Option<u32>, u32)> {
    let Source {
        block,
        mesh,
        copy,
        work,
        q,
        ..
    } = *src;
    let Some((mut r, mut lr)) = mesh.owner(q, kind, lq) else {
        work.ctl.set(CTL_FATAL, stat::FATAL_CHAIN);
        return None;
    };
    if r == q {
        return Some((Some(src.s), lr));
    }
    if r != copy.p
        && !mesh.bit(r, kind, false, lr)
        && let Some((t, lt)) = mesh.owner(r, kind, lr)
        && t == copy.p
    {
        (r, lr) = (t, lt);
    }
    if r == copy.p {
        return Some((None, lr));
    }
    match copy.stash_index_or_add(block, r) {
        Some(sr) => Some((Some(sr), lr)),
        None => {
            work.ctl.set(CTL_FATAL, stat::FATAL_STASH);
            None
        }
    }
}

/// Local index here of neighbour `q`'s local `lq` of `kind` if the patch
/// holds it (owned, or a ribbon copy; [`LOCAL_MASK`] on a fatal error),
/// else its owner identity `stash << LOCAL_BITS | owner_local` for
/// [`add_copy`]. Lookups only: no insertion may run meanwhile.
#[inline(always)]
fn existing<B: Block>(src: &Source<'_, B>, kind: Kind, lq: u32) -> Result<u32, u32> {
    let Source {
        block, copy, mig, ..
    } = *src;
    match identity(src, kind, lq) {
        None => Ok(LOCAL_MASK),
        Some((None, l)) => Ok(l),
        Some((Some(sr), lr)) => {
            let id = sr << LOCAL_BITS | lr;
            let inv = mig.inverse_table(block, &copy.cap, kind);
            hash::get::<INVERSE, _>(&inv, id).ok_or(id)
        }
    }
}

/// Adds in slot `l` (reserved, free) a not-owned copy of an element of
/// `kind` absent here, whose owner identity [`existing`] returned as `id`
/// (a hash table that overflows is flagged fatal).
#[inline(always)]
fn add_copy<B: Block>(src: &Source<'_, B>, kind: Kind, l: u32, id: u32) {
    let Source {
        block,
        copy,
        work,
        mig,
        ..
    } = *src;
    let (sr, lr) = (id >> LOCAL_BITS, id & LOCAL_MASK);
    copy.set_bit(block, kind, true, l, true);
    let inv = mig.inverse_table(block, &copy.cap, kind);
    let ok = hash::insert::<RIBBON, _>(&copy.table(block, kind), hash::entry(l, sr, lr))
        && hash::insert::<INVERSE, _>(&inv, ((sr << LOCAL_BITS | lr) << INVERSE) | l);
    if !ok {
        work.ctl.set(CTL_FATAL, stat::FATAL_HASH);
    }
}

/// Copies into the working copy every face of neighbour `copy.stash[s]`
/// incident to an element the cavities need from it, with the faces' edges
/// and vertices (deduplicated against what the patch already holds).
#[inline(always)]
fn copy_from<B: Block>(
    block: &B,
    mesh: &DynMesh,
    copy: &PatchCopy,
    work: &Work,
    mig: &Migration,
    s: u32,
) {
    let cap = copy.cap;
    let q = copy.stash.get(s);
    for w in mig.want.into_iter().chain(mig.claimed) {
        block.fill(w, 0);
    }
    block.for_each(LEN_ENTRIES, |i| mig.len.set(i, 0));
    block.sync();
    for (k, kind) in Kind::ALL.into_iter().enumerate() {
        block.for_each(copy.count(kind), |l| {
            if mig.need[k].bit(l)
                && let Some((ss, lq)) = hash::lookup(&copy.table(block, kind), l)
                && ss == s
            {
                block.shared_set_bit(mig.want[k], lq);
            }
        });
    }
    block.sync();
    let fe = q * cap.fe_stride();
    let ev = q * cap.ev_stride();
    // Every load of a face is issued before any test on it, so that a
    // thread waits for global memory twice rather than once per load (an
    // inactive face's FE entries are stale; clamped to the edge slots, they
    // read inside the patch slot).
    let last_half_edge = (2 * cap.edges - 1) as u16;
    block.for_each(mesh.count(q, Kind::Face), |f| {
        let active = mesh.bit(q, Kind::Face, true, f);
        let h = [0, 1, 2].map(|i| mesh.fe.load(fe + 3 * f + i).min(last_half_edge));
        let v = h.map(|h| mesh.corner_vertex(q, h));
        let hit = active
            && (mig.want[2].bit(f)
                || (0..3).any(|i| mig.want[1].bit((h[i] >> 1) as u32) || mig.want[0].bit(v[i])));
        if hit {
            let at = block.shared_fetch_add(mig.len, 0, 1);
            mig.list.set(at, f as u16);
        }
    });
    block.sync();
    let n = mig.len.get(0);
    let src = Source {
        block,
        mesh,
        copy,
        work,
        mig,
        q,
        s,
    };
    // The element of `kind` at corner `j` of face `f` of `q`.
    let element = |kind: Kind, f: u32, j: u32| -> u32 {
        match kind {
            Kind::Vertex => mesh.corner_vertex(q, mesh.fe.load(fe + 3 * f + j)),
            Kind::Edge => (mesh.fe.load(fe + 3 * f + j) >> 1) as u32,
            Kind::Face => f,
        }
    };
    // Three phases for all kinds at once (cuckoo insertions move entries,
    // so lookups may not overlap them; each kind has its own tables): the
    // lookups, one face corner per thread, so that the owner lookups of a
    // face's seven elements run side by side; the insertions into slots
    // reserved for all of them together (none when one kind has no room,
    // so the working copy stays consistent); then the copies' EV and FE
    // entries, once every vertex and edge has its local index here.
    let pending = work.boundary;
    let regions = pending_regions(&cap);
    block.for_each(n * CORNERS, |i| {
        let (kind, j) = corner_kind(i % CORNERS);
        let k = kind as usize;
        let xq = element(kind, mig.list.get(i / CORNERS) as u32, j);
        if kind != Kind::Face && block.shared_set_bit(mig.claimed[k], xq) {
            return;
        }
        match existing(&src, kind, xq) {
            Ok(l) if kind != Kind::Face => mig.map[k].set(xq, l as u16),
            Ok(_) => {}
            Err(id) => {
                // The owner identity (19 bits) above the element; a kind
                // past its region is out of room (see below).
                let (start, len) = regions[k];
                let at = block.shared_fetch_add(mig.len, PENDING + k as u32, 1);
                if at < len {
                    pending.set(start + at, id << LOCAL_BITS | xq);
                }
            }
        }
    });
    block.sync();
    if block.thread_idx() == 0 {
        let counts = [0, 1, 2].map(|k| mig.len.get(PENDING + k));
        let fits = (0..3).all(|k| counts[k] <= regions[k].1);
        // After a fatal error (an element whose owner could not be named)
        // nothing is inserted: a copy would hold an unresolved index.
        let sound = work.ctl.get(CTL_FATAL) == 0;
        match (fits && sound)
            .then(|| cavity::take_slots(work, counts))
            .flatten()
        {
            Some(bases) => {
                for (k, base) in bases.into_iter().enumerate() {
                    mig.len.set(BASE + k as u32, base);
                }
            }
            None => {
                if sound {
                    work.ctl.set(CTL_NO_ROOM, 1);
                }
                for k in 0..3 {
                    mig.len.set(PENDING + k, 0);
                }
            }
        }
    }
    block.sync();
    let counts = [0, 1, 2].map(|k| mig.len.get(PENDING + k));
    // Pending entry `i` of all kinds: its kind and index within the kind.
    let of_kind = |i: u32| {
        let mut i = i;
        for kind in Kind::ALL {
            if i < counts[kind as usize] {
                return (kind, i);
            }
            i -= counts[kind as usize];
        }
        (Kind::Face, i)
    };
    block.for_each(counts.iter().sum(), |i| {
        let (kind, i) = of_kind(i);
        let k = kind as usize;
        let at = regions[k].0 + i;
        let entry = pending.get(at);
        let xq = entry & LOCAL_MASK;
        let l = cavity::reserved_copy_slot(block, work, kind, mig.len.get(BASE + k as u32) + i);
        add_copy(&src, kind, l, entry >> LOCAL_BITS);
        // From here on the entry names the copy's slot here.
        pending.set(at, l << LOCAL_BITS | xq);
        match kind {
            Kind::Vertex => mig.map[0].set(xq, l as u16),
            Kind::Edge => mig.map[1].set(xq, l as u16),
            Kind::Face => {}
        }
        mesh.copy_attrs(kind, (q, xq), (copy.p, l));
    });
    block.sync();
    block.for_each(counts[1] + counts[2], |i| {
        let (kind, i) = of_kind(counts[0] + i);
        let entry = pending.get(regions[kind as usize].0 + i);
        let (l, xq) = (entry >> LOCAL_BITS, entry & LOCAL_MASK);
        if kind == Kind::Edge {
            for x in 0..2 {
                let v = mesh.ev.load(ev + 2 * xq + x) as u32;
                copy.ev.set(2 * l + x, mig.map[0].get(v));
            }
        } else {
            for j in 0..3 {
                let h = mesh.fe.load(fe + 3 * xq + j);
                let e = mig.map[1].get((h >> 1) as u32);
                copy.fe.set(3 * l + j, (e << 1) | (h & 1));
            }
        }
    });
    block.sync();
}

/// Elements looked up per copied face: three vertices, three edges, the
/// face.
const CORNERS: u32 = 7;

/// `Migration::len` entries 1..4: pending copies per kind.
const PENDING: u32 = 1;
/// `Migration::len` entries 4..7: the first reserved free-list position
/// per kind.
const BASE: u32 = 4;
/// Entries of `Migration::len`.
const LEN_ENTRIES: u32 = 7;

/// The kind of corner `c` (`0..CORNERS`) of a copied face, and its index
/// within the face.
#[inline(always)]
fn corner_kind(c: u32) -> (Kind, u32) {
    match c {
        0..3 => (Kind::Vertex, c),
        3..6 => (Kind::Edge, c - 3),
        _ => (Kind::Face, 0),
    }
}

/// Start and length per kind of the pending copies in `Work::boundary`
/// (`3 * cap.faces` entries), in proportion to the kinds' capacities.
#[inline(always)]
fn pending_regions(cap: &Capacity) -> [(u32, u32); 3] {
    let total = 3 * cap.faces;
    let sum = cap.vertices + cap.edges + cap.faces;
    let len = |kind: Kind| total * cap.of(kind) / sum;
    let (v, e) = (len(Kind::Vertex), len(Kind::Edge));
    [(0, v), (v, e), (v + e, total - v - e)]
}

/// Takes ownership of the needed elements whose owners are locked (all
/// neighbours at once: each element has one owner), with the declined
/// marks of the seeds of kind `seed` ([`carry_declined`]).
#[inline(always)]
fn take_ownership<B: Block>(
    block: &B,
    mesh: &DynMesh,
    copy: &PatchCopy,
    work: &Work,
    mig: &Migration,
    seed: Kind,
) {
    for (k, kind) in Kind::ALL.into_iter().enumerate() {
        block.for_each(copy.count(kind), |l| {
            if !mig.need[k].bit(l) {
                return;
            }
            let table = copy.table(block, kind);
            let Some((s, lq)) = hash::lookup(&table, l) else {
                return;
            };
            if !work.ctl.bit(CTL_LOCKED * 32 + s) {
                return;
            }
            let q = copy.stash.get(s);
            // The forwarding entry goes in before the old owner lets go, so
            // the element is never without a way to its owner.
            let forward = hash::entry(lq, mig.back.get(s), l);
            if !hash::upsert(&mesh.table(q, kind), forward) {
                work.ctl.set(CTL_FATAL, stat::FATAL_HASH);
                return;
            }
            hash::remove(&table, l);
            copy.set_bit(block, kind, false, l, true);
            mesh.set_bit(q, kind, false, lq, false);
            mesh.copy_attrs(kind, (q, lq), (copy.p, l));
            if kind == seed {
                carry_declined(block, mesh, work, (q, lq), l);
            }
        });
    }
    block.sync();
}

/// Carries the declined mark of seed `lq` of neighbour `q` (its stored
/// `declined` bit, unless `q`'s are stale: `flag::NEW_SWEEP`) over to the
/// local seed `l` that the patch takes from it, and clears it in `q`, whose
/// slot may hold another element later. A seed whose fill-in declined in
/// the sweep stays out of the sweep whichever patch owns it: a patch that
/// registered the seeds it took would expand for their cavities, and take
/// the seeds beyond them, until it ran out of room; sliced, its halves
/// would trade the same elements back and forth, round after round (a
/// small component of the `slicing-runaway` test mesh used up every patch
/// slot so).
#[inline(always)]
fn carry_declined<B: Block>(block: &B, mesh: &DynMesh, work: &Work, (q, lq): (u32, u32), l: u32) {
    let at = q * mesh.cap.declined_words() + lq / 32;
    let bit = 1 << (lq % 32);
    let stored = mesh.declined.fetch_and(at, !bit) & bit != 0;
    if stored && mesh.flags.load(q) & flag::NEW_SWEEP == 0 {
        block.shared_set_bit(work.declined, l);
    } else {
        block.shared_fetch_and(work.declined, l / 32, !(1 << (l % 32)));
    }
}

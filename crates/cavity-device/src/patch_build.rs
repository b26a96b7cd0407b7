//! The static patch layout ([`crate::layout`]) built on the device from a
//! face partition: RXMesh (Mahmoud et al. 2021) section 6.3's last step,
//! the patch structures made by scan and scatter. The host
//! (`cavity::backend::patch_build`) drives the launches; the host's own
//! build (`cavity::PatchedMesh::from_partition`) is the reference, and the
//! two give the same arrays.
//!
//! 1. Owners ([`MajorityOwner`], one thread an element): a vertex or an
//!    edge belongs to the patch holding most of its faces, ties to the
//!    lower patch, an isolated vertex to patch 0; a face to its patch.
//! 2. Owned lists ([`CountOwned`], a scan, [`ScatterOwned`], then
//!    [`SortOwned`], one block a patch): each patch's owned elements in
//!    input order, numbered from the patch's handle base.
//! 3. Ribbons, one block a patch, each a gather into shared memory, a
//!    block sort and a deduplication ([`crate::block::sort_unique`]):
//!    - [`RibbonFaces`]: the not-owned faces around the owned vertices
//!      and across the owned faces' edges ([`CountFaceCandidates`] sizes
//!      the gathers);
//!    - [`RibbonBelow`] for edges: the local faces' not-owned edges;
//!    - [`RibbonBelow`] for vertices: the local edges' not-owned vertices;
//!    - [`PatchStash`]: the ribbon elements' owners, the patch stash.
//!
//!    Each writes its list at a bound of its patch's entries (the scan of
//!    the gather sizes the previous stage counted) and its count.
//! 4. The host makes the headers (counts, offsets, handle bases) from the
//!    counts and checks the local limits; [`FillPatch`] then writes each
//!    patch's FE and EV (two 16-bit entries a word), ribbon entries, stash
//!    and bitmasks.
//!
//! Grouped inputs (`Ins`), in order: the topology `[fv, fe, ev,
//! vf_offsets, vf, ef_offsets, ef]` (three words a face for FV and FE, two
//! an edge for EV, CSR rows for VF and EF), the owners `[vertex, edge,
//! face]`, the owned lists `[members v, e, f, offsets v, e, f, handles v,
//! e, f]` (members: the owned elements patch after patch; offsets: each
//! patch's first, `patches + 1` words; handles: input element → handle).
//! A per-patch kernel that finds a gather larger than its shared window
//! (sized by the host from the counts) sets `failed[0]` and stops.

use crate::array::{BOUNDS, In, InOut, Ins, chunk};
use crate::block::{Block, Shared, SharedArena, position, scan_scratch_len, sort, sort_unique};
use crate::layout::{FE_REVERSED, PatchInfo, ribbon_entry};

/// The largest shared window of a kernel here, in entries: a larger
/// `cap` is taken as this one (and a gather that does not fit fails), so
/// that no window's bytes wrap around.
pub const MAX_WINDOW: u32 = 1 << 24;

/// Words of a patch header ([`PatchInfo`]).
pub const INFO_WORDS: u32 = (size_of::<PatchInfo>() / 4) as u32;

/// Shared-memory bytes of [`SortOwned`] for lists of at most `cap`
/// entries (`cap` a power of two).
pub fn sort_owned_shared_bytes(cap: u32) -> usize {
    let mut arena = SharedArena::measuring();
    arena.alloc::<u32>(cap);
    arena.used()
}

/// Shared-memory bytes of a gathering kernel ([`RibbonFaces`],
/// [`RibbonBelow`], [`PatchStash`]) for gathers of at
/// most `cap` entries (a power of two) with `threads` threads a block.
pub fn gather_shared_bytes(cap: u32, threads: u32) -> usize {
    let mut arena = SharedArena::measuring();
    Gather::alloc(&mut arena, cap, threads);
    arena.used()
}

/// Shared-memory bytes of [`FillPatch`] for ribbons and stashes of at
/// most `cap` entries.
pub fn fill_shared_bytes(cap: u32) -> usize {
    let mut arena = SharedArena::measuring();
    for _ in 0..3 {
        arena.alloc::<u32>(cap);
    }
    arena.used()
}

/// A gather's windows: the gathered entries, the sort's marks, the
/// distinct entries, a scan's scratch and three counters.
struct Gather {
    data: Shared<u32>,
    marks: Shared<u32>,
    out: Shared<u32>,
    scratch: Shared<u32>,
    counters: Shared<u32>,
    cap: u32,
}

impl Gather {
    fn alloc(arena: &mut SharedArena, cap: u32, threads: u32) -> Gather {
        let cap = cap.min(MAX_WINDOW);
        Gather {
            data: arena.alloc(cap),
            marks: arena.alloc(cap),
            out: arena.alloc(cap),
            scratch: arena.alloc(scan_scratch_len(threads)),
            counters: arena.alloc(3),
            cap,
        }
    }

    /// Counters zeroed (a barrier follows).
    fn start<B: Block>(&self, block: &B) {
        block.for_each(3, |i| self.counters.set(i, 0));
        block.sync();
    }

    /// Adds `x` to the gather (dropped past the window: [`Gather::finish`]
    /// reports it).
    fn push<B: Block>(&self, block: &B, x: u32) {
        let at = block.shared_fetch_add(self.counters, 0, 1);
        if at < self.cap {
            self.data.set(at, x);
        }
    }

    /// The distinct gathered entries, ascending, in `out`, and their
    /// count; `None` (with `failed[0]` set) when the gather outgrew the
    /// window. Uniform over the block.
    fn finish<B: Block>(&self, block: &B, failed: &InOut<u32>) -> Option<u32> {
        block.sync();
        let n = self.counters.get(0);
        if n > self.cap || n.next_power_of_two() > self.cap {
            if block.thread_idx() == 0 {
                failed.set(0, 1);
            }
            return None;
        }
        Some(sort_unique(
            block,
            self.data,
            n,
            self.marks,
            self.out,
            self.scratch,
        ))
    }
}

/// Where the next gather looks: each local element's `arity` entries of
/// `relation`, kept where their `owner` is not the patch.
struct Next<'a> {
    relation: &'a In<u32>,
    arity: u32,
    owner: &'a In<u32>,
}

impl Gather {
    /// Writes the `count` distinct entries to `list` from `start`, then
    /// adds to counter 1 the size of the next gather ([`Next`]) over the
    /// patch's local elements of this kind: its owned ones (`owned`'s list
    /// `kind` of patch `p`), then these. A barrier follows.
    fn write_and_count<B: Block>(
        &self,
        block: &B,
        (list, start): (&InOut<u32>, u32),
        count: u32,
        (owned, kind, p): (&Owned, usize, u32),
        next: Next<'_>,
    ) {
        block.for_each(count, |i| list.set(start.wrapping_add(i), self.out.get(i)));
        let (first, own) = owned.range(kind, p);
        block.for_each(own + count, |i| {
            let x = if i < own {
                owned.member(kind, first, i)
            } else {
                self.out.get(i - own)
            };
            let mut n = 0;
            for s in 0..next.arity {
                let y = next.relation.get((next.arity * x).wrapping_add(s));
                n += u32::from(next.owner.get(y) != p);
            }
            if n > 0 {
                block.shared_fetch_add(self.counters, 1, n);
            }
        });
        block.sync();
    }
}

/// The owned lists of one patch.
struct Owned {
    members: [In<u32>; 3],
    offsets: [In<u32>; 3],
    handles: [In<u32>; 3],
}

impl Owned {
    fn new(owned: &Ins<u32, 9>) -> Owned {
        let o = &owned.0;
        Owned {
            members: [o[0], o[1], o[2]],
            offsets: [o[3], o[4], o[5]],
            handles: [o[6], o[7], o[8]],
        }
    }

    /// The first owned element of kind `k` (0 vertices, 1 edges, 2 faces)
    /// of patch `p` among the members, and their count.
    fn range(&self, k: usize, p: u32) -> (u32, u32) {
        let start = self.offsets[k].get(p);
        (start, self.offsets[k].get(p + 1).wrapping_sub(start))
    }

    /// Owned element `i` of kind `k` of the patch whose list starts at
    /// `start`.
    fn member(&self, k: usize, start: u32, i: u32) -> u32 {
        self.members[k].get(start.wrapping_add(i))
    }

    /// Element `x` of kind `k`'s index among its owner `q`'s owned ones.
    fn local(&self, k: usize, x: u32, q: u32) -> u32 {
        self.handles[k].get(x).wrapping_sub(self.offsets[k].get(q))
    }
}

crate::kernel! {
    @core
    /// The owner of each of the `n` elements whose faces are the CSR rows
    /// `rows` (`[offsets, faces]`): the patch (`face_patch`) holding most
    /// of them, ties to the lower patch; 0 for an element without faces.
    ///
    /// # Safety
    /// Checked: the rows and the partition are only read; each owner is
    /// written by one thread.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel MajorityOwner(
        launch,
        rows: Ins<u32, 2>,
        face_patch: In<u32>,
        n: u32,
        owner: InOut<u32>,
    ) {
        let [offsets, faces] = &rows.0;
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let x = start + k;
            let (a, b) = (offsets.get(x), offsets.get(x + 1));
            let mut best = (0u32, u32::MAX);
            for i in a..b {
                let p = face_patch.get(faces.get(i));
                let mut count = 0;
                for j in a..b {
                    count += u32::from(face_patch.get(faces.get(j)) == p);
                }
                if count > best.0 || (count == best.0 && p < best.1) {
                    best = (count, p);
                }
            }
            owner.set(x, if best.1 == u32::MAX { 0 } else { best.1 });
        });
    }
}

crate::kernel! {
    @core
    /// Counts the `n` elements of each patch (`owner`) into `counts` and
    /// gives each element its arrival among them in `slot` (an order that
    /// depends on timing; [`SortOwned`] restores the input order).
    ///
    /// # Safety
    /// Checked: the counts are atomic; each slot is written by one thread.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel CountOwned(
        launch,
        owner: In<u32>,
        n: u32,
        counts: InOut<u32>,
        slot: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let x = start + k;
            slot.set(x, counts.fetch_add(owner.get(x), 1));
        });
    }
}

crate::kernel! {
    @core
    /// Places each of the `n` elements at its owner's offset (the scanned
    /// counts) plus its slot in `members`.
    ///
    /// # Safety
    /// Checked: the inputs are only read; `members` is written by atomic
    /// stores.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel ScatterOwned(
        launch,
        owner: In<u32>,
        slot: In<u32>,
        offsets: In<u32>,
        n: u32,
        members: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let x = start + k;
            members.set(offsets.get(owner.get(x)).wrapping_add(slot.get(x)), x);
        });
    }
}

crate::kernel! {
    @core
    /// Sorts each patch's owned elements (`members[offsets[p]..offsets[p +
    /// 1]]`, one block a patch) into input order and writes every
    /// element's handle (its place in `members`) to `handles`; lists of
    /// more than `cap` (a power of two, the shared window) set `failed[0]`.
    ///
    /// # Safety
    /// Checked: each block reads and writes only its patch's members and
    /// the handles of its members (atomic stores).
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel SortOwned(
        launch,
        offsets: In<u32>,
        cap: u32,
        members: InOut<u32>,
        handles: InOut<u32>,
        failed: InOut<u32>,
    ) {
        let block = launch.block;
        let cap = cap.min(MAX_WINDOW);
        let data = launch.arena.alloc::<u32>(cap);
        launch.arena.check();
        let p = launch.block_idx;
        let start = offsets.get(p);
        let n = offsets.get(p + 1).wrapping_sub(start);
        if n > cap || n.next_power_of_two() > cap {
            if block.thread_idx() == 0 {
                failed.set(0, 1);
            }
            return;
        }
        block.for_each(n, |i| data.set(i, members.get(start.wrapping_add(i))));
        sort(block, data, n);
        block.for_each(n, |i| {
            let x = data.get(i);
            members.set(start.wrapping_add(i), x);
            handles.set(x, start.wrapping_add(i));
        });
    }
}

crate::kernel! {
    @core
    /// The size of each patch's ribbon-face gather ([`RibbonFaces`]) into
    /// `counts` (a word a patch): for each of the first `nv` of the `n`
    /// threads, vertex `i`'s faces outside its owner; for each other,
    /// face `i - nv`'s neighbours across its edges outside its patch.
    ///
    /// # Safety
    /// Checked: the inputs are only read; the counts are atomic.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel CountFaceCandidates(
        launch,
        topology: Ins<u32, 7>,
        owners: Ins<u32, 3>,
        n: u32,
        nv: u32,
        counts: InOut<u32>,
    ) {
        let [_, fe, _, vf_offsets, vf, ef_offsets, ef] = &topology.0;
        let [owner_v, _, owner_f] = &owners.0;
        let (start, end) = chunk(launch.block_idx, n);
        launch.block.for_each(end - start, |k| {
            let i = start + k;
            let mut count = 0;
            let p = if i < nv {
                let p = owner_v.get(i);
                for j in vf_offsets.get(i)..vf_offsets.get(i + 1) {
                    count += u32::from(owner_f.get(vf.get(j)) != p);
                }
                p
            } else {
                let f = i - nv;
                let p = owner_f.get(f);
                for s in 0..3 {
                    let e = fe.get(f.wrapping_mul(3).wrapping_add(s));
                    for j in ef_offsets.get(e)..ef_offsets.get(e.wrapping_add(1)) {
                        count += u32::from(owner_f.get(ef.get(j)) != p);
                    }
                }
                p
            };
            if count > 0 {
                counts.fetch_add(p, count);
            }
        });
    }
}

/// Local face `i` of patch `p`: owned face `i`, else ribbon face `i -
/// owned` at `ribbon`'s `start`.
#[inline(always)]
fn local_face(owned: &Owned, p: u32, ribbon: &In<u32>, start: u32, i: u32) -> u32 {
    let (first, count) = owned.range(2, p);
    if i < count {
        owned.member(2, first, i)
    } else {
        ribbon.get(start.wrapping_add(i - count))
    }
}

crate::kernel! {
    @core
    /// Each patch's ribbon faces (one block a patch): the faces not in the
    /// patch around its owned vertices and across its owned faces' edges,
    /// ascending, into `ribbon` from `bounds[p]` (the scanned gather
    /// sizes of [`CountFaceCandidates`]). `counts[3 p ..]` gets their
    /// count, the size of the edges' gather ([`RibbonBelow`]: the local faces'
    /// edges owned elsewhere, with repeats) and the patch's FF entries
    /// (each owned face's distinct neighbours across its edges). `cap`:
    /// the shared window, a power of two.
    ///
    /// # Safety
    /// Checked: the inputs are only read; each block writes its patch's
    /// words (atomic stores).
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel RibbonFaces(
        launch,
        topology: Ins<u32, 7>,
        owners: Ins<u32, 3>,
        owned: Ins<u32, 9>,
        bounds: In<u32>,
        cap: u32,
        ribbon: InOut<u32>,
        counts: InOut<u32>,
        failed: InOut<u32>,
    ) {
        let [_, fe, _, vf_offsets, vf, ef_offsets, ef] = &topology.0;
        let [owner_v, owner_e, owner_f] = &owners.0;
        let owned = Owned::new(&owned);
        let block = launch.block;
        let gather = Gather::alloc(launch.arena, cap, block.block_dim());
        launch.arena.check();
        let p = launch.block_idx;
        gather.start(block);
        let (vs, nv) = owned.range(0, p);
        block.for_each(nv, |i| {
            let v = owned.member(0, vs, i);
            for j in vf_offsets.get(v)..vf_offsets.get(v.wrapping_add(1)) {
                let f = vf.get(j);
                if owner_f.get(f) != p {
                    gather.push(block, f);
                }
            }
        });
        let (fs, nf) = owned.range(2, p);
        block.for_each(nf, |i| {
            let f = owned.member(2, fs, i);
            // The face's distinct neighbours: each counted where it first
            // appears among its edges' faces.
            let mut ff = 0;
            for s in 0..3 {
                let e = fe.get((3 * f).wrapping_add(s));
                for j in ef_offsets.get(e)..ef_offsets.get(e.wrapping_add(1)) {
                    let g = ef.get(j);
                    if owner_f.get(g) != p {
                        gather.push(block, g);
                    }
                    if g != f && first_among_edges(fe, ef_offsets, ef, f, s, j, g) {
                        ff += 1;
                    }
                }
            }
            if ff > 0 {
                block.shared_fetch_add(gather.counters, 2, ff);
            }
        });
        let Some(count) = gather.finish(block, &failed) else {
            return;
        };
        let next = Next {
            relation: fe,
            arity: 3,
            owner: owner_e,
        };
        gather.write_and_count(block, (&ribbon, bounds.get(p)), count, (&owned, 2, p), next);
        if block.thread_idx() == 0 {
            counts.set(3 * p, count);
            counts.set(3 * p + 1, gather.counters.get(1));
            counts.set(3 * p + 2, gather.counters.get(2));
        }
    }
}

/// Whether face `g`, met at entry `j` of edge `s` of face `f`'s edge-face
/// rows, appears there for the first time (no earlier edge of `f`, nor
/// an earlier entry of the same edge, holds it).
#[inline(always)]
fn first_among_edges(
    fe: &In<u32>,
    ef_offsets: &In<u32>,
    ef: &In<u32>,
    f: u32,
    s: u32,
    j: u32,
    g: u32,
) -> bool {
    for t in 0..=s {
        let e = fe.get((3 * f).wrapping_add(t));
        let end = if t == s {
            j
        } else {
            ef_offsets.get(e.wrapping_add(1))
        };
        for i in ef_offsets.get(e)..end {
            if ef.get(i) == g {
                return false;
            }
        }
    }
    true
}

crate::kernel! {
    @core
    /// Each patch's ribbon elements of kind `kind` (1: edges, 0: vertices;
    /// one block a patch): the edges of its local faces, or the vertices of
    /// its local edges, owned elsewhere (the local elements of the kind
    /// above: owned, then the ribbon of `above` = `[ribbon, bounds, counts,
    /// this gather's bounds]`, the counts [`RibbonFaces`]' or this
    /// kernel's for edges), ascending, into `ribbon` from the gather's
    /// bound. `counts[2 p ..]` gets their count and, for edges, the size of
    /// the vertices' gather (the local edges' vertices owned elsewhere,
    /// with repeats). `cap`: the shared window, a power of two.
    ///
    /// # Safety
    /// Checked: the inputs are only read; each block writes its patch's
    /// words (atomic stores).
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel RibbonBelow(
        launch,
        topology: Ins<u32, 7>,
        owners: Ins<u32, 3>,
        owned: Ins<u32, 9>,
        above: Ins<u32, 4>,
        kind: u32,
        cap: u32,
        ribbon: InOut<u32>,
        counts: InOut<u32>,
        failed: InOut<u32>,
    ) {
        let [_, fe, ev, ..] = &topology.0;
        let [owner_v, owner_e, _] = &owners.0;
        let [above_ribbon, above_bounds, above_counts, bounds] = &above.0;
        let edges = kind == 1;
        // The kind above's elements and their sub-elements of this kind.
        let (relation, arity, owner) = if edges {
            (fe, 3, owner_e)
        } else {
            (ev, 2, owner_v)
        };
        let (above_kind, above_stride) = if edges { (2, 3) } else { (1, 2) };
        let owned = Owned::new(&owned);
        let block = launch.block;
        let gather = Gather::alloc(launch.arena, cap, block.block_dim());
        launch.arena.check();
        let p = launch.block_idx;
        gather.start(block);
        let (first, own) = owned.range(above_kind, p);
        let local = own.wrapping_add(above_counts.get(above_stride * p));
        let above_start = above_bounds.get(p);
        block.for_each(local, |i| {
            let x = if i < own {
                owned.member(above_kind, first, i)
            } else {
                above_ribbon.get(above_start.wrapping_add(i - own))
            };
            for s in 0..arity {
                let y = relation.get((arity * x).wrapping_add(s));
                if owner.get(y) != p {
                    gather.push(block, y);
                }
            }
        });
        let Some(count) = gather.finish(block, &failed) else {
            return;
        };
        let list = (&ribbon, bounds.get(p));
        if edges {
            let next = Next {
                relation: ev,
                arity: 2,
                owner: owner_v,
            };
            gather.write_and_count(block, list, count, (&owned, 1, p), next);
        } else {
            block.for_each(count, |i| ribbon.set(list.1.wrapping_add(i), gather.out.get(i)));
        }
        if block.thread_idx() == 0 {
            counts.set(2 * p, count);
            counts.set(2 * p + 1, gather.counters.get(1));
        }
    }
}

/// The ribbon lists of every kind: `[ribbon v, e, f, bounds v, e, f,
/// counts v, e, f]` (counts as [`RibbonBelow`] and [`RibbonFaces`] wrote
/// them: strides 2, 2 and 3).
struct Ribbons {
    lists: [In<u32>; 3],
    bounds: [In<u32>; 3],
    counts: [In<u32>; 3],
}

impl Ribbons {
    fn new(r: &[In<u32>]) -> Ribbons {
        Ribbons {
            lists: [r[0], r[1], r[2]],
            bounds: [r[3], r[4], r[5]],
            counts: [r[6], r[7], r[8]],
        }
    }

    /// Patch `p`'s ribbon elements of kind `k`: their first place in the
    /// list and their count.
    fn range(&self, k: usize, p: u32) -> (u32, u32) {
        let stride = if k == 2 { 3 } else { 2 };
        (self.bounds[k].get(p), self.counts[k].get(stride * p))
    }

    /// The stash bound of patch `p`: the sum of its gathers' bounds.
    fn stash_start(&self, p: u32) -> u32 {
        self.bounds[0]
            .get(p)
            .wrapping_add(self.bounds[1].get(p))
            .wrapping_add(self.bounds[2].get(p))
    }
}

crate::kernel! {
    @core
    /// Each patch's stash (one block a patch): the owners of its ribbon
    /// elements (`ribbons` as `Ribbons` reads them), ascending and
    /// distinct, into `stash` from the sum of the patch's three gather
    /// bounds; `counts[p]` gets their count. `cap`: the shared window, a
    /// power of two.
    ///
    /// # Safety
    /// Checked: the inputs are only read; each block writes its patch's
    /// words (atomic stores).
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel PatchStash(
        launch,
        owners: Ins<u32, 3>,
        ribbons: Ins<u32, 9>,
        cap: u32,
        stash: InOut<u32>,
        counts: InOut<u32>,
        failed: InOut<u32>,
    ) {
        let ribbons = Ribbons::new(&ribbons.0);
        let block = launch.block;
        let gather = Gather::alloc(launch.arena, cap, block.block_dim());
        launch.arena.check();
        let p = launch.block_idx;
        gather.start(block);
        for k in 0..3 {
            let (start, n) = ribbons.range(k, p);
            block.for_each(n, |i| {
                let x = ribbons.lists[k].get(start.wrapping_add(i));
                gather.push(block, owners.0[k].get(x));
            });
        }
        let Some(count) = gather.finish(block, &failed) else {
            return;
        };
        let start = ribbons.stash_start(p);
        block.for_each(count, |i| stash.set(start.wrapping_add(i), gather.out.get(i)));
        if block.thread_idx() == 0 {
            counts.set(p, count);
        }
    }
}

/// Patch `p`'s header from `infos` ([`INFO_WORDS`] words a patch, in
/// field order).
#[inline(always)]
pub(crate) fn info_at(infos: &In<u32>, p: u32) -> PatchInfo {
    let w = |i: u32| infos.get((INFO_WORDS * p).wrapping_add(i));
    PatchInfo {
        num_vertices: w(0),
        num_edges: w(1),
        num_faces: w(2),
        owned_vertices: w(3),
        owned_edges: w(4),
        owned_faces: w(5),
        fe_offset: w(6),
        ev_offset: w(7),
        ribbon_offset: w(8),
        stash_offset: w(9),
        stash_len: w(10),
        mask_offset: w(11),
        vertex_base: w(12),
        edge_base: w(13),
        face_base: w(14),
        ff_entries: w(15),
    }
}

/// Element `x` of kind `k` in patch `p`: its owned index, else the owned
/// count plus its place among the patch's ribbon elements (`ribbon[..n]`).
#[inline(always)]
fn local_in(
    owned: &Owned,
    owner: &In<u32>,
    k: usize,
    p: u32,
    x: u32,
    ribbon: Shared<u32>,
    n: u32,
) -> u32 {
    if owner.get(x) == p {
        owned.local(k, x, p)
    } else {
        owned.range(k, p).1.wrapping_add(position(ribbon, n, x))
    }
}

crate::kernel! {
    @core
    /// Writes each patch's layout (one block a patch) from its header
    /// (`rest` = `[ribbon v, e, f, bounds v, e, f, counts v, e, f, stash,
    /// headers]`: the lists of `Ribbons`, [`PatchStash`]'s stashes and
    /// the headers the host made, [`INFO_WORDS`] a patch): FE and EV as
    /// words of two 16-bit entries (the entries from `fe_offset` and
    /// `ev_offset`, both even), the ribbon entries, the stash and the
    /// owned and active bitmasks. `cap`: the shared window of the
    /// ribbon's vertices, edges and the stash, each. A patch whose lists
    /// outgrow it, or whose header's counts are not its owned and ribbon
    /// counts, sets `failed[0]` and writes nothing.
    ///
    /// # Safety
    /// Checked: the inputs are only read; each block writes its patch's
    /// words (atomic stores).
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel FillPatch(
        launch,
        topology: Ins<u32, 7>,
        owners: Ins<u32, 3>,
        owned: Ins<u32, 9>,
        rest: Ins<u32, 11>,
        cap: u32,
        fe_words: InOut<u32>,
        ev_words: InOut<u32>,
        ribbon: InOut<u32>,
        stash: InOut<u32>,
        masks: InOut<u32>,
        failed: InOut<u32>,
    ) {
        let [fv, fe, ev, ..] = &topology.0;
        let owned = Owned::new(&owned);
        let ribbons = Ribbons::new(&rest.0[..9]);
        let (stashes, infos) = (&rest.0[9], &rest.0[10]);
        let block = launch.block;
        let cap = cap.min(MAX_WINDOW);
        let rib_v = launch.arena.alloc::<u32>(cap);
        let rib_e = launch.arena.alloc::<u32>(cap);
        let own_stash = launch.arena.alloc::<u32>(cap);
        launch.arena.check();
        let p = launch.block_idx;
        let info = info_at(infos, p);
        let (vs, nrv) = ribbons.range(0, p);
        let (es, nre) = ribbons.range(1, p);
        let (fs, nrf) = ribbons.range(2, p);
        let ns = info.stash_len;
        let local = |k: usize, n: u32| owned.range(k, p).1.wrapping_add(n);
        let consistent = info.num_vertices == local(0, nrv)
            && info.num_edges == local(1, nre)
            && info.num_faces == local(2, nrf);
        if nrv > cap || nre > cap || ns > cap || !consistent {
            if block.thread_idx() == 0 {
                failed.set(0, 1);
            }
            return;
        }
        let stash_start = ribbons.stash_start(p);
        block.for_each(nrv, |i| rib_v.set(i, ribbons.lists[0].get(vs.wrapping_add(i))));
        block.for_each(nre, |i| rib_e.set(i, ribbons.lists[1].get(es.wrapping_add(i))));
        block.for_each(ns, |i| own_stash.set(i, stashes.get(stash_start.wrapping_add(i))));
        block.sync();
        let [owner_v, owner_e, owner_f] = &owners.0;
        let owners = [owner_v, owner_e, owner_f];

        // FE: entry `j` is side `j % 3` of local face `j / 3`.
        let fe_entry = |j: u32| {
            let f = local_face(&owned, p, &ribbons.lists[2], fs, j / 3);
            let e = fe.get((3 * f).wrapping_add(j % 3));
            let local = local_in(&owned, owner_e, 1, p, e, rib_e, nre);
            let reversed = if ev.get(e.wrapping_mul(2)) == fv.get((3 * f).wrapping_add(j % 3)) {
                0
            } else {
                u32::from(FE_REVERSED)
            };
            (local << 1) | reversed
        };
        let fe_len = info.num_faces.wrapping_mul(3);
        block.for_each(fe_len.div_ceil(2), |w| {
            let lo = fe_entry(2 * w);
            let hi = if 2 * w + 1 < fe_len { fe_entry(2 * w + 1) } else { 0 };
            fe_words.set((info.fe_offset / 2).wrapping_add(w), lo | (hi << 16));
        });

        // EV: a word per local edge.
        let (own_es, own_e) = owned.range(1, p);
        block.for_each(info.num_edges, |i| {
            let e = if i < own_e {
                owned.member(1, own_es, i)
            } else {
                rib_e.get(i - own_e)
            };
            let a = local_in(&owned, owner_v, 0, p, ev.get(e.wrapping_mul(2)), rib_v, nrv);
            let b = local_in(&owned, owner_v, 0, p, ev.get(e.wrapping_mul(2) | 1), rib_v, nrv);
            ev_words.set((info.ev_offset / 2).wrapping_add(i), a | (b << 16));
        });

        // Ribbon entries: vertices, edges, then faces.
        let mut at = info.ribbon_offset;
        for k in 0..3 {
            let (start, n) = ribbons.range(k, p);
            block.for_each(n, |i| {
                let x = ribbons.lists[k].get(start.wrapping_add(i));
                let q = owners[k].get(x);
                let s = position(own_stash, ns, q);
                ribbon.set(at.wrapping_add(i), ribbon_entry(s, owned.local(k, x, q)));
            });
            at = at.wrapping_add(n);
        }
        block.for_each(ns, |i| stash.set(info.stash_offset.wrapping_add(i), own_stash.get(i)));

        // Bitmasks: owned then active words of each kind.
        let mut at = info.mask_offset;
        for (n, set) in [
            (info.num_vertices, info.owned_vertices),
            (info.num_edges, info.owned_edges),
            (info.num_faces, info.owned_faces),
        ] {
            let words = n.div_ceil(32);
            block.for_each(2 * words, |i| {
                let (w, bits) = if i < words { (i, set) } else { (i - words, n) };
                let k = bits.saturating_sub(32 * w).min(32);
                let word = if k == 32 { u32::MAX } else { (1u32 << k) - 1 };
                masks.set(at.wrapping_add(i), word);
            });
            at = at.wrapping_add(2 * words);
        }
    }
}

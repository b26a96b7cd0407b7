//! Block-cooperative first-order queries on one patch in shared memory
//! (RXMesh section 6.2 and appendix A/B).
//!
//! A block loads its patch's FE and EV into shared memory and derives every
//! other relation by the semiring products of RXMesh section 3.1:
//! `FV = FE·EV`, `VE = EVᵀ`, `VF = FVᵀ`, `EF = FEᵀ`, `FF = FE·FEᵀ`; each
//! transpose is a cooperative count / block-wide scan / scatter. Vertex
//! one-rings are then put in rotational order (counter-clockwise with the
//! faces' orientation) around every manifold vertex, one thread per vertex.
//! Results reach the caller through [`Neighbors`], which maps local indices to
//! global handles on access, so the caller never sees patches, threads or
//! local indices.

use crate::block::{Block, Shared, SharedArena, scan_scratch_len};
use crate::layout::{FE_REVERSED, Kind, PatchInfo, PatchMesh, ribbon_owner};

/// The eight first-order queries (RXMesh table 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Query {
    /// Vertex → adjacent vertices, in rotational order around manifold vertices.
    VV = 0,
    /// Vertex → incident edges, in the same order as VV.
    VE = 1,
    /// Vertex → incident faces, in rotational order around manifold vertices.
    VF = 2,
    /// Edge → its two vertices (EV order).
    EV = 3,
    /// Edge → incident faces.
    EF = 4,
    /// Face → its three vertices in the face's orientation.
    FV = 5,
    /// Face → its three edges, edge `i` from corner `i` to corner `i + 1`.
    FE = 6,
    /// Face → faces sharing an edge, without duplicates.
    FF = 7,
}

impl Query {
    /// All queries, in discriminant order.
    pub const ALL: [Query; 8] = [
        Query::VV,
        Query::VE,
        Query::VF,
        Query::EV,
        Query::EF,
        Query::FV,
        Query::FE,
        Query::FF,
    ];

    /// The query with discriminant `code`, if any.
    pub fn from_u32(code: u32) -> Option<Query> {
        Query::ALL.get(code as usize).copied()
    }

    /// Kind of the elements the query starts from.
    #[inline(always)]
    pub fn source(self) -> Kind {
        match self {
            Query::VV | Query::VE | Query::VF => Kind::Vertex,
            Query::EV | Query::EF => Kind::Edge,
            Query::FV | Query::FE | Query::FF => Kind::Face,
        }
    }

    /// Kind of the elements the query returns.
    #[inline(always)]
    pub fn target(self) -> Kind {
        match self {
            Query::VV | Query::EV | Query::FV => Kind::Vertex,
            Query::VE | Query::FE => Kind::Edge,
            Query::VF | Query::EF | Query::FF => Kind::Face,
        }
    }

    /// Launch bounds of the query's patch kernels: threads per block, and
    /// the blocks that must fit on one SM (which caps registers at
    /// 65536 / (threads × blocks)). Vertex queries walk fans one thread per
    /// vertex and use more shared memory (about 38 KB for a 512-face
    /// patch, so five blocks fit an H100 SM): 256 × 5; the others 128 × 8.
    pub fn launch_bounds(self) -> (u32, u32) {
        match self.source() {
            Kind::Vertex => (256, 5),
            _ => (128, 8),
        }
    }

    /// Short upper-case name ("VV", ...).
    pub fn name(self) -> &'static str {
        ["VV", "VE", "VF", "EV", "EF", "FV", "FE", "FF"][self as usize]
    }
}

/// Calls `f` with `query` as a constant in each arm, so that an inlined
/// `f` is specialized per query (no run-time query switch in the kernels'
/// inner loops).
#[inline(always)]
pub fn specialize<R>(query: Query, mut f: impl FnMut(Query) -> R) -> R {
    match query {
        Query::VV => f(Query::VV),
        Query::VE => f(Query::VE),
        Query::VF => f(Query::VF),
        Query::EV => f(Query::EV),
        Query::EF => f(Query::EF),
        Query::FV => f(Query::FV),
        Query::FE => f(Query::FE),
        Query::FF => f(Query::FF),
    }
}

/// A CSR relation in shared memory: row `i` is `values[offsets[i]..offsets[i+1]]`.
#[derive(Clone, Copy)]
struct Csr {
    offsets: Shared<u32>,
    values: Shared<u16>,
}

impl Csr {
    #[inline(always)]
    fn alloc(arena: &mut SharedArena, rows: u32, entries: u32) -> Csr {
        Csr {
            offsets: arena.alloc(rows + 1),
            values: arena.alloc(entries),
        }
    }
}

/// The shared-memory buffers of one query on one patch.
struct Buffers {
    fe: Shared<u16>,
    ev: Shared<u16>,
    fv: Shared<u16>,
    scratch: Shared<u32>,
    /// Global handles of the target kind's local elements.
    handles: Shared<u32>,
    /// First global handle (target kind) of each patch in the stash.
    stash_base: Shared<u32>,
    /// Packed VF and VE row bounds per vertex (see [`Buffers::vf_row`],
    /// [`Buffers::ve_row`]): one scan serves both.
    rows: Shared<u32>,
    /// VE (rows in rotational order where manifold; bounds in `rows`) and
    /// VV in the same order.
    ve: Shared<u16>,
    vv: Shared<u16>,
    /// VF (bounds in `rows`).
    vf: Shared<u16>,
    /// VF entries as FV entry indices `3 * face + corner` (before ordering).
    corners: Shared<u16>,
    /// Per directed local edge (`2 * edge + reversed`): how many FE entries
    /// traverse it (2 bits each, see [`half_edge_count`]), and one of them
    /// (the half-edge table).
    half_count: Shared<u32>,
    half: Shared<u16>,
    /// Per corner: the next corner counter-clockwise around its vertex (or
    /// [`NO_CORNER`] / [`BAD_CORNER`]), with [`FAN_START`] set when no
    /// corner precedes it.
    succ: Shared<u16>,
    ef: Csr,
    ff: Csr,
}

impl Buffers {
    /// VF entries of vertex `v`: `vf[begin..end]`. `rows[v]` holds
    /// the VF row start in its low 16 bits after the scatter.
    #[inline(always)]
    fn vf_row(&self, v: u32) -> (u32, u32) {
        (self.rows.get(v) & 0xffff, self.rows.get(v + 1) & 0xffff)
    }

    /// VE entries of vertex `v`: `ve[begin..end]`. The high 16 bits
    /// of `rows` hold the inclusive prefix sum of the VE counts.
    #[inline(always)]
    fn ve_row(&self, v: u32) -> (u32, u32) {
        let begin = if v == 0 {
            0
        } else {
            self.rows.get(v - 1) >> 16
        };
        (begin, self.rows.get(v) >> 16)
    }

    /// Allocates what `query` needs on a patch of shape `info`. Unused
    /// relations get empty windows.
    #[inline(always)]
    fn alloc(arena: &mut SharedArena, info: &PatchInfo, query: Query, block_dim: u32) -> Buffers {
        let nv = info.num_vertices;
        let ne = info.num_edges;
        let nf = info.num_faces;
        let vertex = query.source() == Kind::Vertex;
        let needs_ef = matches!(query, Query::EF | Query::FF);
        let needs_fv = vertex || query == Query::FV;
        let empty = |arena: &mut SharedArena| Csr::alloc(arena, 0, 0);
        let fe = arena.alloc(3 * nf);
        let ev = arena.alloc(2 * ne);
        let fv = arena.alloc(if needs_fv { 3 * nf } else { 0 });
        let scratch = arena.alloc(scan_scratch_len(block_dim));
        let handles = arena.alloc(info.count(query.target()));
        let stash_base = arena.alloc(info.stash_len);
        let (rows, ve, vv, vf, corners, half_count, half, succ) = if vertex {
            (
                arena.alloc(nv + 1),
                arena.alloc(2 * ne),
                arena.alloc(2 * ne),
                arena.alloc(3 * nf),
                arena.alloc(3 * nf),
                arena.alloc((2 * ne).div_ceil(16)),
                arena.alloc(2 * ne),
                arena.alloc(3 * nf),
            )
        } else {
            (
                arena.alloc(0),
                arena.alloc(0),
                arena.alloc(0),
                arena.alloc(0),
                arena.alloc(0),
                arena.alloc(0),
                arena.alloc(0),
                arena.alloc(0),
            )
        };
        let ef = if needs_ef {
            Csr::alloc(arena, ne, 3 * nf)
        } else {
            empty(arena)
        };
        let ff = if query == Query::FF {
            Csr::alloc(arena, nf, info.ff_entries)
        } else {
            empty(arena)
        };
        arena.check();
        Buffers {
            fe,
            ev,
            fv,
            scratch,
            handles,
            stash_base,
            rows,
            ve,
            vv,
            vf,
            corners,
            half_count,
            half,
            succ,
            ef,
            ff,
        }
    }
}

/// Bytes of shared memory that `query` needs on a patch of shape `info`
/// with `block_dim` threads (the launch's dynamic shared-memory size is the
/// maximum over all patches).
pub fn shared_bytes(info: &PatchInfo, query: Query, block_dim: u32) -> usize {
    let mut arena = SharedArena::measuring();
    Buffers::alloc(&mut arena, info, query, block_dim);
    arena.used()
}

/// The result of a query for one source element: a sequence of global
/// handles read from shared memory, mapped from local indices on access.
#[derive(Clone, Copy)]
pub struct Neighbors<'a> {
    handles: Shared<u32>,
    marker: core::marker::PhantomData<&'a ()>,
    values: Shared<u16>,
    begin: u32,
    len: u32,
    shift: u32,
}

impl Neighbors<'_> {
    /// Number of results.
    #[inline(always)]
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether there are no results (an isolated vertex's VV, a boundary face's missing FF).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Global handle of result `i` (`i < len()`).
    #[inline(always)]
    pub fn get(&self, i: u32) -> u32 {
        let local = (self.values.get(self.begin + i) >> self.shift) as u32;
        self.handles.get(local)
    }

    /// For FE results: whether the face traverses edge `i` against the edge's
    /// EV direction (the orientation bit of RXMesh fig. 1). `false` for other queries.
    #[inline(always)]
    pub fn reversed(&self, i: u32) -> bool {
        self.shift == 1 && self.values.get(self.begin + i) & FE_REVERSED != 0
    }

    /// The results in order.
    #[inline(always)]
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len).map(move |i| self.get(i))
    }
}

/// Runs `f(source, neighbors)` for every owned, active source element of
/// `query` in patch `patch` whose global handle passes `active`, with the
/// query computed block-cooperatively in shared memory.
///
/// Every thread of the block must call this with the same arguments (it
/// contains barriers). `arena` must hold [`shared_bytes`] bytes. If no source
/// element of the patch is active the block returns before loading the
/// patch (RXMesh section 6.2, active sets).
#[inline(always)]
pub fn for_each<B: Block>(
    block: &B,
    arena: &mut SharedArena,
    mesh: &PatchMesh,
    patch: u32,
    query: Query,
    active: impl Fn(u32) -> bool,
    mut f: impl FnMut(u32, Neighbors),
) {
    // A register copy of the header: global reads happen once.
    let header = mesh.patches[patch as usize];
    let info = &header;
    let buf = Buffers::alloc(arena, info, query, block.block_dim());
    let src = query.source();
    let owned = info.owned(src);
    let is_active =
        |local: u32| mesh.mask_bit(info, src, true, local) && active(info.base(src) + local);

    let mut any = false;
    block.for_each(owned, |i| any = any || is_active(i));
    if !block.sync_any(any) {
        return;
    }

    load(block, mesh, info, &buf, query);
    match query {
        Query::VV | Query::VE | Query::VF => vertex_relations(block, info, &buf, query),
        Query::EV | Query::FE => block.sync(),
        Query::FV => face_vertices(block, info, &buf),
        Query::EF => edge_faces(block, info, &buf),
        Query::FF => {
            edge_faces(block, info, &buf);
            face_faces(block, info, &buf);
        }
    }

    let handles = buf.handles;
    let marker = core::marker::PhantomData;
    let fixed = |values: Shared<u16>, arity: u32, shift: u32, i: u32| Neighbors {
        handles,
        marker,
        values,
        begin: arity * i,
        len: arity,
        shift,
    };
    let span = |values: Shared<u16>, (begin, end): (u32, u32)| Neighbors {
        handles,
        marker,
        values,
        begin,
        len: end - begin,
        shift: 0,
    };
    let row = |csr: Csr, values: Shared<u16>, i: u32| {
        span(values, (csr.offsets.get(i), csr.offsets.get(i + 1)))
    };
    block.for_each(owned, |i| {
        if !is_active(i) {
            return;
        }
        let n = match query {
            Query::VV => span(buf.vv, buf.ve_row(i)),
            Query::VE => span(buf.ve, buf.ve_row(i)),
            Query::VF => span(buf.vf, buf.vf_row(i)),
            Query::EV => fixed(buf.ev, 2, 0, i),
            Query::EF => row(buf.ef, buf.ef.values, i),
            Query::FV => fixed(buf.fv, 3, 0, i),
            Query::FE => fixed(buf.fe, 3, 1, i),
            Query::FF => row(buf.ff, buf.ff.values, i),
        };
        f(info.base(src) + i, n);
    });
    block.sync();
}

/// Brings the patch into shared memory with all global reads in flight at
/// once: FE and EV (those `query` reads) and the ribbon entries of the
/// target kind by asynchronous copies, the stash patches' first handles by
/// the first threads meanwhile. Then maps local indices of the target kind
/// to global handles once per block (RXMesh section 6.2: the mapping is
/// read in bulk, not per result). Ends without a barrier after the
/// mapping: the caller's next phase must sync before reading `handles`.
#[inline(always)]
fn load<B: Block>(block: &B, mesh: &PatchMesh, info: &PatchInfo, buf: &Buffers, query: Query) {
    let fe = &mesh.fe[info.fe_offset as usize..(info.fe_offset + 3 * info.num_faces) as usize];
    let ev = &mesh.ev[info.ev_offset as usize..(info.ev_offset + 2 * info.num_edges) as usize];
    if query != Query::EV {
        block.copy_async(fe, buf.fe);
    }
    if matches!(query.source(), Kind::Vertex) || matches!(query, Query::EV | Query::FV) {
        block.copy_async(ev, buf.ev);
    }
    let tgt = query.target();
    let owned = info.owned(tgt);
    let start = info.ribbon_start(tgt) as usize;
    let ribbon = &mesh.ribbon[start..start + (info.count(tgt) - owned) as usize];
    block.copy_async(ribbon, buf.handles.tail(owned));
    block.for_each(info.stash_len, |s| {
        let owner = mesh.stash[(info.stash_offset + s) as usize];
        buf.stash_base
            .set(s, mesh.patches[owner as usize].base(tgt));
    });
    block.wait_copies();
    block.sync();
    let base = info.base(tgt);
    block.for_each(info.count(tgt), |l| {
        let h = if l < owned {
            base + l
        } else {
            let (stash_index, owner_local) = ribbon_owner(buf.handles.get(l));
            buf.stash_base.get(stash_index) + owner_local
        };
        buf.handles.set(l, h);
    });
}

/// `FV = FE·EV`: corner `k` of a face is the tail of its directed edge `k`.
#[inline(always)]
fn face_vertices<B: Block>(block: &B, info: &PatchInfo, buf: &Buffers) {
    block.for_each(3 * info.num_faces, |i| {
        let e = buf.fe.get(i);
        let edge = (e >> 1) as u32;
        let tail = if e & FE_REVERSED != 0 { 1 } else { 0 };
        buf.fv.set(i, buf.ev.get(2 * edge + tail));
    });
    block.sync();
}

/// Block-cooperative transpose of a fixed-arity relation: `entries[k]` (with
/// the low `shift` bits dropped) is a target of source row `k / arity`.
/// Counts per target, scans the counts into `offsets`, then calls
/// `emit(pos, k)` with each entry's slot `pos` in its target's row (rows in
/// atomic, i.e. arbitrary, order).
#[inline(always)]
fn transpose<B: Block>(
    block: &B,
    entries: Shared<u16>,
    shift: u32,
    targets: u32,
    offsets: Shared<u32>,
    scratch: Shared<u32>,
    emit: impl Fn(u32, u32),
) {
    let n = entries.len();
    block.for_each(targets + 1, |t| offsets.set(t, 0));
    block.sync();
    block.for_each(n, |k| {
        let t = (entries.get(k) >> shift) as u32;
        block.shared_fetch_add(offsets, t, 1);
    });
    block.sync();
    // Inclusive scan: offsets[t] is the end of row t (offsets[targets] = n).
    block.scan(offsets, targets + 1, scratch, true);
    // Scatter from the row ends downwards; afterwards offsets[t] is the start.
    block.for_each(n, |k| {
        let t = (entries.get(k) >> shift) as u32;
        let pos = block.shared_fetch_add(offsets, t, u32::MAX) - 1;
        emit(pos, k);
    });
    block.sync();
}

/// Sorts `values[begin..end]` ascending (one thread).
#[inline(always)]
fn insertion_sort(values: Shared<u16>, begin: u32, end: u32) {
    let mut i = begin + 1;
    while i < end {
        let x = values.get(i);
        let mut j = i;
        while j > begin && values.get(j - 1) > x {
            values.set(j, values.get(j - 1));
            j -= 1;
        }
        values.set(j, x);
        i += 1;
    }
}

/// `EF = FEᵀ`, rows sorted (deterministic despite the atomic scatter).
#[inline(always)]
fn edge_faces<B: Block>(block: &B, info: &PatchInfo, buf: &Buffers) {
    let ef = buf.ef;
    transpose(
        block,
        buf.fe,
        1,
        info.num_edges,
        ef.offsets,
        buf.scratch,
        |pos, k| ef.values.set(pos, (k / 3) as u16),
    );
    block.for_each(info.num_edges, |e| {
        insertion_sort(ef.values, ef.offsets.get(e), ef.offsets.get(e + 1))
    });
    block.sync();
}

/// `FF = FE·FEᵀ` minus the diagonal, for owned faces: count, scan, fill.
#[inline(always)]
fn face_faces<B: Block>(block: &B, info: &PatchInfo, buf: &Buffers) {
    let nf = info.num_faces;
    block.for_each(nf + 1, |f| {
        let n = if f < info.owned_faces {
            adjacent_faces(buf, f, |_, _| {})
        } else {
            0
        };
        buf.ff.offsets.set(f, n);
    });
    block.sync();
    block.scan(buf.ff.offsets, nf + 1, buf.scratch, false);
    block.for_each(info.owned_faces, |f| {
        let start = buf.ff.offsets.get(f);
        adjacent_faces(buf, f, |k, g| buf.ff.values.set(start + k, g));
    });
    block.sync();
}

/// Calls `emit(k, g)` for the `k`-th distinct face `g != f` sharing an edge
/// with face `f`; returns the count. Reads FE and EF.
#[inline(always)]
fn adjacent_faces(buf: &Buffers, f: u32, mut emit: impl FnMut(u32, u16)) -> u32 {
    let edge = |j: u32| (buf.fe.get(3 * f + j) >> 1) as u32;
    let mut count = 0;
    for k in 0..3 {
        let e = edge(k);
        for i in buf.ef.offsets.get(e)..buf.ef.offsets.get(e + 1) {
            let g = buf.ef.values.get(i);
            if g as u32 == f {
                continue;
            }
            let seen = (0..k).any(|j| {
                let d = edge(j);
                (buf.ef.offsets.get(d)..buf.ef.offsets.get(d + 1))
                    .any(|m| buf.ef.values.get(m) == g)
            });
            if !seen {
                emit(count, g);
                count += 1;
            }
        }
    }
    count
}

/// [`Buffers::succ`]: the fan ends at this corner (a boundary edge follows).
const NO_CORNER: u16 = 0x7fff;
/// [`Buffers::succ`]: the corner's vertex is not manifold (a half-edge at it
/// is traversed twice: a non-manifold or inconsistently oriented edge).
const BAD_CORNER: u16 = 0x7ffe;
/// [`Buffers::succ`] flag: no corner precedes this one (an open fan's first).
const FAN_START: u16 = 0x8000;

/// Records one traversal of directed edge `h` in the 2-bit counters of
/// `counts` (16 per word): bit 0 on the first traversal, bit 1 on any later
/// one. Shared memory has no 16- or 8-bit atomics; this keeps the table at
/// an eighth of a 32-bit counter per half-edge.
#[inline(always)]
fn count_half_edge<B: Block>(block: &B, counts: Shared<u32>, h: u32) {
    let shift = 2 * (h % 16);
    let old = block.shared_fetch_or(counts, h / 16, 1 << shift);
    if old >> shift & 1 != 0 {
        block.shared_fetch_or(counts, h / 16, 2 << shift);
    }
}

/// Traversals of directed edge `h` recorded by [`count_half_edge`]: 0, 1,
/// or 2 for two or more.
#[inline(always)]
fn half_edge_count(counts: Shared<u32>, h: u32) -> u32 {
    match counts.get(h / 16) >> (2 * (h % 16)) & 3 {
        0 => 0,
        1 => 1,
        _ => 2,
    }
}

/// VE, VF and VV of the owned vertices, in rotational order where the
/// vertex is manifold (its faces form one fan, open or closed, consistently
/// oriented); otherwise VE and VF sorted by local index and VV following VE.
///
/// Corner-parallel passes build FV, the VF and VE counts and the half-edge
/// table, then each corner's successor around its vertex; a thread per
/// vertex then only follows successors. Corner indices fit the 15 bits of
/// [`Buffers::succ`] because patches hold at most 8192 faces.
#[inline(always)]
fn vertex_relations<B: Block>(block: &B, info: &PatchInfo, buf: &Buffers, query: Query) {
    let (nv, ne, nf) = (info.num_vertices, info.num_edges, info.num_faces);
    debug_assert!(3 * nf < BAD_CORNER as u32 && 2 * ne < 1 << 16);
    let (rows, corners) = (buf.rows, buf.corners);
    block.for_each(nv + 1, |v| rows.set(v, 0));
    block.for_each((2 * ne).div_ceil(16), |w| buf.half_count.set(w, 0));
    block.sync();
    // One thread per face: FV = FE·EV, the VF counts and the half-edge
    // table (directed edge -> the FE entry traversing it); the VE counts
    // (VE = EVᵀ is never scattered: fans give its rows directly).
    block.for_each(nf, |f| {
        for k in 3 * f..3 * f + 3 {
            let e = buf.fe.get(k);
            let tail = buf.ev.get(2 * (e >> 1) as u32 + (e & FE_REVERSED) as u32);
            buf.fv.set(k, tail);
            block.shared_fetch_add(rows, tail as u32, 1);
            count_half_edge(block, buf.half_count, e as u32);
            buf.half.set(e as u32, k as u16);
        }
    });
    if query != Query::VF {
        block.for_each(2 * ne, |i| {
            block.shared_fetch_add(rows, buf.ev.get(i) as u32, 1 << 16);
        });
    }
    block.sync();
    // Successors, one thread per face: the corner after corner `c` of the
    // face counter-clockwise around its vertex is the one whose outgoing
    // edge is the reverse of `c`'s incoming edge (the face's edge `c - 1`).
    block.for_each(nf, |f| {
        let h = [0, 1, 2].map(|c| buf.fe.get(3 * f + c) as u32);
        let count = |h: u32| half_edge_count(buf.half_count, h);
        let own = h.map(count);
        let twin = h.map(|h| count(h ^ 1));
        for c in 0..3 {
            let (out, inc) = (c, (c + 2) % 3);
            let unique = own[out] == 1 && own[inc] == 1 && twin[out] <= 1 && twin[inc] <= 1;
            let succ = match (unique, twin[inc]) {
                (false, _) => BAD_CORNER,
                (true, 0) => NO_CORNER,
                (true, _) => buf.half.get(h[inc] ^ 1),
            };
            let start = if twin[out] == 0 { FAN_START } else { 0 };
            buf.succ.set(3 * f + c as u32, succ | start);
        }
    });
    // One inclusive scan of the packed counts (VF low, VE high 16 bits;
    // neither total reaches 2^16 since patches hold at most 8192 faces).
    block.scan(rows, nv + 1, buf.scratch, true);
    // Scatter the corners from the VF row ends downwards (the low half of
    // a row's end is at least its count, so the decrements never borrow).
    block.for_each(3 * nf, |k| {
        let v = buf.fv.get(k) as u32;
        let pos = (block.shared_fetch_add(rows, v, u32::MAX) & 0xffff) - 1;
        corners.set(pos, k as u16);
    });
    block.sync();
    block.for_each(info.owned_vertices, |v| {
        if !rotational_order(buf, v, query) {
            unordered_vertex_rows(buf, v);
        }
    });
    block.sync();
}

/// VE, VV and VF of a non-manifold vertex `v`, sorted by local index: VE
/// collects the distinct edges out of and into `v` over its corners.
#[inline(always)]
fn unordered_vertex_rows(buf: &Buffers, v: u32) {
    let (ve, vf, c) = (buf.ve, buf.vf, buf.corners);
    let (eb, ee) = buf.ve_row(v);
    let (fb, fe) = buf.vf_row(v);
    let mut n = eb;
    for i in fb..fe {
        let k = c.get(i) as u32;
        let f = 3 * (k / 3);
        for h in [buf.fe.get(k), buf.fe.get(f + (k - f + 2) % 3)] {
            let e = h >> 1;
            if n < ee && !(eb..n).any(|j| ve.get(j) == e) {
                ve.set(n, e);
                n += 1;
            }
        }
        vf.set(i, (k / 3) as u16);
    }
    insertion_sort(ve, eb, ee);
    for i in eb..ee {
        buf.vv.set(i, other_end(buf, ve.get(i), v));
    }
    insertion_sort(vf, fb, fe);
}

/// The endpoint of local edge `e` that is not `v`.
#[inline(always)]
fn other_end(buf: &Buffers, e: u16, v: u32) -> u16 {
    let a = buf.ev.get(2 * e as u32);
    if a as u32 == v {
        buf.ev.get(2 * e as u32 + 1)
    } else {
        a
    }
}

/// Writes the row of vertex `v` that `query` (VV, VE or VF) reads in
/// counter-clockwise order by following corner successors, from the fan's
/// first corner (open fan) or the lowest corner (closed fan), in
/// O(valence). Returns false when `v` is not manifold (several fans, a
/// non-manifold or inconsistently oriented edge); the rows are then left
/// as they are.
#[inline(always)]
fn rotational_order(buf: &Buffers, v: u32, query: Query) -> bool {
    let (fb, fe) = buf.vf_row(v);
    let (eb, ee) = buf.ve_row(v);
    let n = fe - fb;
    if n == 0 {
        return eb == ee;
    }
    // One look at every corner (independent loads): a non-manifold mark,
    // the lowest corner, the open fan's first corner.
    let (mut lowest, mut first, mut starts, mut bad) = (u32::MAX, 0, 0, false);
    for i in fb..fe {
        let k = buf.corners.get(i) as u32;
        let s = buf.succ.get(k);
        bad |= s & !FAN_START == BAD_CORNER;
        lowest = lowest.min(k);
        if s & FAN_START != 0 {
            starts += 1;
            first = k;
        }
    }
    let closed = starts == 0;
    // VF skips the VE counts (its rows are empty): the walk below alone
    // proves the fan; for VV and VE the ring must also match the VE count.
    let ring = n + if closed { 0 } else { 1 };
    if bad || starts > 1 || (query != Query::VF && ee - eb != ring) {
        return false;
    }
    if closed {
        first = lowest;
    }
    // Follow exactly n successors, ending at the first corner (closed) or
    // at the boundary (open).
    let mut k = first;
    for p in 0..n {
        // The face's next and previous corners, without branches.
        let c = k % 3;
        let succ = k + 1 - if c == 2 { 3 } else { 0 };
        let pred = k + 2 - if c == 0 { 0 } else { 3 };
        match query {
            Query::VV => buf.vv.set(eb + p, buf.fv.get(succ)),
            Query::VE => buf.ve.set(eb + p, buf.fe.get(k) >> 1),
            _ => buf.vf.set(fb + p, (k / 3) as u16),
        }
        let next = (buf.succ.get(k) & !FAN_START) as u32;
        if p + 1 < n {
            if next == NO_CORNER as u32 || next == first {
                return false;
            }
            k = next;
        } else if closed {
            return next == first;
        } else {
            if next != NO_CORNER as u32 {
                return false;
            }
            match query {
                Query::VV => buf.vv.set(eb + n, buf.fv.get(pred)),
                Query::VE => buf.ve.set(eb + n, buf.fe.get(pred) >> 1),
                _ => {}
            }
        }
    }
    true
}

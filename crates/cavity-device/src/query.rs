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

use crate::block::{Block, Shared, SharedArena};
use crate::layout::{FE_REVERSED, Kind, PatchInfo, PatchMesh};

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
    /// vertex and use more shared memory: 256 × 4; the others 128 × 8.
    pub fn launch_bounds(self) -> (u32, u32) {
        match self.source() {
            Kind::Vertex => (256, 4),
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
    flag: Shared<u32>,
    /// Global handles of the target kind's local elements.
    handles: Shared<u32>,
    /// VE (rows in rotational order where manifold) and VV in the same order.
    ve: Csr,
    vv: Shared<u16>,
    vf: Csr,
    /// VF entries as FV entry indices `3 * face + corner` (before ordering).
    corners: Shared<u32>,
    /// Per directed local edge (`2 * edge + reversed`): how many FE entries
    /// traverse it, and one of them (the half-edge table of the fan walk).
    half_count: Shared<u32>,
    half: Shared<u32>,
    ef: Csr,
    ff: Csr,
}

impl Buffers {
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
        let scratch = arena.alloc(block_dim);
        let flag = arena.alloc(1);
        let handles = arena.alloc(info.count(query.target()));
        let (ve, vv, vf, corners, half_count, half) = if vertex {
            (
                Csr::alloc(arena, nv, 2 * ne),
                arena.alloc(2 * ne),
                Csr::alloc(arena, nv, 3 * nf),
                arena.alloc(3 * nf),
                arena.alloc(2 * ne),
                arena.alloc(2 * ne),
            )
        } else {
            (
                empty(arena),
                arena.alloc(0),
                empty(arena),
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
        Buffers {
            fe,
            ev,
            fv,
            scratch,
            flag,
            handles,
            ve,
            vv,
            vf,
            corners,
            half_count,
            half,
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

    if block.thread_idx() == 0 {
        buf.flag.set(0, 0);
    }
    block.sync();
    block.for_each(owned, |i| {
        if is_active(i) {
            buf.flag.set(0, 1);
        }
    });
    block.sync();
    if buf.flag.get(0) == 0 {
        return;
    }

    load(block, mesh, info, &buf, query);
    match query {
        Query::VV | Query::VE | Query::VF => vertex_relations(block, info, &buf),
        Query::EV | Query::FE => {}
        Query::FV => face_vertices(block, info, &buf),
        Query::EF => edge_faces(block, info, &buf),
        Query::FF => {
            edge_faces(block, info, &buf);
            face_faces(block, info, &buf);
        }
    }

    let tgt = query.target();
    // Local → global handles of the target kind, once per block (RXMesh
    // section 6.2: the mapping is read in bulk, not per result).
    block.for_each(info.count(tgt), |l| {
        buf.handles.set(l, mesh.global(info, tgt, l))
    });
    block.sync();
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
    let row = |csr: Csr, values: Shared<u16>, i: u32| {
        let begin = csr.offsets.get(i);
        Neighbors {
            handles,
            marker,
            values,
            begin,
            len: csr.offsets.get(i + 1) - begin,
            shift: 0,
        }
    };
    block.for_each(owned, |i| {
        if !is_active(i) {
            return;
        }
        let n = match query {
            Query::VV => row(buf.ve, buf.vv, i),
            Query::VE => row(buf.ve, buf.ve.values, i),
            Query::VF => row(buf.vf, buf.vf.values, i),
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

/// Coalesced copy of the patch's FE and EV (those `query` reads) from
/// global to shared memory.
#[inline(always)]
fn load<B: Block>(block: &B, mesh: &PatchMesh, info: &PatchInfo, buf: &Buffers, query: Query) {
    let fe = &mesh.fe[info.fe_offset as usize..(info.fe_offset + 3 * info.num_faces) as usize];
    let ev = &mesh.ev[info.ev_offset as usize..(info.ev_offset + 2 * info.num_edges) as usize];
    if query != Query::EV {
        block.for_each(fe.len() as u32, |i| buf.fe.set(i, fe[i as usize]));
    }
    if matches!(query.source(), Kind::Vertex) || matches!(query, Query::EV | Query::FV) {
        block.for_each(ev.len() as u32, |i| buf.ev.set(i, ev[i as usize]));
    }
    block.sync();
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

/// VE, VF and VV of the owned vertices, in rotational order where the
/// vertex is manifold (its faces form one fan, open or closed, consistently
/// oriented); otherwise VE and VF sorted by local index and VV following VE.
#[inline(always)]
fn vertex_relations<B: Block>(block: &B, info: &PatchInfo, buf: &Buffers) {
    let (nv, ne, nf) = (info.num_vertices, info.num_edges, info.num_faces);
    let (vf, ve, corners) = (buf.vf, buf.ve, buf.corners);
    block.for_each(nv + 1, |v| {
        vf.offsets.set(v, 0);
        ve.offsets.set(v, 0);
    });
    block.for_each(2 * ne, |h| buf.half_count.set(h, 0));
    block.sync();
    // One pass over the corners: FV = FE·EV, the VF counts, and the
    // half-edge table (directed edge -> the FE entry traversing it); one
    // over the edges: the VE counts (VE = EVᵀ is never scattered: fans
    // give its rows directly).
    block.for_each(3 * nf, |k| {
        let e = buf.fe.get(k);
        let tail = buf.ev.get(2 * (e >> 1) as u32 + (e & FE_REVERSED) as u32);
        buf.fv.set(k, tail);
        block.shared_fetch_add(vf.offsets, tail as u32, 1);
        block.shared_fetch_add(buf.half_count, e as u32, 1);
        buf.half.set(e as u32, k);
    });
    block.for_each(2 * ne, |i| {
        block.shared_fetch_add(ve.offsets, buf.ev.get(i) as u32, 1);
    });
    block.sync();
    block.scan(vf.offsets, nv + 1, buf.scratch, true);
    block.scan(ve.offsets, nv + 1, buf.scratch, false);
    // Scatter the corners from the VF row ends downwards.
    block.for_each(3 * nf, |k| {
        let v = buf.fv.get(k) as u32;
        let pos = block.shared_fetch_add(vf.offsets, v, u32::MAX) - 1;
        corners.set(pos, k);
    });
    block.sync();
    block.for_each(info.owned_vertices, |v| {
        if !rotational_order(buf, v) {
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
    let (eb, ee) = (ve.offsets.get(v), ve.offsets.get(v + 1));
    let (fb, fe) = (vf.offsets.get(v), vf.offsets.get(v + 1));
    let mut n = eb;
    for i in fb..fe {
        let k = c.get(i);
        let f = 3 * (k / 3);
        for h in [buf.fe.get(k), buf.fe.get(f + (k - f + 2) % 3)] {
            let e = h >> 1;
            if n < ee && !(eb..n).any(|j| ve.values.get(j) == e) {
                ve.values.set(n, e);
                n += 1;
            }
        }
        vf.values.set(i, (k / 3) as u16);
    }
    insertion_sort(ve.values, eb, ee);
    for i in eb..ee {
        buf.vv.set(i, other_end(buf, ve.values.get(i), v));
    }
    insertion_sort(vf.values, fb, fe);
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

/// For the FV entry `k` (corner `k % 3` of face `k / 3`, at vertex `v`):
/// the next corner's vertex `a`, the one after `b`, the edge `v→a` and the
/// edge `b→v` (local edge indices).
#[inline(always)]
fn fan_step(buf: &Buffers, k: u32) -> (u16, u16, u16, u16) {
    let f = 3 * (k / 3);
    let c = k - f;
    let (n1, n2) = (f + (c + 1) % 3, f + (c + 2) % 3);
    (
        buf.fv.get(n1),
        buf.fv.get(n2),
        buf.fe.get(k) >> 1,
        buf.fe.get(n2) >> 1,
    )
}

/// The FE entry traversing directed edge `h` (`2 * edge + reversed`) when
/// exactly one does; `None` when none does (a boundary) or several do
/// (non-manifold or inconsistently oriented: `Err`).
#[inline(always)]
fn half_edge(buf: &Buffers, h: u32) -> Result<Option<u32>, ()> {
    match buf.half_count.get(h) {
        0 => Ok(None),
        1 => Ok(Some(buf.half.get(h))),
        _ => Err(()),
    }
}

/// The corner following corner `k` counter-clockwise around its vertex:
/// the corner whose outgoing edge is the reverse of `k`'s incoming one.
#[inline(always)]
fn next_corner(buf: &Buffers, k: u32) -> Result<Option<u32>, ()> {
    let f = 3 * (k / 3);
    let incoming = buf.fe.get(f + (k - f + 2) % 3) as u32;
    half_edge(buf, incoming ^ 1)
}

/// The corner preceding corner `k` around its vertex: the entry traversing
/// the reverse of `k`'s outgoing edge belongs to the previous face, whose
/// corner at this vertex follows it.
#[inline(always)]
fn prev_corner(buf: &Buffers, k: u32) -> Result<Option<u32>, ()> {
    let outgoing = buf.fe.get(k) as u32;
    Ok(half_edge(buf, outgoing ^ 1)?.map(|m| {
        let f = 3 * (m / 3);
        f + (m - f + 1) % 3
    }))
}

/// Walks vertex `v`'s fan with the half-edge table and writes VV, VE and VF
/// in counter-clockwise order, from the fan's first face (open fan) or the
/// lowest corner (closed fan), in O(valence). Returns false when `v` is not
/// manifold (several fans, a non-manifold or inconsistently oriented edge);
/// the rows are then left as they are.
#[inline(always)]
fn rotational_order(buf: &Buffers, v: u32) -> bool {
    let (fb, fe) = (buf.vf.offsets.get(v), buf.vf.offsets.get(v + 1));
    let (eb, ee) = (buf.ve.offsets.get(v), buf.ve.offsets.get(v + 1));
    let c = buf.corners;
    let n = fe - fb;
    if n == 0 {
        return eb == ee;
    }
    // Every half-edge out of and into v must be traversed once: then the
    // fan steps are injective and a walk cannot revisit a corner.
    let single = |h: u16| buf.half_count.get(h as u32) == 1;
    let unique = (fb..fe).all(|i| {
        let k = c.get(i);
        let f = 3 * (k / 3);
        single(buf.fe.get(k)) && single(buf.fe.get(f + (k - f + 2) % 3))
    });
    if !unique {
        return false;
    }
    let lowest = (fb..fe).map(|i| c.get(i)).min().unwrap_or(0);
    // Walk back to the first corner of an open fan (at most n steps).
    let mut start = lowest;
    let mut closed = false;
    for _ in 0..n {
        match prev_corner(buf, start) {
            Err(()) => return false,
            Ok(None) => break,
            Ok(Some(p)) if p == lowest => {
                closed = true;
                break;
            }
            Ok(Some(p)) => start = p,
        }
    }
    if closed {
        start = lowest;
    }
    let ring = n + if closed { 0 } else { 1 };
    if ring != ee - eb {
        return false;
    }
    // Walk forward: exactly n corners, ending at the start (closed) or at
    // the boundary (open).
    let mut k = start;
    for p in 0..n {
        let (a, _, out, _) = fan_step(buf, k);
        buf.vv.set(eb + p, a);
        buf.ve.values.set(eb + p, out);
        buf.vf.values.set(fb + p, (k / 3) as u16);
        let next = next_corner(buf, k);
        let last = p + 1 == n;
        match next {
            Ok(Some(m)) if !last && m != start => k = m,
            Ok(Some(m)) if last && closed && m == start => {}
            Ok(None) if last && !closed => {
                let (_, b, _, back) = fan_step(buf, k);
                buf.vv.set(eb + n, b);
                buf.ve.values.set(eb + n, back);
            }
            _ => return false,
        }
    }
    true
}

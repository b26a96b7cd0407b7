//! Block-cooperative first-order queries on one patch in shared memory
//! (RXMesh section 6.2 and appendix A/B).
//!
//! A block loads its patch's FE and EV into shared memory and derives every
//! other relation (RXMesh section 3.1): `FV = FE·EV`; `EF = FEᵀ` by a
//! cooperative count / block-wide scan / scatter. The vertex queries (VV,
//! VE, VF) and FF go through a half-edge table built from FE: each
//! vertex's one-ring is walked in rotational order (counter-clockwise with
//! the faces' orientation) by one thread, and each face finds the faces
//! across its manifold edges directly; non-manifold elements fall back to
//! scattered, sorted rows (`VF = FVᵀ`, `FF = FE·FEᵀ` through EF).
//! Results reach the caller through [`Neighbors`], which maps local indices to
//! global handles on access, so the caller never sees patches, threads or
//! local indices.
//!
//! Longer than 700 lines as one file on purpose: the load, the transposes
//! and the half-edge walks of one block's query share the private layout
//! of its shared memory (`Buffers`) and run as one pipeline; split, that
//! layout would become every part's public interface.

use crate::block::{Block, Shared, SharedArena, scan_scratch_len};
use crate::kernel::LaunchBounds;
use crate::layout::{
    FE_REVERSED, Kind, MAX_LOCAL_EDGES, MAX_LOCAL_FACES, PatchInfo, PatchMesh, ribbon_owner,
};

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
    /// 65536 / (threads × blocks)). The vertex queries walk fans one thread
    /// per vertex, are latency bound and gain from every resident block
    /// their shared memory (20-30 KB for a 512-face patch) allows, as
    /// far as registers do not spill: VF 256 × 7, VV and VE 192 × 8
    /// (measured on an H100,
    /// docs/history/2026-11-23-second-session.md); the others 128 × 8.
    pub const fn launch_bounds(self) -> LaunchBounds {
        let (threads, min_blocks) = match self {
            Query::VF => (256, 7),
            Query::VV | Query::VE => (192, 8),
            _ => (128, 8),
        };
        LaunchBounds {
            threads,
            min_blocks,
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

/// The shared-memory buffers of one query on one patch. Each query gets
/// only the windows it uses (the vertex queries one output window each),
/// so that more blocks fit an SM.
struct Buffers {
    fe: Shared<u16>,
    ev: Shared<u16>,
    fv: Shared<u16>,
    scratch: Shared<u32>,
    /// Global handles of the target kind's ribbon (not-owned) elements;
    /// owned element `l` is `base + l` and is never stored.
    ribbon: Shared<u32>,
    /// First global handle (target kind) of each patch in the stash.
    stash_base: Shared<u32>,
    /// Packed inclusive prefix sums per vertex: VF counts in the low 16
    /// bits, VE counts in the high 16 (see [`Buffers::vf_row`],
    /// [`Buffers::ve_row`]): one scan serves both.
    rows: Shared<u32>,
    /// Per vertex: its lowest corner plus one (where its fan walk starts),
    /// [`NOT_MANIFOLD`], or [`UNORDERED`] with a cursor; `u32::MAX` (which
    /// reads as unordered, with empty rows) for a vertex without corners.
    first: Shared<u32>,
    /// The half-edge table: per directed local edge (`2 * edge +
    /// reversed`, an FE entry) the corner (FE index) that traverses it, or
    /// [`NO_TRAVERSAL`]. Exact for every directed edge traversed at most
    /// once; a second traversal is detected when it is recorded (see
    /// [`Buffers::record`]).
    half: Shared<u32>,
    /// FF: per local edge, non-zero when one of its directions is
    /// traversed twice (a non-manifold or inconsistently oriented edge).
    collided: Shared<u32>,
    /// The corners of the vertices whose rows are built unordered,
    /// gathered at their VF row slots.
    corners: Shared<u16>,
    /// The vertex query's rows: VF (bounds [`Buffers::vf_row`]), or VV or
    /// VE (bounds [`Buffers::ve_row`]).
    out: Shared<u16>,
    ef: Csr,
    ff: Csr,
}

impl Buffers {
    /// The tail vertex of directed edge `h` (an FE entry): the vertex of
    /// the corner that traverses it.
    #[inline(always)]
    fn tail(&self, h: u16) -> u16 {
        self.ev.get(2 * (h >> 1) as u32 + (h & FE_REVERSED) as u32)
    }

    /// VF entries of vertex `v`: `out[begin..end]`.
    #[inline(always)]
    fn vf_row(&self, v: u32) -> (u32, u32) {
        let begin = if v == 0 {
            0
        } else {
            self.rows.get(v - 1) & 0xffff
        };
        (begin, self.rows.get(v) & 0xffff)
    }

    /// The corner that traverses directed edge `h`, if any (one of them
    /// when `h` is traversed twice).
    #[inline(always)]
    fn traversal(&self, h: u32) -> Option<u32> {
        let t = self.half.get(h);
        (t != NO_TRAVERSAL).then_some(t)
    }

    /// Records corner `k` as the traversal of its directed edge `h` in the
    /// half-edge table; false when another corner recorded `h` before (a
    /// non-manifold or inconsistently oriented edge).
    #[inline(always)]
    fn record<B: Block>(&self, block: &B, h: u32, k: u32) -> bool {
        block.shared_exchange(self.half, h, k) == NO_TRAVERSAL
    }

    /// VE (and VV) entries of vertex `v`: `out[begin..end]`.
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
        let needs_fv = matches!(query, Query::VV | Query::FV);
        let needs_ev = vertex || needs_fv || query == Query::EV;
        let tgt = query.target();
        let per_vertex = |n: u32| if vertex { n } else { 0 };
        let out_len = match query {
            Query::VF => 3 * nf,
            Query::VV | Query::VE => 2 * ne,
            _ => 0,
        };
        let ef_rows = if needs_ef { ne } else { 0 };
        let ff_rows = if query == Query::FF { nf } else { 0 };
        let buf = Buffers {
            fe: arena.alloc(if query == Query::EV { 0 } else { 3 * nf }),
            ev: arena.alloc(if needs_ev { 2 * ne } else { 0 }),
            fv: arena.alloc(if needs_fv { 3 * nf } else { 0 }),
            scratch: arena.alloc(scan_scratch_len(block_dim)),
            ribbon: arena.alloc(info.count(tgt) - info.owned(tgt)),
            stash_base: arena.alloc(info.stash_len),
            rows: arena.alloc(per_vertex(nv)),
            first: arena.alloc(per_vertex(nv)),
            half: arena.alloc(if vertex || ff_rows > 0 { 2 * ne } else { 0 }),
            collided: arena.alloc(if ff_rows > 0 { ne } else { 0 }),
            corners: arena.alloc(per_vertex(3 * nf)),
            out: arena.alloc(out_len),
            ef: Csr::alloc(arena, ef_rows, if needs_ef { 3 * nf } else { 0 }),
            ff: Csr::alloc(
                arena,
                ff_rows,
                if ff_rows > 0 { info.ff_entries } else { 0 },
            ),
        };
        arena.check();
        buf
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
    /// Target kind: owned count, first handle, ribbon handles.
    owned: u32,
    base: u32,
    ribbon: Shared<u32>,
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
        if local < self.owned {
            self.base + local
        } else {
            self.ribbon.get(local - self.owned)
        }
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
    let (owned, src_base) = (info.owned(src), info.base(src));
    let is_active = |local: u32| mesh.mask_bit(info, src, true, local) && active(src_base + local);

    // Whether any owned source element is active, a mask word per step
    // (with an always-true `active` this is a test of the word).
    let mask_start = info.mask_start(src, true);
    let mut any = false;
    block.for_each(owned.div_ceil(32), |w| {
        let valid = (owned - 32 * w).min(32);
        let mut bits = mesh.masks[(mask_start + w) as usize] & (u32::MAX >> (32 - valid));
        while bits != 0 && !any {
            any = active(src_base + 32 * w + bits.trailing_zeros());
            bits &= bits - 1;
        }
    });
    if !block.sync_any(any) {
        return;
    }

    load(block, mesh, info, &buf, query);
    match query {
        Query::VV | Query::VE | Query::VF => vertex_relations(block, info, &buf, query),
        Query::EV | Query::FE => block.sync(),
        Query::FV => face_vertices(block, info, &buf),
        Query::EF => edge_faces(block, info, &buf),
        Query::FF => face_faces(block, info, &buf),
    }

    let tgt = query.target();
    let (tgt_owned, tgt_base, ribbon) = (info.owned(tgt), info.base(tgt), buf.ribbon);
    let marker = core::marker::PhantomData;
    let span = |values: Shared<u16>, (begin, end): (u32, u32), shift: u32| Neighbors {
        owned: tgt_owned,
        base: tgt_base,
        ribbon,
        marker,
        values,
        begin,
        len: end - begin,
        shift,
    };
    let fixed = |values: Shared<u16>, arity: u32, shift: u32, i: u32| {
        span(values, (arity * i, arity * i + arity), shift)
    };
    let row = |csr: Csr, i: u32| span(csr.values, (csr.offsets.get(i), csr.offsets.get(i + 1)), 0);
    // Inlined into each kernel that calls this (on the host the eight
    // query kernels share the closure's one instance, which would stay a
    // call per element otherwise).
    block.for_each(
        owned,
        #[inline(always)]
        |i| {
            if !is_active(i) {
                return;
            }
            let n = match query {
                Query::VV | Query::VE => span(buf.out, buf.ve_row(i), 0),
                Query::VF => span(buf.out, buf.vf_row(i), 0),
                Query::EV => fixed(buf.ev, 2, 0, i),
                Query::EF => row(buf.ef, i),
                Query::FV => fixed(buf.fv, 3, 0, i),
                Query::FE => fixed(buf.fe, 3, 1, i),
                Query::FF => row(buf.ff, i),
            };
            f(src_base + i, n);
        },
    );
    block.sync();
}

/// Brings the patch into shared memory with all global reads in flight at
/// once: FE and EV (those `query` reads) and the ribbon entries of the
/// target kind by asynchronous copies, the stash patches' first handles by
/// the first threads meanwhile (and clears the tables that start cleared:
/// the vertex queries' counts and first corners, the half-edge table,
/// FF's collision flags). Then
/// maps the ribbon entries to global handles once per block (RXMesh
/// section 6.2: the mapping is read in bulk, not per result).
/// Ends without a barrier after the mapping: the caller's next phase must
/// sync before reading `ribbon`.
#[inline(always)]
fn load<B: Block>(block: &B, mesh: &PatchMesh, info: &PatchInfo, buf: &Buffers, query: Query) {
    // FE and EV as far as `query` reads them (empty windows otherwise).
    let (fe, ev) = (info.fe_offset as usize, info.ev_offset as usize);
    block.copy_async_padded(&mesh.fe[fe..fe + buf.fe.len() as usize], buf.fe);
    block.copy_async_padded(&mesh.ev[ev..ev + buf.ev.len() as usize], buf.ev);
    let tgt = query.target();
    let start = info.ribbon_start(tgt) as usize;
    let ribbon = &mesh.ribbon[start..start + buf.ribbon.len() as usize];
    block.copy_async(ribbon, buf.ribbon);
    block.for_each(info.stash_len, |s| {
        let owner = mesh.stash[(info.stash_offset + s) as usize];
        buf.stash_base
            .set(s, mesh.patches[owner as usize].base(tgt));
    });
    block.fill(buf.rows, 0);
    block.fill(buf.first, u32::MAX);
    block.fill(buf.half, NO_TRAVERSAL);
    block.fill(buf.collided, 0);
    block.wait_copies();
    block.sync();
    block.for_each(buf.ribbon.len(), |l| {
        let (stash_index, owner_local) = ribbon_owner(buf.ribbon.get(l));
        buf.ribbon
            .set(l, buf.stash_base.get(stash_index) + owner_local);
    });
}

/// `FV = FE·EV`: corner `k` of a face is the tail of its directed edge `k`.
#[inline(always)]
fn face_vertices<B: Block>(block: &B, info: &PatchInfo, buf: &Buffers) {
    block.for_each(3 * info.num_faces, |i| {
        buf.fv.set(i, buf.tail(buf.fe.get(i)))
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

/// [`Buffers::ff`] offset of a face whose FF needs EF (a non-manifold edge).
const NEEDS_EF: u32 = u32::MAX;

/// `FF = FE·FEᵀ` minus the diagonal, for owned faces: count, scan, fill.
/// A face whose three edges are manifold (neither direction traversed
/// twice) finds its neighbours in O(1) through the half-edge table, as the
/// vertex queries do; EF is built only in patches where some face has a
/// non-manifold edge, for those faces.
#[inline(always)]
fn face_faces<B: Block>(block: &B, info: &PatchInfo, buf: &Buffers) {
    let nf = info.num_faces;
    block.for_each(3 * nf, |k| {
        let h = buf.fe.get(k) as u32;
        if !buf.record(block, h, k) {
            buf.collided.set(h >> 1, 1);
        }
    });
    block.sync();
    let offsets = buf.ff.offsets;
    let mut needs_ef = false;
    block.for_each(nf + 1, |f| {
        let n = if f >= info.owned_faces {
            0
        } else if let Some(faces) = manifold_face_faces(buf, f) {
            faces.iter().flatten().count() as u32
        } else {
            needs_ef = true;
            NEEDS_EF
        };
        offsets.set(f, n);
    });
    if block.sync_any(needs_ef) {
        edge_faces(block, info, buf);
        block.for_each(info.owned_faces, |f| {
            if offsets.get(f) == NEEDS_EF {
                offsets.set(f, adjacent_faces(buf, f, |_, _| {}));
            }
        });
        block.sync();
    }
    block.scan(offsets, nf + 1, buf.scratch, false);
    block.for_each(info.owned_faces, |f| {
        let start = offsets.get(f);
        match manifold_face_faces(buf, f) {
            Some(faces) => {
                for (k, &g) in faces.iter().flatten().enumerate() {
                    buf.ff.values.set(start + k as u32, g);
                }
            }
            None => {
                adjacent_faces(buf, f, |k, g| buf.ff.values.set(start + k, g));
            }
        }
    });
    block.sync();
}

/// The distinct faces across the edges of face `f`, per edge (`None` for
/// a boundary edge or a face seen across an earlier edge), when every edge
/// of `f` is manifold: used by `f` alone, or by `f` and one face
/// traversing it the other way. `None` when an edge has a direction
/// traversed twice (so more uses, or two in the same direction).
#[inline(always)]
fn manifold_face_faces(buf: &Buffers, f: u32) -> Option<[Option<u16>; 3]> {
    let mut faces = [None; 3];
    for c in 0..3 {
        let h = buf.fe.get(3 * f + c as u32) as u32;
        if buf.collided.get(h >> 1) != 0 {
            return None;
        }
        faces[c] = buf
            .traversal(h ^ 1)
            .map(|t| (t / 3) as u16)
            .filter(|&g| g as u32 != f && !faces[..c].contains(&Some(g)));
    }
    Some(faces)
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

/// [`Buffers::half`]: no corner traverses this directed edge.
const NO_TRAVERSAL: u32 = u32::MAX;
/// [`Buffers::first`]: the vertex is an end of a directed edge traversed
/// twice (a non-manifold or inconsistently oriented edge). Below every
/// corner key (`corner + 1`), so the minimum keeps it.
const NOT_MANIFOLD: u32 = 0;
/// [`Buffers::first`] flag: the vertex's rows are built unordered; the low
/// 16 bits are then a cursor into its VF row.
const UNORDERED: u32 = 1 << 31;
// Corner indices and VF row positions fit 16 bits (the gathered corners,
// the cursor, the packed VF counts), and so do the VE counts (`2 * edges`).
const _: () = assert!(3 * MAX_LOCAL_FACES < 1 << 16 && 2 * MAX_LOCAL_EDGES < 1 << 16);

/// The corner after corner `k` in its face.
#[inline(always)]
fn face_next(k: u32) -> u32 {
    if k % 3 == 2 { k - 2 } else { k + 1 }
}

/// The corner before corner `k` in its face.
#[inline(always)]
fn face_prev(k: u32) -> u32 {
    if k % 3 == 0 { k + 2 } else { k - 1 }
}

/// VE, VF or VV (the one `query` names) of the owned vertices, in
/// rotational order where the vertex is manifold (its faces form one fan,
/// open or closed, consistently oriented); otherwise sorted by local index.
///
/// One face-parallel pass builds the VF counts, each vertex's lowest
/// corner and the half-edge table (and FV for VV), and marks both ends of
/// every directed edge traversed twice; an EV pass counts VE (for VV and
/// VE). A thread per vertex then walks its fan
/// through the table from the lowest corner and writes the row. Only when
/// some vertex of the patch is not manifold are corners gathered per
/// vertex (a scatter) for unordered rows. Corner indices fit 16 bits
/// because patches hold at most [`MAX_LOCAL_FACES`] local faces (the
/// patcher refuses more).
#[inline(always)]
fn vertex_relations<B: Block>(block: &B, info: &PatchInfo, buf: &Buffers, query: Query) {
    let (nv, ne, nf) = (info.num_vertices, info.num_edges, info.num_faces);
    debug_assert!(nf <= MAX_LOCAL_FACES && ne <= MAX_LOCAL_EDGES);
    let rows = buf.rows;
    // One thread per face: the VF counts, the lowest corner of each
    // vertex and the half-edge table (directed edge -> the corner
    // traversing it), and for VV FV = FE·EV; then one thread per EV entry:
    // the VE counts (VE = EVᵀ is never scattered: fans give its rows
    // directly).
    block.for_each(nf, |f| {
        let h = [0, 1, 2].map(|c| buf.fe.get(3 * f + c));
        let tail = h.map(|e| buf.tail(e) as u32);
        // All three records first: their results are awaited together.
        let recorded = [0u32, 1, 2].map(|c| buf.record(block, h[c as usize] as u32, 3 * f + c));
        for c in 0..3 {
            let k = 3 * f + c as u32;
            if query == Query::VV {
                buf.fv.set(k, tail[c] as u16);
            }
            block.shared_fetch_add(rows, tail[c], 1);
            block.shared_min(buf.first, tail[c], k + 1);
            if !recorded[c] {
                block.shared_min(buf.first, tail[c], NOT_MANIFOLD);
                block.shared_min(buf.first, tail[(c + 1) % 3], NOT_MANIFOLD);
            }
        }
    });
    if query != Query::VF {
        block.for_each(2 * ne, |i| {
            block.shared_fetch_add(rows, buf.ev.get(i) as u32, 1 << 16);
        });
    }
    block.sync();
    // One inclusive scan of the packed counts (VF low, VE high 16 bits;
    // the totals 3·nf and 2·ne stay below 2^16 by the local limits).
    // Its barriers also publish the half-edge table and the first corners.
    block.scan(rows, nv, buf.scratch, true);
    let mut unordered = false;
    block.for_each(info.owned_vertices, |v| {
        if !rotational_order(buf, v, query) {
            buf.first.set(v, UNORDERED | buf.vf_row(v).1);
            unordered = true;
        }
    });
    if !block.sync_any(unordered) {
        return;
    }
    // Gather the corners of the unordered vertices into their VF row
    // slots of `corners`, from the row ends downwards.
    block.for_each(3 * nf, |k| {
        let v = buf.tail(buf.fe.get(k)) as u32;
        if buf.first.get(v) & UNORDERED != 0 {
            let pos = (block.shared_fetch_add(buf.first, v, u32::MAX) & 0xffff) - 1;
            buf.corners.set(pos, k as u16);
        }
    });
    block.sync();
    block.for_each(info.owned_vertices, |v| {
        if buf.first.get(v) & UNORDERED != 0 {
            unordered_vertex_row(buf, v, query);
        }
    });
    block.sync();
}

/// The row of non-manifold vertex `v` for `query`, sorted by local index,
/// from its corners (gathered in `corners` at its VF row): VF its faces,
/// VE the distinct edges out of and into `v`, VV their other ends.
#[inline(always)]
fn unordered_vertex_row(buf: &Buffers, v: u32, query: Query) {
    let out = buf.out;
    let (fb, fe) = buf.vf_row(v);
    let (begin, end) = if query == Query::VF {
        (fb, fe)
    } else {
        buf.ve_row(v)
    };
    let mut n = begin;
    for i in fb..fe {
        let k = buf.corners.get(i) as u32;
        let (next, prev) = (face_next(k), face_prev(k));
        let found = match query {
            Query::VF => [(k / 3) as u16, (k / 3) as u16],
            Query::VE => [buf.fe.get(k) >> 1, buf.fe.get(prev) >> 1],
            _ => [buf.fv.get(next), buf.fv.get(prev)],
        };
        for x in found {
            if n < end && (query == Query::VF || !(begin..n).any(|j| out.get(j) == x)) {
                out.set(n, x);
                n += 1;
            }
            if query == Query::VF {
                break;
            }
        }
    }
    insertion_sort(out, begin, end);
}

/// Writes the row of vertex `v` that `query` (VV, VE or VF) reads in
/// counter-clockwise order, walking the fan through the half-edge table
/// in O(valence): forwards from the vertex's lowest corner (the corner
/// after `k` around `v` traverses the reverse of `k`'s incoming edge) and,
/// when that reaches an open end, backwards for the corners before it; an
/// open fan's row starts at its first corner, a closed fan's at its lowest.
/// Returns false when `v` is not manifold (marked, several fans, or a
/// count that disagrees); the row is then left partly written.
///
/// Where `v` is not marked, no directed edge at it is traversed twice, so
/// the table is exact there and the step is injective: a walk that covers
/// as many corners as `v` has covers its one fan.
#[inline(always)]
fn rotational_order(buf: &Buffers, v: u32, query: Query) -> bool {
    let (fb, fe) = buf.vf_row(v);
    let (eb, ee) = buf.ve_row(v);
    let n = fe - fb;
    let key = buf.first.get(v);
    if n == 0 || key == NOT_MANIFOLD {
        return n == 0 && eb == ee;
    }
    let start = key - 1;
    // The row: one entry per corner, and for VV / VE one more at the end
    // of an open fan (its last edge / vertex). VF skips the VE counts.
    let (begin, len) = match query {
        Query::VF => (fb, n),
        _ => (eb, ee - eb),
    };
    if len != n && len != n + 1 {
        return false;
    }
    let entry = |k: u32| match query {
        Query::VV => buf.fv.get(face_next(k)),
        Query::VE => buf.fe.get(k) >> 1,
        _ => (k / 3) as u16,
    };
    // Forwards from the lowest corner.
    let mut k = start;
    let mut p = 0;
    loop {
        buf.out.set(begin + p, entry(k));
        p += 1;
        match buf.traversal(buf.fe.get(face_prev(k)) as u32 ^ 1) {
            Some(t) if t == start => return p == n && len == n,
            Some(_) if p == n => return false,
            Some(t) => k = t,
            None => break,
        }
    }
    // An open fan whose last corner is `k`: VV / VE end with its last
    // vertex / edge; the `n - p` corners before `start` go first.
    if query != Query::VF && len != n + 1 {
        return false;
    }
    match query {
        Query::VV => buf.out.set(begin + p, buf.fv.get(face_prev(k))),
        Query::VE => buf.out.set(begin + p, buf.fe.get(face_prev(k)) >> 1),
        _ => {}
    }
    let before = n - p;
    for i in (0..p + len - n).rev() {
        buf.out.set(begin + before + i, buf.out.get(begin + i));
    }
    let mut k = start;
    for i in (0..before).rev() {
        // The corner before `k` around `v` follows, in its face, the
        // traversal of `k`'s outgoing edge reversed.
        match buf.traversal(buf.fe.get(k) as u32 ^ 1) {
            Some(t) => k = face_next(t),
            None => return false,
        }
        buf.out.set(begin + i, entry(k));
    }
    // `n` distinct corners on one path: the fan's first corner is `k`.
    true
}

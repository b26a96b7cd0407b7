//! The cavity operator (dynamic paper, sections 3 and 5.2): cavities are
//! declared from seeds with a template, the template's deleted
//! neighbourhood is marked by propagating cavity ids, conflicting cavities
//! are resolved with Blelloch et al.'s greedy maximal independent set, and
//! the surviving cavities are filled in by the user through [`FillIn`].
//!
//! Two cavities conflict when their closures (deleted elements with their
//! vertices, which include the cavity's boundary vertices) share a vertex.
//! This is stricter than sharing a deleted element: fill-ins then never
//! meet, and two fill-ins cannot both create the same edge between boundary
//! vertices. The conflict graph is kept implicit: each vertex connects the
//! cavities whose closure holds it.

use crate::block::{Block, Shared, SharedArena};
use crate::layout::Kind;

use super::layout::Capacity;
use super::patch::{DynMesh, PatchCopy};

/// No cavity.
pub const NONE: u32 = u32::MAX;

/// Cavity states.
pub mod state {
    /// Still competing for the independent set.
    pub const UNDECIDED: u16 = 0;
    /// In the independent set.
    pub const WON: u16 = 1;
    /// Lost to a conflicting cavity, or could not own its closure.
    pub const LOST: u16 = 2;
    /// Filled in.
    pub const FILLED: u16 = 3;
    /// The fill-in declined (its own validity check failed).
    pub const DECLINED: u16 = 4;
    /// No free slots left in the patch for its new elements.
    pub const NO_ROOM: u16 = 5;
}

/// The deleted neighbourhood of a seed (fig. 4). Deleting an element also
/// deletes every element incident to it from above (edges and faces of a
/// deleted vertex, faces of a deleted edge).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Template {
    /// Seed edge; deletes the edge and its faces (edge flip, edge split,
    /// edge delete).
    EdgeFaces,
    /// Seed edge; deletes the edge, both its vertices and their stars (edge
    /// collapse).
    EdgeStar,
    /// Seed vertex; deletes the vertex and its star (vertex delete, vertex
    /// split).
    VertexStar,
    /// Seed face; deletes the face (face split 1 to 3, face delete).
    Face,
    /// User-defined: seeds of the given kind, and the elements
    /// [`CavityApp::deleted`] names (with what lies on them from above).
    Custom(Kind),
}

impl Template {
    /// Kind of the seed elements.
    #[inline(always)]
    pub fn seed_kind(self) -> Kind {
        match self {
            Template::EdgeFaces | Template::EdgeStar => Kind::Edge,
            Template::VertexStar => Kind::Vertex,
            Template::Face => Kind::Face,
            Template::Custom(kind) => kind,
        }
    }

    /// Whether the template may delete vertices.
    #[inline(always)]
    pub fn deletes_vertices(self) -> bool {
        matches!(
            self,
            Template::EdgeStar | Template::VertexStar | Template::Custom(_)
        )
    }

    /// Calls `delete(kind, local)` for the elements the cavity of `seed`
    /// deletes directly (what lies on them is deleted with them): the seed
    /// edge, the seed edge and its vertices, the seed vertex or the seed
    /// face; for [`Template::Custom`] the seed itself.
    #[inline(always)]
    pub fn deleted(self, copy: &PatchCopy, seed: u32, mut delete: impl FnMut(Kind, u32)) {
        delete(self.seed_kind(), seed);
        if self == Template::EdgeStar {
            for v in copy.edge_vertices(seed) {
                delete(Kind::Vertex, v);
            }
        }
    }
}

/// A dynamic application: which seeds get a cavity and how a cavity is
/// filled in. Both are called by one thread per seed / cavity.
pub trait CavityApp {
    /// The template of every cavity.
    const TEMPLATE: Template;
    /// Most vertices, edges and faces one fill-in adds.
    const MAX_NEW: [u32; 3];
    /// Whether a fill-in may join two vertices of the cavity's boundary by
    /// a new edge (an edge flip, a fan re-triangulation). Two such
    /// cavities touching at two boundary vertices could create the same
    /// edge, so cavities conflict when their closures share a vertex. An
    /// application whose fill-ins only join boundary vertices to new
    /// vertices (edge split, face split, edge collapse) sets it to false:
    /// its cavities conflict only when they delete a common element.
    /// Defaults to true.
    const JOINS_BOUNDARY: bool = true;
    /// Whether the application reads stored valences of vertices its patch
    /// does not own (`layout::VALENCE_ATTR`): the host stores them at the
    /// start of every sweep, so that a sweep that fills nothing decided
    /// on current ones. Defaults to false.
    const READS_VALENCES: bool = false;
    /// Most vertices, edges and faces the fill-in of a cavity with
    /// `boundary` boundary half-edges adds (reserved when the fill-in adds
    /// its first element; at most [`CavityApp::MAX_NEW`]). Defaults to
    /// `MAX_NEW`.
    fn max_new(&self, boundary: u32) -> [u32; 3] {
        let _ = boundary;
        Self::MAX_NEW
    }
    /// Whether owned, active seed `seed` (a local index of the template's
    /// seed kind) gets a cavity. Reads the patch through `ctx`.
    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, seed: u32) -> bool;
    /// Whether [`CavityApp::screen`] is consulted. Defaults to false.
    const SCREENS: bool = false;
    /// A cheap test that `seed` must pass before [`CavityApp::create`] runs
    /// on it. Wherever it fails, `create` must return false and do nothing
    /// else (no [`Ctx::defer`]): with the screen, `create` does not run
    /// there at all. With
    /// [`CavityApp::SCREENS`], [`create`] first gathers the seeds that pass
    /// it and then runs `create` on those, one thread each, so that the
    /// costly tests of a few seeds (the neighbourhood of each short edge of
    /// a collapse) run side by side instead of diverging in warps whose
    /// other threads' seeds failed at once. Defaults to true.
    fn screen<B: Block>(&self, ctx: &Ctx<'_, B>, seed: u32) -> bool {
        let _ = (ctx, seed);
        true
    }
    /// Calls `delete(kind, local)` for every element the cavity of `seed`
    /// deletes directly; deleting an element also deletes what lies on it
    /// (the edges and faces of a vertex, the faces of an edge). Any active
    /// element of the patch's working copy may be named, owned or in the
    /// ribbon; the deleted faces must leave a hole the fill-in can close.
    /// Called twice per cavity and pass (marking and verification), so it
    /// must name the same elements each time. Defaults to the template's
    /// neighbourhood ([`Template::deleted`]); override it for
    /// [`Template::Custom`] (user-defined cavities, section 3).
    fn deleted<B: Block>(&self, ctx: &Ctx<'_, B>, seed: u32, delete: impl FnMut(Kind, u32)) {
        Self::TEMPLATE.deleted(ctx.copy, seed, delete);
    }
    /// The 16-bit priority of the cavity of `seed` in the conflict
    /// resolution: of two conflicting cavities the smaller priority goes
    /// first. Defaults to `random`, a random 16-bit value drawn anew every
    /// pass (the dynamic paper's random priorities); an application may
    /// order its cavities by cost instead (as the cost-prioritized conflict
    /// detection of the parallel tet edge collapse paper does), e.g. the
    /// longest edge first for edge splits, which keeps a long edge from
    /// losing again and again while its neighbours split around it.
    fn priority<B: Block>(&self, ctx: &Ctx<'_, B>, seed: u32, random: u32) -> u32 {
        let _ = (ctx, seed);
        random
    }
    /// Fills in a cavity; returning false leaves the cavity's elements
    /// untouched (the elements added so far are discarded).
    fn fill<B: Block>(&self, fill: &mut FillIn<'_, B>) -> bool;
}

/// Shared-memory windows of the cavity stage.
#[derive(Clone, Copy)]
pub struct Work {
    /// Per element kind: key of the cavity that claims it, or [`NONE`].
    pub cav: [Shared<u32>; 3],
    /// Seed of each cavity.
    pub seeds: Shared<u16>,
    /// Key of each cavity ([`key`]).
    pub keys: Shared<u32>,
    /// State of each cavity ([`state`]).
    pub state: Shared<u16>,
    /// Per cavity: lost a vertex in this round of the independent set; then
    /// reused for the number and offset of its faces.
    pub scratch: Shared<u32>,
    /// Per vertex: smallest key of an undecided cavity holding it.
    pub vmark: Shared<u32>,
    /// Per vertex bitmask: held by a cavity in the independent set.
    pub taken: Shared<u32>,
    /// Per vertex: its position, three `f32` bits (read once per
    /// processing by [`cache_positions`], kept up to date by
    /// [`FillIn::add_vertex`]).
    pub positions: Shared<u32>,
    /// Per edge: number of incident faces.
    pub ef_count: Shared<u32>,
    /// Per edge: its first two faces.
    pub ef: Shared<u16>,
    /// Faces of the filled cavities, grouped by cavity.
    pub faces: Shared<u16>,
    /// Boundary half-edges of the filled cavities, three slots per face.
    pub boundary: Shared<u32>,
    /// Vertex → incident edges: after [`build_vertex_edges`], entry `v` is the
    /// end of row `v` (which starts at entry `v - 1`, or 0).
    pub ve_offsets: Shared<u32>,
    /// Vertex → incident edges: the edges.
    pub ve: Shared<u16>,
    /// Small counters (see the `CTL_*` constants).
    pub ctl: Shared<u32>,
    /// Block-scan scratch.
    pub scan: Shared<u32>,
    /// Per slot of the largest kind: scan input of the free lists; then,
    /// in [`create`], the seeds that passed [`CavityApp::screen`].
    pub flags: Shared<u32>,
    /// Per kind: free slots (inactive when the patch was loaded), ascending.
    pub free: [Shared<u16>; 3],
    /// Bitmask over seeds whose fill-in declined in this sweep (not
    /// registered again before the next sweep; see
    /// [`super::update::load_declined`]).
    pub declined: Shared<u32>,
    /// Bitmask over seeds whose cavity was dropped in this processing for
    /// want of a neighbour (not locked, or no room to expand): not
    /// registered again in this processing, so that the cavities they
    /// overlapped get their turn in the next pass; retried in a later
    /// round.
    pub waiting: Shared<u32>,
    /// Per kind, bitmask over the slots a fill-in may take once they are
    /// free: no other patch names them ([`mark_fresh`]).
    pub fresh: [Shared<u32>; 3],
}

/// `ctl` entry: number of cavities.
pub const CTL_CAVITIES: u32 = 0;
/// `ctl` entry: a flag raised by any thread.
pub const CTL_FLAG: u32 = 1;
/// `ctl` entries 2..5: next free-list position per kind.
pub const CTL_CURSOR: u32 = 2;
/// `ctl` entries 5..8: free-list length per kind.
pub const CTL_FREE: u32 = 5;
/// `ctl` entry: the patch id, or [`NONE`] when the block has no patch.
pub const CTL_PATCH: u32 = 8;
/// `ctl` entry: the outcome of the lock attempts (1 = go on).
pub const CTL_OK: u32 = 9;
/// `ctl` entry: something was changed (commit needed).
pub const CTL_CHANGED: u32 = 10;
/// `ctl` entry: cavities filled.
pub const CTL_FILLED: u32 = 11;
/// `ctl` entry: capacity ran out.
pub const CTL_NO_ROOM: u32 = 12;
/// `ctl` entry: a fatal capacity (stash, hash table) was exceeded.
pub const CTL_FATAL: u32 = 13;
/// `ctl` entries 14..16: patch-stash bits of neighbours to migrate from.
pub const CTL_NEED: u32 = 14;
/// `ctl` entries 16..18: patch-stash bits of neighbours locked.
pub const CTL_LOCKED: u32 = 16;
/// `ctl` entry: a predicate deferred a seed on a view that may be stale
/// (see [`Ctx::defer`]).
pub const CTL_DEFERRED: u32 = 18;
/// `ctl` entry: a cavity of this processing waits for a neighbour (the
/// patch must be processed again).
pub const CTL_WAITING: u32 = 19;
/// `ctl` entries 20..22: patch-stash bits of the neighbours this processing
/// took elements from (their `DIRTY` flag is this block's doing, so it may
/// lock them again for a further expansion step).
pub const CTL_TAKEN: u32 = 20;
/// `ctl` entry: number of seeds that passed [`CavityApp::screen`].
pub const CTL_SCREENED: u32 = 22;
/// Entries of `ctl`.
pub const CTL_LEN: u32 = 23;

impl Work {
    /// Windows for capacity `cap` and block size `threads`.
    #[inline(always)]
    pub fn alloc(arena: &mut SharedArena, cap: &Capacity, seed: Kind, threads: u32) -> Self {
        Self::sized(arena, cap, seed, threads, true)
    }

    /// Windows of the relations alone (positions, EF, VE and the scan
    /// scratch) for kernels that only read a patch, such as smoothing: the
    /// cavity windows (`ctl` among them, so no [`Ctx::defer`]) are empty,
    /// so that these kernels need about two fifths of the shared memory of
    /// an update (43 KB against 108 KB at 512 faces per patch and the
    /// remeshing's capacity factor of 1.25 on a 0.9 M-face scan) and more
    /// of their blocks share an SM.
    #[inline(always)]
    pub fn alloc_relations(arena: &mut SharedArena, cap: &Capacity, threads: u32) -> Self {
        Self::sized(arena, cap, Kind::Vertex, threads, false)
    }

    /// The windows, the cavity ones empty unless `cavities`.
    #[inline(always)]
    fn sized(
        arena: &mut SharedArena,
        cap: &Capacity,
        seed: Kind,
        threads: u32,
        cavities: bool,
    ) -> Self {
        let c = |len: u32| if cavities { len } else { 0 };
        let max_cavities = c(cap.of(seed));
        Work {
            cav: [
                arena.alloc(c(cap.vertices)),
                arena.alloc(c(cap.edges)),
                arena.alloc(c(cap.faces)),
            ],
            seeds: arena.alloc(max_cavities),
            keys: arena.alloc(max_cavities),
            state: arena.alloc(max_cavities),
            scratch: arena.alloc(c(max_cavities + 1)),
            vmark: arena.alloc(c(cap.vertices)),
            taken: arena.alloc(c(cap.vertices / 32)),
            positions: arena.alloc(3 * cap.vertices),
            ef_count: arena.alloc(cap.edges),
            ef: arena.alloc(2 * cap.edges),
            faces: arena.alloc(c(cap.faces)),
            boundary: arena.alloc(c(3 * cap.faces)),
            ve_offsets: arena.alloc(cap.vertices + 1),
            ve: arena.alloc(2 * cap.edges),
            ctl: arena.alloc(c(CTL_LEN)),
            scan: arena.alloc(crate::block::scan_scratch_len(threads)),
            flags: arena.alloc(c(cap.vertices.max(cap.edges).max(cap.faces) + 1)),
            free: [
                arena.alloc(c(cap.vertices)),
                arena.alloc(c(cap.edges)),
                arena.alloc(c(cap.faces)),
            ],
            declined: arena.alloc(max_cavities / 32),
            waiting: arena.alloc(max_cavities / 32),
            fresh: [
                arena.alloc(c(cap.mask_words(Kind::Vertex))),
                arena.alloc(c(cap.mask_words(Kind::Edge))),
                arena.alloc(c(cap.mask_words(Kind::Face))),
            ],
        }
    }

    /// Number of cavities.
    #[inline(always)]
    pub fn cavities(&self) -> u32 {
        self.ctl.get(CTL_CAVITIES)
    }
}

/// Key of cavity `c` (the low 16 bits) with priority `prio` (the high 16
/// bits; smaller keys win).
#[inline(always)]
pub fn key(prio: u32, c: u32) -> u32 {
    (prio << 16) | c
}

/// Random 16-bit priority of a seed, from its patch, local index and the
/// round's salt.
#[inline(always)]
pub fn priority(p: u32, seed: u32, salt: u32) -> u32 {
    let mut x = p.wrapping_mul(0x9e37_79b9) ^ seed.wrapping_mul(0x85eb_ca6b) ^ salt;
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x & 0xffff
}

/// Read access to the patch for predicates and fill-ins: the working copy,
/// its edge-face relation and vertex attributes.
pub struct Ctx<'a, B: Block> {
    /// The block.
    pub block: &'a B,
    /// The global mesh.
    pub mesh: &'a DynMesh,
    /// The working copy.
    pub copy: &'a PatchCopy,
    /// Cavity windows (only the relation windows in kernels that use
    /// [`Work::alloc_relations`]).
    pub work: &'a Work,
}

impl<'a, B: Block> Ctx<'a, B> {
    /// The view of `block` on its working copy `copy` of `mesh`.
    #[inline(always)]
    pub fn new(block: &'a B, mesh: &'a DynMesh, copy: &'a PatchCopy, work: &'a Work) -> Self {
        Ctx {
            block,
            mesh,
            copy,
            work,
        }
    }

    /// The two vertices of edge `e`.
    #[inline(always)]
    pub fn edge_vertices(&self, e: u32) -> [u32; 2] {
        self.copy.edge_vertices(e)
    }

    /// The faces of edge `e`: their number and the first two (EF, complete
    /// for owned edges).
    #[inline(always)]
    pub fn edge_faces(&self, e: u32) -> (u32, [u32; 2]) {
        (
            self.work.ef_count.get(e),
            [
                self.work.ef.get(2 * e) as u32,
                self.work.ef.get(2 * e + 1) as u32,
            ],
        )
    }

    /// The three vertices of face `f` in its orientation.
    #[inline(always)]
    pub fn face_vertices(&self, f: u32) -> [u32; 3] {
        self.copy.face_vertices(f)
    }

    /// The vertex of face `f` not on edge `e` (an edge of `f`).
    #[inline(always)]
    pub fn opposite_vertex(&self, f: u32, e: u32) -> u32 {
        let [a, b] = self.edge_vertices(e);
        let v = self.face_vertices(f);
        if v[0] != a && v[0] != b {
            v[0]
        } else if v[1] != a && v[1] != b {
            v[1]
        } else {
            v[2]
        }
    }

    /// Records that a predicate turned a seed down on information that
    /// another patch may change (a ribbon copy): the patch is visited again
    /// in the next sweep even when it changes nothing now.
    #[inline(always)]
    pub fn defer(&self) {
        self.block.shared_fetch_or(self.work.ctl, CTL_DEFERRED, 1);
    }

    /// Whether face `f` traverses its edge `e` in `e`'s EV order.
    #[inline(always)]
    pub fn traverses_forward(&self, f: u32, e: u32) -> bool {
        (0..3).any(|i| self.copy.face_edge(f, i) == (e, false))
    }

    /// Whether local `l` of `kind` is owned by the patch.
    #[inline(always)]
    pub fn is_owned(&self, kind: Kind, l: u32) -> bool {
        self.copy.is_owned(kind, l)
    }

    /// Attribute `i` of local vertex `v` (`i < cap.vertex_attrs`; 0..3 are
    /// the position): read from the owner's slot, or for a not-owned vertex
    /// from the slot its ribbon entry names (attributes a dynamic kernel
    /// changes are only changed by the owner, and moved on migration).
    #[inline(always)]
    pub fn vertex_attr(&self, v: u32, i: u32) -> f32 {
        let (q, l) = self
            .copy
            .owner(self.block, Kind::Vertex, v)
            .unwrap_or((self.copy.p, v));
        let a = self.copy.cap.vertex_attrs;
        f32::from_bits(
            self.mesh
                .vertex_attrs
                .load((q * self.copy.cap.vertices + l) * a + i),
        )
    }

    /// The position of local vertex `v` (from [`Work::positions`]).
    #[inline(always)]
    pub fn position(&self, v: u32) -> [f32; 3] {
        let p = self.work.positions;
        [0, 1, 2].map(|i| f32::from_bits(p.get(3 * v + i)))
    }

    /// The active edges at vertex `v` as of the pass's relations (VE row;
    /// complete when `v` is owned).
    #[inline(always)]
    pub fn vertex_edges(&self, v: u32) -> impl Iterator<Item = u32> + '_ {
        let w = &self.work;
        let start = if v == 0 { 0 } else { w.ve_offsets.get(v - 1) };
        (start..w.ve_offsets.get(v))
            .map(move |i| w.ve.get(i) as u32)
            .filter(move |&e| self.copy.is_active(Kind::Edge, e))
    }

    /// Whether an active edge joins `a` and `b` (complete when `a` is owned).
    #[inline(always)]
    pub fn has_edge(&self, a: u32, b: u32) -> bool {
        self.vertex_edges(a).any(|e| {
            let [x, y] = self.edge_vertices(e);
            x == b || y == b
        })
    }
}

/// Reads the positions of the working copy's active vertices into
/// [`Work::positions`] (a ribbon vertex's from its owner), so that
/// predicates and fill-ins read shared memory instead of resolving the
/// owner and loading global memory at every use. Call after loading the
/// patch and after every expansion (which adds local vertices); the
/// positions a processing sees do not change under it (another block
/// moves only the vertices it deletes, and deleting one of ours needs our
/// lock).
#[inline(always)]
pub fn cache_positions<B: Block>(block: &B, mesh: &DynMesh, copy: &PatchCopy, work: &Work) {
    let cap = copy.cap;
    block.for_each(copy.count(Kind::Vertex), |v| {
        if copy.is_active(Kind::Vertex, v) {
            let (q, l) = copy.owner(block, Kind::Vertex, v).unwrap_or((copy.p, v));
            let at = (q * cap.vertices + l) * cap.vertex_attrs;
            for i in 0..3 {
                work.positions
                    .set(3 * v + i, mesh.vertex_attrs.load(at + i));
            }
        }
    });
    block.sync();
}

/// Builds EF of the active faces: `ef_count[e]` faces per edge, the first
/// two of them at `ef[2e..2e + 2]`.
#[inline(always)]
pub fn build_edge_faces<B: Block>(
    block: &B,
    copy: &PatchCopy,
    ef_count: Shared<u32>,
    ef: Shared<u16>,
) {
    let ne = copy.count(Kind::Edge);
    let nf = copy.count(Kind::Face);
    block.for_each(ne, |e| ef_count.set(e, 0));
    block.sync();
    block.for_each(nf, |f| {
        if copy.is_active(Kind::Face, f) {
            for i in 0..3 {
                let (e, _) = copy.face_edge(f, i);
                let k = block.shared_fetch_add(ef_count, e, 1);
                if k < 2 {
                    ef.set(2 * e + k, f as u16);
                }
            }
        }
    });
    block.sync();
}

/// Builds the relations of the working copy that the cavity stage reads:
/// EF ([`build_edge_faces`] into `work.ef_count` and `work.ef`) and VE
/// ([`build_vertex_edges`]). Returns after a barrier.
#[inline(always)]
pub fn build_relations<B: Block>(block: &B, copy: &PatchCopy, work: &Work) {
    build_edge_faces(block, copy, work.ef_count, work.ef);
    build_vertex_edges(block, copy, work);
}

/// Builds vertex → incident active edges (a block-cooperative transpose of
/// EV: count, scan, scatter).
#[inline(always)]
pub fn build_vertex_edges<B: Block>(block: &B, copy: &PatchCopy, work: &Work) {
    let nv = copy.count(Kind::Vertex);
    let ne = copy.count(Kind::Edge);
    block.for_each(nv + 1, |v| work.ve_offsets.set(v, 0));
    block.sync();
    block.for_each(ne, |e| {
        if copy.is_active(Kind::Edge, e) {
            for v in copy.edge_vertices(e) {
                block.shared_fetch_add(work.ve_offsets, v, 1);
            }
        }
    });
    block.sync();
    block.scan(work.ve_offsets, nv + 1, work.scan, false);
    block.sync();
    block.for_each(ne, |e| {
        if copy.is_active(Kind::Edge, e) {
            for v in copy.edge_vertices(e) {
                // Each placement advances the row's start: afterwards
                // `ve_offsets[v]` is the end of row `v` (the start of
                // `v + 1`), and row `v` begins at `ve_offsets[v - 1]`.
                let at = block.shared_fetch_add(work.ve_offsets, v, 1);
                work.ve.set(at, e as u16);
            }
        }
    });
    block.sync();
}

/// Marks the slots a fill-in of this processing may take once they are
/// free (`Work::fresh`): the slots free at load, and those of owned edges
/// and faces with a vertex two faces away from every element the patch
/// does not own. No other patch names those. (A vertex may be named
/// through an edge without faces that another patch owns and this one
/// does not hold, so vertex slots wait for the cleanup.) A patch names
/// elements of faces near what it owns: the faces incident to its own
/// elements or sharing an edge with its faces (the static ribbon,
/// `cavity::patched`; a dynamic patch keeps only the former,
/// [`super::cleanup::mark_needed`]), with their closure. Such a face
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
/// (`named`, [`super::layout::flag::NAMED`]), only the slots free at load
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

/// Registers the cavities: `app.create` on every owned, active seed that
/// neither declined in this sweep nor waits for a neighbour (and passes
/// [`CavityApp::screen`] when the application screens: those seeds are
/// gathered in `work.flags`, free once the free lists are built, in
/// ascending order on the host's block of one thread, so that the
/// cavities are numbered as without the screen there).
#[inline(always)]
pub fn create<B: Block, A: CavityApp>(block: &B, ctx: &Ctx<'_, B>, app: &A, salt: u32) {
    let copy = ctx.copy;
    let work = ctx.work;
    let kind = A::TEMPLATE.seed_kind();
    if block.thread_idx() == 0 {
        work.ctl.set(CTL_CAVITIES, 0);
        work.ctl.set(CTL_SCREENED, 0);
    }
    block.sync();
    let eligible = |s: u32| {
        let skip = work.declined.bit(s) || work.waiting.bit(s);
        copy.is_owned(kind, s) && copy.is_active(kind, s) && !skip
    };
    let register = |s: u32| {
        if app.create(ctx, s) {
            let c = block.shared_fetch_add(work.ctl, CTL_CAVITIES, 1);
            work.seeds.set(c, s as u16);
            let random = priority(copy.p, s, salt);
            work.keys
                .set(c, key(app.priority(ctx, s, random) & 0xffff, c));
        }
    };
    if A::SCREENS {
        block.for_each(copy.count(kind), |s| {
            if eligible(s) && app.screen(ctx, s) {
                let i = block.shared_fetch_add(work.ctl, CTL_SCREENED, 1);
                work.flags.set(i, s);
            }
        });
        block.sync();
        block.for_each(work.ctl.get(CTL_SCREENED), |i| register(work.flags.get(i)));
    } else {
        block.for_each(copy.count(kind), |s| {
            if eligible(s) {
                register(s);
            }
        });
    }
    block.sync();
}

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

/// A half-edge of the cavity boundary: local edge and direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HalfEdge {
    /// Local edge.
    pub edge: u32,
    /// Whether it runs against the edge's EV order.
    pub reversed: bool,
}

/// The fill-in of one cavity (section 5.2, "Cavity Fill-in"): the boundary
/// in order, the deleted (old) faces, and element creation. New elements
/// are owned by the patch; at most [`CavityApp::MAX_NEW`] of each kind.
pub struct FillIn<'a, B: Block> {
    /// The patch, its relations and attributes (old topology included:
    /// deleted elements stay readable during the fill-in).
    pub ctx: &'a Ctx<'a, B>,
    cavity: u32,
    faces: (u32, u32),
    boundary: (u32, u32),
    closed: bool,
    base: Option<[u32; 3]>,
    used: [u32; 3],
    limit: [u32; 3],
    no_room: bool,
}

impl<'a, B: Block> FillIn<'a, B> {
    /// The cavity's index in the patch.
    pub fn cavity(&self) -> u32 {
        self.cavity
    }

    /// The cavity's seed (local index of the template's seed kind).
    pub fn seed(&self) -> u32 {
        self.ctx.work.seeds.get(self.cavity) as u32
    }

    /// Number of boundary half-edges.
    pub fn boundary_len(&self) -> u32 {
        self.boundary.1 - self.boundary.0
    }

    /// Boundary half-edge `i`, in the order of the loop (counter-clockwise
    /// around the hole for consistently oriented input: the direction the
    /// deleted faces traversed it).
    pub fn boundary_edge(&self, i: u32) -> HalfEdge {
        let h = self.ctx.work.boundary.get(self.boundary.0 + i);
        HalfEdge {
            edge: h >> 1,
            reversed: h & 1 == 1,
        }
    }

    /// The vertex where boundary half-edge `i` starts.
    pub fn boundary_vertex(&self, i: u32) -> u32 {
        let h = self.boundary_edge(i);
        self.ctx.copy.edge_vertices(h.edge)[h.reversed as usize]
    }

    /// The vertex where boundary half-edge `i` ends (for an open chain,
    /// `boundary_end(boundary_len() - 1)` is the chain's last vertex).
    pub fn boundary_end(&self, i: u32) -> u32 {
        let h = self.boundary_edge(i);
        self.ctx.copy.edge_vertices(h.edge)[1 - h.reversed as usize]
    }

    /// Whether the boundary is one closed loop (the cavity is a disk away
    /// from the mesh boundary).
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// The cavity's deleted faces.
    pub fn deleted_faces(&self) -> impl Iterator<Item = u32> + '_ {
        (self.faces.0..self.faces.1).map(|i| self.ctx.work.faces.get(i) as u32)
    }

    /// Lowers the slots the fill-in reserves to `counts` (vertices, edges,
    /// faces) when it knows them before its first new element (as
    /// [`crate::operations::star_fill`] does): the cavities of a pass draw
    /// on one free list, so that a reservation of the worst case
    /// ([`CavityApp::max_new`]) leaves others out of room. Does nothing
    /// once an element was added.
    pub fn expect(&mut self, counts: [u32; 3]) {
        if self.base.is_none() {
            for k in 0..3 {
                self.limit[k] = self.limit[k].min(counts[k]);
            }
        }
    }

    /// Reserves the slots of every kind the fill-in may take
    /// ([`CavityApp::max_new`]), at its first new element: a fill-in that
    /// declines before adding anything leaves the free slots to the
    /// others. `None` (and `no_room`) when the patch is full.
    fn reserve(&mut self) -> Option<[u32; 3]> {
        if self.base.is_none() && !self.no_room {
            let mut base = [0u32; 3];
            for kind in Kind::ALL {
                let k = kind as usize;
                match take_slot(self.ctx.block, self.ctx.work, kind, self.limit[k]) {
                    Some(at) => base[k] = at,
                    None => {
                        self.no_room = true;
                        return None;
                    }
                }
            }
            self.base = Some(base);
        }
        self.base
    }

    /// The next reserved slot of `kind`; `None` past the reservation.
    fn slot(&mut self, kind: Kind) -> Option<u32> {
        let k = kind as usize;
        if self.used[k] >= self.limit[k] {
            return None;
        }
        let base = self.reserve()?;
        let l = self.ctx.work.free[k].get(base[k] + self.used[k]) as u32;
        self.used[k] += 1;
        let copy = self.ctx.copy;
        copy.set_bit(self.ctx.block, kind, true, l, true);
        copy.set_bit(self.ctx.block, kind, false, l, true);
        Some(l)
    }

    /// Adds a vertex with attribute values `attrs` (position first; the
    /// attributes not given are set to all-ones bits); returns its local
    /// index, or `None` past `MAX_NEW`.
    pub fn add_vertex(&mut self, attrs: &[f32]) -> Option<u32> {
        let v = self.slot(Kind::Vertex)?;
        let copy = self.ctx.copy;
        let a = copy.cap.vertex_attrs;
        for i in 0..a {
            let x = attrs.get(i as usize).map_or(u32::MAX, |x| x.to_bits());
            self.ctx
                .mesh
                .vertex_attrs
                .store((copy.p * copy.cap.vertices + v) * a + i, x);
            if i < 3 {
                self.ctx.work.positions.set(3 * v + i, x);
            }
        }
        Some(v)
    }

    /// Adds the edge `a`–`b`; returns its local index.
    pub fn add_edge(&mut self, a: u32, b: u32) -> Option<u32> {
        let e = self.slot(Kind::Edge)?;
        self.ctx.copy.ev.set(2 * e, a as u16);
        self.ctx.copy.ev.set(2 * e + 1, b as u16);
        Some(e)
    }

    /// Adds the face bounded by three half-edges in order (each ends where
    /// the next starts); returns its local index.
    pub fn add_face(&mut self, h: [HalfEdge; 3]) -> Option<u32> {
        let f = self.slot(Kind::Face)?;
        for (i, x) in h.iter().enumerate() {
            self.ctx
                .copy
                .fe
                .set(3 * f + i as u32, ((x.edge << 1) | x.reversed as u32) as u16);
        }
        Some(f)
    }

    /// The half-edge from `a` to `b` along edge `e`.
    pub fn half_edge(&self, e: u32, a: u32) -> HalfEdge {
        HalfEdge {
            edge: e,
            reversed: self.ctx.copy.edge_vertices(e)[0] != a,
        }
    }

    fn discard(&self) {
        let Some(base) = self.base else {
            return;
        };
        for kind in Kind::ALL {
            let k = kind as usize;
            for i in 0..self.used[k] {
                let l = self.ctx.work.free[k].get(base[k] + i) as u32;
                self.ctx.copy.set_bit(self.ctx.block, kind, true, l, false);
                self.ctx.copy.set_bit(self.ctx.block, kind, false, l, false);
            }
        }
    }
}

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

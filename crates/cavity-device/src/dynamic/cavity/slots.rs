//! The cavity stage's shared-memory layout: the [`Work`] windows and the
//! `CTL_*` entries of their `ctl` counters.

use crate::block::{Shared, SharedArena};
use crate::layout::Kind;

use super::super::layout::Capacity;
#[cfg(doc)]
use super::{
    CavityApp, Ctx, FillIn, NONE, build_vertex_edges, cache_positions, create, key, mark_fresh,
    state,
};

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
    /// [`crate::dynamic::update::load_declined`]).
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

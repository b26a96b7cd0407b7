//! Higher-order queries on the dynamic mesh: vertex rings beyond the
//! one-ring (RXMesh section 6.2), the k-ring and the rings a ball bounds
//! (its bilateral denoising, section 8.3).
//!
//! A ring grows hop by hop, a breadth-first search over VV. A patch answers
//! VV completely only for the vertices it owns, so once a ring leaves the
//! patch the block gathers the patches it needs: each hop, the threads post
//! the owner patches of their rings' frontier vertices (a shared minimum
//! over the patches not yet visited in the hop, which removes duplicates and
//! visits them in ascending order), and the whole block loads each such
//! patch in turn into one window, builds its VV there and lets every
//! thread extend its rings from the frontier vertices that patch owns. A
//! hop ends when no frontier vertex is left in a patch not yet visited; the
//! search ends after [`RingComputation::hops`] hops or when no ring grew.
//!
//! The rings live in global scratch (one region per block of the launch,
//! [`RingScratch`]), as owner slots ([`VertexSlot`]), in the order of the
//! search: by hop, then by the patch that answered, the frontier vertex and
//! its VV row, the same on every run and on both backends. A ring that
//! does not fit the scratch's capacity sets the status word, and the host
//! runs the launch again with more room. The kernel loops over the patches
//! (block `b` takes patches `b`, `b + grid`, ...), so that the scratch is
//! bounded by the grid and not by the mesh.
//!
//! A computation on the rings ([`RingComputation`], exported with
//! [`ring_kernels!`](crate::ring_kernels)) runs on every owned active
//! vertex once its ring is complete, as an [`ElementComputation`] runs on
//! its query's results. The k-ring query's export ([`ExportRing`]) is the
//! same search with every vertex admitted.
//!
//! [`ElementComputation`]: super::compute::ElementComputation

use crate::attribute::{Attr, Scalar};
use crate::block::{Block, Shared, SharedArena};
use crate::kernel::{Kernel, Launch, LaunchBounds, PlainData};
use crate::layout::Kind;
use crate::query::Query;

use super::compute::{FOR_EACH_BOUNDS, Needs, Windows, build_rows};
use super::global::GlobalU32;
use super::layout::{Capacity, POSITION, RawDynamicMesh, computation_writes};
use super::patch::{DynMesh, PatchCopy};

/// A vertex by its owner's slot: local vertex `l` owned by patch `p`,
/// packed as `p << b | l` with `b` the bits of a local vertex index
/// ([`Capacity::vertex_bits`]; the handle a ring lists; read its
/// attributes with [`Ring::get`]). It fits in 32 bits: the layout keeps
/// `patches × vertices` times the (at least four) attribute words of a
/// vertex below `2³²`. The order of the packed values is that
/// of `(p, l)`. Splitting it is a shift and a mask: a ring reads the
/// attributes of every vertex it lists, and a division by the capacity on
/// each read cost the denoising filter a fifth of its time.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct VertexSlot(pub u32);

impl VertexSlot {
    /// The slot of local vertex `l` of patch `p`.
    #[inline(always)]
    pub fn new(cap: &Capacity, (p, l): (u32, u32)) -> Self {
        VertexSlot(p << cap.vertex_bits() | l)
    }

    /// `(owner patch, local index there)`.
    #[inline(always)]
    pub fn split(self, cap: &Capacity) -> (u32, u32) {
        let bits = cap.vertex_bits();
        (self.0 >> bits, self.0 & ((1 << bits) - 1))
    }

    /// The vertex's index among the vertex slots of every patch slot, `p ×
    /// cap.vertices + l` (the numbering of the host's per-slot arrays).
    #[inline(always)]
    pub fn index(self, cap: &Capacity) -> u32 {
        let (p, l) = self.split(cap);
        p * cap.vertices + l
    }
}

/// A computation on every owned active vertex with its ring (the user's
/// half of the higher-order queries).
pub trait RingComputation: PlainData + Send + Sync + 'static {
    /// Resident blocks per multiprocessor the kernel leaves room for (as
    /// `ElementComputation::MIN_BLOCKS`).
    const MIN_BLOCKS: u32 = FOR_EACH_BOUNDS.min_blocks;

    /// The most hops: the ring holds the vertices at most this many edges
    /// away through admitted vertices (the k-ring for `k = hops()` when
    /// every vertex is admitted).
    fn hops(&self) -> u32;

    /// Whether `candidate`, a VV neighbour of a vertex of the ring, joins
    /// `ring` (and is expanded in the next hop); every vertex by default.
    /// It may be asked more than once for one candidate and must answer
    /// the same each time: decide on the center's and the candidate's
    /// positions and attributes (as RXMesh's denoising does: the vertices
    /// inside a ball around the center).
    #[inline(always)]
    fn admits<B: Block>(&self, _ring: &Ring<'_, B>, _candidate: VertexSlot) -> bool {
        true
    }

    /// The computation on one vertex with its complete ring.
    fn compute<B: Block>(&self, ring: &Ring<'_, B>);
}

/// One vertex's ring: its center and the vertices the search reached, with
/// the mesh's attributes.
pub struct Ring<'a, B: Block> {
    /// The ring belongs to one thread of the block.
    thread: core::marker::PhantomData<&'a B>,
    mesh: &'a DynMesh,
    center: VertexSlot,
    /// The ring's region of the scratch; entry 0 is the center.
    entries: GlobalU32,
    base: u32,
    /// Entries in use, the center included.
    used: u32,
}

impl<B: Block> Ring<'_, B> {
    /// The vertex whose ring this is.
    #[inline(always)]
    pub fn center(&self) -> VertexSlot {
        self.center
    }

    /// The number of vertices in the ring (the center excluded).
    #[inline(always)]
    pub fn len(&self) -> u32 {
        self.used - 1
    }

    /// Whether the ring is empty (an isolated vertex, or none admitted).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.used <= 1
    }

    /// Ring vertex `i` (`i < len()`) in the order of the search (by hop).
    #[inline(always)]
    pub fn neighbor(&self, i: u32) -> VertexSlot {
        // SAFETY: only this thread writes or reads its ring's region.
        VertexSlot(unsafe { self.entries.load_unshared(self.base + 1 + i) })
    }

    /// The ring's vertices in the order of the search.
    #[inline(always)]
    pub fn neighbors(&self) -> impl Iterator<Item = VertexSlot> + '_ {
        (0..self.len()).map(move |i| self.neighbor(i))
    }

    /// The value of vertex attribute `attr` of vertex `v` (defaults unless
    /// `attr` is a vertex attribute the mesh holds).
    #[inline(always)]
    pub fn get<T: Scalar, const N: usize>(&self, attr: &Attr<T, N>, v: VertexSlot) -> [T; N] {
        if attr.kind() != Kind::Vertex {
            return [T::default(); N];
        }
        self.mesh
            .load_attr_as(Kind::Vertex, attr, v.split(&self.mesh.cap))
    }

    /// The position of vertex `v`.
    #[inline(always)]
    pub fn position(&self, v: VertexSlot) -> [f32; 3] {
        self.get(&POSITION, v)
    }

    /// Sets the center's value of vertex attribute `attr` when a
    /// computation may write it ([`computation_writes`]: a user attribute
    /// or the position); write an attribute the computation does not
    /// read.
    #[inline(always)]
    pub fn set<T: Scalar, const N: usize>(&self, attr: &Attr<T, N>, value: [T; N]) {
        if attr.kind() == Kind::Vertex && computation_writes(Kind::Vertex, attr) {
            let at = self.center.split(&self.mesh.cap);
            self.mesh.store_attr_as(Kind::Vertex, attr, at, value);
        }
    }
}

/// The rings' global scratch (a kernel parameter).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(
    not(target_arch = "nvptx64"),
    derive(bytemuck::Pod, bytemuck::Zeroable)
)]
pub struct RingScratch {
    /// `grid × cap.vertices × capacity` words: block `b`'s ring of local
    /// vertex `l` at `(b × cap.vertices + l) × capacity`.
    pub entries: u64,
    /// One word, the launch's status ([`ring_status`]: 0 when all is well).
    pub overflow: u64,
    /// Entries per ring, the center included (at least 1).
    pub capacity: u32,
    /// Padding.
    pub pad: u32,
}

/// What a ring launch's status word says (0: every ring fit).
pub mod ring_status {
    /// A ring did not fit the capacity: run again with more room.
    pub const OVERFLOW: u32 = 1;
    /// A ring reached a ribbon vertex whose owner its patch does not name
    /// (a mesh `DynamicMesh::validate` rejects); the vertex was left out.
    pub const NO_OWNER: u32 = 2;
}

/// The words of the rings' scratch for a launch of `grid` blocks.
pub fn scratch_words(cap: &Capacity, grid: u32, capacity: u32) -> u64 {
    u64::from(grid) * u64::from(cap.vertices) * u64::from(capacity)
}

/// Shared-memory windows of the search: the patch window with its VV
/// rows, and per local vertex of the block's patch the ring's hop bounds.
struct RingWindows {
    windows: Windows,
    /// Start of the previous hop's entries.
    prev: Shared<u32>,
    /// Start of the frontier (this hop's entries).
    front: Shared<u32>,
    /// End of the frontier.
    end: Shared<u32>,
    /// Entries in use (0: not a center).
    used: Shared<u32>,
    /// The next patch to visit (a shared minimum).
    next: Shared<u32>,
}

impl RingWindows {
    fn alloc(arena: &mut SharedArena, cap: &Capacity, threads: u32) -> Self {
        let windows = Windows::alloc(arena, cap, (Query::VV, Needs::RESULTS), threads, 0);
        let n = cap.vertices.max(1);
        RingWindows {
            windows,
            prev: arena.alloc(n),
            front: arena.alloc(n),
            end: arena.alloc(n),
            used: arena.alloc(n),
            next: arena.alloc(1),
        }
    }
}

/// Shared-memory bytes of the ring kernels with `threads` threads.
pub fn shared_bytes(cap: &Capacity, threads: u32) -> usize {
    let mut arena = SharedArena::measuring();
    RingWindows::alloc(&mut arena, cap, threads);
    arena.used()
}

/// No patch (the shared minimum's start).
const NONE: u32 = u32::MAX;

/// Kernel body: for every patch `p = block_idx, block_idx + grid, ...` in
/// use, the ring of `r` of every owned active vertex, then `f` on it.
#[inline(always)]
pub fn each_ring<B: Block, R: RingComputation>(
    launch: &mut Launch<'_, B>,
    mesh: &DynMesh,
    r: &R,
    scratch: &RingScratch,
    mut f: impl FnMut(&Ring<'_, B>),
) {
    let block = launch.block;
    let cap = mesh.cap;
    let capacity = scratch.capacity.max(1);
    // SAFETY: the kernel's contract: the scratch has the documented size.
    let (entries, overflow) = unsafe {
        (
            GlobalU32::new(scratch.entries),
            GlobalU32::new(scratch.overflow),
        )
    };
    let region = launch.block_idx * cap.vertices;
    let mut p = launch.block_idx;
    while p < mesh.num_patches {
        // SAFETY: the windows of the patch before are not used again.
        unsafe { launch.arena.reset() };
        let w = RingWindows::alloc(launch.arena, &cap, block.block_dim());
        launch.arena.check();
        let home = PatchCopy {
            p,
            ..w.windows.copy
        };
        home.load(block, mesh);
        block.sync();
        let n = home.count(Kind::Vertex);
        let base = |l: u32| (region + l) * capacity;
        block.for_each(n, |l| {
            let center = home.is_owned(Kind::Vertex, l) && home.is_active(Kind::Vertex, l);
            if center {
                // SAFETY: only this thread touches vertex `l`'s region.
                unsafe { entries.store_unshared(base(l), VertexSlot::new(&cap, (p, l)).0) };
            }
            w.prev.set(l, 0);
            w.front.set(l, 0);
            w.end.set(l, u32::from(center));
            w.used.set(l, u32::from(center));
        });
        block.sync();
        let ring = |l: u32, used: u32| Ring {
            thread: core::marker::PhantomData,
            mesh,
            center: VertexSlot::new(&cap, (p, l)),
            entries,
            base: base(l),
            used,
        };
        for _ in 0..r.hops() {
            let mut from = 0;
            loop {
                block.for_each(1, |_| w.next.set(0, NONE));
                block.sync();
                block.for_each(n, |l| {
                    for i in w.front.get(l)..w.end.get(l) {
                        // SAFETY: as above.
                        let s = VertexSlot(unsafe { entries.load_unshared(base(l) + i) });
                        let (q, _) = s.split(&cap);
                        if q >= from {
                            block.shared_min(w.next, 0, q);
                        }
                    }
                });
                block.sync();
                let q = w.next.get(0);
                block.sync();
                if q == NONE {
                    break;
                }
                // The window reuses the home patch's shared arrays: `home`
                // is not read from here on (its vertex count is in `n`).
                let window = PatchCopy { p: q, ..home };
                window.load(block, mesh);
                block.sync();
                build_rows(
                    block,
                    &window,
                    Query::VV,
                    &w.windows.rows,
                    w.windows.scratch,
                );
                block.for_each(n, |l| {
                    let mut used = w.used.get(l);
                    for i in w.front.get(l)..w.end.get(l) {
                        // SAFETY: as above.
                        let s = VertexSlot(unsafe { entries.load_unshared(base(l) + i) });
                        let (sq, u) = s.split(&cap);
                        if sq != q {
                            continue;
                        }
                        let rows = &w.windows.rows;
                        for j in rows.start(u)..rows.end(u) {
                            let [a, b] = window.edge_vertices(rows.entry(j));
                            let x = if a == u { b } else { a };
                            let Some(owner) = window.owner(block, Kind::Vertex, x) else {
                                overflow.fetch_max(0, ring_status::NO_OWNER);
                                continue;
                            };
                            let c = VertexSlot::new(&cap, owner);
                            // A neighbour of hop h is at hop h - 1, h or
                            // h + 1: only those entries can hold it.
                            let seen = (w.prev.get(l)..used).any(|k| {
                                // SAFETY: as above.
                                let e = unsafe { entries.load_unshared(base(l) + k) };
                                e == c.0
                            });
                            if seen || !r.admits(&ring(l, used), c) {
                                continue;
                            }
                            if used == capacity {
                                overflow.fetch_max(0, ring_status::OVERFLOW);
                                continue;
                            }
                            // SAFETY: as above.
                            unsafe { entries.store_unshared(base(l) + used, c.0) };
                            used += 1;
                        }
                    }
                    w.used.set(l, used);
                });
                block.sync();
                from = q + 1;
            }
            let mut grew = false;
            block.for_each(n, |l| {
                let used = w.used.get(l);
                grew |= used > w.end.get(l);
                w.prev.set(l, w.front.get(l));
                w.front.set(l, w.end.get(l));
                w.end.set(l, used);
            });
            if !block.sync_any(grew) {
                break;
            }
        }
        block.for_each(n, |l| {
            let used = w.used.get(l);
            if used > 0 {
                f(&ring(l, used));
            }
        });
        block.sync();
        p += launch.grid_dim;
    }
}

/// The k-ring query: every vertex admitted, `k` hops.
#[derive(Clone, Copy)]
#[repr(C)]
#[cfg_attr(
    not(target_arch = "nvptx64"),
    derive(bytemuck::Pod, bytemuck::Zeroable)
)]
struct KRing {
    k: u32,
}

impl RingComputation for KRing {
    fn hops(&self) -> u32 {
        self.k
    }

    fn compute<B: Block>(&self, _ring: &Ring<'_, B>) {}
}

crate::kernel! {
    @core
    /// The vertex k-ring of every owned active vertex, exported by slot as
    /// the first-order queries' export (`compute::export`): with `offsets`
    /// 0 each ring's length goes to `counts[slot]`, otherwise its vertices,
    /// as owner slots in the order of the search, to `values[offsets[slot]..]`.
    /// Block `b` takes patches `b`, `b + grid`, ... ([`each_ring`]).
    ///
    /// # Safety
    /// The mesh describes live arrays of a dynamic mesh; `rings` holds
    /// [`scratch_words`] words for the grid and one overflow word; `counts`
    /// and (when not 0) `offsets` one entry per vertex slot, `values` as
    /// many entries as the counts sum to (or 0 in the counting pass);
    /// dynamic shared memory is [`shared_bytes`].
    #[launch_bounds = FOR_EACH_BOUNDS]
    pub kernel ExportRing(launch, mesh: RawDynamicMesh, k: u32, rings: RingScratch, counts: u64, offsets: u64, values: u64) {
        // SAFETY: the kernel's contract.
        let (m, counts, offsets, values) = unsafe {
            (
                DynMesh::new(&mesh),
                GlobalU32::new(counts),
                (offsets != 0).then(|| GlobalU32::new(offsets)),
                GlobalU32::new(values),
            )
        };
        each_ring(launch, &m, &KRing { k }, &rings, |ring| {
            let slot = ring.center().index(&m.cap);
            match offsets {
                None => counts.store(slot, ring.len()),
                Some(offsets) => {
                    let start = offsets.load(slot);
                    for (i, v) in ring.neighbors().enumerate() {
                        values.store(start + i as u32, v.index(&m.cap));
                    }
                }
            }
        });
    }
}

/// A ring computation with GPU kernels: its entry point, parameters
/// `(RawDynamicMesh, computation, RingScratch)`.
///
/// # Safety
/// [`RingKernels::FOR_EACH_RING`] names an entry point with those
/// parameters that runs [`RingKernel`]'s body: implement it with
/// [`ring_kernels!`](crate::ring_kernels) only.
pub unsafe trait RingKernels: RingComputation {
    /// The entry's name.
    const FOR_EACH_RING: &'static str;
}

/// The kernel of ring computation `C` ([`each_ring`]).
///
/// # Safety
/// The mesh describes live arrays of a dynamic mesh; the scratch holds
/// [`scratch_words`] words for the grid and one overflow word; dynamic
/// shared memory is [`shared_bytes`] for the launch's threads.
pub struct RingKernel<C>(core::marker::PhantomData<fn() -> C>);

// SAFETY: `C::FOR_EACH_RING` is such an entry (`RingKernels`).
unsafe impl<C: RingKernels> Kernel for RingKernel<C> {
    const NAME: &'static str = C::FOR_EACH_RING;
    const BOUNDS: LaunchBounds = LaunchBounds {
        threads: FOR_EACH_BOUNDS.threads,
        min_blocks: C::MIN_BLOCKS,
    };
    const HOST_ZEROED_SHARED: bool = false;
    type Params = (RawDynamicMesh, C, RingScratch);

    #[inline(always)]
    unsafe fn run<B: Block>(launch: &mut Launch<'_, B>, (mesh, c, rings): Self::Params) {
        // SAFETY: the kernel's contract.
        let m = unsafe { DynMesh::new(&mesh) };
        each_ring(launch, &m, &c, &rings, |ring| c.compute(ring));
    }
}

/// Declares ring computations' GPU kernels: for each type (a
/// [`RingComputation`], plain `repr(C)` data, `bytemuck::Pod` on the
/// host), the [`RingKernels`] implementation and, on `nvptx64`, the entry
/// point `CRATE_ForEachRingName` of [`RingKernel`].
#[macro_export]
macro_rules! ring_kernels {
    ($($c:ident),+ $(,)?) => {$(
        // SAFETY: the entry point below takes the kernel's parameters and
        // runs its body.
        unsafe impl $crate::dynamic::ring::RingKernels for $c {
            const FOR_EACH_RING: &'static str =
                $crate::kernel!(@name concat!("ForEachRing", stringify!($c)));
        }

        $crate::kernel!(
            @entry [target_arch = "nvptx64"]
            $crate::kernel!(@name concat!("ForEachRing", stringify!($c))),
            $crate::dynamic::ring::RingKernel<$c>,
            (
                mesh: $crate::dynamic::layout::RawDynamicMesh,
                c: $c,
                rings: $crate::dynamic::ring::RingScratch
            )
        );
    )+};
}

//! Per-element computations on the dynamic mesh (RXMesh section 4, the
//! programming model: a computation runs on every active element of one
//! kind with the results of one query, reading attributes and writing its
//! own element's; the dynamic paper keeps one structure for static and
//! dynamic work, its table 3).
//!
//! A user declares an [`ElementComputation`] (plain data: its parameters
//! and the [`Attr`] handles it reads and writes), exports its kernel with
//! [`element_kernels!`](crate::element_kernels), and the host runs it on a
//! dynamic mesh on either backend (`cavity::rounds::Rounds::for_each`). One
//! block per patch: the block loads the patch (FE, EV, bitmasks, ribbon
//! tables) into shared memory, builds the query's relation there (EV, FV
//! and FE read the patch directly; VE, VF, EF are block-cooperative
//! transposes: count, scan, fill; VV goes through VE), and runs the
//! computation on every owned active element of the query's source kind
//! that passes [`ElementComputation::active`]. The results of an owned
//! element are complete (every face is active in the patches that own its
//! vertices and edges) except for FF, which a patch cannot answer for a
//! face whose neighbour across an edge it does not hold: FF is refused at
//! compile time.

use crate::attribute::{Attr, Scalar};
use crate::block::{Block, Shared, SharedArena};
use crate::kernel::{DYNAMIC_BOUNDS, Kernel, Launch, LaunchBounds, PlainData};
use crate::layout::Kind;
use crate::query::Query;

use super::global::GlobalU32;
use super::layout::{Capacity, POSITION, RawDynamicMesh, computation_writes};
use super::patch::{DynMesh, PatchCopy};

/// A computation on every active element of [`ElementComputation::QUERY`]'s
/// source kind, with that query's results (the user's half of the
/// programming model).
pub trait ElementComputation: PlainData + Send + Sync + 'static {
    /// The query whose results each element gets; its source kind is the
    /// kind computed on. Not [`Query::FF`] (see the module).
    const QUERY: Query;

    /// Whether [`Element::edge_face_count`] answers: the kernel then also
    /// counts the active faces of every edge of the patch in shared memory
    /// (4 bytes per edge slot, one pass over the faces). Off by default.
    const FACES_PER_EDGE: bool = false;

    /// Whether the computation reads its query's results; `false` skips
    /// building them (no transpose: the element reads its own attributes,
    /// [`Element::len`] is 0), for a map over the elements of the query's
    /// source kind, as an advection step. On by default.
    const QUERY_RESULTS: bool = true;

    /// Resident blocks per multiprocessor the kernel leaves room for, which
    /// caps its registers per thread at `65536 / (256 × MIN_BLOCKS)`
    /// (`FOR_EACH_BOUNDS`: 2, up to 128 registers). Raise it for a
    /// computation whose occupancy its registers limit (`ptxas -v` on the
    /// PTX, `launch__occupancy_limit_registers` in Nsight Compute), as long
    /// as ptxas reports no spills.
    const MIN_BLOCKS: u32 = FOR_EACH_BOUNDS.min_blocks;

    /// Whether the element is in the active set (all by default). Asked
    /// twice: first without the query's results ([`Element::len`] 0, no
    /// faces per edge) and before the patch's connectivity is loaded (only
    /// which elements exist and are owned is known), so that a patch with
    /// no active element skips loading the rest and building the results;
    /// then with them, right before [`compute`]. It must answer the same
    /// both times: decide on the element's own attributes.
    ///
    /// [`compute`]: ElementComputation::compute
    #[inline(always)]
    fn active<B: Block>(&self, _element: &Element<'_, B>) -> bool {
        true
    }

    /// The computation on one element.
    fn compute<B: Block>(&self, element: &Element<'_, B>);
}

/// One element of a per-element computation: its query results and
/// attributes. Neighbours are local indices of the query's target kind in
/// the element's patch; reads resolve them to their owners.
pub struct Element<'a, B: Block> {
    block: &'a B,
    mesh: &'a DynMesh,
    copy: &'a PatchCopy,
    rows: &'a Rows,
    /// Active faces per edge, when counted (`FACES_PER_EDGE`).
    faces: Option<Shared<u32>>,
    query: Query,
    /// Whether the query's results were built (`QUERY_RESULTS`).
    results: bool,
    l: u32,
}

impl<B: Block> Element<'_, B> {
    /// The element's local index in its patch.
    #[inline(always)]
    pub fn local(&self) -> u32 {
        self.l
    }

    /// The number of query results.
    #[inline(always)]
    pub fn len(&self) -> u32 {
        if !self.results {
            return 0;
        }
        match self.query {
            Query::EV => 2,
            Query::FV | Query::FE => 3,
            _ => self.rows.end(self.l) - self.rows.start(self.l),
        }
    }

    /// Whether the query gave no result.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Query result `i` (`i < len()`), a local index of the target kind;
    /// `u32::MAX` past the last (which the accessors read as no element).
    #[inline(always)]
    pub fn neighbor(&self, i: u32) -> u32 {
        if i >= self.len() {
            return u32::MAX;
        }
        self.result(i)
    }

    /// The query results in order: the element's own order for EV, FV and
    /// FE, ascending local index for the others (VV: of the edges to the
    /// neighbours), the same on every run and on both backends, so that
    /// sums over them are reproducible.
    #[inline(always)]
    pub fn neighbors(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len()).map(move |i| self.result(i))
    }

    /// Query result `i`, for `i < len()`.
    #[inline(always)]
    fn result(&self, i: u32) -> u32 {
        let copy = self.copy;
        match self.query {
            Query::EV => copy.edge_vertices(self.l)[i as usize % 2],
            Query::FV => copy.face_vertices(self.l)[i as usize % 3],
            Query::FE => copy.face_edge(self.l, i % 3).0,
            Query::VV => {
                let e = self.rows.entry(self.rows.start(self.l) + i);
                let [a, b] = copy.edge_vertices(e);
                if a == self.l { b } else { a }
            }
            _ => self.rows.entry(self.rows.start(self.l) + i),
        }
    }

    /// Adds one to the computation's count, which the host reads (and
    /// zeroes) after the computation with `Rounds::take_count`: a test of
    /// convergence without a reduction over an attribute. One global
    /// atomic per call: for counting a small part of the elements.
    #[inline(always)]
    pub fn count(&self) {
        self.mesh.add_stat(super::layout::stat::COUNTED, 1);
    }

    /// Marks the element's patch; the host takes the marked patches after
    /// the computation (`Rounds::take_marked_patches`), e.g. to visit
    /// only them and their neighbours next (`ForEach::for_each_in`). One
    /// global atomic per patch (the first mark; later calls only read).
    #[inline(always)]
    pub fn mark_patch(&self) {
        let p = self.copy.p;
        if self.mesh.flags.load(p) & super::layout::flag::MARKED == 0 {
            self.mesh.flags.fetch_or(p, super::layout::flag::MARKED);
        }
    }

    /// The element's value of `attr` (defaults unless `attr` is on the
    /// source kind and held by the mesh).
    #[inline(always)]
    pub fn get<T: Scalar, const N: usize>(&self, attr: &Attr<T, N>) -> [T; N] {
        let kind = self.query.source();
        if attr.kind() != kind {
            return [T::default(); N];
        }
        kind.specialize(|kind| {
            // SAFETY: only this thread writes the element's own words
            // during the computation (`Element::set`); other threads only
            // read them.
            unsafe {
                self.mesh
                    .load_attr_unshared_as(kind, attr, (self.copy.p, self.l))
            }
        })
    }

    /// The value of `attr` of local element `l` of the attribute's kind
    /// (a neighbour), read from its owner; defaults for an index that is
    /// not an active local element.
    #[inline(always)]
    pub fn get_at<T: Scalar, const N: usize>(&self, attr: &Attr<T, N>, l: u32) -> [T; N] {
        attr.kind().specialize(|kind| {
            if l >= self.copy.count(kind) || !self.copy.is_active(kind, l) {
                return [T::default(); N];
            }
            let owner = self.copy.owner_or_self(self.block, kind, l);
            self.mesh.load_attr_as(kind, attr, owner)
        })
    }

    /// The two vertices of local edge `e` (any active local edge, e.g. a
    /// VE result), in its stored direction.
    #[inline(always)]
    pub fn edge_vertices(&self, e: u32) -> [u32; 2] {
        if e >= self.copy.count(Kind::Edge) {
            return [e; 2];
        }
        self.copy.edge_vertices(e)
    }

    /// The three vertices of local face `f` (any active local face, e.g. a
    /// VF or EF result) in its orientation.
    #[inline(always)]
    pub fn face_vertices(&self, f: u32) -> [u32; 3] {
        if f >= self.copy.count(Kind::Face) {
            return [f; 3];
        }
        self.copy.face_vertices(f)
    }

    /// The three edges of local face `f`, in the order of its corners
    /// (edge `i` runs from corner `i` to corner `i + 1`).
    #[inline(always)]
    pub fn face_edges(&self, f: u32) -> [u32; 3] {
        if f >= self.copy.count(Kind::Face) {
            return [f; 3];
        }
        [0, 1, 2].map(|i| self.copy.face_edge(f, i).0)
    }

    /// The number of active faces of local edge `e` (1 on the mesh
    /// boundary, 2 inside, more at a non-manifold edge; complete for an
    /// edge of an owned vertex, edge or face). `None` unless the
    /// computation counts them ([`ElementComputation::FACES_PER_EDGE`]),
    /// or for an index that is not a local edge.
    #[inline(always)]
    pub fn edge_face_count(&self, e: u32) -> Option<u32> {
        let faces = self.faces?;
        (e < self.copy.count(Kind::Edge)).then(|| faces.get(e))
    }

    /// Whether local element `l` of `kind` is owned by the element's patch
    /// (the computation runs on owned elements; neighbours may be ribbon
    /// copies).
    #[inline(always)]
    pub fn is_owned(&self, kind: Kind, l: u32) -> bool {
        l < self.copy.count(kind) && self.copy.is_owned(kind, l)
    }

    /// The position of local vertex `v` (from its owner; zeros for an
    /// index that is not an active local vertex).
    #[inline(always)]
    pub fn position(&self, v: u32) -> [f32; 3] {
        self.get_at(&POSITION, v)
    }

    /// Sets the element's value of `attr` (only the element's own: a
    /// computation reads its neighbours' values as another thread may be
    /// writing them; write to an attribute it does not read). Nothing
    /// unless `attr` is on the source kind, held by the mesh, and a user
    /// attribute or the position ([`POSITION`]; the core's other word,
    /// the input index, is the core's).
    #[inline(always)]
    pub fn set<T: Scalar, const N: usize>(&self, attr: &Attr<T, N>, value: [T; N]) {
        let kind = self.query.source();
        if attr.kind() != kind {
            return;
        }
        kind.specialize(|kind| {
            if computation_writes(kind, attr) {
                self.mesh
                    .store_attr_as(kind, attr, (self.copy.p, self.l), value);
            }
        })
    }
}

/// A relation in compressed rows, built in shared memory: row `s` of the
/// source kind lists `entries[start(s)..end(s)]`.
pub struct Rows {
    /// `ends[s]`: end of row `s` (its start is `ends[s - 1]`, 0 for `s = 0`).
    ends: Shared<u32>,
    entries: Shared<u16>,
}

impl Rows {
    #[inline(always)]
    pub(super) fn start(&self, s: u32) -> u32 {
        if s == 0 { 0 } else { self.ends.get(s - 1) }
    }
    #[inline(always)]
    pub(super) fn end(&self, s: u32) -> u32 {
        self.ends.get(s)
    }
    #[inline(always)]
    pub(super) fn entry(&self, i: u32) -> u32 {
        self.entries.get(i) as u32
    }
}

/// The relation a transposed query needs: `(rows' kind, element kind
/// whose incidences are transposed, incidences per element)`.
#[inline(always)]
fn transposed(query: Query) -> Option<(Kind, Kind, u32)> {
    match query {
        Query::VV | Query::VE => Some((Kind::Vertex, Kind::Edge, 2)),
        Query::VF => Some((Kind::Vertex, Kind::Face, 3)),
        Query::EF => Some((Kind::Edge, Kind::Face, 3)),
        Query::EV | Query::FV | Query::FE | Query::FF => None,
    }
}

/// Shared-memory windows: the patch copy, the rows, the scan's scratch
/// and the faces per edge (when counted).
pub(super) struct Windows {
    pub(super) copy: PatchCopy,
    pub(super) rows: Rows,
    pub(super) scratch: Shared<u32>,
    faces: Option<Shared<u32>>,
}

impl Windows {
    pub(super) fn alloc(
        arena: &mut SharedArena,
        cap: &Capacity,
        (query, needs): (Query, Needs),
        threads: u32,
        p: u32,
    ) -> Windows {
        let copy = PatchCopy::alloc(arena, *cap, p);
        let (rows, of, per) =
            transposed(query)
                .filter(|_| needs.results)
                .unwrap_or((Kind::Vertex, Kind::Vertex, 0));
        let n = if per == 0 { 1 } else { cap.of(rows) + 1 };
        let ends = arena.alloc(n);
        let entries = arena.alloc((per * cap.of(of)).max(1));
        let scratch = arena.alloc(crate::block::scan_scratch_len(threads));
        let faces = needs.faces_per_edge.then(|| arena.alloc(cap.edges.max(1)));
        Windows {
            copy,
            rows: Rows { ends, entries },
            scratch,
            faces,
        }
    }
}

/// What a kernel builds besides the patch copy: the query's results and
/// the faces per edge.
#[derive(Clone, Copy)]
pub(super) struct Needs {
    results: bool,
    faces_per_edge: bool,
}

impl Needs {
    /// What computation `C` reads.
    const fn of<C: ElementComputation>() -> Needs {
        Needs {
            results: C::QUERY_RESULTS,
            faces_per_edge: C::FACES_PER_EDGE,
        }
    }

    /// The query's results only (the query export).
    pub(super) const RESULTS: Needs = Needs {
        results: true,
        faces_per_edge: false,
    };
}

/// Shared-memory bytes of computation `C`'s kernel with `threads` threads.
pub fn shared_bytes<C: ElementComputation>(cap: &Capacity, threads: u32) -> usize {
    let mut arena = SharedArena::measuring();
    Windows::alloc(&mut arena, cap, (C::QUERY, Needs::of::<C>()), threads, 0);
    arena.used()
}

/// Counts the active faces of every local edge into `faces`. Returns
/// after a barrier.
#[inline(always)]
fn count_edge_faces<B: Block>(block: &B, copy: &PatchCopy, faces: Shared<u32>) {
    block.for_each(copy.count(Kind::Edge), |e| faces.set(e, 0));
    block.sync();
    block.for_each(copy.count(Kind::Face), |f| {
        if copy.is_active(Kind::Face, f) {
            for i in 0..3 {
                block.shared_fetch_add(faces, copy.face_edge(f, i).0, 1);
            }
        }
    });
    block.sync();
}

/// Builds the rows of `query` (a block-cooperative transpose of the active
/// elements' incidences: count, scan, fill, sort), each row in ascending
/// local index. Returns after a barrier.
#[inline(always)]
pub(super) fn build_rows<B: Block>(
    block: &B,
    copy: &PatchCopy,
    query: Query,
    rows: &Rows,
    scratch: Shared<u32>,
) {
    let Some((kind, of, per)) = transposed(query) else {
        return;
    };
    let n = copy.count(kind);
    let m = copy.count(of);
    let target = |x: u32, i: u32| -> u32 {
        match of {
            Kind::Edge => copy.edge_vertices(x)[i as usize % 2],
            _ if kind == Kind::Vertex => copy.face_vertices(x)[i as usize % 3],
            _ => copy.face_edge(x, i % 3).0,
        }
    };
    block.for_each(n + 1, |s| rows.ends.set(s, 0));
    block.sync();
    block.for_each(m, |x| {
        if copy.is_active(of, x) {
            for i in 0..per {
                block.shared_fetch_add(rows.ends, target(x, i), 1);
            }
        }
    });
    block.sync();
    block.scan(rows.ends, n + 1, scratch, false);
    block.sync();
    block.for_each(m, |x| {
        if copy.is_active(of, x) {
            for i in 0..per {
                // Each placement advances the row's start: afterwards
                // `ends[s]` is the end of row `s`.
                let at = block.shared_fetch_add(rows.ends, target(x, i), 1);
                rows.entries.set(at, x as u16);
            }
        }
    });
    block.sync();
    // The placements race on the GPU: each row is sorted (insertion sort,
    // rows are short), so that its order, and every sum a computation
    // takes over it, is the same on every run and on both backends.
    block.for_each(n, |s| {
        let start = rows.start(s);
        for i in start + 1..rows.end(s) {
            let x = rows.entries.get(i);
            let mut j = i;
            while j > start && rows.entries.get(j - 1) > x {
                rows.entries.set(j, rows.entries.get(j - 1));
                j -= 1;
            }
            rows.entries.set(j, x);
        }
    });
    block.sync();
}

/// Kernel body, one block per patch slot `p` in use: computation `c` on
/// every owned active element of its query's source kind.
#[inline(always)]
pub fn for_each<B: Block, C: ElementComputation>(
    block: &B,
    arena: &mut SharedArena,
    mesh: &DynMesh,
    p: u32,
    c: &C,
) {
    each_element(
        block,
        arena,
        mesh,
        p,
        (C::QUERY, Needs::of::<C>()),
        Some(|element: &Element<'_, B>| c.active(element)),
        |element| {
            if c.active(element) {
                c.compute(element);
            }
        },
    );
}

/// Calls `f` on every owned active element of `query`'s source kind in
/// patch slot `p` (nothing for a slot not in use), with the query's rows
/// built in shared memory and the faces per edge counted as `needs` says
/// ([`shared_bytes`], [`shared_bytes_of`]). With `screen`, a patch none of
/// whose elements `screen` accepts (seen without query results) returns
/// before building them.
#[inline(always)]
fn each_element<B: Block>(
    block: &B,
    arena: &mut SharedArena,
    mesh: &DynMesh,
    p: u32,
    (query, needs): (Query, Needs),
    screen: Option<impl Fn(&Element<'_, B>) -> bool>,
    mut f: impl FnMut(&Element<'_, B>),
) {
    if p >= mesh.num_patches {
        return;
    }
    let Windows {
        copy,
        rows,
        scratch,
        faces,
    } = Windows::alloc(arena, &mesh.cap, (query, needs), block.block_dim(), p);
    arena.check();
    // With a screen, the connectivity (most of the patch) is loaded only
    // once the screen found an element: the screen sees the masks and
    // the element's own attributes.
    if screen.is_some() {
        copy.load_masks(block, mesh);
    } else {
        copy.load(block, mesh);
    }
    block.sync();
    let kind = query.source();
    if let Some(screen) = screen {
        let mut any = false;
        block.for_each(copy.count(kind), |l| {
            if copy.is_owned(kind, l) && copy.is_active(kind, l) {
                any |= screen(&Element {
                    block,
                    mesh,
                    copy: &copy,
                    rows: &rows,
                    faces: None,
                    query,
                    results: false,
                    l,
                });
            }
        });
        if !block.sync_any(any) {
            return;
        }
        copy.load_connectivity(block, mesh);
        block.sync();
    }
    if needs.results {
        build_rows(block, &copy, query, &rows, scratch);
    }
    if let Some(faces) = faces {
        count_edge_faces(block, &copy, faces);
    }
    block.for_each(copy.count(kind), |l| {
        if !(copy.is_owned(kind, l) && copy.is_active(kind, l)) {
            return;
        }
        let element = Element {
            block,
            mesh,
            copy: &copy,
            rows: &rows,
            faces,
            query,
            results: needs.results,
            l,
        };
        f(&element);
    });
}

/// Shared-memory bytes of the kernels of `query` (the query export's, or a
/// computation's with that query) with `threads` threads.
pub fn shared_bytes_of(query: Query, cap: &Capacity, threads: u32) -> usize {
    let mut arena = SharedArena::measuring();
    Windows::alloc(&mut arena, cap, (query, Needs::RESULTS), threads, 0);
    arena.used()
}

/// Kernel body of the query export: for every owned active source element
/// `l` of patch slot `p` (slot index `p × cap + l`), with `offsets` null
/// its row's length goes to `counts[slot]`; otherwise row `i` goes to
/// `values[offsets[slot] + i]` as the owner's slot index of each result
/// (`q × cap + l_q` of the target kind), resolved through the ribbon.
#[inline(always)]
pub fn export<B: Block>(
    block: &B,
    arena: &mut SharedArena,
    mesh: &DynMesh,
    p: u32,
    query: Query,
    out: &ExportArrays,
) {
    let (source, target) = (query.source(), query.target());
    let screen = None::<fn(&Element<'_, B>) -> bool>;
    each_element(
        block,
        arena,
        mesh,
        p,
        (query, Needs::RESULTS),
        screen,
        |e| {
            let slot = p * mesh.cap.of(source) + e.local();
            if out.offsets.is_none() {
                out.counts.store(slot, e.len());
                return;
            }
            let start = out.offsets.map_or(0, |o| o.load(slot));
            for (i, n) in e.neighbors().enumerate() {
                let (q, l) = e.copy.owner_or_self(block, target, n);
                out.values
                    .store(start + i as u32, q * mesh.cap.of(target) + l);
            }
        },
    );
}

/// The query export's arrays (see [`export`]).
pub struct ExportArrays {
    /// Per source slot: the row's length (the counting pass).
    pub counts: GlobalU32,
    /// Per source slot: the row's first value (the filling pass).
    pub offsets: Option<GlobalU32>,
    /// The rows' values.
    pub values: GlobalU32,
}

crate::kernel! {
    @core
    /// The first-order query `query` (a [`Query`] code, not FF) of the
    /// dynamic mesh exported by slot ([`export`]): with `offsets` 0 the
    /// counting pass, else the filling pass. One block per patch slot in
    /// use, [`shared_bytes_of`] the query's shared memory.
    ///
    /// # Safety
    /// The mesh describes live arrays of a dynamic mesh; `counts` and
    /// (when not 0) `offsets` hold one entry per slot of the source kind
    /// (`cap.patches × cap`), `values` as many entries as the counts sum
    /// to (or is 0 in the counting pass).
    #[launch_bounds = FOR_EACH_BOUNDS]
    pub kernel ExportQuery(launch, mesh: RawDynamicMesh, query: u32, counts: u64, offsets: u64, values: u64) {
        let Some(query) = Query::from_u32(query).filter(|&q| q != Query::FF) else {
            return;
        };
        // SAFETY: the kernel's contract.
        let (m, out) = unsafe {
            (
                DynMesh::new(&mesh),
                ExportArrays {
                    counts: GlobalU32::new(counts),
                    offsets: (offsets != 0).then(|| GlobalU32::new(offsets)),
                    values: GlobalU32::new(values),
                },
            )
        };
        export(launch.block, launch.arena, &m, launch.block_idx, query, &out);
    }
}

/// A computation with GPU kernels: its entry point, parameters
/// `(RawDynamicMesh, computation, patches)`.
///
/// # Safety
/// [`ElementKernels::FOR_EACH`] names an entry point with those parameters
/// that runs [`ForEachKernel`]'s body: implement it with
/// [`element_kernels!`](crate::element_kernels) only.
pub unsafe trait ElementKernels: ElementComputation {
    /// The entry's name.
    const FOR_EACH: &'static str;
}

/// The kernel of computation `C` ([`for_each`]): with `patches` 0 one
/// block per patch slot in use, else block `b` on patch slot
/// `patches[b]` (a list of the patches to visit, which the host gives
/// when it knows where the active elements are).
///
/// # Safety
/// The mesh describes live arrays of a dynamic mesh; `patches` is 0 or
/// holds one distinct patch slot in use per block of the grid; dynamic
/// shared memory is [`shared_bytes::<C>`](shared_bytes) for the launch's
/// threads.
pub struct ForEachKernel<C>(core::marker::PhantomData<fn() -> C>);

/// The bounds of the per-element kernels.
pub const FOR_EACH_BOUNDS: LaunchBounds = DYNAMIC_BOUNDS;

// SAFETY: `C::FOR_EACH` is such an entry (`ElementKernels`).
unsafe impl<C: ElementKernels> Kernel for ForEachKernel<C> {
    const NAME: &'static str = C::FOR_EACH;
    const BOUNDS: LaunchBounds = LaunchBounds {
        threads: FOR_EACH_BOUNDS.threads,
        min_blocks: C::MIN_BLOCKS,
    };
    const HOST_ZEROED_SHARED: bool = false;
    type Params = (RawDynamicMesh, C, u64);

    #[inline(always)]
    unsafe fn run<B: Block>(launch: &mut Launch<'_, B>, (mesh, c, patches): Self::Params) {
        const {
            assert!(
                !matches!(C::QUERY, Query::FF),
                "FF is not answered on the dynamic mesh (see cavity_device::dynamic::compute)"
            )
        };
        // SAFETY: the kernel's contract.
        let m = unsafe { DynMesh::new(&mesh) };
        let p = if patches == 0 {
            launch.block_idx
        } else {
            // SAFETY: the kernel's contract: one entry per block.
            unsafe { GlobalU32::new(patches) }.load(launch.block_idx)
        };
        for_each(launch.block, launch.arena, &m, p, &c);
    }
}

/// Declares per-element computations' GPU kernels: for each type (an
/// [`ElementComputation`], plain `repr(C)` data, `bytemuck::Pod` on the
/// host), the [`ElementKernels`] implementation and, on `nvptx64`, the
/// entry point `CRATE_ForEachName` of [`ForEachKernel`].
#[macro_export]
macro_rules! element_kernels {
    (@core $($c:ident),+ $(,)?) => {
        $crate::element_kernels!(
            @declare [all(target_arch = "nvptx64", feature = "core-entries")] $($c),+
        );
    };
    ($($c:ident),+ $(,)?) => {
        $crate::element_kernels!(@declare [target_arch = "nvptx64"] $($c),+);
    };
    (@declare [$cfg:meta] $($c:ident),+) => {$(
        // SAFETY: the entry point below takes the kernel's parameters and
        // runs its body.
        unsafe impl $crate::dynamic::compute::ElementKernels for $c {
            const FOR_EACH: &'static str = $crate::kernel!(@name concat!("ForEach", stringify!($c)));
        }

        $crate::kernel!(
            @entry [$cfg] $crate::kernel!(@name concat!("ForEach", stringify!($c))),
            $crate::dynamic::compute::ForEachKernel<$c>,
            (mesh: $crate::dynamic::layout::RawDynamicMesh, c: $c, patches: u64)
        );
    )+};
}

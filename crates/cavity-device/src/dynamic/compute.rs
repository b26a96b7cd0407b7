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

    /// Whether the computation may sweep its patch several times in one
    /// launch ([`ElementComputation::sweeps`]): reserves in shared memory
    /// seven words per element slot of the source kind (two buffers and
    /// the launch's value per carried pair, whether it computes), the
    /// gathered positions ([`ElementComputation::GATHERED_WORDS`]) and five
    /// words more. Off by default.
    const SWEEPING: bool = false;

    /// Whether the block reads every local vertex's position, and the
    /// attributes of [`ElementComputation::gather`], once from its owner
    /// into shared memory, where [`Element::position`] and
    /// [`Element::get_at`] find them: one load per local vertex instead of
    /// one per read, for a computation whose reads of its neighbours'
    /// words (through the ribbon, each a dependent global load) are its
    /// cost (three words per vertex slot and
    /// [`ElementComputation::GATHERED_WORDS`] more). Off by default; on
    /// for a sweeping computation.
    const GATHERS: bool = false;

    /// Words per vertex slot reserved for the gathered attributes
    /// ([`ElementComputation::GATHERS`]). 0 by default.
    const GATHERED_WORDS: u32 = 0;

    /// The vertex attributes gathered into shared memory ([`Gather`]; at
    /// most [`ElementComputation::GATHERED_WORDS`] words in all, else
    /// none is). None by default.
    #[inline(always)]
    fn gather(&self) -> Gather {
        Gather::NONE
    }

    /// The in-patch sweeps of one launch ([`Sweeps`]); one by default, and
    /// one unless [`ElementComputation::SWEEPING`].
    #[inline(always)]
    fn sweeps(&self) -> Sweeps {
        Sweeps::ONE
    }

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

/// Sweeps of a relaxation inside its patch: one launch calls
/// [`ElementComputation::compute`] up to `count` times on every active
/// element, with a barrier between, as long as an element asks for
/// another sweep ([`Element::sweep_again`]), so that a change crosses the
/// patch in one launch instead of one launch per hop (a block-local
/// Jacobi iteration, as the block-based fast iterative method of Jeong
/// and Whitaker 2008 runs it). The carried attributes' values (one or two
/// pairs `read` → `write`) live in shared memory during the launch: sweep
/// `k` reads, through [`Element::get_at`] on `read`, the values sweep
/// `k - 1` wrote with [`Element::set`] on `write` (the launch's `read`
/// values in sweep 0; a not-owned element keeps its owner's launch
/// value, as its owner's block is computing it), and after the last sweep
/// every active owned element's carried values go to `write` (its `read`
/// value where it set none). The result is deterministic: no block reads
/// what another writes in the launch. In a sweeping launch the positions
/// are read once, into shared memory; [`Element::get`] reads a carried
/// `read` attribute's launch value (set no `read` attribute: write its
/// `write`); [`Element::count`] counts the last sweep's calls only; other
/// attributes written with [`Element::set`] are written in every sweep.
/// A launch sweeps once unless the mesh holds every carried attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sweeps {
    count: u32,
    kind: Kind,
    /// Carried pairs: 1 or 2.
    pairs: u32,
    read: [u32; 2],
    write: [u32; 2],
}

impl Sweeps {
    /// One sweep: a plain launch.
    pub const ONE: Sweeps = Sweeps {
        count: 1,
        kind: Kind::Vertex,
        pairs: 1,
        read: [0; 2],
        write: [0; 2],
    };

    /// Up to `count` sweeps (at least 1) carrying `read` into `write`: two
    /// different one-word attributes (`f32` or `u32`; refused at compile
    /// time for `f64`) of the computation's source kind (else the launch
    /// sweeps once).
    #[inline(always)]
    pub fn new<T: Scalar>(count: u32, read: &Attr<T, 1>, write: &Attr<T, 1>) -> Sweeps {
        const { assert!(T::WORDS == 1, "sweeps carry one-word attributes") };
        let distinct = read.kind() == write.kind() && read.offset() != write.offset();
        Sweeps {
            count: if distinct { count.max(1) } else { 1 },
            kind: read.kind(),
            pairs: 1,
            read: [read.offset(); 2],
            write: [write.offset(); 2],
        }
    }

    /// These sweeps carrying a second pair `read` → `write` as well (of
    /// the same kind, four different attributes, and not a third pair;
    /// else the launch sweeps once).
    #[inline(always)]
    pub fn and<T: Scalar>(self, read: &Attr<T, 1>, write: &Attr<T, 1>) -> Sweeps {
        const { assert!(T::WORDS == 1, "sweeps carry one-word attributes") };
        let words = [self.read[0], self.write[0], read.offset(), write.offset()];
        let distinct = (0..4).all(|i| (i + 1..4).all(|j| words[i] != words[j]));
        let same_kind = read.kind() == self.kind && write.kind() == self.kind;
        Sweeps {
            count: if distinct && same_kind && self.pairs == 1 {
                self.count
            } else {
                1
            },
            pairs: 2,
            read: [self.read[0], read.offset()],
            write: [self.write[0], write.offset()],
            ..self
        }
    }

    /// Calls per active element in one launch, at most.
    #[inline(always)]
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The carried pair whose `read` (`of_write` false) or `write`
    /// attribute starts at word `offset` of `kind`, for a one-component
    /// attribute (`n` 1).
    #[inline(always)]
    fn pair(&self, kind: Kind, offset: u32, n: usize, of_write: bool) -> Option<usize> {
        let words = if of_write { self.write } else { self.read };
        if n != 1 || kind != self.kind {
            return None;
        }
        if words[0] == offset {
            Some(0)
        } else if self.pairs == 2 && words[1] == offset {
            Some(1)
        } else {
            None
        }
    }
}

/// The vertex attributes a computation reads at neighbours through shared
/// memory ([`ElementComputation::GATHERED_WORDS`]): up to two, each of at
/// most four words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gather {
    /// Per attribute, its first word and its words (0: none).
    attrs: [(u32, u32); 2],
}

impl Gather {
    /// No attribute (the positions only, where any are gathered).
    pub const NONE: Gather = Gather { attrs: [(0, 0); 2] };

    /// Gathers vertex attribute `attr` (an attribute of another kind, or
    /// of more than four words, is not gathered).
    #[inline(always)]
    pub fn new<T: Scalar, const N: usize>(attr: &Attr<T, N>) -> Gather {
        Gather::NONE.and(attr)
    }

    /// These attributes and vertex attribute `attr` (a third one, or one
    /// of another kind or of more than four words, is not gathered).
    #[inline(always)]
    pub fn and<T: Scalar, const N: usize>(self, attr: &Attr<T, N>) -> Gather {
        let words = attr.words();
        if attr.kind() != Kind::Vertex || words == 0 || words > 4 {
            return self;
        }
        let mut attrs = self.attrs;
        if attrs[0].1 == 0 {
            attrs[0] = (attr.offset(), words);
        } else if attrs[1].1 == 0 {
            attrs[1] = (attr.offset(), words);
        }
        Gather { attrs }
    }

    /// Words gathered per vertex besides the positions.
    #[inline(always)]
    pub fn words(&self) -> u32 {
        self.attrs[0].1 + self.attrs[1].1
    }

    /// These attributes less those `mesh` does not hold.
    #[inline(always)]
    fn held_by(self, mesh: &DynMesh) -> Gather {
        let held = |(offset, words): (u32, u32)| {
            words > 0 && mesh.holds(&Attr::<u32, 1>::new(Kind::Vertex, offset + words - 1))
        };
        let [first, second] = self.attrs.map(|a| if held(a) { a } else { (0, 0) });
        Gather {
            attrs: if first.1 == 0 {
                [second, (0, 0)]
            } else {
                [first, second]
            },
        }
    }

    /// Where the words of the attribute at word `offset` with `words`
    /// words start in a vertex's gathered words (after the positions).
    #[inline(always)]
    fn find(&self, offset: u32, words: u32) -> Option<u32> {
        let [(a, n), (b, m)] = self.attrs;
        if n == words && a == offset {
            Some(3)
        } else if m == words && b == offset {
            Some(3 + n)
        } else {
            None
        }
    }
}

/// The gathered words of a launch as an element reads them.
#[derive(Clone, Copy)]
struct Gathered {
    /// `stride` words per local vertex: its position, then the attributes.
    words: Shared<u32>,
    stride: u32,
    gather: Gather,
}

/// Entry `j` (0 or 1) of a pair, chosen without indexing (an indexed
/// array would live in local memory on the GPU).
#[inline(always)]
fn pick<T: Copy>(pair: [T; 2], j: usize) -> T {
    if j == 0 { pair[0] } else { pair[1] }
}

/// The shared memory of a sweeping launch as one element sees it.
#[derive(Clone, Copy)]
struct Sweep {
    sweeps: Sweeps,
    /// Per carried pair, the values the previous sweep left (read).
    values: [Shared<u32>; 2],
    /// Per carried pair, the values this sweep writes.
    next: [Shared<u32>; 2],
    /// Per carried pair, the launch's values.
    launch: [Shared<u32>; 2],
    /// The sweeps' counts and requests ([`Carried::flags`]).
    flags: Shared<u32>,
    /// The sweep.
    k: u32,
}

impl Sweep {
    /// Where sweep `k`'s count is.
    #[inline(always)]
    fn count_at(&self, k: u32) -> u32 {
        k % 2
    }

    /// Where sweep `k`'s request for another sweep is.
    #[inline(always)]
    fn asked_at(&self, k: u32) -> u32 {
        2 + k % 3
    }
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
    /// The carried values, in a sweeping launch.
    sweep: Option<Sweep>,
    /// The gathered positions and attributes, where gathered.
    gathered: Option<Gathered>,
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
    /// atomic per call: for counting a small part of the elements. In a
    /// sweeping launch, the calls of the last sweep count (a shared
    /// atomic per call, one global one per patch).
    #[inline(always)]
    pub fn count(&self) {
        if let Some(s) = self.sweep {
            self.block.shared_fetch_add(s.flags, s.count_at(s.k), 1);
            return;
        }
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
    /// source kind and held by the mesh); for a carried `read` attribute
    /// in a sweeping launch, the launch's value ([`Sweeps`]:
    /// [`Element::get_at`] of [`Element::local`] reads the carried one).
    #[inline(always)]
    pub fn get<T: Scalar, const N: usize>(&self, attr: &Attr<T, N>) -> [T; N] {
        let kind = self.query.source();
        if attr.kind() != kind {
            return [T::default(); N];
        }
        if let Some((s, j)) = self.carried(kind, attr.offset(), N, false) {
            let mut value = [T::default(); N];
            value[0] = T::from_words([pick(s.launch, j).get(self.l), 0]);
            return value;
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
    /// not an active local element. In a sweeping launch, the carried
    /// attribute's value the previous sweep left ([`Sweeps`]).
    #[inline(always)]
    pub fn get_at<T: Scalar, const N: usize>(&self, attr: &Attr<T, N>, l: u32) -> [T; N] {
        attr.kind().specialize(|kind| {
            if l >= self.copy.count(kind) || !self.copy.is_active(kind, l) {
                return [T::default(); N];
            }
            if let Some((s, j)) = self.carried(kind, attr.offset(), N, false) {
                let mut value = [T::default(); N];
                value[0] = T::from_words([pick(s.values, j).get(l), 0]);
                return value;
            }
            if let Some((g, at)) = self
                .gathered
                .filter(|_| kind == Kind::Vertex)
                .and_then(|g| {
                    g.gather
                        .find(attr.offset(), attr.words())
                        .map(|at| (g, g.stride * l + at))
                })
            {
                let mut value = [T::default(); N];
                for (c, x) in value.iter_mut().enumerate() {
                    let w = at + c as u32 * T::WORDS;
                    let high = if T::WORDS == 2 { g.words.get(w + 1) } else { 0 };
                    *x = T::from_words([g.words.get(w), high]);
                }
                return value;
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

    /// The other two corners of local face `f` (a VF result of a vertex
    /// computation), in the face's orientation after the element's vertex:
    /// `[b, c]` of face `(v, b, c)` rotated to start at `v` (the first two
    /// corners after the first when the element is not a corner).
    #[inline(always)]
    pub fn other_corners(&self, f: u32) -> [u32; 2] {
        let [x, y, z] = self.face_vertices(f);
        if x == self.l {
            [y, z]
        } else if y == self.l {
            [z, x]
        } else {
            [x, y]
        }
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
        if let Some(g) = self.gathered {
            if v >= self.copy.count(Kind::Vertex) || !self.copy.is_active(Kind::Vertex, v) {
                return [0.0; 3];
            }
            return [0, 1, 2].map(|c| f32::from_bits(g.words.get(g.stride * v + c)));
        }
        self.get_at(&POSITION, v)
    }

    /// In a sweeping launch ([`Sweeps`]), asks for another sweep: the
    /// launch stops after a sweep in which no element asked (or after
    /// [`Sweeps::count`]). Outside one, nothing.
    #[inline(always)]
    pub fn sweep_again(&self) {
        if let Some(s) = self.sweep {
            s.flags.set(s.asked_at(s.k), 1);
        }
    }

    /// Sets the element's value of `attr` (only the element's own: a
    /// computation reads its neighbours' values as another thread may be
    /// writing them; write to an attribute it does not read). Nothing
    /// unless `attr` is on the source kind, held by the mesh, and a user
    /// attribute or the position ([`POSITION`]; the core's other word,
    /// the input index, is the core's). In a sweeping launch, the carried
    /// attribute's value goes to the next sweep ([`Sweeps`]).
    #[inline(always)]
    pub fn set<T: Scalar, const N: usize>(&self, attr: &Attr<T, N>, value: [T; N]) {
        let kind = self.query.source();
        if attr.kind() != kind {
            return;
        }
        if let Some((s, j)) = self.carried(kind, attr.offset(), N, true) {
            pick(s.next, j).set(self.l, value[0].to_words()[0]);
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

impl<'a, B: Block> Element<'a, B> {
    /// In a sweeping launch, the carried pair of a one-component
    /// attribute of `kind` at word `offset` (`of_write`: as its `write`).
    #[inline(always)]
    fn carried(&self, kind: Kind, offset: u32, n: usize, of_write: bool) -> Option<(Sweep, usize)> {
        let s = self.sweep?;
        s.sweeps.pair(kind, offset, n, of_write).map(|j| (s, j))
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
    /// A sweeping computation's carried values and flags ([`Carried`]).
    carried: Option<Carried>,
    /// The gathered words ([`ElementComputation::GATHERED_WORDS`]): per
    /// vertex slot, `3 + words` of them.
    gathered: Option<(Shared<u32>, u32)>,
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
        let slots = cap.of(query.source()).max(1);
        let carried = needs.sweeping.then(|| Carried {
            buffers: [0; 4].map(|_| arena.alloc(slots)),
            launch: [0; 2].map(|_| arena.alloc(slots)),
            active: arena.alloc(slots),
            flags: arena.alloc(5),
        });
        let gathered = needs.gathered.map(|words| {
            let stride = 3 + words;
            (arena.alloc(stride * cap.vertices.max(1)), stride)
        });
        Windows {
            copy,
            rows: Rows { ends, entries },
            scratch,
            faces,
            carried,
            gathered,
        }
    }
}

/// The shared memory of a sweeping computation ([`Sweeps`]).
#[derive(Clone, Copy)]
struct Carried {
    /// Pair `j`'s two buffers: `2j` and `2j + 1` (sweep `k` reads buffer
    /// `k % 2` and writes the other).
    buffers: [Shared<u32>; 4],
    /// Per pair, the launch's values.
    launch: [Shared<u32>; 2],
    /// Per element slot, 1 where the element computes.
    active: Shared<u32>,
    /// Sweep `k`'s count at `k % 2`, its request for another sweep at
    /// `2 + k % 3` (zeroed a sweep ahead, read after its barrier: three
    /// turns so that no thread zeroes one another may still read).
    flags: Shared<u32>,
}

impl Carried {
    /// What sweep `k` reads and writes.
    #[inline(always)]
    fn sweep(&self, sweeps: Sweeps, k: u32) -> Sweep {
        let (r, w) = if k % 2 == 0 { (0, 1) } else { (1, 0) };
        Sweep {
            sweeps,
            values: [self.buffers[r], self.buffers[2 + r]],
            next: [self.buffers[w], self.buffers[2 + w]],
            launch: self.launch,
            flags: self.flags,
            k,
        }
    }
}

/// What a kernel builds besides the patch copy: the query's results and
/// the faces per edge.
#[derive(Clone, Copy)]
pub(super) struct Needs {
    results: bool,
    faces_per_edge: bool,
    sweeping: bool,
    /// Gathered words per vertex besides the positions, where gathered.
    gathered: Option<u32>,
}

impl Needs {
    /// What computation `C` reads.
    const fn of<C: ElementComputation>() -> Needs {
        Needs {
            results: C::QUERY_RESULTS,
            faces_per_edge: C::FACES_PER_EDGE,
            sweeping: C::SWEEPING,
            gathered: if C::SWEEPING || C::GATHERS {
                Some(C::GATHERED_WORDS)
            } else {
                None
            },
        }
    }

    /// The query's results only (the query export).
    pub(super) const RESULTS: Needs = Needs {
        results: true,
        faces_per_edge: false,
        sweeping: false,
        gathered: None,
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
        (
            Some(|element: &Element<'_, B>| c.active(element)),
            if C::SWEEPING { c.sweeps() } else { Sweeps::ONE },
            Some(c.gather()).filter(|g| g.words() <= C::GATHERED_WORDS),
        ),
        Computing(c),
    );
}

/// What [`each_element`] does with an element, inlined into its loop (a
/// call would keep the element in local memory on the GPU).
trait Visit<B: Block> {
    fn visit(&mut self, element: &Element<'_, B>);
}

/// A computation's [`ElementComputation::compute`].
struct Computing<'c, C>(&'c C);

impl<B: Block, C: ElementComputation> Visit<B> for Computing<'_, C> {
    #[inline(always)]
    fn visit(&mut self, element: &Element<'_, B>) {
        self.0.compute(element);
    }
}

/// A closure of the core's kernels.
struct Calling<F>(F);

impl<B: Block, F: FnMut(&Element<'_, B>)> Visit<B> for Calling<F> {
    #[inline(always)]
    fn visit(&mut self, element: &Element<'_, B>) {
        (self.0)(element);
    }
}

/// Calls `f` on every owned active element of `query`'s source kind in
/// patch slot `p` (nothing for a slot not in use), with the query's rows
/// built in shared memory and the faces per edge counted as `needs` says
/// ([`shared_bytes`], [`shared_bytes_of`]). With `screen`, a patch none of
/// whose elements `screen` accepts (seen without query results) returns
/// before building them, and `f` runs on the elements `screen` accepts
/// (asked again, with the query's results). With more than one of
/// `sweeps` (and the carried windows), `f` runs up to that many times per
/// element ([`Sweeps`], `screen` asked once per element), and the carried
/// values of the elements `screen` accepts are stored after.
#[inline(always)]
fn each_element<B: Block>(
    block: &B,
    arena: &mut SharedArena,
    mesh: &DynMesh,
    p: u32,
    (query, needs): (Query, Needs),
    (screen, sweeps, gather): (
        Option<impl Fn(&Element<'_, B>) -> bool>,
        Sweeps,
        Option<Gather>,
    ),
    mut f: impl Visit<B>,
) {
    if p >= mesh.num_patches {
        return;
    }
    let Windows {
        copy,
        rows,
        scratch,
        faces,
        carried,
        gathered,
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
    // The gathered words, once loaded (with the connectivity).
    let view = gathered.map(|(words, stride)| Gathered {
        words,
        stride,
        gather: gather.map_or(Gather::NONE, |g| g.held_by(mesh)),
    });
    let element =
        |l: u32, loaded: bool, faces: Option<Shared<u32>>, sweep: Option<Sweep>| Element {
            block,
            mesh,
            copy: &copy,
            rows: &rows,
            faces,
            query,
            results: loaded && needs.results,
            sweep,
            gathered: view.filter(|_| loaded),
            l,
        };
    let owned = |l: u32| copy.is_owned(kind, l) && copy.is_active(kind, l);
    if let Some(screen) = &screen {
        let mut any = false;
        block.for_each(copy.count(kind), |l| {
            if owned(l) {
                any |= screen(&element(l, false, None, None));
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
    if let Some(g) = view {
        // Every local vertex's position and gathered words, from its
        // owner (the attributes the mesh holds).
        let [(a, n), (b, m)] = g.gather.attrs;
        block.for_each(copy.count(Kind::Vertex), |v| {
            let at = copy
                .is_active(Kind::Vertex, v)
                .then(|| copy.owner_or_self(block, Kind::Vertex, v));
            let load = |word| at.map_or(0, |o| mesh.load_value(Kind::Vertex, o, word, 1)[0]);
            let base = g.stride * v;
            for i in 0..3 {
                g.words.set(base + i, load(i));
            }
            for i in 0..n {
                g.words.set(base + 3 + i, load(a + i));
            }
            for i in 0..m {
                g.words.set(base + 3 + n + i, load(b + i));
            }
        });
        block.sync();
    }
    let pairs = sweeps.pairs as usize;
    let held = |offset: u32| mesh.holds(&Attr::<u32, 1>::new(kind, offset));
    let sweeping = carried.filter(|_| {
        sweeps.count > 1
            && sweeps.kind == kind
            && (0..pairs).all(|j| held(sweeps.read[j]) && held(sweeps.write[j]))
    });
    if let Some(c) = sweeping {
        // The launch's carried values of every local element and the
        // positions of every local vertex, from their owners, and which
        // elements compute.
        block.for_each(copy.count(kind), |l| {
            let owner = copy
                .is_active(kind, l)
                .then(|| copy.owner_or_self(block, kind, l));
            for j in 0..2 {
                if j < pairs {
                    let value = owner.map_or(0, |o| mesh.load_value(kind, o, sweeps.read[j], 1)[0]);
                    c.buffers[2 * j].set(l, value);
                    c.launch[j].set(l, value);
                }
            }
            let computes = owned(l)
                && screen
                    .as_ref()
                    .is_none_or(|s| s(&element(l, true, faces, None)));
            c.active.set(l, u32::from(computes));
        });
        if block.thread_idx() == 0 {
            for i in 0..5 {
                c.flags.set(i, 0);
            }
        }
        block.sync();
    }
    // One sweep without carried values; with them, up to `sweeps.count`
    // (one call site of `f`, which inlines).
    let rounds = if sweeping.is_some() { sweeps.count } else { 1 };
    let mut turn = 0;
    for k in 0..rounds {
        turn = k;
        let sweep = sweeping.map(|c| c.sweep(sweeps, k));
        if let Some(s) = sweep.filter(|_| block.thread_idx() == 0) {
            s.flags.set(s.count_at(k + 1), 0);
            s.flags.set(s.asked_at(k + 1), 0);
        }
        block.for_each(copy.count(kind), |l| {
            let computes = match (sweeping, sweep) {
                (Some(c), Some(s)) => {
                    // An element that sets no value carries its last one.
                    for j in 0..2 {
                        if j < pairs {
                            pick(s.next, j).set(l, pick(s.values, j).get(l));
                        }
                    }
                    c.active.get(l) != 0
                }
                _ => {
                    owned(l)
                        && screen
                            .as_ref()
                            .is_none_or(|s| s(&element(l, true, faces, None)))
                }
            };
            if computes {
                f.visit(&element(l, true, faces, sweep));
            }
        });
        let Some(s) = sweep else {
            return;
        };
        block.sync();
        if s.flags.get(s.asked_at(k)) == 0 {
            break;
        }
    }
    let Some(c) = sweeping else {
        return;
    };
    let last = c.sweep(sweeps, turn);
    // The last sweep's count.
    if block.thread_idx() == 0 {
        mesh.add_stat(
            super::layout::stat::COUNTED,
            last.flags.get(last.count_at(turn)),
        );
    }
    block.for_each(copy.count(kind), |l| {
        if c.active.get(l) != 0 {
            for (j, &word) in sweeps.write.iter().enumerate().take(pairs) {
                let write = Attr::<u32, 1>::new(kind, word);
                if computation_writes(kind, &write) {
                    let value = pick(last.next, j).get(l);
                    mesh.store_attr_as(kind, &write, (p, l), [value]);
                }
            }
        }
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
        (screen, Sweeps::ONE, None),
        Calling(|e: &Element<'_, B>| {
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
        }),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A launch sweeps more than once only with distinct one-word
    /// attributes of one kind, at most two pairs.
    #[test]
    fn sweeps_need_distinct_attributes_of_one_kind() {
        let v = |offset| Attr::<f32, 1>::new(Kind::Vertex, offset);
        let e = Attr::<f32, 1>::new(Kind::Edge, 5);
        assert_eq!(Sweeps::new(8, &v(4), &v(5)).count(), 8);
        assert_eq!(Sweeps::new(0, &v(4), &v(5)).count(), 1);
        assert_eq!(Sweeps::new(8, &v(4), &v(4)).count(), 1);
        assert_eq!(Sweeps::new(8, &v(4), &e).count(), 1);
        let two = Sweeps::new(8, &v(4), &v(5)).and(&v(6), &v(7));
        assert_eq!(two.count(), 8);
        assert_eq!(Sweeps::new(8, &v(4), &v(5)).and(&v(5), &v(7)).count(), 1);
        assert_eq!(Sweeps::new(8, &v(4), &v(5)).and(&v(6), &e).count(), 1);
        assert_eq!(two.and(&v(8), &v(9)).count(), 1);
        assert_eq!(two.pair(Kind::Vertex, 6, 1, false), Some(1));
        assert_eq!(two.pair(Kind::Vertex, 7, 1, true), Some(1));
        assert_eq!(two.pair(Kind::Vertex, 4, 1, true), None);
        assert_eq!(two.pair(Kind::Vertex, 4, 3, false), None);
    }
}

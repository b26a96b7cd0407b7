//! One element of a per-element computation as the computation sees it:
//! its query results, attributes, counts and marks ([`Element`]).

use super::rows::Rows;
use super::sweeps::{Gathered, Sweep, pick};
use crate::attribute::{Attr, Scalar};
use crate::block::{Block, Shared};
use crate::dynamic::layout::{POSITION, computation_writes};
use crate::dynamic::patch::{DynMesh, PatchCopy};
use crate::layout::Kind;
use crate::query::Query;

/// One element of a per-element computation: its query results and
/// attributes. Neighbours are local indices of the query's target kind in
/// the element's patch; reads resolve them to their owners.
pub struct Element<'a, B: Block> {
    pub(super) block: &'a B,
    pub(super) mesh: &'a DynMesh,
    pub(super) copy: &'a PatchCopy,
    pub(super) rows: &'a Rows,
    /// Active faces per edge, when counted (`FACES_PER_EDGE`).
    pub(super) faces: Option<Shared<u32>>,
    pub(super) query: Query,
    /// Whether the query's results were built (`QUERY_RESULTS`).
    pub(super) results: bool,
    /// The carried values, in a sweeping launch.
    pub(super) sweep: Option<Sweep>,
    /// The gathered positions and attributes, where gathered.
    pub(super) gathered: Option<Gathered>,
    pub(super) l: u32,
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
    pub(super) fn result(&self, i: u32) -> u32 {
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
        self.mesh.add_stat(crate::dynamic::layout::stat::COUNTED, 1);
    }

    /// Marks the element's patch; the host takes the marked patches after
    /// the computation (`Rounds::take_marked_patches`), e.g. to visit
    /// only them and their neighbours next (`ForEach::for_each_in`). One
    /// global atomic per patch (the first mark; later calls only read).
    #[inline(always)]
    pub fn mark_patch(&self) {
        let p = self.copy.p;
        if self.mesh.flags.load(p) & crate::dynamic::layout::flag::MARKED == 0 {
            self.mesh
                .flags
                .fetch_or(p, crate::dynamic::layout::flag::MARKED);
        }
    }

    /// The element's value of `attr` (defaults unless `attr` is on the
    /// source kind and held by the mesh); for a carried `read` attribute
    /// in a sweeping launch, the launch's value ([`Sweeps`](super::Sweeps):
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
    /// attribute's value the previous sweep left ([`Sweeps`](super::Sweeps)).
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
    /// computation counts them ([`ElementComputation::FACES_PER_EDGE`](super::ElementComputation::FACES_PER_EDGE)),
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

    /// In a sweeping launch ([`Sweeps`](super::Sweeps)), asks for another sweep: the
    /// launch stops after a sweep in which no element asked (or after
    /// [`Sweeps::count`](super::Sweeps::count)). Outside one, nothing.
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
    /// attribute's value goes to the next sweep ([`Sweeps`](super::Sweeps)).
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
    pub(super) fn carried(
        &self,
        kind: Kind,
        offset: u32,
        n: usize,
        of_write: bool,
    ) -> Option<(Sweep, usize)> {
        let s = self.sweep?;
        s.sweeps.pair(kind, offset, n, of_write).map(|j| (s, j))
    }
}

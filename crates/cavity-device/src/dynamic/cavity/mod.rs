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

mod conflict;
pub mod criteria;
mod fill_in;
pub mod fills;
mod free;
mod register;
mod relations;
mod slots;

pub use conflict::{MAX_SET_ROUNDS, for_each_closure_vertex, independent_set, maximize, propagate};
pub use fill_in::fill;
pub use free::{
    build_free_lists, commit_counts, mark_fresh, reserved_copy_slot, take_slot, take_slots,
};
pub use register::{create, key, priority};
pub use relations::{build_edge_faces, build_relations, build_vertex_edges, cache_positions};
pub use slots::{
    CTL_CAVITIES, CTL_CHANGED, CTL_CURSOR, CTL_DEFERRED, CTL_FATAL, CTL_FILLED, CTL_FLAG, CTL_FREE,
    CTL_LEN, CTL_LOCKED, CTL_NEED, CTL_NO_ROOM, CTL_OK, CTL_PATCH, CTL_SCREENED, CTL_TAKEN,
    CTL_WAITING, Work,
};

use crate::attribute::{Attr, Scalar};
use crate::block::Block;
use crate::layout::Kind;

use super::layout::{ELEMENT_INPUT_INDEX, NEW_ELEMENT, VERTEX_CORE_ATTRS, core_attrs};
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
    /// Seed face; deletes the face, its three vertices and their stars
    /// (face collapse).
    FaceStar,
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
            Template::Face | Template::FaceStar => Kind::Face,
            Template::Custom(kind) => kind,
        }
    }

    /// Whether the template may delete vertices.
    #[inline(always)]
    pub fn deletes_vertices(self) -> bool {
        matches!(
            self,
            Template::EdgeStar | Template::VertexStar | Template::FaceStar | Template::Custom(_)
        )
    }

    /// Calls `delete(kind, local)` for the elements the cavity of `seed`
    /// deletes directly (what lies on them is deleted with them): the seed
    /// edge, the seed edge and its vertices, the seed vertex, the seed
    /// face, or the seed face and its vertices; for [`Template::Custom`]
    /// the seed itself.
    #[inline(always)]
    pub fn deleted(self, copy: &PatchCopy, seed: u32, mut delete: impl FnMut(Kind, u32)) {
        delete(self.seed_kind(), seed);
        match self {
            Template::EdgeStar => {
                for v in copy.edge_vertices(seed) {
                    delete(Kind::Vertex, v);
                }
            }
            Template::FaceStar => {
                for v in copy.face_vertices(seed) {
                    delete(Kind::Vertex, v);
                }
            }
            _ => {}
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
    /// the position), as `f32`: read from the owner's slot, or for a
    /// not-owned vertex from the slot its ribbon entry names (attributes a
    /// dynamic kernel changes are only changed by the owner, and moved on
    /// migration).
    #[inline(always)]
    pub fn vertex_attr(&self, v: u32, i: u32) -> f32 {
        let at = self.owner_of(Kind::Vertex, v);
        f32::from_bits(
            self.mesh
                .vertex_attrs
                .load(self.mesh.attr_at(Kind::Vertex, at, i)),
        )
    }

    /// The value of `attr` of local element `l` (of the attribute's kind),
    /// read from its owner as [`Ctx::vertex_attr`] does. Defaults for a
    /// handle the mesh does not hold.
    #[inline(always)]
    pub fn attr<T: Scalar, const N: usize>(&self, attr: &Attr<T, N>, l: u32) -> [T; N] {
        attr.kind().specialize(|kind| {
            if l >= self.copy.count(kind) {
                return [T::default(); N];
            }
            self.mesh.load_attr_as(kind, attr, self.owner_of(kind, l))
        })
    }

    /// The owner patch and owner-local index of local element `l` of
    /// `kind` (the patch itself when it owns it, or when the ribbon names
    /// no owner).
    #[inline(always)]
    fn owner_of(&self, kind: Kind, l: u32) -> (u32, u32) {
        self.copy.owner_or_self(self.block, kind, l)
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
    /// [`fills::star_fill`] does): the cavities of a pass draw
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

    /// Adds a vertex with core attribute values `attrs` (position first;
    /// the core attributes not given are set to all-ones bits, the user's
    /// attributes to zero, see [`FillIn::set_attr`]); returns its local
    /// index, or `None` past `MAX_NEW`.
    pub fn add_vertex(&mut self, attrs: &[f32]) -> Option<u32> {
        let v = self.slot(Kind::Vertex)?;
        let copy = self.ctx.copy;
        let mesh = self.ctx.mesh;
        for i in 0..copy.cap.vertex_attrs {
            let x = match attrs.get(i as usize) {
                Some(x) => x.to_bits(),
                None if i < VERTEX_CORE_ATTRS => u32::MAX,
                None => 0,
            };
            mesh.vertex_attrs
                .store(mesh.attr_at(Kind::Vertex, (copy.p, v), i), x);
            if i < 3 {
                self.ctx.work.positions.set(3 * v + i, x);
            }
        }
        Some(v)
    }

    /// Adds the edge `a`–`b`; returns its local index. Its attributes
    /// start at zero.
    pub fn add_edge(&mut self, a: u32, b: u32) -> Option<u32> {
        let e = self.slot(Kind::Edge)?;
        self.ctx.copy.ev.set(2 * e, a as u16);
        self.ctx.copy.ev.set(2 * e + 1, b as u16);
        self.clear_attrs(Kind::Edge, e);
        Some(e)
    }

    /// Adds the face bounded by three half-edges in order (each ends where
    /// the next starts); returns its local index. Its attributes start at
    /// zero.
    pub fn add_face(&mut self, h: [HalfEdge; 3]) -> Option<u32> {
        let f = self.slot(Kind::Face)?;
        for (i, x) in h.iter().enumerate() {
            self.ctx
                .copy
                .fe
                .set(3 * f + i as u32, ((x.edge << 1) | x.reversed as u32) as u16);
        }
        self.clear_attrs(Kind::Face, f);
        Some(f)
    }

    /// Sets the attribute words of a new edge or face `l`: the input index
    /// to [`NEW_ELEMENT`], the user's attributes to zero.
    fn clear_attrs(&self, kind: Kind, l: u32) {
        let (mesh, p) = (self.ctx.mesh, self.ctx.copy.p);
        let words = mesh.attrs(kind);
        for i in 0..mesh.cap.attr_stride(kind) {
            let x = if i == ELEMENT_INPUT_INDEX {
                NEW_ELEMENT
            } else {
                0
            };
            words.store(mesh.attr_at(kind, (p, l), i), x);
        }
    }

    /// The `i`-th element of `kind` this fill-in added so far (in the order
    /// added), or `None` past the last.
    pub fn added(&self, kind: Kind, i: u32) -> Option<u32> {
        let k = kind as usize;
        let base = self.base?;
        (i < self.used[k]).then(|| self.ctx.work.free[k].get(base[k] + i) as u32)
    }

    /// Sets `attr` of element `l`, which this fill-in added (the only
    /// elements a fill-in writes attributes of: the others may be read by
    /// neighbours meanwhile) and only user attributes (positions are
    /// given to [`FillIn::add_vertex`]). Returns whether it was set:
    /// `false` for an element the fill-in did not add, a core word or a
    /// handle the mesh does not hold.
    pub fn set_attr<T: Scalar, const N: usize>(
        &mut self,
        attr: &Attr<T, N>,
        l: u32,
        value: [T; N],
    ) -> bool {
        attr.kind().specialize(|kind| {
            let mut added = (0..self.used[kind as usize]).filter_map(|i| self.added(kind, i));
            let ok = attr.offset() >= core_attrs(kind) && added.any(|x| x == l);
            if ok {
                let mesh = self.ctx.mesh;
                mesh.store_attr_as(kind, attr, (self.ctx.copy.p, l), value);
            }
            ok && self.ctx.mesh.holds(attr)
        })
    }

    /// Sets user attribute `attr` of element `l`, which the fill-in's
    /// patch owns (the cavity's elements and its boundary's, held
    /// exclusively while the fill-in runs): for values that describe the
    /// element's surroundings, as remeshing's stored valences. Patches
    /// holding `l` as a ribbon copy may read the old or the new value
    /// meanwhile (a value of several words may read torn): a hint for
    /// their cavity creation, which their own fill-in must not trust.
    /// Returns whether it was set: `false` for an element the patch does
    /// not own, a core word or a handle the mesh does not hold.
    pub fn set_owned_attr<T: Scalar, const N: usize>(
        &mut self,
        attr: &Attr<T, N>,
        l: u32,
        value: [T; N],
    ) -> bool {
        let (copy, mesh) = (self.ctx.copy, self.ctx.mesh);
        attr.kind().specialize(|kind| {
            let ok =
                attr.offset() >= core_attrs(kind) && l < copy.count(kind) && copy.is_owned(kind, l);
            if ok {
                mesh.store_attr_as(kind, attr, (copy.p, l), value);
            }
            ok && mesh.holds(attr)
        })
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

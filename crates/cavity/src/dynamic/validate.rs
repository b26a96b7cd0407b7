//! Validation: [`DynamicMesh::validate`], every invariant the dynamic
//! kernels rely on (the oracle of the dynamic tests).

use std::collections::{HashMap, HashSet};

use cavity_device::dynamic::hash::{self, EMPTY};
use cavity_device::dynamic::layout::STASH_SIZE;
use cavity_device::dynamic::queue;
use cavity_device::layout::{FE_REVERSED, Kind};

use crate::components::ConcurrentSets;

use super::export::Exported;
use super::tables::Tables;
use super::{DynamicMesh, Id, ValidationError, ValidationProblem};

/// A validation error about `element` (or the patch) of `patch`.
fn fail<T>(
    patch: u32,
    element: Option<(Kind, u32)>,
    problem: ValidationProblem,
) -> Result<T, ValidationError> {
    Err(ValidationError {
        patch,
        element,
        problem,
    })
}

impl DynamicMesh {
    /// Checks every invariant of the layout over patches `0..num_patches`
    /// (the patches themselves within the patch slots): counts within
    /// capacity; stashes of at most [`STASH_SIZE`] distinct other patches in
    /// use; the scheduler's patch count equal to `num_patches`; no mask bit
    /// at or above a high-water mark; owned elements
    /// active; exactly one reachable ribbon hash entry per active not-owned
    /// element and none for anything else, naming an active owned element
    /// of the stash patch (one hop) and, for edges and faces, near what
    /// that patch does not own (its slot is not reused within a
    /// processing); no dangling references, FE forming
    /// cycles, no repeated vertex in an edge or face; no element held twice
    /// in a patch; ribbon copies equal to their owners (an edge's vertices
    /// in order, a face's edges and reversed bits); every face incident to
    /// an owned vertex or edge active in the owner's patch; no two owned
    /// edges or faces with the same vertices; every edge with two faces
    /// traversed in opposite directions; and, with `expect_manifold`, at
    /// most two faces per edge and one fan per vertex.
    ///
    /// # Errors
    /// The first [`ValidationError`] found, in the order above.
    pub fn validate(&self, expect_manifold: bool) -> Result<(), ValidationError> {
        self.validate_as(expect_manifold, true)
    }

    /// [`DynamicMesh::validate`] without the orientation check (every edge
    /// with two faces traversed in opposite directions), for a mesh whose
    /// input was not consistently oriented.
    ///
    /// # Errors
    /// As [`DynamicMesh::validate`].
    pub fn validate_unoriented(&self, expect_manifold: bool) -> Result<(), ValidationError> {
        self.validate_as(expect_manifold, false)
    }

    /// [`DynamicMesh::validate`], checking the orientation when
    /// `expect_oriented`.
    fn validate_as(
        &self,
        expect_manifold: bool,
        expect_oriented: bool,
    ) -> Result<(), ValidationError> {
        if self.num_patches > self.cap.patches {
            return fail(
                self.num_patches - 1,
                None,
                ValidationProblem::PatchSlots {
                    slots: self.cap.patches,
                },
            );
        }
        let counted = self.queue_state[queue::PATCHES as usize];
        if counted != self.num_patches {
            return fail(
                self.num_patches.saturating_sub(1),
                None,
                ValidationProblem::PatchCount { counted },
            );
        }
        let tables = Tables::new(self);
        for p in 0..self.num_patches {
            self.check_storage(p, &tables)?;
        }
        for p in 0..self.num_patches {
            self.check_references(p)?;
        }
        let near: Vec<Vec<bool>> = (0..self.num_patches)
            .map(|p| self.near_not_owned(p))
            .collect();
        for p in 0..self.num_patches {
            self.check_named(p, &tables, &near)?;
        }
        let ids = (0..self.num_patches)
            .map(|p| self.check_copies(p, &tables))
            .collect::<Result<Vec<_>, _>>()?;
        let ex = self.collect();
        self.check_completeness(&ex, &ids, &tables)?;
        self.check_global(&ex, &tables, expect_manifold, expect_oriented)
    }

    /// Counts, stash, masks and ribbon hash entries of patch `p`.
    fn check_storage(&self, p: u32, tables: &Tables) -> Result<(), ValidationError> {
        use ValidationProblem as V;
        for kind in Kind::ALL {
            let (count, capacity) = (self.count(p, kind), self.cap.of(kind));
            if count > capacity {
                return fail(p, None, V::OverCapacity { count, capacity });
            }
        }
        let len = self.stash_len(p);
        if len > STASH_SIZE {
            return fail(p, None, V::StashLength { len });
        }
        let mut seen = HashSet::new();
        for index in 0..len {
            let value = self.stash_entry(p, index);
            if value >= self.num_patches || value == p || !seen.insert(value) {
                return fail(p, None, V::StashEntry { index, value });
            }
        }
        for kind in Kind::ALL {
            for l in 0..self.cap.of(kind) {
                let (owned, active) = (self.is_owned(p, kind, l), self.is_active(p, kind, l));
                if l >= self.count(p, kind) && (owned || active) {
                    return fail(p, Some((kind, l)), V::MaskAboveCount { owned });
                }
                if owned && !active {
                    return fail(p, Some((kind, l)), V::OwnedInactive);
                }
            }
        }
        for kind in Kind::ALL {
            let count = self.count(p, kind);
            let start = self.table_start(p, kind);
            let mut keys = vec![0u32; count as usize];
            for &e in &self.hash[start..][..self.cap.table_words(kind) as usize] {
                if e == EMPTY {
                    continue;
                }
                let k = hash::key_of(e);
                if k >= count || !self.is_active(p, kind, k) || self.is_owned(p, kind, k) {
                    return fail(p, Some((kind, k)), V::StaleEntry { entry: e });
                }
                keys[k as usize] += 1;
            }
            for l in self.active(p, kind).filter(|&l| !self.is_owned(p, kind, l)) {
                let at = Some((kind, l));
                match keys[l as usize] {
                    0 => return fail(p, at, V::MissingEntry),
                    1 => {}
                    entries => return fail(p, at, V::DuplicateEntry { entries }),
                }
                let table = tables.of(p, kind);
                let Some((index, owner_local)) = hash::lookup(table, l) else {
                    return fail(p, at, V::UnreachableEntry);
                };
                if index >= len {
                    return fail(p, at, V::BadStashIndex { index, len });
                }
                let owner = self.stash_entry(p, index);
                if owner_local >= self.count(owner, kind)
                    || !self.is_owned(owner, kind, owner_local)
                    || !self.is_active(owner, kind, owner_local)
                {
                    return fail(p, at, V::OwnerNotOwned { owner, owner_local });
                }
            }
        }
        Ok(())
    }

    /// Per local vertex of patch `p`, whether it lies on a face that shares
    /// a vertex with a face touching an element `p` does not own (the
    /// face, one of its edges or vertices): the vertices of the elements a
    /// processing of `p` may not reuse the slots of (an edge or face is
    /// reusable when one of its vertices is not near, `cavity::mark_fresh`).
    fn near_not_owned(&self, p: u32) -> Vec<bool> {
        let faces: Vec<u32> = self.active(p, Kind::Face).collect();
        let owned = |kind, l| self.is_owned(p, kind, l);
        let mut touching = vec![false; self.count(p, Kind::Vertex) as usize];
        for &f in &faces {
            let vs = self.face_vertices(p, f);
            let touches = !owned(Kind::Face, f)
                || (0..3).any(|i| !owned(Kind::Edge, (self.fe_entry(p, f, i) >> 1) as u32))
                || vs.iter().any(|&v| !owned(Kind::Vertex, v));
            if touches {
                vs.iter().for_each(|&v| touching[v as usize] = true);
            }
        }
        let mut near = touching.clone();
        for &f in &faces {
            let vs = self.face_vertices(p, f);
            if vs.iter().any(|&v| touching[v as usize]) {
                vs.iter().for_each(|&v| near[v as usize] = true);
            }
        }
        near
    }

    /// The ribbon copies of edges and faces in patch `p` name only
    /// elements their owners may not reuse the slots of within a
    /// processing (`near`: per patch, [`DynamicMesh::near_not_owned`];
    /// vertex slots are not reused).
    fn check_named(
        &self,
        p: u32,
        tables: &Tables,
        near: &[Vec<bool>],
    ) -> Result<(), ValidationError> {
        for kind in [Kind::Edge, Kind::Face] {
            for l in self.active(p, kind).filter(|&l| !self.is_owned(p, kind, l)) {
                let (owner, owner_local) = self.id(tables, p, kind, l);
                let vertices = match kind {
                    Kind::Edge => (0..2)
                        .map(|i| self.ev_entry(owner, owner_local, i))
                        .collect(),
                    _ => self.face_vertices(owner, owner_local).to_vec(),
                };
                let near = &near[owner as usize];
                if !vertices
                    .iter()
                    .all(|&v| near.get(v as usize).copied().unwrap_or(true))
                {
                    return fail(
                        p,
                        Some((kind, l)),
                        ValidationProblem::NamedInner { owner, owner_local },
                    );
                }
            }
        }
        Ok(())
    }

    /// References of active edges and faces of patch `p`: below the
    /// high-water marks, to active elements; faces' FE forming cycles; no
    /// repeated local vertex.
    fn check_references(&self, p: u32) -> Result<(), ValidationError> {
        use ValidationProblem as V;
        let live = |kind: Kind, index: u32| {
            if index < self.count(p, kind) && self.is_active(p, kind, index) {
                Ok(())
            } else {
                Err(V::Dangling { kind, index })
            }
        };
        for e in self.active(p, Kind::Edge) {
            let at = Some((Kind::Edge, e));
            let [a, b] = self.directed_edge(p, e, false);
            for v in [a, b] {
                live(Kind::Vertex, v).or_else(|problem| fail(p, at, problem))?;
            }
            if a == b {
                return fail(p, at, V::Degenerate);
            }
        }
        for f in self.active(p, Kind::Face) {
            let at = Some((Kind::Face, f));
            let sides = [0, 1, 2].map(|i| {
                let e = self.fe_entry(p, f, i);
                ((e >> 1) as u32, e & FE_REVERSED != 0)
            });
            for (e, _) in sides {
                live(Kind::Edge, e).or_else(|problem| fail(p, at, problem))?;
            }
            let [d0, d1, d2] = sides.map(|(e, r)| self.directed_edge(p, e, r));
            for (corner, (d, next)) in [(d0, d1), (d1, d2), (d2, d0)].into_iter().enumerate() {
                if d[1] != next[0] {
                    return fail(
                        p,
                        at,
                        V::OpenFace {
                            corner: corner as u32,
                        },
                    );
                }
            }
            if d0[0] == d1[0] || d1[0] == d2[0] || d2[0] == d0[0] {
                return fail(p, at, V::Degenerate);
            }
        }
        Ok(())
    }

    /// The identity of an active element whose storage passed
    /// [`DynamicMesh::check_storage`].
    fn id(&self, tables: &Tables, p: u32, kind: Kind, local: u32) -> Id {
        self.owner_in(tables.of(p, kind), p, kind, local)
            .expect("checked active element resolves to its owner")
    }

    /// An active edge's vertex identities in EV order.
    fn edge_ids(&self, tables: &Tables, p: u32, e: u32) -> [Id; 2] {
        self.directed_edge(p, e, false)
            .map(|v| self.id(tables, p, Kind::Vertex, v))
    }

    /// An active face's edge identities with their reversed bits.
    fn face_sides(&self, tables: &Tables, p: u32, f: u32) -> [(Id, bool); 3] {
        [0, 1, 2].map(|i| {
            let e = self.fe_entry(p, f, i);
            (
                self.id(tables, p, Kind::Edge, (e >> 1) as u32),
                e & FE_REVERSED != 0,
            )
        })
    }

    /// No element held twice in patch `p`, and its ribbon copies equal to
    /// their owners. Returns the identities of the patch's active faces.
    fn check_copies(&self, p: u32, tables: &Tables) -> Result<HashSet<Id>, ValidationError> {
        use ValidationProblem as V;
        let mut faces = HashSet::new();
        for kind in Kind::ALL {
            let mut held: HashMap<Id, u32> = HashMap::new();
            for l in self.active(p, kind) {
                let id = self.id(tables, p, kind, l);
                if let Some(&other) = held.get(&id) {
                    return fail(p, Some((kind, l)), V::DuplicateCopy { other });
                }
                held.insert(id, l);
                if kind == Kind::Face {
                    faces.insert(id);
                }
            }
        }
        let mismatch = |kind: Kind, l: u32, (owner, owner_local): Id| {
            fail(p, Some((kind, l)), V::RibbonMismatch { owner, owner_local })
        };
        for e in self.active(p, Kind::Edge) {
            let (q, l) = self.id(tables, p, Kind::Edge, e);
            if q != p && self.edge_ids(tables, p, e) != self.edge_ids(tables, q, l) {
                return mismatch(Kind::Edge, e, (q, l));
            }
        }
        for f in self.active(p, Kind::Face) {
            let (q, l) = self.id(tables, p, Kind::Face, f);
            if q != p && self.face_sides(tables, p, f) != self.face_sides(tables, q, l) {
                return mismatch(Kind::Face, f, (q, l));
            }
        }
        Ok(faces)
    }

    /// Every active owned face is active in the patches owning its vertices
    /// and edges (`faces[p]`: identities of the faces active in `p`).
    fn check_completeness(
        &self,
        ex: &Exported,
        faces: &[HashSet<Id>],
        tables: &Tables,
    ) -> Result<(), ValidationError> {
        for (&(q, f), corners) in ex.face_ids.iter().zip(&ex.mesh.faces) {
            let vertices = corners.map(|v| (Kind::Vertex, ex.vertex_ids[v as usize]));
            let edges = self
                .face_sides(tables, q, f)
                .map(|(id, _)| (Kind::Edge, id));
            for (kind, (owner, l)) in vertices.into_iter().chain(edges) {
                if !faces[owner as usize].contains(&(q, f)) {
                    return fail(
                        owner,
                        Some((kind, l)),
                        ValidationProblem::MissingRibbonFace {
                            face_patch: q,
                            face_local: f,
                        },
                    );
                }
            }
        }
        Ok(())
    }

    /// Duplicate edges and faces, (with `expect_oriented`) orientation and
    /// (with `expect_manifold`) manifoldness, over the export.
    fn check_global(
        &self,
        ex: &Exported,
        tables: &Tables,
        expect_manifold: bool,
        expect_oriented: bool,
    ) -> Result<(), ValidationError> {
        use ValidationProblem as V;
        let vertex_index: HashMap<Id, u32> = ex
            .vertex_ids
            .iter()
            .enumerate()
            .map(|(i, &id)| (id, i as u32))
            .collect();
        let mut edges: HashMap<[u32; 2], Id> = HashMap::new();
        for p in 0..self.num_patches {
            for e in self.owned_active(p, Kind::Edge) {
                let [a, b] = self.edge_ids(tables, p, e).map(|id| vertex_index[&id]);
                if let Some(&(other_patch, other_local)) = edges.get(&[a.min(b), a.max(b)]) {
                    return fail(
                        p,
                        Some((Kind::Edge, e)),
                        V::DuplicateElement {
                            other_patch,
                            other_local,
                        },
                    );
                }
                edges.insert([a.min(b), a.max(b)], (p, e));
            }
        }
        let mut faces: HashMap<[u32; 3], Id> = HashMap::new();
        for (&(p, f), t) in ex.face_ids.iter().zip(&ex.mesh.faces) {
            let mut key = *t;
            key.sort_unstable();
            if let Some(&(other_patch, other_local)) = faces.get(&key) {
                return fail(
                    p,
                    Some((Kind::Face, f)),
                    V::DuplicateElement {
                        other_patch,
                        other_local,
                    },
                );
            }
            faces.insert(key, (p, f));
        }

        // Face sides grouped by edge: (low vertex, high vertex, face,
        // forward = traversed from low to high).
        let mut sides: Vec<(u32, u32, u32, bool)> = Vec::with_capacity(3 * ex.mesh.faces.len());
        for (i, t) in ex.mesh.faces.iter().enumerate() {
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                sides.push((a.min(b), a.max(b), i as u32, a < b));
            }
        }
        sides.sort_unstable();
        let fans = ConcurrentSets::new(3 * ex.mesh.faces.len());
        let corner = |f: u32, v: u32| {
            let t = ex.mesh.faces[f as usize];
            3 * f + t.iter().position(|&x| x == v).expect("vertex of face") as u32
        };
        for run in sides.chunk_by(|x, y| (x.0, x.1) == (y.0, y.1)) {
            let (a, b) = (run[0].0, run[0].1);
            let (p, e) = edges[&[a, b]];
            let at = Some((Kind::Edge, e));
            if let [(_, _, f, forward_f), (_, _, g, forward_g)] = *run {
                if expect_oriented && forward_f == forward_g {
                    return fail(p, at, V::Orientation);
                }
                for v in [a, b] {
                    fans.union(corner(f, v), corner(g, v));
                }
            } else if expect_manifold && run.len() > 2 {
                return fail(p, at, V::NonManifoldEdge { faces: run.len() });
            }
        }
        if expect_manifold {
            let mut roots: Vec<(u32, u32)> = (0..3 * ex.mesh.faces.len())
                .map(|c| (ex.mesh.faces[c / 3][c % 3], fans.find(c as u32)))
                .collect();
            roots.sort_unstable();
            roots.dedup();
            for run in roots.chunk_by(|x, y| x.0 == y.0) {
                if run.len() > 1 {
                    let (p, v) = ex.vertex_ids[run[0].0 as usize];
                    return fail(
                        p,
                        Some((Kind::Vertex, v)),
                        V::NonManifoldVertex { fans: run.len() },
                    );
                }
            }
        }
        Ok(())
    }
}

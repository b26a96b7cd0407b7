//! What the collapse's predicates read of a mesh ([`Star`]): the
//! tetrahedra around each vertex (its star), each tetrahedron's vertices,
//! the positions, whether a vertex is on the boundary, and the value of
//! the mesh's per-vertex scalar field. The parallel
//! kernels read it from the vertex-tetrahedron relation of the iteration
//! (compressed rows); the sequential version from its own lists, which it
//! updates after every collapse.

/// A tetrahedral mesh as the predicates read it.
pub trait Star {
    /// The number of tetrahedra around vertex `v`.
    fn star_len(&self, v: u32) -> u32;
    /// The `i`-th tetrahedron around `v` (`i < star_len(v)`).
    fn star_tet(&self, v: u32, i: u32) -> u32;
    /// Tetrahedron `t`'s vertices, positively oriented.
    fn tet(&self, t: u32) -> [u32; 4];
    /// Vertex `v`'s position, in `f64`.
    fn position(&self, v: u32) -> [f64; 3];
    /// Whether `v` is a vertex of a boundary triangle (one in a single
    /// tetrahedron).
    fn on_boundary(&self, v: u32) -> bool;
    /// The per-vertex scalar field's value at `v` (0 for a mesh without
    /// one).
    fn value(&self, v: u32) -> f64;
    /// Whether the face of tetrahedron `t` opposite its corner `k` (`k <
    /// 4`) is a boundary triangle: a face of `t` only. Provided by
    /// counting the tetrahedra around the face; a mesh that has the
    /// boundary faces marked (the kernels' `iteration::MarkBoundary`)
    /// reads the mark instead, so that the boundary tests below read one
    /// star rather than one per tetrahedron of it.
    fn is_boundary_face(&self, t: u32, k: usize) -> bool
    where
        Self: Sized,
    {
        let c = self.tet(t);
        face_tets(self, [c[(k + 1) % 4], c[(k + 2) % 4], c[(k + 3) % 4]]) == 1
    }

    /// Whether `a` and `x` are joined by an edge. Provided by reading the
    /// star of `a`; a mesh with its edges in sorted rows (the kernels'
    /// `iteration::FillEdges`) searches the row instead.
    fn has_edge(&self, a: u32, x: u32) -> bool
    where
        Self: Sized,
    {
        star_has(self, a, x)
    }
}

/// Whether a tetrahedron around `a` has vertex `x` (for `x ≠ a`: whether
/// `ax` is an edge), read from the star of `a`.
#[inline(always)]
pub fn star_has<S: Star>(s: &S, a: u32, x: u32) -> bool {
    let mut i = 0;
    while i < s.star_len(a) {
        if has(s.tet(s.star_tet(a, i)), x) {
            return true;
        }
        i += 1;
    }
    false
}

/// Whether tetrahedron `t` (its vertices) has vertex `v`.
#[inline(always)]
pub fn has(t: [u32; 4], v: u32) -> bool {
    t[0] == v || t[1] == v || t[2] == v || t[3] == v
}

/// The vertex of triangle `f` with the smallest star, and the other two:
/// where a search for the tetrahedra with `f` reads least.
#[inline(always)]
pub fn smallest_star<S: Star>(s: &S, f: [u32; 3]) -> (u32, [u32; 2]) {
    let (mut v, mut others) = (f[0], [f[1], f[2]]);
    if s.star_len(f[1]) < s.star_len(v) {
        (v, others) = (f[1], [f[0], f[2]]);
    }
    if s.star_len(f[2]) < s.star_len(v) {
        (v, others) = (f[2], [f[0], f[1]]);
    }
    (v, others)
}

/// The number of tetrahedra with triangle `f` as a face (1 on the
/// boundary, 2 inside a manifold mesh), read from the smallest of its
/// vertices' stars ([`smallest_star`]).
#[inline(always)]
pub fn face_tets<S: Star>(s: &S, f: [u32; 3]) -> u32 {
    let (v, others) = smallest_star(s, f);
    count_with(s, v, [others[0], others[1], u32::MAX])
}

/// The number of tetrahedra around `a` that also have every vertex of
/// `others` (`u32::MAX` entries are ignored).
#[inline(always)]
pub fn count_with<S: Star>(s: &S, a: u32, others: [u32; 3]) -> u32 {
    let mut count = 0;
    let mut i = 0;
    while i < s.star_len(a) {
        let t = s.tet(s.star_tet(a, i));
        if (others[0] == u32::MAX || has(t, others[0]))
            && (others[1] == u32::MAX || has(t, others[1]))
            && (others[2] == u32::MAX || has(t, others[2]))
        {
            count += 1;
        }
        i += 1;
    }
    count
}

/// Whether triangle `(a, b, c)` is a boundary triangle: a face of
/// exactly one tetrahedron ([`Star::is_boundary_face`] of the first
/// tetrahedron around `a` that has `b` and `c`).
#[inline(always)]
pub fn is_boundary_triangle<S: Star>(s: &S, a: u32, b: u32, c: u32) -> bool {
    let mut i = 0;
    while i < s.star_len(a) {
        let t = s.star_tet(a, i);
        let q = s.tet(t);
        if has(q, b) && has(q, c) {
            let mut k = 0;
            while k < 3 && (q[k] == a || q[k] == b || q[k] == c) {
                k += 1;
            }
            return s.is_boundary_face(t, k);
        }
        i += 1;
    }
    false
}

/// Whether edge `(a, b)` is a boundary edge: an edge of a boundary
/// triangle (of a face, opposite a corner other than `a` and `b`, of a
/// tetrahedron around `a` that has `b`).
#[inline(always)]
pub fn is_boundary_edge<S: Star>(s: &S, a: u32, b: u32) -> bool {
    if !s.on_boundary(a) || !s.on_boundary(b) {
        return false;
    }
    let mut i = 0;
    while i < s.star_len(a) {
        let t = s.star_tet(a, i);
        let q = s.tet(t);
        if has(q, b) {
            let mut k = 0;
            while k < 4 {
                if q[k] != a && q[k] != b && s.is_boundary_face(t, k) {
                    return true;
                }
                k += 1;
            }
        }
        i += 1;
    }
    false
}

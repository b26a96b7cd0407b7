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
}

/// Whether tetrahedron `t` (its vertices) has vertex `v`.
#[inline(always)]
pub fn has(t: [u32; 4], v: u32) -> bool {
    t[0] == v || t[1] == v || t[2] == v || t[3] == v
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
/// exactly one tetrahedron.
#[inline(always)]
pub fn is_boundary_triangle<S: Star>(s: &S, a: u32, b: u32, c: u32) -> bool {
    count_with(s, a, [b, c, u32::MAX]) == 1
}

/// Whether edge `(a, b)` is a boundary edge: an edge of a boundary
/// triangle.
#[inline(always)]
pub fn is_boundary_edge<S: Star>(s: &S, a: u32, b: u32) -> bool {
    if !s.on_boundary(a) || !s.on_boundary(b) {
        return false;
    }
    let mut i = 0;
    while i < s.star_len(a) {
        let t = s.tet(s.star_tet(a, i));
        if has(t, b) {
            let mut k = 0;
            while k < 4 {
                let c = t[k];
                if c != a && c != b && is_boundary_triangle(s, a, b, c) {
                    return true;
                }
                k += 1;
            }
        }
        i += 1;
    }
    false
}

//! The link condition (Dey, Edelsbrunner, Guha and Nekhayev, "Topology
//! preserving edge contraction", 1999; the paper's section 2.1 and
//! fig. 2): collapsing edge `ab` of a tetrahedral mesh keeps its
//! topological type when `Lk(a) ∩ Lk(b) = Lk(ab)`. The boundary is closed
//! by a vertex at infinity `ω` joined to every boundary simplex, so the
//! condition also keeps the boundary surface's topology (Dey et al.,
//! section 4).
//!
//! In a tetrahedral mesh `Lk(a)` holds the triangles opposite `a` in its
//! tetrahedra, their edges and vertices, and with `ω`: `ω`, the edges
//! `xω` of the boundary edges `ax`, the triangles `xyω` of the boundary
//! triangles `axy`. `Lk(ab)` holds the edges `xy` opposite `ab` in its
//! tetrahedra, their vertices, and `xω` for each boundary triangle `abx`
//! (and `ω` when `ab` is a boundary edge). It never holds a triangle.

use crate::star::{Star, count_with, has, is_boundary_edge, is_boundary_triangle};

/// The three vertices of `t` other than `a`.
#[inline(always)]
fn opposite(t: [u32; 4], a: u32) -> [u32; 3] {
    let mut out = [0; 3];
    let mut k = 0;
    let mut i = 0;
    while i < 4 {
        if t[i] != a && k < 3 {
            out[k] = t[i];
            k += 1;
        }
        i += 1;
    }
    out
}

/// The most vertices other than `a` and `b` of the tetrahedra around edge
/// `ab` (`Lk(ab)`'s vertices without `ω`) that [`link_condition`] holds:
/// their 120 pairs index the bits of a `u128`. Past it, it tests every
/// simplex from the mesh ([`link_condition_in_mesh`]).
pub const MAX_RING: usize = 16;

/// The vertices other than `a` and `b` of the tetrahedra around edge `ab`
/// (the vertices of `Lk(ab)` without `ω`), each once.
struct Ring {
    vertices: [u32; MAX_RING],
    len: usize,
}

impl Ring {
    /// The ring of edge `(a, b)`, or `None` past [`MAX_RING`] vertices.
    #[inline(always)]
    fn of<S: Star>(s: &S, a: u32, b: u32) -> Option<Ring> {
        let mut r = Ring {
            vertices: [u32::MAX; MAX_RING],
            len: 0,
        };
        let mut i = 0;
        while i < s.star_len(a) {
            let t = s.tet(s.star_tet(a, i));
            i += 1;
            if !has(t, b) {
                continue;
            }
            for x in t {
                if x != a && x != b && r.index(x).is_none() {
                    if r.len == MAX_RING {
                        return None;
                    }
                    r.vertices[r.len] = x;
                    r.len += 1;
                }
            }
        }
        Some(r)
    }

    /// `x`'s place in the ring.
    #[inline(always)]
    fn index(&self, x: u32) -> Option<usize> {
        let mut k = 0;
        while k < self.len {
            if self.vertices[k] == x {
                return Some(k);
            }
            k += 1;
        }
        None
    }

    /// The bits of the pairs of ring vertices in tetrahedron `t` (bit
    /// `j (j - 1) / 2 + i` for the vertices at places `i < j`).
    #[inline(always)]
    fn pairs(&self, t: [u32; 4]) -> u128 {
        let places = t.map(|x| self.index(x));
        let mut bits = 0u128;
        let mut i = 0;
        while i < 4 {
            let mut j = i + 1;
            while j < 4 {
                if let (Some(p), Some(q)) = (places[i], places[j])
                    && p != q
                {
                    let (lo, hi) = if p < q { (p, q) } else { (q, p) };
                    bits |= 1u128 << (hi * (hi - 1) / 2 + lo);
                }
                j += 1;
            }
            i += 1;
        }
        bits
    }
}

/// Whether collapsing edge `(a, b)` satisfies the link condition, with
/// the boundary closed by `ω` (module documentation), with no local copy
/// of the stars, in time linear in them where [`Star::has_edge`] searches
/// sorted edge rows (the kernels), apart from the triangle test, which
/// reads the star of `b` for each tetrahedron of `a` whose opposite
/// triangle lies in the ring (rare):
///
/// - vertices: every common neighbour of `a` and `b` must span a triangle
///   with `ab`, i.e. be in the ring of `ab` (the vertices of its
///   tetrahedra): each vertex of the smaller star outside the ring must
///   not neighbour the other endpoint ([`Star::has_edge`]). Then the
///   common neighbours are the ring, and every simplex of `Lk(a) ∩ Lk(b)`
///   other than `ω` has its vertices in it;
/// - edges: a pair `xy` of the ring in both links (triangles `axy` and
///   `bxy`, from one pass over each star into bits of pairs) must span a
///   tetrahedron `abxy`;
/// - triangles: no three ring vertices `xyz` with tetrahedra `axyz` and
///   `bxyz`;
/// - with `ω`, when both are on the boundary: `ab` must be a boundary
///   edge, a ring vertex `x` with boundary edges `ax` and `bx` must span a
///   boundary triangle `abx`, and no tetrahedron `abxy` may have boundary
///   triangles `axy` and `bxy`.
///
/// Past [`MAX_RING`] ring vertices it is [`link_condition_in_mesh`] (the
/// same answer, tested against the definition).
pub fn link_condition<S: Star>(s: &S, a: u32, b: u32) -> bool {
    let both_boundary = s.on_boundary(a) && s.on_boundary(b);
    // ω: common to both links, in Lk(ab) only for a boundary edge.
    if both_boundary && !is_boundary_edge(s, a, b) {
        return false;
    }
    let Some(ring) = Ring::of(s, a, b) else {
        return link_condition_in_mesh(s, a, b);
    };
    // Vertices, from the smaller star.
    let (small, other) = if s.star_len(a) <= s.star_len(b) {
        (a, b)
    } else {
        (b, a)
    };
    let mut i = 0;
    while i < s.star_len(small) {
        let t = s.tet(s.star_tet(small, i));
        i += 1;
        for x in t {
            if x != a && x != b && ring.index(x).is_none() && s.has_edge(other, x) {
                return false;
            }
        }
    }
    // With ω, each ring vertex x.
    if both_boundary {
        let mut k = 0;
        while k < ring.len {
            if breaks_omega_edge(s, a, b, ring.vertices[k]) {
                return false;
            }
            k += 1;
        }
    }
    // Edges and triangles: the pairs in Lk(a), Lk(b) and Lk(ab).
    let (mut in_a, mut in_ab) = (0u128, 0u128);
    let mut i = 0;
    while i < s.star_len(a) {
        let t = s.tet(s.star_tet(a, i));
        i += 1;
        let pairs = ring.pairs(t);
        in_a |= pairs;
        if has(t, b) {
            in_ab |= pairs;
            // Tetrahedron abxy: with ω, the triangles xyω of boundary
            // triangles axy and bxy are common, and Lk(ab) holds none.
            let [x, y] = pair(t, a, b);
            if both_boundary && is_boundary_triangle(s, a, x, y) && is_boundary_triangle(s, b, x, y)
            {
                return false;
            }
            continue;
        }
        // Triangle xyz of Lk(a) in Lk(b): tetrahedron bxyz exists.
        let [x, y, z] = opposite(t, a);
        let in_ring = |v: u32| ring.index(v).is_some();
        if in_ring(x) && in_ring(y) && in_ring(z) && count_with(s, b, [x, y, z]) > 0 {
            return false;
        }
    }
    let mut in_b = 0u128;
    let mut i = 0;
    while i < s.star_len(b) {
        in_b |= ring.pairs(s.tet(s.star_tet(b, i)));
        i += 1;
    }
    in_a & in_b & !in_ab == 0
}

/// `t`'s two vertices other than `a` and `b` (both in `t`).
#[inline(always)]
fn pair(t: [u32; 4], a: u32, b: u32) -> [u32; 2] {
    let mut out = [0; 2];
    let mut k = 0;
    let mut i = 0;
    while i < 4 {
        if t[i] != a && t[i] != b && k < 2 {
            out[k] = t[i];
            k += 1;
        }
        i += 1;
    }
    out
}

/// [`link_condition`] by a direct test of every simplex of `Lk(a)`,
/// reading the stars from the mesh at every test (time quadratic in the
/// stars): for edges whose ring is past [`MAX_RING`] vertices (and the
/// same answer for any edge; tested against the definition).
pub fn link_condition_in_mesh<S: Star>(s: &S, a: u32, b: u32) -> bool {
    let both_boundary = s.on_boundary(a) && s.on_boundary(b);
    // ω: common to both links, in Lk(ab) only for a boundary edge.
    if both_boundary && !is_boundary_edge(s, a, b) {
        return false;
    }
    let mut i = 0;
    while i < s.star_len(a) {
        let t = s.tet(s.star_tet(a, i));
        i += 1;
        let [c, d, e] = opposite(t, a);
        // Vertices: a common neighbour x must span a triangle abx; with ω,
        // boundary edges ax and bx need abx to be a boundary triangle.
        for x in [c, d, e] {
            if x == b {
                continue;
            }
            if count_with(s, b, [x, u32::MAX, u32::MAX]) > 0
                && count_with(s, a, [b, x, u32::MAX]) == 0
            {
                return false;
            }
            if both_boundary && breaks_omega_edge(s, a, b, x) {
                return false;
            }
        }
        if has(t, b) {
            // Tetrahedron abxy: with ω, the triangles xyω of boundary
            // triangles axy and bxy are common, and Lk(ab) holds none.
            let [x, y] = pair(t, a, b);
            if both_boundary && is_boundary_triangle(s, a, x, y) && is_boundary_triangle(s, b, x, y)
            {
                return false;
            }
            continue;
        }
        // Triangle cde of Lk(a) in Lk(b): tetrahedron bcde exists.
        if count_with(s, b, [c, d, e]) > 0 {
            return false;
        }
        // Edges xy of cde in Lk(b) (a triangle bxy exists) need the
        // tetrahedron abxy.
        for [x, y] in [[c, d], [d, e], [c, e]] {
            if count_with(s, b, [x, y, u32::MAX]) > 0 && count_with(s, a, [b, x, y]) == 0 {
                return false;
            }
        }
    }
    true
}

/// Whether the edge `xω` is in both links but not in `Lk(ab)`: `ax` and
/// `bx` are boundary edges and `abx` is not a boundary triangle.
#[inline(always)]
fn breaks_omega_edge<S: Star>(s: &S, a: u32, b: u32, x: u32) -> bool {
    s.on_boundary(x)
        && is_boundary_edge(s, a, x)
        && is_boundary_edge(s, b, x)
        && !is_boundary_triangle(s, a, b, x)
}

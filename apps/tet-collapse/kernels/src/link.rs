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

/// Whether collapsing edge `(a, b)` satisfies the link condition, with
/// the boundary closed by `ω` (module documentation). Reads the stars of
/// `a` and `b` only; the checks that involve `ω` run only when both
/// vertices are on the boundary.
pub fn link_condition<S: Star>(s: &S, a: u32, b: u32) -> bool {
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
            if both_boundary
                && s.on_boundary(x)
                && is_boundary_edge(s, a, x)
                && is_boundary_edge(s, b, x)
                && !is_boundary_triangle(s, a, b, x)
            {
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

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

/// The most tetrahedra around one vertex that [`link_condition`] holds in
/// its local arrays; past it, it reads the mesh
/// ([`link_condition_in_mesh`]).
pub const MAX_STAR: usize = 64;

/// A vertex's star as the triangles opposite it in its tetrahedra, held
/// locally (registers or the thread's stack) so that the link condition's
/// many membership tests do not read the mesh again.
struct Opposite {
    triangles: [[u32; 3]; MAX_STAR],
    len: usize,
}

impl Opposite {
    /// The star of `v`, or `None` past [`MAX_STAR`] tetrahedra.
    #[inline(always)]
    fn of<S: Star>(s: &S, v: u32) -> Option<Opposite> {
        let n = s.star_len(v) as usize;
        if n > MAX_STAR {
            return None;
        }
        let mut o = Opposite {
            triangles: [[0; 3]; MAX_STAR],
            len: n,
        };
        let mut i = 0;
        while i < n {
            o.triangles[i] = opposite(s.tet(s.star_tet(v, i as u32)), v);
            i += 1;
        }
        Some(o)
    }

    /// Whether a tetrahedron of the star has every vertex of `others`
    /// (`u32::MAX` entries ignored), i.e. an opposite triangle has them.
    #[inline(always)]
    fn any_with(&self, others: [u32; 3]) -> bool {
        let mut i = 0;
        while i < self.len {
            let t = self.triangles[i];
            let holds = |x: u32| x == u32::MAX || t[0] == x || t[1] == x || t[2] == x;
            if holds(others[0]) && holds(others[1]) && holds(others[2]) {
                return true;
            }
            i += 1;
        }
        false
    }
}

/// A small set of vertices held locally.
struct Vertices {
    items: [u32; MAX_STAR],
    len: usize,
}

impl Vertices {
    /// Whether it holds `x`.
    #[inline(always)]
    fn has(&self, x: u32) -> bool {
        let mut i = 0;
        while i < self.len {
            if self.items[i] == x {
                return true;
            }
            i += 1;
        }
        false
    }
}

/// The vertices `x ≠ b` of `a`'s opposite triangles that are also in
/// `b`'s (the common neighbours of `a` and `b`), or `None` past
/// [`MAX_STAR`] of them.
#[inline(always)]
fn common(la: &Opposite, lb: &Opposite, b: u32) -> Option<Vertices> {
    let mut c = Vertices {
        items: [0; MAX_STAR],
        len: 0,
    };
    let mut i = 0;
    while i < la.len {
        for x in la.triangles[i] {
            if x != b && !c.has(x) && lb.any_with([x, u32::MAX, u32::MAX]) {
                if c.len == MAX_STAR {
                    return None;
                }
                c.items[c.len] = x;
                c.len += 1;
            }
        }
        i += 1;
    }
    Some(c)
}

/// Whether collapsing edge `(a, b)` satisfies the link condition, with
/// the boundary closed by `ω` (module documentation). Reads the stars of
/// `a` and `b` once into local arrays ([`link_condition_in_mesh`] past
/// [`MAX_STAR`] tetrahedra). Every simplex of `Lk(a) ∩ Lk(b)` other than `ω` has its
/// vertices among the common neighbours `C` of `a` and `b`, so only
/// those are tested: each vertex of `C` must span a triangle with `ab`,
/// each edge `xy` of `C` in both links must span a tetrahedron with `ab`,
/// and no triangle of `C` may be in both. The checks that involve `ω`
/// run only when both vertices are on the boundary, and read the mesh.
pub fn link_condition<S: Star>(s: &S, a: u32, b: u32) -> bool {
    const NONE: u32 = u32::MAX;
    let both_boundary = s.on_boundary(a) && s.on_boundary(b);
    // ω: common to both links, in Lk(ab) only for a boundary edge.
    if both_boundary && !is_boundary_edge(s, a, b) {
        return false;
    }
    let (Some(la), Some(lb)) = (Opposite::of(s, a), Opposite::of(s, b)) else {
        return link_condition_in_mesh(s, a, b);
    };
    let Some(c) = common(&la, &lb, b) else {
        return link_condition_in_mesh(s, a, b);
    };
    // Vertices: each common neighbour x spans a triangle abx; with ω,
    // boundary edges ax and bx need abx to be a boundary triangle.
    let mut k = 0;
    while k < c.len {
        let x = c.items[k];
        k += 1;
        if !la.any_with([b, x, NONE]) {
            return false;
        }
        if both_boundary && breaks_omega_edge(s, a, b, x) {
            return false;
        }
    }
    let mut i = 0;
    while i < la.len {
        let [t0, t1, t2] = la.triangles[i];
        i += 1;
        if t0 == b || t1 == b || t2 == b {
            // Tetrahedron abxy: with ω, the triangles xyω of boundary
            // triangles axy and bxy are common, and Lk(ab) holds none.
            let [x, y] = pair([a, t0, t1, t2], a, b);
            if both_boundary && is_boundary_triangle(s, a, x, y) && is_boundary_triangle(s, b, x, y)
            {
                return false;
            }
            continue;
        }
        let (h0, h1, h2) = (c.has(t0), c.has(t1), c.has(t2));
        // Triangle t of Lk(a) in Lk(b): tetrahedron b t exists.
        if h0 && h1 && h2 && lb.any_with([t0, t1, t2]) {
            return false;
        }
        // Edges xy of t in Lk(b) (a triangle bxy exists) need the
        // tetrahedron abxy.
        for (x, y, both) in [(t0, t1, h0 && h1), (t1, t2, h1 && h2), (t0, t2, h0 && h2)] {
            if both && lb.any_with([x, y, NONE]) && !la.any_with([b, x, y]) {
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

/// [`link_condition`] reading the stars from the mesh at every test
/// instead of local copies: for stars past [`MAX_STAR`] tetrahedra (and
/// the same answer for any star; tested against the definition).
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

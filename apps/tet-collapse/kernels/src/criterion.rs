//! Collapse criteria (section 3.1: the cost function `C` and the
//! placement `P`; section 4.5 and 4.6 for the field and quality uses): a
//! [`Criterion`] ranks candidate edges by cost (lower first), places the
//! kept vertex where the boundary leaves the choice, and may refuse a
//! collapse beyond the core's checks (link condition, trial volumes,
//! boundary). Three ship: [`Length`] (towards a target edge length, the
//! default), [`Field`] (the error of a per-vertex scalar field) and
//! [`Harmonic`] (quality improvement by the harmonic index, with a line
//! search for the placement).

use crate::geometry::{cross, dot, signed_volume, sub};
use crate::star::{Star, has};

/// Where a criterion puts the kept vertex of edge `(a, b)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// The edge's midpoint.
    Midpoint,
    /// The position of the endpoint with the lower index.
    Endpoint,
}

impl Placement {
    /// The kept vertex's position for edge `(a, b)`.
    #[inline(always)]
    pub fn place<S: Star>(self, s: &S, a: u32, b: u32) -> [f64; 3] {
        let (pa, pb) = (s.position(a), s.position(b));
        match self {
            Placement::Midpoint => [
                0.5 * (pa[0] + pb[0]),
                0.5 * (pa[1] + pb[1]),
                0.5 * (pa[2] + pb[2]),
            ],
            Placement::Endpoint if a < b => pa,
            Placement::Endpoint => pb,
        }
    }
}

/// A collapse criterion: written once, evaluated by the parallel kernels
/// on the GPU and the CPU backend and by the sequential version.
pub trait Criterion {
    /// The cost of collapsing edge `(a, b)`, lower first, or `None` when
    /// the edge is not a candidate.
    fn cost<S: Star>(&self, s: &S, a: u32, b: u32) -> Option<f64>;
    /// The kept vertex's position when the boundary leaves the choice.
    fn placement<S: Star>(&self, s: &S, a: u32, b: u32) -> [f64; 3];
    /// Whether collapsing `(a, b)` to `p` is admissible by the criterion's
    /// own rule (the core's checks pass already).
    fn admissible<S: Star>(&self, s: &S, a: u32, b: u32, p: [f64; 3]) -> bool;
}

/// Calls `f(t, corners)` for every tetrahedron around `a` or `b` that
/// does not have both (those the collapse keeps), with its corners'
/// positions and `a` or `b` moved to `p`.
#[inline(always)]
pub fn for_each_kept<S: Star, F: FnMut(u32, [[f64; 3]; 4])>(
    s: &S,
    a: u32,
    b: u32,
    p: [f64; 3],
    mut f: F,
) {
    all_kept(s, a, b, p, |t, q| {
        f(t, q);
        true
    });
}

/// [`for_each_kept`] until `f` returns false: whether it returned true
/// for every tetrahedron the collapse keeps.
#[inline(always)]
pub fn all_kept<S: Star, F: FnMut(u32, [[f64; 3]; 4]) -> bool>(
    s: &S,
    a: u32,
    b: u32,
    p: [f64; 3],
    mut f: F,
) -> bool {
    for (v, other) in [(a, b), (b, a)] {
        let mut i = 0;
        while i < s.star_len(v) {
            let t = s.star_tet(v, i);
            i += 1;
            let corners = s.tet(t);
            if has(corners, other) {
                continue;
            }
            let mut q = [[0.0; 3]; 4];
            let mut k = 0;
            while k < 4 {
                q[k] = if corners[k] == v {
                    p
                } else {
                    s.position(corners[k])
                };
                k += 1;
            }
            if !f(t, q) {
                return false;
            }
        }
    }
    true
}

/// Edge length towards a target `length` (the paper's evaluation, and
/// the remeshing convention of Botsch and Kobbelt 2004): edges shorter
/// than `4/5 length` are candidates, shortest first; a collapse is
/// refused when it would make an edge longer than `4/3 length`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Length {
    /// The target edge length (model units).
    pub length: f64,
    /// Where the kept vertex goes.
    pub placement: Placement,
}

impl Criterion for Length {
    #[inline(always)]
    fn cost<S: Star>(&self, s: &S, a: u32, b: u32) -> Option<f64> {
        let d = sub(s.position(a), s.position(b));
        let l = core::f64::math::sqrt(dot(d, d));
        (l < 0.8 * self.length).then_some(l)
    }

    #[inline(always)]
    fn placement<S: Star>(&self, s: &S, a: u32, b: u32) -> [f64; 3] {
        self.placement.place(s, a, b)
    }

    #[inline(always)]
    fn admissible<S: Star>(&self, s: &S, a: u32, b: u32, p: [f64; 3]) -> bool {
        let longest = 4.0 / 3.0 * self.length;
        let mut ok = true;
        for_each_kept(s, a, b, p, |_, q| {
            let mut k = 0;
            while k < 4 {
                let d = sub(q[k], p);
                if dot(d, d) > longest * longest {
                    ok = false;
                }
                k += 1;
            }
        });
        ok
    }
}

/// The scalar-field error `|Φ(a) - Φ(b)|` of the mesh's per-vertex field
/// (section 4.5, after Cignoni et al. 2000; [`Star::value`]): edges whose
/// error is below `max_error` are candidates, the smallest error first
/// (the paper takes `0.02 (Φ_max - Φ_min)`). The kept vertex's value is
/// interpolated along the edge at its placement
/// (`crate::collapse::Collapse::value`; the paper interpolates the old
/// field there).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Field {
    /// The largest error collapsed.
    pub max_error: f64,
    /// Where the kept vertex goes.
    pub placement: Placement,
}

impl Criterion for Field {
    #[inline(always)]
    fn cost<S: Star>(&self, s: &S, a: u32, b: u32) -> Option<f64> {
        let e = (s.value(a) - s.value(b)).abs();
        (e < self.max_error).then_some(e)
    }

    #[inline(always)]
    fn placement<S: Star>(&self, s: &S, a: u32, b: u32) -> [f64; 3] {
        self.placement.place(s, a, b)
    }

    #[inline(always)]
    fn admissible<S: Star>(&self, _: &S, _: u32, _: u32, _: [f64; 3]) -> bool {
        true
    }
}

/// The harmonic index of tetrahedron `q` (Alexa 2019, "Harmonic
/// Triangulations"; the paper's section 4.6): `Σ a_i² / vol` over its
/// four face areas `a_i` (length units; infinite when flat or inverted).
#[inline(always)]
pub fn harmonic_index(q: [[f64; 3]; 4]) -> f64 {
    let v = signed_volume(q[0], q[1], q[2], q[3]);
    if v.partial_cmp(&0.0) != Some(core::cmp::Ordering::Greater) {
        return f64::INFINITY;
    }
    face_squares(q) / v
}

/// Quality improvement by the harmonic index (section 4.6): the edges of
/// bad tetrahedra (one with a dihedral angle whose cosine is above
/// `threshold_cos`; the paper takes angles below 13°) are candidates when
/// collapsing them lowers the worst tetrahedron around them, measured
/// scale-free as the harmonic index over the longest edge; the kept
/// vertex is placed by a line search along the edge that minimizes the
/// summed harmonic index of the tetrahedra kept (the paper's placement);
/// the largest improvement first. Only bad tetrahedra are targeted, since
/// removing tetrahedra always lowers a sum.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Harmonic {
    /// The cosine of the dihedral angle below which a tetrahedron is bad
    /// (`cos 13° ≈ 0.974` in the paper).
    pub threshold_cos: f64,
}

/// The paper's threshold of a bad tetrahedron's smallest dihedral angle
/// for [`Harmonic`] (section 4.6), degrees.
pub const BAD_DIHEDRAL_DEGREES: f64 = 13.0;

/// Tetrahedron `q`'s harmonic index over its longest edge (scale-free;
/// infinite when flat or inverted).
#[inline(always)]
pub fn relative_harmonic(q: [[f64; 3]; 4]) -> f64 {
    harmonic_index(q) / core::f64::math::sqrt(crate::geometry::longest_edge_squared(q))
}

/// [`relative_harmonic`] of `q` if it passes the trial's volume test
/// ([`crate::geometry::is_valid_tet`] with `ratio`), else `None`: both
/// from one volume and one longest edge, with the same results.
#[inline(always)]
pub fn trial_harmonic(q: [[f64; 3]; 4], ratio: f64) -> Option<f64> {
    let v = signed_volume(q[0], q[1], q[2], q[3]);
    let l2 = crate::geometry::longest_edge_squared(q);
    if !crate::geometry::passes_volume(v, l2, ratio) {
        return None;
    }
    Some(face_squares(q) / v / core::f64::math::sqrt(l2))
}

/// The sum of the squared areas of `q`'s four faces.
#[inline(always)]
fn face_squares(q: [[f64; 3]; 4]) -> f64 {
    let face = |i: usize, j: usize, k: usize| {
        let n = cross(sub(q[j], q[i]), sub(q[k], q[i]));
        0.25 * dot(n, n)
    };
    face(0, 1, 2) + face(0, 1, 3) + face(1, 2, 3) + face(0, 2, 3)
}

/// The largest cosine of tetrahedron `q`'s six dihedral angles (of its
/// smallest angle): `-n_i · n_j / (|n_i| |n_j|)` over its outward face
/// normals; 1 for a degenerate face.
#[inline(always)]
pub fn smallest_dihedral_cos(q: [[f64; 3]; 4]) -> f64 {
    let normal = |i: usize, j: usize, k: usize| cross(sub(q[j], q[i]), sub(q[k], q[i]));
    // Outward for a positively oriented tetrahedron (faces opposite
    // corners 3, 2, 0, 1).
    let n = [
        normal(0, 2, 1),
        normal(0, 1, 3),
        normal(1, 2, 3),
        normal(0, 3, 2),
    ];
    let mut largest = -1.0f64;
    let mut i = 0;
    while i < 4 {
        let mut j = i + 1;
        while j < 4 {
            let l = core::f64::math::sqrt(dot(n[i], n[i]) * dot(n[j], n[j]));
            let c = if l > 0.0 { -dot(n[i], n[j]) / l } else { 1.0 };
            largest = largest.max(c);
            j += 1;
        }
        i += 1;
    }
    largest
}

/// Samples of the line search along an edge (then a golden-section
/// refinement around the best).
const LINE_SAMPLES: u32 = 8;
/// Golden-section steps of the line search.
const GOLDEN_STEPS: u32 = 16;

impl Harmonic {
    /// The summed harmonic index of the tetrahedra around `a` or `b` the
    /// collapse to `p` keeps (the line search's objective).
    #[inline(always)]
    fn after<S: Star>(s: &S, a: u32, b: u32, p: [f64; 3]) -> f64 {
        let mut sum = 0.0;
        for_each_kept(s, a, b, p, |_, q| sum += harmonic_index(q));
        sum
    }

    /// The worst [`relative_harmonic`] of the tetrahedra the collapse to
    /// `p` keeps.
    #[inline(always)]
    fn worst_after<S: Star>(s: &S, a: u32, b: u32, p: [f64; 3]) -> f64 {
        let mut worst = 0.0f64;
        for_each_kept(s, a, b, p, |_, q| worst = worst.max(relative_harmonic(q)));
        worst
    }

    /// The worst [`relative_harmonic`] of every tetrahedron around `a` or
    /// `b` before the collapse, and whether one with both is bad (a
    /// dihedral angle whose cosine is above `threshold_cos`).
    #[inline(always)]
    fn before<S: Star>(s: &S, a: u32, b: u32, threshold_cos: f64) -> (f64, bool) {
        let (mut worst, mut bad) = (0.0f64, false);
        for v in [a, b] {
            let mut i = 0;
            while i < s.star_len(v) {
                let t = s.tet(s.star_tet(v, i));
                i += 1;
                let q = t.map(|u| s.position(u));
                worst = worst.max(relative_harmonic(q));
                if v == a && has(t, b) && smallest_dihedral_cos(q) > threshold_cos {
                    bad = true;
                }
            }
        }
        (worst, bad)
    }

    /// The point of the edge (`a + x (b - a)`) at parameter `x`.
    #[inline(always)]
    fn at(pa: [f64; 3], pb: [f64; 3], x: f64) -> [f64; 3] {
        [
            pa[0] + x * (pb[0] - pa[0]),
            pa[1] + x * (pb[1] - pa[1]),
            pa[2] + x * (pb[2] - pa[2]),
        ]
    }
}

impl Criterion for Harmonic {
    #[inline(always)]
    fn cost<S: Star>(&self, s: &S, a: u32, b: u32) -> Option<f64> {
        let (worst, bad) = Harmonic::before(s, a, b, self.threshold_cos);
        if !bad {
            return None;
        }
        let p = self.placement(s, a, b);
        let gain = worst - Harmonic::worst_after(s, a, b, p);
        (gain > 0.0).then_some(-gain)
    }

    #[inline(always)]
    fn placement<S: Star>(&self, s: &S, a: u32, b: u32) -> [f64; 3] {
        let (pa, pb) = (s.position(a), s.position(b));
        let f = |x: f64| Harmonic::after(s, a, b, Harmonic::at(pa, pb, x));
        let mut best = (0.0, f(0.0));
        let mut k = 1;
        while k <= LINE_SAMPLES {
            let x = f64::from(k) / f64::from(LINE_SAMPLES);
            let y = f(x);
            if y < best.1 {
                best = (x, y);
            }
            k += 1;
        }
        // Golden section on the bracket around the best sample.
        let step = 1.0 / f64::from(LINE_SAMPLES);
        let (mut lo, mut hi) = ((best.0 - step).max(0.0), (best.0 + step).min(1.0));
        let g = 0.618_033_988_749_894_8;
        let mut k = 0;
        while k < GOLDEN_STEPS {
            let (x1, x2) = (hi - g * (hi - lo), lo + g * (hi - lo));
            if f(x1) < f(x2) {
                hi = x2;
            } else {
                lo = x1;
            }
            k += 1;
        }
        let x = 0.5 * (lo + hi);
        if f(x) < best.1 {
            Harmonic::at(pa, pb, x)
        } else {
            Harmonic::at(pa, pb, best.0)
        }
    }

    #[inline(always)]
    fn admissible<S: Star>(&self, s: &S, a: u32, b: u32, p: [f64; 3]) -> bool {
        Harmonic::before(s, a, b, self.threshold_cos).0 > Harmonic::worst_after(s, a, b, p)
    }
}

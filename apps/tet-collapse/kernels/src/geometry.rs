//! Signed volumes in `f64` and the trial-volume test of a collapse
//! (section 3.2), made scale-free: a tetrahedron passes when its signed
//! volume is at least `ratio` times the cube of its longest edge, so the
//! same mesh at 1e-30 and at 1e30 collapses the same way (the paper's
//! absolute `2e-12` assumes unit-scale input).

pub use cavity_device::geometry::double::{cross, dot, sub};

/// The signed volume of tetrahedron `(p0, p1, p2, p3)`:
/// `det(p1 - p0, p2 - p0, p3 - p0) / 6`, positive when positively
/// oriented.
#[inline(always)]
pub fn signed_volume(p0: [f64; 3], p1: [f64; 3], p2: [f64; 3], p3: [f64; 3]) -> f64 {
    dot(sub(p1, p0), cross(sub(p2, p0), sub(p3, p0))) / 6.0
}

/// The squared length of the longest of the tetrahedron's six edges.
#[inline(always)]
pub fn longest_edge_squared(p: [[f64; 3]; 4]) -> f64 {
    let mut longest = 0.0f64;
    let mut i = 0;
    while i < 4 {
        let mut j = i + 1;
        while j < 4 {
            let d = sub(p[i], p[j]);
            longest = longest.max(dot(d, d));
            j += 1;
        }
        i += 1;
    }
    longest
}

/// The default of `ratio` in [`is_valid_tet`]: `1e-6`, a tetrahedron
/// whose volume is a millionth of its longest edge's cube (a regular one
/// has `0.118`), a sliver whose smallest dihedral angle is about 1e-5
/// radians.
pub const MIN_VOLUME_RATIO: f64 = 1e-6;

/// Whether tetrahedron `p` is valid: its signed volume at least `ratio`
/// times the cube of its longest edge (false for an inverted, flat or
/// collapsed one, and for non-finite positions).
#[inline(always)]
pub fn is_valid_tet(p: [[f64; 3]; 4], ratio: f64) -> bool {
    passes_volume(
        signed_volume(p[0], p[1], p[2], p[3]),
        longest_edge_squared(p),
        ratio,
    )
}

/// [`is_valid_tet`] of a tetrahedron of signed volume `v` and squared
/// longest edge `l2`.
#[inline(always)]
pub fn passes_volume(v: f64, l2: f64, ratio: f64) -> bool {
    // v ≥ ratio l³, compared squared to stay in the range of f64 for
    // positions up to about 1e100: v > 0 and v² ≥ ratio² l⁶.
    v > 0.0 && v * v >= ratio * ratio * l2 * l2 * l2
}

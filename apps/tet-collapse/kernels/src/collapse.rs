//! Whether one edge collapse is admissible (section 3.2) and where its
//! kept vertex goes: the boundary predicate, the trial volumes and
//! quality at the placement ([`Trial`]), the criterion's own rule and the
//! link condition, in that
//! order (the cheap tests first: the link condition reads both stars
//! most). The parallel kernels and the sequential
//! version call the same [`check`].

use crate::boundary::{Keep, boundary_rule};
use crate::criterion::{Criterion, all_kept, relative_harmonic, trial_harmonic};
use crate::geometry::{dot, sub};
use crate::link::link_condition;
use crate::star::{Star, is_boundary_edge};

/// The trial collapse's geometric bounds (section 3.2, made scale-free).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    not(target_arch = "nvptx64"),
    derive(bytemuck::Pod, bytemuck::Zeroable)
)]
pub struct Trial {
    /// Every tetrahedron the collapse leaves has a volume of at least this
    /// times its longest edge cubed ([`crate::geometry::is_valid_tet`]).
    pub volume_ratio: f64,
    /// A collapse may not make the worst tetrahedron around it worse than
    /// it was, by the harmonic index over the longest edge
    /// ([`relative_harmonic`]: `4.5 √2 ≈ 6.36` for a regular one), unless
    /// the worst it leaves stays within this bound: the paper's trial only
    /// rejects inverted and flat tetrahedra, which lets a coarsening fill
    /// the mesh with slivers.
    pub quality_bound: f64,
}

/// Whether the trial leaves its loop at the first failing tetrahedron:
/// on the host (the CPU backend, the sequential version), not on the GPU
/// ([`check`]).
const STOP_EARLY: bool = !cfg!(target_arch = "nvptx64");

/// The default [`Trial::quality_bound`]: 50, about eight times the
/// regular tetrahedron's (a tetrahedron with dihedral angles near 10°).
pub const QUALITY_BOUND: f64 = 50.0;

/// An admissible collapse of edge `(keep, remove)`: `remove` is removed,
/// every tetrahedron with both vertices too, and `keep` moves to
/// `position`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Collapse {
    /// The vertex that stays.
    pub keep: u32,
    /// The vertex that is removed.
    pub remove: u32,
    /// The kept vertex's new position (single precision, as stored).
    pub position: [f32; 3],
    /// The kept vertex's new value of the per-vertex field: the two
    /// values interpolated linearly at the position's projection onto the
    /// edge.
    pub value: f64,
}

/// The collapse of edge `(a, b)` if it is admissible, with the boundary
/// classes `class_a`, `class_b` (`crate::boundary`), whether the edge is
/// sharp, and the trial's bounds ([`Trial`]). The kept vertex is the one the
/// boundary keeps, else the lower index; its position is the kept
/// endpoint's, else the criterion's placement, rounded to single
/// precision before the trial volumes are computed, so that what is
/// checked is what is stored.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn check<S: Star, C: Criterion>(
    s: &S,
    criterion: &C,
    a: u32,
    b: u32,
    class_a: u32,
    class_b: u32,
    sharp: bool,
    trial: Trial,
) -> Option<Collapse> {
    let boundary_edge = s.on_boundary(a) && s.on_boundary(b) && is_boundary_edge(s, a, b);
    let keep = boundary_rule(class_a, class_b, boundary_edge, sharp)?;
    let (kept, removed, p) = match keep {
        Keep::A => (a, b, s.position(a)),
        Keep::B => (b, a, s.position(b)),
        Keep::Either => (a.min(b), a.max(b), criterion.placement(s, a, b)),
    };
    let position = [p[0] as f32, p[1] as f32, p[2] as f32];
    let p = [
        f64::from(position[0]),
        f64::from(position[1]),
        f64::from(position[2]),
    ];
    // On the host the trial stops at the first kept tetrahedron that
    // fails; on the GPU it runs over all of them, so that the threads of a
    // warp stay on one path (an early exit split them, and the checks took
    // twice as long). The outcome is the same.
    let (mut valid, mut worst_after) = (true, 0.0f64);
    all_kept(s, a, b, p, |_, q| {
        match trial_harmonic(q, trial.volume_ratio) {
            Some(h) => worst_after = worst_after.max(h),
            None => valid = false,
        }
        valid || !STOP_EARLY
    });
    if !valid || (worst_after > trial.quality_bound && worst_after > worst_before(s, a, b)) {
        return None;
    }
    if !criterion.admissible(s, a, b, p) || !link_condition(s, a, b) {
        return None;
    }
    let (pa, pb) = (s.position(a), s.position(b));
    let ab = sub(pb, pa);
    let along = dot(ab, ab);
    let x = if along > 0.0 {
        (dot(sub(p, pa), ab) / along).clamp(0.0, 1.0)
    } else {
        0.0
    };
    Some(Collapse {
        keep: kept,
        remove: removed,
        position,
        value: s.value(a) + x * (s.value(b) - s.value(a)),
    })
}

/// The worst [`relative_harmonic`] of the tetrahedra around `a` or `b`.
#[inline(always)]
fn worst_before<S: Star>(s: &S, a: u32, b: u32) -> f64 {
    let mut worst = 0.0f64;
    for v in [a, b] {
        let mut i = 0;
        while i < s.star_len(v) {
            let t = s.tet(s.star_tet(v, i));
            worst = worst.max(relative_harmonic(t.map(|u| s.position(u))));
            i += 1;
        }
    }
    worst
}

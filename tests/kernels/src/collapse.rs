//! A tetrahedral collapse criterion of the user's own (issue 54 item 3):
//! it implements `cavity_tet_collapse_kernels::criterion::Criterion` and
//! declares its two kernels with `criterion_kernels!`, so that
//! `cavity_tet_collapse::parallel` runs it on the GPU and the CPU backend
//! with no change in the collapse's crates.

use cavity_tet_collapse_kernels::criterion::{Criterion, Placement};
use cavity_tet_collapse_kernels::star::Star;

/// Collapses the edges shorter than `length` whose endpoints both lie
/// below the height `z` (the third coordinate), shortest first, to their
/// midpoints: the mesh above the height is left as it is.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[cfg_attr(
    not(target_arch = "nvptx64"),
    derive(bytemuck::Pod, bytemuck::Zeroable)
)]
pub struct BelowHeight {
    /// The longest edge collapsed (model units).
    pub length: f64,
    /// The height below which edges collapse (model units).
    pub z: f64,
}

impl Criterion for BelowHeight {
    fn cost<S: Star>(&self, s: &S, a: u32, b: u32) -> Option<f64> {
        let (p, q) = (s.position(a), s.position(b));
        if p[2] >= self.z || q[2] >= self.z {
            return None;
        }
        let d = [p[0] - q[0], p[1] - q[1], p[2] - q[2]];
        let l = core::f64::math::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        (l < self.length).then_some(l)
    }

    fn placement<S: Star>(&self, s: &S, a: u32, b: u32) -> [f64; 3] {
        Placement::Midpoint.place(s, a, b)
    }

    fn admissible<S: Star>(&self, _: &S, _: u32, _: u32, _: [f64; 3]) -> bool {
        true
    }
}

cavity_tet_collapse_kernels::criterion_kernels!(BelowHeight);

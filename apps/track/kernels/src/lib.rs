//! Explicit surface tracking without collision detection (dynamic paper,
//! section 6.4, fig. 13; Brochu and Bridson 2009, El Topo): the vertices
//! are advected through a divergence-free curl-noise velocity field
//! (Bridson, Houriham and Nordenstam 2007), then the mesh is improved by
//! edge splits, edge flips, edge collapses and null-space smoothing. This
//! crate holds the velocity field, the advection (a per-vertex
//! computation) and the flip criterion; the split, the collapse and the
//! smoothing are remeshing's (`cavity-remesh-kernels`: `split`,
//! `CollapseShortEdgesSafely`, `smooth`).
//!
//! The kernel half of the tracking application crate (`apps/track`),
//! written on cavity's public model.
#![no_std]
#![feature(core_float_math)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

use cavity_device::block::Block;
use cavity_device::dynamic::cavity::{CavityApp, Ctx, FillIn, Template};
use cavity_device::dynamic::compute::{Element, ElementComputation};
use cavity_device::dynamic::layout::POSITION;
use cavity_device::flip;
use cavity_device::geometry::{cross, dot, norm, sub};
use cavity_device::query::Query;
use cavity_remesh_kernels::shape::{smooth, unfolded};

cavity_device::parameters! {
    /// One advection step through the curl-noise field `v = ∇ × (0, 0, ψ)`
    /// with potential `ψ(p) = gain · s(p) · N(p / length_scale + offset)`:
    /// `N` is a gradient noise (Perlin 2002, quintic fade, the twelve
    /// cube-edge gradients) and `s` falls off from 1 at `centre` to 0 at
    /// distance `radius` as a smoothstep, so the field vanishes outside
    /// that ball and is continuous at its rim (El Topo's linear falloff
    /// makes it jump there: vertices crossing the rim stop dead, and the
    /// sheet's boundary, which no collapse shortens, piles up into
    /// zero-length edges). `v` has no z component. Units: model units and
    /// time units.
    pub struct Advection {
        /// Time step of the step (one fourth-order Runge-Kutta step).
        pub dt: f32,
        /// Length over which the noise varies.
        pub length_scale: f32,
        /// Strength of the potential.
        pub gain: f32,
        /// Radius of the ball in which the field acts.
        pub radius: f32,
        /// Centre of that ball.
        pub centre: [f32; 3],
    }
}

/// Shift of the noise lattice, so that the grid's plane (y = 0) does not
/// sit on lattice points, where gradient noise vanishes.
const OFFSET: [f32; 3] = [0.371, 0.613, 0.197];

/// The twelve cube-edge directions of improved Perlin noise.
const GRADIENTS: [[f32; 3]; 12] = [
    [1.0, 1.0, 0.0],
    [-1.0, 1.0, 0.0],
    [1.0, -1.0, 0.0],
    [-1.0, -1.0, 0.0],
    [1.0, 0.0, 1.0],
    [-1.0, 0.0, 1.0],
    [1.0, 0.0, -1.0],
    [-1.0, 0.0, -1.0],
    [0.0, 1.0, 1.0],
    [0.0, -1.0, 1.0],
    [0.0, 1.0, -1.0],
    [0.0, -1.0, -1.0],
];

/// The gradient of lattice point `i` (a stateless integer hash: three
/// odd multipliers, then the MurmurHash3 finaliser).
fn lattice_gradient(i: [i32; 3]) -> [f32; 3] {
    let mut h = (i[0] as u32).wrapping_mul(0x8da6_b343)
        ^ (i[1] as u32).wrapping_mul(0xd816_3841)
        ^ (i[2] as u32).wrapping_mul(0xcb1a_b31f);
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    GRADIENTS[(h % 12) as usize]
}

/// The quintic fade `6t⁵ - 15t⁴ + 10t³` and its derivative.
fn fade(t: f32) -> (f32, f32) {
    let t2 = t * t;
    (
        t * t2 * (t * (6.0 * t - 15.0) + 10.0),
        30.0 * t2 * (t * (t - 2.0) + 1.0),
    )
}

/// Gradient noise at `q` and its gradient (analytic, so the velocity is
/// exactly divergence-free up to rounding).
pub fn noise(q: [f32; 3]) -> (f32, [f32; 3]) {
    let cell = q.map(core::f32::math::floor);
    let f = [0, 1, 2].map(|k| q[k] - cell[k]);
    let w = f.map(fade);
    let base = cell.map(|x| x as i32);
    let mut value = 0.0;
    let mut gradient = [0.0; 3];
    for corner in 0..8u32 {
        let c = [corner & 1, corner >> 1 & 1, corner >> 2 & 1];
        let g = lattice_gradient([0, 1, 2].map(|k| base[k] + c[k] as i32));
        let d = [0, 1, 2].map(|k| f[k] - c[k] as f32);
        let ramp = dot(g, d);
        // The corner's weight per axis (fade towards the corner) and its
        // derivative.
        let (weight, slope): ([f32; 3], [f32; 3]) = (
            [0, 1, 2].map(|k| if c[k] == 1 { w[k].0 } else { 1.0 - w[k].0 }),
            [0, 1, 2].map(|k| if c[k] == 1 { w[k].1 } else { -w[k].1 }),
        );
        let all = weight[0] * weight[1] * weight[2];
        value += all * ramp;
        for k in 0..3 {
            let others = weight[(k + 1) % 3] * weight[(k + 2) % 3];
            gradient[k] += slope[k] * others * ramp + all * g[k];
        }
    }
    (value, gradient)
}

/// Where `p` samples the noise.
fn noise_point(p: [f32; 3], field: &Advection) -> [f32; 3] {
    [0, 1, 2].map(|k| p[k] / field.length_scale + OFFSET[k])
}

/// The potential `ψ` at `p` (0 outside the ball).
pub fn potential(p: [f32; 3], field: &Advection) -> f32 {
    let distance = norm(sub(p, field.centre));
    if distance >= field.radius {
        return 0.0;
    }
    field.gain * falloff(distance, field).0 * noise(noise_point(p, field)).0
}

/// The falloff `s` at `distance` from the centre (inside the ball) and its
/// derivative along the distance: the smoothstep `u² (3 - 2u)` of `u =
/// (radius - distance) / radius`.
fn falloff(distance: f32, field: &Advection) -> (f32, f32) {
    let u = (field.radius - distance) / field.radius;
    (u * u * (3.0 - 2.0 * u), -6.0 * u * (1.0 - u) / field.radius)
}

/// The velocity at `p`: `(∂ψ/∂y, -∂ψ/∂x, 0)`, with the derivatives of
/// [`potential`] taken analytically.
pub fn velocity(p: [f32; 3], field: &Advection) -> [f32; 3] {
    let r = sub(p, field.centre);
    let distance = norm(r);
    if distance >= field.radius {
        return [0.0; 3];
    }
    let (s, slope) = falloff(distance, field);
    let (n, dn) = noise(noise_point(p, field));
    // ∇ψ = gain (∇s · N + s ∇N / length_scale), ∇s = s' r / |r|.
    let ds = |k: usize| {
        if distance > 0.0 {
            slope * r[k] / distance
        } else {
            0.0
        }
    };
    let dpsi = |k: usize| field.gain * (ds(k) * n + s * dn[k] / field.length_scale);
    [dpsi(1), -dpsi(0), 0.0]
}

/// `p` after one classic fourth-order Runge-Kutta step of `field.dt`.
pub fn advected(p: [f32; 3], field: &Advection) -> [f32; 3] {
    let at = |x: [f32; 3], k: [f32; 3], h: f32| [0, 1, 2].map(|i| x[i] + h * k[i]);
    let dt = field.dt;
    let k1 = velocity(p, field);
    let k2 = velocity(at(p, k1, 0.5 * dt), field);
    let k3 = velocity(at(p, k2, 0.5 * dt), field);
    let k4 = velocity(at(p, k3, dt), field);
    [0, 1, 2].map(|i| p[i] + dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]))
}

cavity_device::parameters! {
    /// Advects every vertex one step through `field` ([`advected`]): a
    /// per-vertex computation that reads and writes only the vertex's own
    /// position (no query results).
    pub struct Advect {
        /// The field and the step.
        pub field: Advection,
    }
}

impl ElementComputation for Advect {
    const QUERY: Query = Query::VE;
    const QUERY_RESULTS: bool = false;

    fn compute<B: Block>(&self, v: &Element<'_, B>) {
        v.set(&POSITION, advected(v.get(&POSITION), &self.field));
    }
}

cavity_device::parameters! {
    /// El Topo's edge flip (template `EdgeFaces`): an interior edge `ab` is
    /// flipped to `cd` when `cd` is shorter, the flip changes the enclosed
    /// volume by at most `max_volume_change` (`|(b - a) · ((c - a) × (d -
    /// a))|`, six times the tetrahedron's volume, as El Topo measures it),
    /// folds no face over and makes no sliver (as remeshing's flip), and
    /// the edge is not a feature. Every flip shortens the total edge
    /// length, so the sweeps end.
    pub struct ShorterDiagonal {
        /// Largest volume change accepted (model units cubed).
        pub max_volume_change: f32,
        /// Feature threshold, as for `cavity_remesh_kernels::ImproveValence`.
        pub feature_cos: f32,
    }
}

impl ShorterDiagonal {
    fn accepts<B: Block>(&self, ctx: &Ctx<'_, B>, q: [u32; 4]) -> bool {
        let [a, b, c, d] = q.map(|v| ctx.position(v));
        let (ab, ac, ad) = (sub(b, a), sub(c, a), sub(d, a));
        norm(sub(d, c)) < norm(ab)
            && dot(ab, cross(ac, ad)).abs() <= self.max_volume_change
            && unfolded(ctx, q)
    }
}

impl CavityApp for ShorterDiagonal {
    const TEMPLATE: Template = Template::EdgeFaces;
    const MAX_NEW: [u32; 3] = [0, 1, 2];
    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, e: u32) -> bool {
        flip::candidate(ctx, e)
            .is_some_and(|q| smooth(ctx, e, self.feature_cos) && self.accepts(ctx, q))
    }
    fn fill<B: Block>(&self, fill: &mut FillIn<'_, B>) -> bool {
        // Positions do not change in the run: the criterion checked at
        // registration still holds.
        flip::fill(fill, |_| true)
    }
}

cavity_device::cavity_kernels!(ShorterDiagonal);
cavity_device::element_kernels!(Advect);

//! Bilateral mesh denoising (Fleishman, Drori and Cohen-Or 2003) as
//! computations on the public model, with the neighbourhoods RXMesh's
//! denoising uses (section 8.3): a vertex's neighbourhood is the ring the
//! ball of radius `2 σc` around it bounds (`cavity_device::dynamic::ring`:
//! a breadth-first search over VV through the vertices inside the ball,
//! hop after hop until no vertex of a hop is inside), `σc` being the length
//! of its shortest edge.
//!
//! One iteration:
//! 1. [`DenoiseNormals`] (VF): every vertex's unit area-weighted normal
//!    `n` and `σc`;
//! 2. [`DenoiseFilter`] (the ring): with `h_j = (p_j - p)·n` and
//!    `t_j = |p_j - p|` over the neighbourhood (the vertex included),
//!    `σs` is the standard deviation of `|h_j|` and the vertex moves to
//!    `p + n Σ w_j h_j / Σ w_j`, `w_j = exp(-t_j² / 2σc²) exp(-h_j² / 2σs²)`
//!    (the paper's filter, the spatial weight's width `σc`), written to
//!    another attribute so that every vertex reads its neighbours' old
//!    positions;
//! 3. [`DenoiseMove`]: the positions take the new ones.
//!
//! Degenerate input: `σc` is the shortest edge of nonzero length (a
//! coincident neighbour would make the spatial weight 0/0), and a vertex
//! without one, without a normal or with an empty neighbourhood stays.
//!
//! The kernel half of the denoising application crate (`apps/denoise`).
#![no_std]
#![feature(core_float_math)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

use cavity_device::attribute::Attr;
use cavity_device::block::Block;
use cavity_device::dynamic::compute::{Element, ElementComputation};
use cavity_device::dynamic::layout::POSITION;
use cavity_device::dynamic::ring::{Ring, RingComputation, VertexSlot};
use cavity_device::geometry::{cross, dot, sub};
use cavity_device::query::Query;

/// The smallest `σs` (RXMesh's OpenMesh reference adds it to a zero
/// deviation: a flat neighbourhood).
pub const MIN_SIGMA_S: f32 = 1e-12;

cavity_device::parameters! {
    /// Writes every vertex's unit area-weighted normal (the normalized sum
    /// of its faces' cross products; zero without a face of nonzero area)
    /// and its shortest edge of nonzero length (0 without one).
    pub struct DenoiseNormals {
        /// The normals.
        pub normal: Attr<f32, 3>,
        /// The shortest edges, `σc`.
        pub sigma_c: Attr<f32, 1>,
    }
}

impl ElementComputation for DenoiseNormals {
    const QUERY: Query = Query::VF;

    fn compute<B: Block>(&self, v: &Element<'_, B>) {
        let me = v.local();
        let p = v.position(me);
        let mut n = [0.0f32; 3];
        let mut shortest = f32::INFINITY;
        for f in v.neighbors() {
            let corners = v.face_vertices(f);
            let [a, b, c] = corners.map(|x| v.position(x));
            let m = cross(sub(b, a), sub(c, a));
            for k in 0..3 {
                n[k] += m[k];
            }
            for x in corners {
                if x != me {
                    let d = sub(v.position(x), p);
                    let length = core::f32::math::sqrt(dot(d, d));
                    if length > 0.0 && length < shortest {
                        shortest = length;
                    }
                }
            }
        }
        let length = core::f32::math::sqrt(dot(n, n));
        let unit = if length > 0.0 && length.is_finite() {
            n.map(|x| x / length)
        } else {
            [0.0; 3]
        };
        v.set(&self.normal, unit);
        let sigma_c = if shortest.is_finite() { shortest } else { 0.0 };
        v.set(&self.sigma_c, [sigma_c]);
    }
}

cavity_device::parameters! {
    /// The bilateral filter of every vertex over the ring the ball of
    /// radius `2 σc` bounds (at most `max_hops` hops), written to `out`.
    pub struct DenoiseFilter {
        /// [`DenoiseNormals`]'s normals.
        pub normal: Attr<f32, 3>,
        /// [`DenoiseNormals`]'s `σc`.
        pub sigma_c: Attr<f32, 1>,
        /// The filtered positions.
        pub out: Attr<f32, 3>,
        /// The neighbourhood's size (vertices, the vertex excluded).
        pub size: Attr<u32, 1>,
        /// The most hops of a neighbourhood (`u32::MAX`: until the ball
        /// stops the search).
        pub max_hops: u32,
    }
}

impl RingComputation for DenoiseFilter {
    fn hops(&self) -> u32 {
        self.max_hops
    }

    #[inline(always)]
    fn admits<B: Block>(&self, ring: &Ring<'_, B>, candidate: VertexSlot) -> bool {
        let center = ring.center();
        let radius = 2.0 * ring.get(&self.sigma_c, center)[0];
        let d = sub(ring.position(candidate), ring.position(center));
        dot(d, d) <= radius * radius
    }

    fn compute<B: Block>(&self, ring: &Ring<'_, B>) {
        let center = ring.center();
        let p = ring.position(center);
        let n = ring.get(&self.normal, center);
        let sigma_c = ring.get(&self.sigma_c, center)[0];
        ring.set(&self.size, [ring.len()]);
        if ring.is_empty() || sigma_c <= 0.0 || dot(n, n) == 0.0 {
            ring.set(&self.out, p);
            return;
        }
        // σs: the deviation of |h| over the neighbourhood, the vertex
        // (h = 0) included.
        let count = (ring.len() + 1) as f32;
        let (mut sum, mut sum_sqs) = (0.0f32, 0.0f32);
        for v in ring.neighbors() {
            let h = dot(sub(ring.position(v), p), n).abs();
            sum += h;
            sum_sqs += h * h;
        }
        let mean = sum / count;
        let deviation = core::f32::math::sqrt((sum_sqs / count - mean * mean).max(0.0));
        let sigma_s = if deviation < MIN_SIGMA_S {
            deviation + MIN_SIGMA_S
        } else {
            deviation
        };
        let (c, s) = (-0.5 / (sigma_c * sigma_c), -0.5 / (sigma_s * sigma_s));
        // The vertex itself: t = h = 0, weight 1.
        let (mut moved, mut weights) = (0.0f32, 1.0f32);
        for v in ring.neighbors() {
            let d = sub(ring.position(v), p);
            let h = dot(d, n);
            let w = libm::expf(c * dot(d, d)) * libm::expf(s * h * h);
            moved += w * h;
            weights += w;
        }
        let by = moved / weights;
        ring.set(&self.out, [0, 1, 2].map(|k| p[k] + n[k] * by));
    }
}

cavity_device::ring_kernels!(DenoiseFilter);

cavity_device::parameters! {
    /// Moves every vertex to its filtered position.
    pub struct DenoiseMove {
        /// [`DenoiseFilter`]'s positions.
        pub to: Attr<f32, 3>,
    }
}

impl ElementComputation for DenoiseMove {
    const QUERY: Query = Query::VV;
    const QUERY_RESULTS: bool = false;

    fn compute<B: Block>(&self, v: &Element<'_, B>) {
        v.set(&POSITION, v.get(&self.to));
    }
}

cavity_device::element_kernels!(DenoiseNormals, DenoiseMove);

//! Delaunay edge flips (dynamic paper, section 6.2): an edge whose two
//! opposite angles sum to more than π is flipped; repeated until no such
//! edge is left (terminates on surfaces, Cheng and Dey 2008). The cavity is
//! the edge with its two faces; the fill-in joins the two opposite vertices.
//!
//! The kernel half of the Delaunay application crate (`apps/delaunay`),
//! written on cavity's public model: a [`CavityApp`] on the `EdgeFaces`
//! template with the core's flip helpers, exported with
//! `cavity_kernels!`.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

use cavity_device::block::Block;
use cavity_device::dynamic::cavity::{CavityApp, Ctx, FillIn, Template};
use cavity_device::flip;
use cavity_device::geometry::{cross, dot, norm, sub};

/// Flips of edges with `cot α + cot β < -TOLERANCE` (opposite angles `α`,
/// `β`; the sum exceeds π exactly when the cotangents sum below zero).
pub const TOLERANCE: f32 = 1e-5;

/// The Delaunay edge-flip application (no parameters).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
#[cfg_attr(
    not(target_arch = "nvptx64"),
    derive(bytemuck::Pod, bytemuck::Zeroable)
)]
pub struct Delaunay;

/// Cotangent of the angle at `o` between `a` and `b`; `None` when the
/// triangle is degenerate.
pub fn cotangent(o: [f32; 3], a: [f32; 3], b: [f32; 3]) -> Option<f32> {
    let (u, v) = (sub(a, o), sub(b, o));
    let sin = norm(cross(u, v));
    (sin > 0.0).then(|| dot(u, v) / sin)
}

impl CavityApp for Delaunay {
    const TEMPLATE: Template = Template::EdgeFaces;
    const MAX_NEW: [u32; 3] = [0, 1, 2];

    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, e: u32) -> bool {
        let Some([a, b, c, d]) = flip::candidate(ctx, e) else {
            return false;
        };
        let (pa, pb) = (ctx.position(a), ctx.position(b));
        match (
            cotangent(ctx.position(c), pa, pb),
            cotangent(ctx.position(d), pa, pb),
        ) {
            (Some(x), Some(y)) => x + y < -TOLERANCE,
            _ => false,
        }
    }

    fn fill<B: Block>(&self, fill: &mut FillIn<'_, B>) -> bool {
        // Positions do not change in the run: the criterion checked at
        // registration still holds.
        flip::fill(fill, |_| true)
    }
}

cavity_device::cavity_kernels!(Delaunay);

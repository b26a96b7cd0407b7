//! The kernels of the `smooth-split` example: what a user writes to run
//! their own per-element computation and their own cavity on the GPU (and
//! on the CPU backend, which runs the same bodies).
//!
//! - [`Smooth`]: one step of Laplacian smoothing, a per-vertex computation
//!   with the VV query that reads one attribute and writes another.
//! - [`SplitHighValence`]: a cavity application that splits every interior
//!   vertex of valence above a limit into two (the `VertexStar` template,
//!   filled by `cavity_device::dynamic::cavity::fills::vertex_split_fill`).
//!
//! `element_kernels!` and `cavity_kernels!` export the GPU entry points;
//! the host crate's build script compiles this crate to PTX with
//! `cavity-ptx-builder`.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

use cavity_device::attribute::Attr;
use cavity_device::block::Block;
use cavity_device::dynamic::cavity::fills::{MAX_LOOP, simple_loop, vertex_split_fill};
use cavity_device::dynamic::cavity::{CavityApp, Ctx, FillIn, Template};
use cavity_device::dynamic::compute::{Element, ElementComputation};
use cavity_device::query::Query;

/// One Laplacian smoothing step: `to = from + lambda (mean of the VV
/// neighbours' from - from)` on every vertex (a vertex without neighbours
/// keeps its value).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[cfg_attr(
    not(target_arch = "nvptx64"),
    derive(bytemuck::Pod, bytemuck::Zeroable)
)]
pub struct Smooth {
    /// The positions read (the mesh's own, `layout::POSITION`, or an
    /// attribute).
    pub from: Attr<f32, 3>,
    /// The positions written (another attribute than `from`).
    pub to: Attr<f32, 3>,
    /// Step size, 0 to 1.
    pub lambda: f32,
}

impl ElementComputation for Smooth {
    const QUERY: Query = Query::VV;

    fn compute<B: Block>(&self, v: &Element<'_, B>) {
        let here = v.get_at(&self.from, v.local());
        if v.is_empty() {
            v.set(&self.to, here);
            return;
        }
        let mut mean = [0.0f32; 3];
        for n in v.neighbors() {
            let p = v.get_at(&self.from, n);
            for k in 0..3 {
                mean[k] += p[k] / v.len() as f32;
            }
        }
        v.set(
            &self.to,
            [0, 1, 2].map(|k| here[k] + self.lambda * (mean[k] - here[k])),
        );
    }
}

cavity_device::element_kernels!(Smooth);

/// Splits every interior vertex with more than `max_valence` edges into
/// two vertices joined by a new edge. A split of a vertex of valence `k`
/// leaves valences `k / 2 + 2` and `(k + 1) / 2 + 2`: use a limit of at
/// least 5, or the splits go on for ever.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[cfg_attr(
    not(target_arch = "nvptx64"),
    derive(bytemuck::Pod, bytemuck::Zeroable)
)]
pub struct SplitHighValence {
    /// Largest valence left alone.
    pub max_valence: u32,
}

impl CavityApp for SplitHighValence {
    const TEMPLATE: Template = Template::VertexStar;
    const MAX_NEW: [u32; 3] = [2, MAX_LOOP + 3, MAX_LOOP + 2];

    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, v: u32) -> bool {
        // Interior (every edge has two faces) and of high valence.
        let mut valence = 0;
        let interior = ctx.vertex_edges(v).all(|e| {
            valence += 1;
            ctx.edge_faces(e).0 == 2
        });
        interior && valence > self.max_valence
    }

    fn fill<B: Block>(&self, fill: &mut FillIn<'_, B>) -> bool {
        // A disk whose loop has distinct vertices: one face per loop edge.
        let k = fill.boundary_len();
        let disk = fill.deleted_faces().count() as u32 == k && simple_loop(fill);
        disk && (4..=MAX_LOOP).contains(&k) && vertex_split_fill(fill)
    }
}

cavity_device::cavity_kernels!(SplitHighValence);

//! What cavity applications decide seeds by: an edge's length and whether
//! it is interior, and 16-bit priorities from lengths for the conflict
//! resolution ([`super::CavityApp::priority`]).

use crate::block::Block;
use crate::geometry::{norm, sub};

use super::Ctx;

/// Length of local edge `e`.
pub fn length<B: Block>(ctx: &Ctx<'_, B>, e: u32) -> f32 {
    let [a, b] = ctx.edge_vertices(e);
    norm(sub(ctx.position(a), ctx.position(b)))
}

/// Whether local edge `e` is interior (two faces).
pub fn interior<B: Block>(ctx: &Ctx<'_, B>, e: u32) -> bool {
    ctx.edge_faces(e).0 == 2
}

/// A 16-bit priority that puts shorter lengths first: the top bits of the
/// length's IEEE bits, which order like the values for non-negative floats
/// (a relative resolution of 1/128).
pub fn shortest_first(len: f32) -> u32 {
    len.max(0.0).to_bits() >> 16
}

/// A 16-bit priority that puts longer lengths first (see
/// [`shortest_first`]).
pub fn longest_first(len: f32) -> u32 {
    0xffff - shortest_first(len)
}

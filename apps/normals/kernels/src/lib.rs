//! Area-weighted unit vertex normals (RXMesh, listing 1) as a per-vertex
//! computation on the public model: each vertex sums the normals of its
//! faces (VF), each of length twice the face's area, and normalizes the
//! sum; a vertex without a face of nonzero area gets `[0, 0, 0]`.
//!
//! The kernel half of the normals application crate (`apps/normals`).
#![no_std]
#![feature(core_float_math)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

use cavity_device::attribute::Attr;
use cavity_device::block::Block;
use cavity_device::dynamic::compute::{Element, ElementComputation};
use cavity_device::geometry::{cross, sub};
use cavity_device::query::Query;

cavity_device::parameters! {
    /// Writes every vertex's unit area-weighted normal to `out`.
    pub struct VertexNormals {
        /// The normals.
        pub out: Attr<f32, 3>,
    }
}

impl ElementComputation for VertexNormals {
    const QUERY: Query = Query::VF;

    fn compute<B: Block>(&self, v: &Element<'_, B>) {
        let mut n = [0.0f32; 3];
        for f in v.neighbors() {
            let [a, b, c] = v.face_vertices(f).map(|x| v.position(x));
            let m = cross(sub(b, a), sub(c, a));
            for k in 0..3 {
                n[k] += m[k];
            }
        }
        let length = core::f32::math::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        let unit = if length > 0.0 {
            n.map(|x| x / length)
        } else {
            [0.0; 3]
        };
        v.set(&self.out, unit);
    }
}

cavity_device::element_kernels!(VertexNormals);

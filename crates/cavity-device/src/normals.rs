//! Area-weighted vertex normals through the query model (RXMesh listing 1):
//! each face adds its unnormalized normal (length twice its area) to its
//! three vertices with atomics, then every vertex normal is normalized
//! (kernels [`VertexNormals`] and [`NormalizeNormals`]).

use core::sync::atomic::{AtomicU32, Ordering};

use crate::block::{Block, SharedArena};
use crate::kernel::{ELEMENT_BOUNDS, slice_at};
use crate::layout::{PatchMesh, RawPatchMesh};
use crate::query::{self, Query};

/// Adds the area-weighted normals of `patch`'s owned faces to
/// `normals[3 * v .. 3 * v + 3]` (f32 bits) of their vertices.
/// `positions[3 * v + c]` is coordinate `c` of vertex handle `v`.
#[inline(always)]
pub fn accumulate<B: Block>(
    block: &B,
    arena: &mut SharedArena,
    mesh: &PatchMesh,
    patch: u32,
    positions: &[f32],
    normals: &[AtomicU32],
) {
    query::for_each(
        block,
        arena,
        mesh,
        patch,
        Query::FV,
        |_| true,
        |_, fv| {
            let p = |k: u32| {
                let v = 3 * fv.get(k) as usize;
                [positions[v], positions[v + 1], positions[v + 2]]
            };
            let (a, b, c) = (p(0), p(1), p(2));
            let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
            let w = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
            let n = [
                u[1] * w[2] - u[2] * w[1],
                u[2] * w[0] - u[0] * w[2],
                u[0] * w[1] - u[1] * w[0],
            ];
            for k in 0..3 {
                let v = 3 * fv.get(k) as usize;
                for (c, nc) in n.iter().enumerate() {
                    block.global_add_f32(&normals[v + c], *nc);
                }
            }
        },
    );
}

/// Normalizes vertex normal `v` in place; a zero normal (isolated vertex,
/// degenerate fan) stays zero.
#[inline(always)]
pub fn normalize(v: u32, normals: &[AtomicU32]) {
    let n = &normals[3 * v as usize..3 * v as usize + 3];
    let x = [0, 1, 2].map(|c| f32::from_bits(n[c].load(Ordering::Relaxed)));
    let len = core::f32::math::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
    if len > 0.0 {
        for c in 0..3 {
            n[c].store((x[c] / len).to_bits(), Ordering::Relaxed);
        }
    }
}

crate::kernel! {
    @core
    /// Area-weighted normal accumulation ([`accumulate`]), one block per
    /// patch: `positions` and `normals` are addresses of `n_positions` f32
    /// and `n_normals` f32-bit words.
    ///
    /// # Safety
    /// The mesh describes live arrays; `positions` is valid for reads and
    /// `normals` (zeroed, `3 × vertices` words) for atomic updates; dynamic
    /// shared memory is query FV's for the largest patch.
    #[launch_bounds = Query::FV.launch_bounds()]
    pub kernel VertexNormals(
        launch,
        mesh: RawPatchMesh,
        positions: u64,
        n_positions: u32,
        normals: u64,
        n_normals: u32,
    ) {
        // SAFETY: the kernel's contract.
        unsafe {
            let mesh = mesh.view();
            let positions = slice_at(positions, n_positions);
            let normals = slice_at(normals, n_normals);
            accumulate(launch.block, launch.arena, &mesh, launch.block_idx, positions, normals);
        }
    }
}

crate::kernel! {
    @core
    /// Normalizes `vertices` normals ([`normalize`]), element-wise.
    ///
    /// # Safety
    /// `normals` is valid for `3 × vertices` words.
    #[launch_bounds = ELEMENT_BOUNDS]
    pub kernel NormalizeNormals(launch, normals: u64, vertices: u32) {
        // SAFETY: the kernel's contract.
        let normals = unsafe { slice_at(normals, 3 * vertices) };
        let (mut i, stride) = launch.grid_stride();
        while i < vertices {
            normalize(i, normals);
            i += stride;
        }
    }
}

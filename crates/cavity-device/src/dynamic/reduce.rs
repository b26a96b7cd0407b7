//! Reductions over attributes of the dynamic mesh (`crate::attribute`):
//! dot product, sum and maximum over the active owned elements of one
//! kind, `y ← alpha x + y` and `y ← x + alpha y` (and their weighted forms
//! for a diagonal preconditioner), the building blocks of the matrix-free
//! solvers the static applications run (RXMesh appendix E: conjugate
//! gradients on attributes).
//!
//! One block per patch: each thread accumulates its elements in `f64`, the
//! block combines its threads' values by a tree in a fixed order and
//! writes one partial per patch, which the host combines in patch order. The result
//! does not depend on timing; it depends on the block size (the CPU
//! backend's blocks have one thread) only through rounding.

use crate::attribute::{AttrWords, ReduceOp, Reduction, ScalarType};
use crate::block::{Block, SharedArena, combine_f64, combine_scratch_len};
use crate::kernel::ELEMENT_BOUNDS;
use crate::layout::Kind;

use super::global::GlobalU32;
use super::layout::RawDynamicMesh;
use super::patch::DynMesh;

/// Shared-memory bytes of the [`Reduce`] kernel with `threads` threads
/// (its partial's scratch alone).
pub fn shared_bytes(threads: u32) -> usize {
    crate::array::partial_shared_bytes(threads)
}

/// The value `op` starts from (and gives over no element).
#[inline(always)]
pub fn identity(op: ReduceOp) -> f64 {
    match op {
        ReduceOp::Max => f64::NEG_INFINITY,
        ReduceOp::Dot
        | ReduceOp::Sum
        | ReduceOp::Axpy
        | ReduceOp::Xpay
        | ReduceOp::WeightedAxpy
        | ReduceOp::WeightedXpay => 0.0,
    }
}

/// Combines two partial results of `op`.
#[inline(always)]
pub fn combine(op: ReduceOp, a: f64, b: f64) -> f64 {
    match op {
        ReduceOp::Max => {
            if b > a {
                b
            } else {
                a
            }
        }
        ReduceOp::Dot
        | ReduceOp::Sum
        | ReduceOp::Axpy
        | ReduceOp::Xpay
        | ReduceOp::WeightedAxpy
        | ReduceOp::WeightedXpay => a + b,
    }
}

/// The operation of code `code` (`Sum` for an unknown code).
#[inline(always)]
pub fn op_of(code: u32) -> ReduceOp {
    match code {
        0 => ReduceOp::Dot,
        1 => ReduceOp::Max,
        2 => ReduceOp::Axpy,
        4 => ReduceOp::Xpay,
        5 => ReduceOp::WeightedAxpy,
        6 => ReduceOp::WeightedXpay,
        _ => ReduceOp::Sum,
    }
}

/// Component `c` of attribute `a` (of kind `kind`) of element `at` as an
/// `f64`. Plain loads: an element's words are read and written by the one
/// thread that reduces it, and by no other.
#[inline(always)]
fn load(mesh: &DynMesh, kind: Kind, a: &AttrWords, at: (u32, u32), c: u32) -> f64 {
    let ty = ScalarType::from_code(a.scalar);
    let n = ty.words();
    // SAFETY: only this thread accesses the words of element `at` during
    // the reduction (one block per patch slot, one thread per element).
    ty.load_f64(unsafe { mesh.load_value_unshared(kind, at, a.offset + c * n, n) })
}

/// Stores `x` as component `c` of attribute `a` of element `at` (plain
/// stores, as [`load`]); returns the square of the value stored (in the
/// attribute's type), which the `Axpy` and `Xpay` partials sum.
#[inline(always)]
fn store(mesh: &DynMesh, kind: Kind, a: &AttrWords, at: (u32, u32), c: u32, x: f64) -> f64 {
    let ty = ScalarType::from_code(a.scalar);
    let n = ty.words();
    let words = ty.store_f64(x);
    // SAFETY: as in `load`.
    unsafe { mesh.store_value_unshared(kind, at, a.offset + c * n, words, n) };
    let stored = ty.load_f64(words);
    stored * stored
}

/// Whether the reduction's operands lie within their kind's attribute
/// words and agree in kind, type and components (the host checks the
/// same; a kernel given others does nothing).
#[inline(always)]
fn sound(mesh: &DynMesh, r: &Reduction) -> bool {
    r.fits(|kind| mesh.cap.attr_stride(kind))
}

/// This thread's partial of `r` (of kind `kind`) over its active owned
/// elements of patch `p` ([`reduce`]). The weighted operations share the
/// plain ones' code with a weight of 1 for those: the loop's body as
/// small as it was before them (the conjugate gradient's vector updates
/// run at memory speed only while it stays so).
#[inline(always)]
fn accumulate<B: Block>(block: &B, mesh: &DynMesh, kind: Kind, p: u32, r: &Reduction) -> f64 {
    let op = op_of(r.op);
    let weighted = matches!(op, ReduceOp::WeightedAxpy | ReduceOp::WeightedXpay);
    let mut acc = identity(op);
    // `Block::for_each` written out: as a closure, the body was not always
    // inlined on the GPU, and every element became a call with its state
    // in local memory (twice the conjugate gradient's time).
    let (n, step) = (mesh.count(p, kind), block.block_dim());
    let mut l = block.thread_idx();
    while l < n {
        let at = (p, l);
        l += step;
        if !mesh.owns_active(p, kind, at.1) {
            continue;
        }
        let w = if weighted {
            load(mesh, kind, &r.w, at, 0)
        } else {
            1.0
        };
        for c in 0..r.x.components {
            let x = load(mesh, kind, &r.x, at, c);
            match op {
                ReduceOp::Dot => acc += x * load(mesh, kind, &r.y, at, c),
                ReduceOp::Sum => acc += x,
                ReduceOp::Max => acc = combine(op, acc, x),
                ReduceOp::Axpy | ReduceOp::WeightedAxpy => {
                    let y = load(mesh, kind, &r.y, at, c);
                    acc += w * store(mesh, kind, &r.y, at, c, r.alpha * x + y);
                }
                ReduceOp::Xpay | ReduceOp::WeightedXpay => {
                    let y = load(mesh, kind, &r.y, at, c);
                    // `alpha = 0` copies, whatever `y` held (NaN too).
                    let ay = if r.alpha == 0.0 { 0.0 } else { r.alpha * y };
                    acc += store(mesh, kind, &r.y, at, c, w * x + ay);
                }
            }
        }
    }
    acc
}

/// Kernel body, one block per patch `p`: reduces `r` over the active owned
/// elements of `p` (applies it, for `Axpy` and `Xpay`, and sums the
/// squares of the values stored: `y · y` afterwards, in the order `Dot`
/// takes it; weighted by `w` for `WeightedAxpy`) and writes the patch's partial to `partials[p]`.
#[inline(always)]
pub fn reduce<B: Block>(
    block: &B,
    arena: &mut SharedArena,
    mesh: &DynMesh,
    p: u32,
    r: &Reduction,
    partials: GlobalU32,
) {
    let op = op_of(r.op);
    let scratch = arena.alloc::<u32>(combine_scratch_len(block.block_dim()));
    arena.check();
    let acc = if sound(mesh, r) {
        // The kind a constant in each copy of the loop: indexed by a
        // run-time kind, the capacities would go to local memory.
        Kind::from_u32(r.x.kind).specialize(|kind| accumulate(block, mesh, kind, p, r))
    } else {
        identity(op)
    };
    let total = combine_f64(block, scratch, acc, |a, b| combine(op, a, b));
    if block.thread_idx() == 0 {
        let bits = total.to_bits();
        partials.store(2 * p, bits as u32);
        partials.store(2 * p + 1, (bits >> 32) as u32);
    }
}

crate::kernel! {
    @core
    /// An attribute reduction ([`reduce`]): one block per patch slot in
    /// use, [`shared_bytes`] of shared memory; `partials` holds an `f64`
    /// per patch.
    ///
    /// # Safety
    /// The mesh describes live arrays of a dynamic mesh; `partials` points
    /// at `2 × grid` words.
    #[launch_bounds = ELEMENT_BOUNDS]
    pub kernel Reduce(launch, mesh: RawDynamicMesh, r: Reduction, partials: u64) {
        // SAFETY: the kernel's contract.
        let (m, out) = unsafe { (DynMesh::new(&mesh), GlobalU32::new(partials)) };
        reduce(launch.block, launch.arena, &m, launch.block_idx, &r, out);
    }
}

//! The flow's step on an assembled system: preconditioned conjugate
//! gradients (Shewchuk 1994, B3) on arrays for a matrix the host built
//! in compressed rows, the intrinsic Delaunay Laplacian's (Sharp and
//! Crane 2020, sections 4.5-4.6), whose edges are not the mesh's and so
//! not the patches' (`cavity-mcf`'s `intrinsic` module builds it).
//!
//! The system `A u = b` has one row per free vertex: `A = M + dt K`
//! restricted to the free vertices, stored as its diagonal and its
//! off-diagonal entries negated (`dt w_ij ≥ 0` of the free neighbours),
//! three components (`x`, `y`, `z`) per row in every vector. The kernels
//! are checked (`cavity_device::kernel::CheckedKernel`), `cavity_device::array::CHUNK` rows
//! per block; the two that reduce write one `f64` per block (two words,
//! low first) to `partials`, which the host sums in block order:
//! [`SystemProduct`] (`q ← A d` and `dᵀ q`), [`ResidualUpdate`] (`u ← u +
//! α d`, `r ← r - α q` and `rᵀ D⁻¹ r`) and [`DirectionUpdate`] (`d ← D⁻¹ r
//! + β d`). Without preconditioning the host passes `D⁻¹ = 1`.

pub use cavity_device::array::blocks;

use cavity_device::array::{self, BOUNDS, In, InOut, chunk};
use cavity_device::block::{Block, SharedArena, combine_scratch_len};

/// Shared-memory bytes of the reducing kernels with `threads` threads per
/// block.
pub fn shared_bytes(threads: u32) -> usize {
    array::partial_shared_bytes(threads)
}

/// Sums every thread's `value` over the block and writes it as block
/// `b`'s partial ([`array::write_partial`]).
#[inline(always)]
fn write_partial<B: Block>(
    block: &B,
    arena: &mut SharedArena,
    b: u32,
    value: f64,
    partials: &InOut<u32>,
) {
    let scratch = arena.alloc::<u32>(combine_scratch_len(block.block_dim()));
    arena.check();
    array::write_partial(block, scratch, value, |x, y| x + y, partials, b);
}

cavity_device::kernel! {
    /// `output ← A input` for the `rows` rows of the system (row `i`:
    /// `diagonal[i] input_i - Σ weights[k] input_{columns[k]}` over `k` in
    /// `offsets[i]..offsets[i + 1]`), and `inputᵀ output` as the block's
    /// partial; three words per row in `input` and `output`. Dynamic
    /// shared memory [`shared_bytes`].
    ///
    /// # Safety
    /// Checked: the inputs are only read; one thread writes each row of
    /// `output`, named by its index, and one each block's partial.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel SystemProduct(
        launch,
        offsets: In<u32>,
        columns: In<u32>,
        weights: In<f32>,
        diagonal: In<f32>,
        rows: u32,
        input: In<f32>,
        output: InOut<f32>,
        partials: InOut<u32>,
    ) {
        // Three words a row of `output` without wrapping: one thread per
        // row writes its own.
        assert!(rows <= output.len() / 3, "`output` holds three words per row");
        let (start, end) = chunk(launch.block_idx, rows);
        let mut dot = 0.0f64;
        launch.block.for_each(end - start, |k| {
            let i = start + k;
            let at = |j: u32, c: u32| input.get((3 * j).wrapping_add(c));
            let d = diagonal.get(i);
            let mut y = [d * at(i, 0), d * at(i, 1), d * at(i, 2)];
            for e in offsets.get(i)..offsets.get(i + 1) {
                let (j, w) = (columns.get(e), weights.get(e));
                for (c, y) in y.iter_mut().enumerate() {
                    *y -= w * at(j, c as u32);
                }
            }
            for (c, y) in y.into_iter().enumerate() {
                dot += f64::from(at(i, c as u32)) * f64::from(y);
                // SAFETY: one thread writes each row's words.
                unsafe { output.set_unshared(3 * i + c as u32, y) };
            }
        });
        write_partial(launch.block, launch.arena, launch.block_idx, dot, &partials);
    }
}

cavity_device::kernel! {
    /// The conjugate gradient's step along the direction: `u ← u + alpha
    /// d` and `r ← r - alpha q` for the `rows` rows, and `rᵀ D⁻¹ r` of the
    /// new `r` (`D⁻¹` the `inverse_diagonal`) as the block's partial.
    /// Dynamic shared memory [`shared_bytes`].
    ///
    /// # Safety
    /// Checked: `d`, `q` and `inverse_diagonal` are only read; one thread
    /// reads and writes each row of `u` and `r`, and one each block's
    /// partial.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel ResidualUpdate(
        launch,
        alpha: f32,
        rows: u32,
        d: In<f32>,
        q: In<f32>,
        inverse_diagonal: In<f32>,
        u: InOut<f32>,
        r: InOut<f32>,
        partials: InOut<u32>,
    ) {
        assert!(rows <= u.len() / 3 && rows <= r.len() / 3, "three words per row");
        let (start, end) = chunk(launch.block_idx, rows);
        let mut norm = 0.0f64;
        launch.block.for_each(end - start, |k| {
            let i = start + k;
            let w = f64::from(inverse_diagonal.get(i));
            for c in 0..3 {
                let at = 3 * i + c;
                // SAFETY: one thread reads and writes each row's words.
                let ri = unsafe {
                    u.set_unshared(at, u.get_unshared(at) + alpha * d.get(at));
                    let ri = r.get_unshared(at) - alpha * q.get(at);
                    r.set_unshared(at, ri);
                    ri
                };
                norm += w * f64::from(ri) * f64::from(ri);
            }
        });
        write_partial(launch.block, launch.arena, launch.block_idx, norm, &partials);
    }
}

cavity_device::kernel! {
    /// The conjugate gradient's new direction: `d ← D⁻¹ r + beta d` for
    /// the `rows` rows (`D⁻¹` the `inverse_diagonal`).
    ///
    /// # Safety
    /// Checked: `r` and `inverse_diagonal` are only read; one thread reads
    /// and writes each row of `d`.
    #[launch_bounds = BOUNDS]
    #[checked]
    pub kernel DirectionUpdate(
        launch,
        beta: f32,
        rows: u32,
        r: In<f32>,
        inverse_diagonal: In<f32>,
        d: InOut<f32>,
    ) {
        assert!(rows <= d.len() / 3, "`d` holds three words per row");
        let (start, end) = chunk(launch.block_idx, rows);
        launch.block.for_each(end - start, |k| {
            let i = start + k;
            let w = inverse_diagonal.get(i);
            for c in 0..3 {
                let at = 3 * i + c;
                // SAFETY: one thread reads and writes each row's words.
                unsafe { d.set_unshared(at, w * r.get(at) + beta * d.get_unshared(at)) };
            }
        });
    }
}

/// The dynamic shared memory of the reducing kernels as the host's launch
/// takes it: (a GPU block's, a CPU-backend block's of one thread).
pub fn launch_shared_bytes() -> (usize, usize) {
    array::partial_launch_bytes()
}

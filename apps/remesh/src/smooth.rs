//! Smoothing on the dynamic mesh, tangential (remeshing) or null-space
//! (tracking), as a pipeline of the patch computations of
//! [`cavity_remesh_kernels::smooth`]: the rings once, the steps between
//! the scratch's two position buffers, the copy over the positions.

use cavity::rounds::{ForEachPatch, RunError};
use cavity_remesh_kernels::smooth::{SmoothApply, SmoothRings, SmoothStep, Smoothing};

/// Rounds that run the smoothing (the CPU backend's and the GPU's do).
pub trait SmoothRounds:
    ForEachPatch<SmoothRings> + ForEachPatch<SmoothStep> + ForEachPatch<SmoothApply>
{
}

impl<R> SmoothRounds for R where
    R: ForEachPatch<SmoothRings> + ForEachPatch<SmoothStep> + ForEachPatch<SmoothApply> + ?Sized
{
}

/// `steps` smoothing steps of every owned vertex with `params` on the
/// rounds' mesh; nothing when `steps` is 0.
///
/// # Errors
/// As `ForEachPatch::for_each_patch`: a scratch past 32-bit indices (lower
/// the patch factor), or the GPU's errors.
pub fn smooth<R: SmoothRounds + ?Sized>(
    r: &mut R,
    params: &Smoothing,
    steps: u32,
) -> Result<(), RunError> {
    if steps == 0 {
        return Ok(());
    }
    let params = *params;
    r.for_each_patch(&SmoothRings { params })?;
    let mut from = 0;
    for _ in 0..steps {
        r.for_each_patch(&SmoothStep { params, from })?;
        from ^= 1;
    }
    r.for_each_patch(&SmoothApply { from })
}

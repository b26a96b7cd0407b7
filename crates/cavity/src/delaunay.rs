//! Delaunay edge flips on the dynamic mesh (dynamic paper, section 6.2):
//! sweeps of update rounds ([`crate::rounds`]) until a sweep flips nothing;
//! a sweep after the first visits only the patches that changed in the
//! previous one (only a patch's own commits change its edges' criterion: a
//! flip's closure, with the four edges around it, is owned by the patch
//! that flips).

pub use cavity_device::delaunay::Delaunay;

use crate::dynamic::DynamicMesh;
use crate::rounds::{RunError, RunReport, Update, sweeps};

/// What a Delaunay run did (`flips`: edges flipped).
pub type FlipReport = RunReport;

/// Flips every non-Delaunay interior edge until none is left. `after_round`
/// sees the mesh after every round's cleanup when given (the tests validate
/// it there; on the GPU that copies the mesh back every round).
pub fn flip_edges<R: Update<Delaunay> + ?Sized>(
    runner: &mut R,
    after_round: Option<&mut dyn FnMut(&DynamicMesh)>,
) -> Result<FlipReport, RunError> {
    sweeps(runner, &Delaunay, true, after_round)
}

//! Delaunay edge flips on the dynamic mesh (dynamic paper, section 6.2):
//! sweeps of update rounds ([`crate::rounds`]) until a sweep flips nothing;
//! a sweep after the first visits only the patches that changed in the
//! previous one (only a patch's own commits change its edges' criterion: a
//! flip's closure, with the four edges around it, is owned by the patch
//! that flips).

pub use cavity_device::delaunay::Delaunay;

use crate::TriMesh;
use crate::backend::{Backend, BackendError};
use crate::dynamic::{CapacityFactors, DynamicError, DynamicMesh};
use crate::normalize::Normalization;
use crate::rounds::{RunError, RunReport, Update, sweeps};
use crate::settings::{NamesSettings, Setting};

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

/// Flips the edges of `input` to Delaunay on `backend` ([`flip_edges`] on a
/// dynamic mesh of `patch_size` faces per patch with `factors`), in the
/// unit box ([`crate::normalize`]) so that every scale flips the same
/// edges. Returns the flipped mesh (the input's vertices in input order,
/// bit for bit: flips move none), the report and the device's name.
///
/// # Errors
/// The dynamic mesh's (a setting out of range, a patch too large), or a
/// failed run's (out of capacity: the message names the setting to raise).
pub fn delaunay(
    input: &TriMesh,
    patch_size: u32,
    factors: CapacityFactors,
    backend: &Backend,
) -> Result<(TriMesh, FlipReport, String), DelaunayError> {
    let normalization = Normalization::of(input);
    let normalized = normalization.apply(input);
    let mut dynamic = DynamicMesh::new(&normalized, patch_size, factors)?;
    let ran = backend.run_rounds(
        &mut dynamic,
        |r| flip_edges(r, None).map_err(DelaunayError::Run),
        DelaunayError::Run,
    )?;
    let (mut output, sources) = dynamic.to_mesh_with_sources();
    normalization.restore_from(&mut output, &sources, input, &normalized);
    Ok((output, ran.value, ran.device))
}

/// Errors of [`delaunay`].
#[derive(Debug, thiserror::Error)]
pub enum DelaunayError {
    /// Building the dynamic mesh failed.
    #[error(transparent)]
    Dynamic(#[from] DynamicError),
    /// The flips failed (out of capacity, or no progress).
    #[error(transparent)]
    Run(RunError),
    /// The GPU failed.
    #[error(transparent)]
    Backend(#[from] BackendError),
}

impl NamesSettings for DelaunayError {
    fn settings(&self) -> Vec<Setting> {
        match self {
            DelaunayError::Dynamic(e) => e.settings(),
            DelaunayError::Run(e) => e.settings(),
            DelaunayError::Backend(e) => e.settings(),
        }
    }
}

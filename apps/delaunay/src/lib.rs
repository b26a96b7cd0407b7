//! Delaunay edge flips on the dynamic mesh (dynamic paper, section 6.2):
//! sweeps of update rounds (`cavity::rounds`) until a sweep flips nothing;
//! a sweep after the first visits only the patches that changed in the
//! previous one (only a patch's own commits change its edges' criterion: a
//! flip's closure, with the four edges around it, is owned by the patch
//! that flips).
//!
//! An application crate on cavity's public model, as RXMesh keeps its
//! `apps/`: the cavity application is in `cavity-delaunay-kernels`, its
//! PTX this crate's own module ([`PTX`], loaded by [`add_kernels`]);
//! this crate holds the driver ([`delaunay`], [`flip_edges`]), a serial
//! flipper ([`serial`], the benchmark's single-core comparison and a test
//! oracle) and the benchmark ([`bench`](mod@bench), `cavity bench delaunay`).

pub mod bench;
pub mod serial;

pub use cavity_delaunay_kernels::{Delaunay, TOLERANCE, cotangent};

use cavity::TriMesh;
use cavity::attributes::AttributeLayout;
use cavity::backend::{Backend, BackendError, FacesOn, PlaceError, TopologyOn};
use cavity::dynamic::{CapacityFactors, DynamicError, DynamicMesh};
use cavity::normalize::Normalization;
use cavity::rounds::{RunError, RunReport, Update, sweeps};
use cavity::settings::{NamesSettings, Setting};
use cavity::topology::Topology;

cavity::kernel_module!("cavity_delaunay_kernels.ptx");

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
/// unit box (`cavity::normalize`) so that every scale flips the same
/// edges. Returns the flipped mesh (the input's vertices in input order,
/// bit for bit: flips move none), the report and the device's name.
///
/// The topology is built where the backend builds it best
/// (`Backend::topology_on`: on the GPU on the device).
///
/// # Errors
/// The dynamic mesh's (a setting out of range, a patch too large), a
/// face's vertex past the vertices (`BackendError::Index`), or a failed
/// run's (out of capacity: the message names the setting to raise).
pub fn delaunay(
    input: &TriMesh,
    patch_size: u32,
    factors: CapacityFactors,
    backend: &Backend,
) -> Result<(TriMesh, FlipReport, String), DelaunayError> {
    let topology = backend.topology_on(input)?;
    delaunay_on(input, topology, patch_size, factors, backend).map(Flipped::into_parts)
}

/// [`delaunay`] with the topology of `input` given
/// (`Topology::new(input)`), for a caller that has it.
///
/// # Errors
/// As [`delaunay`].
pub fn delaunay_with(
    input: &TriMesh,
    topology: &Topology,
    patch_size: u32,
    factors: CapacityFactors,
    backend: &Backend,
) -> Result<(TriMesh, FlipReport, String), DelaunayError> {
    let topology = TopologyOn::of(backend, topology)?;
    delaunay_on(input, topology, patch_size, factors, backend).map(Flipped::into_parts)
}

/// A mesh flipped by [`delaunay_on`].
pub struct Flipped {
    /// The flipped mesh (the input's vertices in input order, bit for
    /// bit).
    pub mesh: TriMesh,
    /// Its faces where the backend that flipped them holds them
    /// (`Exported::faces_on`), for a survey of the output that reads them
    /// there (`Backend::survey_with`); `None` where the host exported it.
    pub faces_on: Option<FacesOn>,
    /// What the flips did.
    pub report: FlipReport,
    /// The device's name.
    pub device: String,
}

impl Flipped {
    /// The mesh, the report and the device's name, as [`delaunay`] gives
    /// them (the faces on the backend dropped).
    pub fn into_parts(self) -> (TriMesh, FlipReport, String) {
        (self.mesh, self.report, self.device)
    }
}

/// [`delaunay`] from the topology of `input` made for `backend`
/// (`Backend::topology_on`, `TopologyOn::of`; on the GPU one built on the
/// device is read there), dropped (its device memory given back) once the
/// mesh is placed, before the flips. The flipped mesh is exported where it
/// lies (`Backend::run_placed_exported`: on the GPU only the output is
/// copied back) and returned as [`Flipped`], with its faces left where the
/// export wrote them (for a survey of the output there).
///
/// # Errors
/// As [`delaunay`].
pub fn delaunay_on(
    input: &TriMesh,
    topology: TopologyOn<'_>,
    patch_size: u32,
    factors: CapacityFactors,
    backend: &Backend,
) -> Result<Flipped, DelaunayError> {
    add_kernels(backend)?;
    let normalization = Normalization::of(input);
    // On the GPU patched and laid out on the device, where the layout
    // stays; the host normalizes meanwhile.
    let layout = AttributeLayout::new();
    let (placed, normalized) = backend
        .place_normalized(
            input,
            &normalization,
            &topology,
            patch_size,
            (factors, &layout),
        )
        .map_err(PlaceError::into_either::<DelaunayError>)?;
    drop(topology);
    let (ran, exported) = backend.run_placed_exported(
        placed,
        |r| flip_edges(r, None).map_err(DelaunayError::Run),
        DelaunayError::Run,
    )?;
    let mut mesh = exported.mesh;
    normalization.restore_from(&mut mesh, &exported.sources, input, &normalized);
    Ok(Flipped {
        mesh,
        faces_on: exported.faces_on,
        report: ran.value,
        device: ran.device,
    })
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

cavity::names_settings!(DelaunayError);

//! The dynamic rounds of either backend behind one type ([`AnyRounds`]).

use cavity_device::attribute::Reduction;
use cavity_device::dynamic::compute::ElementKernels;
use cavity_device::dynamic::patch_computation::PatchKernels;
use cavity_device::dynamic::ring::RingKernels;
use cavity_device::dynamic::update::CavityKernels;
use cavity_device::layout::Kind;
use cavity_device::query::Query;

use super::cpu::CpuRounds;
use super::cuda::CudaRounds;
use crate::attributes::AttributeLayout;
use crate::dynamic::DynamicMesh;
use crate::rings::ForEachRing;
use crate::rounds::{
    ForEach, ForEachPatch, OwnedWords, Rounds, RunError, SlotRows, Status, Update,
};

/// Rounds on either backend, what [`Backend::run_rounds`] hands its
/// driver, so that one driver body (remeshing, tracking, the Delaunay
/// flips, the tests) serves both: its update rounds run any application
/// with GPU kernels ([`CavityKernels`], declared by
/// `cavity_device::cavity_kernels!`).
///
/// [`Backend::run_rounds`]: crate::backend::Backend::run_rounds
pub enum AnyRounds<'a> {
    /// The CPU backend's rounds.
    Cpu(CpuRounds<'a>),
    /// The GPU's rounds.
    Cuda(Box<CudaRounds<'a>>),
}

/// Calls `$call` on the backend's rounds.
macro_rules! on_backend {
    ($self:expr, $r:ident => $call:expr) => {
        match $self {
            AnyRounds::Cpu($r) => $call,
            AnyRounds::Cuda($r) => $call,
        }
    };
}

impl Rounds for AnyRounds<'_> {
    fn refill(&mut self, changed_only: bool) -> Result<(), RunError> {
        on_backend!(self, r => r.refill(changed_only))
    }
    fn slice(&mut self, seed: Kind) -> Result<(), RunError> {
        on_backend!(self, r => r.slice(seed))
    }
    fn status(&mut self) -> Result<Status, RunError> {
        on_backend!(self, r => r.status())
    }
    fn round_status(&mut self) -> Result<Status, RunError> {
        on_backend!(self, r => r.round_status())
    }
    fn runs_ahead(&self) -> bool {
        on_backend!(self, r => r.runs_ahead())
    }
    fn mesh(&mut self) -> Result<&DynamicMesh, RunError> {
        on_backend!(self, r => r.mesh())
    }
    fn owned_words(&mut self, kind: Kind, first: u32, words: u32) -> Result<OwnedWords, RunError> {
        on_backend!(self, r => r.owned_words(kind, first, words))
    }
    fn set_by_input(
        &mut self,
        kind: Kind,
        first: u32,
        words: u32,
        values: &[u32],
    ) -> Result<(), RunError> {
        on_backend!(self, r => r.set_by_input(kind, first, words, values))
    }
    fn owner_patches(&mut self, kind: Kind) -> Result<(Vec<u32>, Vec<u32>), RunError> {
        on_backend!(self, r => r.owner_patches(kind))
    }
    fn neighbour_patches(&mut self) -> Result<Vec<Vec<u32>>, RunError> {
        on_backend!(self, r => r.neighbour_patches())
    }
    fn device(&self) -> String {
        on_backend!(self, r => r.device())
    }
    fn attributes(&self) -> &AttributeLayout {
        on_backend!(self, r => r.attributes())
    }
    fn export_query(&mut self, query: Query) -> Result<SlotRows, RunError> {
        on_backend!(self, r => r.export_query(query))
    }
    fn export_ring(&mut self, k: u32) -> Result<SlotRows, RunError> {
        on_backend!(self, r => r.export_ring(k))
    }
    fn reduce(&mut self, r: &Reduction) -> Result<f64, RunError> {
        on_backend!(self, x => x.reduce(r))
    }
    fn take_count(&mut self) -> Result<u64, RunError> {
        on_backend!(self, r => r.take_count())
    }
    fn take_marked_patches(&mut self) -> Result<Vec<u32>, RunError> {
        on_backend!(self, r => r.take_marked_patches())
    }
}

impl<C: ElementKernels> ForEach<C> for AnyRounds<'_> {
    fn for_each(&mut self, c: &C) -> Result<(), RunError> {
        on_backend!(self, r => r.for_each(c))
    }
    fn for_each_in(&mut self, c: &C, patches: &[u32]) -> Result<(), RunError> {
        on_backend!(self, r => r.for_each_in(c, patches))
    }
}

impl<C: RingKernels> ForEachRing<C> for AnyRounds<'_> {
    fn for_each_ring(&mut self, c: &C) -> Result<(), RunError> {
        on_backend!(self, r => r.for_each_ring(c))
    }
}

impl<A: CavityKernels> Update<A> for AnyRounds<'_> {
    fn survey(&mut self, app: &A) -> Result<(), RunError> {
        on_backend!(self, r => r.survey(app))
    }
    fn round(&mut self, app: &A, blocks: u32) -> Result<(), RunError> {
        on_backend!(self, r => r.round(app, blocks))
    }
}

impl<C: PatchKernels> ForEachPatch<C> for AnyRounds<'_> {
    fn for_each_patch(&mut self, c: &C) -> Result<(), RunError> {
        on_backend!(self, r => r.for_each_patch(c))
    }
}

//! Delaunay edge flips on the dynamic mesh (dynamic paper, section 6.2):
//! sweeps of update rounds ([`crate::rounds`]) until a sweep flips nothing;
//! a sweep after the first visits only the patches that changed in the
//! previous one.

use std::time::Instant;

pub use cavity_device::delaunay::Delaunay;
use cavity_device::dynamic::layout::stat;

use crate::dynamic::DynamicMesh;
use crate::rounds::{MAX_ROUNDS, Rounds, RunError};

/// Most sweeps.
pub const MAX_SWEEPS: u32 = 1_000;

/// What a Delaunay run did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlipReport {
    /// Edges flipped.
    pub flips: u64,
    /// Sweeps (the last one flipped nothing).
    pub sweeps: u32,
    /// Update rounds (launches of the update kernel).
    pub rounds: u32,
    /// Patches dequeued by blocks.
    pub scheduled: u64,
    /// Dequeued patches given back without a commit (fig. 6's rolled-back
    /// work).
    pub rolled_back: u64,
    /// Cavities that lost a conflict or could not own their closure
    /// (retried).
    pub lost: u64,
    /// Wall time in seconds.
    pub seconds: f64,
}

impl FlipReport {
    /// Rolled-back patches over scheduled patches.
    pub fn rollback_fraction(&self) -> f64 {
        self.rolled_back as f64 / self.scheduled.max(1) as f64
    }
}

/// Flips every non-Delaunay interior edge until none is left. `after_round`
/// sees the mesh after every round's cleanup when given (the tests validate
/// it there; on the GPU that copies the mesh back every round).
pub fn flip_edges<R: Rounds<Delaunay>>(
    runner: &mut R,
    mut after_round: Option<&mut dyn FnMut(&DynamicMesh)>,
) -> Result<FlipReport, RunError> {
    let start = Instant::now();
    let mut report = FlipReport::default();
    for sweep in 0..MAX_SWEEPS {
        // Only a patch's own commits change its edges' criterion (a flip's
        // closure, with the four edges around it, is owned by the patch
        // that flips): after the first sweep, only patches that committed
        // or declined a flip are visited again.
        runner.refill(sweep > 0)?;
        let mut rounds = 0;
        let mut queued = runner.status()?.queued;
        let status = loop {
            if rounds == MAX_ROUNDS {
                return Err(RunError::Stuck(rounds));
            }
            runner.round(queued, (sweep << 16) ^ rounds)?;
            rounds += 1;
            let status = runner.status()?;
            if let Some(e) = status.error() {
                return Err(e);
            }
            if let Some(f) = after_round.as_mut() {
                f(runner.mesh()?);
            }
            queued = status.queued;
            if queued == 0 {
                break status;
            }
        };
        let flips = status.stats[stat::FILLED as usize] as u64;
        report.flips += flips;
        report.sweeps += 1;
        report.rounds += rounds;
        report.scheduled += status.stats[stat::SCHEDULED as usize] as u64;
        report.rolled_back += status.stats[stat::ROLLED_BACK as usize] as u64;
        report.lost += status.stats[stat::LOST as usize] as u64;
        if flips == 0 {
            break;
        }
    }
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}

//! Delaunay edge flips on the dynamic mesh (dynamic paper, section 6.2):
//! the host loop of the scheduler. Each sweep enqueues every patch and runs
//! update rounds (one block per queued patch, then the cleanup kernels)
//! until the queue is empty; sweeps repeat until one flips nothing.

use std::time::Instant;

use cavity_device::delaunay::Delaunay;
use cavity_device::dynamic::layout::{NO_PATCH, flag, stat};
use cavity_device::dynamic::scheduler;

use crate::backend::cpu::CpuBackend;
use crate::dynamic::DynamicMesh;

/// Most update rounds per sweep before the run is declared stuck.
pub const MAX_ROUNDS: u32 = 10_000;
/// Most sweeps.
pub const MAX_SWEEPS: u32 = 1_000;

/// What a Delaunay run did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlipReport {
    /// Edges flipped.
    pub flips: u64,
    /// Sweeps (the last one flipped nothing).
    pub sweeps: u32,
    /// Update rounds (kernel launches of the update kernel).
    pub rounds: u32,
    /// Patches dequeued by blocks.
    pub scheduled: u64,
    /// Dequeued patches given back without a commit (fig. 6's rolled-back
    /// work).
    pub rolled_back: u64,
    /// Cavities that lost a conflict or could not own their closure (retried).
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

/// Errors of the dynamic runs.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A patch ran out of element slots.
    #[error(
        "patch {patch} ran out of element slots: raise --capacity-factor (patch slicing is not available yet)"
    )]
    Capacity {
        /// The patch.
        patch: u32,
    },
    /// A capacity no round can fix was exceeded.
    #[error("{0}")]
    Fatal(&'static str),
    /// The rounds stopped making progress.
    #[error("no progress after {0} rounds")]
    Stuck(u32),
}

/// Enqueues patches `0..n` and clears the counters.
fn refill(mesh: &mut DynamicMesh) {
    let n = mesh.num_patches;
    for (i, q) in mesh.queue.iter_mut().enumerate() {
        *q = if (i as u32) < n { i as u32 } else { NO_PATCH };
    }
    mesh.queue_state[scheduler::COUNT as usize] = n;
    mesh.queue_state[1] = 0;
    mesh.queue_state[2] = n;
}

/// Flips every non-Delaunay interior edge until none is left, on the CPU
/// backend (all of rayon's workers racing for patches). `after_round` sees
/// the mesh after every round's cleanup (the tests validate it there).
pub fn flip_edges(
    mesh: &mut DynamicMesh,
    cpu: &CpuBackend,
    mut after_round: impl FnMut(&DynamicMesh),
) -> Result<FlipReport, RunError> {
    let start = Instant::now();
    let mut report = FlipReport::default();
    for sweep in 0..MAX_SWEEPS {
        refill(mesh);
        mesh.stats.fill(0);
        let mut rounds = 0;
        loop {
            let queued = mesh.queue_state[scheduler::COUNT as usize];
            if queued == 0 {
                break;
            }
            if rounds == MAX_ROUNDS {
                return Err(RunError::Stuck(rounds));
            }
            let raw = mesh.raw();
            let salt = (sweep << 16) ^ rounds;
            // SAFETY: `raw` names `mesh`'s arrays, which nothing else touches
            // until the calls return.
            unsafe {
                cpu.update_round(&raw, &Delaunay, queued, salt);
                cpu.cleanup(&raw);
            }
            rounds += 1;
            match mesh.stats[stat::FATAL as usize] {
                0 => {}
                1 => {
                    return Err(RunError::Fatal(
                        "a patch has more than 64 neighbour patches: raise --patch-size",
                    ));
                }
                2 => {
                    return Err(RunError::Fatal(
                        "a ribbon hash table is full: raise --capacity-factor",
                    ));
                }
                _ => return Err(RunError::Fatal("an ownership chain could not be resolved")),
            }
            if let Some(p) = mesh.flags.iter().position(|f| f & flag::SLICE != 0) {
                return Err(RunError::Capacity { patch: p as u32 });
            }
            after_round(mesh);
        }
        let flips = mesh.stats[stat::FILLED as usize] as u64;
        report.flips += flips;
        report.sweeps += 1;
        report.rounds += rounds;
        report.scheduled += mesh.stats[stat::SCHEDULED as usize] as u64;
        report.rolled_back += mesh.stats[stat::ROLLED_BACK as usize] as u64;
        report.lost += mesh.stats[stat::LOST as usize] as u64;
        if flips == 0 {
            break;
        }
    }
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}

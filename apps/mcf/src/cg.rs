//! The flow's conjugate gradient (Shewchuk 1994, "An Introduction to the
//! Conjugate Gradient Method Without the Agonizing Pain", B2, and B3 with a
//! preconditioner `D`), written once over the operations a storage
//! provides ([`CgSteps`]): the patches' attributes with the matrix-free
//! product (`crate::solve_step`) or the assembled system's arrays
//! (`crate::assembled`).

use std::time::Instant;

use crate::StepReport;

/// One conjugate gradient's operations on the vectors `u` (the solution,
/// from 0), `r` (the residual, from the right-hand side), `d` (the
/// direction) and `q`, for a matrix `A` and a diagonal preconditioner `D`
/// (`D = I` without one).
pub(crate) trait CgSteps {
    /// What an operation's failure is.
    type Error;
    /// `d ← D⁻¹ r`; returns `δ = rᵀ D⁻¹ r`.
    fn start(&mut self) -> Result<f64, Self::Error>;
    /// `q ← A d`; returns `dᵀ q`.
    fn product(&mut self) -> Result<f64, Self::Error>;
    /// `u ← u + α d` and `r ← r - α q`; returns the new `δ = rᵀ D⁻¹ r`.
    fn step(&mut self, alpha: f64) -> Result<f64, Self::Error>;
    /// `d ← D⁻¹ r + β d`.
    fn direction(&mut self, beta: f64) -> Result<(), Self::Error>;
}

/// Runs the conjugate gradient of `steps` from its start: stops after
/// `max_iterations`, when `δ` falls to `tolerance²` times its start (the
/// preconditioned residual's norm to `tolerance` of its start), or when
/// the direction's curvature `dᵀ A d` is not positive (rounding on a
/// singular system). The residual is the recurrence's, not recomputed from
/// `u`. A non-finite `δ` or curvature (an overflow) ends it with an
/// infinite residual, not converged ([`StepReport::broke_down`]).
///
/// # Errors
/// The first failed operation's error.
pub(crate) fn conjugate_gradient<S: CgSteps>(
    steps: &mut S,
    tolerance: f32,
    max_iterations: u32,
) -> Result<StepReport, S::Error> {
    let start = Instant::now();
    let mut delta = steps.start()?;
    let delta_0 = delta;
    let stop = f64::from(tolerance).powi(2) * delta_0;
    let mut iterations = 0;
    let mut broke_down = !delta_0.is_finite();
    while !broke_down && iterations < max_iterations && delta > stop {
        let dq = steps.product()?;
        if !dq.is_finite() {
            broke_down = true;
            break;
        }
        if dq <= 0.0 {
            break;
        }
        let delta_old = delta;
        delta = steps.step(delta / dq)?;
        if !delta.is_finite() {
            broke_down = true;
            break;
        }
        steps.direction(delta / delta_old)?;
        iterations += 1;
    }
    Ok(StepReport {
        iterations,
        residual: if broke_down {
            f64::INFINITY
        } else if delta_0 > 0.0 {
            (delta / delta_0).sqrt()
        } else {
            0.0
        },
        converged: !broke_down && delta <= stop,
        seconds: start.elapsed().as_secs_f64(),
        flips: 0,
    })
}

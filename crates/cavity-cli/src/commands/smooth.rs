//! `cavity smooth`: implicit mean curvature flow, written as a mesh.

use cavity::io::write_mesh;
use cavity_mcf::McfSettings;
use std::path::Path;

use crate::Result;
use crate::args::Common;
use crate::output::sayln;
use crate::stages::Clock;

pub(crate) fn smooth(
    input: Option<&Path>,
    output: &Path,
    settings: &McfSettings,
    common: &Common,
) -> Result<()> {
    settings.check()?;
    let mut clock = Clock::start();
    let (format, read, _, backend) = super::open_on(input, output, common.device, &mut clock)?;
    let (smoothed, report) = cavity_mcf::smooth_on(&read.mesh, &read.topology, settings, &backend)?;
    drop(read.topology);
    let mesh = read.mesh;
    let seconds = clock.device("smooth", &backend);
    let solve: f64 = report.steps.iter().map(|s| s.seconds).sum();
    clock.part("of which solves", solve);
    let released = clock.release(backend);
    for (i, step) in report.steps.iter().enumerate() {
        let flips = if step.flips > 0 {
            format!(", {} intrinsic edge flips", step.flips)
        } else {
            String::new()
        };
        sayln!(
            "step {}: {} CG iterations, relative residual {:.2e}{}{flips} ({:.3} ms)",
            i + 1,
            step.iterations,
            step.residual,
            if step.converged {
                ""
            } else {
                ", not converged: raise --max-iterations or --tolerance"
            },
            step.seconds * 1e3
        );
    }
    write_mesh(output, &smoothed, None, format)?;
    clock.host("write");
    drop(released);
    sayln!(
        "smoothed {} vertices ({} kept in place: boundary, non-manifold or without area) by {} step(s) of dt {:.4e} on {} in {:.3} ms (with patching and transfers); wrote {}",
        mesh.num_vertices(),
        report.fixed,
        report.steps.len(),
        report.dt,
        report.device,
        seconds * 1e3,
        output.display()
    );
    sayln!("{}", clock.line());
    Ok(())
}

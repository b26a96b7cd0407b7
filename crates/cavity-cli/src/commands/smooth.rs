//! `cavity smooth`: implicit mean curvature flow, written as a mesh.

use std::path::Path;
use std::time::Instant;

use cavity::io::write_mesh;
use cavity_mcf::McfSettings;

use crate::Result;
use crate::args::Common;
use crate::device::GivenBack;
use crate::output::sayln;

pub(crate) fn smooth(
    input: Option<&Path>,
    output: &Path,
    settings: &McfSettings,
    common: &Common,
) -> Result<()> {
    settings.check()?;
    let (format, mesh, backend) = super::open(input, output, common)?;
    let t = Instant::now();
    let (smoothed, report) = cavity_mcf::smooth(&mesh, settings, &backend)?;
    let seconds = t.elapsed().as_secs_f64();
    let released = GivenBack::new(backend);
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
    Ok(())
}

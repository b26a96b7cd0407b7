//! `cavity denoise`: bilateral mesh denoising, written as a mesh.

use std::path::Path;
use std::time::Instant;

use cavity::io::write_mesh;
use cavity_denoise::DenoiseSettings;

use crate::Result;
use crate::args::Common;
use crate::device::GivenBack;
use crate::output::sayln;

pub(crate) fn denoise(
    input: Option<&Path>,
    output: &Path,
    settings: &DenoiseSettings,
    common: &Common,
) -> Result<()> {
    settings.check()?;
    let (format, mesh, backend) = super::open(input, output, common)?;
    let t = Instant::now();
    let (denoised, report) = cavity_denoise::denoise(&mesh, settings, &backend)?;
    let seconds = t.elapsed().as_secs_f64();
    let released = GivenBack::new(backend);
    write_mesh(output, &denoised, None, format)?;
    drop(released);
    sayln!(
        "denoised {} vertices by {} iteration(s) on {}: {:.3} ms filtering ({:.3} ms per iteration), {:.3} ms with patching and transfers; largest neighbourhood {} vertices; wrote {}",
        mesh.num_vertices(),
        report.iterations,
        report.device,
        report.filter_seconds * 1e3,
        report.filter_seconds * 1e3 / f64::from(report.iterations),
        seconds * 1e3,
        report.largest_neighbourhood,
        output.display()
    );
    Ok(())
}

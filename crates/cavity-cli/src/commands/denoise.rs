//! `cavity denoise`: bilateral mesh denoising, written as a mesh.

use cavity::io::write_mesh;
use cavity_denoise::DenoiseSettings;
use std::path::Path;

use crate::Result;
use crate::args::Common;
use crate::output::sayln;
use crate::stages::Clock;

pub(crate) fn denoise(
    input: Option<&Path>,
    output: &Path,
    settings: &DenoiseSettings,
    common: &Common,
) -> Result<()> {
    settings.check()?;
    let mut clock = Clock::start();
    let (format, read, _, backend) = super::open_on(input, output, common.device, &mut clock)?;
    let (denoised, report) =
        cavity_denoise::denoise_on(&read.mesh, &read.topology, settings, &backend)?;
    drop(read.topology);
    let mesh = read.mesh;
    let seconds = clock.device("denoise", &backend);
    clock.part("of which filtering", report.filter_seconds);
    let released = clock.release(backend);
    write_mesh(output, &denoised, None, format)?;
    clock.host("write");
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
    sayln!("{}", clock.line());
    Ok(())
}

//! `cavity delaunay`: Delaunay edge flips on the dynamic core.

use std::path::Path;

use cavity::defects::Keeps;
use cavity::io::check_writable;
use cavity_delaunay::Flipped;

use crate::Result;
use crate::args::{DYNAMIC_PATCH_SIZE, DynamicArgs};
use crate::input::check_input;
use crate::output::{check_and_write, measured, refuse_overwrite, sayln, spinner};
use crate::stages::Clock;

pub(crate) fn delaunay(input: Option<&Path>, output: &Path, args: &DynamicArgs) -> Result<()> {
    let mut clock = Clock::start();
    args.factors().check()?;
    if let Some(input) = input {
        check_input(input)?;
    }
    refuse_overwrite(input, output)?;
    let format = check_writable(output)?;
    // The input's defects, which the output is checked against, are
    // surveyed with its topology.
    let (read, defects, backend) = super::read_on(input, args.device, &mut clock)?;
    let pb = spinner();
    pb.set_message("flipping edges");
    let flipped = cavity_delaunay::delaunay_on(
        &read.mesh,
        read.topology,
        args.patch_size(DYNAMIC_PATCH_SIZE),
        args.factors(),
        &backend,
    )?;
    clock.device("flips", &backend);
    pb.finish_and_clear();
    // The output is measured on the device, which is then given back, and
    // checked, while it is written.
    let keeps = Keeps {
        topology: true,
        no_zero_area: defects.zero_area_faces == 0,
    };
    let Flipped {
        mesh: out,
        faces_on,
        report,
        device,
    } = flipped;
    let mut released = None;
    let (check_seconds, _) = check_and_write(&defects, &out, keeps, (output, format), |out| {
        // The survey reads the faces the export left on the device.
        let measured = measured(out, faces_on, keeps, &backend);
        released = Some(clock.release(backend));
        measured
    })?;
    clock.beside("check", check_seconds, "write");
    drop(released);
    sayln!(
        "{} flips in {} sweeps ({} rounds) on {device} in {:.3} s; rolled back {} of {} scheduled patches ({:.1} %); wrote {}",
        report.flips,
        report.sweeps,
        report.rounds,
        report.seconds,
        report.rolled_back,
        report.scheduled,
        100.0 * report.rollback_fraction(),
        output.display()
    );
    sayln!("{}", clock.line());
    Ok(())
}

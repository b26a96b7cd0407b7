//! The subcommands, one module each (`bench` holds all benchmarks).

pub(crate) mod bench;
pub(crate) mod delaunay;
pub(crate) mod denoise;
pub(crate) mod geodesic;
pub(crate) mod info;
pub(crate) mod normals;
pub(crate) mod polylla;
pub(crate) mod remesh;
pub(crate) mod smooth;
pub(crate) mod tet;
pub(crate) mod track;

use std::path::Path;
use std::time::Instant;

use cavity::backend::Backend;
use cavity::io::{Format, check_writable};

use crate::Result;
use crate::args::Device;
use crate::device::select;
use cavity::input::{InputDefects, InputOn, ReadInput};

use crate::input::{check_input, source, warn};
use crate::output::refuse_overwrite;
use crate::stages::Clock;

/// The start of a command that reads a mesh and writes one: checks that
/// the input is a surface mesh file, refuses to write over it, checks that
/// the output can be written (`cavity::io::check_writable`: its format, its
/// directory, a read-only file there), and opens the backend `device`
/// names; the input (`cavity::input::InputOn`) is read
/// while the device starts, then its duplicate faces are removed, its
/// topology built and its defects surveyed on the backend (on the GPU on
/// the device: `ReadInput::analyse_on`, `InputOn::with_defects`), timed
/// as the stage `input`; the reader's and the analysis's warnings are
/// printed.
pub(crate) fn open_on(
    input: Option<&Path>,
    output: &Path,
    device: Device,
    clock: &mut Clock,
) -> Result<(Format, InputOn, InputDefects, Backend)> {
    if let Some(input) = input {
        check_input(input)?;
    }
    refuse_overwrite(input, output)?;
    let format = check_writable(output)?;
    let (read, defects, backend) = read_on(input, device, clock)?;
    Ok((format, read, defects, backend))
}

/// The reading and analysis of [`open_on`], for a command that checked
/// its input and output itself.
pub(crate) fn read_on(
    input: Option<&Path>,
    device: Device,
    clock: &mut Clock,
) -> Result<(InputOn, InputDefects, Backend)> {
    let (read, backend) = read_and_start(|| Ok(ReadInput::read(source(input))?), device, clock)?;
    // The reader's warnings first, then the analysis's.
    let reader = read.warnings.len();
    warn(&read.warnings);
    let read = read.analyse_on(&backend)?;
    let (read, defects, warning) = read.with_defects(&backend)?;
    warn(&read.warnings[reader..]);
    warn(warning.as_slice());
    clock.device("input", &backend);
    Ok((read, defects, backend))
}

/// Runs `read` (a command's reading of its input) while the device starts
/// on another thread; the read's seconds and what the start added after it
/// go on `clock` as the stages `read` and `start`. An error of the read
/// comes first.
pub(crate) fn read_and_start<T>(
    read: impl FnOnce() -> Result<T>,
    device: Device,
    clock: &mut Clock,
) -> Result<(T, Backend)> {
    let timed = || {
        let reading = Instant::now();
        read().map(|r| (r, reading.elapsed().as_secs_f64()))
    };
    let (read, selected) = std::thread::scope(|scope| {
        let starting = scope.spawn(|| select(device));
        (timed(), starting.join())
    });
    let (read, seconds) = read?;
    let (backend, note) = selected.map_err(|_| "starting the device panicked")??;
    eprintln!("{note}");
    clock.beside("read", seconds, "start");
    Ok((read, backend))
}

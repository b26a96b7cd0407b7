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

use cavity::backend::Backend;
use cavity::io::{Format, check_writable};

use crate::Result;
use crate::args::Common;
use crate::device::backend;
use crate::input::{Input, check_input, load_input};
use crate::output::refuse_overwrite;
use crate::stages::Clock;

/// The start of a command that reads a mesh and writes one: checks that
/// the input is a surface mesh file, refuses to write over it, checks that
/// the output can be written (`cavity::io::check_writable`: its format, its
/// directory, a read-only file there), reads the input (with its checks)
/// and opens the backend `common` asks for, the reading and the start
/// timed on `clock`.
pub(crate) fn open(
    input: Option<&Path>,
    output: &Path,
    common: &Common,
    clock: &mut Clock,
) -> Result<(Format, Input, Backend)> {
    if let Some(input) = input {
        check_input(input)?;
    }
    refuse_overwrite(input, output)?;
    let format = check_writable(output)?;
    let read = load_input(input)?;
    clock.host("read");
    let backend = backend(common.device)?;
    clock.host("start");
    Ok((format, read, backend))
}

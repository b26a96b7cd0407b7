//! What the commands write: stdout ([`say!`]), progress on stderr, and
//! mesh files (never over the input, written only when checked).

use std::path::{Path, PathBuf};

use cavity::TriMesh;
use cavity::defects::{Keeps, check_output, check_output_with};
use cavity::io::{Format, write_mesh};
use cavity::topology::Topology;
use indicatif::{ProgressBar, ProgressStyle};

use crate::Result;
use crate::input::InputDefects;

/// A failed write of the output to stdout (`main` ends a closed pipe,
/// `cavity info x | head`, quietly; a mesh written to a closed pipe with
/// `-o` stays an error).
#[derive(Debug)]
pub(crate) struct Stdout(pub(crate) std::io::Error);

impl std::fmt::Display for Stdout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "writing to stdout: {}", self.0)
    }
}

impl std::error::Error for Stdout {}

/// `print!` that returns a failed write as the function's error
/// ([`Stdout`]) instead of panicking.
macro_rules! say {
    ($($arg:tt)*) => {
        {
            use std::io::Write as _;
            write!(std::io::stdout(), $($arg)*).map_err($crate::output::Stdout)?
        }
    };
}

pub(crate) use say;

/// [`say!`] with a newline.
macro_rules! sayln {
    ($($arg:tt)*) => {
        {
            use std::io::Write as _;
            writeln!(std::io::stdout(), $($arg)*).map_err($crate::output::Stdout)?
        }
    };
}

pub(crate) use sayln;

/// Errors when `output` is the input file.
pub(crate) fn refuse_overwrite(input: Option<&Path>, output: &Path) -> Result<()> {
    if let Some(input) = input
        && output.exists()
        && std::fs::canonicalize(input)? == std::fs::canonicalize(output)?
    {
        return Err(format!(
            "refusing to overwrite the input {}: choose another -o",
            input.display()
        )
        .into());
    }
    Ok(())
}

/// Checks an operation's output against its input before it is written
/// to `path`, with the output's topology when `topology` gives it; a
/// failed check is an error, and the rejected mesh goes to
/// `rejected_name(path)` for inspection instead.
pub(crate) fn check(
    input: &InputDefects,
    output: &TriMesh,
    topology: Option<&Topology>,
    keeps: Keeps,
    path: &Path,
    format: Format,
) -> Result<()> {
    let checked = match topology {
        Some(topology) => check_output_with(&input.stats, output, topology, keeps),
        None => check_output(&input.stats, output, keeps),
    };
    let Err(e) = checked else {
        return Ok(());
    };
    let rejected = rejected_name(path);
    Err(match write_mesh(&rejected, output, None, format) {
        Ok(()) => format!(
            "{e}; {} was not written (the rejected result is in {})",
            path.display(),
            rejected.display()
        ),
        Err(w) => format!("{e}; nothing was written ({w})"),
    }
    .into())
}

/// `path` with "-rejected" before the extension.
fn rejected_name(path: &Path) -> PathBuf {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let ext = path.extension().unwrap_or_default().to_string_lossy();
    path.with_file_name(format!("{stem}-rejected.{ext}"))
}

/// A spinner on a terminal; hidden when stderr is not one.
pub(crate) fn spinner() -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    pb.set_style(ProgressStyle::with_template("{spinner} {elapsed} {msg}").expect("template"));
    pb.enable_steady_tick(std::time::Duration::from_millis(120));
    pb
}

//! What the commands write: stdout ([`say!`]), progress on stderr, and
//! mesh files (never over the input, written only when checked).

use std::path::Path;

use cavity::TriMesh;
use cavity::defects::Keeps;
use cavity::input::InputDefects;
use cavity::io::{Format, same_file};
use indicatif::{ProgressBar, ProgressStyle};

use crate::Result;

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
        && same_file(input, output)
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
/// to `path` (`cavity::input::InputDefects::check`): a failed check is an
/// error, and the rejected mesh goes beside `path` for inspection instead.
pub(crate) fn check(
    input: &InputDefects,
    output: &TriMesh,
    keeps: Keeps,
    path: &Path,
    format: Format,
) -> Result<()> {
    Ok(input.check(output, None, keeps, path, format)?)
}

/// A spinner on a terminal; hidden when stderr is not one.
pub(crate) fn spinner() -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    pb.set_style(ProgressStyle::with_template("{spinner} {elapsed} {msg}").expect("template"));
    pb.enable_steady_tick(std::time::Duration::from_millis(120));
    pb
}

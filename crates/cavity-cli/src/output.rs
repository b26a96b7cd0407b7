//! What the commands write: stdout ([`say!`]), progress on stderr
//! ([`Progress`]: bars on a terminal, plain lines elsewhere), and mesh
//! files (never over the input, written only when checked).

use std::borrow::Cow;
use std::io::IsTerminal;
use std::path::Path;
use std::time::Instant;

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

/// Progress of a long command on stderr: an indicatif bar or spinner on a
/// terminal; where stderr is not one (a log, a pipe, a batch job), where
/// indicatif draws nothing, one plain line per step with the seconds since
/// the start ([`progress_line`]), so that a long run is never silent.
pub(crate) enum Progress {
    /// On a terminal.
    Bar(ProgressBar),
    /// Elsewhere: plain lines, timed from this start.
    Lines(Instant),
}

/// Whether progress is drawn as bars (stderr is a terminal).
pub(crate) fn on_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// A progress line for a non-terminal stderr: `[   12.3 s] what`.
pub(crate) fn progress_line(start: Instant, what: &str) {
    eprintln!("[{:>7.1} s] {what}", start.elapsed().as_secs_f64());
}

impl Progress {
    /// A bar of `len` steps drawn with the indicatif `template` on a
    /// terminal, plain lines elsewhere.
    pub(crate) fn bar(len: u64, template: &str) -> Progress {
        if on_terminal() {
            let bar = ProgressBar::new(len)
                .with_style(ProgressStyle::with_template(template).expect("template"));
            Progress::Bar(bar)
        } else {
            Progress::Lines(Instant::now())
        }
    }

    /// The step now under way: the bar's message, or a line.
    pub(crate) fn set_message(&self, message: impl Into<Cow<'static, str>>) {
        match self {
            Progress::Bar(b) => b.set_message(message),
            Progress::Lines(start) => progress_line(*start, &message.into()),
        }
    }

    /// Moves the bar to `position` (a line `what` elsewhere, when given).
    pub(crate) fn set_position(&self, position: u64, what: Option<&str>) {
        match self {
            Progress::Bar(b) => b.set_position(position),
            Progress::Lines(start) => {
                if let Some(what) = what {
                    progress_line(*start, what);
                }
            }
        }
    }

    /// Leaves the finished bar on the terminal.
    pub(crate) fn finish(&self) {
        if let Progress::Bar(b) = self {
            b.finish();
        }
    }

    /// Removes the bar from the terminal.
    pub(crate) fn finish_and_clear(&self) {
        if let Progress::Bar(b) = self {
            b.finish_and_clear();
        }
    }
}

/// A spinner with the step under way as its message on a terminal; plain
/// lines elsewhere ([`Progress`]).
pub(crate) fn spinner() -> Progress {
    if on_terminal() {
        let pb = ProgressBar::new_spinner();
        pb.set_style(ProgressStyle::with_template("{spinner} {elapsed} {msg}").expect("template"));
        pb.enable_steady_tick(std::time::Duration::from_millis(120));
        Progress::Bar(pb)
    } else {
        Progress::Lines(Instant::now())
    }
}

//! What the commands write: stdout ([`say!`]), progress on stderr
//! ([`Progress`]: bars on a terminal, plain lines elsewhere), and mesh
//! files (never over the input, written only when checked).

use std::borrow::Cow;
use std::io::IsTerminal;
use std::path::Path;
use std::time::Instant;

use cavity::TriMesh;
use cavity::backend::{Backend, BackendError, FacesOn};
use cavity::defects::{Keeps, Measured, ZERO_HEIGHT};
use cavity::input::InputDefects;
use cavity::io::{Format, same_file, stage_mesh};
use cavity::stats::MeshStats;
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

/// Checks `output` against the input's defects (`keeps`: what the
/// operation must keep) while it is written beside `path` in `format` (a
/// temporary file), and renames it into place once the check passed; a
/// rejected mesh is kept beside the destination, which is left as it was,
/// and the temporary file removed. What the check reads of the output is
/// what `measure(output)` gives, where it measures it (on a backend:
/// [`measured`]), else the check takes it on the host. The check's
/// (with `measure`) and the write's own seconds.
///
/// # Errors
/// The check's ([`cavity::input::Rejected`]), `measure`'s or the write's.
pub(crate) fn check_and_write(
    input: &InputDefects,
    output: &TriMesh,
    keeps: Keeps,
    (path, format): (&Path, Format),
    measure: impl FnOnce(&TriMesh) -> std::result::Result<Option<(MeshStats, usize)>, BackendError>,
) -> Result<(f64, f64)> {
    let (checked, check_seconds, (staged, write_seconds)) = std::thread::scope(|scope| {
        let writing = scope.spawn(|| {
            let start = Instant::now();
            let staged = stage_mesh(path, output, None, format);
            (staged, start.elapsed().as_secs_f64())
        });
        let start = Instant::now();
        let checked = measure(output).map(|measured| {
            let measured = measured.as_ref().map(|(stats, zero_area_faces)| Measured {
                stats,
                zero_area_faces: *zero_area_faces,
            });
            input.check(output, measured, keeps, path, format)
        });
        let seconds = start.elapsed().as_secs_f64();
        let written = writing
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (checked, seconds, written)
    });
    checked??;
    staged?.commit()?;
    Ok((check_seconds, write_seconds))
}

/// What a check reads of `output`, measured on `b` (`Backend::survey_with`,
/// from `faces_on` where an export left its faces there): its topology
/// statistics and, where `keeps` asks for none, its faces of
/// zero area (else 0, which the check does not read); nothing for an
/// invalid output (an index out of range, a repeated vertex, a coordinate
/// not finite), which the check rejects on the host.
///
/// # Errors
/// The survey's (a failed allocation, launch or copy).
pub(crate) fn measured(
    output: &TriMesh,
    faces_on: Option<FacesOn>,
    keeps: Keeps,
    b: &Backend,
) -> std::result::Result<Option<(MeshStats, usize)>, BackendError> {
    if output.validate().is_err() {
        return Ok(None);
    }
    let survey = b.survey_with(output, faces_on)?;
    let zero = if keeps.no_zero_area {
        survey.zero_area_faces(b, ZERO_HEIGHT)?
    } else {
        0
    };
    Ok(Some((survey.stats().clone(), zero)))
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

#[cfg(test)]
mod tests {
    use super::*;
    use cavity::backend::DeviceChoice;
    use cavity::input::{InputMesh, Source};

    /// A 4 x 4 grid of squares, two triangles each, as OBJ text.
    fn grid_obj() -> String {
        let mut s = String::new();
        for y in 0..5 {
            for x in 0..5 {
                s += &format!("v {x} {y} 0\n");
            }
        }
        for y in 0..4 {
            for x in 0..4 {
                let v = 5 * y + x + 1;
                s += &format!("f {} {} {}\nf {} {} {}\n", v, v + 1, v + 6, v, v + 6, v + 5);
            }
        }
        s
    }

    #[test]
    fn the_output_is_written_while_checked_and_kept_out_when_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let obj = grid_obj();
        let format = Format::from_path(Path::new("grid.obj")).unwrap();
        let read = InputMesh::read(Source::Bytes(obj.as_bytes(), format, "grid")).unwrap();
        let (defects, _) = read.defects();
        let keeps = Keeps {
            topology: true,
            no_zero_area: true,
        };
        let ply = Format::from_path(Path::new("out.ply")).unwrap();
        let device: DeviceChoice = std::env::var("CAVITY_TEST_DEVICE")
            .unwrap_or_else(|_| "cpu".into())
            .parse()
            .unwrap();
        let backend = Backend::select(device).unwrap().0;
        // Measured on the host, then on a backend.
        for (run, on) in [("host", false), ("backend", true)] {
            let measure = |out: &TriMesh| {
                if on {
                    measured(out, None, keeps, &backend)
                } else {
                    Ok(None)
                }
            };
            let dir = dir.path().join(run);
            std::fs::create_dir(&dir).unwrap();
            let good = dir.join("good.ply");
            check_and_write(&defects, &read.mesh, keeps, (&good, ply), measure).unwrap();
            assert!(good.exists());
            // An inner face left out: a second boundary loop.
            let bad = dir.join("bad.ply");
            std::fs::write(&bad, "what was there").unwrap();
            let mut holed = read.mesh.clone();
            holed.faces.remove(10);
            let error = check_and_write(&defects, &holed, keeps, (&bad, ply), measure).unwrap_err();
            assert!(
                error.to_string().contains("bad.ply was not written"),
                "{error}"
            );
            assert_eq!(std::fs::read_to_string(&bad).unwrap(), "what was there");
            let mut names: Vec<String> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            assert_eq!(names, ["bad-rejected.ply", "bad.ply", "good.ply"], "{run}");
        }
    }
}

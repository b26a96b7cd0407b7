//! `cavity remesh`: isotropic remeshing of a mesh file
//! (`cavity_remesh::pipeline::RemeshFile`), with a progress bar per
//! iteration on a terminal (a line per stage and phase elsewhere) and the
//! stages' times.

use std::path::{Path, PathBuf};
use std::time::Instant;

use cavity::io::with_suffix;
use cavity_remesh::pipeline::{Events, RemeshFile, Stage};
use cavity_remesh::{Phase, RemeshSettings};
use indicatif::{ProgressBar, ProgressStyle};

use crate::Result;
use crate::args::DynamicArgs;
use crate::device::choice;
use crate::input::{BUNDLED_NAME, check_input, source};
use crate::output::{on_terminal, progress_line, say, sayln};
use crate::stages::device_memory;

/// The default output of `remesh`: the input's file name (the bundled
/// mesh's without a path) with "-remeshed" before the extension.
fn remeshed_name(input: Option<&Path>) -> PathBuf {
    let path = input.unwrap_or(Path::new(BUNDLED_NAME));
    PathBuf::from(
        with_suffix(path, "-remeshed")
            .file_name()
            .unwrap_or_default(),
    )
}

/// What the terminal shows of a run: warnings and the device on standard
/// error, a progress bar per iteration; where stderr is not a terminal
/// (`lines`: the run's start), a line per stage and phase instead.
struct Terminal {
    iterations: u32,
    bar: Option<ProgressBar>,
    lines: Option<Instant>,
}

impl Events for Terminal {
    fn warning(&mut self, message: &str) {
        eprintln!("warning: {message}");
    }

    fn device(&mut self, note: &str) {
        eprintln!("{note}");
    }

    fn compiling(&self) {
        eprintln!(
            "compiling the GPU kernels for this device (once per GPU and driver, up to a minute; later runs load them from the cache)"
        );
    }

    fn stage(&mut self, stage: Stage) {
        if let Some(start) = self.lines {
            progress_line(start, stage.name());
        }
    }

    fn phase(&mut self, iteration: u32, phase: Phase) {
        if let Some(start) = self.lines {
            let what = format!(
                "iteration {iteration}/{}: {}",
                self.iterations,
                phase.name()
            );
            progress_line(start, &what);
            return;
        }
        if phase == Phase::Split {
            if let Some(b) = self.bar.take() {
                b.finish();
            }
            let b = ProgressBar::new(Phase::ALL.len() as u64).with_style(
                ProgressStyle::with_template("{prefix} {bar:20} {pos}/{len} {msg} {elapsed}")
                    .expect("template"),
            );
            b.set_prefix(format!("iteration {iteration}/{}", self.iterations));
            self.bar = Some(b);
        }
        if let Some(b) = &self.bar {
            b.set_position(Phase::ALL.iter().position(|&p| p == phase).unwrap_or(0) as u64);
            b.set_message(phase.name());
        }
    }
}

pub(crate) fn remesh(
    input: Option<&Path>,
    output: Option<&Path>,
    settings: &RemeshSettings,
    args: &DynamicArgs,
) -> Result<()> {
    // The input is named first when it is not a surface mesh: the default
    // output's name is made from it.
    if let Some(input) = input {
        check_input(input)?;
    }
    let output = output.map_or_else(|| remeshed_name(input), Path::to_path_buf);
    let job = RemeshFile {
        input: source(input),
        output: &output,
        settings: *settings,
        layout: args.remesh_layout(),
        device: choice(args.device),
    };
    let mut terminal = Terminal {
        iterations: settings.iterations,
        bar: None,
        lines: (!on_terminal()).then(Instant::now),
    };
    let ran = job.run(&mut terminal);
    if let Some(b) = terminal.bar.take() {
        b.set_position(Phase::ALL.len() as u64);
        b.finish();
    }
    let run = ran?;
    let report = run.report;
    say!("{}", report.table());
    let (st, fs) = (&report.stages, &run.stages);
    sayln!("wrote {}", output.display());
    sayln!(
        "stages    read {:.3} s, input {:.3} s, start {:.3} s, patch {:.3} s, remesh {:.3} s on {}, export {:.3} s, statistics {:.3} s, check {:.3} s, write {:.3} s; whole command {:.3} s; {}",
        fs.read,
        fs.input,
        fs.start,
        st.patch,
        report.seconds,
        report.device,
        st.export,
        st.statistics,
        fs.check,
        fs.write,
        fs.whole,
        device_memory(Some((run.on_gpu, run.peak_device_bytes)))
    );
    Ok(())
}

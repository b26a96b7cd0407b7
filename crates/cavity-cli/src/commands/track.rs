//! `cavity track`: surface tracking of a curl-noise-advected sheet.

use std::path::{Path, PathBuf};

use cavity::dynamic::DynamicMesh;
use cavity::io::{check_writable, check_writable_file, with_suffix, write_mesh};
use cavity_track::{TrackHooks, TrackSettings};

use crate::Result;
use crate::args::DynamicArgs;
use crate::device::backend;
use crate::output::{Progress, say, sayln};
use crate::stages::Clock;

/// `output` with "-frameNNNN" before the extension.
fn frame_name(output: &Path, frame: u32) -> PathBuf {
    with_suffix(output, &format!("-frame{frame:04}"))
}

pub(crate) fn track(
    settings: &TrackSettings,
    output: &Path,
    every: Option<u32>,
    args: &DynamicArgs,
) -> Result<()> {
    let mut clock = Clock::start();
    settings.check()?;
    args.factors().check()?;
    if every == Some(0) {
        return Err("--every 0: write every K-th frame with K at least 1".into());
    }
    let format = check_writable(output)?;
    if let Some(k) = every {
        // Each frame file written, checked before any work as the output.
        for frame in (k..=settings.frames).step_by(k as usize) {
            check_writable_file(&frame_name(output, frame))?;
        }
    }
    let backend = backend(args.device)?;
    clock.host("start");
    let layout = args.layout();
    let bar = Progress::bar(
        settings.frames as u64,
        "frame {pos}/{len} {bar:30} {elapsed} (eta {eta})",
    );
    // Off a terminal about ten lines over the run.
    let every_line = (settings.frames / 10).max(1);
    let mut progress = |frame: u32| {
        let line = frame
            .is_multiple_of(every_line)
            .then(|| format!("frame {frame}/{}", settings.frames));
        bar.set_position(frame as u64 - 1, line.as_deref());
    };
    let mut write_frame = |frame: u32, m: &DynamicMesh| {
        let path = frame_name(output, frame);
        write_mesh(&path, &m.to_mesh(), None, format)?;
        Ok(())
    };
    let wants = |frame: u32| every.is_some_and(|k| frame.is_multiple_of(k));
    let mut hooks = TrackHooks {
        progress: Some(&mut progress),
        after_frame: every.is_some().then_some(&mut write_frame as _),
        wants: Some(&wants),
    };
    let (out, report) = cavity_track::track(settings, &backend, layout, &mut hooks)?;
    let label = if every.is_some() {
        "frames (with the frames written)"
    } else {
        "frames"
    };
    clock.device(label, &backend);
    let released = clock.release(backend);
    bar.finish();
    write_mesh(output, &out, None, format)?;
    clock.host("write");
    drop(released);
    say!("{}", report.table());
    if let Some(k) = every {
        sayln!(
            "wrote every {k}th frame as {}",
            frame_name(output, k).display()
        );
    }
    sayln!("wrote {}", output.display());
    sayln!("{}", clock.line());
    Ok(())
}

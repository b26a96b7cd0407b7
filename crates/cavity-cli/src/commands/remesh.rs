//! `cavity remesh`: isotropic remeshing on the dynamic core.

use std::path::{Path, PathBuf};
use std::time::Instant;

use cavity::defects::Keeps;
use cavity::io::{StagedMesh, check_writable, stage_mesh};
use cavity_remesh::{Hooks, Phase, RemeshSettings};
use indicatif::{ProgressBar, ProgressStyle};

use crate::device::{GivenBack, backend};
use crate::input::{BUNDLED_NAME, read_input};
use crate::output::{check, refuse_overwrite, say, sayln};
use crate::{DynamicArgs, Result};

/// The default output of `remesh`: the input's file name (the bundled
/// mesh's without a path) with "-remeshed" before the extension.
fn remeshed_name(input: Option<&Path>) -> PathBuf {
    let path = input.unwrap_or(Path::new(BUNDLED_NAME));
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let ext = path.extension().unwrap_or_default().to_string_lossy();
    PathBuf::from(format!("{stem}-remeshed.{ext}"))
}

pub(crate) fn remesh(
    input: Option<&Path>,
    output: Option<&Path>,
    settings: &RemeshSettings,
    args: &DynamicArgs,
) -> Result<()> {
    settings.check()?;
    let layout = args.remesh_layout();
    layout.factors.check()?;
    let output = output.map_or_else(|| remeshed_name(input), Path::to_path_buf);
    refuse_overwrite(input, &output)?;
    let format = check_writable(&output)?;
    let whole = Instant::now();
    // The device starts while the input is read and patched (the CUDA
    // context is created on this thread, where the rounds run).
    let (loaded, backend) = std::thread::scope(|scope| {
        let loading = scope.spawn(|| {
            let read = read_input(input).map_err(|e| e.to_string())?;
            let prepared = cavity_remesh::prepare(&read.mesh, &read.topology, settings, layout)
                .map_err(|e| e.to_string())?;
            Ok::<_, String>((read, prepared))
        });
        let backend = backend(args.device);
        (loading.join(), backend)
    });
    let (read, prepared) = loaded.map_err(|_| "reading the input panicked")??;
    let backend = backend?;
    let start_seconds = (whole.elapsed().as_secs_f64()
        - read.read_seconds
        - read.analysis_seconds
        - prepared.patch_seconds())
    .max(0.0);
    let mut bar: Option<ProgressBar> = None;
    let mut progress = |iteration: u32, phase: Phase| {
        if phase == Phase::Split {
            if let Some(b) = bar.take() {
                b.finish();
            }
            let b = ProgressBar::new(Phase::ALL.len() as u64).with_style(
                ProgressStyle::with_template("{prefix} {bar:20} {pos}/{len} {msg} {elapsed}")
                    .expect("template"),
            );
            b.set_prefix(format!("iteration {iteration}/{}", settings.iterations));
            bar = Some(b);
        }
        if let Some(b) = &bar {
            b.set_position(Phase::ALL.iter().position(|&p| p == phase).unwrap_or(0) as u64);
            b.set_message(phase.name());
        }
    };
    let mut hooks = Hooks {
        progress: Some(&mut progress),
        after_phase: None,
    };
    // The input's defects are analysed while the rounds run.
    let rounded = prepared.rounds(&read.mesh, &read.topology, &backend, &mut hooks, || {
        read.defects()
    })?;
    // The device is given back while the output is written beside its
    // destination and checked; it is renamed into place only when it
    // passes.
    let released = GivenBack::new(backend);
    let (remeshed, (staged, write_seconds), (checked, check_seconds)) = rounded.finish(
        &read.mesh,
        |out| {
            let started = Instant::now();
            let staged = stage_mesh(&output, out, None, format);
            (staged, started.elapsed().as_secs_f64())
        },
        |out, out_topology, defects| {
            let checking = Instant::now();
            let keeps = Keeps {
                topology: true,
                no_zero_area: true,
            };
            let checked = check(&defects, out, Some(out_topology), keeps, &output, format)
                .map_err(|e| e.to_string());
            (checked, checking.elapsed().as_secs_f64())
        },
    );
    drop(released);
    let finished = checked.and_then(|()| {
        staged
            .and_then(StagedMesh::commit)
            .map_err(|e| e.to_string())
    });
    if let Some(b) = bar.take() {
        b.set_position(Phase::ALL.len() as u64);
        b.finish();
    }
    finished?;
    let report = remeshed.report;
    say!("{}", report.table());
    let st = &report.stages;
    sayln!(
        "stages    read {:.3} s, input {:.3} s, start {start_seconds:.3} s, patch {:.3} s, remesh {:.3} s, export {:.3} s, statistics {:.3} s, check {check_seconds:.3} s, write {write_seconds:.3} s; whole command {:.3} s",
        read.read_seconds,
        read.analysis_seconds,
        st.patch,
        report.seconds,
        st.export,
        st.statistics,
        whole.elapsed().as_secs_f64()
    );
    sayln!("wrote {}", output.display());
    Ok(())
}

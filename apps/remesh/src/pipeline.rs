//! Remeshing a mesh file into a mesh file as one pipeline of stages, each
//! overlapped with what does not depend on it ([`RemeshFile::run`]; the
//! CLI's `cavity remesh`):
//!
//! 1. the input is read and its extent measured ([`Extent`]: area and
//!    normalization) while the device starts on the caller's thread
//!    (where the rounds run); then its duplicate faces are removed, its
//!    topology built and its mean edge length measured on the device
//!    (`ReadInput::analyse_on`), while the remeshing's kernels load, and
//!    it is patched there;
//! 2. the rounds run while the input is surveyed on the host (its
//!    statistics and its defects, which the output is checked against),
//!    and the output is exported on the device
//!    (`Backend::run_placed_exported`);
//! 3. the output is written beside its destination while it is surveyed
//!    and its statistics taken on the device from the faces the export
//!    left there (`Backend::survey_with`,
//!    [`Quality::on_survey`](crate::Quality::on_survey)); the GPU is
//!    given back as soon as that is done, while the output is checked
//!    against the input and written;
//! 4. the output is renamed into place, only when the check passed, while
//!    the device's release ends.
//!
//! The caller hears of the run through [`Events`] (warnings, the device
//! chosen, each phase) and gets the report with each stage's seconds.

use std::path::Path;
use std::time::Instant;

use cavity::backend::{Backend, BackendError, DeviceChoice, beside};
use cavity::defects::Keeps;
use cavity::input::{InputDefects, InputOn, ReadInput, Rejected, Source};
use cavity::io::{Format, MeshIoError, check_writable, same_file, stage_mesh};
use cavity::settings::{NamesSettings, Setting};
use cavity::stats::topology_stats;

use crate::phases::Hooks;
use crate::run::{Device, Extent, InputTopology, RemeshReport, plan_with_mean};
use crate::settings::{Layout, Phase, RemeshError, RemeshSettings};

/// What the caller hears of a [`RemeshFile`] run, as it goes.
pub trait Events {
    /// A warning about the input (duplicate faces removed, polygons
    /// triangulated, non-manifold elements kept).
    fn warning(&mut self, _message: &str) {}
    /// The device chosen, in words (and why, for `auto`).
    fn device(&mut self, _note: &str) {}
    /// The GPU's kernels are about to be compiled (the first run on a
    /// device and driver; later runs load them from the cache).
    fn compiling(&self) {}
    /// Phase `phase` of iteration `iteration` (from 1) starts.
    fn phase(&mut self, _iteration: u32, _phase: Phase) {}
    /// A stage around the iterations starts: [`Stage::Input`] before the
    /// first phase, [`Stage::Output`] after the last.
    fn stage(&mut self, _stage: Stage) {}
}

/// The stages of a [`RemeshFile`] run around its iterations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Reading the input, patching it and starting the device.
    Input,
    /// Exporting, writing and checking the output.
    Output,
}

impl Stage {
    /// The stage in words.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Input => "reading and patching the input, starting the device",
            Stage::Output => "exporting, writing and checking the output",
        }
    }
}

/// A run that says nothing.
impl Events for () {}

/// Remeshing the mesh of `input` into `output` (see the [module](self)).
pub struct RemeshFile<'a> {
    /// The input mesh.
    pub input: Source<'a>,
    /// Where the output goes (its format from its extension); never the
    /// input.
    pub output: &'a Path,
    /// What to remesh to.
    pub settings: RemeshSettings,
    /// How the dynamic mesh is laid out.
    pub layout: Layout,
    /// The device to run on.
    pub device: DeviceChoice,
}

/// Seconds of each stage of a [`RemeshFile`] run; with the stages overlapped
/// they add up to more than the whole.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FileStages {
    /// Reading the input.
    pub read: f64,
    /// Measuring its extent (while the device starts), removing its
    /// duplicate faces and building its topology where the backend builds
    /// it (on the GPU on the device; the remeshing's kernels load beside,
    /// and where their module is not in the kernels' cache yet its
    /// compilation lengthens this stage), and planning the remeshing (mean
    /// edge length: [`plan_with_mean`]), once the device started.
    pub input: f64,
    /// What the device's start adds (it runs while the input is read and
    /// its extent measured).
    pub start: f64,
    /// Checking the output against the input.
    pub check: f64,
    /// Writing the output beside its destination.
    pub write: f64,
    /// The whole run.
    pub whole: f64,
}

/// What a [`RemeshFile`] run did.
#[derive(Clone, Debug)]
pub struct FileRun {
    /// The remeshing's report (its patching, iterations, export and
    /// statistics stages included).
    pub report: RemeshReport,
    /// The stages around it.
    pub stages: FileStages,
    /// Whether the run was on a GPU (not the CPU backend).
    pub on_gpu: bool,
    /// Bytes of device memory the run held at once at most
    /// ([`Backend::peak_device_memory`]); `None` on the CPU backend or a
    /// GPU without memory pools.
    pub peak_device_bytes: Option<u64>,
}

/// Why a [`RemeshFile`] run failed; nothing was written to the output then.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The output is the input.
    #[error("refusing to overwrite the input {0}: choose another output")]
    Overwrite(String),
    /// The input is not a mesh file or could not be read, or the output
    /// cannot be written (see `cavity::io::check_writable`).
    #[error(transparent)]
    Io(#[from] MeshIoError),
    /// No device of the choice could be opened.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// The remeshing failed.
    #[error(transparent)]
    Remesh(#[from] RemeshError),
    /// The output failed its check (the rejected mesh is kept beside it).
    #[error(transparent)]
    Rejected(#[from] Box<Rejected>),
    /// A stage's thread panicked.
    #[error("{0} panicked")]
    Panicked(&'static str),
}

impl NamesSettings for FileError {
    fn settings(&self) -> Vec<Setting> {
        match self {
            FileError::Backend(e) => e.settings(),
            FileError::Remesh(e) => e.settings(),
            _ => Vec::new(),
        }
    }
}

cavity::names_settings!(FileError);

impl RemeshFile<'_> {
    /// Runs the pipeline (see the [module](self)).
    ///
    /// # Errors
    /// [`FileError`]: the output is the input, the input cannot be read or
    /// the output's directory is missing, no device, a failed remeshing, a
    /// failed output check; the output is left as it was.
    pub fn run(&self, events: &mut dyn Events) -> Result<FileRun, FileError> {
        // Settings fail before any file is read or device started.
        self.settings.check()?;
        self.layout.factors.check().map_err(RemeshError::from)?;
        // The input is named first when it is not a mesh file at all.
        if let Source::File(input) = self.input {
            Format::from_path(input)?;
        }
        self.refuse_overwrite()?;
        let format = check_writable(self.output)?;
        let whole = Instant::now();
        events.stage(Stage::Input);
        // The input is read and its extent measured while the device
        // starts, then its duplicate faces are found and its topology built
        // on the device, and the remeshing planned.
        let (loaded, selected) = std::thread::scope(|scope| {
            let loading = scope.spawn(|| {
                let read = ReadInput::read(self.input)?;
                let measuring = Instant::now();
                let extent = Extent::of(&read.mesh);
                Ok::<_, MeshIoError>((read, extent, measuring.elapsed().as_secs_f64()))
            });
            let selected = Backend::select_with(self.device, &|| events.compiling());
            (loading.join(), selected)
        });
        let (backend, note) = selected?;
        events.device(&note);
        let joined = whole.elapsed().as_secs_f64();
        let (read, mut extent, measured) =
            loaded.map_err(|_| FileError::Panicked("reading the input"))??;
        let start = (joined - read.read_seconds - measured).max(0.0);
        let analysing = Instant::now();
        let faces = read.mesh.num_faces();
        // The remeshing's kernels load while the input is analysed.
        let (read, added) = beside(
            || read.analyse_on(&backend),
            || crate::ptx::add_kernels(&backend),
        );
        let read = read.map_err(RemeshError::from)?;
        added.map_err(RemeshError::from)?;
        for w in &read.warnings {
            events.warning(w);
        }
        if read.mesh.num_faces() != faces {
            // Duplicate faces were removed: the area counted them.
            extent = Extent::of(&read.mesh);
        }
        let mean = (read.topology)
            .mean_edge_length(&backend, &read.mesh)
            .map_err(RemeshError::from)?;
        let planned = plan_with_mean(&read.mesh, (mean, &extent), &self.settings, self.layout)?;
        // The extent, the analysis, the mean edge length and the plan.
        let input = measured + analysing.elapsed().as_secs_f64();
        let prepared = planned.place_on(&read.mesh, &read.topology, &backend)?;
        let InputOn {
            mesh,
            topology,
            name,
            read_seconds,
            ..
        } = read;
        let rounded = {
            let mut progress = |iteration: u32, phase: Phase| events.phase(iteration, phase);
            let mut hooks = Hooks {
                stop: None,
                progress: Some(&mut progress),
                after_phase: None,
            };
            // The input is surveyed on the host while the rounds run, which
            // drop its topology on the device.
            let topology = InputTopology::On(Box::new(topology));
            prepared.rounds(&mesh, topology, &backend, &mut hooks, || ())?
        };
        // The input's defects, from that survey.
        let (input_quality, input_stats) = rounded.input_statistics();
        let stats = input_stats
            .cloned()
            .unwrap_or_else(|| topology_stats(&mesh));
        let (defects, warning) = InputDefects::with_stats(&name, stats, input_quality.zero_area);
        if let Some(w) = warning {
            events.warning(&w);
        }
        events.stage(Stage::Output);
        let on_gpu = !matches!(backend, Backend::Cpu(_));
        let output = self.output;
        let finished = rounded.finish(
            &mesh,
            Device::Given(backend),
            |out| {
                let writing = Instant::now();
                let staged = stage_mesh(output, out, None, format);
                (staged, writing.elapsed().as_secs_f64())
            },
            |out, measured, ()| {
                let checking = Instant::now();
                let keeps = Keeps {
                    topology: true,
                    no_zero_area: true,
                };
                let checked = defects.check(out, Some(measured), keeps, output, format);
                (checked, checking.elapsed().as_secs_f64())
            },
        );
        // The device was given back once the output's survey was done.
        let (remeshed, (staged, write), (checked, check), release) = finished;
        let peak_device_bytes = release.peak_device_bytes;
        // The output goes into place while the device is still being
        // released (a failed release touches no output); the rename over
        // an earlier output frees that file's pages meanwhile.
        let committed = (|| -> Result<(), FileError> {
            checked?;
            Ok(staged?.commit()?)
        })();
        release.wait();
        committed?;
        Ok(FileRun {
            report: remeshed.report,
            stages: FileStages {
                read: read_seconds,
                input,
                start,
                check,
                write,
                whole: whole.elapsed().as_secs_f64(),
            },
            on_gpu,
            peak_device_bytes,
        })
    }

    /// Errors when the output is the input file.
    fn refuse_overwrite(&self) -> Result<(), FileError> {
        if let Source::File(input) = self.input
            && self.output.exists()
            && same_file(input, self.output)
        {
            return Err(FileError::Overwrite(input.display().to_string()));
        }
        Ok(())
    }
}

//! Remeshing a mesh: normalized to the unit box, patched, run on a
//! backend ([`remesh`], [`remesh_with`]; in two halves, [`prepare`] and
//! [`Prepared::run`]), exported with its statistics and report.

use std::time::Instant;

use cavity::TriMesh;
use cavity::backend::{
    Backend, BackendError, Exported, FacesOn, GivenBack, GpuSeconds, PlaceError, PlacedMesh,
    TopologyOn, beside,
};
use cavity::defects::{Measured, check_indices};
use cavity::dynamic::{CapacityFactors, DynamicError};
use cavity::normalize::Normalization;
use cavity::stats::{MeshStats, Survey};
use cavity::topology::Topology;
use cavity_remesh_kernels::split::SplitLongEdges;
use cavity_remesh_kernels::{CollapseShortEdgesSafely, ImproveValence, StoreValences};

use crate::phases::{
    Hooks, PhaseTotals, attributes, dynamic_mesh, normalized_dynamic_mesh, remesh_rounds,
};
use crate::quality::{Quality, mean_edge_length_with};
use crate::settings::{
    Layout, MAX_EXPECTED_FACES, MIN_PATCH_SIZE, OUTPUT_BYTES_PER_FACE, Phase, RemeshError,
    RemeshSettings,
};

/// What a remeshing run did.
#[derive(Clone, Debug, PartialEq)]
pub struct RemeshReport {
    /// L in model units.
    pub length: f64,
    /// The input's statistics against L.
    pub input: Quality,
    /// The output's statistics against L.
    pub output: Quality,
    /// Per-phase times and counts.
    pub phases: PhaseTotals,
    /// The device that ran it.
    pub device: String,
    /// Seconds of the iterations (without building the dynamic mesh and
    /// exporting the result).
    pub seconds: f64,
    /// The patch factor used.
    pub patch_factor: f32,
    /// The patch size used (see [`Layout::patch_size`]).
    pub patch_size: u32,
    /// Bytes of the dynamic layout (capacity included) per input face.
    pub bytes_per_face: f64,
    /// On the GPU, where the time went.
    pub gpu_seconds: Option<GpuSeconds>,
    /// Seconds of the stages around the iterations.
    pub stages: Stages,
}

/// Seconds of the stages of [`remesh`] around its iterations.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stages {
    /// The input's topology (unless given, see [`remesh_with`]), mean edge
    /// length and area, normalizing ([`plan`]; in
    /// [`RemeshFile`](crate::pipeline::RemeshFile) its input stage, while
    /// the device starts), patching and building the dynamic mesh (again
    /// for each halving of the patch size).
    pub patch: f64,
    /// Exporting the result from the patches and moving it back to model
    /// units.
    pub export: f64,
    /// The output's survey and statistics, taken on the backend
    /// (`Backend::survey`, [`Quality::on_survey`]), and the input's
    /// statistics where they held the rounds up
    /// (what runs beside them, such as the write of [`RemeshFile`](crate::pipeline::RemeshFile),
    /// shares the cores and can lengthen them).
    pub statistics: f64,
}

/// What [`remesh_with`] gives: the remeshed mesh with what its check
/// reads ([`Remeshed::measured`]).
#[derive(Clone, Debug)]
pub struct Remeshed {
    /// The remeshed mesh, in model units.
    pub mesh: TriMesh,
    /// `topology_stats(&mesh)`, taken on the backend with the output's
    /// statistics (`Backend::survey`).
    pub stats: MeshStats,
    /// What the run did.
    pub report: RemeshReport,
}

/// Remeshes `input` on `backend` and returns the result with its report.
///
/// The patch factor is raised to twice the expected growth when L is
/// short enough for the mesh to grow (expected faces: the input's area over
/// an equilateral triangle of side L). On the GPU the patch size is halved
/// (down to [`MIN_PATCH_SIZE`]) while the largest patch's update kernel
/// needs more shared memory than a block gets.
///
/// # Errors
/// A setting out of range, an input without faces, an input the dynamic
/// mesh rejects, or a failed phase.
pub fn remesh(
    input: &TriMesh,
    settings: &RemeshSettings,
    backend: &Backend,
    layout: Layout,
    hooks: &mut Hooks<'_>,
) -> Result<(TriMesh, RemeshReport), RemeshError> {
    let start = Instant::now();
    let topology = Topology::new(input);
    let topology_seconds = start.elapsed().as_secs_f64();
    let mut run = remesh_with(input, &topology, settings, backend, layout, hooks)?;
    run.report.stages.patch += topology_seconds;
    Ok((run.mesh, run.report))
}

/// [`remesh`] with the topology of `input` given (`Topology::new(input)`),
/// for a caller that has it; returns the output's topology statistics too
/// ([`Remeshed::measured`]).
///
/// # Errors
/// As [`remesh`].
pub fn remesh_with(
    input: &TriMesh,
    topology: &Topology,
    settings: &RemeshSettings,
    backend: &Backend,
    layout: Layout,
    hooks: &mut Hooks<'_>,
) -> Result<Remeshed, RemeshError> {
    prepare(input, topology, settings, layout, Some(backend))?.run(input, topology, backend, hooks)
}

/// A remeshing run prepared: the target length checked, the mesh
/// normalized (`cavity::normalize`) and patched into its dynamic layout
/// (on the GPU when one is given, see [`dynamic_mesh`]). A caller can read
/// the input while the GPU starts, prepare, and then [`Prepared::run`] it; [`RemeshFile`](crate::pipeline::RemeshFile)
/// runs its two halves (the rounds, then the export) with the writing and
/// checking of the output beside them.
#[derive(Debug)]
pub struct Prepared {
    plan: Plan,
    normalized: TriMesh,
    dynamic: PlacedMesh,
    patch_seconds: f64,
}

/// Prepares remeshing `input` (whose topology is `topology`) with
/// `settings` in `layout`, patched on `backend` when it is a GPU (see
/// [`dynamic_mesh`]; `None`: on the host): the first half of
/// [`remesh_with`]. The patch
/// factor is raised to twice the expected growth when L is short enough
/// for the mesh to grow (expected faces: the input's area over an
/// equilateral triangle of side L).
///
/// # Errors
/// A setting out of range, an input without faces or without extent, a
/// target length that is not positive or would give more than
/// [`MAX_EXPECTED_FACES`] faces, a dynamic mesh with room for the expected
/// output that, with the output ([`OUTPUT_BYTES_PER_FACE`]), needs more
/// memory than the host has available ([`RemeshError::Memory`], checked
/// before the dynamic mesh is allocated: `cavity::memory`), or an input the
/// dynamic mesh rejects; a backend error from patching on the GPU.
pub fn prepare(
    input: &TriMesh,
    topology: &Topology,
    settings: &RemeshSettings,
    layout: Layout,
    backend: Option<&Backend>,
) -> Result<Prepared, RemeshError> {
    let plan = plan(input, topology, settings, layout)?;
    let planned = plan.seconds;
    let mut prepared = plan.place(input, topology, backend)?;
    prepared.patch_seconds += planned;
    Ok(prepared)
}

/// The host's half of [`prepare`], which needs no device: the settings
/// checked, the target length and the expected output from the mean edge
/// length and the area, the patch factor, the normalization, and whether
/// the output fits in the host's memory. A caller can plan while the
/// device starts ([`RemeshFile`](crate::pipeline::RemeshFile) does), then
/// [`Plan::place`] the mesh.
///
/// # Errors
/// As [`prepare`], but those of the dynamic mesh and the device.
pub fn plan(
    input: &TriMesh,
    topology: &Topology,
    settings: &RemeshSettings,
    layout: Layout,
) -> Result<Plan, RemeshError> {
    let planning = Instant::now();
    let mean = mean_edge_length_with(input, topology);
    let plan = plan_with_mean(input, (mean, &Extent::of(input)), settings, layout)?;
    Ok(Plan {
        seconds: planning.elapsed().as_secs_f64(),
        ..plan
    })
}

/// What a [`Plan`] reads of a mesh's geometry alone (no topology, no
/// device): its area and the normalization that moves it into the unit
/// box. Both are parallel passes over the mesh (about 14 ms at 6.4 M faces
/// on 16 cores), which a caller can take while the device starts
/// ([`RemeshFile`](crate::pipeline::RemeshFile) does, issue 55).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Extent {
    /// The sum of the faces' areas (model units squared).
    area: f64,
    /// Into the unit box ([`Normalization::of`]).
    normalization: Normalization,
}

impl Extent {
    /// The extent of `mesh`.
    pub fn of(mesh: &TriMesh) -> Extent {
        let (area, normalization) = rayon::join(|| area(mesh), || Normalization::of(mesh));
        Extent {
            area,
            normalization,
        }
    }
}

/// [`plan`] from the mean edge length of `input` (model units) and its
/// [`Extent`], for a caller that measured them (the mean on the device:
/// `TopologyOn::mean_edge_length`; the extent while the device started).
/// `extent` must be `Extent::of(input)`.
///
/// # Errors
/// As [`plan`].
pub fn plan_with_mean(
    input: &TriMesh,
    (mean, extent): (f64, &Extent),
    settings: &RemeshSettings,
    layout: Layout,
) -> Result<Plan, RemeshError> {
    settings.check()?;
    layout.factors.check()?;
    if input.faces.is_empty() {
        return Err(RemeshError::Empty);
    }
    let planning = Instant::now();
    if mean.is_nan() || mean <= 0.0 {
        return Err(RemeshError::NoExtent);
    }
    let length = settings.target(mean);
    if !(length.is_finite() && length > 0.0) {
        return Err(RemeshError::Length(length));
    }
    let expected = extent.area / (3f64.sqrt() / 4.0 * length * length);
    if expected > MAX_EXPECTED_FACES {
        return Err(RemeshError::TooShort {
            length: settings.length,
            faces: expected,
            input: input.num_faces(),
        });
    }
    let growth = expected / input.num_faces() as f64;
    let mut factors = layout.factors;
    factors.patches = factors.patches.max((2.0 * growth) as f32);
    // The kernels work on the mesh in the unit box (`cavity::normalize`).
    let normalization = extent.normalization;
    let plan = Plan {
        settings: *settings,
        expected,
        length,
        factors,
        grown: factors.patches > layout.factors.patches,
        output: (expected * OUTPUT_BYTES_PER_FACE) as u64,
        normalization,
        patch_size: layout.patch_size,
        seconds: 0.0,
    };
    // The output alone here; the dynamic mesh before it is allocated
    // (`DynamicError::Memory`: the host's memory, or the GPU's for a
    // layout made there), then both, in `Plan::place`.
    if plan.grown
        && let Some(available) = cavity::memory::available_host_bytes()
        && plan.output > available
    {
        return Err(plan.too_much(input, 0, available, "host"));
    }
    Ok(Plan {
        seconds: planning.elapsed().as_secs_f64(),
        ..plan
    })
}

/// A remeshing planned on the host ([`plan`]): what [`Plan::place`]
/// patches the mesh with.
#[derive(Clone, Debug)]
pub struct Plan {
    settings: RemeshSettings,
    /// Faces the output is expected to have.
    expected: f64,
    length: f64,
    /// The capacity factors, the patch factor raised for the growth.
    factors: CapacityFactors,
    /// Whether the patch factor was raised (the output may not fit).
    grown: bool,
    /// Bytes of the expected output on the host.
    output: u64,
    normalization: Normalization,
    patch_size: u32,
    seconds: f64,
}

impl Plan {
    /// Seconds [`plan`] took (the mean edge length, the area and the
    /// normalization).
    pub fn seconds(&self) -> f64 {
        self.seconds
    }

    /// The error for a grown remeshing of `input` whose `dynamic` bytes
    /// and output do not fit in the `available` bytes of `memory`.
    fn too_much(
        &self,
        input: &TriMesh,
        dynamic: u64,
        available: u64,
        memory: &'static str,
    ) -> RemeshError {
        RemeshError::Memory {
            length: self.settings.length,
            faces: self.expected,
            input: input.num_faces(),
            dynamic,
            output: self.output,
            available,
            memory,
        }
    }

    /// Patches `input` (the mesh planned, with its `topology`) into its
    /// dynamic layout, on `backend` when it is a GPU (see
    /// [`dynamic_mesh`]; `None`: on the host): the second half of
    /// [`prepare`].
    ///
    /// # Errors
    /// As [`prepare`]: the dynamic mesh's and the device's.
    pub fn place(
        self,
        input: &TriMesh,
        topology: &Topology,
        backend: Option<&Backend>,
    ) -> Result<Prepared, RemeshError> {
        self.placed(input, |normalization, sizes| {
            normalized_dynamic_mesh(input, normalization, topology, sizes, backend)
        })
    }

    /// [`Plan::place`] on `backend` from the topology it holds
    /// (`Backend::topology_on`, `TopologyOn::of`): on the GPU nothing of
    /// the topology is uploaded when it was built there.
    ///
    /// # Errors
    /// As [`Plan::place`].
    pub fn place_on(
        self,
        input: &TriMesh,
        topology: &TopologyOn<'_>,
        backend: &Backend,
    ) -> Result<Prepared, RemeshError> {
        self.placed(input, |normalization, (patch_size, factors)| {
            backend
                .place_normalized(
                    input,
                    normalization,
                    topology,
                    patch_size,
                    (factors, &attributes()),
                )
                .map_err(PlaceError::into_either::<RemeshError>)
        })
    }

    /// [`Plan::place`] with the dynamic mesh and the normalized mesh made
    /// by `place(normalization, (patch size, factors))`.
    fn placed(
        self,
        input: &TriMesh,
        place: impl FnOnce(
            &Normalization,
            (u32, CapacityFactors),
        ) -> Result<(PlacedMesh, TriMesh), RemeshError>,
    ) -> Result<Prepared, RemeshError> {
        let patching = Instant::now();
        // Where the target length makes the mesh grow, the room for the
        // growth and the output are what may not fit: the length is the
        // setting to change. Memory is measured before the dynamic mesh
        // takes its share (and after the device started).
        let available = cavity::memory::available_host_bytes();
        let sizes = (self.patch_size, self.factors);
        let (dynamic, normalized) = place(&self.normalization, sizes).map_err(|e| match e {
            RemeshError::Dynamic(DynamicError::Memory {
                needed,
                available,
                memory,
                ..
            }) if self.grown => self.too_much(input, needed, available, memory),
            e => e,
        })?;
        if self.grown
            && let Some(available) = available
            && dynamic.bytes() as u64 + self.output > available
        {
            return Err(self.too_much(input, dynamic.bytes() as u64, available, "host"));
        }
        Ok(Prepared {
            plan: self,
            normalized,
            dynamic,
            patch_seconds: patching.elapsed().as_secs_f64(),
        })
    }
}

impl Prepared {
    /// Seconds [`prepare`] took (the mean edge length, normalization and
    /// patching; [`Plan::place`] alone: the patching): the start of the
    /// run's patch stage.
    pub fn patch_seconds(&self) -> f64 {
        self.patch_seconds
    }

    /// Runs the remeshing rounds on `backend`, then exports the result and
    /// its statistics, with nothing to do beside them.
    ///
    /// # Errors
    /// An input the dynamic mesh rejects at a smaller patch size, or a
    /// failed phase.
    pub fn run(
        self,
        input: &TriMesh,
        topology: &Topology,
        backend: &Backend,
        hooks: &mut Hooks<'_>,
    ) -> Result<Remeshed, RemeshError> {
        let rounded = self.rounds(input, InputTopology::Host(topology), backend, hooks, || ())?;
        Ok(rounded
            .finish(input, Device::Lent(backend), |_| (), |_, _, ()| ())
            .0)
    }

    /// Runs the prepared remeshing of `input` (the mesh given to
    /// [`prepare`], with its `topology`) on `backend` and exports the
    /// result there (`Backend::run_placed_exported`: only the output comes
    /// back to the host), the first half of [`Prepared::run`] (the second,
    /// [`Rounded::finish`], surveys the output on `backend`). Calls
    /// `during()` on another thread while the rounds run
    /// (the host is idle meanwhile; the CLI analyses the input's defects
    /// there); the input's statistics are taken on another thread too. On
    /// the GPU the patch size is halved first (down to [`MIN_PATCH_SIZE`])
    /// while the largest patch's update kernel needs more shared memory
    /// than a block gets.
    ///
    /// # Errors
    /// An input the dynamic mesh rejects at a smaller patch size, a dynamic
    /// mesh larger than the GPU's free memory ([`RemeshError::Memory`],
    /// before it is uploaded), or a failed phase.
    pub(crate) fn rounds<D: Send>(
        self,
        input: &TriMesh,
        topology: InputTopology<'_>,
        backend: &Backend,
        hooks: &mut Hooks<'_>,
        during: impl FnOnce() -> D + Send,
    ) -> Result<Rounded<D>, RemeshError> {
        let Prepared {
            plan:
                Plan {
                    settings,
                    expected,
                    length,
                    factors,
                    normalization,
                    mut patch_size,
                    ..
                },
            normalized,
            mut dynamic,
            mut patch_seconds,
        } = self;
        crate::ptx::add_kernels(backend)?;
        let repatching = Instant::now();
        while patch_size > MIN_PATCH_SIZE && !fits(backend, &dynamic) {
            patch_size = (patch_size / 2).max(MIN_PATCH_SIZE);
            // The larger layout's device memory is given back first.
            drop(dynamic);
            dynamic = match &topology {
                InputTopology::Host(t) => {
                    dynamic_mesh(&normalized, t, patch_size, factors, Some(backend))?
                }
                InputTopology::On(t) => backend
                    .place_on(&normalized, t, patch_size, factors, &attributes())
                    .map_err(PlaceError::into_either::<RemeshError>)?,
            };
        }
        // The topology held on the device is not read again: its memory
        // goes before the rounds.
        let host = match topology {
            InputTopology::Host(t) => Some(t),
            InputTopology::On(on) => {
                drop(on);
                None
            }
        };
        patch_seconds += repatching.elapsed().as_secs_f64();
        // A layout made on the host is uploaded whole: refused before it
        // is when the device's free memory cannot hold it (one made on
        // the device was checked before it was made).
        let needed = dynamic.bytes() as u64;
        if !dynamic.is_resident()
            && let Some(available) = backend.free_device_memory()?
            && needed > available
        {
            return Err(RemeshError::Memory {
                length: settings.length,
                faces: expected,
                input: input.num_faces(),
                dynamic: needed,
                output: 0,
                available,
                memory: "GPU",
            });
        }
        let bytes_per_face = dynamic.bytes_per_face();
        let start = Instant::now();
        // The rounds run on the caller's thread, the input's statistics and
        // `during` on others.
        let ((ran, seconds), ((input_quality, input_stats), during)) = beside(
            || {
                let ran = backend.run_placed_exported(
                    dynamic,
                    |r| remesh_rounds(r, normalization.length(length), &settings, hooks),
                    |source| RemeshError::Run {
                        phase: Phase::Smooth,
                        iteration: settings.iterations,
                        source,
                    },
                );
                (ran, start.elapsed().as_secs_f64())
            },
            || rayon::join(|| input_quality(input, host, length), during),
        );
        let (ran, exported) = ran?;
        // The input's statistics and `during` count where they held the
        // rounds up; the export is a stage of its own.
        let input_wait = start.elapsed().as_secs_f64() - seconds;
        let seconds = seconds - exported.seconds;
        Ok(Rounded {
            report: RemeshReport {
                length,
                input: input_quality,
                output: Quality::default(),
                phases: ran.value,
                device: ran.device,
                seconds,
                patch_factor: factors.patches,
                patch_size,
                bytes_per_face,
                gpu_seconds: ran.gpu_seconds,
                stages: Stages {
                    patch: patch_seconds,
                    export: exported.seconds,
                    statistics: input_wait,
                },
            },
            normalization,
            normalized,
            exported,
            input_stats,
            during,
        })
    }
}

/// The input's topology as [`Prepared::rounds`] reads it: to patch the
/// input again at a smaller patch size, and for its statistics.
pub(crate) enum InputTopology<'a> {
    /// On the host.
    Host(&'a Topology),
    /// Where a backend holds it (built there: `Backend::topology_on`),
    /// given to the rounds, which drop it (its device memory) once the
    /// patch size is settled.
    On(Box<TopologyOn<'a>>),
}

/// The statistics of `input` against target length `length`: from its
/// topology on the host where there is one, else from a survey on the host
/// (`Survey::new`) while the device works, whose topology statistics come
/// with them.
fn input_quality(
    input: &TriMesh,
    topology: Option<&Topology>,
    length: f64,
) -> (Quality, Option<MeshStats>) {
    match topology {
        Some(t) => (Quality::with_topology(input, t, length), None),
        None => {
            let survey = Survey::new(input);
            let quality = Quality::with_survey(input, &survey, length);
            (quality, Some(survey.stats()))
        }
    }
}

/// A remeshing whose rounds ran ([`Prepared::rounds`]): the output
/// exported (normalized, its faces kept on the backend where it exported
/// them), the report but the output's statistics, and what `during`
/// returned.
pub(crate) struct Rounded<D> {
    report: RemeshReport,
    normalization: Normalization,
    normalized: TriMesh,
    exported: Exported,
    /// The input's topology statistics, where the rounds surveyed it.
    input_stats: Option<MeshStats>,
    during: D,
}

impl<D> Rounded<D> {
    /// The input's statistics against the target length, and its topology
    /// statistics where the rounds took them (from a survey of the input,
    /// when its topology was on the device: [`InputTopology::On`]).
    pub(crate) fn input_statistics(&self) -> (&Quality, Option<&MeshStats>) {
        (&self.report.input, self.input_stats.as_ref())
    }
}

impl<D: Send> Rounded<D> {
    /// Brings the output the rounds exported (input vertices first in
    /// input order, as `DynamicMesh::to_mesh_with_sources`) back to model
    /// units, then calls
    /// `write(output)` on another thread while the output is surveyed and
    /// its statistics taken on `backend` (`Backend::survey`,
    /// [`Quality::on_survey`]), and then `then(output, what its check
    /// reads, what during returned)`: the second half of
    /// [`Prepared::run`]. The CLI writes the output beside its destination
    /// in `write` and checks it in `then`. Returns what both returned, and
    /// the backend's release: a backend given ([`Device::Given`]) is
    /// released on another thread once the survey's device work is done,
    /// while the output is still written and checked. `input` is the mesh
    /// given to [`prepare`]. Where the backend fails the survey, the host
    /// takes it (`cavity::stats::Survey`).
    ///
    /// # Panics
    /// When `write` or `then` panics (the panic is resumed on the caller's
    /// thread).
    pub(crate) fn finish<W: Send, T>(
        self,
        input: &TriMesh,
        backend: Device<'_>,
        write: impl FnOnce(&TriMesh) -> W + Send,
        then: impl FnOnce(&TriMesh, Measured<'_>, D) -> T,
    ) -> (Remeshed, W, T, Release) {
        let Rounded {
            mut report,
            normalization,
            normalized,
            exported,
            during,
            ..
        } = self;
        let restoring = Instant::now();
        let Exported {
            mesh: mut output,
            sources,
            faces_on,
            ..
        } = exported;
        normalization.restore_from(&mut output, &sources, input, &normalized);
        drop(sources);
        report.stages.export += restoring.elapsed().as_secs_f64();
        let statistics = Instant::now();
        let length = report.length;
        // The output's survey and statistics on the backend (on the host
        // when the backend fails them: the rounds' result is kept), then
        // what `then` returned, while the output is written.
        let (surveyed, written) = beside(
            || {
                let on = match &backend {
                    Device::Lent(b) => *b,
                    Device::Given(b) => b,
                };
                let measured = measured_on(on, &output, faces_on, length);
                // The device is done with: a backend given goes while the
                // output is checked and written.
                let release = backend.release();
                let (stats, quality) = match measured {
                    Ok(measured) => measured,
                    // An output of invalid faces (a bug) has no statistics:
                    // its check rejects it for its faces.
                    Err(_) if check_indices(&output).is_err() => Default::default(),
                    Err(_) => {
                        let survey = Survey::new(&output);
                        let quality = Quality::with_survey(&output, &survey, length);
                        (survey.stats(), quality)
                    }
                };
                let seconds = statistics.elapsed().as_secs_f64();
                let measured = Measured {
                    stats: &stats,
                    zero_area_faces: quality.zero_area,
                };
                let checked = then(&output, measured, during);
                (stats, quality, seconds, checked, release)
            },
            || write(&output),
        );
        let (stats, output_quality, statistics_seconds, checked, release) = surveyed;
        report.output = output_quality;
        report.stages.statistics += statistics_seconds;
        let remeshed = Remeshed {
            mesh: output,
            stats,
            report,
        };
        (remeshed, written, checked, release)
    }
}

/// The backend [`Rounded::finish`] surveys the output on.
pub(crate) enum Device<'a> {
    /// The caller's, kept.
    Lent(&'a Backend),
    /// Given to be released (its device memory and context) once the
    /// survey's device work is done.
    Given(Backend),
}

impl Device<'_> {
    /// Starts the release of a given backend on another thread, after
    /// reading its peak device memory; a lent one stays.
    fn release(self) -> Release {
        match self {
            Device::Lent(_) => Release {
                peak_device_bytes: None,
                releasing: None,
            },
            Device::Given(b) => Release {
                peak_device_bytes: b.peak_device_memory().ok().flatten(),
                releasing: Some(b.give_back()),
            },
        }
    }
}

/// A backend's release started by [`Rounded::finish`].
pub(crate) struct Release {
    /// Bytes of device memory a given backend held at once at most
    /// (`Backend::peak_device_memory`), read before its release; `None`
    /// for a lent one (its caller reads it).
    pub(crate) peak_device_bytes: Option<u64>,
    /// A given backend, being released.
    releasing: Option<GivenBack>,
}

impl Release {
    /// Waits for the release to end (a failed one is the driver's and
    /// touches no output).
    pub(crate) fn wait(self) {
        if let Some(releasing) = self.releasing {
            releasing.wait();
        }
    }
}

/// The topology statistics and table-4 statistics of `output` against
/// `length`, surveyed on `backend` (`Backend::survey_with`, from its
/// faces where `faces_on` holds them there; [`Quality::on_survey`]); the
/// survey's device memory is given back before they return.
fn measured_on(
    backend: &Backend,
    output: &TriMesh,
    faces_on: Option<FacesOn>,
    length: f64,
) -> Result<(MeshStats, Quality), BackendError> {
    let survey = backend.survey_with(output, faces_on)?;
    let quality = Quality::on_survey(backend, output, &survey, length)?;
    Ok((survey.stats().clone(), quality))
}

impl Remeshed {
    /// What an output check reads of the remeshed mesh, measured with its
    /// statistics (`cavity::defects::check_output_with`).
    pub fn measured(&self) -> Measured<'_> {
        Measured {
            stats: &self.stats,
            zero_area_faces: self.report.output.zero_area,
        }
    }
}

/// Whether every update kernel of remeshing and its valence computation
/// can run on `backend` at the capacities of `dynamic`.
fn fits(backend: &Backend, dynamic: &PlacedMesh) -> bool {
    let cap = &dynamic.cap();
    backend.fits_update::<SplitLongEdges>(cap)
        && backend.fits_update::<CollapseShortEdgesSafely>(cap)
        && backend.fits_update::<ImproveValence>(cap)
        && backend.fits_for_each::<StoreValences>(cap)
}

/// Where a GPU run's time went as a report line (empty off the GPU).
pub fn gpu_line(seconds: Option<GpuSeconds>) -> String {
    seconds.map_or(String::new(), |g| {
        let [u, c, k] = g.kernels;
        format!(
            "GPU kernels: update {u:.3} s, calibration {c:.3} s, compaction {k:.3} s; upload {:.3} s, copy back {:.3} s\n",
            g.upload, g.copy_back
        )
    })
}

/// Total face area of `mesh` (model units squared); in parallel, the same
/// for any number of workers (`quality::chunked_sum`).
fn area(mesh: &TriMesh) -> f64 {
    crate::quality::chunked_sum(&mesh.faces, |t| {
        let [a, b, c] = t.map(|v| crate::quality::point(mesh, v));
        0.5 * (b - a).cross(c - a).length()
    })
}

impl Quality {
    /// One table-4 row: faces, min/max edge over L, valence min/max/mean,
    /// smallest angle, share of edges in [4/5 L, 4/3 L].
    pub fn row(&self, name: &str) -> String {
        format!(
            "{name:<8} {:>10} {:>7.3} {:>7.3} {:>4} {:>4} {:>6.2} {:>8.2} {:>7.1} %\n",
            self.faces,
            self.min_edge,
            self.max_edge,
            self.min_valence,
            self.max_valence,
            self.mean_valence,
            self.min_angle,
            100.0 * self.in_band
        )
    }

    /// The header of [`Quality::row`].
    pub fn header() -> String {
        format!(
            "{:<8} {:>10} {:>7} {:>7} {:>4} {:>4} {:>6} {:>8} {:>9}\n",
            "", "faces", "min e/L", "max e/L", "minV", "maxV", "meanV", "min ang", "in band"
        )
    }
}

impl RemeshReport {
    /// The report as text: the table-4 statistics of input and output, then
    /// per-phase times and operation counts.
    pub fn table(&self) -> String {
        let mut s = format!(
            "target length L = {}\n",
            cavity::units::significant(self.length, 4)
        );
        s += &Quality::header();
        s += &self.input.row("input");
        s += &self.output.row("output");
        for (i, phase) in Phase::ALL.into_iter().enumerate() {
            s += &format!("{:<9} {:>9.3} s", phase.name(), self.phases.seconds[i]);
            if let Some(r) = self.phases.runs.get(i) {
                s += &format!(
                    "  {:>9} done in {:>3} sweeps, {:>5} rounds; rolled back {:.1} %",
                    r.flips,
                    r.sweeps,
                    r.rounds,
                    100.0 * r.rollback_fraction()
                );
            }
            s.push('\n');
        }
        s += &format!(
            "total     {:>9.3} s on {} (patch size {}, patch factor {:.1})\n",
            self.seconds, self.device, self.patch_size, self.patch_factor
        );
        s += &gpu_line(self.gpu_seconds);
        s
    }
}

//! `cavity`: the command-line tool of the cavity GPU mesh library.
//!
//! Commands: `remesh` (isotropic remeshing on the dynamic core), `track`
//! (surface tracking of a curl-noise-advected sheet), `info`
//! (counts, topology defects, patch statistics), `normals` (area-weighted vertex normals), `delaunay` (Delaunay edge
//! flips on the dynamic core), `bench queries` (first-order query
//! benchmark). With no mesh argument a real mesh bundled in `assets/`
//! is used and named.

/// The host stages (reading, patching, export, statistics) allocate and
/// fill arrays of tens of megabytes from every rayon worker: mimalloc
/// serves them faster than the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use cavity::backend::{Backend, BackendError, DeviceChoice};
use cavity::defects::{
    Defects, Keeps, check_output, check_output_with, count_zero_area,
    remove_duplicate_faces_with_topology, topology_stats_with,
};
use cavity::delaunay::DelaunayError;
use cavity::dynamic::{CapacityFactors, DynamicError, DynamicMesh};
use cavity::io::{
    Format, StagedMesh, check_writable, read_mesh, read_mesh_from, stage_mesh, write_mesh,
};
use cavity::normals::NormalsError;
use cavity::patcher::{DEFAULT_PATCH_SIZE, MAX_PATCH_SIZE, PatchError};
use cavity::reference::MeshStats;
use cavity::remesh::{Hooks, Layout, Phase, RemeshError, RemeshSettings, TargetLength};
use cavity::rounds::RunError;
use cavity::settings::{NamesSettings, Setting};
use cavity::topology::Topology;
use cavity::track::{TrackError, TrackHooks, TrackSettings};
use cavity::{PatchedMesh, TriMesh};
use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};

/// The mesh used when no MESH argument is given.
const BUNDLED_NAME: &str = "assets/dragon.obj";
const BUNDLED: &[u8] = include_bytes!("../../../assets/dragon.obj");

#[derive(Parser)]
#[command(
    name = "cavity",
    version,
    about = "GPU mesh processing on patches in shared memory"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum Device {
    /// The GPU when a driver and a device exist, else the CPU backend.
    Auto,
    /// The GPU (error when there is none).
    Cuda,
    /// The CPU backend (the same kernels on all cores; dynamic commands
    /// give the same output whatever the number of cores).
    Cpu,
    /// The CPU backend with the GPU's racing schedule of dynamic rounds
    /// (faster on many cores; the output depends on timing).
    CpuRacing,
}

#[derive(clap::Args)]
struct Common {
    /// Backend to run on.
    #[arg(long, value_enum, default_value = "auto")]
    device: Device,
    /// Maximum faces per patch (1 to 8192).
    #[arg(long, default_value_t = DEFAULT_PATCH_SIZE, value_parser = clap::value_parser!(u32).range(1..=MAX_PATCH_SIZE as i64))]
    patch_size: u32,
}

/// Settings of the dynamic commands.
#[derive(clap::Args)]
struct DynamicArgs {
    /// Backend to run on.
    #[arg(long, value_enum, default_value = "auto")]
    device: Device,
    /// Maximum faces per patch when the mesh is patched: by default 512
    /// for remeshing (lowered while a patch does not fit the GPU's shared
    /// memory), 256 for the other commands (smaller than for static
    /// queries, so that patches have room to grow); at most
    /// 2048 (with --capacity-factor 2 a larger patch outgrows the 8160
    /// element slots of a patch).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=MAX_DYNAMIC_PATCH_SIZE as i64))]
    patch_size: Option<u32>,
    /// Element slots per patch over the largest initial patch (at least
    /// 1): by default 1.25 for remeshing (so that two update blocks share
    /// an SM at 512 faces per patch), 2 for the other commands.
    #[arg(long)]
    capacity_factor: Option<f32>,
    /// Patch slots over the initial number of patches (at least 1).
    #[arg(long, default_value_t = 2.0)]
    patch_factor: f32,
}

/// Largest `--patch-size` of the dynamic commands.
const MAX_DYNAMIC_PATCH_SIZE: u32 = 2048;

/// Faces per patch of the dynamic commands but remeshing.
const DYNAMIC_PATCH_SIZE: u32 = 256;

impl DynamicArgs {
    /// The capacity factors of the commands but remeshing.
    fn factors(&self) -> CapacityFactors {
        self.factors_or(CapacityFactors::default().elements)
    }

    /// The capacity factors, with element factor `default` when not given.
    fn factors_or(&self, default: f32) -> CapacityFactors {
        CapacityFactors {
            elements: self.capacity_factor.unwrap_or(default),
            patches: self.patch_factor,
        }
    }

    /// The patch size, `default` when not given.
    fn patch_size(&self, default: u32) -> u32 {
        self.patch_size.unwrap_or(default)
    }

    /// The layout of the commands but remeshing.
    fn layout(&self) -> Layout {
        Layout {
            patch_size: self.patch_size(DYNAMIC_PATCH_SIZE),
            factors: self.factors(),
        }
    }

    /// The layout of remeshing ([`Layout::default`] where not given).
    fn remesh_layout(&self) -> Layout {
        let default = Layout::default();
        Layout {
            patch_size: self.patch_size(default.patch_size),
            factors: self.factors_or(default.factors.elements),
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Isotropic remeshing (dynamic paper section 6.3, Botsch and Kobbelt
    /// 2004): per iteration split edges longer than 4/3 L, collapse edges
    /// shorter than 4/5 L, flip edges to even valences, smooth
    /// tangentially. Boundaries are remeshed along themselves (corners
    /// kept; --keep-boundary keeps them as they are); features, with
    /// --feature-angle, stay.
    Remesh {
        /// Input mesh (.ply, .obj, .off, .stl); the bundled mesh when omitted.
        input: Option<PathBuf>,
        /// Output mesh (.ply, .obj, .off or .stl); never the input. Default: the
        /// input's name with "-remeshed" in the current directory.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Target edge length L: model units ("0.01"), or a multiple of the
        /// input's mean edge length with an x ("0.5x").
        #[arg(long, default_value = "1x", value_parser = parse_length)]
        length: TargetLength,
        /// Iterations of the four phases.
        #[arg(long, default_value_t = 3)]
        iterations: u32,
        /// Keep edges whose dihedral angle exceeds this many degrees
        /// (features); no features when omitted.
        #[arg(long)]
        feature_angle: Option<f64>,
        /// Tangential smoothing steps per iteration.
        #[arg(long, default_value_t = cavity::remesh::DEFAULT_SMOOTHING_STEPS)]
        smoothing_steps: u32,
        /// Keep the mesh boundary exactly as it is. By default it is
        /// remeshed along itself: long boundary edges split, short ones
        /// collapsed onto the boundary, boundary vertices slid along it;
        /// corners (a turning angle above the feature angle, 30° when none
        /// is given) and the number of boundary loops kept.
        #[arg(long)]
        keep_boundary: bool,
        #[command(flatten)]
        dynamic: DynamicArgs,
    },
    /// Explicit surface tracking (dynamic paper section 6.4, El Topo's
    /// mesh improvement without collisions): a square sheet of GRID × GRID
    /// vertices in [-3, 3]² is advected by a curl-noise field; every frame
    /// is one advection step, then splits above 1.5 L0, flips to shorter
    /// diagonals, collapses below 0.5 L0 and null-space smoothing (L0: the
    /// initial mean edge length).
    Track {
        /// Vertices along each side of the sheet.
        #[arg(long, default_value_t = 100)]
        grid: u32,
        /// Frames (one advection and one improvement step each).
        #[arg(long, default_value_t = 100)]
        frames: u32,
        /// Time per frame.
        #[arg(long, default_value_t = 0.05)]
        dt: f32,
        /// Final mesh (.ply, .obj, .off or .stl).
        #[arg(short, long, default_value = "sheet-tracked.obj")]
        output: PathBuf,
        /// Also write every K-th frame, as OUTPUT's name with "-frameNNNN"
        /// before the extension.
        #[arg(long, value_name = "K")]
        every: Option<u32>,
        #[command(flatten)]
        dynamic: DynamicArgs,
    },
    /// Counts, components, boundary loops, non-manifold elements and patch statistics.
    Info {
        /// Input mesh (.ply, .obj, .off, .stl); the bundled mesh when omitted.
        mesh: Option<PathBuf>,
        /// Maximum faces per patch (1 to 8192).
        #[arg(long, default_value_t = DEFAULT_PATCH_SIZE, value_parser = clap::value_parser!(u32).range(1..=MAX_PATCH_SIZE as i64))]
        patch_size: u32,
    },
    /// Area-weighted vertex normals (RXMesh listing 1), written with the mesh.
    Normals {
        /// Input mesh; the bundled mesh when omitted.
        input: Option<PathBuf>,
        /// Output mesh (.ply, .obj, .off or .stl); never the input.
        #[arg(short, long)]
        output: PathBuf,
        #[command(flatten)]
        common: Common,
    },
    /// Delaunay edge flips (dynamic paper section 6.2): flips every interior
    /// edge whose opposite angles sum above pi until none is left.
    Delaunay {
        /// Input mesh; the bundled mesh when omitted.
        input: Option<PathBuf>,
        /// Output mesh (.ply, .obj, .off or .stl); never the input.
        #[arg(short, long)]
        output: PathBuf,
        #[command(flatten)]
        dynamic: DynamicArgs,
    },
    /// Benchmarks.
    Bench {
        #[command(subcommand)]
        what: BenchWhat,
    },
}

#[derive(Subcommand)]
enum BenchWhat {
    /// Isotropic remeshing per mesh and subdivision level: our GPU, the CPU backend and the CPU remeshers of xtask/peers/remesh_peers.py in one run, with the table-4 statistics of every output.
    Remesh {
        /// Input meshes; the bundled mesh when omitted.
        meshes: Vec<PathBuf>,
        /// Midpoint subdivision steps (×4 faces each) to run each mesh at.
        #[arg(long, value_delimiter = ',', default_value = "2,3,4")]
        subdivisions: Vec<u32>,
        /// Target edge length, as for `remesh`.
        #[arg(long, default_value = "1x", value_parser = parse_length)]
        length: TargetLength,
        /// Iterations.
        #[arg(long, default_value_t = 3)]
        iterations: u32,
        /// Tangential smoothing steps per iteration, as for `remesh`.
        #[arg(long, default_value_t = cavity::remesh::DEFAULT_SMOOTHING_STEPS)]
        smoothing_steps: u32,
        /// Timed GPU runs (the median is reported).
        #[arg(long, default_value_t = 3)]
        reps: usize,
        /// Largest mesh the CPU backend runs.
        #[arg(long, default_value_t = 3_000_000)]
        cpu_max_faces: usize,
        /// Python interpreter with the peer remeshers installed; runs
        /// xtask/peers/remesh_peers.py (or --peer-script) when given.
        #[arg(long)]
        python: Option<PathBuf>,
        /// The peer script.
        #[arg(long, default_value = "xtask/peers/remesh_peers.py")]
        peer_script: PathBuf,
        #[command(flatten)]
        dynamic: DynamicArgs,
    },
    /// Surface tracking of the curl-noise sheet per grid size: our GPU vs the CPU backend, same frames, with the final mesh's statistics.
    Track {
        /// Grid sides (vertices per side) to run.
        #[arg(long, value_delimiter = ',', default_value = "100,200,500,1000")]
        grids: Vec<u32>,
        /// Frames per run.
        #[arg(long, default_value_t = 100)]
        frames: u32,
        /// Time per frame.
        #[arg(long, default_value_t = 0.05)]
        dt: f32,
        /// Timed GPU runs (the median is reported).
        #[arg(long, default_value_t = 3)]
        reps: usize,
        /// Largest initial sheet (faces) the CPU backend runs.
        #[arg(long, default_value_t = 2_000_000)]
        cpu_max_faces: usize,
        #[command(flatten)]
        dynamic: DynamicArgs,
    },
    /// Delaunay edge flips: our GPU vs the CPU backend vs a serial flipper, rollback fraction, VV before/after.
    Delaunay {
        /// Input meshes; the bundled mesh when omitted.
        meshes: Vec<PathBuf>,
        /// Midpoint subdivision steps (×4 faces each) to run each mesh at.
        #[arg(long, value_delimiter = ',', default_value = "2,3,4")]
        subdivisions: Vec<u32>,
        /// Timed GPU runs (the median is reported).
        #[arg(long, default_value_t = 3)]
        reps: usize,
        /// Largest mesh the CPU backend runs.
        #[arg(long, default_value_t = 6_000_000)]
        cpu_max_faces: usize,
        #[command(flatten)]
        dynamic: DynamicArgs,
    },
    /// All eight first-order queries: our GPU kernels vs a naive GPU baseline vs the CPU backend.
    Queries {
        /// Input mesh; the bundled mesh when omitted.
        mesh: Option<PathBuf>,
        /// Subdivide the mesh (midpoint, ×4 faces a step) until it has this many faces.
        #[arg(long, default_value_t = 5_000_000)]
        min_faces: usize,
        /// Timed repetitions (medians are reported).
        #[arg(long, default_value_t = 20)]
        reps: usize,
        #[command(flatten)]
        common: Common,
    },
}

/// A failed write of the output to stdout (`main` ends a closed pipe,
/// `cavity info x | head`, quietly; a mesh written to a closed pipe with
/// `-o` stays an error).
#[derive(Debug)]
struct Stdout(std::io::Error);

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
        write!(std::io::stdout(), $($arg)*).map_err(Stdout)?
    };
}

/// [`say!`] with a newline.
macro_rules! sayln {
    ($($arg:tt)*) => {
        writeln!(std::io::stdout(), $($arg)*).map_err(Stdout)?
    };
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e)
            if e.downcast_ref::<Stdout>()
                .is_some_and(|e| e.0.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            let options = options(e.as_ref());
            if options.is_empty() {
                eprintln!("error: {e}");
            } else {
                eprintln!("error: {e} ({})", options.join(", "));
            }
            ExitCode::FAILURE
        }
    }
}

/// The command-line options of the settings that `e` (or an error it
/// wraps) asks to change ([`NamesSettings`]).
fn options(e: &(dyn std::error::Error + 'static)) -> Vec<&'static str> {
    /// The settings of `e` if it is one of the library's errors that name
    /// them.
    fn settings(e: &(dyn std::error::Error + 'static)) -> Option<Vec<Setting>> {
        macro_rules! named {
            ($($t:ty),*) => {
                $(if let Some(e) = e.downcast_ref::<$t>() {
                    return Some(e.settings());
                })*
            };
        }
        named!(
            RemeshError,
            DelaunayError,
            TrackError,
            NormalsError,
            DynamicError,
            PatchError,
            RunError,
            BackendError
        );
        None
    }
    let mut at = Some(e);
    while let Some(e) = at {
        if let Some(found) = settings(e) {
            return found.into_iter().map(option).collect();
        }
        at = e.source();
    }
    Vec::new()
}

/// The command-line option of `setting`.
fn option(setting: Setting) -> &'static str {
    match setting {
        Setting::PatchSize => "--patch-size",
        Setting::CapacityFactor => "--capacity-factor",
        Setting::PatchFactor => "--patch-factor",
        Setting::TargetLength => "--length",
        Setting::Iterations => "--iterations",
        Setting::FeatureAngle => "--feature-angle",
        Setting::SmoothingSteps => "--smoothing-steps",
        Setting::Grid => "--grid",
        Setting::Frames => "--frames",
        Setting::TimeStep => "--dt",
    }
}

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Reads the mesh at `path`, or the bundled one (saying so).
fn load(path: Option<&Path>) -> Result<TriMesh> {
    let read = match path {
        Some(p) => read_mesh(p)?,
        None => {
            eprintln!("no mesh given: using the bundled {BUNDLED_NAME}");
            read_mesh_from(BUNDLED, Format::Obj, BUNDLED_NAME)?
        }
    };
    for w in &read.warnings {
        eprintln!("warning: {w}");
    }
    Ok(read.mesh)
}

/// A mesh read for an operation that writes a mesh: duplicate faces
/// removed, with the defects its output is checked against.
struct Input {
    mesh: TriMesh,
    defects: InputDefects,
}

/// What the output of an operation is checked against: the input's
/// topology statistics and its zero-area faces.
struct InputDefects {
    stats: MeshStats,
    /// Faces of zero area (`cavity::defects::is_zero_area`).
    zero_area_faces: usize,
}

/// A mesh as read for an operation: duplicate faces removed (with a
/// warning giving their number) and its topology; its defects not yet
/// analysed ([`Read::defects`]).
struct Read {
    mesh: TriMesh,
    /// `Topology::new(&mesh)`.
    topology: Topology,
    /// The file's name in messages.
    name: String,
    /// Seconds reading the file (or the bundled mesh).
    read_seconds: f64,
    /// Seconds removing duplicate faces and taking the topology.
    analysis_seconds: f64,
}

/// Reads the mesh at `path` (or the bundled one) for an operation and
/// removes duplicate faces, with a warning that gives their number.
fn read_input(path: Option<&Path>) -> Result<Read> {
    let reading = Instant::now();
    let mut mesh = load(path)?;
    let read_seconds = reading.elapsed().as_secs_f64();
    let analysis = Instant::now();
    let name = path.map_or(BUNDLED_NAME.into(), |p| p.display().to_string());
    let (removed, topology) = remove_duplicate_faces_with_topology(&mut mesh);
    if removed > 0 {
        eprintln!(
            "warning: {name}: removed {removed} duplicate faces (the same three vertices as an earlier face)"
        );
    }
    Ok(Read {
        mesh,
        topology,
        name,
        read_seconds,
        analysis_seconds: analysis.elapsed().as_secs_f64(),
    })
}

impl Read {
    /// The topology statistics and zero-area faces of the mesh; warns
    /// about non-manifold edges and vertices, which the operations leave
    /// as they are (the output check makes sure of it).
    fn defects(&self) -> InputDefects {
        let stats = topology_stats_with(&self.mesh, &self.topology);
        if stats.non_manifold_edges + stats.non_manifold_vertices > 0 {
            eprintln!(
                "warning: {}: {} non-manifold edges (more than two faces) and {} non-manifold vertices (several fans) are kept as they are",
                self.name, stats.non_manifold_edges, stats.non_manifold_vertices
            );
        }
        InputDefects {
            stats,
            zero_area_faces: count_zero_area(&self.mesh),
        }
    }
}

/// Reads the mesh at `path` (or the bundled one) for an operation
/// ([`read_input`]) and analyses its defects ([`Read::defects`]).
fn load_input(path: Option<&Path>) -> Result<Input> {
    let read = read_input(path)?;
    let defects = read.defects();
    Ok(Input {
        defects,
        mesh: read.mesh,
    })
}

/// Checks an operation's output against its input before it is written
/// to `path`, with the output's topology when `topology` gives it; a
/// failed check is an error, and the rejected mesh goes to
/// `rejected_name(path)` for inspection instead.
fn check(
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

fn backend(device: Device) -> Result<Backend> {
    let choice = match device {
        Device::Auto => DeviceChoice::Auto,
        Device::Cuda => DeviceChoice::Cuda,
        Device::Cpu => DeviceChoice::Cpu,
        Device::CpuRacing => DeviceChoice::CpuRacing,
    };
    let (b, note) = Backend::select_with(choice, &|| {
        eprintln!(
            "compiling the GPU kernels for this device (once per GPU and driver, up to a minute; later runs load them from the cache)"
        )
    })?;
    eprintln!("{note}");
    Ok(b)
}

/// The device being given back on another thread while the caller writes
/// its output (the driver takes about 0.06 s to tear a CUDA context
/// down); dropping it waits for that, on every path out of the caller.
struct GivenBack(Option<std::thread::JoinHandle<()>>);

impl GivenBack {
    fn new(backend: Backend) -> GivenBack {
        GivenBack(Some(std::thread::spawn(move || drop(backend))))
    }
}

impl Drop for GivenBack {
    fn drop(&mut self) {
        if let Some(handle) = self.0.take()
            && handle.join().is_err()
        {
            eprintln!("warning: releasing the GPU failed (the output is not affected)");
        }
    }
}

/// A spinner on a terminal; hidden when stderr is not one.
fn spinner() -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    pb.set_style(ProgressStyle::with_template("{spinner} {elapsed} {msg}").expect("template"));
    pb.enable_steady_tick(std::time::Duration::from_millis(120));
    pb
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Remesh {
            input,
            output,
            length,
            iterations,
            feature_angle,
            smoothing_steps,
            keep_boundary,
            dynamic,
        } => {
            let settings = RemeshSettings {
                length,
                iterations,
                feature_angle,
                smoothing_steps,
                keep_boundary,
            };
            remesh(input.as_deref(), output.as_deref(), &settings, &dynamic)
        }
        Command::Track {
            grid,
            frames,
            dt,
            output,
            every,
            dynamic,
        } => {
            let settings = TrackSettings { grid, frames, dt };
            track(&settings, &output, every, &dynamic)
        }
        Command::Info { mesh, patch_size } => info(mesh.as_deref(), patch_size),
        Command::Normals {
            input,
            output,
            common,
        } => normals(input.as_deref(), &output, &common),
        Command::Delaunay {
            input,
            output,
            dynamic,
        } => delaunay(input.as_deref(), &output, &dynamic),
        Command::Bench {
            what:
                BenchWhat::Queries {
                    mesh,
                    min_faces,
                    reps,
                    common,
                },
        } => bench_queries(mesh.as_deref(), min_faces, reps.max(1), &common),
        Command::Bench {
            what:
                BenchWhat::Remesh {
                    meshes,
                    subdivisions,
                    length,
                    iterations,
                    smoothing_steps,
                    reps,
                    cpu_max_faces,
                    python,
                    peer_script,
                    dynamic,
                },
        } => {
            let settings = cavity::bench::remesh::RemeshBenchSettings {
                settings: RemeshSettings {
                    length,
                    iterations,
                    smoothing_steps,
                    ..RemeshSettings::default()
                },
                layout: dynamic.remesh_layout(),
                reps,
                cpu_max_faces,
                peers: python.map(|p| (p, peer_script)),
            };
            bench_remesh(&meshes, &subdivisions, &settings, &dynamic)
        }
        Command::Bench {
            what:
                BenchWhat::Delaunay {
                    meshes,
                    subdivisions,
                    reps,
                    cpu_max_faces,
                    dynamic,
                },
        } => bench_delaunay(&meshes, &subdivisions, reps, cpu_max_faces, &dynamic),
        Command::Bench {
            what:
                BenchWhat::Track {
                    grids,
                    frames,
                    dt,
                    reps,
                    cpu_max_faces,
                    dynamic,
                },
        } => {
            let settings = TrackSettings {
                frames,
                dt,
                ..TrackSettings::default()
            };
            for &grid in &grids {
                TrackSettings { grid, ..settings }.check()?;
            }
            let backend = backend(dynamic.device)?;
            let layout = dynamic.layout();
            let pb = spinner();
            let bench = cavity::bench::track::track_bench(
                &grids,
                &settings,
                layout,
                reps,
                cpu_max_faces,
                &backend,
                |m| pb.set_message(m.to_string()),
            )?;
            pb.finish_and_clear();
            say!("{}", bench.table());
            Ok(())
        }
    }
}

fn info(path: Option<&Path>, patch_size: u32) -> Result<()> {
    let mesh = load(path)?;
    let topology = Topology::new(&mesh);
    let s = topology_stats_with(&mesh, &topology);
    sayln!("vertices: {}", s.vertices);
    sayln!("edges: {}", s.edges);
    sayln!("faces: {}", s.faces);
    sayln!("euler characteristic: {}", s.euler_characteristic);
    sayln!("components: {}", s.components);
    sayln!("isolated vertices: {}", s.isolated_vertices);
    sayln!("boundary edges: {}", s.boundary_edges);
    sayln!("boundary loops: {}", s.boundary_loops);
    sayln!("non-manifold edges: {}", s.non_manifold_edges);
    sayln!("non-manifold vertices: {}", s.non_manifold_vertices);
    let d = Defects::with_topology(&mesh, &topology);
    sayln!("duplicate faces: {}", d.duplicate_faces);
    sayln!("zero-area faces: {}", d.zero_area_faces);
    sayln!("zero-length edges: {}", d.zero_length_edges);
    sayln!("coincident vertices: {}", d.coincident_vertices);
    let pb = spinner();
    pb.set_message("patching");
    let t = Instant::now();
    let patched = PatchedMesh::with_topology(&mesh, &topology, patch_size)?;
    pb.finish_and_clear();
    let p = patched.stats();
    sayln!("patch size limit: {patch_size}");
    sayln!(
        "patches: {} (Lloyd iterations: {}, {:.3} s)",
        p.patches,
        patched.lloyd_iterations,
        t.elapsed().as_secs_f64()
    );
    sayln!(
        "faces per patch: min {} mean {:.1} max {}",
        p.min_faces,
        p.mean_faces,
        p.max_faces
    );
    sayln!("ribbon ratio: {:.3}", p.ribbon_ratio);
    sayln!(
        "patch data: {} bytes, {:.2} bytes/face",
        patched.patch_bytes(),
        p.bytes_per_face
    );
    Ok(())
}

/// Errors when `output` is the input file.
fn refuse_overwrite(input: Option<&Path>, output: &Path) -> Result<()> {
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

fn normals(input: Option<&Path>, output: &Path, common: &Common) -> Result<()> {
    refuse_overwrite(input, output)?;
    let format = check_writable(output)?;
    let mesh = load_input(input)?.mesh;
    let backend = backend(common.device)?;
    let t = Instant::now();
    let normals = cavity::normals::vertex_normals(&mesh, common.patch_size, &backend)?;
    let seconds = t.elapsed().as_secs_f64();
    let device = backend.name();
    let released = GivenBack::new(backend);
    let zero = normals.iter().filter(|n| **n == [0.0; 3]).count();
    if zero > 0 {
        eprintln!(
            "warning: {zero} vertices have no normal (no face, or only faces of zero area): written as (0, 0, 0)"
        );
    }
    write_mesh(output, &mesh, Some(&normals), format)?;
    drop(released);
    sayln!(
        "normals of {} vertices on {} in {:.3} ms (with patching and transfers); wrote {}",
        mesh.num_vertices(),
        device,
        seconds * 1e3,
        output.display()
    );
    Ok(())
}

fn bench_queries(
    path: Option<&Path>,
    min_faces: usize,
    reps: usize,
    common: &Common,
) -> Result<()> {
    let mesh = load(path)?;
    let mesh = if mesh.num_faces() < min_faces {
        let big = mesh.subdivide_to(min_faces);
        eprintln!(
            "subdivided to {} faces (--min-faces {min_faces})",
            big.num_faces()
        );
        big
    } else {
        mesh
    };
    let backend = backend(common.device)?;
    let pb = spinner();
    let bench = cavity::bench::queries(&mesh, common.patch_size, &backend, reps, |m| {
        pb.set_message(m.to_string())
    })?;
    pb.finish_and_clear();
    say!("{}", bench.table());
    Ok(())
}

/// Parses `--length`: a number, or a number followed by `x` (relative).
fn parse_length(s: &str) -> std::result::Result<TargetLength, String> {
    let (number, relative) = match s.strip_suffix('x') {
        Some(n) => (n, true),
        None => (s, false),
    };
    let l: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a length: write a number (\"0.01\") or a multiple of the mean edge length (\"0.5x\")"))?;
    Ok(if relative {
        TargetLength::Relative(l)
    } else {
        TargetLength::Absolute(l)
    })
}

/// The default output of `remesh`: the input's file name (the bundled
/// mesh's without a path) with "-remeshed" before the extension.
fn remeshed_name(input: Option<&Path>) -> PathBuf {
    let path = input.unwrap_or(Path::new(BUNDLED_NAME));
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let ext = path.extension().unwrap_or_default().to_string_lossy();
    PathBuf::from(format!("{stem}-remeshed.{ext}"))
}

fn remesh(
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
            let prepared = cavity::remesh::prepare(&read.mesh, &read.topology, settings, layout)
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

/// `output` with "-frameNNNN" before the extension.
fn frame_name(output: &Path, frame: u32) -> PathBuf {
    let stem = output.file_stem().unwrap_or_default().to_string_lossy();
    let ext = output.extension().unwrap_or_default().to_string_lossy();
    output.with_file_name(format!("{stem}-frame{frame:04}.{ext}"))
}

fn track(
    settings: &TrackSettings,
    output: &Path,
    every: Option<u32>,
    args: &DynamicArgs,
) -> Result<()> {
    settings.check()?;
    if every == Some(0) {
        return Err("--every 0: write every K-th frame with K at least 1".into());
    }
    let format = check_writable(output)?;
    let backend = backend(args.device)?;
    let layout = args.layout();
    let bar = ProgressBar::new(settings.frames as u64).with_style(
        ProgressStyle::with_template("frame {pos}/{len} {bar:30} {elapsed} (eta {eta})")
            .expect("template"),
    );
    let mut progress = |frame: u32| bar.set_position(frame as u64 - 1);
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
    let (out, report) = cavity::track::track(settings, &backend, layout, &mut hooks)?;
    let released = GivenBack::new(backend);
    bar.finish();
    write_mesh(output, &out, None, format)?;
    drop(released);
    say!("{}", report.table());
    if let Some(k) = every {
        sayln!(
            "wrote every {k}th frame as {}",
            frame_name(output, k).display()
        );
    }
    sayln!("wrote {}", output.display());
    Ok(())
}

fn delaunay(input: Option<&Path>, output: &Path, args: &DynamicArgs) -> Result<()> {
    refuse_overwrite(input, output)?;
    let format = check_writable(output)?;
    let read = load_input(input)?;
    let backend = backend(args.device)?;
    let pb = spinner();
    pb.set_message("flipping edges");
    let (out, report, device) = cavity::delaunay::delaunay(
        &read.mesh,
        args.patch_size(DYNAMIC_PATCH_SIZE),
        args.factors(),
        &backend,
    )?;
    let released = GivenBack::new(backend);
    pb.finish_and_clear();
    check(
        &read.defects,
        &out,
        None,
        Keeps {
            topology: true,
            no_zero_area: read.defects.zero_area_faces == 0,
        },
        output,
        format,
    )?;
    write_mesh(output, &out, None, format)?;
    drop(released);
    sayln!(
        "{} flips in {} sweeps ({} rounds) on {device} in {:.3} s; rolled back {} of {} scheduled patches ({:.1} %); wrote {}",
        report.flips,
        report.sweeps,
        report.rounds,
        report.seconds,
        report.rolled_back,
        report.scheduled,
        100.0 * report.rollback_fraction(),
        output.display()
    );
    Ok(())
}

/// The bench inputs: each mesh (the bundled one when none is given) at
/// each subdivision level, named "NAME /LEVEL".
fn subdivided_inputs(paths: &[PathBuf], subdivisions: &[u32]) -> Result<Vec<(String, TriMesh)>> {
    let inputs: Vec<(String, TriMesh)> = if paths.is_empty() {
        vec![(BUNDLED_NAME.to_string(), load_input(None)?.mesh)]
    } else {
        paths
            .iter()
            .map(|p| Ok((p.display().to_string(), load_input(Some(p))?.mesh)))
            .collect::<Result<_>>()?
    };
    let mut meshes = Vec::new();
    for (name, mesh) in inputs {
        let mut m = mesh;
        let mut level = 0;
        for &k in subdivisions {
            while level < k {
                m = m.subdivide();
                level += 1;
            }
            meshes.push((format!("{name} /{level}"), m.clone()));
        }
    }
    Ok(meshes)
}

fn bench_remesh(
    paths: &[PathBuf],
    subdivisions: &[u32],
    settings: &cavity::bench::remesh::RemeshBenchSettings,
    args: &DynamicArgs,
) -> Result<()> {
    settings.settings.check()?;
    let meshes = subdivided_inputs(paths, subdivisions)?;
    let backend = backend(args.device)?;
    let pb = spinner();
    let bench = cavity::bench::remesh::remesh_bench(&meshes, settings, &backend, |m| {
        pb.set_message(m.to_string())
    })?;
    pb.finish_and_clear();
    say!("{}", bench.table());
    Ok(())
}

fn bench_delaunay(
    paths: &[PathBuf],
    subdivisions: &[u32],
    reps: usize,
    cpu_max_faces: usize,
    args: &DynamicArgs,
) -> Result<()> {
    let meshes = subdivided_inputs(paths, subdivisions)?;
    let backend = backend(args.device)?;
    let pb = spinner();
    let settings = cavity::bench::delaunay::DelaunaySettings {
        patch_size: args.patch_size(DYNAMIC_PATCH_SIZE),
        factors: args.factors(),
        reps,
        cpu_max_faces,
    };
    let bench = cavity::bench::delaunay::delaunay(&meshes, settings, &backend, |m| {
        pb.set_message(m.to_string())
    })?;
    pb.finish_and_clear();
    say!("{}", bench.table());
    Ok(())
}

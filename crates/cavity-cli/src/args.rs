//! The command line: the commands, their options and how each option's
//! text is parsed (clap's derive), apart from what the commands do
//! (`main.rs` dispatches, `commands/` runs them).

use std::path::PathBuf;

use cavity::dynamic::CapacityFactors;
use cavity::patcher::{DEFAULT_PATCH_SIZE, MAX_PATCH_SIZE};
use cavity_denoise::DenoiseSettings;
use cavity_geodesic::GeodesicSettings;
use cavity_mcf::{Laplacian, McfSettings, Preconditioner};
use cavity_remesh::{Layout, TargetLength};
use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(
    name = "cavity",
    version,
    about = "GPU mesh processing on patches in shared memory"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Device {
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
pub(crate) struct Common {
    /// Backend to run on.
    #[arg(long, value_enum, default_value = "auto")]
    pub(crate) device: Device,
    /// Maximum faces per patch (1 to 8192).
    #[arg(long, default_value_t = DEFAULT_PATCH_SIZE, value_parser = clap::value_parser!(u32).range(1..=MAX_PATCH_SIZE as i64))]
    pub(crate) patch_size: u32,
}

/// Settings of the dynamic commands.
#[derive(clap::Args)]
pub(crate) struct DynamicArgs {
    /// Backend to run on.
    #[arg(long, value_enum, default_value = "auto")]
    pub(crate) device: Device,
    /// Maximum faces per patch when the mesh is patched: by default 512
    /// for remeshing (lowered while a patch does not fit the GPU's shared
    /// memory), 256 for the other commands (smaller than for static
    /// queries, so that patches have room to grow); at most
    /// 2048 (with --capacity-factor 2 a larger patch outgrows the 8160
    /// element slots of a patch).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=MAX_DYNAMIC_PATCH_SIZE as i64))]
    pub(crate) patch_size: Option<u32>,
    /// Element slots per patch over the largest initial patch (at least
    /// 1): by default 1.25 for remeshing (so that two update blocks share
    /// an SM at 512 faces per patch), 2 for the other commands.
    #[arg(long)]
    pub(crate) capacity_factor: Option<f32>,
    /// Patch slots over the initial number of patches (at least 1).
    #[arg(long, default_value_t = 2.0)]
    pub(crate) patch_factor: f32,
}

/// Largest `--patch-size` of the dynamic commands.
pub(crate) const MAX_DYNAMIC_PATCH_SIZE: u32 = 2048;

/// Faces per patch of the dynamic commands but remeshing.
pub(crate) const DYNAMIC_PATCH_SIZE: u32 = 256;

impl DynamicArgs {
    /// The capacity factors of the commands but remeshing.
    pub(crate) fn factors(&self) -> CapacityFactors {
        self.factors_or(CapacityFactors::default().elements)
    }

    /// The capacity factors, with element factor `default` when not given.
    pub(crate) fn factors_or(&self, default: f32) -> CapacityFactors {
        CapacityFactors {
            elements: self.capacity_factor.unwrap_or(default),
            patches: self.patch_factor,
        }
    }

    /// The patch size, `default` when not given.
    pub(crate) fn patch_size(&self, default: u32) -> u32 {
        self.patch_size.unwrap_or(default)
    }

    /// The layout of the commands but remeshing.
    pub(crate) fn layout(&self) -> Layout {
        Layout {
            patch_size: self.patch_size(DYNAMIC_PATCH_SIZE),
            factors: self.factors(),
        }
    }

    /// The layout of remeshing ([`Layout::default`] where not given).
    pub(crate) fn remesh_layout(&self) -> Layout {
        let default = Layout::default();
        Layout {
            patch_size: self.patch_size(default.patch_size),
            factors: self.factors_or(default.factors.elements),
        }
    }
}

/// How a volumetric mesh is written.
#[derive(clap::Args, Clone, Copy)]
pub(crate) struct VolumeEncoding {
    /// Binary rather than ASCII (.vtk and .msh).
    #[arg(long)]
    pub(crate) binary: bool,
    /// The Gmsh version of a .msh output.
    #[arg(long, value_enum, default_value = "4.1")]
    pub(crate) msh_version: MshVersionArg,
}

/// The Gmsh versions written.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum MshVersionArg {
    /// MSH 2.2.
    #[value(name = "2.2")]
    V22,
    /// MSH 4.1.
    #[value(name = "4.1")]
    V41,
}

impl VolumeEncoding {
    pub(crate) fn options(self) -> cavity_volume::io::WriteOptions {
        cavity_volume::io::WriteOptions {
            binary: self.binary,
            msh_version: match self.msh_version {
                MshVersionArg::V22 => cavity_volume::io::gmsh::MshVersion::V22,
                MshVersionArg::V41 => cavity_volume::io::gmsh::MshVersion::V41,
            },
        }
    }
}

/// The criteria of `cavity tet simplify`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum CriterionArg {
    /// Edge length towards a target length L (shortest first).
    Length,
    /// The error of the per-vertex field along the edge (smallest first;
    /// section 4.5 of the paper).
    Field,
    /// Quality: collapses that lower the summed harmonic index of the
    /// tetrahedra around them (largest decrease first).
    Quality,
}

/// The placements of `cavity tet simplify`.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum PlacementArg {
    /// The edge's midpoint.
    Midpoint,
    /// The endpoint with the lower index.
    Endpoint,
}

/// The conflict resolutions of `cavity tet simplify`.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum ConflictsArg {
    /// The paper's two passes (section 3.3), the second in rounds.
    TwoPass,
    /// Gautron and Kanzler's atomic propagation (the paper's baseline).
    Gautron,
    /// The greedy maximal independent set of the candidates by cost
    /// (fewer iterations).
    Greedy,
}

/// The volumetric commands (`cavity tet ...`).
#[derive(Subcommand)]
pub(crate) enum TetCommand {
    /// Counts of vertices, edges, faces and cells by type, the boundary's
    /// counts, memory in bytes per cell, and the times.
    Info {
        /// Input mesh (.mesh, .node, .ele, .vtk or .msh).
        mesh: PathBuf,
        /// Backend to run on.
        #[arg(long, value_enum, default_value = "auto")]
        device: Device,
    },
    /// The boundary (the faces whose cells do not cancel, facing out) as a
    /// surface, polygons split into triangle fans.
    Boundary {
        /// Input mesh (.mesh, .node, .ele, .vtk or .msh).
        mesh: PathBuf,
        /// Output surface (.ply, .obj, .off or .stl).
        #[arg(short, long)]
        output: PathBuf,
        /// Backend to run on.
        #[arg(long, value_enum, default_value = "auto")]
        device: Device,
    },
    /// Laplacian smoothing of the inner vertices: each step moves every
    /// vertex off the boundary to the average of its edge neighbours,
    /// except where that would invert a cell (the move is cut short, or
    /// the vertex stays; --plain for the plain steps). Prints the minimum
    /// dihedral angle (tetrahedra) and scaled Jacobian before and after.
    Smooth {
        /// Input mesh (.mesh, .node, .ele, .vtk or .msh).
        mesh: PathBuf,
        /// Output mesh (.mesh, .vtk, .msh, or .node/.ele for tetrahedra);
        /// never the input.
        #[arg(short, long)]
        output: PathBuf,
        /// Smoothing steps (at least 1).
        #[arg(long, default_value_t = 10)]
        iterations: u32,
        /// The plain steps: cells may invert (counted and reported).
        #[arg(long)]
        plain: bool,
        /// Backend to run on.
        #[arg(long, value_enum, default_value = "auto")]
        device: Device,
        #[command(flatten)]
        encoding: VolumeEncoding,
    },
    /// Volumetric Catmull-Clark subdivision (Joy and MacCracken): each
    /// level splits every cell into one cell per vertex (hexahedra from
    /// tetrahedra, prisms and hexahedra; general polyhedra at vertices of
    /// more than three faces, as a pyramid's apex). By default no cell is
    /// inverted where the smoothed positions would invert one, its vertices
    /// move back towards the linear split (the plain centres) until it is
    /// valid; --plain keeps the plain rules. Prints each level's inverted
    /// cells and minimum scaled Jacobian.
    Subdivide {
        /// Input mesh (.mesh, .node, .ele, .vtk or .msh).
        mesh: PathBuf,
        /// Output mesh (.mesh, .vtk or .msh; .vtk for cells other than
        /// hexahedra, as a pyramid's apex gives); never the input.
        #[arg(short, long)]
        output: PathBuf,
        /// Subdivision levels (at least 1; each multiplies the cells by
        /// about 4 to 8: the memory they need is estimated first).
        #[arg(long, default_value_t = 1)]
        levels: u32,
        /// The plain Joy-MacCracken rules: cells may invert (counted and
        /// reported).
        #[arg(long)]
        plain: bool,
        /// Backend to run on.
        #[arg(long, value_enum, default_value = "auto")]
        device: Device,
        #[command(flatten)]
        encoding: VolumeEncoding,
    },
    /// Simplifies a tetrahedral mesh by parallel edge collapse (Ströter et
    /// al. 2023): iterations of admissible collapses (link condition, no
    /// inverted or flat tetrahedron, the boundary's corners and ridges
    /// kept), the cheapest of each neighbourhood at once, until none is
    /// left or the target is met. Prints the iterations, the time per
    /// stage, the quality of input and output, the boundary's Hausdorff
    /// distance and whether the target was reached.
    Simplify {
        /// Input mesh of tetrahedra (.mesh, .node, .ele, .vtk or .msh).
        mesh: PathBuf,
        /// Output mesh (.mesh, .vtk, .msh or .node/.ele; .vtk and .msh keep
        /// the field); never the input.
        #[arg(short, long)]
        output: PathBuf,
        /// Keep at most this share of the tetrahedra (in (0, 1]): the
        /// criterion's bound (target length, largest field error) grows by
        /// 1.5 per round until it is met or the criterion allows no more.
        #[arg(long, conflicts_with_all = ["cells", "length"])]
        ratio: Option<f64>,
        /// Keep at most this many tetrahedra (at least 1), as --ratio.
        #[arg(long, conflicts_with = "length")]
        cells: Option<usize>,
        /// The length criterion's target edge length L (model units):
        /// edges shorter than 4/5 L collapse, none is made longer than 4/3
        /// L, to convergence. Without a target: 1.25 times the median edge
        /// length.
        #[arg(long)]
        length: Option<f64>,
        /// What ranks and admits the collapses.
        #[arg(long, value_enum, default_value = "length")]
        criterion: CriterionArg,
        /// The per-vertex scalar field (by name) the collapse carries and
        /// the field criterion reads; by default the file's only field.
        #[arg(long)]
        field: Option<String>,
        /// The field criterion's largest error (the field's units; default
        /// 0.02 times the field's span).
        #[arg(long)]
        max_error: Option<f64>,
        /// Where the kept vertex of a collapsed edge goes (length and field
        /// criteria; a boundary vertex stays where it is).
        #[arg(long, value_enum, default_value = "midpoint")]
        placement: PlacementArg,
        /// Stop after an iteration that collapses at most this many edges
        /// (the paper's epsilon_c: the last iterations collapse few).
        #[arg(long, default_value_t = 0)]
        epsilon_c: usize,
        /// How an iteration chooses its collapses among the admissible
        /// candidates.
        #[arg(long, value_enum, default_value = "two-pass")]
        conflicts: ConflictsArg,
        /// Backend to run on.
        #[arg(long, value_enum, default_value = "auto")]
        device: Device,
        #[command(flatten)]
        encoding: VolumeEncoding,
    },
    /// Converts a volumetric mesh between formats (cells oriented outward).
    Convert {
        /// Input mesh (.mesh, .node, .ele, .vtk or .msh).
        mesh: PathBuf,
        /// Output mesh (.mesh, .vtk, .msh, or .node/.ele for tetrahedra);
        /// never the input.
        #[arg(short, long)]
        output: PathBuf,
        #[command(flatten)]
        encoding: VolumeEncoding,
    },
}

#[derive(Subcommand)]
pub(crate) enum Command {
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
        #[arg(long, default_value_t = cavity_remesh::DEFAULT_SMOOTHING_STEPS)]
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
    /// Volumetric meshes (MEDIT .mesh, TetGen .node/.ele, VTK .vtk, Gmsh .msh) as ternary
    /// sparse boundary operators (Mueller-Roemer et al.): counts and
    /// quality (info), boundary, smoothing, Catmull-Clark subdivision,
    /// format conversion; simplification of tetrahedral meshes by edge
    /// collapse.
    Tet {
        #[command(subcommand)]
        what: TetCommand,
    },
    /// Counts, components, boundary loops, non-manifold elements and patch statistics.
    Info {
        /// Input mesh (.ply, .obj, .off, .stl); the bundled mesh when omitted.
        mesh: Option<PathBuf>,
        /// Maximum faces per patch (1 to 8192).
        #[arg(long, default_value_t = DEFAULT_PATCH_SIZE, value_parser = clap::value_parser!(u32).range(1..=MAX_PATCH_SIZE as i64))]
        patch_size: u32,
        /// Backend that patches the mesh.
        #[arg(long, value_enum, default_value = "auto")]
        device: Device,
    },
    /// Polylla polygonal meshes (GPolylla): the triangles of each
    /// terminal-edge region joined into a polygon, barrier tips repaired,
    /// barrier edges left split (every polygon walks each edge once).
    /// Input: Triangle .node/.ele (a .node alone is triangulated), 2D OFF,
    /// or a generated Delaunay triangulation (--random N, --grid N).
    Polylla {
        /// Input triangulation (.node, .ele or .off); none with --random or
        /// --grid.
        #[arg(required_unless_present_any = ["random", "grid"])]
        input: Option<PathBuf>,
        /// Output polygons by extension: .off, .ply (polygon faces) or
        /// .svg (a picture); never the input.
        #[arg(short, long)]
        output: PathBuf,
        /// Triangulate this many random points (at least 3) in the unit
        /// square.
        #[arg(long, conflicts_with_all = ["input", "grid"])]
        random: Option<usize>,
        /// Triangulate an N x N grid of points (N at least 2).
        #[arg(long, conflicts_with_all = ["input", "random"])]
        grid: Option<usize>,
        /// Seed of the random points.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Also draw the polygons over the triangulation as SVG.
        #[arg(long)]
        svg: Option<PathBuf>,
        /// Backend to run on.
        #[arg(long, value_enum, default_value = "auto")]
        device: Device,
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
    /// Smoothing by implicit mean curvature flow (Desbrun et al. 1999;
    /// RXMesh section 8.1): each step solves (M + dt K) x' = M x, cotan
    /// weights and mixed Voronoi areas, by a Jacobi-preconditioned
    /// conjugate gradient, matrix-free on the patches (assembled for the
    /// intrinsic Delaunay Laplacian). Vertices on a boundary or
    /// non-manifold edge stay.
    Smooth {
        /// Input mesh; the bundled mesh when omitted.
        input: Option<PathBuf>,
        /// Output mesh (.ply, .obj, .off or .stl); never the input.
        #[arg(short, long)]
        output: PathBuf,
        /// Implicit steps.
        #[arg(long, default_value_t = McfSettings::default().steps)]
        steps: u32,
        /// Time step over the squared mean edge length (1 diffuses over
        /// about one edge per step), positive and at most 1e4 (for more
        /// smoothing, take more steps).
        #[arg(long, default_value_t = McfSettings::default().dt)]
        dt: f32,
        /// The conjugate gradient stops at this residual over the step's
        /// initial residual.
        #[arg(long, default_value_t = McfSettings::default().tolerance)]
        tolerance: f32,
        /// Conjugate-gradient iterations per step at most.
        #[arg(long, default_value_t = McfSettings::default().max_iterations)]
        max_iterations: u32,
        /// The Laplacian: clamped (the cotan weights with negative
        /// cotangents clamped to 0: converges on scans with near-degenerate
        /// faces), cotan (plain), mollified (Sharp and Crane 2020's
        /// intrinsic mollification: zero-area faces get area), or intrinsic
        /// (their intrinsic Delaunay Laplacian of the mollified lengths:
        /// the most robust; its triangulation is flipped on the host every
        /// step).
        #[arg(long, default_value_t = McfSettings::default().laplacian)]
        laplacian: Laplacian,
        /// The conjugate gradient's preconditioner: jacobi (the diagonal)
        /// or none.
        #[arg(long, default_value_t = McfSettings::default().preconditioner)]
        preconditioner: Preconditioner,
        #[command(flatten)]
        common: Common,
    },
    /// Geodesic distance from one or more source vertices (Romero Calla et
    /// al. 2019; RXMesh section 8.2): toplesets (hops) from the sources,
    /// bands of them relaxed in parallel from their faces, then passes
    /// along the edges until none changes. Vertices no source reaches (other
    /// components, no face) get distance inf.
    Geodesic {
        /// Input mesh; the bundled mesh when omitted.
        input: Option<PathBuf>,
        /// A source vertex: its 0-based index in the input file's vertices
        /// (repeat for several sources).
        #[arg(long = "source", required = true, value_name = "V")]
        sources: Vec<u32>,
        /// Output mesh: a .ply gets the distances as the vertex property
        /// "distance"; beside a .obj or .off they go, one per vertex and
        /// line, to the output's name with "-distance.txt" (not .stl,
        /// which has no vertex list). Never the input.
        #[arg(short, long)]
        output: PathBuf,
        /// A patch has converged when no distance in it or its
        /// neighbours fell by more than this fraction in a pass.
        #[arg(long, default_value_t = GeodesicSettings::default().tolerance)]
        tolerance: f32,
        /// Sweeps of each patch per pass (1 to 256; 1: one relaxation per
        /// pass, as RXMesh runs it).
        #[arg(long, default_value_t = GeodesicSettings::default().sweeps)]
        sweeps: u32,
        #[command(flatten)]
        common: Common,
    },
    /// Bilateral mesh denoising (Fleishman et al. 2003; RXMesh section
    /// 8.3): each iteration moves every vertex along its normal by a
    /// weighted mean of its neighbours' heights over its tangent plane, the
    /// neighbours being those a breadth-first search reaches inside the
    /// ball of radius twice the vertex's shortest edge.
    Denoise {
        /// Input mesh; the bundled mesh when omitted.
        input: Option<PathBuf>,
        /// Output mesh (.ply, .obj, .off or .stl); never the input.
        #[arg(short, long)]
        output: PathBuf,
        /// Filter iterations.
        #[arg(long, default_value_t = DenoiseSettings::default().iterations)]
        iterations: u32,
        /// The most hops of a neighbourhood (default: as far as the ball
        /// reaches).
        #[arg(long)]
        max_hops: Option<u32>,
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
pub(crate) enum BenchWhat {
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
        #[arg(long, default_value_t = cavity_remesh::DEFAULT_SMOOTHING_STEPS)]
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
    /// Mean curvature flow (RXMesh section 8.1, the dynamic paper's table
    /// 3): one conjugate-gradient iteration on the GPU, the CPU backend and
    /// the CPU peers (libigl and SciPy, with --python); with --delaunay
    /// again after Delaunay flips on the same structure.
    Smooth {
        /// Input meshes; the bundled mesh when omitted.
        meshes: Vec<PathBuf>,
        /// Midpoint subdivision steps (×4 faces each) to run each mesh at.
        #[arg(long, value_delimiter = ',', default_value = "3,4,5")]
        subdivisions: Vec<u32>,
        /// Time step over the squared mean edge length.
        #[arg(long, default_value_t = McfSettings::default().dt)]
        dt: f32,
        /// The Laplacian (as for `smooth`, but not intrinsic: the
        /// benchmark times the patches' matrix-free iteration).
        #[arg(long, default_value_t = McfSettings::default().laplacian)]
        laplacian: Laplacian,
        /// The preconditioner (as for `smooth`).
        #[arg(long, default_value_t = McfSettings::default().preconditioner)]
        preconditioner: Preconditioner,
        /// Iterations per timed GPU solve.
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
        iterations: u32,
        /// Iterations per timed solve of the CPU backend and the peers.
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
        cpu_iterations: u32,
        /// Timed GPU solves (the median is reported).
        #[arg(long, default_value_t = 5)]
        reps: usize,
        /// Largest mesh the CPU backend runs.
        #[arg(long, default_value_t = 6_000_000)]
        cpu_max_faces: usize,
        /// Time the iteration again after Delaunay edge flips on the same
        /// dynamic mesh (the dynamic paper's table 3).
        #[arg(long)]
        delaunay: bool,
        /// Python interpreter with the peers (libigl, SciPy); none run
        /// without it.
        #[arg(long)]
        python: Option<PathBuf>,
        /// The peer script.
        #[arg(long, default_value = "xtask/peers/mcf_peers.py")]
        peer_script: PathBuf,
        #[command(flatten)]
        common: Common,
    },
    /// Geodesic distance from one source (the dynamic paper's table 1): our GPU and the CPU backend (the whole call and the propagation alone) and the CPU peers (pygeodesic's exact distance, potpourri3d's heat method, with --python), with the mean relative error against the exact distance.
    Geodesic {
        /// Input meshes; the bundled mesh when omitted.
        meshes: Vec<PathBuf>,
        /// Midpoint subdivision steps (×4 faces each) to run each mesh at.
        #[arg(long, value_delimiter = ',', default_value = "3,4,5")]
        subdivisions: Vec<u32>,
        /// The source vertex.
        #[arg(long, default_value_t = 0)]
        source: u32,
        /// Relative change below which a patch has converged.
        #[arg(long, default_value_t = GeodesicSettings::default().tolerance)]
        tolerance: f32,
        /// Sweeps of each patch per pass.
        #[arg(long, default_value_t = GeodesicSettings::default().sweeps)]
        sweeps: u32,
        /// Timed GPU runs (the median is reported).
        #[arg(long, default_value_t = 5)]
        reps: usize,
        /// Largest mesh the CPU backend runs.
        #[arg(long, default_value_t = 6_000_000)]
        cpu_max_faces: usize,
        /// Largest mesh the exact peer runs on (11 s at 320 k faces,
        /// growing about as the faces to the power 1.5).
        #[arg(long, default_value_t = 400_000)]
        exact_max_faces: usize,
        /// Python interpreter with the peers (pygeodesic, potpourri3d);
        /// none run without it.
        #[arg(long)]
        python: Option<PathBuf>,
        /// The peer script.
        #[arg(long, default_value = "xtask/peers/geodesic_peers.py")]
        peer_script: PathBuf,
        #[command(flatten)]
        common: Common,
    },
    /// Bilateral denoising (RXMesh section 8.3, fig. 8c): one iteration on our GPU, the CPU backend and the plain serial filter on one thread, the whole `denoise` call on the GPU, and the largest neighbourhood.
    Denoise {
        /// Input meshes; the bundled mesh when omitted.
        meshes: Vec<PathBuf>,
        /// Midpoint subdivision steps (×4 faces each) to run each mesh at.
        #[arg(long, value_delimiter = ',', default_value = "3,4,5")]
        subdivisions: Vec<u32>,
        /// Iterations per timed run.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
        iterations: u32,
        /// Timed GPU runs (the median is reported).
        #[arg(long, default_value_t = 5)]
        reps: usize,
        /// Largest mesh the CPU backend runs.
        #[arg(long, default_value_t = 6_000_000)]
        cpu_max_faces: usize,
        /// Largest mesh the serial filter runs.
        #[arg(long, default_value_t = 2_000_000)]
        serial_max_faces: usize,
        #[command(flatten)]
        common: Common,
    },
    /// Volumetric meshes (.mesh, .node/.ele): the transposes, relations, boundary and ten smoothing steps on the GPU, the CPU backend and serially in one run, with bytes per cell.
    Tet {
        /// Input meshes.
        #[arg(required = true)]
        meshes: Vec<PathBuf>,
        /// Timed runs per operation (the median is reported).
        #[arg(long, default_value_t = 3)]
        reps: usize,
        /// Backend for the GPU column (the CPU backend and the serial runs always run).
        #[arg(long, value_enum, default_value = "auto")]
        device: Device,
    },
    /// Tetrahedral edge collapse (issue 54): each mesh reduced by the length criterion at a factor of its median edge length to convergence, by the parallel collapse on the GPU with each conflict resolution, on the CPU backend and by the sequential version, in one run (time, iterations, tetrahedra left, quality); with --python the CPU peers of xtask/peers/tet_peers.py (MMG, VTK's quadric decimation) at the two passes' cell count.
    TetSimplify {
        /// Input meshes of tetrahedra.
        #[arg(required = true)]
        meshes: Vec<PathBuf>,
        /// Timed runs per parallel variant (the median is reported; the
        /// sequential version runs once).
        #[arg(long, default_value_t = 3)]
        reps: usize,
        /// The target edge length over the median edge length (edges
        /// shorter than 4/5 of it collapse).
        #[arg(long, default_value_t = 1.25)]
        length_factor: f64,
        /// Backend for the GPU rows (the CPU backend and the sequential
        /// version always run).
        #[arg(long, value_enum, default_value = "auto")]
        device: Device,
        /// Python interpreter with the peers (mmgpy, vtk) and numpy; runs
        /// xtask/peers/tet_peers.py (or --peer-script) at the two passes'
        /// cell count when given.
        #[arg(long)]
        python: Option<PathBuf>,
        /// The peer script.
        #[arg(long, default_value = "xtask/peers/tet_peers.py")]
        peer_script: PathBuf,
        /// Seconds each peer may take (its import, input and runs
        /// included); the script's default (600) when omitted.
        #[arg(long)]
        peer_timeout: Option<f64>,
    },
    /// GPolylla on Delaunay triangulations of random points and grids: the GPU's kernels alone and with copies, the CPU backend and the sequential version in one run.
    Polylla {
        /// Random point counts.
        #[arg(long, value_delimiter = ',', default_values_t = [1_000_000usize])]
        random: Vec<usize>,
        /// Grid sides (N x N points).
        #[arg(long, value_delimiter = ',', default_values_t = [1000usize])]
        grid: Vec<usize>,
        /// Timed runs per input (the median is reported).
        #[arg(long, default_value_t = 5)]
        reps: usize,
        /// Backend for the GPU columns (the CPU backend and the sequential runs always run).
        #[arg(long, value_enum, default_value = "auto")]
        device: Device,
    },
    /// Mesh file I/O (issue 55): each surface mesh written to and read back from binary PLY, binary STL, ASCII PLY and OBJ, read and write timed apart (GB/s), beside a raw write and read of as many bytes in the same run (the page cache's and the disk's speed).
    Io {
        /// Input surface meshes (any readable format); the bundled mesh when omitted.
        meshes: Vec<PathBuf>,
        /// Midpoint subdivision steps (×4 faces each) applied in memory
        /// before the timing (4 makes the bundled mesh 5.12 M faces).
        #[arg(long, default_value_t = 0)]
        subdivide: u32,
        /// Timed runs of each write and read after one warm-up (the median is reported).
        #[arg(long, default_value_t = 3)]
        reps: usize,
        /// Directory the files are written in (a fresh directory inside it,
        /// removed afterwards); the system's temporary directory when
        /// omitted. Its file system sets the raw speed: a tmpfs
        /// (`/dev/shm`) measures the page cache alone.
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Also time the volumetric formats (MEDIT, TetGen, VTK and Gmsh,
        /// ASCII and binary) on a grid of N³ hexahedra: encoding alone,
        /// write and read (259 is about the 17.4 M hexahedra of `tet
        /// subdivide --levels 2` on a 542 k-tetrahedron mesh); 0: none.
        #[arg(long, value_name = "N", default_value_t = 0)]
        volume_grid: u32,
    },
    /// Patching (issue 55): the face partition and the patch structures built on the device against the host's build of the same partition, and the whole patching a command runs, per mesh and subdivision level.
    Patching {
        /// Input meshes; the bundled mesh when omitted.
        meshes: Vec<PathBuf>,
        /// Midpoint subdivision steps (×4 faces each) to run each mesh at.
        #[arg(long, value_delimiter = ',', default_value = "0,2,3")]
        subdivisions: Vec<u32>,
        /// Timed runs of each step after one warm-up (the median is reported).
        #[arg(long, default_value_t = 3)]
        reps: usize,
        #[command(flatten)]
        common: Common,
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

/// The command line of [`Cli`], with negative numbers taken as values in
/// every command (`--source -1`, `--length -1`), so that the option's own
/// range check answers them (clap's integer ranges, the settings' checks)
/// rather than clap's advice to write `-- -1`: comma-separated lists,
/// real numbers (`-1e-5`, which clap does not take for a number) and
/// target lengths (`-0.5x`) take values that start with a hyphen, and
/// `usize` and `u64` options are parsed through `i64` so that a negative
/// value names its range.
pub(crate) fn command() -> clap::Command {
    fn negative_numbers(mut command: clap::Command) -> clap::Command {
        use clap::builder::RangedI64ValueParser;
        use std::any::TypeId;
        command = command.allow_negative_numbers(true);
        let ids: Vec<clap::Id> = command
            .get_arguments()
            .map(|a| a.get_id().clone())
            .collect();
        for id in ids {
            command = command.mut_arg(id, |arg| {
                let value = arg.get_value_parser().type_id();
                let hyphen = [
                    TypeId::of::<f32>(),
                    TypeId::of::<f64>(),
                    TypeId::of::<TargetLength>(),
                ];
                let arg =
                    if arg.get_value_delimiter().is_some() || hyphen.iter().any(|&t| value == t) {
                        arg.allow_hyphen_values(true)
                    } else {
                        arg
                    };
                if value == TypeId::of::<usize>() {
                    arg.value_parser(RangedI64ValueParser::<usize>::new().range(0..))
                } else if value == TypeId::of::<u64>() {
                    arg.value_parser(RangedI64ValueParser::<u64>::new().range(0..))
                } else {
                    arg
                }
            });
        }
        let names: Vec<String> = command
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        for name in names {
            command = command.mut_subcommand(name, negative_numbers);
        }
        command
    }
    negative_numbers(<Cli as clap::CommandFactory>::command())
}

/// Parses `--length`: a number, or a number followed by `x` (relative).
pub(crate) fn parse_length(s: &str) -> std::result::Result<TargetLength, String> {
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

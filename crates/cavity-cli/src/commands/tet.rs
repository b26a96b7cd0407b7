//! `cavity tet`: volumetric meshes as ternary boundary operators
//! (`cavity-volume`): counts and boundary (`info`), the boundary as a
//! surface (`boundary`), Laplacian smoothing of inner vertices (`smooth`),
//! Catmull-Clark subdivision (`subdivide`), format conversion (`convert`),
//! simplification by parallel edge collapse (`simplify`,
//! `cavity-tet-collapse`), and `cavity bench tet`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use cavity::TriMesh;
use cavity::backend::Backend;
use cavity::backend::cpu::CpuBackend;
use cavity::io::{check_writable, write_mesh};
use cavity_tet_collapse::checks::{self, check_valid, hausdorff};
use cavity_tet_collapse::kernels::criterion::Placement;
use cavity_tet_collapse::mesh::signed_volume;
use cavity_tet_collapse::quality::quality_table;
use cavity_tet_collapse::simplify::{Criterion, SimplifySettings, Target, diagonal};
use cavity_tet_collapse::{Conflicts, Settings, TetMesh};
use cavity_volume::boundary::Boundary;
use cavity_volume::io::{CellMesh, VolumeFormat, WriteOptions, read_volume, write_volume_with};
use cavity_volume::io::{PointField, read_volume_fields, write_volume_field};
use cavity_volume::quality::{Quality, Validity, quality};
use cavity_volume::subdivide::{plan, subdivide_valid};
use cavity_volume::{
    CellType, CellVertices, ResidentMesh, VolumeError, VolumeMesh, check_cells, check_count,
    setting,
};
use rayon::prelude::*;

use crate::Result;
use crate::args::{ConflictsArg, CriterionArg, Device, PlacementArg};
use crate::commands::read_and_start;
use crate::device::backend;
use crate::output::{say, sayln, spinner};
use crate::stages::Clock;

/// An error of the mesh in `file` (a degenerate cell, a vertex out of
/// range, a cell the collapse does not take), naming the file; its source
/// is the error itself, so that the settings it names are found.
#[derive(Debug)]
struct InFile<E> {
    file: PathBuf,
    error: E,
}

impl<E: std::fmt::Display> std::fmt::Display for InFile<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.error)
    }
}

impl<E: std::error::Error + 'static> std::error::Error for InFile<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// `error` as an error of `path`.
fn in_file<E>(path: &Path) -> impl FnOnce(E) -> InFile<E> + '_ {
    |error| InFile {
        file: path.to_path_buf(),
        error,
    }
}

/// The mesh at `path` with its cells oriented outward, each cell checked
/// (its vertices in range, no repeated vertex, faces of three vertices
/// or more); an empty mesh is an error, and flat or tangled cells (a
/// scaled Jacobian at most `cavity_volume::quality::FLAT` once oriented)
/// get a warning with their number and the first's index.
fn read_checked(path: &Path) -> Result<(CellMesh, Quality)> {
    let mesh = read_volume(path)?.oriented();
    if mesh.cells.is_empty() {
        return Err(format!(
            "{}: no cells ({} vertices): a volumetric mesh needs at least one cell",
            path.display(),
            mesh.positions.len()
        )
        .into());
    }
    check_cells(&mesh.cells, mesh.positions.len()).map_err(in_file(path))?;
    let q = quality(&mesh.cells, &mesh.positions);
    if let Some(first) = q.first_flat {
        eprintln!(
            "warning: {}: {} of {} cells are flat or tangled (zero volume, or a corner's scaled Jacobian at most {:e}), the first cell {first} (from 0)",
            path.display(),
            q.flat,
            q.cells,
            cavity_volume::quality::FLAT
        );
    }
    Ok((mesh, q))
}

/// The mesh at `path` with its cells oriented outward and checked
/// ([`read_checked`]) while `device` starts on another thread: its
/// positions and cells, their quality and the backend. The reading and
/// what the start added after it are stages of `clock`.
fn load_on(path: &Path, device: Device, clock: &mut Clock) -> Result<(CellMesh, Quality, Backend)> {
    let ((mesh, q), backend) = read_and_start(|| read_checked(path), device, clock)?;
    Ok((mesh, q, backend))
}

/// A mesh's boundary operators, where [`operators`] built them.
enum Operators<'a> {
    /// On the host (the CPU backend, or a general polyhedron).
    Host(VolumeMesh),
    /// On the GPU.
    Resident(Box<ResidentMesh<'a>>),
}

impl<'a> Operators<'a> {
    /// The mesh on the host (copied back from the GPU).
    fn into_host(self) -> std::result::Result<VolumeMesh, VolumeError> {
        match self {
            Operators::Host(m) => Ok(m),
            Operators::Resident(r) => r.download(),
        }
    }

    /// The mesh on `backend` (uploaded from the host).
    fn into_resident(
        self,
        backend: &'a Backend,
    ) -> std::result::Result<ResidentMesh<'a>, VolumeError> {
        match self {
            Operators::Host(m) => ResidentMesh::upload(backend, &m),
            Operators::Resident(r) => Ok(*r),
        }
    }
}

/// The boundary operators of `mesh` (cells [`read_checked`] has checked:
/// vertices in range, none repeated; read from `path`), a stage of
/// `clock` (issue 55 item 6): on the GPU, when no cell is a general
/// polyhedron, built there by count, scan and fill and left there
/// (`ResidentMesh::from_cells`: the same mesh as
/// `VolumeMesh::from_cells`, numbered alike); else by
/// `VolumeMesh::from_cells` on the host (in parallel).
///
/// # Errors
/// As `VolumeMesh::from_cells`, naming the file; a failed launch or copy.
fn operators<'a>(
    backend: &'a Backend,
    mesh: &CellMesh,
    path: &Path,
    clock: &mut Clock,
) -> Result<Operators<'a>> {
    let polyhedra = mesh
        .cells
        .par_iter()
        .any(|c| matches!(c, CellVertices::Polyhedron(_)));
    let built = match backend {
        Backend::Cuda(_) if !polyhedra => {
            ResidentMesh::from_cells(backend, &mesh.positions, &mesh.cells)
                .map(|r| Operators::Resident(Box::new(r)))
        }
        _ => VolumeMesh::from_cells(mesh.positions.clone(), &mesh.cells).map(Operators::Host),
    };
    let built = built.map_err(in_file(path))?;
    match built {
        Operators::Resident(_) => clock.device("operators", backend),
        Operators::Host(_) => clock.host("operators"),
    };
    Ok(built)
}

/// The validity setting of `--plain`.
fn validity(plain: bool) -> Validity {
    if plain {
        Validity::Plain
    } else {
        Validity::Keep
    }
}

/// "-0.1234, 12 inverted" for a quality, with the dihedral angle for
/// tetrahedra.
fn describe(q: &Quality) -> String {
    let dihedral = q
        .min_dihedral_angle
        .map(|a| format!("min dihedral angle {}°, ", significant(a)))
        .unwrap_or_default();
    format!(
        "{dihedral}min scaled Jacobian {}, {} inverted of {} cells",
        significant(q.min_scaled_jacobian),
        q.inverted,
        q.cells
    )
}

/// `x` with four significant digits (`0.1234`, `-2.345e-5`).
fn significant(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        format!("{x}")
    } else if (1e-3..1e4).contains(&x.abs()) {
        let digits = (3 - x.abs().log10().floor() as i32).max(0) as usize;
        format!("{x:.digits$}")
    } else {
        format!("{x:.3e}")
    }
}

/// The files of a volumetric mesh path (both of a TetGen pair).
fn files(path: &Path) -> Vec<PathBuf> {
    match VolumeFormat::of(path) {
        Ok(VolumeFormat::TetGen) => vec![path.with_extension("node"), path.with_extension("ele")],
        _ => vec![path.to_path_buf()],
    }
}

/// Errors before any work when writing `output` would replace a file of
/// `input` (each file of a TetGen pair against each), or when an output file
/// cannot be written (missing directory, read-only file).
fn refuse_overwrite(input: &Path, output: &Path) -> Result<()> {
    for o in files(output) {
        cavity::io::check_writable_file(&o)?;
        for i in files(input) {
            crate::output::refuse_overwrite(Some(&i), &o)?;
        }
    }
    Ok(())
}

pub(crate) fn info(path: &Path, device: Device) -> Result<()> {
    let mut clock = Clock::start();
    let (cells, q, backend) = load_on(path, device, &mut clock)?;
    let mut mesh = operators(&backend, &cells, path, &mut clock)?.into_resident(&backend)?;
    let Boundary {
        faces,
        edges,
        vertices,
    } = mesh.boundary()?;
    clock.device("boundary", &backend);
    clock.read_peak(&backend);
    let [v, e, f, c] = mesh.counts();
    sayln!(
        "{}: {v} vertices, {e} edges, {f} faces, {c} cells",
        path.display()
    );
    let types: Vec<CellType> = cells
        .cells
        .par_iter()
        .map(CellVertices::cell_type)
        .collect();
    for ty in [
        CellType::Tetrahedron,
        CellType::Hexahedron,
        CellType::Prism,
        CellType::Pyramid,
        CellType::Polyhedron,
    ] {
        let n = types.iter().filter(|&&t| t == ty).count();
        if n > 0 {
            sayln!("  {ty:?}: {n}");
        }
    }
    sayln!(
        "boundary: {} faces, {} edges, {} vertices",
        faces.len(),
        edges.len(),
        vertices.len()
    );
    sayln!("quality: {}", describe(&q));
    sayln!(
        "memory: {} bytes ({:.1} per cell: positions, ∂1 pairs, ∂2 and ∂3 in ternary CSR)",
        mesh.bytes(),
        mesh.bytes() as f64 / c.max(1) as f64
    );
    sayln!("{}", clock.line());
    Ok(())
}

pub(crate) fn boundary_surface(input: &Path, output: &Path, device: Device) -> Result<()> {
    let mut clock = Clock::start();
    let format = check_writable(output)?;
    let (mesh, _, backend) = load_on(input, device, &mut clock)?;
    let mut resident = operators(&backend, &mesh, input, &mut clock)?.into_resident(&backend)?;
    let (b, offsets, loops) = resident.boundary_loops()?;
    let seconds = clock.device("boundary", &backend);
    clock.read_peak(&backend);
    let mut id = vec![u32::MAX; mesh.positions.len()];
    let mut surface = TriMesh {
        positions: Vec::with_capacity(b.vertices.len()),
        faces: Vec::new(),
    };
    for (i, &v) in b.vertices.iter().enumerate() {
        id[v as usize] = i as u32;
        surface.positions.push(mesh.positions[v as usize]);
    }
    // Each outward loop as a fan of triangles.
    for w in offsets.windows(2) {
        let corners: Vec<u32> = loops[w[0] as usize..w[1] as usize]
            .iter()
            .map(|&v| id[v as usize])
            .collect();
        for k in 1..corners.len() - 1 {
            surface.faces.push([corners[0], corners[k], corners[k + 1]]);
        }
    }
    clock.host("surface");
    write_mesh(output, &surface, None, format)?;
    clock.host("write");
    sayln!(
        "boundary of {}: {} faces ({} triangles), {} vertices, in {:.3} ms on {}; wrote {}",
        input.display(),
        b.faces.len(),
        surface.faces.len(),
        b.vertices.len(),
        seconds * 1e3,
        backend.name(),
        output.display()
    );
    sayln!("{}", clock.line());
    Ok(())
}

pub(crate) fn smooth_inner(
    input: &Path,
    output: &Path,
    iterations: u32,
    plain: bool,
    device: Device,
    options: WriteOptions,
) -> Result<()> {
    let mut clock = Clock::start();
    VolumeFormat::of(output)?;
    check_count(setting::ITERATIONS, iterations)?;
    refuse_overwrite(input, output)?;
    let (mesh, _, backend) = load_on(input, device, &mut clock)?;
    let mut resident = operators(&backend, &mesh, input, &mut clock)?.into_resident(&backend)?;
    let (positions, report) =
        resident.smooth_valid(&mesh.positions, &mesh.cells, iterations, validity(plain))?;
    let cells = mesh.cells;
    let seconds = clock.device("smoothing", &backend);
    clock.read_peak(&backend);
    write_volume_with(output, &CellMesh { positions, cells }, options)?;
    clock.host("write");
    sayln!(
        "smoothed the inner vertices of {} by {iterations} Laplacian step(s) in {:.3} ms on {} (with the boundary and the transposes; validity checked on the host); wrote {}",
        input.display(),
        seconds * 1e3,
        backend.name(),
        output.display()
    );
    sayln!("before: {}", describe(&report.before));
    sayln!("after:  {}", describe(&report.after));
    if plain {
        sayln!(
            "plain steps (--plain): {} cells inverted",
            report.plain_inverted
        );
    } else {
        sayln!(
            "kept valid: the plain steps would have inverted {} cell(s) (summed over the steps); {} vertex move(s) cut short (a step may not invert a cell, nor lower its scaled Jacobian below {} or its value before the step)",
            report.plain_inverted,
            report.relaxed_moves,
            cavity_volume::boundary::SMOOTHING_FLOOR
        );
    }
    sayln!("{}", clock.line());
    Ok(())
}

pub(crate) fn subdivide(
    input: &Path,
    output: &Path,
    levels: u32,
    plain: bool,
    device: Device,
    options: WriteOptions,
) -> Result<()> {
    let mut clock = Clock::start();
    VolumeFormat::of(output)?;
    check_count(setting::LEVELS, levels)?;
    refuse_overwrite(input, output)?;
    let (cells, _, backend) = load_on(input, device, &mut clock)?;
    let mesh = operators(&backend, &cells, input, &mut clock)?.into_host()?;
    drop(cells);
    let estimate = plan(&mesh, levels, &backend)?;
    estimate.check(
        levels,
        cavity::memory::available_host_bytes(),
        backend.free_device_memory().ok().flatten(),
    )?;
    let pb = spinner();
    let subdivided = subdivide_valid(&backend, &mesh, levels, validity(plain), |level| {
        pb.set_message(format!("subdividing level {level} of {levels}"))
    })?;
    clock.device(
        "levels (uploads, relations and downloads included)",
        &backend,
    );
    clock.read_peak(&backend);
    write_volume_with(
        output,
        &CellMesh {
            positions: subdivided.mesh.positions().to_vec(),
            cells: subdivided.cells,
        },
        options,
    )?;
    clock.host("write");
    pb.finish_and_clear();
    let [v, e, f, c] = subdivided.mesh.counts();
    sayln!(
        "subdivided {} by {levels} Catmull-Clark level(s) on {}: {v} vertices, {e} edges, {f} faces, {c} cells",
        input.display(),
        backend.name()
    );
    sayln!(
        "memory estimated before the work: {} on the host, {} on the device",
        cavity::units::bytes(estimate.host_bytes),
        cavity::units::bytes(estimate.device_bytes)
    );
    for r in &subdivided.levels {
        let q = &r.quality;
        let kept = if plain {
            format!("plain rules (--plain): {}", describe(q))
        } else {
            format!(
                "plain rules would invert {}; kept valid: {} ({} vertices relaxed towards the linear split in {} round(s), {} at it)",
                r.plain_inverted,
                describe(q),
                r.relaxation.relaxed_vertices,
                r.relaxation.rounds,
                r.relaxation.fallback_vertices
            )
        };
        sayln!(
            "level {}: {kept}; subdivision {:.3} s, validity pass {:.3} s (host)",
            r.level,
            r.subdivision_seconds,
            r.validity_seconds
        );
        if !plain && q.inverted > 0 {
            eprintln!(
                "warning: level {}: {} cell(s) stay inverted, the first cell {} (from 0): their cells of the linear split are not valid either (flat or strongly distorted cells of the level before)",
                r.level,
                q.inverted,
                q.first_inverted.unwrap_or(0)
            );
        }
    }
    sayln!("wrote {}", output.display());
    sayln!("{}", clock.line());
    Ok(())
}

pub(crate) fn convert(input: &Path, output: &Path, options: WriteOptions) -> Result<()> {
    let mut clock = Clock::start();
    VolumeFormat::of(output)?;
    // Each cell checked on its own: a conversion numbers no faces or
    // edges, so it builds no operators.
    let (mesh, _) = read_checked(input)?;
    clock.host("read");
    refuse_overwrite(input, output)?;
    write_volume_with(output, &mesh, options)?;
    clock.host("write");
    sayln!(
        "{}: {} vertices, {} cells; wrote {}",
        input.display(),
        mesh.positions.len(),
        mesh.cells.len(),
        output.display(),
    );
    sayln!("{}", clock.line());
    Ok(())
}

/// `cavity bench tet`: each mesh's operations on the GPU (when `device`
/// gives one), the CPU backend and serially.
pub(crate) fn bench(meshes: &[PathBuf], reps: usize, device: Device) -> Result<()> {
    let gpu = backend(device)?;
    let cpu = Backend::Cpu(CpuBackend::new());
    for path in meshes {
        let (CellMesh { positions, cells }, _) = read_checked(path)?;
        let mesh = VolumeMesh::from_cells(positions, &cells).map_err(in_file(path))?;
        let pb = spinner();
        let bench = cavity_volume::bench::tet_bench(
            &path.display().to_string(),
            &mesh,
            &gpu,
            &cpu,
            reps,
            |m| pb.set_message(m.to_string()),
        )?;
        pb.finish_and_clear();
        say!("{}\n", bench.table());
    }
    Ok(())
}

/// `cavity bench tet-simplify`: each mesh reduced by every variant of the
/// collapse (`cavity_tet_collapse::bench`), and by the CPU peers when
/// `settings` has them.
pub(crate) fn bench_simplify(
    meshes: &[PathBuf],
    device: Device,
    settings: &cavity_tet_collapse::bench::TetSimplifySettings,
) -> Result<()> {
    let gpu = backend(device)?;
    let cpu = Backend::Cpu(CpuBackend::new());
    for path in meshes {
        let (mesh, _) = read_tetrahedra(path)?;
        let pb = spinner();
        let bench = cavity_tet_collapse::bench::tet_simplify_bench(
            &path.display().to_string(),
            &mesh,
            &gpu,
            &cpu,
            settings,
            |m| pb.set_message(m.to_string()),
        )
        .map_err(in_file(path))?;
        pb.finish_and_clear();
        say!("{}\n", bench.table());
    }
    Ok(())
}

/// The settings of `cavity tet simplify` from its options: at most one
/// of `ratio`, `cells`, `length` (clap refuses two) as the target.
///
/// # Errors
/// `--max-error` with another criterion than the field criterion.
pub(crate) fn simplify_settings(
    target: [Option<f64>; 2],
    cells: Option<usize>,
    criterion: CriterionArg,
    max_error: Option<f64>,
    placement: PlacementArg,
    (epsilon_c, conflicts): (usize, ConflictsArg),
) -> Result<SimplifySettings> {
    let [ratio, length] = target;
    let target = match (ratio, cells, length) {
        (Some(r), _, _) => Some(Target::Ratio(r)),
        (_, Some(n), _) => Some(Target::Cells(n)),
        (_, _, Some(l)) => Some(Target::Length(l)),
        _ => None,
    };
    if max_error.is_some() && criterion != CriterionArg::Field {
        return Err(
            "--max-error is the field criterion's bound: add --criterion field, or leave it out"
                .into(),
        );
    }
    Ok(SimplifySettings {
        target,
        criterion: match criterion {
            CriterionArg::Length => Criterion::Length,
            CriterionArg::Field => Criterion::Field { max_error },
            CriterionArg::Quality => Criterion::Quality,
        },
        placement: match placement {
            PlacementArg::Midpoint => Placement::Midpoint,
            PlacementArg::Endpoint => Placement::Endpoint,
        },
        settings: Settings {
            epsilon_c,
            conflicts: match conflicts {
                ConflictsArg::TwoPass => Conflicts::TwoPass,
                ConflictsArg::Gautron => Conflicts::Gautron,
                ConflictsArg::Greedy => Conflicts::Greedy,
            },
            ..Settings::default()
        },
    })
}

/// The tetrahedral mesh at `path` for the collapse, and its fields: every
/// cell a tetrahedron (else an error naming the file and the cell), those
/// listed inside out turned outward with a warning (their number and the
/// first), then checked as section 4.1 checks an output
/// (`checks::check_valid` at ratio 0: a flat tetrahedron, a face of
/// three tetrahedra, two overlapping ones or two vertices at one position
/// are errors naming the element); a boundary that is not a manifold
/// gets a warning.
fn read_tetrahedra(path: &Path) -> Result<(TetMesh, Vec<PointField>)> {
    let (cells, fields) = read_volume_fields(path)?;
    if cells.cells.is_empty() {
        return Err(format!(
            "{}: no cells ({} vertices): the collapse needs at least one tetrahedron",
            path.display(),
            cells.positions.len()
        )
        .into());
    }
    let inside_out: Vec<usize> = cells
        .cells
        .par_iter()
        .enumerate()
        .filter_map(|(i, c)| match c {
            CellVertices::Tetrahedron(t)
                if t.iter().all(|&v| (v as usize) < cells.positions.len())
                    && signed_volume(&cells.positions, *t) < 0.0 =>
            {
                Some(i)
            }
            _ => None,
        })
        .collect();
    let total = cells.cells.len();
    let mesh = TetMesh::from_cells(cells).map_err(in_file(path))?;
    if let Some(first) = inside_out.first() {
        eprintln!(
            "warning: {}: {} of {total} tetrahedra are listed inside out (negative volume), the first tetrahedron {first} (from 0): turned outward",
            path.display(),
            inside_out.len()
        );
    }
    check_valid(&mesh, 0.0).map_err(|e| {
        format!(
            "{}: {e}: the collapse needs a valid tetrahedral mesh (fix or remove that element)",
            path.display()
        )
    })?;
    let topology = checks::boundary_surface(&mesh).topology();
    let pinched = topology.components.iter().filter(|c| !c.manifold).count();
    if pinched > 0 {
        eprintln!(
            "warning: {}: the boundary is not a manifold in {pinched} of its {} component(s) (parts touching at an edge or a vertex): the collapse keeps such places as features",
            path.display(),
            topology.components.len()
        );
    }
    Ok((mesh, fields))
}

/// The field of `fields` that `cavity tet simplify` carries: the one
/// named `name`, else the file's only field; none when the file has
/// several and none is named (the field criterion needs one).
///
/// # Errors
/// A named field the file lacks (naming those it has); the field
/// criterion without a field, or with several and none named.
fn choose_field(
    path: &Path,
    fields: Vec<PointField>,
    name: Option<&str>,
    needed: bool,
) -> Result<Option<PointField>> {
    let names = || {
        fields
            .iter()
            .map(|f| format!("{:?}", f.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let none = "it has no per-vertex scalar field (VTK POINT_DATA SCALARS and Gmsh $NodeData views of one component are read)";
    match name {
        Some(n) => match fields.iter().position(|f| f.name == n) {
            Some(i) => Ok(fields.into_iter().nth(i)),
            None if fields.is_empty() => {
                Err(format!("{}: no field {n:?}: {none}", path.display()).into())
            }
            None => Err(format!(
                "{}: no field {n:?}; its per-vertex fields: {}",
                path.display(),
                names()
            )
            .into()),
        },
        None if fields.len() == 1 => Ok(fields.into_iter().next()),
        None if needed && fields.is_empty() => Err(format!(
            "{}: the field criterion needs a per-vertex field, and {none}",
            path.display()
        )
        .into()),
        None if needed => Err(format!(
            "{}: several per-vertex fields ({}): choose one with --field",
            path.display(),
            names()
        )
        .into()),
        None => {
            if !fields.is_empty() {
                eprintln!(
                    "note: {}: several per-vertex fields ({}): none is carried; --field NAME carries one",
                    path.display(),
                    names()
                );
            }
            Ok(None)
        }
    }
}

/// `cavity tet simplify`: the tetrahedral mesh at `input` simplified
/// towards `settings.target` (`cavity_tet_collapse::simplify`) on
/// `device`, written to `output` with the carried field (`field`, see
/// [`choose_field`]) where its format holds one.
pub(crate) fn simplify(
    input: &Path,
    output: &Path,
    settings: &SimplifySettings,
    field: Option<&str>,
    device: Device,
    options: WriteOptions,
) -> Result<()> {
    let mut clock = Clock::start();
    let format = VolumeFormat::of(output)?;
    let (mesh, fields) = read_tetrahedra(input)?;
    clock.host("read");
    refuse_overwrite(input, output)?;
    let needed = matches!(settings.criterion, Criterion::Field { .. });
    let mut field = choose_field(input, fields, field, needed)?;
    let values = field.as_ref().map_or(&[][..], |f| &f.values[..]);
    settings.check(mesh.positions.len(), values)?;
    let backend = backend(device)?;
    clock.host("start");
    let pb = spinner();
    pb.set_message(format!(
        "collapsing edges of {} tetrahedra on {}",
        mesh.tets.len(),
        backend.name()
    ));
    let out = cavity_tet_collapse::simplify(&backend, &mesh, values, settings)?;
    clock.device("simplify", &backend);
    let r = &out.report;
    let collapse = r.candidate_seconds + r.conflict_seconds + r.apply_seconds;
    clock.part("of which operators", r.build_seconds);
    clock.part("collapse", collapse);
    clock.part("rebuild", r.rebuild_seconds - r.build_seconds);
    clock.read_peak(&backend);
    pb.finish_and_clear();
    if let Some(f) = &mut field {
        f.values.clone_from(&out.values);
    }
    if field.is_some() && !format.holds_point_fields() {
        eprintln!(
            "warning: {}: its format holds no per-vertex field: the field is not written (write .vtk or .msh to keep it)",
            output.display()
        );
        field = None;
    }
    write_volume_field(output, &out.mesh.to_cells(), field.as_ref(), options)?;
    clock.host("write");
    let band = out.length;
    // The quality on the device, the boundary's Hausdorff distance on the
    // host beside it.
    let (measured, distance) = std::thread::scope(|scope| {
        let distance = scope.spawn(|| {
            hausdorff(
                &checks::boundary_surface(&mesh),
                &mesh.positions,
                &checks::boundary_surface(&out.mesh),
                &out.mesh.positions,
            )
        });
        let start = Instant::now();
        let measured =
            cavity_tet_collapse::quality::quality_on(&backend, &mesh, band).and_then(|before| {
                let after = cavity_tet_collapse::quality::quality_on(&backend, &out.mesh, band)?;
                Ok((before, after, start.elapsed().as_secs_f64()))
            });
        (
            measured,
            distance.join().expect("the Hausdorff distance's thread"),
        )
    });
    let (before, after, seconds) = measured?;
    let diagonal = diagonal(&mesh);
    clock.beside("quality", seconds, "Hausdorff distance");
    sayln!(
        "simplified {} on {}: {} vertices, {} tetrahedra -> {} vertices, {} tetrahedra",
        input.display(),
        r.device,
        before.vertices,
        before.cells,
        after.vertices,
        after.cells
    );
    let criterion = match (settings.criterion, out.length, out.max_error) {
        (Criterion::Length, Some(l), _) => format!("length, L = {} model units", significant(l)),
        (Criterion::Field { .. }, _, Some(e)) => format!(
            "field {:?}, largest error {}",
            field.as_ref().map_or("", |f| f.name.as_str()),
            significant(e)
        ),
        _ => "quality (harmonic index)".to_string(),
    };
    let collapses: Vec<String> = r
        .iterations
        .iter()
        .map(|i| i.collapses.to_string())
        .collect();
    sayln!(
        "criterion {criterion}; {} round(s), {} iteration(s), collapses per iteration: {}",
        out.rounds,
        r.iterations.len(),
        collapses.join(" ")
    );
    sayln!(
        "operators {:.3} s (the input's stars, boundary and edges), rebuild {:.3} s (theirs after every later iteration), collapse {collapse:.3} s (candidates {:.3} s, conflicts {:.3} s in {} round(s), apply {:.3} s)",
        r.build_seconds,
        r.rebuild_seconds - r.build_seconds,
        r.candidate_seconds,
        r.conflict_seconds,
        r.conflict_rounds,
        r.apply_seconds,
    );
    say!(
        "{}",
        quality_table(&[("input", &before), ("output", &after)])
    );
    sayln!(
        "boundary Hausdorff distance: {} of the bounding box diagonal ({} model units)",
        significant(distance / diagonal),
        significant(distance)
    );
    let reached = match (out.target_cells, out.reached) {
        (Some(n), true) => format!("target of at most {n} tetrahedra reached"),
        (Some(n), false) if matches!(settings.criterion, Criterion::Quality) => format!(
            "target of at most {n} tetrahedra not reached: {} are left, where no collapse improves the quality",
            after.cells
        ),
        (Some(n), false) => format!(
            "target of at most {n} tetrahedra not reached: {} are left, where no collapse is admissible at the criterion's largest bound (the box diagonal or the field's span)",
            after.cells
        ),
        (None, true) => "converged (no more admissible collapses)".to_string(),
        (None, false) => "stopped at the iteration limit before converging".to_string(),
    };
    sayln!(
        "{reached}; wrote {}{}",
        output.display(),
        field
            .as_ref()
            .map_or(String::new(), |f| format!(" with the field {:?}", f.name))
    );
    sayln!("{}", clock.line());
    Ok(())
}

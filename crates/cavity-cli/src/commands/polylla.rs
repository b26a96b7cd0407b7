//! `cavity polylla`: Polylla polygonal meshes (`cavity-polylla`) from a
//! triangulation (Triangle's `.node`/`.ele`, 2D OFF; a `.node` alone is
//! triangulated) or a generated one (`--random N`, `--grid N`), written as
//! OFF or PLY polygons or an SVG picture (by the output's extension) and
//! optionally an SVG picture beside; and `cavity bench polylla`. Every
//! output's name, format and directory are checked, and a generated
//! input's size against the memory it needs, before any work.

use std::path::{Path, PathBuf};

use cavity::backend::Backend;
use cavity::backend::cpu::CpuBackend;
use cavity::io::same_file;
use cavity_polylla::bench::{polylla_bench_row, polylla_table};
use cavity_polylla::blocks::blocks_for;
use cavity_polylla::device::{polygon_lists, polylla};
use cavity_polylla::generate::{delaunay_half_edges, grid_points, random_points};
use cavity_polylla::io::{
    PolygonFormat, read_node, read_triangulation, write_off, write_ply, write_svg,
};
use cavity_polylla::lists::PolygonLists;
use cavity_polylla::{HalfEdges, Polylla, PolyllaError, Triangulation};

use crate::Result;
use crate::args::Device;
use crate::device::backend;
use crate::output::{say, sayln, spinner};
use crate::stages::Clock;

/// Where the triangulation comes from.
pub(crate) enum Source {
    /// A file.
    File(PathBuf),
    /// `n` random points in the unit square, seeded.
    Random(usize, u64),
    /// An `n × n` grid.
    Grid(usize),
}

/// The half-edges of `source`'s triangulation, and how it was made.
/// Errors about a file's content name the file.
fn half_edges(source: &Source) -> std::result::Result<(HalfEdges, String), PolyllaError> {
    let in_file = |path: &Path, e: PolyllaError| match e {
        PolyllaError::Input(m) => PolyllaError::Input(format!("{}: {m}", path.display())),
        e => e,
    };
    Ok(match source {
        Source::File(path) => {
            let is_node = path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("node"));
            if is_node && !path.with_extension("ele").exists() {
                let (points, _) = read_node(path)?;
                let n = points.len();
                (
                    delaunay_half_edges(&points).map_err(|e| in_file(path, e))?,
                    format!("{} ({n} points, {})", path.display(), delaunay_by(n)),
                )
            } else {
                let Triangulation {
                    positions,
                    triangles,
                    neighbours,
                } = read_triangulation(path)?;
                (
                    HalfEdges::from_triangles_with(positions, &triangles, neighbours.as_deref())
                        .map_err(|e| in_file(path, e))?,
                    path.display().to_string(),
                )
            }
        }
        Source::Random(n, seed) => (
            delaunay_half_edges(&random_points(*n, *seed))?,
            format!("{n} random points (seed {seed}), {}", delaunay_by(*n)),
        ),
        Source::Grid(n) => (
            delaunay_half_edges(&grid_points(*n))?,
            format!("{n} x {n} grid, {}", delaunay_by(n * n)),
        ),
    })
}

/// How the Delaunay triangulation of `n` points is made, in words.
fn delaunay_by(n: usize) -> String {
    match blocks_for(n) {
        [1, 1] => "Delaunay by spade".into(),
        [c, r] => format!("Delaunay by spade in {c} x {r} blocks in parallel"),
    }
}

/// Host bytes per generated point at the peak of a run (the points,
/// spade's triangulation, the half-edges, the CPU backend's arrays, the
/// result and its text; 402 measured at a million random points, the
/// maximum resident size of `cavity polylla --random 1000000 --device
/// cpu`, rounded up).
const HOST_BYTES_PER_POINT: u64 = 450;

/// Device bytes per point on the GPU: about six half-edges a point, a
/// word each of `origin`, `twin`, the polygons' `next` and `prev` and
/// each half-edge's polygon id, plus the positions and a vertex's
/// half-edge (`cavity_polylla::device::polylla`; the labels, bits and
/// scans add under 2 %). Printed with the host's estimate; the GPU's own
/// limit is the allocation's error.
const DEVICE_BYTES_PER_POINT: u64 = 6 * 4 * 5 + 16 + 4;

/// The most points a run takes: the kernels index half-edges (about six a
/// point) with 32 bits, at most `2³² / 4` of them.
const MAX_POINTS: u64 = (u32::MAX as u64 / 4) / 6;

/// Refuses a generated input too small to hold a triangle, or too large
/// for the kernels' indices or the host's memory, naming the setting, the
/// points and the memory it would take (host, and the GPU's).
fn check_size(source: &Source, on_gpu: bool) -> Result<()> {
    let (setting, n, points, least) = match *source {
        Source::File(_) => return Ok(()),
        Source::Random(n, _) => ("--random", n, n as u64, 3),
        Source::Grid(n) => ("--grid", n, (n as u64).saturating_mul(n as u64), 2),
    };
    if n < least {
        return Err(format!(
            "{setting} {n}: Polylla needs a triangle, at least {least}{}",
            if least == 2 {
                " (2 x 2 points)"
            } else {
                " points"
            }
        )
        .into());
    }
    let gb = |bytes: u64| bytes as f64 / 1e9;
    let host = points.saturating_mul(HOST_BYTES_PER_POINT);
    let device = points.saturating_mul(DEVICE_BYTES_PER_POINT);
    let need = format!(
        "{setting} {n}: {points} points would take about {:.1} GB of host memory{}",
        gb(host),
        if on_gpu {
            format!(" and {:.1} GB on the GPU", gb(device))
        } else {
            String::new()
        }
    );
    let most = |limit: u64| match source {
        Source::Grid(_) => (limit as f64).sqrt() as u64,
        _ => limit,
    };
    if points > MAX_POINTS {
        return Err(format!(
            "{need}, past the {MAX_POINTS} points the kernels' 32-bit indices reach: lower {setting} (at most {})",
            most(MAX_POINTS)
        )
        .into());
    }
    if let Some(free) = cavity::memory::available_host_bytes()
        && host > free
    {
        return Err(format!(
            "{need}, more than the {:.1} GB available: lower {setting} (at most about {})",
            gb(free),
            most(free / HOST_BYTES_PER_POINT)
        )
        .into());
    }
    Ok(())
}

/// Checks an output before any work: a format Polylla writes, not the
/// input nor another output, and writable ([`cavity::io::check_writable_file`]:
/// its directory exists and takes a new file, no read-only file there).
fn check_output(path: &Path, input: Option<&Path>, other: Option<&Path>) -> Result<PolygonFormat> {
    let format = PolygonFormat::from_path(path)?;
    crate::output::refuse_overwrite(input, path)?;
    if let Some(input) = input {
        let pair = [input.with_extension("node"), input.with_extension("ele")];
        let is_pair = input
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("node") || e.eq_ignore_ascii_case("ele"));
        if is_pair && pair.iter().any(|p| p.exists() && same_file(p, path)) {
            return Err(format!(
                "refusing to overwrite the input {}: choose another output",
                path.display()
            )
            .into());
        }
    }
    if let Some(other) = other
        && (path == other || same_file(path, other))
    {
        return Err(format!(
            "{} is named for two outputs: choose another name for one",
            path.display()
        )
        .into());
    }
    cavity::io::check_writable_file(path)?;
    Ok(format)
}

/// A writer of a polygon file from vertex lists.
type ListsWriter = fn(&Path, &HalfEdges, &PolygonLists) -> std::result::Result<(), PolyllaError>;

/// What a run made: the polygons' vertex lists with their file's writer,
/// or their links and labels (for a picture).
enum Made {
    Lists(PolygonLists, ListsWriter),
    Links(Polylla),
}

pub(crate) fn polylla_command(
    source: &Source,
    output: &Path,
    svg: Option<&Path>,
    device: Device,
) -> Result<()> {
    let mut clock = Clock::start();
    let input = match source {
        Source::File(path) => Some(path.as_path()),
        _ => None,
    };
    let format = check_output(output, input, svg)?;
    if let Some(svg) = svg {
        if PolygonFormat::from_path(svg)? != PolygonFormat::Svg {
            return Err(format!(
                "--svg {}: the picture's name must end in .svg",
                svg.display()
            )
            .into());
        }
        check_output(svg, input, Some(output))?;
    }
    check_size(source, !matches!(device, Device::Cpu | Device::CpuRacing))?;
    let backend = backend(device)?;
    // Pinned while the host triangulates: the half-edges' gigabytes cross
    // faster through larger pieces.
    backend.stage_larger();
    clock.host("start");
    let pb = spinner();
    pb.set_message("reading and triangulating");
    let (mesh, what) = half_edges(source)?;
    clock.host("triangulation and half-edges");
    pb.set_message("Polylla");
    // The polygons' links and labels are copied back only for a picture;
    // the polygon files take the vertex lists, gathered on the device.
    let write_lists: Option<ListsWriter> = match (format, svg) {
        (PolygonFormat::Off, None) => Some(write_off::<PolygonLists>),
        (PolygonFormat::Ply, None) => Some(write_ply::<PolygonLists>),
        _ => None,
    };
    let (made, timings) = match write_lists {
        Some(write) => {
            let (lists, timings) = polygon_lists(&backend, &mesh)?;
            (Made::Lists(lists, write), timings)
        }
        None => {
            let (poly, timings) = polylla(&backend, &mesh)?;
            (Made::Links(poly), timings)
        }
    };
    clock.device("Polylla", &backend);
    clock.part("of which kernels", timings.kernels() / 1e3);
    clock.read_peak(&backend);
    pb.set_message("writing");
    let (count, repaired, bridges) = match &made {
        Made::Lists(lists, write) => {
            write(output, &mesh, lists)?;
            (lists.len(), lists.repaired, lists.bridges)
        }
        Made::Links(poly) => {
            format.write(output, &mesh, poly)?;
            if let Some(svg) = svg {
                write_svg(svg, &mesh, poly)?;
            }
            (poly.polygons.len(), poly.repaired, poly.bridges)
        }
    };
    clock.host("write");
    pb.finish_and_clear();
    sayln!(
        "{what}: {} vertices, {} triangles -> {count} polygons, {repaired} barrier tips repaired, {bridges} barrier edges split, on {}",
        mesh.positions.len(),
        mesh.triangles(),
        backend.name()
    );
    say!("steps (ms):");
    for (name, ms) in &timings.steps {
        say!(" {name} {ms:.3};");
    }
    sayln!(
        " kernels {:.3}, with copies {:.3}",
        timings.kernels(),
        timings.total()
    );
    sayln!(
        "wrote {}{}",
        output.display(),
        svg.map_or(String::new(), |s| format!(" and {}", s.display()))
    );
    sayln!("{}", clock.line());
    Ok(())
}

/// `cavity bench polylla`: random and grid triangulations of each size.
pub(crate) fn bench(random: &[usize], grid: &[usize], reps: usize, device: Device) -> Result<()> {
    let gpu = backend(device)?;
    gpu.stage_larger();
    let cpu = Backend::Cpu(CpuBackend::new());
    let mut rows = Vec::new();
    let pb = spinner();
    let inputs = random
        .iter()
        .map(|&n| Source::Random(n, 1))
        .chain(grid.iter().map(|&n| Source::Grid(n)));
    for source in inputs {
        let (mesh, what) = half_edges(&source)?;
        pb.set_message(what.clone());
        rows.push(polylla_bench_row(&what, &mesh, &gpu, &cpu, reps)?);
    }
    pb.finish_and_clear();
    say!("{}", polylla_table(&rows, &gpu, &cpu));
    Ok(())
}

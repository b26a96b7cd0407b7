//! `cavity polylla`: Polylla polygonal meshes (`cavity-polylla`) from a
//! triangulation (Triangle's `.node`/`.ele`, 2D OFF; a `.node` alone is
//! triangulated) or a generated one (`--random N`, `--grid N`), written as
//! OFF polygons and optionally an SVG picture; and `cavity bench polylla`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use cavity::backend::Backend;
use cavity::backend::cpu::CpuBackend;
use cavity_polylla::bench::{polylla_bench_row, polylla_table};
use cavity_polylla::device::polylla;
use cavity_polylla::generate::{delaunay_half_edges, grid_points, random_points};
use cavity_polylla::io::{read_node, read_triangulation, write_off, write_svg};
use cavity_polylla::{HalfEdges, PolyllaError, Triangulation};

use crate::Result;
use crate::args::Device;
use crate::device::backend;
use crate::output::{say, sayln, spinner};

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
fn half_edges(source: &Source) -> std::result::Result<(HalfEdges, String), PolyllaError> {
    Ok(match source {
        Source::File(path) => {
            let is_node = path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("node"));
            if is_node && !path.with_extension("ele").exists() {
                let (points, _) = read_node(path)?;
                let n = points.len();
                (
                    delaunay_half_edges(&points)?,
                    format!("{} ({n} points, Delaunay by spade)", path.display()),
                )
            } else {
                let Triangulation {
                    positions,
                    triangles,
                    neighbours,
                } = read_triangulation(path)?;
                (
                    HalfEdges::from_triangles_with(positions, &triangles, neighbours.as_deref())?,
                    path.display().to_string(),
                )
            }
        }
        Source::Random(n, seed) => (
            delaunay_half_edges(&random_points(*n, *seed))?,
            format!("{n} random points (seed {seed}), Delaunay"),
        ),
        Source::Grid(n) => (
            delaunay_half_edges(&grid_points(*n))?,
            format!("{n} x {n} grid, Delaunay"),
        ),
    })
}

pub(crate) fn polylla_command(
    source: &Source,
    output: &Path,
    svg: Option<&Path>,
    device: Device,
) -> Result<()> {
    if let Source::File(input) = source {
        crate::output::refuse_overwrite(Some(input), output)?;
    }
    let backend = backend(device)?;
    let pb = spinner();
    pb.set_message("reading and triangulating");
    let t = Instant::now();
    let (mesh, what) = half_edges(source)?;
    let read = t.elapsed().as_secs_f64();
    pb.set_message("Polylla");
    let t = Instant::now();
    let (poly, timings) = polylla(&backend, &mesh)?;
    let run = t.elapsed().as_secs_f64();
    pb.set_message("writing");
    let t = Instant::now();
    write_off(output, &mesh, &poly)?;
    if let Some(svg) = svg {
        write_svg(svg, &mesh, &poly)?;
    }
    let write = t.elapsed().as_secs_f64();
    pb.finish_and_clear();
    sayln!(
        "{what}: {} vertices, {} triangles -> {} polygons, {} barrier tips repaired, on {}",
        mesh.positions.len(),
        mesh.triangles(),
        poly.polygons.len(),
        poly.repaired,
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
        "triangulation and half-edges {read:.3} s, Polylla {run:.3} s, write {write:.3} s; wrote {}{}",
        output.display(),
        svg.map_or(String::new(), |s| format!(" and {}", s.display()))
    );
    Ok(())
}

/// `cavity bench polylla`: random and grid triangulations of each size.
pub(crate) fn bench(random: &[usize], grid: &[usize], reps: usize, device: Device) -> Result<()> {
    let gpu = backend(device)?;
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

//! `cavity bench`: the query, remeshing, surface-tracking, Delaunay and
//! mean-curvature-flow benchmarks.

use std::path::{Path, PathBuf};

use cavity::TriMesh;
use cavity::backend::Backend;
use cavity_track::TrackSettings;

use crate::device::backend;
use crate::input::{BUNDLED_NAME, load, load_input};
use crate::output::{say, spinner};
use crate::{Common, DYNAMIC_PATCH_SIZE, Device, DynamicArgs, Result};

pub(crate) fn bench_queries(
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
    let bench = cavity_bench::queries(&mesh, common.patch_size, &backend, reps, |m| {
        pb.set_message(m.to_string())
    })?;
    pb.finish_and_clear();
    say!("{}", bench.table());
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

/// Runs a benchmark on each mesh of `paths` (or the bundled one) at each
/// subdivision level on the `device`'s backend, with a spinner showing
/// its progress lines, and prints the table `run` returns.
fn bench_meshes<E: Into<Box<dyn std::error::Error>>>(
    paths: &[PathBuf],
    subdivisions: &[u32],
    device: Device,
    run: impl FnOnce(&[(String, TriMesh)], &Backend, &dyn Fn(&str)) -> std::result::Result<String, E>,
) -> Result<()> {
    let meshes = subdivided_inputs(paths, subdivisions)?;
    let backend = backend(device)?;
    let pb = spinner();
    let table = run(&meshes, &backend, &|m| pb.set_message(m.to_string())).map_err(Into::into)?;
    pb.finish_and_clear();
    say!("{table}");
    Ok(())
}

pub(crate) fn bench_remesh(
    paths: &[PathBuf],
    subdivisions: &[u32],
    settings: &cavity_remesh::bench::RemeshBenchSettings,
    args: &DynamicArgs,
) -> Result<()> {
    settings.settings.check()?;
    bench_meshes(
        paths,
        subdivisions,
        args.device,
        |meshes, backend, progress| {
            cavity_remesh::bench::remesh_bench(meshes, settings, backend, progress)
                .map(|b| b.table())
        },
    )
}

pub(crate) fn bench_delaunay(
    paths: &[PathBuf],
    subdivisions: &[u32],
    reps: usize,
    cpu_max_faces: usize,
    args: &DynamicArgs,
) -> Result<()> {
    let settings = cavity_delaunay::bench::DelaunaySettings {
        patch_size: args.patch_size(DYNAMIC_PATCH_SIZE),
        factors: args.factors(),
        reps,
        cpu_max_faces,
    };
    bench_meshes(
        paths,
        subdivisions,
        args.device,
        |meshes, backend, progress| {
            cavity_delaunay::bench::delaunay(meshes, settings, backend, progress).map(|b| b.table())
        },
    )
}

pub(crate) fn bench_smooth(
    paths: &[PathBuf],
    subdivisions: &[u32],
    settings: &cavity_mcf::bench::McfBenchSettings,
    common: &Common,
) -> Result<()> {
    bench_meshes(
        paths,
        subdivisions,
        common.device,
        |meshes, backend, progress| {
            cavity_mcf::bench::mcf_bench(meshes, settings, backend, progress).map(|b| b.table())
        },
    )
}

/// Geodesic distance on each mesh of `paths` (or the bundled one) at each
/// subdivision level.
pub(crate) fn bench_geodesic(
    paths: &[PathBuf],
    subdivisions: &[u32],
    settings: &cavity_geodesic::bench::GeodesicBenchSettings,
    common: &Common,
) -> Result<()> {
    settings.settings.check()?;
    bench_meshes(
        paths,
        subdivisions,
        common.device,
        |meshes, backend, progress| {
            cavity_geodesic::bench::geodesic_bench(meshes, settings, backend, progress)
                .map(|b| b.table())
        },
    )
}

/// Bilateral denoising on each mesh of `paths` (or the bundled one) at
/// each subdivision level.
pub(crate) fn bench_denoise(
    paths: &[PathBuf],
    subdivisions: &[u32],
    settings: &cavity_denoise::bench::DenoiseBenchSettings,
    common: &Common,
) -> Result<()> {
    bench_meshes(
        paths,
        subdivisions,
        common.device,
        |meshes, backend, progress| {
            cavity_denoise::bench::denoise_bench(meshes, settings, backend, progress)
                .map(|b| b.table())
        },
    )
}

/// Surface tracking of the curl-noise sheet at each of `grids`, with
/// `settings`' frames and time step.
pub(crate) fn bench_track(
    grids: &[u32],
    settings: &TrackSettings,
    reps: usize,
    cpu_max_faces: usize,
    dynamic: &DynamicArgs,
) -> Result<()> {
    for &grid in grids {
        TrackSettings { grid, ..*settings }.check()?;
    }
    let backend = backend(dynamic.device)?;
    let layout = dynamic.layout();
    let pb = spinner();
    let bench = cavity_track::bench::track_bench(
        grids,
        settings,
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

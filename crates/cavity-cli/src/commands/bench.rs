//! `cavity bench`: the query and tracking benchmarks, and the one runner of
//! the applications' benchmarks over meshes (`cavity_bench::harness::MeshBench`).

use std::path::{Path, PathBuf};

use cavity::TriMesh;
use cavity_bench::harness::MeshBench;
use cavity_track::TrackSettings;

use crate::Result;
use crate::args::{Common, Device, DynamicArgs};
use crate::device::backend;
use crate::input::{BUNDLED_NAME, load, load_input};
use crate::output::{say, spinner};

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

/// Runs `bench` (an application's benchmark over meshes) on each mesh of
/// `paths` (or the bundled one) at each subdivision level on the
/// `device`'s backend, with a spinner showing its progress lines, and
/// prints its table: the one runner of every mesh benchmark.
pub(crate) fn bench_meshes(
    paths: &[PathBuf],
    subdivisions: &[u32],
    device: Device,
    bench: &dyn MeshBench,
) -> Result<()> {
    let meshes = subdivided_inputs(paths, subdivisions)?;
    let backend = backend(device)?;
    let pb = spinner();
    let table = bench.run(&meshes, &backend, &|m| pb.set_message(m.to_string()))?;
    pb.finish_and_clear();
    say!("{table}");
    Ok(())
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

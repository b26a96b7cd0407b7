//! `cavity tet`: volumetric meshes as ternary boundary operators
//! (`cavity-volume`): counts and boundary (`info`), the boundary as a
//! surface (`boundary`), Laplacian smoothing of inner vertices (`smooth`),
//! Catmull-Clark subdivision (`subdivide`), format conversion (`convert`),
//! and `cavity bench tet`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use cavity::TriMesh;
use cavity::backend::Backend;
use cavity::backend::cpu::CpuBackend;
use cavity::io::{check_writable, write_mesh};
use cavity_volume::boundary::{Boundary, boundary, smooth};
use cavity_volume::io::{CellMesh, VolumeFormat, WriteOptions, read_volume, write_volume_with};
use cavity_volume::signed::{index, is_negative};
use cavity_volume::{CellType, CellVertices, ResidentMesh, VolumeMesh, check_cells};

use crate::Result;
use crate::args::Device;
use crate::device::backend;
use crate::output::{say, sayln, spinner};

/// The mesh at `path` with its cells oriented outward, built, and the
/// seconds reading and building took.
fn load(path: &Path) -> Result<(VolumeMesh, Vec<CellVertices>, f64, f64)> {
    let t = Instant::now();
    let CellMesh { positions, cells } = read_volume(path)?.oriented();
    let read = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mesh = VolumeMesh::from_cells(positions, &cells)?;
    Ok((mesh, cells, read, t.elapsed().as_secs_f64()))
}

/// The files of a volumetric mesh path (both of a TetGen pair).
fn files(path: &Path) -> Vec<PathBuf> {
    match VolumeFormat::of(path) {
        Ok(VolumeFormat::TetGen) => vec![path.with_extension("node"), path.with_extension("ele")],
        _ => vec![path.to_path_buf()],
    }
}

/// Errors when writing `output` would replace a file of `input` (each
/// file of a TetGen pair against each).
fn refuse_overwrite(input: &Path, output: &Path) -> Result<()> {
    for i in files(input) {
        for o in files(output) {
            crate::output::refuse_overwrite(Some(&i), &o)?;
        }
    }
    Ok(())
}

pub(crate) fn info(path: &Path, device: Device) -> Result<()> {
    let (mesh, _, read, build) = load(path)?;
    let backend = backend(device)?;
    let t = Instant::now();
    let Boundary {
        faces,
        edges,
        vertices,
    } = boundary(&backend, &mesh)?;
    let seconds = t.elapsed().as_secs_f64();
    let [v, e, f, c] = mesh.counts();
    sayln!(
        "{}: {v} vertices, {e} edges, {f} faces, {c} cells",
        path.display()
    );
    for ty in [
        CellType::Tetrahedron,
        CellType::Hexahedron,
        CellType::Prism,
        CellType::Pyramid,
        CellType::Polyhedron,
    ] {
        let n = mesh.cell_types().iter().filter(|&&t| t == ty).count();
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
    sayln!(
        "memory: {} bytes ({:.1} per cell: positions, ∂1 pairs, ∂2 and ∂3 in ternary CSR)",
        mesh.bytes(),
        mesh.bytes() as f64 / c.max(1) as f64
    );
    sayln!(
        "read {:.3} s, operators {:.3} s, boundary {:.3} ms on {}",
        read,
        build,
        seconds * 1e3,
        backend.name()
    );
    Ok(())
}

pub(crate) fn boundary_surface(input: &Path, output: &Path, device: Device) -> Result<()> {
    let format = check_writable(output)?;
    let (mesh, _, _, _) = load(input)?;
    let backend = backend(device)?;
    let t = Instant::now();
    let b = boundary(&backend, &mesh)?;
    let seconds = t.elapsed().as_secs_f64();
    let mut id = vec![u32::MAX; mesh.positions().len()];
    let mut surface = TriMesh {
        positions: Vec::with_capacity(b.vertices.len()),
        faces: Vec::new(),
    };
    for (i, &v) in b.vertices.iter().enumerate() {
        id[v as usize] = i as u32;
        surface.positions.push(mesh.positions()[v as usize]);
    }
    for &f in &b.faces {
        let mut corners: Vec<u32> = mesh
            .face_vertices(index(f))
            .iter()
            .map(|&v| id[v as usize])
            .collect();
        if is_negative(f) {
            corners.reverse();
        }
        for k in 1..corners.len() - 1 {
            surface.faces.push([corners[0], corners[k], corners[k + 1]]);
        }
    }
    write_mesh(output, &surface, None, format)?;
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
    Ok(())
}

pub(crate) fn smooth_inner(
    input: &Path,
    output: &Path,
    iterations: u32,
    device: Device,
    options: WriteOptions,
) -> Result<()> {
    VolumeFormat::of(output)?;
    let (mesh, cells, _, _) = load(input)?;
    refuse_overwrite(input, output)?;
    let backend = backend(device)?;
    let t = Instant::now();
    let positions = smooth(&backend, &mesh, iterations)?;
    let seconds = t.elapsed().as_secs_f64();
    write_volume_with(output, &CellMesh { positions, cells }, options)?;
    sayln!(
        "smoothed the inner vertices of {} by {iterations} Laplacian step(s) in {:.3} ms on {} (with the boundary and the transposes); wrote {}",
        input.display(),
        seconds * 1e3,
        backend.name(),
        output.display()
    );
    Ok(())
}

pub(crate) fn subdivide(
    input: &Path,
    output: &Path,
    levels: u32,
    device: Device,
    options: WriteOptions,
) -> Result<()> {
    VolumeFormat::of(output)?;
    let (mesh, _, read, build) = load(input)?;
    refuse_overwrite(input, output)?;
    let backend = backend(device)?;
    let pb = spinner();
    pb.set_message(format!("subdividing {levels} level(s)"));
    let t = Instant::now();
    let mut resident = ResidentMesh::upload(&backend, &mesh)?;
    for _ in 0..levels {
        resident = resident.subdivide()?;
    }
    resident.synchronize()?;
    let seconds = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let subdivided = resident.download()?;
    let cells = subdivided.cells();
    let download = t.elapsed().as_secs_f64();
    let t = Instant::now();
    write_volume_with(
        output,
        &CellMesh {
            positions: subdivided.positions().to_vec(),
            cells,
        },
        options,
    )?;
    pb.finish_and_clear();
    let [v, e, f, c] = subdivided.counts();
    sayln!(
        "subdivided {} by {levels} Catmull-Clark level(s) on {}: {v} vertices, {e} edges, {f} faces, {c} cells",
        input.display(),
        backend.name()
    );
    sayln!(
        "read {read:.3} s, operators {build:.3} s, upload and subdivision {:.3} ms (relations included), download and cell lists {download:.3} s, write {:.3} s; wrote {}",
        seconds * 1e3,
        t.elapsed().as_secs_f64(),
        output.display()
    );
    Ok(())
}

pub(crate) fn convert(input: &Path, output: &Path, options: WriteOptions) -> Result<()> {
    VolumeFormat::of(output)?;
    let t = Instant::now();
    // Each cell checked on its own: a conversion numbers no faces or
    // edges, so it builds no operators.
    let mesh = read_volume(input)?.oriented();
    check_cells(&mesh.cells, mesh.positions.len())?;
    let read = t.elapsed().as_secs_f64();
    refuse_overwrite(input, output)?;
    let t = Instant::now();
    write_volume_with(output, &mesh, options)?;
    sayln!(
        "{}: {} vertices, {} cells; read {read:.3} s, wrote {} in {:.3} s",
        input.display(),
        mesh.positions.len(),
        mesh.cells.len(),
        output.display(),
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `cavity bench tet`: each mesh's operations on the GPU (when `device`
/// gives one), the CPU backend and serially.
pub(crate) fn bench(meshes: &[PathBuf], reps: usize, device: Device) -> Result<()> {
    let gpu = backend(device)?;
    let cpu = Backend::Cpu(CpuBackend::new());
    for path in meshes {
        let (mesh, _, _, _) = load(path)?;
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

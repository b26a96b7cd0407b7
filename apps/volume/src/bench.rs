//! `cavity bench tet`: every operation of the volumetric core on a mesh,
//! on the GPU, the CPU backend and serially, in one run: the transposes
//! d1, d2 and d3 (the paper's table 3), the relations face-vertices,
//! cell-edges and cell-vertices (table 4), the boundary and ten steps of
//! Laplacian smoothing, and one level of Catmull-Clark subdivision with
//! the relations it needs computed first ("relations") and all in all
//! (table 5), with bytes per cell (table 2).
//!
//! The first two rows are the build of the operators from the cells'
//! vertex lists ([`ResidentMesh::from_cells`], the lists uploaded; serially
//! the host's reference build, `VolumeMesh::from_cells_serial`) and the
//! lists formed from the operators ([`ResidentMesh::cell_lists`]; serially
//! `VolumeMesh::cells` on one thread).
//!
//! On a backend each operation runs on a [`ResidentMesh`] with its
//! relations cleared first (so each time includes the relations the
//! operation computes): on the GPU timed with CUDA events, on the CPU
//! backend by the wall clock. The GPU is also timed by the wall clock over
//! the whole call of the host function, the mesh's upload and the
//! result's download included. Medians after a warm-up.

use cavity::backend::Backend;
use cavity_bench::harness::{Table, fixed, speedup};
use cavity_bench::{gpu_name, median, median_seconds};

use crate::VolumeError;
use crate::boundary::{boundary, boundary_serial, smooth, smooth_serial};
use crate::mesh::{CellVertices, VolumeMesh};
use crate::relations::{
    cell_edges, cell_vertices, compose_serial, face_vertices, face_vertices_serial,
};
use crate::resident::{Relation, ResidentMesh};
use crate::subdivide::{subdivide, subdivide_serial};
use crate::transpose;

/// Smoothing steps the benchmark runs.
pub const SMOOTHING_STEPS: u32 = 10;

/// One operation's times, seconds.
#[derive(Clone, Debug)]
pub struct TetRow {
    /// The operation.
    pub operation: &'static str,
    /// On the GPU, the mesh resident (CUDA events; none without a GPU).
    pub gpu: Option<f64>,
    /// On the GPU, the whole call (uploads and downloads included).
    pub gpu_call: Option<f64>,
    /// On the CPU backend, the mesh resident.
    pub cpu: f64,
    /// Serially.
    pub serial: f64,
}

/// A benchmark of one mesh.
#[derive(Clone, Debug)]
pub struct TetBench {
    /// The mesh's name.
    pub mesh: String,
    /// Vertices, edges, faces and cells.
    pub counts: [usize; 4],
    /// Bytes of the operators and positions per cell.
    pub bytes_per_cell: f64,
    /// The GPU, in words.
    pub gpu: String,
    /// The CPU backend, in words.
    pub cpu: String,
    /// One row per operation.
    pub rows: Vec<TetRow>,
}

/// An operation on a resident mesh.
type Resident<'a> = Box<dyn Fn(&mut ResidentMesh<'_>) -> Result<(), VolumeError> + 'a>;
/// An operation's whole call on a backend.
type Call<'a> = Box<dyn Fn(&Backend) -> Result<(), VolumeError> + 'a>;
/// An operation's serial run.
type Serial<'a> = Box<dyn Fn() -> Result<(), VolumeError> + 'a>;

/// The median seconds of `op` on `mesh` resident on `backend` after one
/// warm-up, its relations cleared before each run ([`Backend::timed`]:
/// CUDA events on the GPU, the wall clock on the CPU backend).
fn time_resident(
    backend: &Backend,
    mesh: &VolumeMesh,
    reps: usize,
    op: &Resident<'_>,
) -> Result<f64, VolumeError> {
    let mut m = ResidentMesh::upload(backend, mesh)?;
    let mut times = Vec::new();
    for run in 0..=reps.max(1) {
        let ((), ms) = backend.timed(|| {
            m.clear_relations();
            op(&mut m)
        })?;
        if run > 0 {
            times.push(ms / 1e3);
        }
    }
    Ok(median(times))
}

/// `Ok`, the value dropped (a serial run's result).
fn done<T>(_: T) -> Result<(), VolumeError> {
    Ok(())
}

/// `f` run on one thread of its own (a parallel host pass, serially).
fn serially<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    match rayon::ThreadPoolBuilder::new().num_threads(1).build() {
        Ok(pool) => pool.install(f),
        Err(_) => f(),
    }
}

/// The relations a level of subdivision reads, serially.
fn subdivision_relations_serial(mesh: &VolumeMesh) {
    let fv = face_vertices_serial(mesh);
    let ce = compose_serial(mesh.d3(), mesh.d2());
    let cv = compose_serial(mesh.d3(), &fv);
    for a in [&mesh.d1(), mesh.d2(), mesh.d3(), &fv, &ce, &cv] {
        drop(a.transpose_serial());
    }
}

/// Runs every operation on `mesh` on `gpu` (when it is the GPU), on `cpu`
/// and serially, `reps` times each.
///
/// # Errors
/// A failed operation on a backend.
pub fn tet_bench(
    name: &str,
    mesh: &VolumeMesh,
    gpu: &Backend,
    cpu: &Backend,
    reps: usize,
    progress: impl Fn(&str),
) -> Result<TetBench, VolumeError> {
    let d1 = mesh.d1();
    let (positions, cells) = (mesh.positions(), mesh.cells());
    let relation = |r: Relation| -> Resident<'_> { Box::new(move |m| m.ensure(r)) };
    let operations: Vec<(&'static str, Resident<'_>, Call<'_>, Serial<'_>)> = vec![
        (
            "operators from cell lists",
            Box::new(|m| {
                *m = ResidentMesh::from_cells(m.backend(), positions, &cells)?;
                Ok(())
            }),
            Box::new(|b| {
                ResidentMesh::from_cells(b, positions, &cells)?
                    .download()
                    .map(drop)
            }),
            Box::new(|| done(VolumeMesh::from_cells_serial(positions.to_vec(), &cells)?)),
        ),
        (
            "cell lists from operators",
            Box::new(|m| m.cell_lists().map(drop)),
            Box::new(|b| ResidentMesh::upload(b, mesh)?.cell_lists().map(drop)),
            Box::new(|| done(serially(|| mesh.cells()))),
        ),
        (
            "d1 = ∂1ᵀ",
            relation(Relation::VertexEdges),
            Box::new(|b| transpose(b, &d1).map(drop)),
            Box::new(|| done(d1.transpose_serial())),
        ),
        (
            "d2 = ∂2ᵀ",
            relation(Relation::EdgeFaces),
            Box::new(|b| transpose(b, mesh.d2()).map(drop)),
            Box::new(|| done(mesh.d2().transpose_serial())),
        ),
        (
            "d3 = ∂3ᵀ",
            relation(Relation::FaceCells),
            Box::new(|b| transpose(b, mesh.d3()).map(drop)),
            Box::new(|| done(mesh.d3().transpose_serial())),
        ),
        (
            "face-vertices",
            relation(Relation::FaceVertices),
            Box::new(|b| face_vertices(b, mesh).map(drop)),
            Box::new(|| done(face_vertices_serial(mesh))),
        ),
        (
            "cell-edges",
            relation(Relation::CellEdges),
            Box::new(|b| cell_edges(b, mesh).map(drop)),
            Box::new(|| done(compose_serial(mesh.d3(), mesh.d2()))),
        ),
        (
            "cell-vertices",
            relation(Relation::CellVertices),
            Box::new(|b| cell_vertices(b, mesh).map(drop)),
            Box::new(|| done(compose_serial(mesh.d3(), &face_vertices_serial(mesh)))),
        ),
        (
            "boundary",
            Box::new(|m| m.boundary().map(drop)),
            Box::new(|b| boundary(b, mesh).map(drop)),
            Box::new(|| done(boundary_serial(mesh))),
        ),
        (
            "10 smoothing steps",
            Box::new(|m| m.smooth(SMOOTHING_STEPS)),
            Box::new(|b| smooth(b, mesh, SMOOTHING_STEPS).map(drop)),
            Box::new(|| done(smooth_serial(mesh, SMOOTHING_STEPS))),
        ),
        (
            "Catmull-Clark: relations",
            Box::new(|m| m.prepare()),
            Box::new(|b| ResidentMesh::upload(b, mesh)?.prepare()),
            Box::new(|| {
                subdivision_relations_serial(mesh);
                Ok(())
            }),
        ),
        (
            "Catmull-Clark: one level",
            Box::new(|m| m.subdivide().map(drop)),
            Box::new(|b| subdivide(b, mesh, 1).map(drop)),
            Box::new(|| subdivide_serial(mesh).map(drop)),
        ),
    ];
    let mut rows = Vec::new();
    for (operation, resident, call, serial) in &operations {
        progress(&format!("{name}: {operation}"));
        let (on_gpu, gpu_call) = match gpu {
            Backend::Cuda(_) => (
                Some(time_resident(gpu, mesh, reps, resident)?),
                Some(median_seconds(reps, || call(gpu))?),
            ),
            Backend::Cpu(_) => (None, None),
        };
        rows.push(TetRow {
            operation,
            gpu: on_gpu,
            gpu_call,
            cpu: time_resident(cpu, mesh, reps, resident)?,
            serial: median_seconds(reps, serial)?,
        });
    }
    let counts = mesh.counts();
    Ok(TetBench {
        mesh: name.to_string(),
        counts,
        bytes_per_cell: mesh.bytes() as f64 / counts[3].max(1) as f64,
        gpu: gpu_name(gpu),
        cpu: cpu.name(),
        rows,
    })
}

impl TetBench {
    /// The results as a Markdown table with a header line.
    pub fn table(&self) -> String {
        let [v, e, f, c] = self.counts;
        let above = format!(
            "{}: {v} vertices, {e} edges, {f} faces, {c} cells, {:.1} bytes per cell; GPU: {}; CPU backend: {}",
            self.mesh, self.bytes_per_cell, self.gpu, self.cpu
        );
        let mut t = Table::new(
            &[&above],
            &[
                "operation",
                "GPU ms (resident)",
                "GPU ms (whole call)",
                "CPU backend ms",
                "serial ms",
                "GPU vs CPU backend",
                "GPU vs serial",
            ],
        );
        let ms = |x: Option<f64>| fixed(x.map(|s| s * 1e3), 3);
        for r in &self.rows {
            t.row(vec![
                r.operation.to_string(),
                ms(r.gpu),
                ms(r.gpu_call),
                ms(Some(r.cpu)),
                ms(Some(r.serial)),
                speedup(Some(r.cpu), r.gpu),
                speedup(Some(r.serial), r.gpu),
            ]);
        }
        t.render()
    }
}

/// One format's write and read of the I/O benchmark's mesh
/// ([`io_bench`]).
#[derive(Clone, Debug)]
pub struct IoRow {
    /// The format and encoding, in words (`"Gmsh 4.1 binary"`).
    pub format: &'static str,
    /// Cells of the mesh written (the TetGen row splits each hexahedron
    /// into six tetrahedra).
    pub cells: usize,
    /// Bytes of the file (of both files for TetGen).
    pub bytes: u64,
    /// Seconds to encode it, median: the bytes formatted or filled and
    /// streamed as the write streams them, into a sink rather than a file
    /// ([`crate::io::encode_volume`]; no file system, no sync).
    pub encode: f64,
    /// Seconds to write it, median: formatting, the temporary file, its
    /// sync to the disk and its rename.
    pub write: f64,
    /// Seconds to read it back, median (reading the file, parsing, the
    /// mesh and its fields built).
    pub read: f64,
}

/// The I/O benchmark of one mesh ([`io_bench`]).
#[derive(Clone, Debug)]
pub struct IoBench {
    /// Vertices of the mesh.
    pub vertices: usize,
    /// Hexahedra of the mesh.
    pub cells: usize,
    /// Threads of rayon's pool that the writers and readers ran on.
    pub threads: usize,
    /// One row per format and encoding.
    pub rows: Vec<IoRow>,
}

/// A grid of `n`³ unit hexahedra over `(n + 1)`³ vertices (x fastest),
/// for the I/O benchmark; with `tetrahedra`, each hexahedron split into
/// six tetrahedra round its main diagonal (TetGen holds nothing else).
pub fn io_grid(n: u32, tetrahedra: bool) -> crate::io::CellMesh {
    use rayon::prelude::*;
    let side = n as usize + 1;
    let positions = (0..side * side * side)
        .into_par_iter()
        .map(|i| {
            let [x, y, z] = [i % side, i / side % side, i / (side * side)];
            [x as f32, y as f32, z as f32]
        })
        .collect();
    let cube = |c: usize| {
        let n = n as usize;
        let [x, y, z] = [c % n, c / n % n, c / (n * n)];
        let v = |dx: usize, dy: usize, dz: usize| {
            ((x + dx) + (y + dy) * side + (z + dz) * side * side) as u32
        };
        [
            v(0, 0, 0),
            v(1, 0, 0),
            v(1, 1, 0),
            v(0, 1, 0),
            v(0, 0, 1),
            v(1, 0, 1),
            v(1, 1, 1),
            v(0, 1, 1),
        ]
    };
    let count = (n as usize).pow(3);
    let cells = if tetrahedra {
        // The six tetrahedra of the path 0-6 through the cube.
        const PATHS: [[usize; 4]; 6] = [
            [0, 1, 2, 6],
            [0, 2, 3, 6],
            [0, 3, 7, 6],
            [0, 7, 4, 6],
            [0, 4, 5, 6],
            [0, 5, 1, 6],
        ];
        (0..6 * count)
            .into_par_iter()
            .map(|t| {
                let h = cube(t / 6);
                CellVertices::Tetrahedron(PATHS[t % 6].map(|k| h[k]))
            })
            .collect()
    } else {
        (0..count)
            .into_par_iter()
            .map(|c| CellVertices::Hexahedron(cube(c)))
            .collect()
    };
    crate::io::CellMesh { positions, cells }
}

/// The formats [`io_bench`] times, by the names its rows give them.
pub const IO_FORMATS: [&str; 8] = [
    "MEDIT",
    "TetGen",
    "VTK ASCII",
    "VTK binary",
    "Gmsh 2.2 ASCII",
    "Gmsh 2.2 binary",
    "Gmsh 4.1 ASCII",
    "Gmsh 4.1 binary",
];

/// Writes a hexahedral grid of `n`³ cells ([`io_grid`]) in each of
/// `formats` (names of [`IO_FORMATS`]; all of them when empty: MEDIT;
/// TetGen, the cells split into six tetrahedra each; VTK and Gmsh 2.2
/// and 4.1, ASCII and binary) into `dir` and reads each back, `reps`
/// timed runs each after a warm-up, on rayon's current pool; each file is
/// removed after its row. `progress` hears the format before each. A grid
/// of `n` = 259 is about the `tet subdivide --levels 2` output of issue 55
/// (17.4 M hexahedra; 1.7 GB in Gmsh 4.1 binary).
///
/// # Errors
/// The writers' and readers' ([`crate::io::VolumeIoError`]); a file that
/// reads back unlike the mesh written is
/// [`crate::io::VolumeIoError::Malformed`].
pub fn io_bench(
    dir: &std::path::Path,
    n: u32,
    reps: usize,
    formats: &[&str],
    progress: impl Fn(&str),
) -> Result<IoBench, crate::io::VolumeIoError> {
    use crate::io::gmsh::MshVersion;
    use crate::io::{VolumeIoError, WriteOptions, read_volume, write_volume_with};
    let hexahedra = io_grid(n, false);
    let mut tetrahedra = None;
    let files = [
        ("io-bench.mesh", false, MshVersion::V41),
        ("io-bench.node", false, MshVersion::V41),
        ("io-bench.vtk", false, MshVersion::V41),
        ("io-bench-binary.vtk", true, MshVersion::V41),
        ("io-bench-2.2.msh", false, MshVersion::V22),
        ("io-bench-2.2-binary.msh", true, MshVersion::V22),
        ("io-bench-4.1.msh", false, MshVersion::V41),
        ("io-bench-4.1-binary.msh", true, MshVersion::V41),
    ];
    let mut rows = Vec::new();
    for (format, (name, binary, msh_version)) in IO_FORMATS.into_iter().zip(files) {
        if !formats.is_empty() && !formats.contains(&format) {
            continue;
        }
        progress(format);
        let path = dir.join(name);
        let mesh = if format == "TetGen" {
            tetrahedra.get_or_insert_with(|| io_grid(n, true))
        } else {
            &hexahedra
        };
        let options = WriteOptions {
            binary,
            msh_version,
        };
        let files = if format == "TetGen" {
            let (node, ele) = crate::io::tetgen::pair(&path);
            vec![node, ele]
        } else {
            vec![path.clone()]
        };
        let encode = median_seconds(reps, || {
            crate::io::encode_volume(&mut std::io::sink(), &path, mesh, None, options)
        })?;
        let write = median_seconds(reps, || write_volume_with(&path, mesh, options))?;
        let bytes = files
            .iter()
            .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
            .sum();
        let mut back = None;
        let read = median_seconds(reps, || {
            back = Some(read_volume(&path)?);
            Ok::<(), VolumeIoError>(())
        })?;
        // Gmsh writes the cells by type: a mesh of one type reads back
        // in order.
        if back.as_ref() != Some(mesh) {
            return Err(VolumeIoError::Malformed {
                file: path.display().to_string(),
                message: "the benchmark's mesh read back unlike the mesh written".into(),
            });
        }
        drop(back);
        for f in &files {
            let _ = std::fs::remove_file(f);
        }
        rows.push(IoRow {
            format,
            cells: mesh.cells.len(),
            bytes,
            encode,
            write,
            read,
        });
    }
    Ok(IoBench {
        vertices: hexahedra.positions.len(),
        cells: hexahedra.cells.len(),
        threads: rayon::current_num_threads(),
        rows,
    })
}

impl IoBench {
    /// The results as a Markdown table with a header line: per format the
    /// file's size, and the seconds and GB/s (10⁹ bytes of the file per
    /// second) of its encoding (no file), its write and its read.
    pub fn table(&self) -> String {
        let above = format!(
            "volumetric I/O: a grid of {} hexahedra, {} vertices; {} threads",
            self.cells, self.vertices, self.threads
        );
        let mut t = Table::new(
            &[&above],
            &[
                "format",
                "cells",
                "MB",
                "encode s",
                "encode GB/s",
                "write s",
                "write GB/s",
                "read s",
                "read GB/s",
            ],
        );
        for r in &self.rows {
            let gb = r.bytes as f64 / 1e9;
            t.row(vec![
                r.format.to_string(),
                r.cells.to_string(),
                fixed(Some(r.bytes as f64 / 1e6), 1),
                fixed(Some(r.encode), 3),
                fixed(Some(gb / r.encode), 2),
                fixed(Some(r.write), 3),
                fixed(Some(gb / r.write), 2),
                fixed(Some(r.read), 3),
                fixed(Some(gb / r.read), 2),
            ]);
        }
        t.render()
    }
}

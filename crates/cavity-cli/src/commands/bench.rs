//! `cavity bench`: the query, tracking and file I/O benchmarks, and the one
//! runner of the applications' benchmarks over meshes
//! (`cavity_bench::harness::MeshBench`).

use std::path::{Path, PathBuf};

use cavity::TriMesh;
use cavity::io::{Format, PlyEncoding, StlEncoding};
use cavity_bench::harness::{MeshBench, Table, fixed};
use cavity_bench::median_seconds;
use cavity_track::TrackSettings;

use crate::Result;
use crate::args::{Common, Device, DynamicArgs};
use crate::device::backend;
use crate::input::{BUNDLED_NAME, analyse, load, load_input};
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

/// The mesh at `path` (or the bundled one) read as an operation reads it,
/// its defects' warning printed.
fn analysed(path: Option<&Path>) -> Result<TriMesh> {
    let read = load_input(path)?;
    analyse(&read);
    Ok(read.mesh)
}

/// The bench inputs: each mesh (the bundled one when none is given) at
/// each subdivision level, named "NAME /LEVEL".
fn subdivided_inputs(paths: &[PathBuf], subdivisions: &[u32]) -> Result<Vec<(String, TriMesh)>> {
    let inputs: Vec<(String, TriMesh)> = if paths.is_empty() {
        vec![(BUNDLED_NAME.to_string(), analysed(None)?)]
    } else {
        paths
            .iter()
            .map(|p| Ok((p.display().to_string(), analysed(Some(p))?)))
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

/// One file format the I/O benchmark times: how it writes a mesh held in
/// memory to a path and reads it back. The surface formats are
/// [`surface_cases`]; the volumetric ones (Gmsh, VTK, MEDIT; issue 55
/// item 3) join the same way, as cases built from the volumetric crate's
/// writers and readers, or as the rows of that crate's own benchmark given
/// the raw times of their bytes by [`raw_times`].
pub(crate) struct IoCase<'a> {
    /// The format's name in the table.
    pub(crate) format: &'static str,
    /// The name of the file it writes (the extension picks the format).
    pub(crate) file: &'static str,
    /// Writes the mesh to the path, atomically as the commands do.
    pub(crate) write: FileStep<'a, ()>,
    /// Reads the file back, giving its element count (faces, cells).
    pub(crate) read: FileStep<'a, usize>,
    /// The element count a read must give.
    pub(crate) elements: usize,
    /// Whether a read may give fewer elements (STL: corners at equal
    /// positions are merged, and facets that collapse dropped).
    pub(crate) drops: bool,
}

/// What an [`IoCase`] does with the file at a path.
pub(crate) type FileStep<'a, T> = Box<dyn Fn(&Path) -> Result<T> + Sync + 'a>;

/// The surface formats of the I/O benchmark for `mesh`: binary PLY, binary
/// STL, ASCII PLY and OBJ, written by `cavity::io::write_mesh` and read by
/// `cavity::io::read_mesh`.
pub(crate) fn surface_cases(mesh: &TriMesh) -> Vec<IoCase<'_>> {
    let case = |format: &'static str, file: &'static str, encoding: Format| IoCase {
        format,
        file,
        write: Box::new(move |path: &Path| Ok(cavity::io::write_mesh(path, mesh, None, encoding)?)),
        read: Box::new(|path: &Path| Ok(cavity::io::read_mesh(path)?.mesh.num_faces())),
        elements: mesh.num_faces(),
        drops: matches!(encoding, Format::Stl(_)),
    };
    vec![
        case(
            "PLY binary",
            "mesh-binary.ply",
            Format::Ply(PlyEncoding::BinaryLittleEndian),
        ),
        case(
            "STL binary",
            "mesh-binary.stl",
            Format::Stl(StlEncoding::Binary),
        ),
        case(
            "PLY ASCII",
            "mesh-ascii.ply",
            Format::Ply(PlyEncoding::Ascii),
        ),
        case("OBJ", "mesh.obj", Format::Obj),
    ]
}

/// A fresh directory for the benchmark's files, removed with its files
/// when dropped (on errors too).
struct ScratchDir(PathBuf);

impl ScratchDir {
    /// A new directory inside `parent`.
    fn new(parent: &Path) -> Result<ScratchDir> {
        let base = format!("cavity-bench-io-{}", std::process::id());
        for k in 0..1000 {
            let dir = parent.join(format!("{base}-{k}"));
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(ScratchDir(dir)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(format!("{}: {e}", dir.display()).into()),
            }
        }
        Err(format!(
            "{}: no fresh directory {base}-N could be made",
            parent.display()
        )
        .into())
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// [`median_seconds`] of `f`, whose errors are the command's.
fn timed(reps: usize, f: impl FnMut() -> Result<()>) -> Result<f64> {
    median_seconds(reps, f)
}

/// One row of the I/O benchmark: a format's file, its write and read
/// times, and those of a raw write and read of as many bytes.
struct IoRow {
    bytes: u64,
    write: f64,
    read: f64,
    raw_write: f64,
    raw_read: f64,
}

/// Times `case` in `dir`, the median of `reps` runs after a warm-up: its
/// write, its read (checked to give the elements written), and
/// [`raw_times`] of as many bytes. Returns the bytes of its file and the
/// times.
fn time_case(case: &IoCase<'_>, dir: &Path, reps: usize) -> Result<IoRow> {
    let path = dir.join(case.file);
    let write = timed(reps, || (case.write)(&path))?;
    let read = timed(reps, || {
        let elements = (case.read)(&path)?;
        if elements > case.elements || (elements < case.elements && !case.drops) {
            return Err(format!(
                "{}: read back {elements} elements of the {} written",
                case.format, case.elements
            )
            .into());
        }
        Ok(())
    })?;
    let bytes = std::fs::metadata(&path)?.len();
    std::fs::remove_file(&path)?;
    let (raw_write, raw_read) = raw_times(dir, bytes, reps)?;
    Ok(IoRow {
        bytes,
        write,
        read,
        raw_write,
        raw_read,
    })
}

/// The seconds of a raw write and read of `bytes` bytes in `dir` (medians
/// of `reps` after a warm-up): the write through
/// `cavity::io::write_bytes` (the same temporary file, sync and rename as
/// the mesh writers, with nothing to format), the read by
/// `std::fs::read`. The floor of any format's row, the volumetric ones'
/// too.
fn raw_times(dir: &Path, bytes: u64, reps: usize) -> Result<(f64, f64)> {
    let data: Vec<u8> = (0..bytes).map(|k| k as u8).collect();
    let path = dir.join("raw");
    let write = timed(reps, || Ok(cavity::io::write_bytes(&path, &data)?))?;
    let read = timed(reps, || {
        std::hint::black_box(std::fs::read(&path)?);
        Ok(())
    })?;
    std::fs::remove_file(&path)?;
    Ok((write, read))
}

/// The speed of `bytes` in `seconds`, GB/s (10^9 bytes).
fn gb_per_s(bytes: u64, seconds: f64) -> f64 {
    bytes as f64 / seconds / 1e9
}

/// The page cache's own speed for `bytes` bytes in `dir`: a
/// `std::fs::write` without sync and a `std::fs::read` (medians of `reps`
/// after a warm-up), GB/s.
fn page_cache_speed(dir: &Path, bytes: usize, reps: usize) -> Result<(f64, f64)> {
    let data: Vec<u8> = (0..bytes).map(|k| k as u8).collect();
    let path = dir.join("page-cache");
    let write = timed(reps, || Ok(std::fs::write(&path, &data)?))?;
    let read = timed(reps, || {
        std::hint::black_box(std::fs::read(&path)?);
        Ok(())
    })?;
    std::fs::remove_file(&path)?;
    Ok((gb_per_s(bytes as u64, write), gb_per_s(bytes as u64, read)))
}

/// `cavity bench io`: each surface mesh of `paths` (or the bundled one),
/// subdivided `subdivide` times in memory, written to and read back from
/// each format of [`surface_cases`] in a fresh directory inside `dir` (the
/// system's temporary directory by default), with a raw write and read of
/// as many bytes beside each: a table of bytes, seconds and GB/s, and the
/// ratios to the raw speed; then, when `volume_grid` is not 0, the
/// volumetric formats on a grid of `volume_grid`³ hexahedra
/// (`cavity_volume::bench::io_bench`) in the same directory.
pub(crate) fn bench_io(
    paths: &[PathBuf],
    subdivide: u32,
    reps: usize,
    dir: Option<&Path>,
    volume_grid: u32,
) -> Result<()> {
    let parent = dir.map_or_else(std::env::temp_dir, Path::to_path_buf);
    let scratch = ScratchDir::new(&parent)?;
    let inputs: Vec<Option<&Path>> = if paths.is_empty() {
        vec![None]
    } else {
        paths.iter().map(|p| Some(p.as_path())).collect()
    };
    let mut rows = Vec::new();
    let mut largest = 0;
    let pb = spinner();
    for input in inputs {
        let name = input.map_or(BUNDLED_NAME.to_string(), |p| p.display().to_string());
        pb.set_message(format!("reading {name}"));
        let mut mesh = load(input)?;
        for level in 0..subdivide {
            pb.set_message(format!("subdividing {name} ({} of {subdivide})", level + 1));
            mesh = mesh.subdivide();
        }
        let label = format!("{name} /{subdivide} ({} faces)", mesh.num_faces());
        for case in surface_cases(&mesh) {
            pb.set_message(format!("{label}: {}", case.format));
            let row = time_case(&case, &scratch.0, reps)?;
            largest = largest.max(row.bytes as usize);
            rows.push((label.clone(), case.format, row));
        }
    }
    let volume = if volume_grid > 0 {
        let bench = cavity_volume::bench::io_bench(&scratch.0, volume_grid, reps, &[], |f| {
            pb.set_message(format!("volumetric grid of {volume_grid}³ hexahedra: {f}"));
        })?;
        largest = largest.max(
            bench
                .rows
                .iter()
                .map(|r| r.bytes as usize)
                .max()
                .unwrap_or(0),
        );
        Some(bench)
    } else {
        None
    };
    pb.set_message("the page cache alone");
    let (cache_write, cache_read) = page_cache_speed(&scratch.0, largest, reps)?;
    pb.finish_and_clear();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let host = format!(
        "host: {cores} cores, {} rayon threads; files in {}",
        rayon::current_num_threads(),
        parent.display()
    );
    let how = format!(
        "median of {} runs after a warm-up; writes (the raw one too) go to a temporary file, synced and renamed into place, as every command's output; / raw: the format's speed over that of a raw write (cavity::io::write_bytes) or read (std::fs::read) of as many bytes",
        reps.max(1)
    );
    let cache = format!(
        "page cache alone ({} bytes, std::fs::write without sync and std::fs::read): write {cache_write:.2} GB/s, read {cache_read:.2} GB/s",
        largest
    );
    let mut table = Table::new(
        &[&host, &how, &cache],
        &[
            "mesh",
            "format",
            "bytes",
            "write s",
            "write GB/s",
            "raw write GB/s",
            "write / raw",
            "read s",
            "read GB/s",
            "raw read GB/s",
            "read / raw",
        ],
    );
    for (label, format, r) in rows {
        table.row(vec![
            label,
            format.to_string(),
            r.bytes.to_string(),
            fixed(Some(r.write), 3),
            fixed(Some(gb_per_s(r.bytes, r.write)), 2),
            fixed(Some(gb_per_s(r.bytes, r.raw_write)), 2),
            fixed(Some(r.raw_write / r.write), 2),
            fixed(Some(r.read), 3),
            fixed(Some(gb_per_s(r.bytes, r.read)), 2),
            fixed(Some(gb_per_s(r.bytes, r.raw_read)), 2),
            fixed(Some(r.raw_read / r.read), 2),
        ]);
    }
    say!("{}", table.render());
    if let Some(v) = volume {
        say!("\n{}", v.table());
    }
    Ok(())
}

//! `smooth-split IN -o OUT`: splits the interior vertices of valence above
//! `--max-valence` and smooths the mesh with `--steps` Laplacian steps,
//! with the example's own kernels, on `--device auto|cuda|cpu`.

use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;

use cavity::backend::{Backend, DeviceChoice};
use cavity::io::{Format, read_mesh, write_mesh};
use smooth_split::{Settings, run};

/// Splits high-valence vertices and smooths a mesh with user kernels.
#[derive(Parser)]
struct Args {
    /// Input mesh (PLY, OBJ, OFF, STL).
    input: PathBuf,
    /// Output mesh (format by extension).
    #[arg(short, long)]
    output: PathBuf,
    /// Interior vertices with more edges are split.
    #[arg(long, default_value_t = 8)]
    max_valence: u32,
    /// Laplacian smoothing steps.
    #[arg(long, default_value_t = 10)]
    steps: u32,
    /// Smoothing step size, 0 to 1.
    #[arg(long, default_value_t = 0.5)]
    lambda: f32,
    /// auto, cuda or cpu.
    #[arg(long, default_value = "auto")]
    device: DeviceChoice,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let (backend, note) = Backend::select(args.device)?;
    eprintln!("{note}");
    let input = read_mesh(&args.input)?.mesh;
    let settings = Settings {
        max_valence: args.max_valence,
        steps: args.steps,
        lambda: args.lambda,
        ..Settings::default()
    };
    let start = Instant::now();
    let out = run(&backend, &input, &settings)?;
    let seconds = start.elapsed().as_secs_f64();
    write_mesh(
        &args.output,
        &out.mesh,
        None,
        Format::from_path(&args.output)?,
    )?;
    println!(
        "{} vertices split, {} smoothing steps: {} faces in {seconds:.3} s on {}",
        out.splits,
        settings.steps,
        out.mesh.faces.len(),
        backend.name()
    );
    Ok(())
}

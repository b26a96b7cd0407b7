//! Project tasks: `cargo xtask build-ptx [--crate PATH] [--arch sm_XX]`
//! builds a kernel crate (the device crate by default) to PTX with
//! `cavity-ptx-builder` and lists its kernels with their sizes; `cargo
//! xtask bench queries [MESH] ...` runs the query benchmark (same as
//! `cavity bench queries`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use cavity_ptx_builder::PtxBuilder;

#[derive(Parser)]
#[command(name = "xtask")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Build a kernel crate's PTX and print each kernel's size.
    BuildPtx {
        /// The kernel crate's directory (default: crates/cavity-device).
        #[arg(long = "crate", value_name = "PATH")]
        krate: Option<PathBuf>,
        /// GPU architecture, e.g. sm_80, sm_90.
        #[arg(long, default_value = cavity_ptx_builder::DEFAULT_ARCH)]
        arch: String,
    },
    /// Run a benchmark through the release CLI (arguments are passed on).
    Bench {
        /// Benchmark and its arguments, e.g. `queries --device cuda`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

/// `(name, lines, bytes)` of each `.entry` in a PTX text.
fn kernels(ptx: &str) -> Vec<(String, usize, usize)> {
    let mut out = Vec::new();
    let mut current: Option<(String, usize, usize)> = None;
    for line in ptx.lines() {
        if let Some(rest) = line.split(".entry ").nth(1) {
            if let Some(k) = current.take() {
                out.push(k);
            }
            let name = rest.split('(').next().unwrap_or(rest).trim().to_string();
            current = Some((name, 0, 0));
        } else if (line.starts_with(".visible .func") || line.starts_with(".func"))
            && let Some(k) = current.take()
        {
            out.push(k);
        }
        if let Some(k) = current.as_mut() {
            k.1 += 1;
            k.2 += line.len() + 1;
        }
    }
    out.extend(current);
    out
}

fn run(cli: Cli) -> Result<(), String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    match cli.task {
        Task::BuildPtx { krate, arch } => {
            let krate = krate.unwrap_or_else(|| root.join("crates/cavity-device"));
            let ptx = PtxBuilder::new(&krate)
                .arch(&arch)
                .build()
                .map_err(|e| e.to_string())?;
            let text = ptx.text().map_err(|e| e.to_string())?;
            println!("{} ({} bytes, {arch})", ptx.path().display(), text.len());
            println!("| kernel | PTX lines | PTX bytes |\n|---|---|---|");
            for (name, lines, bytes) in kernels(&text) {
                println!("| {name} | {lines} | {bytes} |");
            }
            Ok(())
        }
        Task::Bench { args } => {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let status = std::process::Command::new(cargo)
                .current_dir(&root)
                .args([
                    "run",
                    "--quiet",
                    "--release",
                    "-p",
                    "cavity-cli",
                    "--",
                    "bench",
                ])
                .args(&args)
                .status()
                .map_err(|e| format!("cannot run cargo: {e}"))?;
            if status.success() {
                Ok(())
            } else {
                Err(format!("benchmark failed ({status})"))
            }
        }
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

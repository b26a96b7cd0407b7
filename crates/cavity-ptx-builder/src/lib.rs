//! Builds a kernel crate to PTX: the role `cuda_builder` plays for
//! rust-cuda, with rustc's own NVPTX backend (the pinned nightly's LLVM;
//! `../shared/GPU-RECIPE.md` says why the NVVM codegen cannot be used).
//!
//! A kernel crate is a `no_std` library that depends on `cavity-device`
//! and declares its entry points as `extern "ptx-kernel"` functions on
//! `nvptx64` (the same source compiles for the host, where the CPU backend
//! runs it). [`PtxBuilder`] runs
//! `cargo rustc --lib --crate-type cdylib --target nvptx64-nvidia-cuda
//! -Zbuild-std=core --profile ptx` on it for one architecture (`sm_80` or
//! newer), in its own target directory, and reads cargo's dependency file
//! so that a build script reruns exactly when a source of the kernels (the
//! kernel crate's or a path dependency's, `cavity-device` included)
//! changes. The kernels' declared launch bounds
//! (`cavity_device::kernel!`) become the entries' `.maxntid` and
//! `.minnctapersm` directives in the PTX it returns.
//!
//! When the toolchain cannot build PTX (a nightly without the `rust-src` or
//! `llvm-bitcode-linker-preview` component; a stable one is reported too,
//! though `cavity-device` itself needs a nightly) a build script skips the
//! step with one warning ([`PtxBuilder::build_in_build_script`]): the host
//! crate still builds and runs on the CPU backend.
//!
//! ```no_run
//! // build.rs of a host crate whose kernels live in ../my-kernels
//! use cavity_ptx_builder::{Outcome, PtxBuilder};
//!
//! let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
//! let builder = PtxBuilder::new("../my-kernels")
//!     .arch("sm_90")
//!     .target_dir(out.join("ptx-target"));
//! match builder.build_in_build_script() {
//!     Ok(Outcome::Built(ptx)) => {
//!         std::fs::copy(ptx.path(), out.join("my_kernels.ptx")).unwrap();
//!     }
//!     Ok(Outcome::Skipped { reason }) => {
//!         // Embed no kernels; the GPU path reports `reason`.
//!         std::fs::write(out.join("my_kernels.ptx"), "").unwrap();
//!         let _ = reason;
//!     }
//!     Err(e) => panic!("{e}"),
//! }
//! ```

mod launch_bounds;
pub mod toolchain;

use std::path::{Path, PathBuf};
use std::process::Command;

pub use toolchain::Missing;

/// The architecture built when none is named: `sm_90` (H100, H200).
pub const DEFAULT_ARCH: &str = "sm_90";

/// The oldest architecture the kernels support: they copy patches with
/// `cp.async`.
pub const OLDEST_ARCH: u32 = 80;

/// The target the kernels are built for.
pub const TARGET: &str = "nvptx64-nvidia-cuda";

/// Why a PTX build failed.
#[derive(Debug, thiserror::Error)]
pub enum PtxError {
    /// The architecture is not `sm_XX` with `XX` at least [`OLDEST_ARCH`].
    /// Fix: name one such as `sm_80` or `sm_90`.
    #[error(
        "unsupported CUDA architecture {0:?}: use sm_80 or newer (e.g. sm_90); the kernels copy patches with cp.async"
    )]
    Arch(String),
    /// The toolchain lacks pieces the NVPTX build needs. Fix: run
    /// `rustup toolchain install` in a workspace whose `rust-toolchain.toml`
    /// pins a nightly with the `rust-src` and `llvm-bitcode-linker-preview`
    /// components (this workspace's does).
    #[error(
        "the Rust toolchain cannot build PTX: it lacks {}; run `rustup toolchain install` in a workspace whose rust-toolchain.toml pins a nightly with the rust-src and llvm-bitcode-linker-preview components (as cavity's does)",
        .0.iter().map(|m| m.what()).collect::<Vec<_>>().join(", ")
    )]
    Toolchain(Vec<Missing>),
    /// `rustc` or `cargo` could not be run, or `cargo metadata` did not
    /// describe the kernel crate. Fix: check the crate path and the
    /// toolchain on the `PATH`.
    #[error("{0}")]
    Cargo(String),
    /// The kernel crate has no library target. Fix: give it `[lib]` with
    /// `crate-type = ["rlib", "cdylib"]`.
    #[error("{0} has no library target to build to PTX")]
    NoLibrary(PathBuf),
    /// cargo failed to build the kernel crate (its errors were printed
    /// above). Fix: the kernel crate's compile errors.
    #[error("building the PTX of {krate} for {arch} failed ({status})")]
    Build {
        /// The kernel crate's manifest.
        krate: PathBuf,
        /// The architecture.
        arch: String,
        /// cargo's exit status.
        status: String,
    },
    /// The launch bounds the kernels declare could not be applied (a
    /// kernel crate that writes `// cavity-launch-bounds` comments of its
    /// own, or a declaration whose entry point the linker dropped). Fix:
    /// declare kernels with `cavity_device::kernel!` only.
    #[error("{ptx}: {message}")]
    LaunchBounds {
        /// The PTX file.
        ptx: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A file of the build could not be read or written.
    #[error("reading or writing {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// A PTX file built by [`PtxBuilder::build`].
#[derive(Clone, Debug)]
pub struct Ptx {
    path: PathBuf,
    sources: Vec<PathBuf>,
    arch: String,
}

impl Ptx {
    /// The `.ptx` file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The source files the PTX was built from (cargo's dependency file):
    /// the kernel crate's and its dependencies'.
    pub fn sources(&self) -> &[PathBuf] {
        &self.sources
    }

    /// The architecture it was built for.
    pub fn arch(&self) -> &str {
        &self.arch
    }

    /// The PTX text.
    ///
    /// # Errors
    /// [`PtxError::Io`] when the file cannot be read.
    pub fn text(&self) -> Result<String, PtxError> {
        std::fs::read_to_string(&self.path).map_err(|source| PtxError::Io {
            path: self.path.clone(),
            source,
        })
    }
}

/// What [`PtxBuilder::build_in_build_script`] did.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// The PTX was built.
    Built(Ptx),
    /// The toolchain cannot build PTX: the step was skipped with a cargo
    /// warning; `reason` says what is missing and how to install it.
    Skipped {
        /// The [`PtxError::Toolchain`] message.
        reason: String,
    },
}

/// Builds one kernel crate to PTX for one architecture.
#[derive(Clone, Debug)]
pub struct PtxBuilder {
    crate_dir: PathBuf,
    arch: String,
    target_dir: Option<PathBuf>,
    rustc: Option<PathBuf>,
}

impl PtxBuilder {
    /// A builder for the kernel crate in `crate_dir` (the directory of its
    /// `Cargo.toml`), for [`DEFAULT_ARCH`].
    pub fn new(crate_dir: impl Into<PathBuf>) -> Self {
        PtxBuilder {
            crate_dir: crate_dir.into(),
            arch: DEFAULT_ARCH.into(),
            target_dir: None,
            rustc: None,
        }
    }

    /// Builds for `arch` (`sm_80` or newer, e.g. `sm_90`).
    pub fn arch(mut self, arch: impl Into<String>) -> Self {
        self.arch = arch.into();
        self
    }

    /// Builds in `dir` (default: `ptx-<arch>` under the kernel crate's
    /// workspace target directory, apart from the host build's profile
    /// directories, whose locks the outer cargo holds; kernel crates built
    /// there one after another share `core` and the device crate).
    pub fn target_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.target_dir = Some(dir.into());
        self
    }

    /// Checks the toolchain of `rustc` (default: the build script's
    /// `RUSTC`, else `rustc` on the path). The build itself runs `CARGO`
    /// (else `cargo`), which a build script gets from the same toolchain.
    pub fn rustc(mut self, rustc: impl Into<PathBuf>) -> Self {
        self.rustc = Some(rustc.into());
        self
    }

    /// Builds the PTX; cargo's output goes to this process's stderr.
    ///
    /// # Errors
    /// [`PtxError::Arch`] for an unsupported architecture,
    /// [`PtxError::Toolchain`] when the toolchain cannot build PTX, and the
    /// other variants when cargo cannot describe or build the crate.
    pub fn build(&self) -> Result<Ptx, PtxError> {
        check_arch(&self.arch)?;
        let rustc = match &self.rustc {
            Some(r) => r.clone(),
            None => std::env::var_os("RUSTC")
                .unwrap_or_else(|| "rustc".into())
                .into(),
        };
        let missing = toolchain::check(&rustc).map_err(PtxError::Cargo)?;
        if !missing.is_empty() {
            return Err(PtxError::Toolchain(missing));
        }
        // Absolute, because cargo runs in the crate's directory.
        let crate_dir = std::fs::canonicalize(&self.crate_dir).map_err(|source| PtxError::Io {
            path: self.crate_dir.clone(),
            source,
        })?;
        let manifest = crate_dir.join("Cargo.toml");
        let krate = describe(&manifest)?;
        let target_dir = match &self.target_dir {
            Some(dir) => dir.clone(),
            None => krate.target_directory.join(format!("ptx-{}", self.arch)),
        };
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(&cargo)
            .current_dir(&crate_dir)
            .args(["rustc", "--manifest-path"])
            .arg(&manifest)
            .args(["-p", &krate.package, "--lib", "--crate-type", "cdylib"])
            .args(["--target", TARGET, "-Zbuild-std=core", "--profile", "ptx"])
            // The profile (GPU-RECIPE: fat LTO, one codegen unit, abort),
            // so that a kernel crate's workspace need not declare it; these
            // settings win over a `[profile.ptx]` it declares.
            .args(["--config", "profile.ptx.inherits=\"release\""])
            .args(["--config", "profile.ptx.panic=\"abort\""])
            .args(["--config", "profile.ptx.lto=\"fat\""])
            .args(["--config", "profile.ptx.codegen-units=1"])
            .arg("--target-dir")
            .arg(&target_dir)
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("RUSTC_WRAPPER")
            .env_remove("RUSTC_WORKSPACE_WRAPPER")
            .env(
                "CARGO_TARGET_NVPTX64_NVIDIA_CUDA_RUSTFLAGS",
                format!("-C target-cpu={}", self.arch),
            )
            .status()
            .map_err(|e| {
                PtxError::Cargo(format!("cannot run {}: {e}", Path::new(&cargo).display()))
            })?;
        if !status.success() {
            return Err(PtxError::Build {
                krate: manifest,
                arch: self.arch.clone(),
                status: status.to_string(),
            });
        }
        let out = target_dir.join(TARGET).join("ptx");
        let dep_info = out.join(format!("{}.d", krate.library));
        let text = std::fs::read_to_string(&dep_info).map_err(|source| PtxError::Io {
            path: dep_info.clone(),
            source,
        })?;
        let built = out.join(format!("{}.ptx", krate.library));
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| PtxError::Io { path, source }
        };
        let ptx = std::fs::read_to_string(&built).map_err(io(&built))?;
        let bounded = launch_bounds::apply(&ptx).map_err(|message| PtxError::LaunchBounds {
            ptx: built.clone(),
            message,
        })?;
        let path = out.join(format!("{}.bounded.ptx", krate.library));
        std::fs::write(&path, bounded).map_err(io(&path))?;
        Ok(Ptx {
            path,
            sources: dep_info_sources(&text),
            arch: self.arch.clone(),
        })
    }

    /// [`PtxBuilder::build`] for a build script: on success prints
    /// `cargo:rerun-if-changed` for every source of the kernels; when the
    /// toolchain cannot build PTX, prints one `cargo:warning` and returns
    /// [`Outcome::Skipped`] (the script reruns when the kernel crate
    /// changes).
    ///
    /// # Errors
    /// As [`PtxBuilder::build`], except [`PtxError::Toolchain`].
    pub fn build_in_build_script(&self) -> Result<Outcome, PtxError> {
        match self.build() {
            Ok(ptx) => {
                for source in ptx.sources() {
                    println!("cargo:rerun-if-changed={}", source.display());
                }
                // The manifests of the crates those sources belong to (a
                // feature of a dependency changes what is built) and the
                // lock files above them.
                for file in manifests_of(ptx.sources()) {
                    println!("cargo:rerun-if-changed={}", file.display());
                }
                println!(
                    "cargo:rerun-if-changed={}",
                    self.crate_dir.join("Cargo.toml").display()
                );
                Ok(Outcome::Built(ptx))
            }
            Err(e @ PtxError::Toolchain(_)) => {
                let reason = e.to_string();
                println!("cargo:warning=GPU kernels not built (CPU backend only): {reason}");
                println!("cargo:rerun-if-changed={}", self.crate_dir.display());
                Ok(Outcome::Skipped { reason })
            }
            Err(e) => Err(e),
        }
    }
}

/// The PTX a build script wrote ([`build_into_out_dir`]).
#[derive(Clone, Debug)]
pub struct Embedded {
    /// The PTX text (empty when the step was skipped).
    pub text: String,
    /// Why the step was skipped (no NVPTX toolchain), if it was.
    pub skipped: Option<String>,
}

/// The build script of a host crate that embeds a kernel crate's PTX:
/// builds the kernel crate at `kernel_crate` (relative to the host crate's
/// `CARGO_MANIFEST_DIR`) for the architecture in `CAVITY_CUDA_ARCH`
/// (default `sm_90`), in the workspace's PTX target directory (`ptx-ARCH`
/// beside the host build's, shared by every kernel crate of the
/// workspace, so that `core` and the device crate are built for the GPU
/// once, not once per host crate and profile), and writes
/// the text to `OUT_DIR/file` (empty, with one cargo warning, when the
/// toolchain cannot build PTX: the CPU backend needs none), for the host
/// crate to `include_str!`.
///
/// # Errors
/// As [`PtxBuilder::build_in_build_script`], and [`PtxError::Io`] when the
/// file cannot be written.
///
/// # Panics
/// Outside a build script (no `CARGO_MANIFEST_DIR` or `OUT_DIR`).
pub fn build_into_out_dir(
    kernel_crate: impl AsRef<Path>,
    file: &str,
) -> Result<Embedded, PtxError> {
    let var = |name: &str| {
        PathBuf::from(
            std::env::var(name).unwrap_or_else(|_| panic!("{name} is set for build scripts")),
        )
    };
    let (manifest, out) = (var("CARGO_MANIFEST_DIR"), var("OUT_DIR"));
    println!("cargo:rerun-if-env-changed=CAVITY_CUDA_ARCH");
    let arch = std::env::var("CAVITY_CUDA_ARCH").unwrap_or_else(|_| "sm_90".into());
    let builder = PtxBuilder::new(manifest.join(kernel_crate)).arch(&arch);
    let embedded = match builder.build_in_build_script()? {
        Outcome::Built(ptx) => Embedded {
            text: ptx.text()?,
            skipped: None,
        },
        Outcome::Skipped { reason } => Embedded {
            text: String::new(),
            skipped: Some(reason),
        },
    };
    let path = out.join(file);
    std::fs::write(&path, &embedded.text).map_err(|source| PtxError::Io { path, source })?;
    Ok(embedded)
}

/// Checks that `arch` is `sm_XX` (optionally with a letter suffix, as
/// `sm_90a`) with `XX` at least [`OLDEST_ARCH`].
///
/// # Errors
/// [`PtxError::Arch`] otherwise.
pub fn check_arch(arch: &str) -> Result<(), PtxError> {
    let version = arch
        .strip_prefix("sm_")
        .map(|v| v.trim_end_matches(|c: char| c.is_ascii_alphabetic()))
        .and_then(|v| v.parse::<u32>().ok());
    match version {
        Some(v) if v >= OLDEST_ARCH => Ok(()),
        _ => Err(PtxError::Arch(arch.into())),
    }
}

/// What `cargo metadata` says of a kernel crate.
struct Described {
    package: String,
    library: String,
    target_directory: PathBuf,
}

/// The package name, library name and workspace target directory of the
/// crate of `manifest`.
fn describe(manifest: &Path) -> Result<Described, PtxError> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(&cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--manifest-path",
        ])
        .arg(manifest)
        .output()
        .map_err(|e| PtxError::Cargo(format!("cannot run cargo metadata: {e}")))?;
    if !output.status.success() {
        return Err(PtxError::Cargo(format!(
            "cargo metadata failed for {}: {}",
            manifest.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    let json: serde_json::Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| PtxError::Cargo(format!("cargo metadata printed no JSON: {e}")))?;
    let wanted = std::fs::canonicalize(manifest).map_err(|source| PtxError::Io {
        path: manifest.into(),
        source,
    })?;
    let package = json["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| {
            p["manifest_path"]
                .as_str()
                .and_then(|m| std::fs::canonicalize(m).ok())
                .is_some_and(|m| m == wanted)
        })
        .ok_or_else(|| {
            PtxError::Cargo(format!(
                "cargo metadata does not list {}",
                manifest.display()
            ))
        })?;
    let library = package["targets"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| {
            t["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k == "lib" || k == "cdylib" || k == "rlib"))
        })
        .and_then(|t| t["name"].as_str())
        .ok_or_else(|| PtxError::NoLibrary(manifest.into()))?;
    Ok(Described {
        package: package["name"].as_str().unwrap_or_default().into(),
        library: library.replace('-', "_"),
        target_directory: json["target_directory"].as_str().unwrap_or("target").into(),
    })
}

/// The prerequisites listed by a make-style dependency file
/// (`target: a.rs b\ c.rs ...`, spaces in paths escaped).
/// For each source, the nearest `Cargo.toml` above it and the nearest
/// `Cargo.lock`, without repeats, in order.
fn manifests_of(sources: &[PathBuf]) -> Vec<PathBuf> {
    let mut files = std::collections::BTreeSet::new();
    for source in sources {
        for name in ["Cargo.toml", "Cargo.lock"] {
            if let Some(found) = source
                .ancestors()
                .skip(1)
                .map(|dir| dir.join(name))
                .find(|file| file.is_file())
            {
                files.insert(found);
            }
        }
    }
    files.into_iter().collect()
}

fn dep_info_sources(text: &str) -> Vec<PathBuf> {
    let Some(first) = text.lines().next() else {
        return Vec::new();
    };
    // The target ends at the first unescaped ": ".
    let mut from = 0;
    let rest = loop {
        match first[from..].find(": ") {
            Some(i) if first[..from + i].ends_with('\\') => from += i + 2,
            Some(i) => break &first[from + i + 2..],
            None => return Vec::new(),
        }
    };
    let mut sources = Vec::new();
    let mut current = String::new();
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&' ') => {
                current.push(' ');
                chars.next();
            }
            ' ' => {
                if !current.is_empty() {
                    sources.push(PathBuf::from(std::mem::take(&mut current)));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        sources.push(PathBuf::from(current));
    }
    sources
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sources_crate_manifest_and_lock_file_are_watched() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let root = std::fs::canonicalize(root).unwrap();
        let sources = [
            root.join("crates/cavity-device/src/kernel.rs"),
            root.join("crates/cavity-device/src/dynamic/cleanup.rs"),
        ];
        assert_eq!(
            manifests_of(&sources),
            [
                root.join("Cargo.lock"),
                root.join("crates/cavity-device/Cargo.toml"),
            ]
        );
    }

    #[test]
    fn architectures() {
        for ok in ["sm_80", "sm_86", "sm_90", "sm_90a", "sm_100"] {
            assert!(check_arch(ok).is_ok(), "{ok}");
        }
        for bad in ["sm_75", "sm_", "90", "compute_90", "sm_x"] {
            let e = check_arch(bad).unwrap_err();
            assert!(e.to_string().contains("sm_80 or newer"), "{bad}: {e}");
        }
    }

    #[test]
    fn dependency_files() {
        let text = "/t/k.ptx: /w/src/lib.rs /w/my\\ dir/a.rs /w/dev/src/b.rs\n\n/w/src/lib.rs:\n";
        assert_eq!(
            dep_info_sources(text),
            ["/w/src/lib.rs", "/w/my dir/a.rs", "/w/dev/src/b.rs"].map(PathBuf::from)
        );
        assert!(dep_info_sources("").is_empty());
    }

    #[test]
    fn the_toolchain_error_names_what_is_missing() {
        let e = PtxError::Toolchain(vec![Missing::RustSrc, Missing::BitcodeLinker]);
        let text = e.to_string();
        assert!(
            text.contains("the rust-src component, the llvm-bitcode-linker-preview component"),
            "{text}"
        );
        assert!(text.contains("rustup toolchain install"), "{text}");
    }

    #[test]
    fn a_stable_toolchain_skips_the_step() {
        // A `rustc` that reports a stable release and an empty sysroot.
        let dir = tempfile::tempdir().unwrap();
        let rustc = dir.path().join("rustc");
        std::fs::write(
            &rustc,
            format!(
                "#!/bin/sh\nif [ \"$1\" = -vV ]; then printf 'rustc 1.91.0\\nhost: x86_64-unknown-linux-gnu\\nrelease: 1.91.0\\n'; else echo {}; fi\n",
                dir.path().display()
            ),
        )
        .unwrap();
        std::process::Command::new("chmod")
            .arg("+x")
            .arg(&rustc)
            .status()
            .unwrap();
        let device = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cavity-device");
        let builder = PtxBuilder::new(&device).rustc(&rustc);
        match builder.build() {
            Err(PtxError::Toolchain(missing)) => assert_eq!(
                missing,
                vec![Missing::Nightly, Missing::RustSrc, Missing::BitcodeLinker]
            ),
            other => panic!("{other:?}"),
        }
        match builder
            .build_in_build_script()
            .expect("skipped, not failed")
        {
            Outcome::Skipped { reason } => {
                assert!(reason.contains("a nightly toolchain"), "{reason}")
            }
            Outcome::Built(_) => panic!("built without a toolchain"),
        }
        // A wrong architecture is an error before anything runs.
        let e = builder.arch("sm_70").build_in_build_script().unwrap_err();
        assert!(matches!(e, PtxError::Arch(_)), "{e}");
    }

    #[test]
    fn describes_the_device_crate() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cavity-device");
        let d = describe(&dir.join("Cargo.toml")).expect("cargo metadata");
        assert_eq!(d.package, "cavity-device");
        assert_eq!(d.library, "cavity_device");
        let e = describe(Path::new("/nonexistent/Cargo.toml"))
            .err()
            .expect("no crate");
        assert!(matches!(e, PtxError::Cargo(_)), "{e}");
    }
}

//! What the NVPTX build needs from the Rust toolchain, checked before
//! cargo runs so that a missing piece is named instead of failing deep in
//! the build of `core` (see `../shared/GPU-RECIPE.md`, "Toolchain").

use std::path::Path;
use std::process::Command;

/// A piece of the toolchain the PTX build needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Missing {
    /// A nightly compiler: `-Zbuild-std` builds `core` for
    /// `nvptx64-nvidia-cuda`, whose standard library is not published.
    Nightly,
    /// The `rust-src` component (the source of `core`).
    RustSrc,
    /// The `llvm-bitcode-linker-preview` component, which links the crates
    /// into one `.ptx`.
    BitcodeLinker,
}

impl Missing {
    /// What is missing, in words.
    pub fn what(self) -> &'static str {
        match self {
            Missing::Nightly => "a nightly toolchain (for -Zbuild-std)",
            Missing::RustSrc => "the rust-src component",
            Missing::BitcodeLinker => "the llvm-bitcode-linker-preview component",
        }
    }
}

/// The pieces missing from the toolchain whose `rustc -vV` printed
/// `version`, with sysroot `sysroot` and host triple `host`; empty when the
/// PTX can be built.
pub fn missing_pieces(version: &str, sysroot: &Path, host: &str) -> Vec<Missing> {
    let mut missing = Vec::new();
    let release = version
        .lines()
        .find_map(|l| l.strip_prefix("release: "))
        .unwrap_or("");
    if !release.contains("nightly") && !release.contains("-dev") {
        missing.push(Missing::Nightly);
    }
    let rustlib = sysroot.join("lib").join("rustlib");
    if !rustlib.join("src/rust/library/core/Cargo.toml").is_file() {
        missing.push(Missing::RustSrc);
    }
    let bin = rustlib.join(host).join("bin");
    let linker = ["self-contained/llvm-bitcode-linker", "llvm-bitcode-linker"];
    if !linker.iter().any(|l| bin.join(l).is_file()) {
        missing.push(Missing::BitcodeLinker);
    }
    missing
}

/// The pieces missing from the toolchain of `rustc` (the build script's
/// `RUSTC`, else `rustc` on the path); `Err` with a message when `rustc`
/// cannot be run.
pub fn check(rustc: &Path) -> Result<Vec<Missing>, String> {
    let run = |args: &[&str]| {
        Command::new(rustc)
            .args(args)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", rustc.display()))
            .and_then(|o| {
                if o.status.success() {
                    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
                } else {
                    Err(format!(
                        "{} {} failed ({})",
                        rustc.display(),
                        args.join(" "),
                        o.status
                    ))
                }
            })
    };
    let version = run(&["-vV"])?;
    let sysroot = run(&["--print", "sysroot"])?;
    let host = version
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .unwrap_or("")
        .to_string();
    Ok(missing_pieces(&version, Path::new(sysroot.trim()), &host))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NIGHTLY: &str = "rustc 1.101.0-nightly (92b5b8c87 2026-10-29)\nhost: x86_64-unknown-linux-gnu\nrelease: 1.101.0-nightly\n";
    const STABLE: &str =
        "rustc 1.91.0 (abc 2026-10-01)\nhost: x86_64-unknown-linux-gnu\nrelease: 1.91.0\n";
    const HOST: &str = "x86_64-unknown-linux-gnu";

    fn sysroot(src: bool, linker: Option<&str>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let rustlib = dir.path().join("lib/rustlib");
        if src {
            let core = rustlib.join("src/rust/library/core");
            std::fs::create_dir_all(&core).unwrap();
            std::fs::write(core.join("Cargo.toml"), "").unwrap();
        }
        if let Some(l) = linker {
            let path = rustlib.join(HOST).join("bin").join(l);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        dir
    }

    #[test]
    fn a_complete_nightly_misses_nothing() {
        for linker in ["self-contained/llvm-bitcode-linker", "llvm-bitcode-linker"] {
            let s = sysroot(true, Some(linker));
            assert_eq!(missing_pieces(NIGHTLY, s.path(), HOST), vec![]);
        }
    }

    #[test]
    fn each_missing_piece_is_named() {
        let s = sysroot(false, None);
        assert_eq!(
            missing_pieces(STABLE, s.path(), HOST),
            vec![Missing::Nightly, Missing::RustSrc, Missing::BitcodeLinker]
        );
        let s = sysroot(true, None);
        assert_eq!(
            missing_pieces(NIGHTLY, s.path(), HOST),
            vec![Missing::BitcodeLinker]
        );
        let s = sysroot(false, Some("llvm-bitcode-linker"));
        assert_eq!(
            missing_pieces(NIGHTLY, s.path(), HOST),
            vec![Missing::RustSrc]
        );
        // The linker of another host does not count.
        let s = sysroot(true, Some("llvm-bitcode-linker"));
        assert_eq!(
            missing_pieces(NIGHTLY, s.path(), "aarch64-unknown-linux-gnu"),
            vec![Missing::BitcodeLinker]
        );
    }

    #[test]
    fn this_workspace_toolchain_is_complete() {
        // The pinned toolchain (rust-toolchain.toml) has every piece: the
        // workspace builds its own kernels with it.
        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        assert_eq!(check(Path::new(&rustc)), Ok(vec![]));
    }
}

// Builds the device crate to PTX with rustc's NVPTX backend (see
// ../shared/GPU-RECIPE.md): `cargo rustc --crate-type cdylib --target
// nvptx64-nvidia-cuda -Zbuild-std=core --profile ptx`. Shared by the host
// crate's build script and `cargo xtask build-ptx` through `include!`.

/// Builds `cavity-device` for `arch` (e.g. "sm_90") into `target_dir` and
/// returns the path of the PTX file. The kernels use `cp.async`, so `arch`
/// must be `sm_80` or newer.
fn build_ptx(
    workspace: &std::path::Path,
    target_dir: &std::path::Path,
    arch: &str,
) -> Result<std::path::PathBuf, String> {
    let version = arch
        .strip_prefix("sm_")
        .and_then(|v| v.trim_end_matches(|c: char| c.is_ascii_alphabetic()).parse::<u32>().ok());
    match version {
        Some(v) if v >= 80 => {}
        _ => {
            return Err(format!(
                "unsupported CUDA architecture {arch:?}: use sm_80 or newer (e.g. sm_90); \
                 the kernels copy patches with cp.async"
            ));
        }
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = std::process::Command::new(cargo)
        .current_dir(workspace)
        .args(["rustc", "-p", "cavity-device", "--lib", "--crate-type", "cdylib"])
        .args(["--target", "nvptx64-nvidia-cuda", "-Zbuild-std=core"])
        .args(["--profile", "ptx", "--target-dir"])
        .arg(target_dir)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env(
            "CARGO_TARGET_NVPTX64_NVIDIA_CUDA_RUSTFLAGS",
            format!("-C target-cpu={arch}"),
        )
        .status()
        .map_err(|e| format!("cannot run cargo to build the PTX: {e}"))?;
    if !status.success() {
        return Err(format!(
            "building the PTX for {arch} failed ({status}); the pinned nightly needs the \
             rust-src, llvm-tools and llvm-bitcode-linker-preview components \
             (`rustup toolchain install` in the workspace)"
        ));
    }
    Ok(target_dir.join("nvptx64-nvidia-cuda/ptx/cavity_device.ptx"))
}

//! Builds `apps/kernels` (every application's kernel crate, linked into
//! one module) to PTX with `cavity-ptx-builder` for `CAVITY_CUDA_ARCH`
//! (default `sm_90`) into `OUT_DIR/cavity_app_kernels.ptx`. Without the
//! NVPTX toolchain the step is skipped with one warning and the PTX is
//! empty (the CPU backend needs none).

use cavity_ptx_builder::{Outcome, PtxBuilder};

fn main() {
    let manifest = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    println!("cargo:rerun-if-env-changed=CAVITY_CUDA_ARCH");
    let arch = std::env::var("CAVITY_CUDA_ARCH").unwrap_or_else(|_| "sm_90".into());
    let builder = PtxBuilder::new(manifest.join("../kernels"))
        .arch(&arch)
        .target_dir(out.join("ptx-target"));
    let text = match builder.build_in_build_script() {
        Ok(Outcome::Built(ptx)) => ptx.text().unwrap_or_else(|e| panic!("{e}")),
        Ok(Outcome::Skipped { .. }) => String::new(),
        Err(e) => panic!("{e}"),
    };
    std::fs::write(out.join("cavity_app_kernels.ptx"), text).unwrap();
}

//! Builds the PTX of `tests/kernels` (a kernel crate outside the core, as a
//! user writes one) with `cavity-ptx-builder` into OUT_DIR, where
//! `tests/user_kernels.rs` embeds it. Without a toolchain that can build
//! PTX the step is skipped with one warning and the PTX is empty (the CPU
//! backend needs none).

use cavity_ptx_builder::{Outcome, PtxBuilder};

fn main() {
    let manifest = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    println!("cargo:rerun-if-env-changed=CAVITY_CUDA_ARCH");
    let arch = std::env::var("CAVITY_CUDA_ARCH").unwrap_or_else(|_| "sm_90".into());
    let builder = PtxBuilder::new(manifest.join("kernels"))
        .arch(&arch)
        .target_dir(out.join("ptx-target"));
    let text = match builder.build_in_build_script() {
        Ok(Outcome::Built(ptx)) => ptx.text().unwrap_or_else(|e| panic!("{e}")),
        Ok(Outcome::Skipped { .. }) => String::new(),
        Err(e) => panic!("{e}"),
    };
    std::fs::write(out.join("cavity_test_kernels.ptx"), text).unwrap();
}

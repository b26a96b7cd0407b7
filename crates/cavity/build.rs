//! Builds the PTX of the device crate with `cavity-ptx-builder` and places
//! it in OUT_DIR, where `src/backend/cuda.rs` embeds it. The architecture
//! is `sm_90` unless `CAVITY_CUDA_ARCH` names another (e.g. `sm_80`).
//! Without a toolchain that can build PTX the step is skipped with one
//! warning: the PTX is empty and `ptx_missing.rs` holds the reason, which
//! the GPU backend reports.

use cavity_ptx_builder::{Outcome, PtxBuilder};

fn main() {
    let manifest = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    println!("cargo:rerun-if-env-changed=CAVITY_CUDA_ARCH");
    let arch = std::env::var("CAVITY_CUDA_ARCH").unwrap_or_else(|_| "sm_90".into());
    let builder = PtxBuilder::new(manifest.join("../cavity-device"))
        .arch(&arch)
        .target_dir(out.join("ptx-target"));
    let (text, missing) = match builder.build_in_build_script() {
        Ok(Outcome::Built(ptx)) => {
            let text = ptx.text().unwrap_or_else(|e| panic!("{e}"));
            (text, None)
        }
        Ok(Outcome::Skipped { reason }) => (String::new(), Some(reason)),
        Err(e) => panic!("{e}"),
    };
    // The key of the kernels' cache (`src/backend/cubin_cache.rs`): any
    // hash that changes with the text does.
    let mut hasher = std::hash::DefaultHasher::new();
    std::hash::Hash::hash(&text, &mut hasher);
    let hash = std::hash::Hasher::finish(&hasher);
    std::fs::write(out.join("cavity_device.ptx"), text).unwrap();
    std::fs::write(out.join("ptx_hash.rs"), format!("0x{hash:016x}")).unwrap();
    std::fs::write(out.join("ptx_missing.rs"), format!("{missing:?}")).unwrap();
}

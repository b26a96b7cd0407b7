//! Builds the PTX of the device crate with `cavity-ptx-builder` and places
//! it in OUT_DIR, where `src/backend/cuda/context.rs` embeds it. The architecture
//! is `sm_90` unless `CAVITY_CUDA_ARCH` names another (e.g. `sm_80`).
//! Without a toolchain that can build PTX the step is skipped with one
//! warning: the PTX is empty and `ptx_missing.rs` holds the reason, which
//! the GPU backend reports.

use cavity_ptx_builder::build_into_out_dir;

fn main() {
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let embedded = build_into_out_dir("../cavity-device", "cavity_device.ptx")
        .unwrap_or_else(|e| panic!("{e}"));
    // The key of the kernels' cache (`src/backend/cubin_cache.rs`): any
    // hash that changes with the text does.
    let mut hasher = std::hash::DefaultHasher::new();
    std::hash::Hash::hash(&embedded.text, &mut hasher);
    let hash = std::hash::Hasher::finish(&hasher);
    std::fs::write(out.join("ptx_hash.rs"), format!("0x{hash:016x}")).unwrap();
    std::fs::write(
        out.join("ptx_missing.rs"),
        format!("{:?}", embedded.skipped),
    )
    .unwrap();
}

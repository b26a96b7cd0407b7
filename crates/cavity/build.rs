//! Builds the PTX of the device crate and places it in OUT_DIR, where
//! `src/gpu` embeds it. The architecture is `sm_90` unless
//! `CAVITY_CUDA_ARCH` names another (e.g. `sm_80`).

include!("build/ptx.rs");

fn main() {
    let manifest = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let workspace = manifest.join("../..");
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    println!("cargo:rerun-if-changed=../cavity-device/src");
    println!("cargo:rerun-if-changed=../cavity-device/Cargo.toml");
    println!("cargo:rerun-if-changed=build/ptx.rs");
    println!("cargo:rerun-if-env-changed=CAVITY_CUDA_ARCH");
    let arch = std::env::var("CAVITY_CUDA_ARCH").unwrap_or_else(|_| "sm_90".into());
    match build_ptx(&workspace, &out.join("ptx-target"), &arch) {
        Ok(ptx) => {
            let text = std::fs::read_to_string(&ptx).unwrap();
            std::fs::write(out.join("cavity_device.ptx"), launch_bounds(&text)).unwrap();
        }
        Err(e) => panic!("{e}"),
    }
}

/// Adds PTX performance directives to the patch kernels (the equivalent of
/// CUDA's `__launch_bounds__(256, 4)`, which Rust cannot express): at most
/// 256 threads per block and at least 4 resident blocks per SM, so ptxas
/// keeps registers at or under 64 per thread. The block size must match
/// `cavity_device::query::QUERY_BLOCK_DIM`.
fn launch_bounds(ptx: &str) -> String {
    let mut out = String::with_capacity(ptx.len() + 4096);
    let mut in_patch_entry = false;
    for line in ptx.lines() {
        if line.contains(".entry query_") || line.contains(".entry vertex_normals") {
            in_patch_entry = true;
        }
        out.push_str(line);
        out.push('\n');
        if in_patch_entry && line.trim_start().starts_with(')') {
            out.push_str(".maxntid 256, 1, 1\n.minnctapersm 4\n");
            in_patch_entry = false;
        }
    }
    out
}

//! Builds the PTX of the device crate and places it in OUT_DIR, where
//! `src/gpu` embeds it. The architecture is `sm_90` unless
//! `CAVITY_CUDA_ARCH` names another (e.g. `sm_80`).

include!("build/ptx.rs");

use cavity_device::query::Query;

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
            let text = launch_bounds(&std::fs::read_to_string(&ptx).unwrap());
            // The key of the kernels' cache (`src/backend/cubin_cache.rs`):
            // any hash that changes with the text does.
            let mut hasher = std::hash::DefaultHasher::new();
            std::hash::Hash::hash(&text, &mut hasher);
            let hash = std::hash::Hasher::finish(&hasher);
            std::fs::write(out.join("cavity_device.ptx"), text).unwrap();
            std::fs::write(out.join("ptx_hash.rs"), format!("0x{hash:016x}")).unwrap();
        }
        Err(e) => panic!("{e}"),
    }
}

/// Adds PTX performance directives to the patch kernels (the equivalent of
/// CUDA's `__launch_bounds__`, which Rust cannot express): each kernel of
/// query `q` (named `..._vv`, `..._ef`, ...; `vertex_normals` runs FV) gets
/// at most `q.launch_bounds().0` threads per block and at least `.1`
/// resident blocks per SM, which caps ptxas's register allocation; the
/// dynamic kernels (`dynamic_*`) get 256 threads and two blocks.
fn launch_bounds(ptx: &str) -> String {
    let mut out = String::with_capacity(ptx.len() + 4096);
    let mut bounds = None;
    for line in ptx.lines() {
        if let Some(rest) = line.split(".entry ").nth(1) {
            let name = rest.split('(').next().unwrap_or("");
            bounds = if name == "vertex_normals" {
                Some(Query::FV.launch_bounds())
            } else if name.starts_with("dynamic_") {
                // 256 threads, two blocks per SM: caps registers at 128 so
                // that two blocks of the update kernel (about 100 KB of
                // shared memory each) share an SM.
                Some((256, 2))
            } else if name.starts_with("query_") {
                Query::ALL
                    .into_iter()
                    .find(|q| name.ends_with(&format!("_{}", q.name().to_lowercase())))
                    .map(|q| q.launch_bounds())
            } else {
                None
            };
        }
        out.push_str(line);
        out.push('\n');
        if line.trim_start().starts_with(')')
            && let Some((threads, blocks)) = bounds.take()
        {
            out.push_str(&format!(
                ".maxntid {threads}, 1, 1\n.minnctapersm {blocks}\n"
            ));
        }
    }
    out
}

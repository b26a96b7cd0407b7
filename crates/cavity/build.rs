//! Builds the PTX of the device crate with `cavity-ptx-builder` and places
//! it in OUT_DIR, where `src/backend/cuda.rs` embeds it. The architecture
//! is `sm_90` unless `CAVITY_CUDA_ARCH` names another (e.g. `sm_80`).
//! Without a toolchain that can build PTX the step is skipped with one
//! warning: the PTX is empty and `ptx_missing.rs` holds the reason, which
//! the GPU backend reports.

use cavity_device::query::Query;
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
            (launch_bounds(&text), None)
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

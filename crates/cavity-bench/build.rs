//! Builds the PTX of `kernels` (the baselines and the neighbour-sum
//! workload) with `cavity-ptx-builder` into OUT_DIR, where `src/launch.rs`
//! embeds it. Without a toolchain that can build PTX the step is skipped
//! with one warning and the PTX is empty (the CPU backend needs none).

use cavity_ptx_builder::build_into_out_dir;

fn main() {
    build_into_out_dir("kernels", "cavity_bench_kernels.ptx").unwrap_or_else(|e| panic!("{e}"));
}

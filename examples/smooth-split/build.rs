//! Compiles the example's kernel crate (`kernels/`) to PTX with
//! `cavity-ptx-builder`, for the architecture in `CAVITY_CUDA_ARCH`
//! (default `sm_90`), into `OUT_DIR/smooth_split_kernels.ptx`, which
//! `src/lib.rs` embeds. Without the nightly NVPTX toolchain the step is
//! skipped with one warning and the PTX is empty: the CPU backend needs
//! none.

use cavity_ptx_builder::build_into_out_dir;

fn main() {
    build_into_out_dir("kernels", "smooth_split_kernels.ptx").unwrap_or_else(|e| panic!("{e}"));
}

//! Builds `apps/kernels` (every application's kernel crate, linked into
//! one module) to PTX with `cavity-ptx-builder` for `CAVITY_CUDA_ARCH`
//! (default `sm_90`) into `OUT_DIR/cavity_app_kernels.ptx`. Without the
//! NVPTX toolchain the step is skipped with one warning and the PTX is
//! empty (the CPU backend needs none).

use cavity_ptx_builder::build_into_out_dir;

fn main() {
    build_into_out_dir("../kernels", "cavity_app_kernels.ptx").unwrap_or_else(|e| panic!("{e}"));
}

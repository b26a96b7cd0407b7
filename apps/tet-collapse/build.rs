//! Builds the PTX of `kernels` (this application's kernel crate) with
//! `cavity-ptx-builder` into OUT_DIR, where `cavity::kernel_module!` embeds
//! it. Without a toolchain that can build PTX the step is skipped with one
//! warning and the PTX is empty (the CPU backend needs none).

fn main() {
    cavity_ptx_builder::build_into_out_dir("kernels", "cavity_tet_collapse_kernels.ptx")
        .unwrap_or_else(|e| panic!("{e}"));
}

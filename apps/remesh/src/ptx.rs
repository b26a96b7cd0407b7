//! The remeshing's kernels (`cavity-remesh-kernels`) as this crate's own
//! PTX module, loaded at the first run on the GPU.

cavity::kernel_module!("cavity_remesh_kernels.ptx");

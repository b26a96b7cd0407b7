//! Kernel declarations against the PTX (`cavity_device::kernel`): the GPU
//! backend refuses to load a kernel whose declared parameters disagree
//! with its entry point's.
//!
//! Runs with `CAVITY_TEST_DEVICE=cuda` (on the GPU machine); elsewhere
//! there is no PTX loaded and the test says so.

use cavity::backend::BackendError;
use cavity::backend::cuda::CudaBackend;
use cavity::backend::cuda::cubin_cache::KernelOrigin;
use cavity_device::block::Block;
use cavity_device::dynamic::cleanup::Compact;
use cavity_device::dynamic::layout::RawDynamicMesh;
use cavity_device::kernel::{Kernel, Launch, LaunchBounds};

/// A kernel whose declaration disagrees with the PTX's entry point: the
/// name of a real kernel (`Compact`, one `RawDynamicMesh` parameter) with
/// a `u32` parameter instead.
enum Mismatched {}

// SAFETY: never launched; only loaded, which must refuse it.
unsafe impl Kernel for Mismatched {
    const NAME: &'static str = <Compact as Kernel>::NAME;
    const BOUNDS: LaunchBounds = <Compact as Kernel>::BOUNDS;
    const HOST_ZEROED_SHARED: bool = false;
    type Params = (u32,);
    unsafe fn run<B: Block>(_: &mut Launch<'_, B>, _: (u32,)) {}
}

#[test]
#[ignore = "GPU only (issue 53 item 5): CAVITY_TEST_DEVICE=cuda, cargo test -- --include-ignored"]
fn a_declaration_that_disagrees_with_the_ptx_is_refused() {
    cavity_tests::require_gpu();
    let gpu = CudaBackend::new().expect("GPU");
    gpu.load::<Compact>(0).expect("the real declaration loads");
    match gpu.load::<Mismatched>(0) {
        Err(BackendError::KernelSignature {
            declared, found, ..
        }) => {
            assert_eq!(declared, vec![4]);
            assert_eq!(found, vec![size_of::<RawDynamicMesh>()]);
        }
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("a mismatched declaration was loaded"),
    }
}

#[test]
#[ignore = "GPU only (issue 53 item 5): CAVITY_TEST_DEVICE=cuda, cargo test -- --include-ignored"]
fn the_same_ptx_is_loaded_once() {
    cavity_tests::require_gpu();
    let gpu = CudaBackend::new().expect("GPU");
    let again = gpu.add_kernels(cavity::backend::cuda::PTX).expect("adds");
    assert!(matches!(again, KernelOrigin::Loaded), "{again:?}");
    gpu.load::<Compact>(0).expect("still found");
}

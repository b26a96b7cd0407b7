//! The GPU kernels' cache (`cavity::backend::cuda::cubin_cache`): the first
//! backend compiles the kernels into the cache directory, the next loads
//! them from it, a truncated or damaged cache file is compiled again, and
//! the kernels run the same whichever way they were loaded (the VV query
//! against the CPU backend's).
//!
//! Runs with `CAVITY_TEST_DEVICE=cuda` (on the GPU machine); elsewhere
//! there is no GPU whose kernels could be cached and the test says so.

use cavity::backend::cpu::CpuBackend;
use cavity::backend::cuda::CudaBackend;
use cavity::backend::cuda::cubin_cache::KernelOrigin;
use cavity::{PatchedMesh, Query};
use cavity_tests::grid;

/// The VV query on `gpu` equals the CPU backend's.
fn check_runs(gpu: CudaBackend) {
    let mesh = grid(9, 7, &[false, true, true], false, &[3, 20]);
    let patched = PatchedMesh::new(&mesh, 16).expect("patches");
    let got = gpu.query(&patched, Query::VV).expect("GPU query");
    let expected = CpuBackend::new().query(&patched, Query::VV);
    assert_eq!(got, expected);
}

#[test]
#[ignore = "GPU only (issue 53 item 5): CAVITY_TEST_DEVICE=cuda, cargo test -- --include-ignored"]
fn kernels_are_compiled_once_then_loaded_from_the_cache() {
    cavity_tests::require_gpu();
    let dir = tempfile::tempdir().expect("temporary directory");
    // SAFETY: the only test of this binary sets the variable before any
    // other thread of it reads the environment.
    unsafe { std::env::set_var("CAVITY_CACHE_DIR", dir.path()) };

    let compiles = std::cell::Cell::new(0);
    let notice = || compiles.set(compiles.get() + 1);
    let first = CudaBackend::with_notice(&notice).expect("a GPU");
    assert_eq!(compiles.get(), 1, "told before compiling");
    let KernelOrigin::Compiled {
        saved: Some(path), ..
    } = first.kernel_origin().clone()
    else {
        panic!(
            "an empty cache compiles and saves: {:?}",
            first.kernel_origin()
        );
    };
    assert!(path.starts_with(dir.path()), "{}", path.display());
    assert!(std::fs::metadata(&path).expect("the cache file").len() > 0);
    assert!(first.kernel_origin().note().is_some());
    check_runs(first);

    let second = CudaBackend::with_notice(&notice).expect("a GPU");
    assert_eq!(compiles.get(), 1, "nothing compiled");
    assert_eq!(second.kernel_origin(), &KernelOrigin::Cached(path.clone()));
    assert_eq!(second.kernel_origin().note(), None);
    check_runs(second);

    // A file cut short (a crash while it was written, a full disk) is
    // caught before the driver reads it, as is one overwritten: each is
    // compiled again, with the notice, into the same file.
    let whole = std::fs::read(&path).expect("the cache file");
    let damaged: [&[u8]; 2] = [&whole[..whole.len() / 2], b"not a cubin"];
    for (i, bytes) in damaged.into_iter().enumerate() {
        std::fs::write(&path, bytes).expect("damaging the cache file");
        let again = CudaBackend::with_notice(&notice).expect("a GPU");
        assert_eq!(compiles.get(), 2 + i, "told again");
        assert!(
            matches!(again.kernel_origin(), KernelOrigin::Compiled { saved: Some(p), .. } if *p == path),
            "damaged file {i} is compiled again: {:?}",
            again.kernel_origin()
        );
        assert!(std::fs::metadata(&path).expect("the cache file").len() > 100);
        check_runs(again);
    }
}

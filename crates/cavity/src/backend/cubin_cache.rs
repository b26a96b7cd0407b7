//! The device crate's PTX compiled for the GPU at hand once and kept as a
//! cubin in the user's cache directory, so that later runs load machine
//! code instead of asking the driver to find its JIT result for 10 MB of
//! PTX (measured on the H100: 0.004 s against 0.05 s a run; the first
//! compilation takes about 35 s).
//!
//! The cache file's name holds a hash of the PTX (taken at build time), the
//! device's compute capability and the driver's version, so a new build, a
//! different GPU or a driver update compiles again. The directory is
//! `$CAVITY_CACHE_DIR` when set, else `cavity` in the platform's cache
//! directory (`$XDG_CACHE_HOME` or `~/.cache` on Linux).
//! `CUDA_CACHE_DISABLE=1`, NVIDIA's switch for the driver's own JIT cache,
//! turns this cache off as well. Any failure to read or write the cache
//! falls back to the driver's loading of the PTX: the cache only saves
//! time.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::ptr::null_mut;
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::sys::{self, CUdevice_attribute, CUjitInputType};
use cudarc::driver::{CudaContext, CudaModule, DriverError};
use cudarc::nvrtc::Ptx;

/// Where the kernels a backend runs came from.
#[derive(Clone, Debug, PartialEq)]
pub enum KernelOrigin {
    /// Loaded from the cubin cached at this path by an earlier run.
    Cached(PathBuf),
    /// Compiled from the PTX in this run (`seconds`), and saved to `saved`
    /// when the cache could be written.
    Compiled {
        /// Seconds the compilation took.
        seconds: f64,
        /// The cache file written, if any.
        saved: Option<PathBuf>,
    },
    /// The PTX handed to the driver (the cache is off or unusable).
    Driver,
}

impl KernelOrigin {
    /// A sentence for the user when the kernels were compiled in this run
    /// (the only case that takes noticeable time); `None` otherwise.
    pub fn note(&self) -> Option<String> {
        match self {
            KernelOrigin::Compiled { seconds, saved } => Some(match saved {
                Some(path) => format!(
                    "compiled the GPU kernels for this device in {seconds:.1} s (once: kept in {})",
                    path.display()
                ),
                None => format!(
                    "compiled the GPU kernels for this device in {seconds:.1} s (the cache directory could not be written; set CAVITY_CACHE_DIR to keep them)"
                ),
            }),
            _ => None,
        }
    }
}

/// Loads `ptx` (whose build-time hash is `ptx_hash`) into `ctx`: from the
/// cache when it holds a cubin for this PTX, device and driver; else
/// calls `before_compile` (a long wait follows: a program can tell its
/// user), compiles it, loads the result and saves it to the cache.
///
/// # Errors
/// The driver's error when the PTX does not load (for example PTX built
/// for a newer architecture than the device's).
pub fn load(
    ctx: &Arc<CudaContext>,
    ptx: &str,
    ptx_hash: u64,
    before_compile: &dyn Fn(),
) -> Result<(Arc<CudaModule>, KernelOrigin), DriverError> {
    let Some(path) = cache_file(ctx, ptx_hash) else {
        return Ok((ctx.load_module(Ptx::from_src(ptx))?, KernelOrigin::Driver));
    };
    if let Ok(cubin) = std::fs::read(&path) {
        match ctx.load_module(Ptx::from_binary(cubin)) {
            Ok(module) => return Ok((module, KernelOrigin::Cached(path))),
            // A damaged or foreign file: compiled again below.
            Err(_) => {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    before_compile();
    let started = Instant::now();
    let Ok(cubin) = compile(ctx, ptx) else {
        // The driver's own loading gives the error worth reporting.
        return Ok((ctx.load_module(Ptx::from_src(ptx))?, KernelOrigin::Driver));
    };
    let seconds = started.elapsed().as_secs_f64();
    let module = ctx.load_module(Ptx::from_binary(cubin.clone()))?;
    let saved = save(&path, &cubin).then_some(path);
    Ok((module, KernelOrigin::Compiled { seconds, saved }))
}

/// The cache file for `ptx_hash` on this device and driver, or `None` when
/// the cache is off or has no directory.
fn cache_file(ctx: &CudaContext, ptx_hash: u64) -> Option<PathBuf> {
    if std::env::var_os("CUDA_CACHE_DISABLE").is_some_and(|v| v == "1") {
        return None;
    }
    let dir = match std::env::var_os("CAVITY_CACHE_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => dirs::cache_dir()?.join("cavity"),
    };
    let major = ctx
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
        .ok()?;
    let minor = ctx
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
        .ok()?;
    let mut driver = 0;
    // SAFETY: `driver` is a valid place for the version the call writes.
    unsafe { sys::cuDriverGetVersion(&mut driver) }
        .result()
        .ok()?;
    Some(dir.join(format!(
        "kernels-{ptx_hash:016x}-sm_{major}{minor}-driver{driver}.cubin"
    )))
}

/// Compiles `ptx` for the device of `ctx` with the driver's linker and
/// returns the cubin.
fn compile(ctx: &CudaContext, ptx: &str) -> Result<Vec<u8>, DriverError> {
    ctx.bind_to_thread()?;
    let source =
        CString::new(ptx).map_err(|_| DriverError(sys::CUresult::CUDA_ERROR_INVALID_PTX))?;
    let mut state: sys::CUlinkState = null_mut();
    // SAFETY: no options are passed; `state` receives the new link state.
    unsafe { sys::cuLinkCreate_v2(0, null_mut(), null_mut(), &mut state) }.result()?;
    // SAFETY: `state` is the live link state created above; `source` is a
    // NUL-terminated text that outlives the call, and the size counts its
    // NUL as the driver expects for PTX.
    let linked = unsafe {
        sys::cuLinkAddData_v2(
            state,
            CUjitInputType::CU_JIT_INPUT_PTX,
            source.as_ptr().cast_mut().cast(),
            source.as_bytes_with_nul().len(),
            c"cavity_device.ptx".as_ptr(),
            0,
            null_mut(),
            null_mut(),
        )
    }
    .result()
    .and_then(|()| {
        let mut cubin = null_mut();
        let mut size = 0usize;
        // SAFETY: `state` is live; the outputs are valid places.
        unsafe { sys::cuLinkComplete(state, &mut cubin, &mut size) }.result()?;
        // SAFETY: the driver's cubin is `size` bytes at `cubin`, valid until
        // the link state is destroyed below (it is copied before).
        Ok(unsafe { std::slice::from_raw_parts(cubin.cast::<u8>(), size) }.to_vec())
    });
    // SAFETY: `state` is live and destroyed once; the cubin was copied.
    let destroyed = unsafe { sys::cuLinkDestroy(state) }.result();
    let cubin = linked?;
    destroyed?;
    Ok(cubin)
}

/// Writes `cubin` to `path` through a temporary file in the same
/// directory (renamed in, so a concurrent run never reads half a file).
/// Whether it was written.
fn save(path: &Path, cubin: &[u8]) -> bool {
    let Some(dir) = path.parent() else {
        return false;
    };
    let written = std::fs::create_dir_all(dir).and_then(|()| {
        let mut file = tempfile::NamedTempFile::new_in(dir)?;
        std::io::Write::write_all(&mut file, cubin)?;
        file.persist(path).map_err(|e| e.error)?;
        Ok(())
    });
    written.is_ok()
}

//! A PTX module (the device crate's, or a kernel crate's added with
//! `CudaBackend::add_kernels`) compiled for the GPU at hand once and kept
//! as a cubin in the user's cache directory, so that later runs load machine
//! code instead of asking the driver to find its JIT result for 10 MB of
//! PTX (measured on the H100: 0.004 s against 0.05 s a run; the first
//! compilation takes about 35 s).
//!
//! The cache file's name holds a hash of the PTX text (`DefaultHasher`, as
//! the build script takes it; a toolchain whose hasher differs only
//! misses the cache once), the
//! device's compute capability and the CUDA version the driver supports
//! (`cuDriverGetVersion`), so a new build, a different GPU or a driver of
//! another CUDA version compiles again. The directory is
//! `$CAVITY_CACHE_DIR` when set, else `cavity` in the platform's cache
//! directory (`$XDG_CACHE_HOME` or `~/.cache` on Linux).
//! `CUDA_CACHE_DISABLE=1`, NVIDIA's switch for the driver's own JIT cache,
//! turns this cache off as well. Any failure to read or write the cache
//! falls back to compiling the PTX: the cache only saves time. Each file
//! carries a header (magic, length, hash of the cubin) checked before the
//! driver sees the cubin, since the driver reads a cubin by the offsets in
//! it and a truncated file would crash the process. The cubins are
//! machine code the process runs: point `CAVITY_CACHE_DIR` only at a
//! directory that no one else can write.

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
    /// Already loaded in this backend (`CudaBackend::add_kernels` of a
    /// module it has).
    Loaded,
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

/// Loads `ptx` (whose hash is `ptx_hash`) into `ctx`: from the
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
    if let Ok(file) = std::fs::read(&path) {
        match unframe(&file).map(|cubin| ctx.load_module(Ptx::from_binary(cubin.to_vec()))) {
            Some(Ok(module)) => return Ok((module, KernelOrigin::Cached(path))),
            // A damaged file, or a cubin this device or driver rejects: it
            // is compiled again below (other errors leave the file).
            None => {
                let _ = std::fs::remove_file(&path);
            }
            Some(Err(e)) if is_image_error(e) => {
                let _ = std::fs::remove_file(&path);
            }
            Some(Err(_)) => {}
        }
    }
    before_compile();
    let started = Instant::now();
    let Ok(cubin) = compile(ctx, ptx) else {
        // The driver's own loading gives the error worth reporting.
        return Ok((ctx.load_module(Ptx::from_src(ptx))?, KernelOrigin::Driver));
    };
    let seconds = started.elapsed().as_secs_f64();
    let saved = save(&path, &cubin).then_some(path);
    let module = ctx.load_module(Ptx::from_binary(cubin))?;
    Ok((module, KernelOrigin::Compiled { seconds, saved }))
}

/// Whether a module load failed on the image itself (so a cached file
/// holding it is of no use).
fn is_image_error(e: DriverError) -> bool {
    use sys::CUresult::*;
    matches!(
        e.0,
        CUDA_ERROR_INVALID_IMAGE
            | CUDA_ERROR_INVALID_PTX
            | CUDA_ERROR_NO_BINARY_FOR_GPU
            | CUDA_ERROR_INVALID_SOURCE
            | CUDA_ERROR_UNSUPPORTED_PTX_VERSION
            | CUDA_ERROR_SHARED_OBJECT_INIT_FAILED
    )
}

/// The first bytes of a cache file.
const MAGIC: &[u8; 8] = b"cavitycb";

/// Bytes of a cache file's header: [`MAGIC`], the cubin's length and its
/// hash (little-endian `u64` each).
const HEADER: usize = 24;

/// A hash of `bytes` for the cache file's header.
fn content_hash(bytes: &[u8]) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    std::hash::Hasher::write(&mut hasher, bytes);
    std::hash::Hasher::finish(&hasher)
}

/// `cubin` behind a header ([`HEADER`] bytes) that [`unframe`] checks.
fn frame(cubin: &[u8]) -> Vec<u8> {
    let mut file = Vec::with_capacity(HEADER + cubin.len());
    file.extend_from_slice(MAGIC);
    file.extend_from_slice(&(cubin.len() as u64).to_le_bytes());
    file.extend_from_slice(&content_hash(cubin).to_le_bytes());
    file.extend_from_slice(cubin);
    file
}

/// The cubin of a cache file written by [`frame`], or `None` when the
/// magic, the length or the hash do not match (a damaged or foreign
/// file).
fn unframe(file: &[u8]) -> Option<&[u8]> {
    let (header, cubin) = file.split_at_checked(HEADER)?;
    let word = |i: usize| u64::from_le_bytes(header[i..i + 8].try_into().unwrap_or_default());
    let whole = &header[..8] == MAGIC
        && word(8) == cubin.len() as u64
        && word(16) == content_hash(cubin)
        && !cubin.is_empty();
    whole.then_some(cubin)
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
        if cubin.is_null() || size == 0 {
            return Err(DriverError(sys::CUresult::CUDA_ERROR_INVALID_IMAGE));
        }
        // SAFETY: the driver's cubin is `size` bytes at the non-null
        // `cubin`, valid until the link state is destroyed below (it is
        // copied before).
        Ok(unsafe { std::slice::from_raw_parts(cubin.cast::<u8>(), size) }.to_vec())
    });
    // SAFETY: `state` is live and destroyed once; the cubin was copied. A
    // failure to free the linker's memory leaves the cubin good.
    let _ = unsafe { sys::cuLinkDestroy(state) };
    linked
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
        std::io::Write::write_all(&mut file, &frame(cubin))?;
        // On disk before the name points at it: a crash leaves the old
        // file or none, never part of this one.
        file.as_file().sync_all()?;
        file.persist(path).map_err(|e| e.error)?;
        Ok(())
    });
    written.is_ok()
}

#[cfg(test)]
mod tests {
    use super::{HEADER, frame, unframe};

    #[test]
    fn a_framed_cubin_comes_back_and_any_damage_is_caught() {
        let cubin: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
        let file = frame(&cubin);
        assert_eq!(file.len(), HEADER + cubin.len());
        assert_eq!(unframe(&file), Some(&cubin[..]));
        assert_eq!(unframe(&[]), None);
        assert_eq!(unframe(&frame(&[])), None, "an empty cubin");
        for cut in [1, HEADER - 1, HEADER, HEADER + 1, file.len() - 1] {
            assert_eq!(unframe(&file[..cut]), None, "truncated to {cut} bytes");
        }
        for at in [0, 9, 17, HEADER, file.len() - 1] {
            let mut bad = file.clone();
            bad[at] ^= 0x40;
            assert_eq!(unframe(&bad), None, "byte {at} changed");
        }
        let mut longer = file.clone();
        longer.push(0);
        assert_eq!(unframe(&longer), None, "a byte appended");
    }
}

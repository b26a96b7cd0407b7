//! Transfers of the resident dynamic mesh: the scheduler's state copied
//! to page-locked memory behind the launched work (`Snapshot`), and the
//! used part of the per-patch arrays uploaded and copied back
//! (`PatchPrefix`); where the time of the rounds went ([`GpuSeconds`]).

use std::sync::Arc;

use cudarc::driver::{
    CudaContext, CudaEvent, CudaSlice, CudaStream, DevicePtrMut, DeviceRepr, DriverError,
    PinnedHostSlice,
};

use cavity_device::dynamic::queue;

use super::context::{CudaBackend, driver};
use crate::backend::error::BackendError;
use crate::dynamic::DynamicMesh;
use crate::rounds::{Status, status_of};

/// Where the time of a GPU run of rounds went, in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GpuSeconds {
    /// In the update, calibration and compaction kernels of all rounds
    /// (CUDA events around each launch).
    pub kernels: [f64; 3],
    /// Allocating the dynamic mesh on the device and uploading it (wall
    /// clock).
    pub upload: f64,
    /// Copying the mesh back, summed over every copy (wall clock).
    pub copy_back: f64,
}

/// The scheduler's state (queue state, counters, patch flags) copied to
/// page-locked host memory behind the work launched before it, so that
/// the host reads it without stopping the stream.
pub(super) struct Snapshot {
    pub(super) queue_state: PinnedHostSlice<u32>,
    pub(super) stats: PinnedHostSlice<u32>,
    pub(super) flags: PinnedHostSlice<u32>,
    /// Recorded behind the copies: the buffers hold the state once it
    /// completed.
    pub(super) done: Option<CudaEvent>,
    /// A round's events before its update kernel and after the update,
    /// calibration and compaction kernels ([`GpuSeconds::kernels`]).
    pub(super) timing: Option<[CudaEvent; 4]>,
}

impl Snapshot {
    /// Host buffers for `stats` counters and `patches` patch flags.
    pub(super) fn new(
        ctx: &Arc<CudaContext>,
        stats: usize,
        patches: usize,
    ) -> Result<Self, DriverError> {
        // SAFETY: any bit pattern is a valid u32, and a buffer is read only
        // after `done`, recorded behind the copy that fills it, completed.
        let alloc = |len: usize| unsafe { ctx.alloc_pinned_with_flags::<u32>(len, 0) };
        Ok(Snapshot {
            queue_state: alloc(queue::STATE_WORDS as usize)?,
            stats: alloc(stats)?,
            flags: alloc(patches)?,
            done: None,
            timing: None,
        })
    }

    /// Waits for the copies, adds the round's kernel times to `seconds`
    /// and reads the status.
    pub(super) fn read(&mut self, seconds: &mut GpuSeconds) -> Result<Status, DriverError> {
        if let Some(done) = &self.done {
            done.synchronize()?;
        }
        self.done = None;
        self.add_timing(seconds)?;
        Ok(status_of(
            self.queue_state.as_slice()?,
            self.stats.as_slice()?,
            self.flags.as_slice()?,
        ))
    }

    /// Adds the kernel times of the round (if any) to `seconds`; the
    /// events must have completed.
    pub(super) fn add_timing(&mut self, seconds: &mut GpuSeconds) -> Result<(), DriverError> {
        if let Some(t) = self.timing.take() {
            for (i, pair) in t.windows(2).enumerate() {
                seconds.kernels[i] += pair[0].elapsed_ms(&pair[1])? as f64 / 1e3;
            }
        }
        Ok(())
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        // The host buffers are freed only once no copy writes them.
        if let Some(done) = &self.done {
            // A failure is the context's, and its next call reports it.
            let _ = done.synchronize();
        }
    }
}

/// The used part of a per-patch array of the dynamic layout (every patch
/// slot has the same stride): the slots of the first `num_patches` patches.
/// The other slots hold the array's empty value, so only the used part
/// travels.
#[derive(Clone, Copy)]
pub(super) struct PatchPrefix {
    num_patches: usize,
    slots: usize,
}

impl PatchPrefix {
    pub(super) fn of(mesh: &DynamicMesh) -> Self {
        PatchPrefix {
            num_patches: mesh.num_patches as usize,
            slots: mesh.cap.patches as usize,
        }
    }

    /// Elements of the used part of an array of `len` elements.
    fn len(&self, len: usize) -> usize {
        len / self.slots.max(1) * self.num_patches.min(self.slots)
    }

    /// A device copy of `data` of which only the used part is copied; the
    /// rest is set to bytes `fill`, the array's empty value (0 or 0xff:
    /// `EMPTY` and `NO_PATCH` are `u32::MAX`).
    pub(super) fn upload<T: DeviceRepr + Default + bytemuck::Pod>(
        &self,
        gpu: &CudaBackend,
        data: &[T],
        fill: u8,
    ) -> Result<CudaSlice<T>, BackendError> {
        let used = self.len(data.len());
        if data.is_empty() || used == data.len() {
            return gpu.upload(data);
        }
        let s = &gpu.stream;
        let e = driver("copying to the GPU");
        // SAFETY: every element is written below, the used part by the copy
        // and the rest by the memset, before any kernel reads it.
        let mut buf = unsafe { s.alloc::<T>(data.len()) }.map_err(e)?;
        s.memcpy_htod(&data[..used], &mut buf.slice_mut(..used))
            .map_err(e)?;
        {
            let mut rest = buf.slice_mut(used..);
            let bytes = (data.len() - used) * size_of::<T>();
            let (ptr, _record) = rest.device_ptr_mut(s);
            // SAFETY: `ptr` points at `bytes` bytes of `buf`, allocated on
            // stream `s`; every byte pattern is a valid `T` (`Pod`).
            unsafe { cudarc::driver::result::memset_d8_async(ptr, fill, bytes, s.cu_stream()) }
                .map_err(e)?;
        }
        Ok(buf)
    }

    /// [`PatchPrefix::upload`] of an array of 16-bit entries (FE, EV),
    /// kept as words of two entries (the kernels' view of it); the rest
    /// is zero.
    pub(super) fn upload_halves(
        &self,
        gpu: &CudaBackend,
        data: &[u16],
    ) -> Result<CudaSlice<u32>, BackendError> {
        let s = &gpu.stream;
        let e = driver("copying to the GPU");
        let words = data.len().div_ceil(2).max(1);
        let mut buf = s.alloc_zeros::<u32>(words).map_err(e)?;
        let used = self.len(data.len());
        if used > 0 {
            // SAFETY: every bit pattern is a valid `u16`; the view covers
            // the words' bytes.
            let mut halves = unsafe { buf.transmute_mut::<u16>(2 * words) }
                .ok_or(BackendError::Inconsistent("a view of 16-bit entries"))?;
            s.memcpy_htod(&data[..used], &mut halves.slice_mut(..used))
                .map_err(e)?;
        }
        Ok(buf)
    }

    /// [`PatchPrefix::download`] of an array of 16-bit entries kept as
    /// words of two ([`PatchPrefix::upload_halves`]).
    pub(super) fn download_halves(
        &self,
        s: &Arc<CudaStream>,
        src: &CudaSlice<u32>,
        dst: &mut [u16],
    ) -> Result<(), BackendError> {
        let used = self.len(dst.len());
        if used == 0 {
            return Ok(());
        }
        // SAFETY: every bit pattern is a valid `u16`; the view covers the
        // words' bytes.
        let halves = unsafe { src.transmute::<u16>(2 * src.len()) }
            .ok_or(BackendError::Inconsistent("a view of 16-bit entries"))?;
        s.memcpy_dtoh(&halves.slice(..used), &mut dst[..used])
            .map_err(driver("copying the dynamic mesh back"))
    }

    /// Copies the used part of `src` into `dst` (same length).
    pub(super) fn download<T: DeviceRepr>(
        &self,
        s: &Arc<CudaStream>,
        src: &CudaSlice<T>,
        dst: &mut [T],
    ) -> Result<(), DriverError> {
        let used = self.len(dst.len());
        if used == 0 {
            return Ok(());
        }
        s.memcpy_dtoh(&src.slice(..used), &mut dst[..used])
    }
}

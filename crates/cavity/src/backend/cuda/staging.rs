//! Large copies between host memory and the GPU through two pinned
//! (page-locked) staging buffers: the driver copies pageable memory
//! through a staging area of its own at a fraction of the bus's speed
//! (about 5 GB/s to the H100 here for GPolylla's arrays; 9 GB/s
//! through these buffers), while the DMA engine reads and writes pinned
//! memory at the bus's. Each piece of an array is copied between one
//! buffer and the array by the host's threads while the other buffer's
//! piece crosses the bus; the buffers are allocated once per backend and
//! kept. Copying back, the host's threads also touch the fresh array's
//! pages in parallel, which the driver's copy into pageable memory does
//! one page at a time.

use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaContext, CudaEvent, CudaStream, DriverError, PinnedHostSlice, result};
use rayon::prelude::*;
use std::sync::Arc;

/// Bytes of each staging buffer: page-locking two of 8 MB takes a few
/// milliseconds, two of 32 MB 20-35 ms, which the first upload of
/// patching waited for (issue 55: the patch stage at 6.39 M faces fell
/// from 0.091-0.092 s to 0.071-0.075 s). Uploads of gigabytes are slower
/// through these (see `SLICE`); growing the buffers once the first
/// uploads are through is a next step of issue 55.
pub const PIECE: usize = 8 << 20;

/// Arrays of fewer bytes go the driver's way (pageable): the staging
/// would not pay for its synchronisation.
pub const STAGED_FROM: usize = 4 << 20;

/// Bytes each host thread copies at a time: a piece's 32 slices keep 16
/// threads busy (a 2.5 GB upload took 121-125 ms with slices of 1 MB,
/// 97-103 ms with these; with pieces of 32 MB, 62-68 ms, issue 55).
const SLICE: usize = 256 << 10;

/// The two pinned buffers and the event after the last copy through
/// each.
pub struct Staging {
    buffers: [PinnedHostSlice<u8>; 2],
    pointers: [*mut u8; 2],
    done: [Option<CudaEvent>; 2],
}

// SAFETY: the raw pointers are those of the buffers the struct owns; the
// backend hands the struct to one thread at a time (behind a mutex).
unsafe impl Send for Staging {}

impl Staging {
    /// Two pinned buffers of [`PIECE`] bytes.
    ///
    /// # Errors
    /// The driver's, when page-locked memory cannot be allocated.
    pub fn new(ctx: &Arc<CudaContext>) -> Result<Staging, DriverError> {
        // SAFETY: any byte is a valid u8; each buffer is written only
        // after the copy that last read or wrote it (its `done` event)
        // completed.
        let alloc = || unsafe { ctx.alloc_pinned_with_flags::<u8>(PIECE, 0) };
        let mut buffers = [alloc()?, alloc()?];
        let pointers = [buffers[0].as_mut_ptr()?, buffers[1].as_mut_ptr()?];
        Ok(Staging {
            buffers,
            pointers,
            done: [None, None],
        })
    }

    /// Buffer `k`, once the copy through it that was last enqueued is
    /// complete, as `len` bytes.
    fn buffer(&mut self, k: usize, len: usize) -> Result<&mut [u8], DriverError> {
        // The event is dropped only once waited for: after a failed wait
        // the buffer stays unusable.
        if let Some(e) = &self.done[k] {
            e.synchronize()?;
        }
        self.done[k] = None;
        debug_assert!(len <= self.buffers[k].len());
        // SAFETY: the buffer holds `PIECE >= len` bytes, no copy uses it
        // any more, and `&mut self` keeps it to this caller.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.pointers[k], len) })
    }

    /// Copies `data` to device memory at `dst` (at least `data.len()`
    /// bytes), enqueued on `stream`; `data` may be dropped on return.
    ///
    /// # Errors
    /// The driver's.
    ///
    /// # Safety
    /// `dst` is device memory of at least `data.len()` bytes that nothing
    /// else uses until the copies on `stream` complete.
    pub unsafe fn upload(
        &mut self,
        stream: &Arc<CudaStream>,
        data: &[u8],
        dst: CUdeviceptr,
    ) -> Result<(), DriverError> {
        for (i, piece) in data.chunks(PIECE).enumerate() {
            let k = i % 2;
            let buffer = self.buffer(k, piece.len())?;
            buffer
                .par_chunks_mut(SLICE)
                .zip(piece.par_chunks(SLICE))
                .for_each(|(to, from)| to.copy_from_slice(from));
            // SAFETY: the caller's contract for `dst`; the buffer is pinned
            // and is not written again before `done[k]` completes.
            unsafe {
                result::memcpy_htod_async(dst + (i * PIECE) as u64, buffer, stream.cu_stream())?
            };
            match stream.record_event(None) {
                Ok(e) => self.done[k] = Some(e),
                Err(e) => {
                    // No event marks the copy in flight: wait for it here.
                    stream.synchronize()?;
                    return Err(e);
                }
            }
        }
        Ok(())
    }
}

impl Staging {
    /// Copies `dst.len()` bytes of device memory at `src` into `dst`,
    /// after the work enqueued on `stream` so far; returns once `dst` is
    /// written.
    ///
    /// # Errors
    /// The driver's.
    ///
    /// # Safety
    /// `src` is device memory of at least `dst.len()` bytes that no other
    /// stream writes until the copies complete.
    pub unsafe fn download(
        &mut self,
        stream: &Arc<CudaStream>,
        src: CUdeviceptr,
        dst: &mut [u8],
    ) -> Result<(), DriverError> {
        // SAFETY: the caller's contract.
        let copied = unsafe { self.download_pieces(stream, src, dst) };
        if copied.is_err() {
            // A copy may still be writing a buffer that no event marks:
            // wait for it before the buffers are used again or freed.
            stream.synchronize()?;
        }
        copied
    }

    /// [`Staging::download`] but for its wait after a failure.
    ///
    /// # Safety
    /// As [`Staging::download`].
    unsafe fn download_pieces(
        &mut self,
        stream: &Arc<CudaStream>,
        src: CUdeviceptr,
        dst: &mut [u8],
    ) -> Result<(), DriverError> {
        // Piece `i` crosses into buffer `i % 2` while the host's threads
        // copy piece `i - 1` out of the other; a buffer is written again
        // only after its last piece was copied out.
        let mut crossing: Option<(&mut [u8], usize, CudaEvent)> = None;
        for (i, piece) in dst.chunks_mut(PIECE).enumerate() {
            let k = i % 2;
            let buffer = self.buffer(k, piece.len())?;
            // SAFETY: the caller's contract for `src`; the buffer is
            // pinned, holds `piece.len()` bytes and is read only after the
            // copy's event completes.
            unsafe {
                result::memcpy_dtoh_async(buffer, src + (i * PIECE) as u64, stream.cu_stream())?
            };
            let copied = stream.record_event(None)?;
            if let Some((out, before, event)) = crossing.take() {
                self.copy_out(out, before, &event)?;
            }
            crossing = Some((piece, k, copied));
        }
        if let Some((out, before, event)) = crossing {
            self.copy_out(out, before, &event)?;
        }
        Ok(())
    }

    /// Copies buffer `k`'s first `out.len()` bytes into `out` on the host's
    /// threads, once `copied` (the copy into the buffer) completes.
    fn copy_out(&self, out: &mut [u8], k: usize, copied: &CudaEvent) -> Result<(), DriverError> {
        copied.synchronize()?;
        // SAFETY: the buffer holds `PIECE >= out.len()` bytes, written by
        // the completed copy; nothing writes it until this returns.
        let buffer = unsafe { std::slice::from_raw_parts(self.pointers[k], out.len()) };
        out.par_chunks_mut(SLICE)
            .zip(buffer.par_chunks(SLICE))
            .for_each(|(to, from)| to.copy_from_slice(from));
        Ok(())
    }
}

impl Drop for Staging {
    /// Waits for the copies still reading the buffers before they are
    /// freed (errors are ignored: the context is failing then).
    fn drop(&mut self) {
        for e in self.done.iter().flatten() {
            let _ = e.synchronize();
        }
    }
}

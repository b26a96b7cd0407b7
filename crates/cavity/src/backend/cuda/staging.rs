//! Large copies between host memory and the GPU through two pinned
//! (page-locked) staging buffers: the driver copies pageable memory
//! through a staging area of its own at a fraction of the bus's speed
//! (about 5 GB/s to the H100 here for GPolylla's arrays; 9 GB/s
//! through these buffers), while the DMA engine reads and writes pinned
//! memory at the bus's. Each piece of an array is copied between one
//! buffer and the array by the host's threads while the other buffer's
//! piece crosses the bus; the buffers are allocated once per backend and
//! kept: a pair of [`FIRST_PIECE`] bytes, quick to page-lock, and for a
//! command that copies gigabytes a pair of [`PIECE`] bytes in their place,
//! pinned while the first pair serves
//! ([`super::CudaBackend::stage_larger`]). Copying back, the host's
//! threads also touch the fresh array's pages in parallel, which the
//! driver's copy into pageable memory does one page at a time.

use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaContext, CudaEvent, CudaStream, DriverError, PinnedHostSlice, result};
use rayon::prelude::*;
use std::mem::MaybeUninit;
use std::sync::Arc;

/// Bytes of each buffer of the first pair: page-locking two of 8 MB
/// takes a few milliseconds, two of 32 MB 20-35 ms, which the first
/// upload of patching waited for (issue 55: the patch stage at 6.39 M
/// faces fell from 0.091-0.092 s to 0.071-0.075 s with these).
pub const FIRST_PIECE: usize = 8 << 20;

/// Bytes of each buffer of the pair that replaces the first once pinned
/// ([`super::CudaBackend::stage_larger`]): each piece costs
/// a synchronisation and a fork of the host's threads, so gigabytes go
/// faster through larger pieces (issue 55, on an H200's host: 2 GB up in
/// 65-69 ms through 8 MB pieces, 42 ms through 32 MB; 465 MB down in
/// 15-17 ms against 11 ms).
pub const PIECE: usize = 32 << 20;

/// Arrays of fewer bytes go the driver's way (pageable): the staging
/// would not pay for its synchronisation.
pub const STAGED_FROM: usize = 4 << 20;

/// Slices of a piece the host's threads copy at a time: one per thread
/// of a 16-core host (with pieces of 32 MB, slices of 2 MB took 21 ms a
/// gigabyte up, of 1 MB 25-27 ms; with pieces of 8 MB, 256 and 512 KB
/// were alike, issue 55).
const SLICES: usize = 16;

/// The smallest buffers: a slice a thread of at least a page.
pub const SMALLEST_PIECE: usize = SLICES << 12;

/// Two pinned buffers and the event after the last copy through each.
pub struct Staging {
    buffers: [PinnedHostSlice<u8>; 2],
    pointers: [*mut u8; 2],
    done: [Option<CudaEvent>; 2],
    /// Bytes of each buffer.
    piece: usize,
}

// SAFETY: the raw pointers are those of the buffers the struct owns; the
// backend hands the struct to one thread at a time (behind a mutex).
unsafe impl Send for Staging {}

impl Staging {
    /// Two pinned buffers of `piece` bytes ([`FIRST_PIECE`] or [`PIECE`];
    /// at least [`SMALLEST_PIECE`], which a smaller ask is raised to).
    ///
    /// # Errors
    /// The driver's, when page-locked memory cannot be allocated.
    pub fn new(ctx: &Arc<CudaContext>, piece: usize) -> Result<Staging, DriverError> {
        let piece = piece.max(SMALLEST_PIECE);
        // SAFETY: any byte is a valid u8; each buffer is written only
        // after the copy that last read or wrote it (its `done` event)
        // completed.
        let alloc = || unsafe { ctx.alloc_pinned_with_flags::<u8>(piece, 0) };
        let mut buffers = [alloc()?, alloc()?];
        let pointers = [buffers[0].as_mut_ptr()?, buffers[1].as_mut_ptr()?];
        Ok(Staging {
            buffers,
            pointers,
            done: [None, None],
            piece,
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
        // SAFETY: the buffer holds `piece >= len` bytes, no copy uses it
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
        let (size, slice) = (self.piece, self.slice());
        for (i, piece) in data.chunks(size).enumerate() {
            let k = i % 2;
            let buffer = self.buffer(k, piece.len())?;
            buffer
                .par_chunks_mut(slice)
                .zip(piece.par_chunks(slice))
                .for_each(|(to, from)| to.copy_from_slice(from));
            // SAFETY: the caller's contract for `dst`; the buffer is pinned
            // and is not written again before `done[k]` completes.
            unsafe {
                result::memcpy_htod_async(dst + (i * size) as u64, buffer, stream.cu_stream())?
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
    /// Bytes of each buffer.
    pub fn piece(&self) -> usize {
        self.piece
    }

    /// Bytes each host thread copies at a time.
    fn slice(&self) -> usize {
        self.piece / SLICES
    }

    /// Copies `dst.len()` bytes of device memory at `src` into `dst`,
    /// after the work enqueued on `stream` so far; returns once every byte
    /// of `dst` is written (it may be uninitialised before: a fresh array
    /// need not be zeroed first, which the allocator may do on one thread
    /// when it hands back memory it kept).
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
        dst: &mut [MaybeUninit<u8>],
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
        dst: &mut [MaybeUninit<u8>],
    ) -> Result<(), DriverError> {
        // Piece `i` crosses into buffer `i % 2` while the host's threads
        // copy piece `i - 1` out of the other; a buffer is written again
        // only after its last piece was copied out.
        let mut crossing: Option<(&mut [MaybeUninit<u8>], usize, CudaEvent)> = None;
        let size = self.piece;
        for (i, piece) in dst.chunks_mut(size).enumerate() {
            let k = i % 2;
            let buffer = self.buffer(k, piece.len())?;
            // SAFETY: the caller's contract for `src`; the buffer is
            // pinned, holds `piece.len()` bytes and is read only after the
            // copy's event completes.
            unsafe {
                result::memcpy_dtoh_async(buffer, src + (i * size) as u64, stream.cu_stream())?
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
    fn copy_out(
        &self,
        out: &mut [MaybeUninit<u8>],
        k: usize,
        copied: &CudaEvent,
    ) -> Result<(), DriverError> {
        copied.synchronize()?;
        // SAFETY: the buffer holds `piece >= out.len()` bytes, written by
        // the completed copy; nothing writes it until this returns.
        let buffer = unsafe { std::slice::from_raw_parts(self.pointers[k], out.len()) };
        let slice = self.slice();
        out.par_chunks_mut(slice)
            .zip(buffer.par_chunks(slice))
            .for_each(|(to, from)| {
                to.write_copy_of_slice(from);
            });
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

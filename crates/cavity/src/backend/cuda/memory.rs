//! Copies between the host and the GPU: uploads (from [`STAGED_FROM`]
//! bytes through the pinned buffers of [`super::staging`]), downloads, and
//! the device addresses of buffers as kernel parameters.

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

use super::context::{CudaBackend, driver};
use super::staging::{FIRST_PIECE, STAGED_FROM, Staging};
use crate::backend::error::BackendError;
use crate::backend::landing::{HUGE_PAGES_FROM, advise_huge_pages, spare_bytes};

impl CudaBackend {
    /// The device address of `slice`, a kernel parameter: for a buffer
    /// of this backend's stream that no other stream uses (cudarc's event
    /// tracking is not kept up).
    pub fn address<T>(&self, slice: &CudaSlice<T>) -> u64 {
        slice.device_ptr(&self.stream).0
    }

    /// Copies a host slice to the device (at least one element, so empty
    /// meshes get valid pointers); from [`STAGED_FROM`] bytes through
    /// pinned buffers ([`super::staging`]).
    pub fn upload<T: cudarc::driver::DeviceRepr + bytemuck::Pod>(
        &self,
        data: &[T],
    ) -> Result<CudaSlice<T>, BackendError> {
        if std::mem::size_of_val(data) >= STAGED_FROM {
            // SAFETY: the copy below writes every element before any use.
            let mut dst = unsafe { self.stream.alloc::<T>(data.len()) }
                .map_err(driver("allocating on the GPU"))?;
            {
                let (ptr, _record) = dst.device_ptr_mut(&self.stream);
                // SAFETY: `dst` holds `data`'s bytes and is used only on
                // this stream, after the copies.
                self.with_staging("copying to the GPU", |staging| unsafe {
                    staging.upload(&self.stream, bytemuck::cast_slice(data), ptr)
                })?;
            }
            return Ok(dst);
        }
        let padded;
        let src = if data.is_empty() {
            padded = vec![T::zeroed()];
            &padded[..]
        } else {
            data
        };
        self.stream
            .clone_htod(src)
            .map_err(driver("copying to the GPU"))
    }

    /// Copies a device slice back, keeping its first `len` elements (all
    /// of it when shorter), after the work enqueued so far; from
    /// [`STAGED_FROM`] bytes through the pinned buffers
    /// ([`super::staging`]), whose copies out also touch the new array's
    /// pages on the host's threads (the driver's copy into pageable memory
    /// faults them in one at a time).
    pub fn download<T: cudarc::driver::DeviceRepr + bytemuck::Pod>(
        &self,
        data: &CudaSlice<T>,
        len: usize,
    ) -> Result<Vec<T>, BackendError> {
        self.download_into(data, len, Vec::new())
    }

    /// [`CudaBackend::download`] into `array`'s memory (its elements
    /// dropped) when it has room for them: memory a
    /// [`crate::backend::Landing`] faulted in beforehand; else, or below
    /// [`STAGED_FROM`] bytes (copied through pageable memory), into a new
    /// array.
    ///
    /// # Errors
    /// A driver error when the copy fails.
    pub fn download_into<T: cudarc::driver::DeviceRepr + bytemuck::Pod>(
        &self,
        data: &CudaSlice<T>,
        len: usize,
        mut array: Vec<T>,
    ) -> Result<Vec<T>, BackendError> {
        let n = len.min(data.len());
        if n * std::mem::size_of::<T>() < STAGED_FROM {
            return self.download_range(data, 0..n);
        }
        let part = data.slice(..n);
        array.clear();
        // Not zeroed: the copy writes every byte (mimalloc zeroes memory it
        // kept from a freed array on the calling thread, 0.5 GB for
        // Polylla's lists at 44 M points).
        let fresh = array.capacity() < n;
        if fresh {
            // Freed first: the two are not held at once.
            drop(std::mem::take(&mut array));
            array = Vec::with_capacity(n);
        }
        let spare = spare_bytes(&mut array);
        if fresh && spare.len() >= HUGE_PAGES_FROM {
            advise_huge_pages(spare);
        }
        let spare = &mut spare[..n * std::mem::size_of::<T>()];
        let (ptr, _record) = part.device_ptr(&self.stream);
        // SAFETY: `part` holds `n` elements, `spare`'s bytes, written only
        // by work on this stream.
        self.with_staging("copying from the GPU", |staging| unsafe {
            staging.download(&self.stream, ptr, spare)
        })?;
        // SAFETY: the download wrote all `n` elements' bytes, and every bit
        // pattern is a valid `T` (`Pod`).
        unsafe { array.set_len(n) };
        Ok(array)
    }

    /// Elements `range` of `data` (within its length), after the work
    /// enqueued so far, through pageable memory (small reads).
    ///
    /// # Errors
    /// A driver error when the copy fails.
    pub fn download_range<T: cudarc::driver::DeviceRepr + bytemuck::Pod>(
        &self,
        data: &CudaSlice<T>,
        range: std::ops::Range<usize>,
    ) -> Result<Vec<T>, BackendError> {
        if range.is_empty() {
            return Ok(Vec::new());
        }
        self.stream
            .clone_dtoh(&data.slice(range))
            .map_err(driver("copying from the GPU"))
    }

    /// `n` zeroed elements on the device (at least one, for a valid
    /// address), set there: no host array crosses the bus.
    ///
    /// # Errors
    /// A driver error when the allocation fails.
    pub fn zeros<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
        &self,
        n: usize,
    ) -> Result<CudaSlice<T>, BackendError> {
        self.stream
            .alloc_zeros(n.max(1))
            .map_err(driver("allocating a zeroed array"))
    }

    /// Element `i` of `data` (after the work enqueued so far).
    ///
    /// # Errors
    /// A driver error when the copy fails.
    pub fn element<T: cudarc::driver::DeviceRepr + bytemuck::Pod>(
        &self,
        data: &CudaSlice<T>,
        i: usize,
    ) -> Result<T, BackendError> {
        let mut one = [T::zeroed()];
        self.stream
            .memcpy_dtoh(&data.slice(i..i + 1), &mut one)
            .and_then(|()| self.stream.synchronize())
            .map_err(driver("reading an element back"))?;
        Ok(one[0])
    }

    /// A device copy of the first `n` elements of `data` (at least one
    /// element allocated).
    ///
    /// # Errors
    /// A driver error when the allocation or the copy fails.
    pub fn copy_prefix<T: cudarc::driver::DeviceRepr>(
        &self,
        data: &CudaSlice<T>,
        n: usize,
    ) -> Result<CudaSlice<T>, BackendError> {
        self.stream
            .clone_dtod(&data.slice(..n.max(1).min(data.len())))
            .map_err(driver("copying an array"))
    }

    /// Runs `f` (doing `what`) on the staging buffers, allocated at the
    /// first use.
    fn with_staging<R>(
        &self,
        what: &'static str,
        f: impl FnOnce(&mut Staging) -> Result<R, cudarc::driver::DriverError>,
    ) -> Result<R, BackendError> {
        let mut guard = self.staging.lock().unwrap_or_else(|e| e.into_inner());
        let staging = match &mut *guard {
            Some(s) => s,
            empty => empty.insert(
                Staging::new(&self.ctx, FIRST_PIECE)
                    .map_err(driver("allocating pinned host memory"))?,
            ),
        };
        f(staging).map_err(driver(what))
    }
}

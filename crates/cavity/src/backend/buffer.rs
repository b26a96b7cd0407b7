//! Typed arrays on a backend ([`Buffer`]): the GPU's device memory or the
//! CPU backend's host vectors behind one type, made, filled, read back,
//! scanned and compacted by the [`Backend`], and lent to checked kernels
//! (`cavity_device::kernel::CheckedKernel`) as bounds-checked views, `&buffer` as an
//! [`In`] and `&mut buffer` as an [`InOut`] ([`Backend::launch`]), so that
//! the borrow checker keeps a launch's arrays from aliasing and a kernel
//! from outliving its arrays on the CPU backend (the GPU frees a buffer on
//! its stream, after the work queued before). No `unsafe` is needed to run
//! count-scan-fill procedures with kernels of one's own (the volumetric
//! meshes and Polylla do).

use std::marker::PhantomData;

use bytemuck::Pod;
use cudarc::driver::{CudaSlice, DeviceRepr, ValidAsZeroBits};

use cavity_device::array::{
    AddChunkOffsets, BOUNDS, CompactMarked, CountBits, In, InOut, Ins, ListBits, ScanChunks, Word,
    blocks, scan,
};
use cavity_device::kernel::{CheckedKernel, Kernel};

use super::Backend;
use super::cuda::kernel_args::KernelArgs;
use super::error::BackendError;
use super::landing::Landing;

/// An element of a [`Buffer`]: a 32-bit word the GPU copies as plain data
/// (`u32`, `i32`, `f32`).
pub trait Element: Word + Pod + DeviceRepr + ValidAsZeroBits + Default + Send + Sync {}

impl<T: Word + Pod + DeviceRepr + ValidAsZeroBits + Default + Send + Sync> Element for T {}

/// An array of `T` on a backend (see the [module](self)).
pub struct Buffer<T: Element> {
    inner: Inner<T>,
}

/// Where a buffer's elements are.
enum Inner<T: Element> {
    /// The CPU backend's: host memory.
    Host(Vec<T>),
    /// The GPU's (at least one element allocated, so that its address is
    /// valid): the device array, the length, the device address.
    Gpu(CudaSlice<T>, usize, u64),
}

impl<T: Element> Buffer<T> {
    /// Elements.
    pub fn len(&self) -> usize {
        match &self.inner {
            Inner::Host(v) => v.len(),
            Inner::Gpu(_, len, _) => *len,
        }
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether it is the GPU's.
    pub(crate) fn is_on_gpu(&self) -> bool {
        matches!(self.inner, Inner::Gpu(..))
    }

    /// The GPU's array behind it (at least one element; the buffer's
    /// [`Buffer::len`] may be less); `None` for the CPU backend's.
    pub(crate) fn into_gpu(self) -> Option<CudaSlice<T>> {
        match self.inner {
            Inner::Gpu(slice, _, _) => Some(slice),
            Inner::Host(_) => None,
        }
    }

    /// Its address as a kernel's raw `u64` parameter takes it
    /// ([`Backend::launch_raw`]): the device address on the GPU, the host
    /// array's on the CPU backend. Borrowed mutably, as the kernel may
    /// write through it.
    pub(crate) fn raw_addr(&mut self) -> u64 {
        self.view_mut().addr
    }

    /// All of it, lent shared: a kernel's [`In`] ([`Backend::launch`]).
    pub fn view(&self) -> View<'_, T> {
        let (addr, on_gpu) = match &self.inner {
            Inner::Host(v) => (v.as_ptr() as u64, false),
            Inner::Gpu(_, _, addr) => (*addr, true),
        };
        View {
            addr,
            len: self.len(),
            on_gpu,
            _lent: PhantomData,
        }
    }

    /// All of it, lent exclusively: a kernel's [`InOut`], which
    /// [`ViewMut::split_at`] cuts into parts that one launch may take
    /// apart.
    pub fn view_mut(&mut self) -> ViewMut<'_, T> {
        let len = self.len();
        let (addr, on_gpu) = match &mut self.inner {
            Inner::Host(v) => (v.as_mut_ptr() as u64, false),
            Inner::Gpu(_, _, addr) => (*addr, true),
        };
        ViewMut {
            addr,
            len,
            on_gpu,
            _lent: PhantomData,
        }
    }
}

/// Elements `[at, at + len)` of a view of `len` elements at `addr` of
/// `T`: their address.
///
/// # Panics
/// When the range is not inside the view (as slicing).
fn sub_range<T>(addr: u64, len: usize, range: std::ops::Range<usize>) -> (u64, usize) {
    assert!(
        range.start <= range.end && range.end <= len,
        "range {range:?} of a view of {len} elements"
    );
    (addr + (range.start * size_of::<T>()) as u64, range.len())
}

/// Part of a [`Buffer`] lent shared (see [`Buffer::view`]).
#[derive(Clone, Copy)]
pub struct View<'a, T> {
    addr: u64,
    len: usize,
    on_gpu: bool,
    _lent: PhantomData<&'a [T]>,
}

impl<'a, T> View<'a, T> {
    /// Elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Its elements `range`.
    ///
    /// # Panics
    /// When `range` is not inside the view (as slicing).
    pub fn range(self, range: std::ops::Range<usize>) -> View<'a, T> {
        let (addr, len) = sub_range::<T>(self.addr, self.len, range);
        View { addr, len, ..self }
    }
}

/// Part of a [`Buffer`] lent exclusively (see [`Buffer::view_mut`]).
pub struct ViewMut<'a, T> {
    addr: u64,
    len: usize,
    on_gpu: bool,
    _lent: PhantomData<&'a mut [T]>,
}

impl<'a, T> ViewMut<'a, T> {
    /// Elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Its elements `range`.
    ///
    /// # Panics
    /// When `range` is not inside the view (as slicing).
    pub fn range(self, range: std::ops::Range<usize>) -> ViewMut<'a, T> {
        let (addr, len) = sub_range::<T>(self.addr, self.len, range);
        ViewMut { addr, len, ..self }
    }

    /// Its elements before `mid` and from `mid` on, lent apart.
    ///
    /// # Panics
    /// When `mid` is past the end (as `split_at_mut`).
    pub fn split_at(self, mid: usize) -> (ViewMut<'a, T>, ViewMut<'a, T>) {
        let (head, _) = sub_range::<T>(self.addr, self.len, 0..mid);
        let (tail, rest) = sub_range::<T>(self.addr, self.len, mid..self.len);
        (
            ViewMut {
                addr: head,
                len: mid,
                on_gpu: self.on_gpu,
                _lent: PhantomData,
            },
            ViewMut {
                addr: tail,
                len: rest,
                on_gpu: self.on_gpu,
                _lent: PhantomData,
            },
        )
    }

    /// The same elements, lent again for a shorter while (to one launch,
    /// keeping this view for the next).
    pub fn reborrow(&mut self) -> ViewMut<'_, T> {
        ViewMut {
            addr: self.addr,
            len: self.len,
            on_gpu: self.on_gpu,
            _lent: PhantomData,
        }
    }

    /// The same elements, lent shared from now on.
    pub fn into_view(self) -> View<'a, T> {
        View {
            addr: self.addr,
            len: self.len,
            on_gpu: self.on_gpu,
            _lent: PhantomData,
        }
    }
}

/// A view's length as a kernel's, or [`BackendError::TooLarge`].
fn len32(len: usize) -> Result<u32, BackendError> {
    u32::try_from(len).map_err(|_| BackendError::TooLarge(len))
}

/// Whether a view of memory on the GPU (`on_gpu`) or the host may be lent
/// to `backend`'s kernels.
fn check_backend(backend: &Backend, on_gpu: bool) -> Result<(), BackendError> {
    match (backend, on_gpu) {
        (Backend::Cpu(_), false) | (Backend::Cuda(_), true) => Ok(()),
        _ => Err(mismatch()),
    }
}

/// The other backend's buffer.
fn mismatch() -> BackendError {
    BackendError::BufferBackend
}

impl Backend {
    /// A copy of `data` on the backend.
    ///
    /// # Errors
    /// A driver error when the allocation or the copy fails.
    pub fn upload<T: Element>(&self, data: &[T]) -> Result<Buffer<T>, BackendError> {
        let inner = match self {
            Backend::Cpu(_) => Inner::Host(data.to_vec()),
            Backend::Cuda(gpu) => {
                let slice = gpu.upload(data)?;
                let addr = gpu.address(&slice);
                Inner::Gpu(slice, data.len(), addr)
            }
        };
        Ok(Buffer { inner })
    }

    /// `n` zeroed elements on the backend (set on the device: no host
    /// array crosses the bus).
    ///
    /// # Errors
    /// A driver error when the allocation fails.
    pub fn zeros<T: Element>(&self, n: usize) -> Result<Buffer<T>, BackendError> {
        let inner = match self {
            Backend::Cpu(_) => Inner::Host(vec![T::default(); n]),
            Backend::Cuda(gpu) => {
                let slice = gpu.zeros(n)?;
                let addr = gpu.address(&slice);
                Inner::Gpu(slice, n, addr)
            }
        };
        Ok(Buffer { inner })
    }

    /// The first `n` elements of `buffer` on the host (all of them when
    /// shorter), after the work launched so far; the buffer is consumed.
    ///
    /// # Errors
    /// [`BackendError::BufferBackend`] for another backend's buffer; a
    /// driver error when the copy fails.
    pub fn download<T: Element>(
        &self,
        buffer: Buffer<T>,
        n: usize,
    ) -> Result<Vec<T>, BackendError> {
        self.download_into(buffer, n, Landing::none())
    }

    /// Host memory for a later [`Backend::download_into`] of up to `n`
    /// elements, faulted in on the host's threads while the device works
    /// ([`Landing`]); on the CPU backend, whose buffers are host arrays
    /// already, nothing is prepared.
    pub fn landing<T: Element>(&self, n: usize) -> Landing<T> {
        match self {
            Backend::Cpu(_) => Landing::none(),
            Backend::Cuda(_) => Landing::prepare(n),
        }
    }

    /// [`Backend::download`] into the memory `landing` prepared, once it
    /// is ready (into a new array when it has no room for them).
    ///
    /// # Errors
    /// As [`Backend::download`].
    pub fn download_into<T: Element>(
        &self,
        buffer: Buffer<T>,
        n: usize,
        landing: Landing<T>,
    ) -> Result<Vec<T>, BackendError> {
        match (self, buffer.inner) {
            (Backend::Cpu(_), Inner::Host(mut v)) => {
                v.truncate(n);
                Ok(v)
            }
            (Backend::Cuda(gpu), Inner::Gpu(s, len, _)) => {
                gpu.download_into(&s, n.min(len), landing.take())
            }
            _ => Err(mismatch()),
        }
    }

    /// A copy of the first `n` elements of `buffer` on the host (all of
    /// them when shorter), the buffer kept, after the work launched so far.
    ///
    /// # Errors
    /// As [`Backend::download`].
    pub fn read_back<T: Element>(
        &self,
        buffer: &Buffer<T>,
        n: usize,
    ) -> Result<Vec<T>, BackendError> {
        self.read_back_into(buffer, n, Landing::none())
    }

    /// [`Backend::read_back`] into the memory `landing` prepared, once it
    /// is ready (into a new array when it has no room for them).
    ///
    /// # Errors
    /// As [`Backend::download`].
    pub fn read_back_into<T: Element>(
        &self,
        buffer: &Buffer<T>,
        n: usize,
        landing: Landing<T>,
    ) -> Result<Vec<T>, BackendError> {
        match (self, &buffer.inner) {
            (Backend::Cpu(_), Inner::Host(v)) => Ok(v[..n.min(v.len())].to_vec()),
            (Backend::Cuda(gpu), Inner::Gpu(s, len, _)) => {
                gpu.download_into(s, n.min(*len), landing.take())
            }
            _ => Err(mismatch()),
        }
    }

    /// The first `count` `f64` partials of `partials` on the host (two
    /// words each, low first: what `cavity_device::array::write_partial`
    /// writes), in block order, after the work launched so far.
    ///
    /// # Errors
    /// As [`Backend::download`].
    pub fn read_partials(
        &self,
        partials: &Buffer<u32>,
        count: u32,
    ) -> Result<Vec<f64>, BackendError> {
        let words = self.read_back(partials, 2 * count as usize)?;
        Ok(words
            .as_chunks::<2>()
            .0
            .iter()
            .map(|&[low, high]| f64::from_bits(u64::from(low) | u64::from(high) << 32))
            .collect())
    }

    /// Elements `range` of `buffer` on the host (the part within its
    /// length), after the work launched so far: for small reads (on the
    /// GPU through pageable memory).
    ///
    /// # Errors
    /// As [`Backend::download`].
    pub fn read_range<T: Element>(
        &self,
        buffer: &Buffer<T>,
        range: std::ops::Range<usize>,
    ) -> Result<Vec<T>, BackendError> {
        let end = range.end.min(buffer.len());
        let start = range.start.min(end);
        match (self, &buffer.inner) {
            (Backend::Cpu(_), Inner::Host(v)) => Ok(v[start..end].to_vec()),
            (Backend::Cuda(gpu), Inner::Gpu(s, _, _)) => gpu.download_range(s, start..end),
            _ => Err(mismatch()),
        }
    }

    /// Element `i` of `buffer` (after the work launched so far).
    ///
    /// # Errors
    /// [`BackendError::Index`] past the end; as [`Backend::download`].
    pub fn element<T: Element>(&self, buffer: &Buffer<T>, i: usize) -> Result<T, BackendError> {
        if i >= buffer.len() {
            return Err(BackendError::Index(i, buffer.len()));
        }
        match (self, &buffer.inner) {
            (Backend::Cpu(_), Inner::Host(v)) => Ok(v[i]),
            (Backend::Cuda(gpu), Inner::Gpu(s, _, _)) => gpu.element(s, i),
            _ => Err(mismatch()),
        }
    }

    /// A copy of the first `n` elements of `buffer` on the backend (all of
    /// them when shorter).
    ///
    /// # Errors
    /// As [`Backend::download`].
    pub fn copy<T: Element>(
        &self,
        buffer: &Buffer<T>,
        n: usize,
    ) -> Result<Buffer<T>, BackendError> {
        let inner = match (self, &buffer.inner) {
            (Backend::Cpu(_), Inner::Host(v)) => Inner::Host(v[..n.min(v.len())].to_vec()),
            (Backend::Cuda(gpu), Inner::Gpu(s, len, _)) => {
                let n = n.min(*len);
                let slice = gpu.copy_prefix(s, n)?;
                let addr = gpu.address(&slice);
                Inner::Gpu(slice, n, addr)
            }
            _ => return Err(mismatch()),
        };
        Ok(Buffer { inner })
    }

    /// Launches checked kernel `K` on `grid` blocks with `smem` bytes of
    /// shared memory (given for the GPU's blocks and for the CPU
    /// backend's one-thread blocks), its parameters made from `args`:
    /// plain data as it is, `&buffer` for an [`In`], `&mut buffer` for an
    /// [`InOut`], `None::<&Buffer<_>>` for an empty [`In`].
    ///
    /// # Errors
    /// [`BackendError::BufferBackend`] for another backend's buffer,
    /// [`BackendError::TooLarge`] for a buffer past `u32` elements; on the
    /// GPU, [`BackendError::NoSuchKernel`] when the kernel's PTX was not
    /// added, a shared-memory or driver error.
    pub fn launch<K: CheckedKernel>(
        &self,
        grid: u32,
        (smem, cpu_smem): (usize, usize),
        args: impl Args<K::Params>,
    ) -> Result<(), BackendError>
    where
        K::Params: KernelArgs,
    {
        let params = args.params(self)?;
        match self {
            // SAFETY: `K` is checked: its body is sound for any parameters
            // whose views are live, which the buffers borrowed by `args`
            // are until the CPU backend's launch returns.
            Backend::Cpu(cpu) => unsafe { cpu.launch::<K>(grid, cpu_smem, params) },
            Backend::Cuda(gpu) => {
                let kernel = gpu.load::<K>(smem)?;
                // SAFETY: as above; the GPU frees a buffer on the stream,
                // after the work queued before, so the views outlive the
                // launch; the shared memory is the one the kernel was
                // loaded with.
                unsafe { gpu.launch(&kernel, grid, params) }?;
            }
        }
        Ok(())
    }

    /// Launches kernel `K`, whose parameters are raw addresses (a dynamic
    /// mesh's arrays, [`Buffer::raw_addr`]s) rather than views, on `grid`
    /// blocks with `smem` bytes of shared memory (for the GPU's blocks
    /// and for the CPU backend's one-thread blocks).
    ///
    /// # Safety
    /// `params` keep `K`'s contract (its declaration's `# Safety`) on this
    /// backend's memory: every address they hold is this backend's and
    /// stays live until the launch completes (on the GPU, until the work
    /// queued on its stream does).
    ///
    /// # Errors
    /// On the GPU, [`BackendError::NoSuchKernel`] when the kernel's PTX was
    /// not added, a shared-memory or driver error.
    pub(crate) unsafe fn launch_raw<K: Kernel>(
        &self,
        grid: u32,
        (smem, cpu_smem): (usize, usize),
        params: K::Params,
    ) -> Result<(), BackendError>
    where
        K::Params: KernelArgs,
    {
        match self {
            // SAFETY: the caller's contract.
            Backend::Cpu(cpu) => unsafe { cpu.launch::<K>(grid, cpu_smem, params) },
            Backend::Cuda(gpu) => {
                let kernel = gpu.load::<K>(smem)?;
                // SAFETY: the caller's contract; the shared memory is the
                // one the kernel was loaded with.
                unsafe { gpu.launch(&kernel, grid, params) }?;
            }
        }
        Ok(())
    }

    /// Replaces `data[..n]` with its exclusive prefix sum (wrapping), by
    /// chunks scanned in shared memory, their totals scanned the same way,
    /// then added ([`cavity_device::array::scan`]).
    ///
    /// # Errors
    /// As [`Backend::launch`].
    pub fn exclusive_scan(&self, data: &mut Buffer<u32>, n: u32) -> Result<(), BackendError> {
        let grid = blocks(n);
        let mut sums = self.zeros::<u32>(grid as usize)?;
        let smem = (scan::shared_bytes(BOUNDS.threads), scan::shared_bytes(1));
        self.launch::<ScanChunks>(grid, smem, (&mut *data, n, &mut sums))?;
        if grid > 1 {
            self.exclusive_scan(&mut sums, grid)?;
            self.launch::<AddChunkOffsets>(grid, (0, 0), (data, n, &sums))?;
        }
        Ok(())
    }

    /// The kept ones of `n` elements whose 0/1 marks are in `marks` (`n +
    /// 1` words, the last 0; replaced by their scan), as the list of their
    /// indices (complemented, `!i`, where `complement[i]` is not 0), with
    /// its length.
    ///
    /// # Errors
    /// As [`Backend::launch`].
    pub fn compact(
        &self,
        marks: &mut Buffer<u32>,
        complement: Option<&Buffer<u32>>,
        n: u32,
    ) -> Result<(Buffer<u32>, u32), BackendError> {
        self.exclusive_scan(marks, n + 1)?;
        let count = self.element(marks, n as usize)?;
        let mut out = self.zeros::<u32>(count as usize)?;
        self.launch::<CompactMarked>(blocks(n), (0, 0), (&*marks, complement, n, &mut out))?;
        Ok((out, count))
    }

    /// The set bits of the bitmask `bits` (`words` words, 32 elements a
    /// word) as the ascending list of their elements, with its length
    /// ([`cavity_device::array::bits`]).
    ///
    /// # Errors
    /// As [`Backend::launch`].
    pub fn compact_bits(
        &self,
        bits: &Buffer<u32>,
        words: u32,
    ) -> Result<(Buffer<u32>, u32), BackendError> {
        let mut counts = self.zeros::<u32>(words as usize + 1)?;
        self.launch::<CountBits>(blocks(words), (0, 0), (bits, words, &mut counts))?;
        self.exclusive_scan(&mut counts, words + 1)?;
        let count = self.element(&counts, words as usize)?;
        let mut out = self.zeros::<u32>(count as usize)?;
        self.launch::<ListBits>(blocks(words), (0, 0), (bits, &counts, words, &mut out))?;
        Ok((out, count))
    }
}

/// A host value that becomes kernel parameter `P` ([`Backend::launch`]).
pub trait Arg<P> {
    /// The parameter, on `backend`.
    ///
    /// # Errors
    /// [`BackendError::BufferBackend`] for another backend's buffer,
    /// [`BackendError::TooLarge`] past `u32` elements.
    fn param(self, backend: &Backend) -> Result<P, BackendError>;
}

impl<T: Pod> Arg<T> for T {
    fn param(self, _: &Backend) -> Result<T, BackendError> {
        Ok(self)
    }
}

impl<T: Element> Arg<In<T>> for View<'_, T> {
    fn param(self, backend: &Backend) -> Result<In<T>, BackendError> {
        check_backend(backend, self.on_gpu)?;
        // SAFETY: the view's words, lent shared for the launch (no view of
        // the same launch lent exclusively can overlap them).
        Ok(unsafe { In::from_raw(self.addr, len32(self.len)?) })
    }
}

impl<T: Element> Arg<In<T>> for &Buffer<T> {
    fn param(self, backend: &Backend) -> Result<In<T>, BackendError> {
        self.view().param(backend)
    }
}

impl<T: Element> Arg<In<T>> for Option<&Buffer<T>> {
    fn param(self, backend: &Backend) -> Result<In<T>, BackendError> {
        match self {
            Some(buffer) => buffer.param(backend),
            // SAFETY: no words.
            None => Ok(unsafe { In::from_raw(0, 0) }),
        }
    }
}

impl<T: Element, const N: usize> Arg<Ins<T, N>> for [View<'_, T>; N] {
    fn param(self, backend: &Backend) -> Result<Ins<T, N>, BackendError> {
        let mut views = [None; N];
        for (view, lent) in views.iter_mut().zip(self) {
            *view = Some(lent.param(backend)?);
        }
        Ok(Ins(views.map(|v| v.expect("every view is made above"))))
    }
}

impl<T: Element, const N: usize> Arg<Ins<T, N>> for [&Buffer<T>; N] {
    fn param(self, backend: &Backend) -> Result<Ins<T, N>, BackendError> {
        self.map(Buffer::view).param(backend)
    }
}

impl<T: Element> Arg<InOut<T>> for ViewMut<'_, T> {
    fn param(self, backend: &Backend) -> Result<InOut<T>, BackendError> {
        check_backend(backend, self.on_gpu)?;
        // SAFETY: the view's words, lent exclusively for the launch.
        Ok(unsafe { InOut::from_raw(self.addr, len32(self.len)?) })
    }
}

impl<T: Element> Arg<InOut<T>> for &mut Buffer<T> {
    fn param(self, backend: &Backend) -> Result<InOut<T>, BackendError> {
        self.view_mut().param(backend)
    }
}

/// The host values of a launch's parameter tuple `P`, one [`Arg`] each.
pub trait Args<P> {
    /// The parameters, on `backend`.
    ///
    /// # Errors
    /// As [`Arg::param`].
    fn params(self, backend: &Backend) -> Result<P, BackendError>;
}

/// Implements [`Args`] for tuples of the given arities.
macro_rules! tuple_args {
    ($(($($a:ident $p:ident $i:tt),+))+) => {$(
        impl<$($a: Arg<$p>, $p),+> Args<($($p,)+)> for ($($a,)+) {
            fn params(self, backend: &Backend) -> Result<($($p,)+), BackendError> {
                Ok(($(self.$i.param(backend)?,)+))
            }
        }
    )+};
}

tuple_args! {
    (A0 P0 0)
    (A0 P0 0, A1 P1 1)
    (A0 P0 0, A1 P1 1, A2 P2 2)
    (A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3)
    (A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4)
    (A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4, A5 P5 5)
    (A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4, A5 P5 5, A6 P6 6)
    (A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4, A5 P5 5, A6 P6 6, A7 P7 7)
    (A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4, A5 P5 5, A6 P6 6, A7 P7 7, A8 P8 8)
    (A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4, A5 P5 5, A6 P6 6, A7 P7 7, A8 P8 8, A9 P9 9)
    (A0 P0 0, A1 P1 1, A2 P2 2, A3 P3 3, A4 P4 4, A5 P5 5, A6 P6 6, A7 P7 7, A8 P8 8, A9 P9 9, A10 P10 10)
}

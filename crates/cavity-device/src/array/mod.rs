//! Arrays of 32-bit words as kernel parameters ([`In`], [`InOut`]): the
//! typed, bounds-checked views a *checked* kernel
//! ([`CheckedKernel`](crate::kernel::CheckedKernel)) takes instead of raw
//! addresses, and the kernels over such arrays that count-scan-fill
//! procedures share (the volumetric paper's Algorithm 1, GPolylla's seed
//! compaction): a device-wide exclusive scan ([`scan`]), the compaction of
//! marked elements ([`compact`]) and of the set bits of a bitmask
//! ([`bits`]).
//!
//! The host makes the views from its buffers (`cavity::backend::Buffer`):
//! an [`In`] from a buffer it lends shared, an [`InOut`] from one it lends
//! exclusively, so that within a launch no array a kernel reads through an
//! [`In`] is written, and two [`InOut`]s never alias. Every access checks
//! its index against the view's length and stops the kernel past it (a
//! trap on the GPU, a panic on the CPU backend): whatever the arrays hold,
//! a checked kernel reads and writes only its views' words. Reads of an
//! [`In`] are plain loads (the GPU serves them from its L1 cache); an
//! [`InOut`]'s are relaxed atomic accesses unless the kernel states, with
//! `unsafe`, that no other thread writes the word during the launch.
//!
//! Items are taken in chunks of [`CHUNK`] per block ([`chunk`],
//! [`blocks`]), so that the CPU backend's one-thread blocks and the GPU's
//! 256-thread blocks run the same launch.

pub mod bits;
pub mod compact;
pub mod scan;

pub use bits::{CountBits, ListBits};
pub use compact::CompactMarked;
pub use scan::{AddChunkOffsets, ScanChunks};

use core::marker::PhantomData;

use crate::block::{Block, Shared, combine_f64};
use crate::dynamic::global::GlobalU32;
use crate::kernel::LaunchBounds;

/// Items (entries, rows or array elements) per block of the kernels over
/// arrays.
pub const CHUNK: u32 = 2048;

/// Threads per block and blocks per multiprocessor of those kernels.
pub const BOUNDS: LaunchBounds = LaunchBounds {
    threads: 256,
    min_blocks: 4,
};

/// Combines one `f64` per thread of the block by `combine` (in a fixed
/// order: [`combine_f64`]) and writes the result as the `f64` partial
/// `at` of `partials` (words `2 at` and `2 at + 1`, low first), which the
/// host combines in block order, so that a reduction does not depend on
/// timing. `scratch` holds
/// [`crate::block::combine_scratch_len`]`(block_dim())` words.
/// Contains barriers: every thread of the block must call it, and only
/// this block writes partial `at`.
#[inline(always)]
pub fn write_partial<B: Block>(
    block: &B,
    scratch: Shared<u32>,
    value: f64,
    combine: impl Fn(f64, f64) -> f64,
    partials: &InOut<u32>,
    at: u32,
) {
    let total = combine_f64(block, scratch, value, combine);
    if block.thread_idx() == 0 {
        let bits = total.to_bits();
        // SAFETY: one thread of one block writes the partial's two words.
        unsafe {
            partials.set_unshared(2 * at, bits as u32);
            partials.set_unshared((2 * at).wrapping_add(1), (bits >> 32) as u32);
        }
    }
}

/// Shared-memory bytes of [`write_partial`]'s scratch in a block of
/// `threads` threads: the dynamic shared memory of a kernel whose only
/// use of it is that partial.
pub fn partial_shared_bytes(threads: u32) -> usize {
    let mut arena = crate::block::SharedArena::measuring();
    arena.alloc::<u32>(crate::block::combine_scratch_len(threads));
    arena.used()
}

/// [`partial_shared_bytes`] of a launch in [`BOUNDS`]: (a GPU block's, a
/// CPU-backend block's of one thread), as the host's launch takes it.
pub fn partial_launch_bytes() -> (usize, usize) {
    (
        partial_shared_bytes(BOUNDS.threads),
        partial_shared_bytes(1),
    )
}

/// The items `[start, end)` of block `block` of `n` items in [`CHUNK`]s.
#[inline(always)]
pub fn chunk(block: u32, n: u32) -> (u32, u32) {
    chunk_of(block, n, CHUNK)
}

/// Blocks for `n` items in [`CHUNK`]s (at least one).
#[inline(always)]
pub fn blocks(n: u32) -> u32 {
    blocks_of(n, CHUNK)
}

/// The items `[start, end)` of block `block` of `n` items in blocks of
/// `per_block` (kernels whose items are long take fewer per block than
/// [`CHUNK`], down to one per thread).
#[inline(always)]
pub fn chunk_of(block: u32, n: u32, per_block: u32) -> (u32, u32) {
    let start = block.saturating_mul(per_block).min(n);
    (start, start.saturating_add(per_block).min(n))
}

/// Blocks for `n` items in blocks of `per_block` (at least one).
#[inline(always)]
pub fn blocks_of(n: u32, per_block: u32) -> u32 {
    n.div_ceil(per_block).max(1)
}

/// A 32-bit element of an array: `u32`, `i32` or `f32`, held as its bits.
pub trait Word: Copy + 'static {
    /// From its bits.
    fn from_bits(bits: u32) -> Self;
    /// Its bits.
    fn to_bits(self) -> u32;
}

impl Word for u32 {
    #[inline(always)]
    fn from_bits(bits: u32) -> Self {
        bits
    }
    #[inline(always)]
    fn to_bits(self) -> u32 {
        self
    }
}

impl Word for i32 {
    #[inline(always)]
    fn from_bits(bits: u32) -> Self {
        bits as i32
    }
    #[inline(always)]
    fn to_bits(self) -> u32 {
        self as u32
    }
}

impl Word for f32 {
    #[inline(always)]
    fn from_bits(bits: u32) -> Self {
        f32::from_bits(bits)
    }
    #[inline(always)]
    fn to_bits(self) -> u32 {
        f32::to_bits(self)
    }
}

/// Stops the kernel: an index past a view's end (a trap on the GPU, which
/// ends the launch without the panic machinery's calls and registers; a
/// panic on the host).
#[cold]
#[inline(always)]
pub fn out_of_bounds() -> ! {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: `trap` only ends the kernel.
    unsafe {
        core::arch::nvptx::trap()
    }
    #[cfg(not(target_arch = "nvptx64"))]
    panic!("array index past the view's end")
}

/// A kernel parameter: `len` words of `T` at a device address, read only
/// ([`In`], access [`Read`]) or read and written ([`InOut`], access
/// [`ReadWrite`]); see the [module](self). Made by the host from a buffer.
#[repr(C)]
#[derive(Debug)]
pub struct ArrayView<T, A> {
    addr: u64,
    len: u32,
    pad: u32,
    _t: PhantomData<fn() -> (T, A)>,
}

/// The access of an [`In`]: the kernel only reads.
#[derive(Debug)]
pub enum Read {}

/// The access of an [`InOut`]: the kernel reads and writes.
#[derive(Debug)]
pub enum ReadWrite {}

/// `len` words of `T` the kernel only reads. Made by the host from a
/// buffer it lends shared.
pub type In<T> = ArrayView<T, Read>;

/// `len` words of `T` the kernel reads and writes. Made by the host from a
/// buffer it lends exclusively.
pub type InOut<T> = ArrayView<T, ReadWrite>;

impl<T, A> Clone for ArrayView<T, A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, A> Copy for ArrayView<T, A> {}

impl<T, A> ArrayView<T, A> {
    /// Words.
    #[inline(always)]
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether it has no words.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The view of `len` words at `addr` (the callers' `from_raw`).
    #[inline(always)]
    fn raw(addr: u64, len: u32) -> Self {
        ArrayView {
            addr,
            len,
            pad: 0,
            _t: PhantomData,
        }
    }
}

impl<T: Word> In<T> {
    /// The view of `len` words at `addr`.
    ///
    /// # Safety
    /// `addr` is 4-byte aligned and valid for reads of `len` words during
    /// the launches that get the view, and nothing writes them meanwhile.
    #[inline(always)]
    pub unsafe fn from_raw(addr: u64, len: u32) -> Self {
        Self::raw(addr, len)
    }

    /// Element `i`; stops the kernel past the end.
    #[inline(always)]
    pub fn get(&self, i: u32) -> T {
        if i >= self.len {
            out_of_bounds();
        }
        // SAFETY: `from_raw`'s contract: word `i` is readable and nothing
        // writes it during the launch.
        T::from_bits(unsafe { (self.addr as *const u32).add(i as usize).read() })
    }

    /// Byte `i` (byte `i % 4` of word `i / 4`, little endian on both
    /// targets); stops the kernel past the end.
    #[inline(always)]
    pub fn byte(&self, i: u32) -> u8 {
        if i / 4 >= self.len {
            out_of_bounds();
        }
        // SAFETY: as in `get`, for a byte inside the array.
        unsafe { (self.addr as *const u8).add(i as usize).read() }
    }

    /// Bit `b` of the array read as a bitmask (bit `b % 32` of word
    /// `b / 32`).
    #[inline(always)]
    pub fn bit(&self, b: u32) -> bool {
        (self.get(b / 32).to_bits() >> (b % 32)) & 1 == 1
    }
}

impl<T: Word> InOut<T> {
    /// The view of `len` words at `addr`.
    ///
    /// # Safety
    /// `addr` is 4-byte aligned and valid for atomic reads and writes of
    /// `len` words during the launches that get the view, and no other
    /// view of the same launches reads or writes them.
    #[inline(always)]
    pub unsafe fn from_raw(addr: u64, len: u32) -> Self {
        Self::raw(addr, len)
    }

    /// The words, word `i` checked against the length.
    #[inline(always)]
    fn words(&self, i: u32) -> GlobalU32 {
        if i >= self.len {
            out_of_bounds();
        }
        // SAFETY: `from_raw`'s contract; every access checks its index.
        unsafe { GlobalU32::new(self.addr) }
    }

    /// Element `i` (a relaxed atomic load, of device scope on the GPU);
    /// stops the kernel past the end.
    #[inline(always)]
    pub fn get(&self, i: u32) -> T {
        T::from_bits(self.words(i).load_gpu(i))
    }

    /// Writes element `i` (a relaxed atomic store, of device scope on the
    /// GPU); stops the kernel past the end.
    #[inline(always)]
    pub fn set(&self, i: u32, v: T) {
        self.words(i).store_gpu(i, v.to_bits())
    }

    /// Element `i` with a plain load, which the GPU serves from its L1
    /// cache; stops the kernel past the end.
    ///
    /// # Safety
    /// No other thread writes word `i` during the launch.
    #[inline(always)]
    pub unsafe fn get_unshared(&self, i: u32) -> T {
        // SAFETY: the caller's contract.
        T::from_bits(unsafe { self.words(i).load_unshared(i) })
    }

    /// Writes element `i` with a plain store; stops the kernel past the
    /// end.
    ///
    /// # Safety
    /// No other thread reads or writes word `i` during the launch.
    #[inline(always)]
    pub unsafe fn set_unshared(&self, i: u32, v: T) {
        // SAFETY: the caller's contract.
        unsafe { self.words(i).store_unshared(i, v.to_bits()) }
    }

    /// Byte `i` with a plain load; stops the kernel past the end.
    ///
    /// # Safety
    /// No other thread writes that byte, or its word atomically, during
    /// the launch.
    #[inline(always)]
    pub unsafe fn byte_unshared(&self, i: u32) -> u8 {
        // SAFETY: the caller's contract.
        unsafe { self.words(i / 4).load_byte_unshared(i) }
    }

    /// Writes byte `i` with a plain store (the other bytes of its word
    /// untouched); stops the kernel past the end.
    ///
    /// # Safety
    /// No other thread reads or writes that byte, or its word atomically,
    /// during the launch.
    #[inline(always)]
    pub unsafe fn set_byte_unshared(&self, i: u32, v: u8) {
        // SAFETY: the caller's contract.
        unsafe { self.words(i / 4).store_byte_unshared(i, v) }
    }
}

impl InOut<u32> {
    /// Atomically adds `v` to word `i` (wrapping); returns the old value.
    #[inline(always)]
    pub fn fetch_add(&self, i: u32, v: u32) -> u32 {
        self.words(i).fetch_add(i, v)
    }

    /// Atomically raises word `i` to `v` if `v` is larger; returns the old
    /// value.
    #[inline(always)]
    pub fn fetch_max(&self, i: u32, v: u32) -> u32 {
        self.words(i).fetch_max(i, v)
    }

    /// Atomically lowers word `i` to `v` if `v` is smaller; returns the
    /// old value.
    #[inline(always)]
    pub fn fetch_min(&self, i: u32, v: u32) -> u32 {
        self.words(i).fetch_min(i, v)
    }

    /// Atomically replaces word `i` by `new` where it holds `current`;
    /// returns the value found.
    #[inline(always)]
    pub fn compare_exchange(&self, i: u32, current: u32, new: u32) -> u32 {
        self.words(i).compare_exchange(i, current, new)
    }

    /// Atomically ors `v` into word `i`, returning nothing: on the GPU a
    /// reduction of device scope, for marks many threads set and none
    /// reads in the same launch.
    #[inline(always)]
    pub fn or(&self, i: u32, v: u32) {
        self.words(i).or(i, v)
    }

    /// Atomically ors `v` into word `i` (device scope on the GPU); returns
    /// the old value.
    #[inline(always)]
    pub fn fetch_or(&self, i: u32, v: u32) -> u32 {
        self.words(i).fetch_or_gpu(i, v)
    }

    /// [`InOut::or`] of `v` into byte `i` (its word).
    #[inline(always)]
    pub fn or_byte(&self, i: u32, v: u8) {
        self.or(i / 4, u32::from(v) << (8 * (i % 4)));
    }

    /// Sets bit `b` of the array read as a bitmask.
    #[inline(always)]
    pub fn set_bit(&self, b: u32) {
        self.or(b / 32, 1 << (b % 32));
    }

    /// Whether bit `b` is set (a relaxed atomic load of its word).
    #[inline(always)]
    pub fn bit(&self, b: u32) -> bool {
        (self.get(b / 32) >> (b % 32)) & 1 == 1
    }
}

// SAFETY: a view is an address and a length, `repr(C)` without padding
// (`pad` is a field), passed by value as the PTX parameter of the same
// layout; views are made only by the host crate from live buffers
// (`from_raw` is unsafe), never from arbitrary bytes.
#[cfg(not(target_arch = "nvptx64"))]
unsafe impl<T: 'static, A: 'static> crate::kernel::KernelParam for ArrayView<T, A> {
    fn bytes(&self) -> &[u8] {
        // SAFETY: `repr(C)` of two `u64`-aligned words of 8 bytes without
        // padding: every byte is initialized.
        unsafe { core::slice::from_raw_parts((self as *const Self).cast(), size_of::<Self>()) }
    }
}

/// A kernel parameter: `N` [`In`] views in one (for kernels that read more
/// arrays than a launch takes parameters); indexes as an array.
#[repr(transparent)]
#[derive(Debug)]
pub struct Ins<T, const N: usize>(pub [In<T>; N]);

impl<T, const N: usize> Clone for Ins<T, N> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, const N: usize> Copy for Ins<T, N> {}

impl<T, const N: usize> core::ops::Deref for Ins<T, N> {
    type Target = [In<T>; N];
    #[inline(always)]
    fn deref(&self) -> &[In<T>; N] {
        &self.0
    }
}

// SAFETY: `N` views one after another without padding, as the PTX
// parameter of the same array type expects; each made by the host from a
// live buffer only.
#[cfg(not(target_arch = "nvptx64"))]
unsafe impl<T: 'static, const N: usize> crate::kernel::KernelParam for Ins<T, N> {
    fn bytes(&self) -> &[u8] {
        // SAFETY: `N` views without padding between or inside them.
        unsafe { core::slice::from_raw_parts(self.0.as_ptr().cast(), size_of::<Self>()) }
    }
}

//! The block abstraction every patch kernel is written against: thread index,
//! block size, barrier, shared memory and block-wide primitives (strided
//! for-each, exclusive scan, atomics).
//!
//! Kernels keep every value that crosses a barrier in shared memory, so the
//! host implementation ([`HostBlock`]) can run a block as one thread that
//! executes each phase's strided loop serially: a valid interleaving of the
//! GPU execution.

use core::sync::atomic::{AtomicU32, Ordering};

/// Threads per warp (NVIDIA).
pub const WARP: u32 = 32;

/// The first index [`Block::for_each_spread`] gives thread `t` of a block
/// of `dim` threads: `(t % 32) * (dim / 32) + t / 32`, or `t` when `dim` is
/// not a multiple of 32 (a permutation of `0..dim` either way).
#[inline(always)]
pub fn spread_start(t: u32, dim: u32) -> u32 {
    if dim.is_multiple_of(WARP) {
        (t % WARP) * (dim / WARP) + t / WARP
    } else {
        t
    }
}

/// One cooperative thread block working on one patch.
pub trait Block {
    /// Index of the calling thread in the block, `0..block_dim()`.
    fn thread_idx(&self) -> u32;
    /// Number of threads in the block.
    fn block_dim(&self) -> u32;
    /// Barrier: every thread of the block waits here and shared-memory writes
    /// before it are visible after it.
    fn sync(&self);
    /// Atomically adds `v` (wrapping) to entry `i` of a shared-memory
    /// window and returns the old value (block scope).
    fn shared_fetch_add(&self, target: Shared<u32>, i: u32, v: u32) -> u32;
    /// Atomically lowers entry `i` of a shared-memory window to `v` if `v`
    /// is smaller (block scope).
    fn shared_min(&self, target: Shared<u32>, i: u32, v: u32);
    /// Atomically raises entry `i` of a shared-memory window to `v` if `v`
    /// is larger (block scope).
    fn shared_max(&self, target: Shared<u32>, i: u32, v: u32);
    /// Atomically replaces entry `i` of a shared-memory window by `v` and
    /// returns the old value (block scope).
    fn shared_exchange(&self, target: Shared<u32>, i: u32, v: u32) -> u32;
    /// Atomically ors `v` into entry `i` of a shared-memory window and
    /// returns the old value (block scope).
    fn shared_fetch_or(&self, target: Shared<u32>, i: u32, v: u32) -> u32;
    /// Atomically ands `v` into entry `i` of a shared-memory window and
    /// returns the old value (block scope).
    fn shared_fetch_and(&self, target: Shared<u32>, i: u32, v: u32) -> u32;
    /// Atomically replaces entry `i` of a shared-memory window by `new` if
    /// it holds `current`; returns the value found (block scope).
    fn shared_compare_exchange(&self, target: Shared<u32>, i: u32, current: u32, new: u32) -> u32;
    /// Atomically adds `v` to an `f32` stored as bits in global memory.
    fn global_add_f32(&self, target: &AtomicU32, v: f32);
    /// Barrier that also returns whether `pred` was true in any thread.
    fn sync_any(&self, pred: bool) -> bool;
    /// Starts copying `src` (global memory) into `dst[..src.len()]`,
    /// spread over the block's threads; the copy is complete after the
    /// calling thread's next [`Block::wait_copies`] and a barrier. On the
    /// GPU the copies are asynchronous (`cp.async`, sm_80+: all of a
    /// block's pieces are in flight at once, with no register staging), in
    /// 16-byte pieces when both sides are 16-byte aligned. `dst` may be
    /// overwritten up to its window's 16-byte-rounded end.
    fn copy_async<T: SharedScalar>(&self, src: &[T], dst: Shared<T>) {
        self.for_each(src.len() as u32, |i| dst.set(i, src[i as usize]));
    }
    /// [`Block::copy_async`] of a `src` that starts 16-byte aligned and
    /// may be read up to its 16-byte-rounded end (the patch layout pads
    /// each patch's FE and EV so): on the GPU whole 16-byte pieces, with no
    /// alignment test or partial piece.
    fn copy_async_padded<T: SharedScalar>(&self, src: &[T], dst: Shared<T>) {
        self.copy_async(src, dst);
    }
    /// Atomically sets bit `i` of the bitmask in `target` (32 bits a word);
    /// returns whether it was set before.
    #[inline(always)]
    fn shared_set_bit(&self, target: Shared<u32>, i: u32) -> bool {
        let m = 1 << (i % 32);
        self.shared_fetch_or(target, i / 32, m) & m != 0
    }
    /// Waits for the calling thread's [`Block::copy_async`] pieces.
    fn wait_copies(&self) {}
    /// Sets every entry of `dst` to `v`, spread over the block's threads
    /// (visible to the others after a barrier). On the GPU in 16-byte
    /// stores: `dst` is written up to its window's 16-byte-rounded end.
    fn fill(&self, dst: Shared<u32>, v: u32) {
        self.for_each(dst.len(), |i| dst.set(i, v));
    }

    /// Calls `f(i)` for every `i` in `0..n`, the indices spread over the
    /// block's threads (thread `t` takes `t, t + block_dim, ...`).
    #[inline(always)]
    fn for_each(&self, n: u32, mut f: impl FnMut(u32)) {
        let mut i = self.thread_idx();
        let step = self.block_dim();
        while i < n {
            f(i);
            i += step;
        }
    }

    /// [`Block::for_each`] for a few costly items whose control flow
    /// differs (a cavity's fill-in each): the indices go to the warps in
    /// turn (thread `t` of a block of `w` warps takes index `(t % 32) * w +
    /// t / 32`, then that plus the block size, ...), so that a handful of
    /// items runs in different warps side by side instead of diverging
    /// within one warp, where the warp would execute their paths one
    /// after another. The plain order when the block is not whole warps
    /// (the host's block of one thread included).
    #[inline(always)]
    fn for_each_spread(&self, n: u32, mut f: impl FnMut(u32)) {
        let step = self.block_dim();
        let mut i = spread_start(self.thread_idx(), step);
        while i < n {
            f(i);
            i += step;
        }
    }

    /// Block-wide prefix sum of `data[..n]` in place, exclusive or
    /// inclusive; returns the total. `scratch` must hold at least
    /// [`scan_scratch_len`]`(block_dim())` entries. Contains barriers: every
    /// thread must call it.
    fn scan(&self, data: Shared<u32>, n: u32, scratch: Shared<u32>, inclusive: bool) -> u32;
}

/// Entries of the `scratch` window of [`Block::scan`]: one per warp of 32
/// threads.
#[inline(always)]
pub fn scan_scratch_len(block_dim: u32) -> u32 {
    block_dim.div_ceil(32)
}

/// Words of the `scratch` window of [`combine_f64`]: two per thread.
#[inline(always)]
pub fn combine_scratch_len(block_dim: u32) -> u32 {
    2 * block_dim
}

/// Combines one `f64` per thread of the block by `combine` in a fixed
/// order (a tree: the upper half of the values left folded onto the
/// lower), so that the result does not depend on timing; thread 0 gets
/// the result (the others a partial). `scratch` must hold at least
/// [`combine_scratch_len`]`(block_dim())` words. Contains barriers: every
/// thread must call it.
#[inline(always)]
pub fn combine_f64<B: Block>(
    block: &B,
    scratch: Shared<u32>,
    value: f64,
    combine: impl Fn(f64, f64) -> f64,
) -> f64 {
    let t = block.thread_idx();
    // Thread `i`'s value in two words.
    let set = |i: u32, x: f64| {
        let bits = x.to_bits();
        scratch.set(2 * i, bits as u32);
        scratch.set(2 * i + 1, (bits >> 32) as u32);
    };
    let get =
        |i: u32| f64::from_bits(scratch.get(2 * i) as u64 | (scratch.get(2 * i + 1) as u64) << 32);
    set(t, value);
    block.sync();
    let mut n = block.block_dim();
    while n > 1 {
        let half = n.div_ceil(2);
        if t < n - half {
            set(t, combine(get(t), get(t + half)));
        }
        block.sync();
        n = half;
    }
    get(t)
}

/// Sorts `data[..n]` ascending in place by a bitonic network (Batcher
/// 1968) over `n.next_power_of_two()` entries, those past `n` filled with
/// `u32::MAX` first; `data` must hold that many. Contains barriers: every
/// thread must call it.
#[inline(always)]
pub fn sort<B: Block>(block: &B, data: Shared<u32>, n: u32) {
    let size = n.next_power_of_two();
    block.for_each(size - n, |i| data.set(n + i, u32::MAX));
    block.sync();
    let mut k = 2;
    while k <= size {
        let mut j = k >> 1;
        while j > 0 {
            // Pair `i` of the step: entries `lo` and `lo + j`, in the
            // order of the bitonic run of length `k` that holds them.
            block.for_each(size >> 1, |i| {
                let lo = ((i & !(j - 1)) << 1) | (i & (j - 1));
                let hi = lo | j;
                let (a, b) = (data.get(lo), data.get(hi));
                if a != b && (a > b) == (lo & k == 0) {
                    data.set(lo, b);
                    data.set(hi, a);
                }
            });
            block.sync();
            j >>= 1;
        }
        k <<= 1;
    }
}

/// Sorts `data[..n]` ([`sort`]) and writes its distinct values, ascending,
/// to `out`; returns their count. `data` must hold `n.next_power_of_two()`
/// entries, `marks` and `out` `n`, `scratch` [`scan_scratch_len`] of the
/// block. Contains barriers: every thread must call it.
#[inline(always)]
pub fn sort_unique<B: Block>(
    block: &B,
    data: Shared<u32>,
    n: u32,
    marks: Shared<u32>,
    out: Shared<u32>,
    scratch: Shared<u32>,
) -> u32 {
    sort(block, data, n);
    let first = |i: u32| i == 0 || data.get(i) != data.get(i - 1);
    block.for_each(n, |i| marks.set(i, u32::from(first(i))));
    block.sync();
    let count = block.scan(marks, n, scratch, false);
    block.for_each(n, |i| {
        if first(i) {
            out.set(marks.get(i), data.get(i));
        }
    });
    block.sync();
    count
}

/// The position of `x` in the ascending `list[..n]`, or `n` when it is
/// not there.
#[inline(always)]
pub fn position(list: Shared<u32>, n: u32, x: u32) -> u32 {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if list.get(mid) < x {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if lo < n && list.get(lo) == x { lo } else { n }
}

/// The contiguous part of a block-wide scan one thread handles.
#[derive(Clone, Copy)]
pub struct ScanChunk {
    begin: u32,
    end: u32,
}

impl ScanChunk {
    /// Thread `t` of `threads` over `n` entries.
    #[inline(always)]
    pub fn new(t: u32, threads: u32, n: u32) -> Self {
        // One entry per thread needs no division (patch rows usually fit).
        let chunk = if n <= threads { 1 } else { n.div_ceil(threads) };
        let begin = (t * chunk).min(n);
        ScanChunk {
            begin,
            end: (begin + chunk).min(n),
        }
    }

    /// Serial prefix sum of the chunk in place; returns its total.
    #[inline(always)]
    pub fn scan(&self, data: Shared<u32>, inclusive: bool) -> u32 {
        let mut sum = 0u32;
        for i in self.begin..self.end {
            let x = data.get(i);
            if inclusive {
                sum += x;
                data.set(i, sum);
            } else {
                data.set(i, sum);
                sum += x;
            }
        }
        sum
    }

    /// Adds the sum of all earlier chunks.
    #[inline(always)]
    pub fn add(&self, data: Shared<u32>, before: u32) {
        for i in self.begin..self.end {
            data.set(i, data.get(i) + before);
        }
    }
}

/// A typed window into shared memory (or, on the host, a worker's scratch
/// buffer). Copyable so every thread can hold one. Accesses are bounds
/// checked with debug assertions: the CPU backend's tests check every index
/// of the same kernel code that the GPU (release PTX) runs unchecked.
pub struct Shared<T> {
    ptr: *mut T,
    len: u32,
}

impl<T> Clone for Shared<T> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Shared<T> {}

/// Element types of shared-memory windows: on the GPU they are loaded and
/// stored with `ld.shared` / `st.shared` at shared-window addresses (no
/// generic-address conversion); on the host through plain pointers.
pub trait SharedScalar: Copy {
    /// Reads `*p`.
    ///
    /// # Safety
    /// `p` is a valid window entry (a shared-window address on the GPU).
    unsafe fn load(p: *mut Self) -> Self;
    /// Writes `*p = v`.
    ///
    /// # Safety
    /// As for `load`.
    unsafe fn store(p: *mut Self, v: Self);
}

macro_rules! shared_scalar {
    ($t:ty, $ld:literal, $st:literal, $reg:ident) => {
        impl SharedScalar for $t {
            #[inline(always)]
            unsafe fn load(p: *mut Self) -> Self {
                #[cfg(target_arch = "nvptx64")]
                {
                    let v: $t;
                    // SAFETY: forwarded from the caller; `p` is a shared-window address.
                    unsafe {
                        core::arch::asm!($ld, v = out($reg) v, a = in(reg64) p as u64,
                            options(pure, readonly, nostack))
                    };
                    v
                }
                #[cfg(not(target_arch = "nvptx64"))]
                // SAFETY: forwarded from the caller.
                unsafe {
                    p.read()
                }
            }
            #[inline(always)]
            unsafe fn store(p: *mut Self, v: Self) {
                #[cfg(target_arch = "nvptx64")]
                // SAFETY: forwarded from the caller; `p` is a shared-window address.
                unsafe {
                    core::arch::asm!($st, a = in(reg64) p as u64, v = in($reg) v,
                        options(nostack))
                };
                #[cfg(not(target_arch = "nvptx64"))]
                // SAFETY: forwarded from the caller.
                unsafe {
                    p.write(v)
                }
            }
        }
    };
}

shared_scalar!(
    u16,
    "ld.shared.u16 {v}, [{a}];",
    "st.shared.u16 [{a}], {v};",
    reg16
);
shared_scalar!(
    u32,
    "ld.shared.u32 {v}, [{a}];",
    "st.shared.u32 [{a}], {v};",
    reg32
);

impl<T: SharedScalar> Shared<T> {
    /// Number of entries.
    #[inline(always)]
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether the window is empty.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Reads entry `i`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn get(&self, i: u32) -> T {
        debug_assert!(i < self.len);
        // SAFETY: kernels index windows in bounds (checked in debug builds,
        // which the CPU-backend tests run); the window lies inside one live
        // allocation handed out by `SharedArena`; barriers order the accesses.
        unsafe { T::load(self.ptr.wrapping_add(i as usize)) }
    }

    /// Writes entry `i`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn set(&self, i: u32, v: T) {
        debug_assert!(i < self.len);
        // SAFETY: as in `get`.
        unsafe { T::store(self.ptr.wrapping_add(i as usize), v) }
    }

    /// Bit `i` of the bitmask in the window (32 bits a word).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn bit(&self, i: u32) -> bool
    where
        T: Into<u32>,
    {
        (self.get(i / 32).into() >> (i % 32)) & 1 == 1
    }

    /// Address of entry `i` (a shared-window address on the GPU).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn addr(&self, i: u32) -> *mut T {
        debug_assert!(i < self.len);
        self.ptr.wrapping_add(i as usize)
    }
}

/// Bump allocator over one block's shared memory. Every thread runs the same
/// sequence of `alloc` calls and so gets the same windows. Allocation only
/// bumps an offset (no per-window check, so that the kernels' set-up stays
/// a few instructions); [`SharedArena::check`] verifies the total once,
/// before any window is touched.
pub struct SharedArena {
    base: *mut u8,
    size: u32,
    used: u32,
}

impl SharedArena {
    /// An arena over `size` bytes at `base`.
    ///
    /// # Safety
    /// `base` must be valid for reads and writes of `size` bytes, 16-byte
    /// aligned, and not used otherwise while the arena's windows are in use.
    #[inline(always)]
    pub unsafe fn new(base: *mut u8, size: usize) -> Self {
        SharedArena {
            base,
            size: size.min(u32::MAX as usize) as u32,
            used: 0,
        }
    }

    /// A window of `len` entries of `T`, aligned to 16 bytes. Windows may
    /// only be accessed after [`SharedArena::check`] passed.
    #[inline(always)]
    pub fn alloc<T: SharedScalar>(&mut self, len: u32) -> Shared<T> {
        let bytes = (len.wrapping_mul(size_of::<T>() as u32)).wrapping_add(15) & !15;
        // `wrapping_add` keeps windows past the end (caught by `check`) and
        // the measuring arena (null base) well defined.
        let ptr = self.base.wrapping_add(self.used as usize) as *mut T;
        // Window sizes come from local counts bounded by the layout's
        // MAX_LOCAL_* limits: the sum of a kernel's windows stays far
        // below 2^32.
        self.used = self.used.wrapping_add(bytes);
        Shared { ptr, len }
    }

    /// Traps (GPU) or panics (host) when the windows handed out exceed the
    /// arena: the launch's shared memory was sized by
    /// [`crate::query::shared_bytes`] for every patch, so this never fires
    /// unless the host and the kernel disagree.
    #[inline(always)]
    pub fn check(&self) {
        assert!(self.used <= self.size);
    }

    /// Forgets the windows handed out: the next `alloc` starts at the base
    /// again (a block that runs a kernel's body once per item, as the
    /// update blocks that take patches until the round's share is taken).
    ///
    /// # Safety
    /// No window handed out before the call is accessed after it: the new
    /// windows overlap them.
    #[inline(always)]
    pub unsafe fn reset(&mut self) {
        self.used = 0;
    }

    /// An arena that only measures: its windows must never be accessed.
    /// Used to size shared memory on the host with the kernels' own
    /// allocation sequence.
    pub fn measuring() -> Self {
        SharedArena {
            base: core::ptr::null_mut(),
            size: u32::MAX,
            used: 0,
        }
    }

    /// Bytes handed out so far.
    #[inline(always)]
    pub fn used(&self) -> usize {
        self.used as usize
    }
}

/// The host implementation of [`Block`]: the whole block is one thread that
/// runs each phase serially (block size 1, barriers are no-ops).
#[derive(Clone, Copy, Debug, Default)]
pub struct HostBlock;

impl Block for HostBlock {
    #[inline(always)]
    fn thread_idx(&self) -> u32 {
        0
    }
    #[inline(always)]
    fn block_dim(&self) -> u32 {
        1
    }
    #[inline(always)]
    fn sync(&self) {}
    #[inline(always)]
    fn shared_fetch_add(&self, target: Shared<u32>, i: u32, v: u32) -> u32 {
        let old = target.get(i);
        target.set(i, old.wrapping_add(v));
        old
    }
    #[inline(always)]
    fn shared_min(&self, target: Shared<u32>, i: u32, v: u32) {
        target.set(i, target.get(i).min(v));
    }
    #[inline(always)]
    fn shared_max(&self, target: Shared<u32>, i: u32, v: u32) {
        target.set(i, target.get(i).max(v));
    }
    #[inline(always)]
    fn shared_exchange(&self, target: Shared<u32>, i: u32, v: u32) -> u32 {
        let old = target.get(i);
        target.set(i, v);
        old
    }
    #[inline(always)]
    fn shared_fetch_or(&self, target: Shared<u32>, i: u32, v: u32) -> u32 {
        let old = target.get(i);
        target.set(i, old | v);
        old
    }
    #[inline(always)]
    fn shared_fetch_and(&self, target: Shared<u32>, i: u32, v: u32) -> u32 {
        let old = target.get(i);
        target.set(i, old & v);
        old
    }
    #[inline(always)]
    fn shared_compare_exchange(&self, target: Shared<u32>, i: u32, current: u32, new: u32) -> u32 {
        let old = target.get(i);
        if old == current {
            target.set(i, new);
        }
        old
    }
    #[inline(always)]
    fn scan(&self, data: Shared<u32>, n: u32, _scratch: Shared<u32>, inclusive: bool) -> u32 {
        ScanChunk::new(0, 1, n).scan(data, inclusive)
    }
    #[inline(always)]
    fn sync_any(&self, pred: bool) -> bool {
        pred
    }
    #[inline(always)]
    fn global_add_f32(&self, target: &AtomicU32, v: f32) {
        let mut old = target.load(Ordering::Relaxed);
        loop {
            let new = (f32::from_bits(old) + v).to_bits();
            match target.compare_exchange_weak(old, new, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return,
                Err(cur) => old = cur,
            }
        }
    }
}

/// An output array in global memory written by many blocks at disjoint
/// indices (each element is written by the block of the patch that owns it).
pub struct Scatter<T> {
    ptr: *mut T,
    len: usize,
}

// SAFETY: writers use disjoint indices (see `write`), so sharing the pointer
// between worker threads cannot race.
unsafe impl<T: Send> Sync for Scatter<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for Scatter<T> {}

impl<T: Copy> Scatter<T> {
    /// An output over `slice`; the caller keeps it borrowed while in use.
    #[inline(always)]
    pub fn new(slice: &mut [T]) -> Self {
        Scatter {
            ptr: slice.as_mut_ptr(),
            len: slice.len(),
        }
    }

    /// An output over `len` entries at `ptr`.
    ///
    /// # Safety
    /// `ptr` must be valid for writes of `len` entries while the output is used.
    #[inline(always)]
    pub unsafe fn from_raw(ptr: *mut T, len: usize) -> Self {
        Scatter { ptr, len }
    }

    /// Writes entry `i`. Every index must be written by at most one thread
    /// per launch.
    #[inline(always)]
    pub fn write(&self, i: usize, v: T) {
        assert!(i < self.len);
        // SAFETY: in bounds; index ownership (one writer) is the launch's contract.
        unsafe { self.ptr.add(i).write(v) }
    }
}

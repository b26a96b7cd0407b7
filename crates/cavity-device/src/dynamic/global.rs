//! Typed views of the dynamic mesh's global-memory arrays.
//!
//! Words that other blocks may read while their patch is not locked by the
//! reader (bitmasks, ribbon hash tables, patch stashes, attributes, locks,
//! flags, queue, counters) are accessed atomically ([`GlobalU32`]), except
//! where no other thread writes a word during a kernel and plain loads
//! read it (an element's attribute words in a reduction, which only its
//! thread touches, and an element's own value in a per-element
//! computation, which only its thread writes:
//! [`GlobalU32::load_unshared`]); FE and EV
//! ([`GlobalU16`]) are only read and written by the holder of the patch's
//! lock, whose acquire and release order them.

use core::sync::atomic::{AtomicU32, Ordering};

/// A `u32` array in global memory accessed with relaxed atomics.
#[derive(Clone, Copy)]
pub struct GlobalU32 {
    ptr: *mut u32,
}

impl GlobalU32 {
    /// A view of the array at `addr`.
    ///
    /// # Safety
    /// `addr` must be a 4-byte-aligned address valid for atomic reads and
    /// writes of every index the caller uses, for as long as the view is used.
    #[inline(always)]
    pub unsafe fn new(addr: u64) -> Self {
        GlobalU32 {
            ptr: addr as *mut u32,
        }
    }

    #[inline(always)]
    fn at(&self, i: u32) -> &AtomicU32 {
        // SAFETY: `new`'s contract: entry `i` is valid for atomic access.
        unsafe { AtomicU32::from_ptr(self.ptr.add(i as usize)) }
    }

    /// Reads entry `i`.
    #[inline(always)]
    pub fn load(&self, i: u32) -> u32 {
        self.at(i).load(Ordering::Relaxed)
    }

    /// Writes entry `i`.
    #[inline(always)]
    pub fn store(&self, i: u32, v: u32) {
        self.at(i).store(v, Ordering::Relaxed)
    }

    /// [`GlobalU32::load`] of device scope on the GPU (`ld.relaxed.gpu`):
    /// for words no host or peer device touches while the kernel runs.
    #[inline(always)]
    pub fn load_gpu(&self, i: u32) -> u32 {
        #[cfg(target_arch = "nvptx64")]
        {
            let v: u32;
            // SAFETY: `new`'s contract: entry `i` is a valid, aligned word
            // of global memory for atomic access.
            unsafe {
                core::arch::asm!("ld.relaxed.gpu.global.u32 {v}, [{p}];",
                     v = out(reg32) v, p = in(reg64) self.ptr.add(i as usize));
            }
            v
        }
        #[cfg(not(target_arch = "nvptx64"))]
        self.load(i)
    }

    /// [`GlobalU32::store`] of device scope on the GPU (`st.relaxed.gpu`).
    #[inline(always)]
    pub fn store_gpu(&self, i: u32, v: u32) {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: as in `load_gpu`.
        unsafe {
            core::arch::asm!("st.relaxed.gpu.global.u32 [{p}], {v};",
                 p = in(reg64) self.ptr.add(i as usize), v = in(reg32) v);
        }
        #[cfg(not(target_arch = "nvptx64"))]
        self.store(i, v)
    }

    /// Reads entry `i` with a plain load, which the GPU serves from its L1
    /// cache (a relaxed atomic load goes to L2 each time).
    ///
    /// # Safety
    /// No other thread or device writes entry `i` while the kernel runs.
    #[inline(always)]
    pub unsafe fn load_unshared(&self, i: u32) -> u32 {
        // SAFETY: `new`'s contract makes the entry readable; the caller's,
        // that no write races with this read.
        unsafe { self.ptr.add(i as usize).read() }
    }

    /// Writes entry `i` with a plain store.
    ///
    /// # Safety
    /// No other thread or device reads or writes entry `i` while the
    /// kernel runs.
    #[inline(always)]
    pub unsafe fn store_unshared(&self, i: u32, v: u32) {
        // SAFETY: `new`'s contract makes the entry writable; the caller's,
        // that no other access races with this write.
        unsafe { self.ptr.add(i as usize).write(v) }
    }

    /// Reads byte `i` of the array (byte `i % 4` of word `i / 4`, little
    /// endian on both targets) with a plain load.
    ///
    /// # Safety
    /// No other thread or device writes that byte while the kernel runs,
    /// nor writes its word atomically (a mixed-size race on the host).
    #[inline(always)]
    pub unsafe fn load_byte_unshared(&self, i: u32) -> u8 {
        // SAFETY: as in `load_unshared`, for the byte inside the array.
        unsafe { self.ptr.cast::<u8>().add(i as usize).read() }
    }

    /// Writes byte `i` of the array with a plain store (the other bytes of
    /// its word untouched).
    ///
    /// # Safety
    /// No other thread or device reads or writes that byte while the
    /// kernel runs, nor accesses its word atomically.
    #[inline(always)]
    pub unsafe fn store_byte_unshared(&self, i: u32, v: u8) {
        // SAFETY: as in `store_unshared`, for the byte inside the array.
        unsafe { self.ptr.cast::<u8>().add(i as usize).write(v) }
    }

    /// Atomically ors `v` into entry `i` without returning the old value:
    /// on the GPU a reduction of device scope (`red.relaxed.gpu`; the
    /// atomics of `core` are of system scope and return the old value),
    /// for marks that many threads set and none reads in the same kernel.
    #[inline(always)]
    pub fn or(&self, i: u32, v: u32) {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: `new`'s contract: entry `i` is a valid, aligned word of
        // global memory for atomic access.
        unsafe {
            core::arch::asm!("red.relaxed.gpu.global.or.b32 [{p}], {v};",
                 p = in(reg64) self.ptr.add(i as usize), v = in(reg32) v);
        }
        #[cfg(not(target_arch = "nvptx64"))]
        self.fetch_or(i, v);
    }

    /// [`GlobalU32::fetch_or`] of device scope on the GPU
    /// (`atom.relaxed.gpu`): for words no host or peer device touches
    /// while the kernel runs.
    #[inline(always)]
    pub fn fetch_or_gpu(&self, i: u32, v: u32) -> u32 {
        #[cfg(target_arch = "nvptx64")]
        {
            let old: u32;
            // SAFETY: as in `or`.
            unsafe {
                core::arch::asm!("atom.relaxed.gpu.global.or.b32 {o}, [{p}], {v};",
                     o = out(reg32) old, p = in(reg64) self.ptr.add(i as usize), v = in(reg32) v);
            }
            old
        }
        #[cfg(not(target_arch = "nvptx64"))]
        self.fetch_or(i, v)
    }

    /// [`GlobalU32::or`] of `v` into byte `i` of the array (its word).
    #[inline(always)]
    pub fn or_byte(&self, i: u32, v: u8) {
        self.or(i / 4, u32::from(v) << (8 * (i % 4)));
    }

    /// Atomically adds `v` (wrapping); returns the old value.
    #[inline(always)]
    pub fn fetch_add(&self, i: u32, v: u32) -> u32 {
        self.at(i).fetch_add(v, Ordering::Relaxed)
    }

    /// Atomically ands `v`; returns the old value.
    #[inline(always)]
    pub fn fetch_and(&self, i: u32, v: u32) -> u32 {
        self.at(i).fetch_and(v, Ordering::Relaxed)
    }

    /// Atomically ors `v`; returns the old value.
    #[inline(always)]
    pub fn fetch_or(&self, i: u32, v: u32) -> u32 {
        self.at(i).fetch_or(v, Ordering::Relaxed)
    }

    /// Atomically raises entry `i` to `v` if `v` is larger; returns the old
    /// value.
    #[inline(always)]
    pub fn fetch_max(&self, i: u32, v: u32) -> u32 {
        self.at(i).fetch_max(v, Ordering::Relaxed)
    }

    /// Atomically lowers entry `i` to `v` if `v` is smaller; returns the
    /// old value.
    #[inline(always)]
    pub fn fetch_min(&self, i: u32, v: u32) -> u32 {
        self.at(i).fetch_min(v, Ordering::Relaxed)
    }

    /// Atomically replaces `v`; returns the old value.
    #[inline(always)]
    pub fn swap(&self, i: u32, v: u32) -> u32 {
        self.at(i).swap(v, Ordering::Relaxed)
    }

    /// Replaces `current` by `new` with acquire ordering on success;
    /// returns the value found.
    #[inline(always)]
    pub fn compare_exchange_acquire(&self, i: u32, current: u32, new: u32) -> u32 {
        match self
            .at(i)
            .compare_exchange(current, new, Ordering::Acquire, Ordering::Relaxed)
        {
            Ok(v) | Err(v) => v,
        }
    }

    /// Relaxed compare-and-swap; returns the value found.
    #[inline(always)]
    pub fn compare_exchange(&self, i: u32, current: u32, new: u32) -> u32 {
        match self
            .at(i)
            .compare_exchange(current, new, Ordering::Relaxed, Ordering::Relaxed)
        {
            Ok(v) | Err(v) => v,
        }
    }

    /// Writes `v` with release ordering.
    #[inline(always)]
    pub fn store_release(&self, i: u32, v: u32) {
        self.at(i).store(v, Ordering::Release)
    }

    /// Whether bit `b` of the bitmask starting at word `start` is set.
    #[inline(always)]
    pub fn bit(&self, start: u32, b: u32) -> bool {
        (self.load(start + b / 32) >> (b % 32)) & 1 == 1
    }
}

/// A `u16` array in global memory read and written only under the lock of
/// the patch it belongs to.
#[derive(Clone, Copy)]
pub struct GlobalU16 {
    ptr: *mut u16,
}

impl GlobalU16 {
    /// A view of the array at `addr`.
    ///
    /// # Safety
    /// `addr` must be a 2-byte-aligned address valid for reads and writes of
    /// every index the caller uses; the caller only touches a patch's
    /// entries while the block holds that patch's lock.
    #[inline(always)]
    pub unsafe fn new(addr: u64) -> Self {
        GlobalU16 {
            ptr: addr as *mut u16,
        }
    }

    /// Reads entry `i`.
    #[inline(always)]
    pub fn load(&self, i: u32) -> u16 {
        // SAFETY: `new`'s contract; the patch lock orders this access.
        unsafe { self.ptr.add(i as usize).read() }
    }

    /// Writes entry `i`.
    #[inline(always)]
    pub fn store(&self, i: u32, v: u16) {
        // SAFETY: as in `load`.
        unsafe { self.ptr.add(i as usize).write(v) }
    }
}

/// A `u32` array in global memory that nothing writes while the view is
/// used (a kernel's input from earlier kernels): plain loads, which the
/// GPU serves from its L1 cache (a relaxed atomic load of [`GlobalU32`]
/// goes to L2 each time).
#[derive(Clone, Copy)]
pub struct FrozenU32 {
    ptr: *const u32,
}

impl FrozenU32 {
    /// A read-only view of the array at `addr`.
    ///
    /// # Safety
    /// `addr` must be a 4-byte-aligned address valid for reads of every
    /// index the caller uses, and no thread or device may write those
    /// entries while the view is used.
    #[inline(always)]
    pub unsafe fn new(addr: u64) -> Self {
        FrozenU32 {
            ptr: addr as *const u32,
        }
    }

    /// Reads entry `i`.
    #[inline(always)]
    pub fn load(&self, i: u32) -> u32 {
        // SAFETY: `new`'s contract: entry `i` is readable and not written
        // meanwhile.
        unsafe { self.ptr.add(i as usize).read() }
    }
}

/// A memory fence ordering the calling thread's global accesses before and
/// after it for every other thread of the device: `fence.sc.gpu` on the
/// GPU (the blocks of one device are all that share the mesh while a
/// kernel runs; the host reads it after the kernel), a sequentially
/// consistent fence on the host. Core's `fence(SeqCst)` would give
/// `fence.sc.sys`, which also orders against the host and peer devices and
/// made warps wait at it for about 2 % of a heavy collapse round on the
/// H100 (docs/history/2026-11-26-twenty-fifth-session.md).
#[inline(always)]
pub fn fence() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: a fence only orders the calling thread's memory accesses; the
    // asm block is not marked `nomem`, so the compiler keeps memory
    // accesses on their side of it too.
    unsafe {
        core::arch::asm!("fence.sc.gpu;")
    }
    #[cfg(not(target_arch = "nvptx64"))]
    core::sync::atomic::fence(Ordering::SeqCst);
}

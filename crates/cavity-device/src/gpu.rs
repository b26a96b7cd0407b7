//! The GPU side: the [`Block`] implementation over CUDA threads and shared
//! memory, and [`launch`], which runs a declared kernel's body on a CUDA
//! block (the entry points themselves come from the declarations,
//! [`crate::kernel!`]).

use core::arch::asm;
use core::arch::nvptx::{_block_dim_x, _block_idx_x, _grid_dim_x, _syncthreads, _thread_idx_x};
use core::sync::atomic::AtomicU32;

use crate::block::{Block, ScanChunk, Shared, SharedArena, SharedScalar};
use crate::kernel::{Kernel, Launch};

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; nothing runs after it.
    unsafe { core::arch::nvptx::trap() }
}

core::arch::global_asm!(".extern .shared .align 16 .b8 DYN_SMEM[];");

/// A returning atomic `$op` (a PTX `atom` instruction) on entry `$i` of a
/// `Shared<u32>` window with operand `$v`; evaluates to the old value.
macro_rules! shared_atomic {
    ($op:literal, $target:expr, $i:expr, $v:expr) => {{
        let old: u32;
        // SAFETY: `addr` is an aligned u32 entry of a shared-memory window.
        unsafe {
            asm!(concat!($op, " {o}, [{p}], {v};"),
                 o = out(reg32) old, p = in(reg64) $target.addr($i) as u64, v = in(reg32) $v);
        }
        old
    }};
}

/// CUDA threads of one block.
struct GpuBlock;

impl Block for GpuBlock {
    #[inline(always)]
    fn thread_idx(&self) -> u32 {
        // SAFETY: reads a special register.
        unsafe { _thread_idx_x() as u32 }
    }
    #[inline(always)]
    fn block_dim(&self) -> u32 {
        // SAFETY: reads a special register.
        unsafe { _block_dim_x() as u32 }
    }
    #[inline(always)]
    fn sync(&self) {
        // SAFETY: every thread of the block reaches each barrier (kernels
        // call block-wide operations uniformly).
        unsafe { _syncthreads() }
    }
    #[inline(always)]
    fn shared_fetch_add(&self, target: Shared<u32>, i: u32, v: u32) -> u32 {
        shared_atomic!("atom.relaxed.cta.shared.add.u32", target, i, v)
    }
    #[inline(always)]
    fn shared_min(&self, target: Shared<u32>, i: u32, v: u32) {
        // SAFETY: `addr` is an aligned u32 entry of a shared-memory window.
        unsafe {
            asm!("red.relaxed.cta.shared.min.u32 [{p}], {v};",
                 p = in(reg64) target.addr(i) as u64, v = in(reg32) v);
        }
    }
    #[inline(always)]
    fn shared_max(&self, target: Shared<u32>, i: u32, v: u32) {
        // SAFETY: `addr` is an aligned u32 entry of a shared-memory window.
        unsafe {
            asm!("red.relaxed.cta.shared.max.u32 [{p}], {v};",
                 p = in(reg64) target.addr(i) as u64, v = in(reg32) v);
        }
    }
    #[inline(always)]
    fn shared_exchange(&self, target: Shared<u32>, i: u32, v: u32) -> u32 {
        shared_atomic!("atom.relaxed.cta.shared.exch.b32", target, i, v)
    }
    #[inline(always)]
    fn shared_fetch_or(&self, target: Shared<u32>, i: u32, v: u32) -> u32 {
        shared_atomic!("atom.relaxed.cta.shared.or.b32", target, i, v)
    }
    #[inline(always)]
    fn shared_fetch_and(&self, target: Shared<u32>, i: u32, v: u32) -> u32 {
        shared_atomic!("atom.relaxed.cta.shared.and.b32", target, i, v)
    }
    #[inline(always)]
    fn shared_compare_exchange(&self, target: Shared<u32>, i: u32, current: u32, new: u32) -> u32 {
        let old: u32;
        // SAFETY: `addr` is an aligned u32 entry of a shared-memory window.
        unsafe {
            asm!("atom.relaxed.cta.shared.cas.b32 {o}, [{p}], {c}, {v};",
                 o = out(reg32) old, p = in(reg64) target.addr(i) as u64,
                 c = in(reg32) current, v = in(reg32) new);
        }
        old
    }
    /// Warp-shuffle scan: per-thread chunks, an inclusive scan of the chunk
    /// sums inside each warp, then of the warp totals by warp 0 (two
    /// barriers). Needs `block_dim` a multiple of 32 and at most 1024.
    #[inline(always)]
    fn scan(&self, data: Shared<u32>, n: u32, scratch: Shared<u32>, inclusive: bool) -> u32 {
        let t = self.thread_idx();
        let threads = self.block_dim();
        let chunk = ScanChunk::new(t, threads, n);
        let sum = chunk.scan(data, inclusive);
        let (lane, warp, warps) = (t % 32, t / 32, threads / 32);
        let x = warp_inclusive_scan(sum, lane);
        if lane == 31 {
            scratch.set(warp, x);
        }
        self.sync();
        if warp == 0 {
            let w = if lane < warps { scratch.get(lane) } else { 0 };
            let w = warp_inclusive_scan(w, lane);
            if lane < warps {
                scratch.set(lane, w);
            }
        }
        self.sync();
        chunk.add(
            data,
            x - sum + if warp > 0 { scratch.get(warp - 1) } else { 0 },
        );
        let total = scratch.get(warps - 1);
        self.sync();
        total
    }
    #[inline(always)]
    fn sync_any(&self, pred: bool) -> bool {
        let any: u32;
        // SAFETY: every thread of the block reaches the barrier (as for `sync`).
        unsafe {
            asm!("{{ .reg .pred p, q; setp.ne.u32 q, {x}, 0; bar.red.or.pred p, 0, q; selp.u32 {y}, 1, 0, p; }}",
                 x = in(reg32) pred as u32, y = out(reg32) any);
        }
        any != 0
    }
    #[inline(always)]
    fn copy_async<T: SharedScalar>(&self, src: &[T], dst: Shared<T>) {
        if src.is_empty() {
            return;
        }
        let bytes = core::mem::size_of_val(src) as u32;
        let (s, d) = (src.as_ptr() as u64, dst.addr(0) as u64);
        if (s | d) % 16 == 0 {
            self.for_each(bytes.div_ceil(16), |c| {
                let size = (bytes - 16 * c).min(16);
                // SAFETY: reads `size` bytes inside `src` and writes 16 bytes
                // (zero-filled past `size`) inside `dst`'s 16-byte-rounded window.
                unsafe {
                    asm!("{{ .reg .u64 g; cvta.to.global.u64 g, {s}; cp.async.cg.shared.global [{d}], [g], 16, {n}; }}",
                         s = in(reg64) s + 16 * c as u64, d = in(reg64) d + 16 * c as u64, n = in(reg32) size);
                }
            });
        } else if size_of::<T>() == 4 {
            self.for_each(src.len() as u32, |i| {
                // SAFETY: entry `i` of `src` and of `dst`, both 4-byte aligned.
                unsafe {
                    asm!("{{ .reg .u64 g; cvta.to.global.u64 g, {s}; cp.async.ca.shared.global [{d}], [g], 4; }}",
                         s = in(reg64) s + 4 * i as u64, d = in(reg64) dst.addr(i) as u64);
                }
            });
        } else {
            self.for_each(src.len() as u32, |i| dst.set(i, src[i as usize]));
        }
    }
    #[inline(always)]
    fn copy_async_padded<T: SharedScalar>(&self, src: &[T], dst: Shared<T>) {
        if src.is_empty() {
            return;
        }
        let (s, d) = (src.as_ptr() as u64, dst.addr(0) as u64);
        debug_assert!((s | d) % 16 == 0);
        let pieces = (core::mem::size_of_val(src) as u32).div_ceil(16);
        self.for_each(pieces, |c| {
            // SAFETY: reads 16 bytes inside `src`'s 16-byte-rounded end (the
            // caller's padding) and writes them inside `dst`'s window, which
            // the arena rounds up to 16 bytes.
            unsafe {
                asm!("{{ .reg .u64 g; cvta.to.global.u64 g, {s}; cp.async.cg.shared.global [{d}], [g], 16; }}",
                     s = in(reg64) s + 16 * c as u64, d = in(reg64) d + 16 * c as u64);
            }
        });
    }
    #[inline(always)]
    fn fill(&self, dst: Shared<u32>, v: u32) {
        if dst.is_empty() {
            return;
        }
        let base = dst.addr(0) as u64;
        self.for_each(dst.len().div_ceil(4), |c| {
            // SAFETY: 16 bytes inside `dst`'s window, which the arena
            // aligns to 16 bytes and rounds up to a multiple of 16 bytes.
            unsafe {
                asm!("st.shared.v4.u32 [{p}], {{{v}, {v}, {v}, {v}}};",
                     p = in(reg64) base + 16 * c as u64, v = in(reg32) v);
            }
        });
    }
    #[inline(always)]
    fn wait_copies(&self) {
        // SAFETY: waits for this thread's own asynchronous copies.
        unsafe { asm!("cp.async.wait_all;") }
    }
    #[inline(always)]
    fn global_add_f32(&self, target: &AtomicU32, v: f32) {
        // SAFETY: `target` is a valid, aligned f32 in global memory.
        unsafe {
            asm!("red.relaxed.gpu.global.add.f32 [{p}], {v};",
                 p = in(reg64) target.as_ptr(), v = in(reg32) v.to_bits());
        }
    }
}

/// Inclusive sum of `x` over lanes `0..=lane` of the (full) warp.
#[inline(always)]
fn warp_inclusive_scan(mut x: u32, lane: u32) -> u32 {
    let mut d = 1;
    while d < 32 {
        let y: u32;
        // SAFETY: all 32 lanes execute this shuffle (full mask).
        unsafe {
            asm!("shfl.sync.up.b32 {y}, {x}, {d}, 0, 0xffffffff;",
                 y = out(reg32) y, x = in(reg32) x, d = in(reg32) d);
        }
        if lane >= d {
            x += y;
        }
        d <<= 1;
    }
    x
}

/// The block's dynamic shared memory as an arena.
#[inline(always)]
fn arena() -> SharedArena {
    let (p, size): (u64, u32);
    // SAFETY: reads the shared-window address of the dynamic shared-memory
    // symbol (windows are accessed with ld/st.shared only) and its launch size.
    unsafe {
        asm!("mov.u64 {p}, DYN_SMEM;", p = out(reg64) p);
        asm!("mov.u32 {s}, %dynamic_smem_size;", s = out(reg32) size);
    }
    // SAFETY: the window is this block's dynamic shared memory of `size` bytes.
    unsafe { SharedArena::new(p as *mut u8, size as usize) }
}

/// Runs kernel `K`'s body on this CUDA block (the entry points of
/// [`crate::kernel!`] and [`crate::cavity_kernels!`] call it).
///
/// # Safety
/// `K`'s contract; called from `K`'s entry point only (every thread of
/// the block, with the launch's dynamic shared memory).
#[doc(hidden)]
#[inline(always)]
pub unsafe fn launch<K: Kernel>(params: K::Params) {
    // SAFETY: reads special registers.
    let (block_idx, grid_dim) = unsafe { (_block_idx_x() as u32, _grid_dim_x() as u32) };
    let mut launch = Launch {
        block: &GpuBlock,
        arena: &mut arena(),
        block_idx,
        grid_dim,
    };
    // SAFETY: forwarded.
    unsafe { K::run(&mut launch, params) }
}

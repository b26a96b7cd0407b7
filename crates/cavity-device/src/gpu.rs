//! The GPU side: the [`Block`] implementation over CUDA threads and shared
//! memory, and the kernel entry points (one thread block per patch).

use core::arch::asm;
use core::arch::nvptx::{_block_dim_x, _block_idx_x, _grid_dim_x, _syncthreads, _thread_idx_x};
use core::sync::atomic::AtomicU32;

use crate::block::{Block, ScanChunk, Scatter, Shared, SharedArena, SharedScalar};
use crate::delaunay::Delaunay;
use crate::dynamic::global::{FrozenU32, GlobalU32};
use crate::dynamic::layout::RawDynamicMesh;
use crate::dynamic::patch::DynMesh;
use crate::dynamic::smooth::{self, Smoothing};
use crate::dynamic::{cleanup, scheduler, slice, update};
use crate::layout::{Kind, RawPatchMesh};
use crate::operations::{
    CollapseShortEdges, DeleteEdgesInBall, DeleteFacesInBall, DeleteVerticesInBall,
    RefineFaceNeighbourhood, SplitLargeFaces, SplitLongEdges,
};
use crate::query::Query;
use crate::remesh::{CollapseShortEdgesSafely, ImproveValence};
use crate::track::{self, Advection, ShorterDiagonal};
use crate::{baseline, normals, workload};

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

/// Global thread index and grid stride for element-wise kernels.
#[inline(always)]
fn grid() -> (u32, u32) {
    // SAFETY: reads special registers.
    unsafe {
        let dim = _block_dim_x() as u32;
        (
            (_block_idx_x() as u32) * dim + _thread_idx_x() as u32,
            dim * _grid_dim_x() as u32,
        )
    }
}

/// Reads an array argument.
///
/// # Safety
/// `p` valid for `n` reads (or `n == 0`).
#[inline(always)]
unsafe fn arg<'a, T>(p: *const T, n: u32) -> &'a [T] {
    if n == 0 {
        &[]
    } else {
        // SAFETY: forwarded.
        unsafe { core::slice::from_raw_parts(p, n as usize) }
    }
}

/// Defines, for each query, the export and neighbour-sum kernels with the
/// query fixed at compile time (each gets its own register allocation).
macro_rules! query_kernels {
    ($($query:ident => $export:ident, $sum:ident;)*) => {$(
        /// Query export (see `workload::export`); one block per patch.
        ///
        /// # Safety
        /// Launched by the host runtime with valid device arrays of the given lengths.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $export(
            mesh: RawPatchMesh,
            offsets: *const u32,
            n_offsets: u32,
            counts: *mut u32,
            n_counts: u32,
            out: *mut u32,
            n_out: u32,
        ) {
            // SAFETY: the launch contract above.
            unsafe {
                let mesh = mesh.view();
                let offsets = if offsets.is_null() { None } else { Some(arg(offsets, n_offsets)) };
                let counts = Scatter::from_raw(counts, n_counts as usize);
                let out = Scatter::from_raw(out, n_out as usize);
                let patch = _block_idx_x() as u32;
                let target = workload::ExportTarget { offsets, counts: &counts, out: &out };
                workload::export(&GpuBlock, &mut arena(), &mesh, patch, Query::$query, &target);
            }
        }

        /// Neighbour sum through a query (see `workload::neighbor_sum`).
        ///
        /// # Safety
        /// As for the export kernel.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $sum(
            mesh: RawPatchMesh,
            attr: *const f32,
            n_attr: u32,
            out: *mut f32,
            n_out: u32,
        ) {
            // SAFETY: the launch contract.
            unsafe {
                let mesh = mesh.view();
                let out = Scatter::from_raw(out, n_out as usize);
                let patch = _block_idx_x() as u32;
                workload::neighbor_sum(&GpuBlock, &mut arena(), &mesh, patch, Query::$query, arg(attr, n_attr), &out);
            }
        }
    )*};
}

query_kernels! {
    VV => query_export_vv, query_neighbor_sum_vv;
    VE => query_export_ve, query_neighbor_sum_ve;
    VF => query_export_vf, query_neighbor_sum_vf;
    EV => query_export_ev, query_neighbor_sum_ev;
    EF => query_export_ef, query_neighbor_sum_ef;
    FV => query_export_fv, query_neighbor_sum_fv;
    FE => query_export_fe, query_neighbor_sum_fe;
    FF => query_export_ff, query_neighbor_sum_ff;
}

/// Area-weighted normal accumulation (see `normals::accumulate`).
///
/// # Safety
/// As for `query_export`; `normals` zeroed, `3 * vertices` entries.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn vertex_normals(
    mesh: RawPatchMesh,
    positions: *const f32,
    n_positions: u32,
    normals: *const AtomicU32,
    n_normals: u32,
) {
    // SAFETY: the launch contract.
    unsafe {
        let mesh = mesh.view();
        let patch = _block_idx_x() as u32;
        normals::accumulate(
            &GpuBlock,
            &mut arena(),
            &mesh,
            patch,
            arg(positions, n_positions),
            arg(normals, n_normals),
        );
    }
}

/// Normalizes `vertices` normals (element-wise, grid-stride).
///
/// # Safety
/// `normals` holds `3 * vertices` entries.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn normalize_normals(normals: *const AtomicU32, vertices: u32) {
    // SAFETY: the launch contract.
    let normals = unsafe { arg(normals, 3 * vertices) };
    let (mut i, stride) = grid();
    while i < vertices {
        normals::normalize(i, normals);
        i += stride;
    }
}

/// The naive baseline: one thread per element over a CSR adjacency.
///
/// # Safety
/// `offsets` has `n + 1` entries, `adj` `n_adj`, `attr` `n_attr`, `out` `n`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn baseline_csr_sum(
    n: u32,
    offsets: *const u32,
    adj: *const u32,
    n_adj: u32,
    attr: *const f32,
    n_attr: u32,
    out: *mut f32,
) {
    // SAFETY: the launch contract.
    unsafe {
        let offsets = arg(offsets, n + 1);
        let adj = arg(adj, n_adj);
        let attr = arg(attr, n_attr);
        let out = Scatter::from_raw(out, n as usize);
        let (mut i, stride) = grid();
        while i < n {
            baseline::csr_sum(i, offsets, adj, attr, &out);
            i += stride;
        }
    }
}

/// The PDE baseline (see `baseline::pde_sum`): one thread per element of
/// `query`'s source kind over the Directed Edges arrays.
///
/// # Safety
/// `fv`, `twin`, `edge` have `n_half` entries, `outgoing` `n_vertices`,
/// `edge_half` `n_edges`, `attr` `n_attr`, `out` `n`; `query` is a valid code.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn baseline_pde_sum(
    query: u32,
    n: u32,
    fv: *const u32,
    twin: *const u32,
    edge: *const u32,
    n_half: u32,
    outgoing: *const u32,
    n_vertices: u32,
    edge_half: *const u32,
    n_edges: u32,
    max_valence: u32,
    attr: *const f32,
    n_attr: u32,
    out: *mut f32,
) {
    // SAFETY: the launch contract.
    unsafe {
        let de = baseline::DirectedEdges {
            fv: arg(fv, n_half),
            twin: arg(twin, n_half),
            edge: arg(edge, n_half),
            outgoing: arg(outgoing, n_vertices),
            edge_half: arg(edge_half, n_edges),
        };
        let attr = arg(attr, n_attr);
        let out = Scatter::from_raw(out, n as usize);
        let Some(query) = Query::from_u32(query) else {
            return;
        };
        let (mut i, stride) = grid();
        crate::query::specialize(query, |q| {
            while i < n {
                baseline::pde_sum(q, i, &de, max_valence, attr, &out);
                i += stride;
            }
        });
    }
}

/// One update round of the Delaunay edge flips: each block takes queued
/// patches until the round's share is taken (`dynamic::update`), `salt`
/// varying the cavities' priorities.
///
/// # Safety
/// `mesh` describes live device arrays of a dynamic mesh; dynamic shared
/// memory is `dynamic::update::shared_bytes::<Delaunay>(&mesh.cap, threads)`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn dynamic_delaunay(mesh: RawDynamicMesh, salt: u32) {
    // SAFETY: the launch contract.
    let m = unsafe { DynMesh::new(&mesh) };
    while update::update(&GpuBlock, &mut arena(), &m, &Delaunay, salt) {}
}

/// The survey between Delaunay sweeps: one block per patch slot in use
/// (`dynamic::update::survey`).
///
/// # Safety
/// As for [`dynamic_delaunay`].
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn dynamic_delaunay_survey(mesh: RawDynamicMesh, salt: u32) {
    // SAFETY: the launch contract.
    let m = unsafe { DynMesh::new(&mesh) };
    // SAFETY: reads a special register.
    let p = unsafe { _block_idx_x() } as u32;
    update::survey(&GpuBlock, &mut arena(), &m, &Delaunay, p, salt);
}

/// Smoothing (tangential or null-space), first kernel: one block per
/// patch stores its owned vertices' rings and positions
/// (`dynamic::smooth::rings`).
///
/// # Safety
/// `mesh` describes live device arrays of a dynamic mesh; `headers` and
/// `entries` hold the words `dynamic::smooth::Rings` names, `positions`
/// `3 × cap.patches × cap.vertices` words; dynamic shared memory is
/// `dynamic::smooth::shared_bytes(&mesh.cap, threads)`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn dynamic_smooth_rings(
    mesh: RawDynamicMesh,
    headers: u64,
    entries: u64,
    positions: u64,
    params: Smoothing,
) {
    // SAFETY: the launch contract.
    let (m, rings, at) = unsafe {
        (
            DynMesh::new(&mesh),
            smooth::Rings {
                headers: GlobalU32::new(headers),
                entries: GlobalU32::new(entries),
            },
            GlobalU32::new(positions),
        )
    };
    // SAFETY: reads a special register.
    let p = unsafe { _block_idx_x() } as u32;
    smooth::rings(&GpuBlock, &mut arena(), &m, p, rings, at, &params);
}

/// Smoothing, one step: one block per patch moves its owned vertices from
/// the positions in `from` to `to` (`dynamic::smooth::step`).
///
/// # Safety
/// As for [`dynamic_smooth_rings`], after it; `from` and `to` hold
/// `3 × cap.patches × cap.vertices` words each and do not overlap.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn dynamic_smooth_step(
    mesh: RawDynamicMesh,
    headers: u64,
    entries: u64,
    from: u64,
    to: u64,
    params: Smoothing,
) {
    // SAFETY: the launch contract.
    let (m, rings, from, to) = unsafe {
        (
            DynMesh::new(&mesh),
            smooth::Rings {
                headers: FrozenU32::new(headers),
                entries: FrozenU32::new(entries),
            },
            FrozenU32::new(from),
            GlobalU32::new(to),
        )
    };
    // SAFETY: reads a special register.
    let p = unsafe { _block_idx_x() } as u32;
    smooth::step(&GpuBlock, &m, p, rings, from, to, &params);
}

/// Smoothing, last kernel: one block per patch copies the positions in
/// `scratch` over its owned vertices' (`dynamic::smooth::apply`).
///
/// # Safety
/// As for [`dynamic_smooth_step`], after the last step, with `scratch` its
/// `to`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn dynamic_smooth_apply(mesh: RawDynamicMesh, scratch: u64) {
    // SAFETY: the launch contract.
    let (m, s) = unsafe { (DynMesh::new(&mesh), GlobalU32::new(scratch)) };
    // SAFETY: reads a special register.
    let p = unsafe { _block_idx_x() } as u32;
    smooth::apply(&GpuBlock, &m, p, s);
}

/// Cleanup, first kernel: one block per patch points the ribbon entries at
/// the current owners (`dynamic::cleanup::calibrate`).
///
/// # Safety
/// `mesh` describes live device arrays of a dynamic mesh; no update kernel
/// runs meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn dynamic_calibrate(mesh: RawDynamicMesh) {
    // SAFETY: the launch contract.
    let m = unsafe { DynMesh::new(&mesh) };
    // SAFETY: reads a special register.
    let p = unsafe { _block_idx_x() } as u32;
    cleanup::calibrate(&GpuBlock, &m, p);
}

/// Cleanup, second kernel: one block per patch drops surplus ribbon
/// elements and clears the round's flags (`dynamic::cleanup::compact`).
///
/// # Safety
/// As for [`dynamic_calibrate`]; dynamic shared memory is
/// `dynamic::cleanup::compact_shared_bytes(&mesh.cap, threads)`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn dynamic_compact(mesh: RawDynamicMesh) {
    // SAFETY: the launch contract.
    let m = unsafe { DynMesh::new(&mesh) };
    // SAFETY: reads a special register.
    let p = unsafe { _block_idx_x() } as u32;
    cleanup::compact(&GpuBlock, &mut arena(), &m, p);
}

/// Queues the patches for a sweep (`dynamic::scheduler::refill`; every
/// patch in use, or with `changed_only != 0` those flagged `CHANGED`). One
/// block.
///
/// # Safety
/// As for [`dynamic_calibrate`]; dynamic shared memory is
/// `dynamic::scheduler::refill_shared_bytes(threads)`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn dynamic_refill(mesh: RawDynamicMesh, changed_only: u32) {
    // SAFETY: the launch contract.
    let m = unsafe { DynMesh::new(&mesh) };
    scheduler::refill(&GpuBlock, &mut arena(), &m, changed_only != 0);
}

/// Patch slicing: one block per patch slot in use splits the patches
/// flagged `SLICE` (`dynamic::slice::slice`); `seed` is the seed kind
/// (`Kind as u32`) of the application whose round flagged them.
///
/// # Safety
/// As for [`dynamic_calibrate`]; dynamic shared memory is
/// `dynamic::slice::shared_bytes(&mesh.cap, threads)`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn dynamic_slice(mesh: RawDynamicMesh, seed: u32) {
    // SAFETY: the launch contract.
    let m = unsafe { DynMesh::new(&mesh) };
    // SAFETY: reads a special register.
    let p = unsafe { _block_idx_x() } as u32;
    let seed = Kind::ALL[seed as usize % 3];
    slice::slice(&GpuBlock, &mut arena(), &m, p, seed);
}

/// Update-round kernels of the mesh operations: each block takes queued
/// patches until the round's share is taken, the application's parameters
/// by value.
macro_rules! operation_kernels {
    ($($name:ident, $survey:ident: $app:ident),* $(,)?) => {$(
        #[doc = concat!("One update round of [`", stringify!($app), "`] (`dynamic::update`).")]
        ///
        /// # Safety
        /// As for [`dynamic_delaunay`], with the shared memory of this
        /// application.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(mesh: RawDynamicMesh, salt: u32, app: $app) {
            // SAFETY: the launch contract.
            let m = unsafe { DynMesh::new(&mesh) };
            while update::update(&GpuBlock, &mut arena(), &m, &app, salt) {}
        }

        #[doc = concat!("The survey between sweeps of [`", stringify!($app), "`]: one block per patch slot in use (`dynamic::update::survey`).")]
        ///
        /// # Safety
        /// As for the update kernel of this application.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $survey(mesh: RawDynamicMesh, salt: u32, app: $app) {
            // SAFETY: the launch contract.
            let m = unsafe { DynMesh::new(&mesh) };
            // SAFETY: reads a special register.
            let p = unsafe { _block_idx_x() } as u32;
            update::survey(&GpuBlock, &mut arena(), &m, &app, p, salt);
        }
    )*};
}

operation_kernels! {
    dynamic_split_long_edges, dynamic_split_long_edges_survey: SplitLongEdges,
    dynamic_split_large_faces, dynamic_split_large_faces_survey: SplitLargeFaces,
    dynamic_collapse_short_edges, dynamic_collapse_short_edges_survey: CollapseShortEdges,
    dynamic_delete_vertices_in_ball, dynamic_delete_vertices_in_ball_survey: DeleteVerticesInBall,
    dynamic_delete_edges_in_ball, dynamic_delete_edges_in_ball_survey: DeleteEdgesInBall,
    dynamic_delete_faces_in_ball, dynamic_delete_faces_in_ball_survey: DeleteFacesInBall,
    dynamic_refine_face_neighbourhood, dynamic_refine_face_neighbourhood_survey: RefineFaceNeighbourhood,
    dynamic_improve_valence, dynamic_improve_valence_survey: ImproveValence,
    dynamic_collapse_short_edges_safely, dynamic_collapse_short_edges_safely_survey: CollapseShortEdgesSafely,
    dynamic_shorter_diagonal, dynamic_shorter_diagonal_survey: ShorterDiagonal,
}

/// Surface tracking's advection: one block per patch moves its owned
/// vertices one step through the curl-noise field (`track::advect`).
///
/// # Safety
/// `mesh` describes live device arrays of a dynamic mesh.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn dynamic_advect(mesh: RawDynamicMesh, field: Advection) {
    // SAFETY: the launch contract.
    let m = unsafe { DynMesh::new(&mesh) };
    // SAFETY: reads a special register.
    let p = unsafe { _block_idx_x() } as u32;
    track::advect(&GpuBlock, &m, p, &field);
}

/// Before a remeshing flip phase: one block per patch stores its owned
/// vertices' valences (`remesh::store_valences`).
///
/// # Safety
/// `mesh` describes live device arrays of a dynamic mesh; dynamic shared
/// memory is `dynamic::smooth::shared_bytes(&mesh.cap, threads)`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn dynamic_store_valences(mesh: RawDynamicMesh) {
    // SAFETY: the launch contract.
    let m = unsafe { DynMesh::new(&mesh) };
    // SAFETY: reads a special register.
    let p = unsafe { _block_idx_x() } as u32;
    crate::remesh::store_valences(&GpuBlock, &mut arena(), &m, p);
}

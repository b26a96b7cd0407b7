//! Patch computations: kernels of one's own over the patches of the
//! dynamic mesh, one block per patch slot in use, that keep data between
//! launches in a scratch array of words the host's rounds hold (the
//! programming model's third kind of computation, beside the per-element
//! computations of [`super::compute`] and the rings of [`super::ring`]).
//! A pipeline of them passes its data along the scratch: remeshing's and
//! tracking's smoothing stores every vertex's one-ring once, then runs
//! its steps from it, then copies the result over the positions
//! (`apps/remesh/kernels`).
//!
//! The body gets the whole patch ([`DynMesh`] and the patch slot), so that
//! it can load the patch into shared memory with its relations
//! ([`for_each_owned_vertex`] does that for the owned vertices) or read
//! the mesh's arrays directly; it writes only its own patch's owned
//! elements and the scratch words its contract gives it.

use core::marker::PhantomData;

use crate::array::InOut;
use crate::block::{Block, SharedArena};
use crate::kernel::{DYNAMIC_BOUNDS, Kernel, Launch, LaunchBounds, PlainData};
use crate::layout::Kind;

use super::cavity::{self, Ctx, Work};
use super::layout::{Capacity, RawDynamicMesh};
use super::patch::{DynMesh, PatchCopy};

/// The rounds' scratch as a patch computation sees it: a checked view of
/// `len` words ([`InOut`]: an index past the end stops the kernel, a trap
/// on the GPU, a panic on the host; relaxed atomic accesses unless stated
/// unshared).
///
/// The host keeps it between launches and grows it to the largest
/// [`PatchComputation::scratch_words`] asked for, keeping its words (new
/// words are zero).
pub type Scratch = InOut<u32>;

/// A computation over the patches of the dynamic mesh (see the
/// [module](self)): plain `repr(C)` data (`bytemuck::Pod` on the host),
/// the kernel's by-value parameter. Export its kernel with
/// [`patch_kernels!`](macro@crate::patch_kernels); run it with
/// `rounds::ForEachPatch::for_each_patch` in the host crate.
pub trait PatchComputation: PlainData + Send + Sync + 'static {
    /// The kernel's launch bounds (threads per block, blocks per
    /// multiprocessor).
    const BOUNDS: LaunchBounds = DYNAMIC_BOUNDS;

    /// Scratch words the computation reads or writes at capacity `cap`.
    fn scratch_words(&self, cap: &Capacity) -> u64;

    /// Dynamic shared memory of a block of `threads` threads at capacity
    /// `cap`, in bytes (none by default).
    fn shared_bytes(&self, cap: &Capacity, threads: u32) -> usize {
        let _ = (cap, threads);
        0
    }

    /// The body, on patch slot `p` (the block's); `arena` holds
    /// [`PatchComputation::shared_bytes`].
    fn run<B: Block>(
        &self,
        block: &B,
        arena: &mut SharedArena,
        mesh: &DynMesh,
        p: u32,
        scratch: &Scratch,
    );
}

/// A patch computation with a GPU kernel.
///
/// # Safety
/// [`PatchKernels::PATCH`] names an entry point taking
/// `(RawDynamicMesh, Self, Scratch)` that runs [`PatchKernel`]`<Self>`:
/// implement it with [`patch_kernels!`](macro@crate::patch_kernels) only.
pub unsafe trait PatchKernels: PatchComputation {
    /// The entry's name.
    const PATCH: &'static str;
}

/// The kernel of patch computation `C`: block `b` runs `C::run` on patch
/// slot `b`.
///
/// # Safety
/// The mesh describes live arrays of a dynamic mesh, the grid has one
/// block per patch slot in use; the scratch is live
/// ([`Scratch::from_raw`]); dynamic shared memory is `C::shared_bytes`
/// for the launch's threads.
pub struct PatchKernel<C>(PhantomData<fn() -> C>);

// SAFETY: `C::PATCH` is such an entry (`PatchKernels`).
unsafe impl<C: PatchKernels> Kernel for PatchKernel<C> {
    const NAME: &'static str = C::PATCH;
    const BOUNDS: LaunchBounds = C::BOUNDS;
    const HOST_ZEROED_SHARED: bool = false;
    type Params = (RawDynamicMesh, C, Scratch);

    #[inline(always)]
    unsafe fn run<B: Block>(launch: &mut Launch<'_, B>, (mesh, c, scratch): Self::Params) {
        // SAFETY: the kernel's contract.
        let m = unsafe { DynMesh::new(&mesh) };
        c.run(launch.block, launch.arena, &m, launch.block_idx, &scratch);
    }
}

/// Declares patch computations' GPU kernels: for each type (a
/// [`PatchComputation`]), the [`PatchKernels`] implementation and, on
/// `nvptx64`, the entry point `CRATE_PatchName` of [`PatchKernel`].
#[macro_export]
macro_rules! patch_kernels {
    ($($c:ident),+ $(,)?) => {$(
        // SAFETY: the entry point below takes the kernel's parameters and
        // runs its body.
        unsafe impl $crate::dynamic::patch_computation::PatchKernels for $c {
            const PATCH: &'static str = $crate::kernel!(@name concat!("Patch", stringify!($c)));
        }

        $crate::kernel!(
            @entry [target_arch = "nvptx64"] $crate::kernel!(@name concat!("Patch", stringify!($c))),
            $crate::dynamic::patch_computation::PatchKernel<$c>,
            (
                mesh: $crate::dynamic::layout::RawDynamicMesh,
                c: $c,
                scratch: $crate::dynamic::patch_computation::Scratch
            )
        );
    )+};
}

fn owned_vertex_windows(
    arena: &mut SharedArena,
    cap: &Capacity,
    threads: u32,
) -> (Work, PatchCopy) {
    let work = Work::alloc_relations(arena, cap, threads);
    let copy = PatchCopy::alloc(arena, *cap, 0);
    (work, copy)
}

/// Shared memory of [`for_each_owned_vertex`] at capacity `cap` for
/// `threads` threads per block, in bytes, after `before` words (`u32`)
/// the caller allocates first.
pub fn owned_vertex_shared_bytes(cap: &Capacity, threads: u32, before: u32) -> usize {
    let mut arena = SharedArena::measuring();
    arena.alloc::<u32>(before);
    owned_vertex_windows(&mut arena, cap, threads);
    arena.used()
}

/// Loads patch `p` into shared memory with its relations (edge-face,
/// vertex-edge, positions) and calls `f` with the patch's context for
/// every active vertex the patch owns, one thread per vertex. Shared
/// memory as [`owned_vertex_shared_bytes`] gives.
#[inline(always)]
pub fn for_each_owned_vertex<B: Block>(
    block: &B,
    arena: &mut SharedArena,
    mesh: &DynMesh,
    p: u32,
    f: impl Fn(&Ctx<'_, B>, u32),
) {
    let (work, mut copy) = owned_vertex_windows(arena, &mesh.cap, block.block_dim());
    arena.check();
    copy.p = p;
    copy.load(block, mesh);
    block.sync();
    cavity::build_relations(block, &copy, &work);
    cavity::cache_positions(block, mesh, &copy, &work);
    let ctx = Ctx::new(block, mesh, &copy, &work);
    block.for_each(copy.count(Kind::Vertex), |v| {
        if copy.is_owned(Kind::Vertex, v) && copy.is_active(Kind::Vertex, v) {
            f(&ctx, v);
        }
    });
}

//! Per-element computations on the dynamic mesh (RXMesh section 4, the
//! programming model: a computation runs on every active element of one
//! kind with the results of one query, reading attributes and writing its
//! own element's; the dynamic paper keeps one structure for static and
//! dynamic work, its table 3).
//!
//! A user declares an [`ElementComputation`] (plain data: its parameters
//! and the [`Attr`](crate::attribute::Attr) handles it reads and writes), exports its kernel with
//! [`element_kernels!`](crate::element_kernels), and the host runs it on a
//! dynamic mesh on either backend (`cavity::rounds::Rounds::for_each`). One
//! block per patch: the block loads the patch (FE, EV, bitmasks, ribbon
//! tables) into shared memory, builds the query's relation there (EV, FV
//! and FE read the patch directly; VE, VF, EF are block-cooperative
//! transposes: count, scan, fill; VV goes through VE), and runs the
//! computation on every owned active element of the query's source kind
//! that passes [`ElementComputation::active`]. The results of an owned
//! element are complete (every face is active in the patches that own its
//! vertices and edges) except for FF, which a patch cannot answer for a
//! face whose neighbour across an edge it does not hold: FF is refused at
//! compile time.

mod element;
mod export;
mod launch;
mod rows;
mod sweeps;

use crate::block::{Block, SharedArena};
use crate::dynamic::global::GlobalU32;
use crate::dynamic::layout::RawDynamicMesh;
use crate::dynamic::patch::DynMesh;
use crate::kernel::{DYNAMIC_BOUNDS, Kernel, Launch, LaunchBounds, PlainData};
use crate::query::Query;

pub use element::Element;
pub use export::{ExportArrays, ExportQuery, export};
use launch::{Computing, each_element};
pub(in crate::dynamic) use launch::{Needs, Windows, build_rows};
pub use launch::{shared_bytes, shared_bytes_of};
pub use rows::Rows;
pub use sweeps::{Gather, Sweeps};

/// A computation on every active element of [`ElementComputation::QUERY`]'s
/// source kind, with that query's results (the user's half of the
/// programming model).
pub trait ElementComputation: PlainData + Send + Sync + 'static {
    /// The query whose results each element gets; its source kind is the
    /// kind computed on. Not [`Query::FF`] (see the module).
    const QUERY: Query;

    /// Whether [`Element::edge_face_count`] answers: the kernel then also
    /// counts the active faces of every edge of the patch in shared memory
    /// (4 bytes per edge slot, one pass over the faces). Off by default.
    const FACES_PER_EDGE: bool = false;

    /// Whether the computation reads its query's results; `false` skips
    /// building them (no transpose: the element reads its own attributes,
    /// [`Element::len`] is 0), for a map over the elements of the query's
    /// source kind, as an advection step. On by default.
    const QUERY_RESULTS: bool = true;

    /// Resident blocks per multiprocessor the kernel leaves room for, which
    /// caps its registers per thread at `65536 / (256 × MIN_BLOCKS)`
    /// (`FOR_EACH_BOUNDS`: 2, up to 128 registers). Raise it for a
    /// computation whose occupancy its registers limit (`ptxas -v` on the
    /// PTX, `launch__occupancy_limit_registers` in Nsight Compute), as long
    /// as ptxas reports no spills.
    const MIN_BLOCKS: u32 = FOR_EACH_BOUNDS.min_blocks;

    /// Whether the computation may sweep its patch several times in one
    /// launch ([`ElementComputation::sweeps`]): reserves in shared memory
    /// seven words per element slot of the source kind (two buffers and
    /// the launch's value per carried pair, whether it computes), the
    /// gathered positions ([`ElementComputation::GATHERED_WORDS`]) and five
    /// words more. Off by default.
    const SWEEPING: bool = false;

    /// Whether the block reads every local vertex's position, and the
    /// attributes of [`ElementComputation::gather`], once from its owner
    /// into shared memory, where [`Element::position`] and
    /// [`Element::get_at`] find them: one load per local vertex instead of
    /// one per read, for a computation whose reads of its neighbours'
    /// words (through the ribbon, each a dependent global load) are its
    /// cost (three words per vertex slot and
    /// [`ElementComputation::GATHERED_WORDS`] more). Off by default; on
    /// for a sweeping computation.
    const GATHERS: bool = false;

    /// Words per vertex slot reserved for the gathered attributes
    /// ([`ElementComputation::GATHERS`]). 0 by default.
    const GATHERED_WORDS: u32 = 0;

    /// The vertex attributes gathered into shared memory ([`Gather`]; at
    /// most [`ElementComputation::GATHERED_WORDS`] words in all, else
    /// none is). None by default.
    #[inline(always)]
    fn gather(&self) -> Gather {
        Gather::NONE
    }

    /// The in-patch sweeps of one launch ([`Sweeps`]); one by default, and
    /// one unless [`ElementComputation::SWEEPING`].
    #[inline(always)]
    fn sweeps(&self) -> Sweeps {
        Sweeps::ONE
    }

    /// Whether the element is in the active set (all by default). Asked
    /// twice: first without the query's results ([`Element::len`] 0, no
    /// faces per edge) and before the patch's connectivity is loaded (only
    /// which elements exist and are owned is known), so that a patch with
    /// no active element skips loading the rest and building the results;
    /// then with them, right before [`compute`]. It must answer the same
    /// both times: decide on the element's own attributes.
    ///
    /// [`compute`]: ElementComputation::compute
    #[inline(always)]
    fn active<B: Block>(&self, _element: &Element<'_, B>) -> bool {
        true
    }

    /// The computation on one element.
    fn compute<B: Block>(&self, element: &Element<'_, B>);
}

/// Kernel body, one block per patch slot `p` in use: computation `c` on
/// every owned active element of its query's source kind.
#[inline(always)]
pub fn for_each<B: Block, C: ElementComputation>(
    block: &B,
    arena: &mut SharedArena,
    mesh: &DynMesh,
    p: u32,
    c: &C,
) {
    each_element(
        block,
        arena,
        mesh,
        p,
        (C::QUERY, Needs::of::<C>()),
        (
            Some(|element: &Element<'_, B>| c.active(element)),
            if C::SWEEPING { c.sweeps() } else { Sweeps::ONE },
            Some(c.gather()).filter(|g| g.words() <= C::GATHERED_WORDS),
        ),
        Computing(c),
    );
}

/// A computation with GPU kernels: its entry point, parameters
/// `(RawDynamicMesh, computation, patches)`.
///
/// # Safety
/// [`ElementKernels::FOR_EACH`] names an entry point with those parameters
/// that runs [`ForEachKernel`]'s body: implement it with
/// [`element_kernels!`](crate::element_kernels) only.
pub unsafe trait ElementKernels: ElementComputation {
    /// The entry's name.
    const FOR_EACH: &'static str;
}

/// The kernel of computation `C` ([`for_each`]): with `patches` 0 one
/// block per patch slot in use, else block `b` on patch slot
/// `patches[b]` (a list of the patches to visit, which the host gives
/// when it knows where the active elements are).
///
/// # Safety
/// The mesh describes live arrays of a dynamic mesh; `patches` is 0 or
/// holds one distinct patch slot in use per block of the grid; dynamic
/// shared memory is [`shared_bytes::<C>`](shared_bytes) for the launch's
/// threads.
pub struct ForEachKernel<C>(core::marker::PhantomData<fn() -> C>);

/// The bounds of the per-element kernels.
pub const FOR_EACH_BOUNDS: LaunchBounds = DYNAMIC_BOUNDS;

// SAFETY: `C::FOR_EACH` is such an entry (`ElementKernels`).
unsafe impl<C: ElementKernels> Kernel for ForEachKernel<C> {
    const NAME: &'static str = C::FOR_EACH;
    const BOUNDS: LaunchBounds = LaunchBounds {
        threads: FOR_EACH_BOUNDS.threads,
        min_blocks: C::MIN_BLOCKS,
    };
    const HOST_ZEROED_SHARED: bool = false;
    type Params = (RawDynamicMesh, C, u64);

    #[inline(always)]
    unsafe fn run<B: Block>(launch: &mut Launch<'_, B>, (mesh, c, patches): Self::Params) {
        const {
            assert!(
                !matches!(C::QUERY, Query::FF),
                "FF is not answered on the dynamic mesh (see cavity_device::dynamic::compute)"
            )
        };
        // SAFETY: the kernel's contract.
        let m = unsafe { DynMesh::new(&mesh) };
        let p = if patches == 0 {
            launch.block_idx
        } else {
            // SAFETY: the kernel's contract: one entry per block.
            unsafe { GlobalU32::new(patches) }.load(launch.block_idx)
        };
        for_each(launch.block, launch.arena, &m, p, &c);
    }
}

/// Declares per-element computations' GPU kernels: for each type (an
/// [`ElementComputation`], plain `repr(C)` data, `bytemuck::Pod` on the
/// host), the [`ElementKernels`] implementation and, on `nvptx64`, the
/// entry point `CRATE_ForEachName` of [`ForEachKernel`].
#[macro_export]
macro_rules! element_kernels {
    (@core $($c:ident),+ $(,)?) => {
        $crate::element_kernels!(
            @declare [all(target_arch = "nvptx64", feature = "core-entries")] $($c),+
        );
    };
    ($($c:ident),+ $(,)?) => {
        $crate::element_kernels!(@declare [target_arch = "nvptx64"] $($c),+);
    };
    (@declare [$cfg:meta] $($c:ident),+) => {$(
        // SAFETY: the entry point below takes the kernel's parameters and
        // runs its body.
        unsafe impl $crate::dynamic::compute::ElementKernels for $c {
            const FOR_EACH: &'static str = $crate::kernel!(@name concat!("ForEach", stringify!($c)));
        }

        $crate::kernel!(
            @entry [$cfg] $crate::kernel!(@name concat!("ForEach", stringify!($c))),
            $crate::dynamic::compute::ForEachKernel<$c>,
            (mesh: $crate::dynamic::layout::RawDynamicMesh, c: $c, patches: u64)
        );
    )+};
}

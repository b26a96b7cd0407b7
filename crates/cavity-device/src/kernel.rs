//! Kernels declared once (the role rust-cuda's `#[kernel]` plays): a
//! [`kernel!`](macro@crate::kernel) declaration is the kernel's body, written against
//! [`Block`] and run on one block of a [`Launch`], with its parameters and
//! launch bounds. From it come
//!
//! - a type naming the kernel, implementing [`Kernel`]: its PTX entry name
//!   ([`Kernel::NAME`]), launch bounds ([`Kernel::BOUNDS`]), parameter
//!   tuple ([`Kernel::Params`]) and body ([`Kernel::run`]), which the CPU
//!   backend runs on its host blocks;
//! - when compiled for `nvptx64`, the PTX entry point (the parameters in
//!   order, then the body on a [`Launch`] of CUDA threads), and a line
//!   `// cavity-launch-bounds NAME THREADS BLOCKS` that the PTX builder
//!   (`cavity-ptx-builder`) turns into the entry's `.maxntid` and
//!   `.minnctapersm` directives (CUDA's `__launch_bounds__`).
//!
//! The host launches a kernel by its type, never by a name string, and
//! passes [`Kernel::Params`], plain data (`bytemuck::Pod` on the host:
//! numbers, device addresses as `u64`, `repr(C)` structs of them). The
//! kernels of the programming model are declared with the concept they
//! run: a cavity application's update and survey kernels by
//! [`cavity_kernels!`](macro@crate::cavity_kernels)
//! ([`crate::dynamic::update`]), a per-element computation's by
//! [`element_kernels!`](macro@crate::element_kernels)
//! ([`crate::dynamic::compute`]), a ring computation's by
//! [`ring_kernels!`](macro@crate::ring_kernels) ([`crate::dynamic::ring`]).

use crate::block::{Block, SharedArena};

/// CUDA's `__launch_bounds__`: at most `threads` threads per block (the
/// host launches exactly that many) and at least `min_blocks` resident
/// blocks per multiprocessor (0: no such bound), which caps the registers
/// ptxas gives each thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchBounds {
    /// Threads per block.
    pub threads: u32,
    /// Resident blocks per multiprocessor to leave room for (0: none).
    pub min_blocks: u32,
}

/// The dynamic kernels' bounds: 256 threads and two blocks per
/// multiprocessor, which caps registers at 128 so that two blocks of the
/// update kernel (about 100 KB of shared memory each) share one.
pub const DYNAMIC_BOUNDS: LaunchBounds = LaunchBounds {
    threads: 256,
    min_blocks: 2,
};

/// The element-wise kernels' bounds: 256 threads, no occupancy bound.
pub const ELEMENT_BOUNDS: LaunchBounds = LaunchBounds {
    threads: 256,
    min_blocks: 0,
};

/// One block of a launch as a kernel body sees it.
pub struct Launch<'a, B: Block> {
    /// The block's threads.
    pub block: &'a B,
    /// The block's dynamic shared memory.
    pub arena: &'a mut SharedArena,
    /// This block's index in the grid.
    pub block_idx: u32,
    /// Blocks in the grid.
    pub grid_dim: u32,
}

impl<B: Block> Launch<'_, B> {
    /// The calling thread's first element and the stride of a grid-stride
    /// loop over the whole launch (element-wise kernels).
    #[inline(always)]
    pub fn grid_stride(&self) -> (u32, u32) {
        let dim = self.block.block_dim();
        (
            self.block_idx * dim + self.block.thread_idx(),
            dim * self.grid_dim,
        )
    }
}

/// Plain data, a kernel's by-value parameter: `bytemuck::Pod` on the host
/// (no padding, no pointers into host memory, any bit pattern valid),
/// `Copy` on the GPU.
#[cfg(not(target_arch = "nvptx64"))]
pub trait PlainData: bytemuck::Pod {}
#[cfg(not(target_arch = "nvptx64"))]
impl<T: bytemuck::Pod> PlainData for T {}

/// Plain data, a kernel's by-value parameter (`Copy` on the GPU).
#[cfg(target_arch = "nvptx64")]
pub trait PlainData: Copy {}
#[cfg(target_arch = "nvptx64")]
impl<T: Copy> PlainData for T {}

/// A kernel parameter as the GPU host passes it: plain data
/// ([`PlainData`], any bit pattern) or an array view of
/// [`crate::array`] (an address and a length, made by the host from a live
/// buffer only).
///
/// # Safety
/// [`KernelParam::bytes`] are the value's bytes in the layout of the PTX
/// parameter of the same `repr(C)` type.
#[cfg(not(target_arch = "nvptx64"))]
pub unsafe trait KernelParam: Copy + Send + Sync + 'static {
    /// The bytes passed.
    fn bytes(&self) -> &[u8];
}

// SAFETY: `Pod` values are their bytes.
#[cfg(not(target_arch = "nvptx64"))]
unsafe impl<T: bytemuck::Pod + Send + Sync> KernelParam for T {
    fn bytes(&self) -> &[u8] {
        bytemuck::bytes_of(self)
    }
}

/// A kernel whose body is sound whatever values its parameters hold, as
/// long as its [`crate::array`] views are the host's (each access of an
/// array checked against its view's length, racing writes atomic): the
/// host launches it without `unsafe` (`cavity::backend::Backend::launch`).
/// Declared by [`kernel!`](macro@crate::kernel) with `#[checked]`.
///
/// # Safety
/// The body reads and writes only through its parameters' views, within
/// their lengths, and every plain (non-atomic) access it makes is free of
/// races for any contents of the arrays.
pub unsafe trait CheckedKernel: Kernel {}

/// A kernel declared by [`kernel!`](macro@crate::kernel) (or by the
/// programming model's declarations, such as
/// [`cavity_kernels!`](macro@crate::cavity_kernels)).
///
/// # Safety
/// [`Kernel::NAME`] names an entry point of the kernel crate's PTX whose
/// parameters are the non-zero-sized elements of [`Kernel::Params`] in
/// order and which runs [`Kernel::run`] with [`Kernel::BOUNDS`]: the hosts
/// launch that entry with these parameters. The macros implement it.
pub unsafe trait Kernel: 'static {
    /// The PTX entry point's name.
    const NAME: &'static str;
    /// Threads per block and resident blocks per multiprocessor.
    const BOUNDS: LaunchBounds;
    /// Whether the CPU backend zeroes a block's shared memory before the
    /// body runs: kernels that store whole shared-memory windows (free
    /// slots included) into the mesh, whose arrays must not depend on what
    /// the worker's previous block left there.
    const HOST_ZEROED_SHARED: bool;
    /// The parameters, in the entry point's order.
    type Params: Copy + Send + Sync;

    /// The body, on one block.
    ///
    /// # Safety
    /// The kernel's contract (its declaration's `# Safety`): the
    /// parameters' addresses and lengths, the shared memory, the grid.
    unsafe fn run<B: Block>(launch: &mut Launch<'_, B>, params: Self::Params);
}

/// Reads an array parameter: `len` entries at address `addr`.
///
/// # Safety
/// `addr` valid for reads of `len` entries during `'a` (or `len == 0`).
#[inline(always)]
pub unsafe fn slice_at<'a, T>(addr: u64, len: u32) -> &'a [T] {
    if len == 0 {
        &[]
    } else {
        // SAFETY: forwarded.
        unsafe { core::slice::from_raw_parts(addr as *const T, len as usize) }
    }
}

/// Declares a kernel (see the [module](self)): the docs, its launch
/// bounds, optionally `#[host_zeroed_shared]` ([`Kernel::HOST_ZEROED_SHARED`])
/// or `#[checked]` ([`CheckedKernel`]: the declaration then states, after
/// `# Safety`, why the body is sound for any parameters),
/// then `pub kernel Name(launch, param: Type, ...) { body }`, where the
/// body sees `launch`, a `&mut Launch`, and the parameters by value, and
/// may use `unsafe` (the declaration's `# Safety` states its contract).
/// The entry point is named `CRATE_Name` (the declaring crate's name), so
/// that kernel crates linked together do not clash. (This crate's own
/// declarations start with `@core`: their entry points exist only with
/// its `core-entries` feature, so that a kernel crate depending on it
/// without that feature gets its own kernels only.)
#[macro_export]
macro_rules! kernel {
    (@zeroed host_zeroed_shared) => { true };
    (@zeroed checked) => { false };
    (@zeroed) => { false };
    (@checked $name:ident checked) => {
        // SAFETY: the declaration says `#[checked]`: its body accesses its
        // arrays only through their checked views, its plain accesses free
        // of races for any contents (its `# Safety` says why).
        unsafe impl $crate::kernel::CheckedKernel for $name {}
    };
    (@checked $name:ident $($other:ident)?) => {};
    (@name $name:expr) => { concat!(env!("CARGO_CRATE_NAME"), "_", $name) };
    (@entry [$cfg:meta] $entry:expr, $kernel:ty, ($($p:ident: $t:ty),*)) => {
        #[cfg($cfg)]
        const _: () = {
            #[unsafe(export_name = $entry)]
            // A zero-sized parameter (an application without parameters)
            // is no parameter of the PTX entry: the hosts skip it, and the
            // GPU host checks the entry's parameter sizes when it loads it.
            #[allow(improper_ctypes_definitions)]
            unsafe extern "ptx-kernel" fn entry($($p: $t),*) {
                // SAFETY: the kernel's contract, which the launch keeps.
                unsafe { $crate::gpu::launch::<$kernel>(($($p,)*)) }
            }
        };
        #[cfg($cfg)]
        ::core::arch::global_asm!(
            concat!("// cavity-launch-bounds ", $entry, " {} {}"),
            const <$kernel as $crate::kernel::Kernel>::BOUNDS.threads,
            const <$kernel as $crate::kernel::Kernel>::BOUNDS.min_blocks,
        );
    };
    // A kernel generic over the query (`$kernel<Q>`, `Q` the index in
    // `Query::ALL`): the entry names by query in `$names`, and an entry
    // point per query.
    (@per_query [$cfg:meta] $names:ident, $kernel:ident, $params:tt) => {
        $crate::kernel!(
            @per_query_each [$cfg] $names, $kernel, $params,
            0: VV, 1: VE, 2: VF, 3: EV, 4: EF, 5: FV, 6: FE, 7: FF
        );
    };
    (@per_query_each [$cfg:meta] $names:ident, $kernel:ident, $params:tt,
     $($q:literal: $query:ident),*) => {
        #[doc = concat!("The entry names of `", stringify!($kernel), "` by query.")]
        const $names: [&str; 8] =
            [$($crate::kernel!(@name concat!(stringify!($kernel), stringify!($query)))),*];
        $(
            $crate::kernel!(
                @entry [$cfg]
                $crate::kernel!(@name concat!(stringify!($kernel), stringify!($query))),
                $kernel<$q>,
                $params
            );
        )*
    };
    (@core $($declaration:tt)*) => {
        $crate::kernel!(
            @declare [all(target_arch = "nvptx64", feature = "core-entries")] $($declaration)*
        );
    };
    (
        @declare [$cfg:meta]
        $(#[doc = $doc:literal])*
        #[launch_bounds = $bounds:expr]
        $(#[$zeroed:ident])?
        $vis:vis kernel $name:ident($launch:ident $(, $p:ident: $t:ty)* $(,)?) $body:block
    ) => {
        $(#[doc = $doc])*
        $vis enum $name {}

        // SAFETY: the entry point below takes `Params` in order and runs
        // `run`, with these bounds.
        unsafe impl $crate::kernel::Kernel for $name {
            const NAME: &'static str = $crate::kernel!(@name stringify!($name));
            const BOUNDS: $crate::kernel::LaunchBounds = $bounds;
            const HOST_ZEROED_SHARED: bool = $crate::kernel!(@zeroed $($zeroed)?);
            type Params = ($($t,)*);

            #[inline(always)]
            #[allow(unused_variables)]
            unsafe fn run<B: $crate::block::Block>(
                $launch: &mut $crate::kernel::Launch<'_, B>,
                ($($p,)*): Self::Params,
            ) $body
        }

        $crate::kernel!(@checked $name $($zeroed)?);

        $crate::kernel!(
            @entry [$cfg] $crate::kernel!(@name stringify!($name)), $name, ($($p: $t),*)
        );
    };
    (#[$($first:tt)*] $($rest:tt)*) => {
        $crate::kernel!(@declare [target_arch = "nvptx64"] #[$($first)*] $($rest)*);
    };
}

/// Declares an operation's parameter struct: `repr(C)` plain data, so that
/// it is the GPU kernel's by-value argument as it is on the host (`Clone,
/// Copy, Debug, PartialEq`, and `bytemuck::Pod` off the GPU: a kernel crate
/// that uses it depends on `bytemuck` for its host build).
#[macro_export]
macro_rules! parameters {
    ($(#[$meta:meta])* pub struct $name:ident { $($body:tt)* }) => {
        $(#[$meta])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, PartialEq)]
        #[cfg_attr(
            not(target_arch = "nvptx64"),
            derive(bytemuck::Pod, bytemuck::Zeroable)
        )]
        pub struct $name { $($body)* }
    };
}

//! A kernel crate as a user writes one (issue 25 item 2): it depends on
//! `cavity-device` for the block abstraction, the queries and the cavity
//! templates, declares its kernels with `cavity_device::kernel!` and
//! `cavity_device::cavity_kernels!`, and is built to PTX by the tests'
//! build script with `cavity-ptx-builder`. The core crates know nothing of
//! it: the GPU backend loads its PTX (`Backend::add_kernels`), the CPU
//! backend runs the same bodies.
//!
//! - [`Valences`]: a per-vertex kernel over a patched mesh (the VV query).
//! - [`FlipToShorter`]: a cavity application (template `EdgeFaces`) that
//!   flips an interior edge to the other diagonal of its two faces when
//!   that is shorter by a factor and the two faces form a convex quad.
//! - [`SplitInterpolating`]: an edge split with attributes: the new
//!   vertex gets the mean of its edge's values, the new faces a label.
//! - [`collapse`]: a tetrahedral collapse criterion of the user's own,
//!   with its kernels (`cavity_tet_collapse_kernels::criterion_kernels!`).
//! - [`operations`]: the mesh operations of the cavity templates that the
//!   tests run (face split, collapses, vertex split, deletes, a cavity of
//!   the user's own).
//! - [`ProbeVV`] and the other probes: per-element computations on the
//!   dynamic mesh that record what a query returned (count and sums of the
//!   results' identities); [`Laplacian`]: the mean of a vertex's
//!   neighbours' positions; [`ProbeRing`]: the same record of a vertex's
//!   ring (k-ring, or bounded by a ball).
#![no_std]
#![feature(core_float_math)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

pub mod collapse;
pub mod operations;

use cavity_device::attribute::Attr;
use cavity_device::block::{Block, Scatter};
use cavity_device::dynamic::cavity::criteria::{length, longest_first};
use cavity_device::dynamic::cavity::fills::{simple_chain, simple_loop, star_fill};
use cavity_device::dynamic::cavity::{CavityApp, Ctx, FillIn, Template};
use cavity_device::dynamic::compute::{Element, ElementComputation, Gather, Sweeps};
use cavity_device::dynamic::ring::{Ring, RingComputation, VertexSlot};
use cavity_device::flip;
use cavity_device::geometry::midpoint;
use cavity_device::layout::Kind;
use cavity_device::layout::RawPatchMesh;
use cavity_device::query::{self, Query};

cavity_device::kernel! {
    /// Writes every vertex's valence (its VV count) to `out[v]`, one block
    /// per patch.
    ///
    /// # Safety
    /// The mesh describes live arrays; `out` is valid for writes of
    /// `n_out` entries, one per vertex handle; dynamic shared memory is
    /// query VV's for the largest patch.
    #[launch_bounds = Query::VV.launch_bounds()]
    pub kernel Valences(launch, mesh: RawPatchMesh, out: u64, n_out: u32) {
        // SAFETY: the kernel's contract.
        let (mesh, out) = unsafe {
            (
                mesh.view(),
                Scatter::from_raw(out as *mut u32, n_out as usize),
            )
        };
        query::for_each(
            launch.block,
            launch.arena,
            &mesh,
            launch.block_idx,
            Query::VV,
            |_| true,
            |v, n| out.write(v as usize, n.len()),
        );
    }
}

/// Flips an interior edge `ab` to `cd` (its two faces' opposite vertices)
/// when `|cd| < ratio · |ab|` and the quad `a c b d` is strictly convex
/// in the plane of its two faces.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    not(target_arch = "nvptx64"),
    derive(bytemuck::Pod, bytemuck::Zeroable)
)]
pub struct FlipToShorter {
    /// At most 1: how much shorter the new edge must be.
    pub ratio: f32,
}

fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(u: [f32; 3], v: [f32; 3]) -> [f32; 3] {
    [
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    ]
}

fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// Whether quad `a c b d` (diagonal `ab`, triangles `abc` and `abd`) is
/// strictly convex: `a` and `b` on opposite sides of `cd`, in the plane
/// of the two triangles' summed normals (orientation-free).
pub fn convex([a, b, c, d]: [[f32; 3]; 4]) -> bool {
    let (n0, n1) = (cross(sub(b, a), sub(c, a)), cross(sub(b, a), sub(d, a)));
    // The triangles `abc` and `abd` lie on opposite sides of `ab`, so
    // their normals as written point opposite ways: flip one.
    let n = sub(n0, n1);
    let side = |p: [f32; 3]| dot(cross(sub(d, c), sub(p, c)), n);
    side(a) * side(b) < 0.0
}

/// Squared distance.
fn length2(a: [f32; 3], b: [f32; 3]) -> f32 {
    let d = sub(a, b);
    dot(d, d)
}

impl CavityApp for FlipToShorter {
    const TEMPLATE: Template = Template::EdgeFaces;
    const MAX_NEW: [u32; 3] = [0, 1, 2];

    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, e: u32) -> bool {
        let Some([a, b, c, d]) = flip::candidate(ctx, e) else {
            return false;
        };
        let p = [a, b, c, d].map(|v| ctx.position(v));
        length2(p[2], p[3]) < self.ratio * self.ratio * length2(p[0], p[1]) && convex(p)
    }

    fn fill<B: Block>(&self, fill: &mut FillIn<'_, B>) -> bool {
        // No position moves during the run: the criterion checked at
        // registration still holds.
        flip::fill(fill, |_| true)
    }
}

/// An edge split carrying attributes: every edge with one or two faces
/// longer than `max_length`, longest first, gets a vertex at its midpoint
/// joined to the opposite vertices; that vertex gets the mean of `value`
/// at the split edge's ends (so a `value` linear in the position stays
/// linear in it), and the faces it adds get `label` [`NEW_LABEL`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[cfg_attr(
    not(target_arch = "nvptx64"),
    derive(bytemuck::Pod, bytemuck::Zeroable)
)]
pub struct SplitInterpolating {
    /// Longest edge left alone.
    pub max_length: f32,
    /// A vertex attribute.
    pub value: Attr<f64, 1>,
    /// A face attribute.
    pub label: Attr<u32, 1>,
}

/// The `label` of the faces a split adds.
pub const NEW_LABEL: u32 = 7;

impl CavityApp for SplitInterpolating {
    const TEMPLATE: Template = Template::EdgeFaces;
    const MAX_NEW: [u32; 3] = [1, 4, 4];
    const JOINS_BOUNDARY: bool = false;

    fn create<B: Block>(&self, ctx: &Ctx<'_, B>, e: u32) -> bool {
        matches!(ctx.edge_faces(e).0, 1 | 2) && length(ctx, e) > self.max_length
    }

    fn priority<B: Block>(&self, ctx: &Ctx<'_, B>, e: u32, _: u32) -> u32 {
        longest_first(length(ctx, e))
    }

    fn fill<B: Block>(&self, fill: &mut FillIn<'_, B>) -> bool {
        let n = fill.boundary_len();
        let disk = simple_loop(fill) && n == 4;
        let half_disk = simple_chain(fill) && n == 2;
        let [a, b] = fill.ctx.edge_vertices(fill.seed());
        let at = midpoint(fill.ctx.position(a), fill.ctx.position(b));
        if !(disk || half_disk) || !star_fill(fill, at) {
            return false;
        }
        let mean = 0.5 * (fill.ctx.attr(&self.value, a)[0] + fill.ctx.attr(&self.value, b)[0]);
        if let Some(v) = fill.added(Kind::Vertex, 0) {
            fill.set_attr(&self.value, v, [mean]);
        }
        let mut i = 0;
        while let Some(f) = fill.added(Kind::Face, i) {
            fill.set_attr(&self.label, f, [NEW_LABEL]);
            i += 1;
        }
        true
    }
}

cavity_device::cavity_kernels!(FlipToShorter, SplitInterpolating);

/// Declares a probe of one query: it writes `[count, Σ (id + 1), Σ (id +
/// 1)²]` (wrapping) of the query's results to `out`, where a result's
/// identity is its `id` attribute.
macro_rules! probes {
    ($($name:ident => $query:ident),+ $(,)?) => {$(
        #[doc = concat!("Records what ", stringify!($query), " returns.")]
        #[repr(C)]
        #[derive(Clone, Copy, Debug)]
        #[cfg_attr(
            not(target_arch = "nvptx64"),
            derive(bytemuck::Pod, bytemuck::Zeroable)
        )]
        pub struct $name {
            /// On the query's source kind.
            pub out: Attr<u32, 3>,
            /// On the query's target kind: the identity.
            pub id: Attr<u32, 1>,
        }

        impl ElementComputation for $name {
            const QUERY: Query = Query::$query;
            fn compute<B: Block>(&self, e: &Element<'_, B>) {
                let mut r = [e.len(), 0, 0];
                for n in e.neighbors() {
                    let id = e.get_at(&self.id, n)[0].wrapping_add(1);
                    r[1] = r[1].wrapping_add(id);
                    r[2] = r[2].wrapping_add(id.wrapping_mul(id));
                }
                e.set(&self.out, r);
            }
        }

        cavity_device::element_kernels!($name);
    )+};
}

probes!(
    ProbeVV => VV,
    ProbeVE => VE,
    ProbeVF => VF,
    ProbeEV => EV,
    ProbeEF => EF,
    ProbeFV => FV,
    ProbeFE => FE,
);

/// Writes the mean of the positions of every vertex's VV neighbours to
/// `out` (one Laplacian smoothing step; a vertex without neighbours keeps
/// its position), for the vertices whose `mask` is non-zero (the active
/// set), and counts them (`Element::count`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[cfg_attr(
    not(target_arch = "nvptx64"),
    derive(bytemuck::Pod, bytemuck::Zeroable)
)]
pub struct Laplacian {
    /// The result.
    pub out: Attr<f32, 3>,
    /// The active set.
    pub mask: Attr<u32, 1>,
}

impl ElementComputation for Laplacian {
    const QUERY: Query = Query::VV;
    fn active<B: Block>(&self, e: &Element<'_, B>) -> bool {
        e.get(&self.mask)[0] != 0
    }
    fn compute<B: Block>(&self, e: &Element<'_, B>) {
        e.count();
        let mut sum = [0.0f32; 3];
        for n in e.neighbors() {
            let p = e.position(n);
            for k in 0..3 {
                sum[k] += p[k];
            }
        }
        let out = if e.is_empty() {
            e.position(e.local())
        } else {
            sum.map(|x| x / e.len() as f32)
        };
        e.set(&self.out, out);
    }
}

cavity_device::element_kernels!(Laplacian);

/// Records a vertex's ring (`cavity_device::dynamic::ring`): `[count, Σ
/// (id + 1), Σ (id + 1)²]` (wrapping) of the ring's `id`s to `out`, the
/// ring being the vertices at most `hops` edges away through vertices
/// within `radius` of the center (every vertex when `radius` is infinite:
/// the k-ring).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[cfg_attr(
    not(target_arch = "nvptx64"),
    derive(bytemuck::Pod, bytemuck::Zeroable)
)]
pub struct ProbeRing {
    /// The result.
    pub out: Attr<u32, 3>,
    /// The identity.
    pub id: Attr<u32, 1>,
    /// Hops.
    pub hops: u32,
    /// The ball's radius.
    pub radius: f32,
}

impl RingComputation for ProbeRing {
    fn hops(&self) -> u32 {
        self.hops
    }
    fn admits<B: Block>(&self, ring: &Ring<'_, B>, candidate: VertexSlot) -> bool {
        let [a, b] = [ring.center(), candidate].map(|v| ring.position(v));
        let d = [0, 1, 2].map(|i| a[i] - b[i]);
        d[0] * d[0] + d[1] * d[1] + d[2] * d[2] <= self.radius * self.radius
    }
    fn compute<B: Block>(&self, ring: &Ring<'_, B>) {
        let mut r = [ring.len(), 0, 0];
        for v in ring.neighbors() {
            let id = ring.get(&self.id, v)[0].wrapping_add(1);
            r[1] = r[1].wrapping_add(id);
            r[2] = r[2].wrapping_add(id.wrapping_mul(id));
        }
        ring.set(&self.out, r);
    }
}

cavity_device::ring_kernels!(ProbeRing);

/// Marks the patch of every vertex whose `mask` is non-zero
/// (`Element::mark_patch`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[cfg_attr(
    not(target_arch = "nvptx64"),
    derive(bytemuck::Pod, bytemuck::Zeroable)
)]
pub struct MarkMasked {
    /// Which vertices mark.
    pub mask: Attr<u32, 1>,
}

impl ElementComputation for MarkMasked {
    const QUERY: Query = Query::VV;
    const QUERY_RESULTS: bool = false;
    fn compute<B: Block>(&self, e: &Element<'_, B>) {
        if e.get(&self.mask)[0] != 0 {
            e.mark_patch();
        }
    }
}

cavity_device::element_kernels!(MarkMasked);

cavity_device::parameters! {
    /// Each vertex takes the smallest label among its own and its VV
    /// neighbours' in `from` into `to`, up to `sweeps` times per launch
    /// (in-patch sweeps, `Sweeps`, while a label changes), and counts the
    /// vertices whose label the launch changed (`Element::count`):
    /// repeated until none changes, every vertex holds the smallest label
    /// of its connected component.
    pub struct MinLabel {
        /// The labels read.
        pub from: Attr<u32, 1>,
        /// The labels written.
        pub to: Attr<u32, 1>,
        /// Sweeps per launch.
        pub sweeps: u32,
    }
}

impl ElementComputation for MinLabel {
    const QUERY: Query = Query::VV;
    const SWEEPING: bool = true;
    fn sweeps(&self) -> Sweeps {
        Sweeps::new(self.sweeps, &self.from, &self.to)
    }
    fn compute<B: Block>(&self, e: &Element<'_, B>) {
        let last = e.get_at(&self.from, e.local())[0];
        let mut label = last;
        for n in e.neighbors() {
            label = label.min(e.get_at(&self.from, n)[0]);
        }
        e.set(&self.to, [label]);
        if label != last {
            e.sweep_again();
        }
        if label != e.get(&self.from)[0] {
            e.count();
        }
    }
}

cavity_device::element_kernels!(MinLabel);

/// Writes, per vertex, the sum over its faces `(v, a, b)` of
/// `position(a) × input(b) + position(b)` (component by component): a
/// computation reading its neighbours' positions and an attribute, once
/// with the gathered words in shared memory (`GATHERS`) and once without,
/// which must agree bit for bit.
macro_rules! corner_sums {
    ($($name:ident => $gathers:expr),+ $(,)?) => {$(
        cavity_device::parameters! {
            #[doc = concat!("Corner sums (gathered: ", stringify!($gathers), ").")]
            pub struct $name {
                /// The attribute read at the corners.
                pub input: Attr<f32, 3>,
                /// The sums.
                pub out: Attr<f32, 3>,
            }
        }

        impl ElementComputation for $name {
            const QUERY: Query = Query::VF;
            const GATHERS: bool = $gathers;
            const GATHERED_WORDS: u32 = 3;
            fn gather(&self) -> Gather {
                Gather::new(&self.input)
            }
            fn compute<B: Block>(&self, e: &Element<'_, B>) {
                let mut sum = [0.0f32; 3];
                for f in e.neighbors() {
                    let [a, b] = e.other_corners(f);
                    let (pa, pb, ib) = (e.position(a), e.position(b), e.get_at(&self.input, b));
                    for k in 0..3 {
                        sum[k] += pa[k] * ib[k] + pb[k];
                    }
                }
                e.set(&self.out, sum);
            }
        }

        cavity_device::element_kernels!($name);
    )+};
}

corner_sums!(CornerSums => false, CornerSumsGathered => true);

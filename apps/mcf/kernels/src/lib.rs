//! Implicit mean curvature flow (Desbrun et al. 1999) as matrix-free
//! per-vertex computations on the public model (RXMesh section 8.1 and
//! appendix E): one step solves `(M + dt K) x' = M x` by conjugate
//! gradients, where `K` is the cotan stiffness matrix (`K x` at `v` is
//! `Σ_u w_vu (x_v - x_u)`, `w_vu = ½ (cot α + cot β)` of the angles
//! opposite edge `vu`; `-K` is the cotan Laplacian) and `M` the diagonal
//! of mixed Voronoi areas (Meyer et al. 2003), both computed from the
//! positions at every matrix-vector product, face by face (VF): a face
//! adds to each of its corner's two edges and to the corner's area, so
//! boundaries and non-manifold edges need no special rows.
//!
//! The weights are the cotan weights of the positions, optionally with
//! negative cotangents clamped to 0, or computed from mollified edge
//! lengths (Sharp and Crane 2020, section 4.5) ([`Weights`]).
//!
//! Vertices on a boundary or non-manifold edge, without a face, or whose
//! faces all have zero area are fixed ([`McfFixed`]). A step is solved in
//! displacement form, `A u = -dt K x` with `x' = x + u` ([`McfResidual`],
//! [`McfMoveBy`]), over the free vertices only: `u` and every vector of
//! the conjugate gradient are 0 at the fixed ones, so the matrix-vector
//! product ([`McfMatVec`]) reads no neighbour's mark and the system is
//! symmetric positive definite. A face of zero area adds nothing (unless
//! mollified). For Jacobi preconditioning [`McfFixed`] also sets the
//! inverse of the diagonal of `A` at a step's start, the weight of the
//! preconditioned conjugate gradient's updates (the core's weighted
//! reductions): the product stays the plain one.
//!
//! The intrinsic Delaunay Laplacian's step runs on an assembled system
//! instead ([`assembled`]).
//!
//! The kernel half of the MCF application crate (`apps/mcf`).
#![no_std]
#![feature(core_float_math)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

pub mod assembled;

pub use assembled::{DirectionUpdate, ResidualUpdate, SystemProduct};

use cavity_device::attribute::Attr;
use cavity_device::block::Block;
use cavity_device::dynamic::compute::{Element, ElementComputation, Gather};
use cavity_device::dynamic::layout::POSITION;
use cavity_device::geometry::{cross, dot, sub};
use cavity_device::query::Query;

/// How a face's cotan weights and areas are computed: the operator's
/// variant ([`Weights::COTAN`] is the plain cotan Laplacian of the
/// positions).
///
/// Every variant computes an edge's weight from the face's three corners
/// in one canonical order (or from its three lengths, sorted), so that
/// the two ends of an edge see the same bits and the matrix stays
/// symmetric.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    not(target_arch = "nvptx64"),
    derive(bytemuck::Pod, bytemuck::Zeroable)
)]
pub struct Weights {
    /// 1: a face's negative cotangents (an obtuse angle's) count as 0, so
    /// that every weight is non-negative (after RXMesh's MCF, which
    /// clamps an edge's summed weight; a face's corners are clamped here,
    /// as the product sees an edge's two faces apart). The areas are the
    /// unclamped ones.
    pub clamp: u32,
    /// A length added to every edge before the cotangents and areas are
    /// computed from the three lengths (the intrinsic mollification of
    /// Sharp and Crane 2020, section 4.5: every triangle then satisfies
    /// the triangle inequality by this margin, so a face of zero area
    /// gets a finite weight and a positive area); 0: from the positions.
    /// Squared-length units of the positions, to the first power.
    pub mollify: f32,
}

impl Weights {
    /// The cotan Laplacian of the positions (Pinkall and Polthier 1993;
    /// Desbrun et al. 1999).
    pub const COTAN: Weights = Weights {
        clamp: 0,
        mollify: 0.0,
    };
}

/// A corner's share of its face: the cotan weights of the corner's two
/// edges and the corner's mixed Voronoi area.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Corner {
    /// `½ cot` of the angle at `b`: the weight face `(v, a, b)` adds to
    /// edge `va`.
    pub to_a: f32,
    /// `½ cot` of the angle at `a`: the weight it adds to edge `vb`.
    pub to_b: f32,
    /// The mixed Voronoi area of `v` in the face (Meyer et al. 2003,
    /// section 3.3): the Voronoi region when the face is not obtuse, half
    /// the face's area when its angle at `v` is, a quarter otherwise.
    pub area: f32,
}

impl Corner {
    /// Nothing: a face of zero area (or one whose area is not finite).
    const NONE: Corner = Corner {
        to_a: 0.0,
        to_b: 0.0,
        area: 0.0,
    };

    /// Corner `v` of face `(v, a, b)` (positions) with the variant `w`;
    /// all zero for a face of zero area (without mollification).
    #[inline(always)]
    pub fn of(v: [f32; 3], a: [f32; 3], b: [f32; 3], w: Weights) -> Corner {
        let c = if w.mollify > 0.0 {
            Corner::mollified(v, a, b, w.mollify)
        } else {
            Corner::cotan(v, a, b)
        };
        if w.clamp != 0 {
            Corner {
                to_a: c.to_a.max(0.0),
                to_b: c.to_b.max(0.0),
                area: c.area,
            }
        } else {
            c
        }
    }

    /// The plain corner from the positions.
    #[inline(always)]
    fn cotan(v: [f32; 3], a: [f32; 3], b: [f32; 3]) -> Corner {
        let (av, bv) = (sub(v, a), sub(v, b));
        let (ab, ba) = (sub(b, a), sub(a, b));
        // Twice the area from the corners in one order whichever corner
        // asks (and in whichever patch), so that the three corners see the
        // same bits and the weights of an edge agree at its two ends (a
        // symmetric matrix).
        let [p, q, r] = canonical([v, a, b]);
        let n = cross(sub(q, p), sub(r, p));
        let twice_area = core::f32::math::sqrt(dot(n, n));
        if twice_area.is_nan() || twice_area <= 0.0 || twice_area.is_infinite() {
            return Corner::NONE;
        }
        let cot_a = dot(av, ab) / twice_area;
        let cot_b = dot(bv, ba) / twice_area;
        let at_v = dot(sub(a, v), sub(b, v));
        Corner::mixed(
            twice_area,
            cot_a,
            cot_b,
            at_v < 0.0,
            dot(av, av),
            dot(bv, bv),
        )
    }

    /// The corner from the three edge lengths, each lengthened by `delta`
    /// (Sharp and Crane 2020, section 4.5): the area by Heron's formula
    /// in Kahan's stable order, the cotangents by the law of cosines.
    #[inline(always)]
    fn mollified(v: [f32; 3], a: [f32; 3], b: [f32; 3], delta: f32) -> Corner {
        let length = |p: [f32; 3], q: [f32; 3]| {
            let d = sub(p, q);
            core::f32::math::sqrt(dot(d, d)) + delta
        };
        let (va, vb, ab) = (length(v, a), length(v, b), length(a, b));
        // Sorted, the same three lengths whichever corner asks.
        let (x, y, z) = sorted(va, vb, ab);
        let sixteen_squared = (x + (y + z)) * (z - (x - y)) * (z + (x - y)) * (x + (y - z));
        let twice_area = 0.5 * core::f32::math::sqrt(sixteen_squared);
        if twice_area.is_nan() || twice_area <= 0.0 || twice_area.is_infinite() {
            return Corner::NONE;
        }
        let (va2, vb2, ab2) = (va * va, vb * vb, ab * ab);
        // cot = (adjacent² + adjacent² - opposite²) / (4 area), the two
        // adjacent lengths summed first (the same bits at either end).
        let cot_a = (va2 + ab2 - vb2) / (2.0 * twice_area);
        let cot_b = (vb2 + ab2 - va2) / (2.0 * twice_area);
        Corner::mixed(twice_area, cot_a, cot_b, ab2 > va2 + vb2, va2, vb2)
    }

    /// The corner from twice the face's area, the cotangents at `a` and
    /// `b`, whether the angle at `v` is obtuse and the squared lengths of
    /// `va` and `vb`.
    #[inline(always)]
    fn mixed(
        twice_area: f32,
        cot_a: f32,
        cot_b: f32,
        obtuse_at_v: bool,
        va2: f32,
        vb2: f32,
    ) -> Corner {
        let area = if obtuse_at_v {
            0.25 * twice_area
        } else if cot_a < 0.0 || cot_b < 0.0 {
            0.125 * twice_area
        } else {
            0.125 * (va2 * cot_b + vb2 * cot_a)
        };
        Corner {
            to_a: 0.5 * cot_b,
            to_b: 0.5 * cot_a,
            area,
        }
    }
}

/// `(x, y, z)` sorted, largest first.
#[inline(always)]
fn sorted(x: f32, y: f32, z: f32) -> (f32, f32, f32) {
    let (x, y) = if x < y { (y, x) } else { (x, y) };
    let (y, z) = if y < z { (z, y) } else { (y, z) };
    let (x, y) = if x < y { (y, x) } else { (x, y) };
    (x, y, z)
}

/// `corners` (a face's, in its orientation) rotated to start at the
/// smallest by `x`, then `y`, then `z`: the same three points in the same
/// order whichever corner the rotation started from.
#[inline(always)]
fn canonical(corners: [[f32; 3]; 3]) -> [[f32; 3]; 3] {
    let less = |p: [f32; 3], q: [f32; 3]| {
        p[0] < q[0] || (p[0] == q[0] && (p[1] < q[1] || (p[1] == q[1] && p[2] < q[2])))
    };
    let [p, q, r] = corners;
    if less(q, p) {
        if less(r, q) { [r, p, q] } else { [q, r, p] }
    } else if less(r, p) {
        [r, p, q]
    } else {
        corners
    }
}

/// The step's diagonal `M + dt K` at a vertex (its mixed Voronoi area
/// plus `dt` times its weights) and its mixed Voronoi area, from its faces
/// (`v`'s VF) with the variant `w`.
#[inline(always)]
fn diagonal_and_area<B: Block>(v: &Element<'_, B>, dt: f32, w: Weights) -> (f32, f32) {
    let p = v.position(v.local());
    let (mut diagonal, mut area) = (0.0f32, 0.0f32);
    for f in v.neighbors() {
        let [a, b] = v.other_corners(f);
        let c = Corner::of(p, v.position(a), v.position(b), w);
        area += c.area;
        diagonal += c.area + dt * c.to_a + dt * c.to_b;
    }
    (diagonal, area)
}

cavity_device::parameters! {
    /// Marks the vertices the flow keeps in place (1) and the free ones
    /// (0) in `fixed`: a vertex is fixed when it has no face, an edge
    /// with other than two faces, or only faces of zero area; and sets the
    /// step's Jacobi preconditioner `inverse_diagonal = 1 / diag(M + dt
    /// K)` of a free vertex when `precondition` is 1 (1 otherwise, and at
    /// a fixed vertex).
    pub struct McfFixed {
        /// The marks.
        pub fixed: Attr<u32, 1>,
        /// The inverse diagonal.
        pub inverse_diagonal: Attr<f32, 1>,
        /// The time step (squared length units of the positions).
        pub dt: f32,
        /// The operator's variant.
        pub weights: Weights,
        /// 1: Jacobi (diagonal) preconditioning.
        pub precondition: u32,
    }
}

impl ElementComputation for McfFixed {
    const QUERY: Query = Query::VF;
    const FACES_PER_EDGE: bool = true;

    fn compute<B: Block>(&self, v: &Element<'_, B>) {
        let l = v.local();
        let mut fixed = v.is_empty();
        for f in v.neighbors() {
            for e in v.face_edges(f) {
                let [x, y] = v.edge_vertices(e);
                if (x == l || y == l) && v.edge_face_count(e) != Some(2) {
                    fixed = true;
                }
            }
        }
        let (diagonal, area) = diagonal_and_area(v, self.dt, self.weights);
        let fixed = fixed || area.is_nan() || area <= 0.0;
        v.set(&self.fixed, [u32::from(fixed)]);
        let inverse = if self.precondition != 0 && !fixed && diagonal > 0.0 && diagonal.is_finite()
        {
            1.0 / diagonal
        } else {
            1.0
        };
        v.set(&self.inverse_diagonal, [inverse]);
    }
}

cavity_device::parameters! {
    /// Starts a step in displacement form: the solution `u` (the step's
    /// displacement `x' - x`) at 0 and the residual `r = -dt K x` at a
    /// free vertex (the right-hand side `M x` less `(M + dt K) x`), 0 at a
    /// fixed one. `x` is the positions.
    pub struct McfResidual {
        /// The fixed vertices ([`McfFixed`]).
        pub fixed: Attr<u32, 1>,
        /// The residual.
        pub r: Attr<f32, 3>,
        /// The displacement, set to 0.
        pub u: Attr<f32, 3>,
        /// The time step (squared length units of the positions).
        pub dt: f32,
        /// The operator's variant.
        pub weights: Weights,
    }
}

impl ElementComputation for McfResidual {
    const QUERY: Query = Query::VF;

    fn compute<B: Block>(&self, v: &Element<'_, B>) {
        v.set(&self.u, [0.0; 3]);
        if v.get(&self.fixed)[0] != 0 {
            v.set(&self.r, [0.0; 3]);
            return;
        }
        let x = v.position(v.local());
        let mut kx = [0.0f32; 3];
        for f in v.neighbors() {
            let [a, b] = v.other_corners(f);
            let (pa, pb) = (v.position(a), v.position(b));
            let c = Corner::of(x, pa, pb, self.weights);
            for k in 0..3 {
                kx[k] += c.to_a * (x[k] - pa[k]) + c.to_b * (x[k] - pb[k]);
            }
        }
        v.set(&self.r, kx.map(|y| -self.dt * y));
    }
}

cavity_device::parameters! {
    /// `output ← A input` for the step's matrix `A = M + dt K`
    /// restricted to the free vertices, without assembling it: 0 at a
    /// fixed vertex, and `input` must be 0 there (every vector of the
    /// conjugate gradient in displacement form is). Weights and areas
    /// come from the positions.
    pub struct McfMatVec {
        /// The fixed vertices ([`McfFixed`]).
        pub fixed: Attr<u32, 1>,
        /// The vector multiplied.
        pub input: Attr<f32, 3>,
        /// The product (not `input`).
        pub output: Attr<f32, 3>,
        /// The time step (squared length units of the positions).
        pub dt: f32,
        /// The operator's variant.
        pub weights: Weights,
    }
}

impl ElementComputation for McfMatVec {
    const QUERY: Query = Query::VF;
    /// 64 registers: four blocks per multiprocessor (at the default two,
    /// ptxas took 82 and the kernel, latency-bound, kept a fifth of the
    /// warps it could).
    const MIN_BLOCKS: u32 = 4;
    /// The positions and `input` of the patch's vertices read once into
    /// shared memory: each vertex reads about twelve of each.
    const GATHERS: bool = true;
    const GATHERED_WORDS: u32 = 3;

    fn gather(&self) -> Gather {
        Gather::new(&self.input)
    }

    fn compute<B: Block>(&self, v: &Element<'_, B>) {
        if v.get(&self.fixed)[0] != 0 {
            v.set(&self.output, [0.0; 3]);
            return;
        }
        let l = v.local();
        let xi = v.get(&self.input);
        let p = v.position(l);
        let mut diagonal = 0.0f32;
        let mut off = [0.0f32; 3];
        for f in v.neighbors() {
            let [a, b] = v.other_corners(f);
            let c = Corner::of(p, v.position(a), v.position(b), self.weights);
            diagonal += c.area;
            for (u, w) in [(a, c.to_a), (b, c.to_b)] {
                let w = self.dt * w;
                diagonal += w;
                let xu = v.get_at(&self.input, u);
                for k in 0..3 {
                    off[k] += w * xu[k];
                }
            }
        }
        v.set(&self.output, [0, 1, 2].map(|k| diagonal * xi[k] - off[k]));
    }
}

cavity_device::parameters! {
    /// Moves every vertex by its value of `by` (the step's
    /// displacement).
    pub struct McfMoveBy {
        /// The displacements.
        pub by: Attr<f32, 3>,
    }
}

impl ElementComputation for McfMoveBy {
    const QUERY: Query = Query::VV;
    const QUERY_RESULTS: bool = false;

    fn compute<B: Block>(&self, v: &Element<'_, B>) {
        let (x, u) = (v.get(&POSITION), v.get(&self.by));
        v.set(&POSITION, [0, 1, 2].map(|k| x[k] + u[k]));
    }
}

cavity_device::element_kernels!(McfFixed, McfResidual, McfMatVec, McfMoveBy);

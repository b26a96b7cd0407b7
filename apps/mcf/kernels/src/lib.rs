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
//! Vertices on a boundary or non-manifold edge, without a face, or whose
//! faces all have zero area are fixed ([`McfFixed`]). A step is solved in
//! displacement form, `A u = -dt K x` with `x' = x + u` ([`McfResidual`],
//! [`McfMoveBy`]), over the free vertices only: `u` and every vector of
//! the conjugate gradient are 0 at the fixed ones, so the matrix-vector
//! product ([`McfMatVec`]) reads no neighbour's mark and the system is
//! symmetric positive definite. A face of zero area adds nothing.
//!
//! The kernel half of the MCF application crate (`apps/mcf`).
#![no_std]
#![feature(core_float_math)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

use cavity_device::attribute::Attr;
use cavity_device::block::Block;
use cavity_device::dynamic::compute::{Element, ElementComputation, Gather};
use cavity_device::dynamic::layout::POSITION;
use cavity_device::geometry::{cross, dot, sub};
use cavity_device::query::Query;

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
    /// Corner `v` of face `(v, a, b)` (positions); all zero for a face of
    /// zero area.
    #[inline(always)]
    pub fn of(v: [f32; 3], a: [f32; 3], b: [f32; 3]) -> Corner {
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
            return Corner {
                to_a: 0.0,
                to_b: 0.0,
                area: 0.0,
            };
        }
        let cot_a = dot(av, ab) / twice_area;
        let cot_b = dot(bv, ba) / twice_area;
        let at_v = dot(sub(a, v), sub(b, v));
        let area = if at_v < 0.0 {
            0.25 * twice_area
        } else if cot_a < 0.0 || cot_b < 0.0 {
            0.125 * twice_area
        } else {
            0.125 * (dot(av, av) * cot_b + dot(bv, bv) * cot_a)
        };
        Corner {
            to_a: 0.5 * cot_b,
            to_b: 0.5 * cot_a,
            area,
        }
    }
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

cavity_device::parameters! {
    /// Marks the vertices the flow keeps in place (1) and the free ones
    /// (0) in `fixed`: a vertex is fixed when it has no face, an edge
    /// with other than two faces, or only faces of zero area.
    pub struct McfFixed {
        /// The marks.
        pub fixed: Attr<u32, 1>,
    }
}

impl ElementComputation for McfFixed {
    const QUERY: Query = Query::VF;
    const FACES_PER_EDGE: bool = true;

    fn compute<B: Block>(&self, v: &Element<'_, B>) {
        let l = v.local();
        let p = v.position(l);
        let mut area = 0.0f32;
        let mut fixed = v.is_empty();
        for f in v.neighbors() {
            let [a, b] = v.other_corners(f);
            area += Corner::of(p, v.position(a), v.position(b)).area;
            for e in v.face_edges(f) {
                let [x, y] = v.edge_vertices(e);
                if (x == l || y == l) && v.edge_face_count(e) != Some(2) {
                    fixed = true;
                }
            }
        }
        v.set(
            &self.fixed,
            [u32::from(fixed || area.is_nan() || area <= 0.0)],
        );
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
            let c = Corner::of(x, pa, pb);
            for k in 0..3 {
                kx[k] += c.to_a * (x[k] - pa[k]) + c.to_b * (x[k] - pb[k]);
            }
        }
        v.set(&self.r, kx.map(|y| -self.dt * y));
    }
}

cavity_device::parameters! {
    /// `output ← A input` for the step's matrix `A = M + dt K` restricted
    /// to the free vertices, without assembling it: 0 at a fixed vertex,
    /// and `input` must be 0 there (every vector of the conjugate gradient
    /// in displacement form is). Weights and areas come from the positions.
    pub struct McfMatVec {
        /// The fixed vertices ([`McfFixed`]).
        pub fixed: Attr<u32, 1>,
        /// The vector multiplied.
        pub input: Attr<f32, 3>,
        /// The product (not `input`).
        pub output: Attr<f32, 3>,
        /// The time step (squared length units of the positions).
        pub dt: f32,
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
            let c = Corner::of(p, v.position(a), v.position(b));
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
    /// Moves every vertex by its value of `by` (the step's displacement).
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

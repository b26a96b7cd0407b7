//! The quality measures of section 4.6 per tetrahedron ([`measures`]) and
//! over a mesh on a backend ([`TetMeasures`], [`EdgeBand`],
//! [`UsedVertices`]: each block writes its partials, which the host
//! combines in block order), in `f64`:
//!
//! - the **normalized harmonic index**: `η(τ) = Σ a_i² / vol(τ)` of Alexa
//!   ("Harmonic triangulations", 2019), `a_i` the four face areas, over
//!   that of the regular tetrahedron of the same volume,
//!   `η_reg(V) = C V^(1/3)` with `C = (3/4) (6√2)^(4/3) ≈ 12.98`: 1 for a
//!   regular tetrahedron, above 1 for every other one;
//! - the **dihedral angles**, at each of the six edges the angle between
//!   its two faces inside the tetrahedron, here as the cosines of the
//!   smallest and the largest (the host takes their arc cosines);
//! - the **conformal AMIPS energy** `D(τ) = tr(JᵀJ) / det(J)^(2/3)` (Hu et
//!   al., "Fast tetrahedral meshing in the wild", 2020), `J` the Jacobian
//!   of the affine map from the regular tetrahedron of unit edges onto
//!   `τ`: 3 for a regular tetrahedron, above 3 for every other.
//!
//! An inverted or flat tetrahedron (signed volume not positive) has an
//! infinite harmonic index and AMIPS energy; its angles are those of its
//! mirror image. The corners are scaled by the inverse of the longest
//! edge first, so any scale of `f32` positions gives the same values.

use cavity_device::array::{In, InOut, write_partial};
use cavity_device::block::combine_scratch_len;
use core::f64::math::{cbrt, sqrt};

use crate::geometry::{cross, dot, is_valid_tet, longest_edge_squared, signed_volume, sub};
use crate::{BOUNDS, chunk};

/// The measures of one tetrahedron ([`measures`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measures {
    /// The cosine of the smallest dihedral angle (the largest of the six
    /// cosines; -1, 180°, at an edge where a face has no area; NaN when
    /// every corner is at one point).
    pub cos_smallest: f64,
    /// The cosine of the largest dihedral angle (the smallest of the six;
    /// as `cos_smallest` for degenerate faces).
    pub cos_largest: f64,
    /// The normalized harmonic index: 1 for a regular tetrahedron,
    /// infinite for an inverted or flat one.
    pub harmonic: f64,
    /// The conformal AMIPS energy: 3 for a regular tetrahedron, infinite
    /// for an inverted or flat one.
    pub amips: f64,
    /// Whether the signed volume is not positive (inverted or flat; also
    /// for a non-finite corner).
    pub inverted: bool,
}

/// `v` times `s`.
#[inline(always)]
fn scale(v: [f64; 3], s: f64) -> [f64; 3] {
    [v[0] * s, v[1] * s, v[2] * s]
}

/// The four outward face area vectors of positively oriented tetrahedron
/// `p`, each opposite the corner of its index: the faces `(1 2 3)`,
/// `(0 3 2)`, `(0 1 3)`, `(0 2 1)`, half the cross product of their
/// edges.
#[inline(always)]
fn face_areas(p: [[f64; 3]; 4]) -> [[f64; 3]; 4] {
    let e1 = sub(p[1], p[0]);
    let e2 = sub(p[2], p[0]);
    let e3 = sub(p[3], p[0]);
    [
        scale(cross(sub(p[2], p[1]), sub(p[3], p[1])), 0.5),
        scale(cross(e3, e2), 0.5),
        scale(cross(e1, e3), 0.5),
        scale(cross(e2, e1), 0.5),
    ]
}

/// The measures of tetrahedron `p` (see the [module](self)).
#[inline(always)]
pub fn measures(p: [[f64; 3]; 4]) -> Measures {
    let inverted = !is_valid_tet(p, 0.0);
    let longest = sqrt(longest_edge_squared(p));
    let origin = p[0];
    let p = p.map(|c| scale(sub(c, origin), 1.0 / longest));
    let faces = face_areas(p);
    // The interior angle at the edge between faces k and l is π minus the
    // angle between their outward normals: its cosine is minus theirs.
    let (mut cos_smallest, mut cos_largest) = (f64::NAN, f64::NAN);
    let mut k = 0;
    while k < 4 {
        let mut l = k + 1;
        while l < 4 {
            let (n, m) = (faces[k], faces[l]);
            let norms = sqrt(dot(n, n) * dot(m, m));
            // A face of no area makes a flat angle (180°) with any other.
            let c = if norms == 0.0 {
                -1.0
            } else {
                (-dot(n, m) / norms).clamp(-1.0, 1.0)
            };
            cos_smallest = cos_smallest.max(c);
            cos_largest = cos_largest.min(c);
            l += 1;
        }
        k += 1;
    }
    if inverted {
        return Measures {
            cos_smallest,
            cos_largest,
            harmonic: f64::INFINITY,
            amips: f64::INFINITY,
            inverted,
        };
    }
    let volume = signed_volume(p[0], p[1], p[2], p[3]);
    let areas = dot(faces[0], faces[0])
        + dot(faces[1], faces[1])
        + dot(faces[2], faces[2])
        + dot(faces[3], faces[3]);
    // (6√2)^(4/3) = 6√2 ∛(6√2).
    let k = 6.0 * core::f64::consts::SQRT_2;
    let regular = 0.75 * k * cbrt(k);
    let harmonic = areas / (volume * cbrt(volume)) / regular;
    // J = E R⁻¹, E the edges from corner 0 as columns and R those of the
    // regular tetrahedron (0,0,0), (1,0,0), (1/2, √3/2, 0),
    // (1/2, √3/6, √(2/3)): J's columns are e1, (2 e2 - e1)/√3 and
    // (3 e3 - e1 - e2)/√6, and det J = √2 det E = 6√2 V.
    let [e1, e2, e3] = [p[1], p[2], p[3]];
    let j2 = sub(scale(e2, 2.0), e1);
    let j3 = sub(sub(scale(e3, 3.0), e1), e2);
    let trace = dot(e1, e1) + dot(j2, j2) / 3.0 + dot(j3, j3) / 6.0;
    let det = cbrt(k * volume);
    Measures {
        cos_smallest,
        cos_largest,
        harmonic,
        amips: trace / (det * det),
        inverted,
    }
}

/// Partials per block of [`TetMeasures`], in this order: the sums of the
/// harmonic index and of the AMIPS energy, their maxima, the largest
/// cosine of a smallest dihedral angle, the smallest of a largest one,
/// and the inverted tetrahedra.
pub const TET_PARTIALS: u32 = 7;

/// Shared-memory bytes of the reducing kernels with `threads` threads per
/// block.
pub fn shared_bytes(threads: u32) -> usize {
    cavity_device::array::partial_shared_bytes(threads)
}

/// The shared-memory bytes of a launch of the reducing kernels: on the
/// GPU, on the CPU backend.
pub fn launch_shared_bytes() -> (usize, usize) {
    (shared_bytes(BOUNDS.threads), shared_bytes(1))
}

/// The larger of `a` and `b`, `a` when `b` is NaN.
#[inline(always)]
fn larger(a: f64, b: f64) -> f64 {
    if b > a { b } else { a }
}

/// The smaller of `a` and `b`, `a` when `b` is NaN.
#[inline(always)]
fn smaller(a: f64, b: f64) -> f64 {
    if b < a { b } else { a }
}

cavity_device::kernel! {
    @core
    /// The measures ([`measures`]) of the `tets` tetrahedra (four words
    /// each in `tet_vertices`) at `positions` (three words a vertex),
    /// [`TET_PARTIALS`] partials per block in `partials` (block `b`'s
    /// `j`-th at `TET_PARTIALS b + j`). Dynamic shared memory
    /// [`shared_bytes`].
    ///
    /// # Safety
    /// Checked: the inputs are only read; one thread of each block writes
    /// its partials.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel TetMeasures(
        launch,
        tet_vertices: In<u32>,
        positions: In<f32>,
        tets: u32,
        partials: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, tets);
        let mut sums = [0.0f64; 2];
        let mut maxima = [f64::NEG_INFINITY; 3];
        let (mut cos_largest, mut inverted) = (f64::INFINITY, 0.0f64);
        launch.block.for_each(end - start, |k| {
            let t = start + k;
            let corner = |i: u32| {
                let v = tet_vertices.get(4 * t + i);
                let at = |c: u32| f64::from(positions.get((3 * v).wrapping_add(c)));
                [at(0), at(1), at(2)]
            };
            let m = measures([corner(0), corner(1), corner(2), corner(3)]);
            sums[0] += m.harmonic;
            sums[1] += m.amips;
            maxima[0] = larger(maxima[0], m.harmonic);
            maxima[1] = larger(maxima[1], m.amips);
            maxima[2] = larger(maxima[2], m.cos_smallest);
            cos_largest = smaller(cos_largest, m.cos_largest);
            inverted += if m.inverted { 1.0 } else { 0.0 };
        });
        let scratch = launch.arena.alloc::<u32>(combine_scratch_len(launch.block.block_dim()));
        launch.arena.check();
        let at = TET_PARTIALS * launch.block_idx;
        let block = launch.block;
        let sum = |a: f64, b: f64| a + b;
        write_partial(block, scratch, sums[0], sum, &partials, at);
        write_partial(block, scratch, sums[1], sum, &partials, at + 1);
        write_partial(block, scratch, maxima[0], larger, &partials, at + 2);
        write_partial(block, scratch, maxima[1], larger, &partials, at + 3);
        write_partial(block, scratch, maxima[2], larger, &partials, at + 4);
        write_partial(block, scratch, cos_largest, smaller, &partials, at + 5);
        write_partial(block, scratch, inverted, sum, &partials, at + 6);
    }
}

cavity_device::kernel! {
    @core
    /// Counts the `count` edges (`edges`: two vertices each) at
    /// `positions` whose squared length is in `[band[0], band[1]]`, one
    /// partial per block in `partials`. Dynamic shared memory
    /// [`shared_bytes`].
    ///
    /// # Safety
    /// Checked: the inputs are only read; one thread of each block writes
    /// its partial.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel EdgeBand(
        launch,
        edges: In<u32>,
        positions: In<f32>,
        count: u32,
        band: [f64; 2],
        partials: InOut<u32>,
    ) {
        let (start, end) = chunk(launch.block_idx, count);
        let mut inside = 0.0f64;
        launch.block.for_each(end - start, |k| {
            let e = start + k;
            let point = |v: u32| {
                let at = |c: u32| f64::from(positions.get((3 * v).wrapping_add(c)));
                [at(0), at(1), at(2)]
            };
            let d = sub(point(edges.get(2 * e)), point(edges.get(2 * e + 1)));
            let l2 = dot(d, d);
            inside += if band[0] <= l2 && l2 <= band[1] { 1.0 } else { 0.0 };
        });
        let scratch = launch.arena.alloc::<u32>(combine_scratch_len(launch.block.block_dim()));
        launch.arena.check();
        let sum = |a: f64, b: f64| a + b;
        write_partial(launch.block, scratch, inside, sum, &partials, launch.block_idx);
    }
}

cavity_device::kernel! {
    @core
    /// Counts the `vertices` rows of the stars (`offsets`, `vertices + 1`
    /// of them) that are not empty, one partial per block in `partials`.
    /// Dynamic shared memory [`shared_bytes`].
    ///
    /// # Safety
    /// Checked: the offsets are only read; one thread of each block writes
    /// its partial.
    #[launch_bounds = crate::BOUNDS]
    #[checked]
    pub kernel UsedVertices(launch, offsets: In<u32>, vertices: u32, partials: InOut<u32>) {
        let (start, end) = chunk(launch.block_idx, vertices);
        let mut used = 0.0f64;
        launch.block.for_each(end - start, |k| {
            let v = start + k;
            used += if offsets.get(v + 1) > offsets.get(v) { 1.0 } else { 0.0 };
        });
        let scratch = launch.arena.alloc::<u32>(combine_scratch_len(launch.block.block_dim()));
        launch.arena.check();
        let sum = |a: f64, b: f64| a + b;
        write_partial(launch.block, scratch, used, sum, &partials, launch.block_idx);
    }
}

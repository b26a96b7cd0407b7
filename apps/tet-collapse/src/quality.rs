//! The quality measures printed for a mesh before and after collapsing
//! (section 4.6 of the paper), per tetrahedron and over a mesh, in `f64`
//! and in parallel (rayon):
//!
//! - the **harmonic index** `η(τ) = Σ a_i² / vol(τ)` of Alexa ("Harmonic
//!   triangulations", 2019; the paper's equation in section 4.6), `a_i`
//!   the four face areas: model units (a length). The scale-free
//!   normalized index ([`TetQuality::harmonic`]) divides it by that of
//!   the regular tetrahedron of the same volume, `η_reg(V) = C V^(1/3)`
//!   with `C = (3/4) (6√2)^(4/3) ≈ 12.98`: 1 for a regular tetrahedron,
//!   above 1 for every other one (for a given volume the sum of the
//!   squared face areas is least for the regular tetrahedron);
//! - the **dihedral angles** (degrees), at each of the six edges the angle
//!   between its two faces measured inside the tetrahedron (70.53° at
//!   every edge of a regular one). `cavity_volume::quality` has the
//!   smallest one only; here both extremes come from the four outward
//!   face normals, which the harmonic index needs anyway;
//! - the **conformal AMIPS energy** `D(τ) = tr(JᵀJ) / det(J)^(2/3)` (Hu
//!   et al., "Fast tetrahedral meshing in the wild", 2020; the paper's
//!   equation in section 4.6), `J` the Jacobian of the affine map from
//!   the regular tetrahedron of unit edges onto `τ`: 3 for a regular
//!   tetrahedron, above 3 for every other, scale-free.
//!
//! An inverted or flat tetrahedron (signed volume not positive, see
//! [`cavity_tet_collapse_kernels::geometry::is_valid_tet`] with ratio 0)
//! has an infinite normalized harmonic index and AMIPS energy; its
//! dihedral angles are those of its mirror image.

use std::sync::atomic::{AtomicBool, Ordering};

use cavity_tet_collapse_kernels::geometry::{
    cross, dot, is_valid_tet, longest_edge_squared, signed_volume, sub,
};
use rayon::prelude::*;

use crate::TetMesh;

/// The measures of one tetrahedron, computed together from its corners.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TetQuality {
    /// The smallest dihedral angle, degrees (NaN when two corners
    /// coincide).
    pub min_dihedral: f64,
    /// The largest dihedral angle, degrees (NaN when two corners
    /// coincide).
    pub max_dihedral: f64,
    /// The normalized harmonic index (see the [module](self)): 1 for a
    /// regular tetrahedron, infinite for an inverted or flat one.
    pub harmonic: f64,
    /// The conformal AMIPS energy: 3 for a regular tetrahedron, infinite
    /// for an inverted or flat one.
    pub amips: f64,
    /// Whether the signed volume is not positive (inverted or flat; also
    /// for a non-finite corner).
    pub inverted: bool,
}

/// `Σ a_i² / V^(4/3)` of the regular tetrahedron, `(3/4) (6√2)^(4/3)`:
/// its four faces of area `√3/4` and its volume `1/(6√2)` at unit edges.
fn regular_harmonic_constant() -> f64 {
    0.75 * (6.0 * std::f64::consts::SQRT_2).powf(4.0 / 3.0)
}

/// `v` times `s`.
fn scale(v: [f64; 3], s: f64) -> [f64; 3] {
    v.map(|x| x * s)
}

/// The four outward face area vectors of tetrahedron `p` (positively
/// oriented, see [`crate::TetMesh`]), each opposite the corner of its
/// index: the faces `(1 2 3)`, `(0 3 2)`, `(0 1 3)`, `(0 2 1)`, half the
/// cross product of their edges.
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

pub use cavity_tet_collapse_kernels::criterion::harmonic_index;

/// The measures of tetrahedron `p` ([`TetQuality`]; see the
/// [module](self)). The corners are scaled by the inverse of the longest
/// edge first, so any scale from the smallest to the largest `f32` gives
/// the same values.
pub fn tet_quality(p: [[f64; 3]; 4]) -> TetQuality {
    let inverted = !is_valid_tet(p, 0.0);
    let longest = longest_edge_squared(p).sqrt();
    let p = p.map(|c| scale(sub(c, p[0]), 1.0 / longest));
    let faces = face_areas(p);
    // The interior angle at the edge between faces k and l is π minus
    // the angle between their outward normals.
    let mut min_dihedral = f64::NAN;
    let mut max_dihedral = f64::NAN;
    for k in 0..4 {
        for l in k + 1..4 {
            let (n, m) = (faces[k], faces[l]);
            let c = cross(n, m);
            let angle = 180.0 - dot(c, c).sqrt().atan2(dot(n, m)).to_degrees();
            min_dihedral = min_dihedral.min(angle);
            max_dihedral = max_dihedral.max(angle);
        }
    }
    if inverted {
        return TetQuality {
            min_dihedral,
            max_dihedral,
            harmonic: f64::INFINITY,
            amips: f64::INFINITY,
            inverted,
        };
    }
    let volume = signed_volume(p[0], p[1], p[2], p[3]);
    let areas: f64 = faces.iter().map(|&a| dot(a, a)).sum();
    let harmonic = areas / volume.powf(4.0 / 3.0) / regular_harmonic_constant();
    // J = E R⁻¹, E the edges from corner 0 as columns and R those of the
    // regular tetrahedron (0,0,0), (1,0,0), (1/2, √3/2, 0),
    // (1/2, √3/6, √(2/3)); R⁻¹ = [[1, -1/√3, -1/√6], [0, 2/√3, -1/√6],
    // [0, 0, √(3/2)]], so J's columns are e1, (2 e2 - e1)/√3 and
    // (3 e3 - e1 - e2)/√6, and det J = √2 det E = 6√2 V.
    let [e1, e2, e3] = [p[1], p[2], p[3]];
    let j2 = sub(scale(e2, 2.0), e1);
    let j3 = sub(sub(scale(e3, 3.0), e1), e2);
    let trace = dot(e1, e1) + dot(j2, j2) / 3.0 + dot(j3, j3) / 6.0;
    let det = 6.0 * std::f64::consts::SQRT_2 * volume;
    TetQuality {
        min_dihedral,
        max_dihedral,
        harmonic,
        amips: trace / det.powf(2.0 / 3.0),
        inverted,
    }
}

/// The corners of tetrahedron `t` at `positions`, in `f64`.
pub(crate) fn corners(positions: &[[f32; 3]], t: [u32; 4]) -> [[f64; 3]; 4] {
    t.map(|v| positions[v as usize].map(f64::from))
}

/// The quality of a tetrahedral mesh (section 4.6's table: smallest
/// dihedral angle and AMIPS energy, with the harmonic index the
/// improvement optimizes), from [`quality`]. Means and extremes run over
/// every tetrahedron: one inverted tetrahedron makes the harmonic and
/// AMIPS means and maxima infinite. Without tetrahedra the measures are
/// NaN.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quality {
    /// Tetrahedra.
    pub cells: usize,
    /// Vertices named by a tetrahedron (unreferenced positions left out).
    pub vertices: usize,
    /// The smallest dihedral angle, degrees.
    pub min_dihedral: f64,
    /// The largest dihedral angle, degrees.
    pub max_dihedral: f64,
    /// The mean normalized harmonic index (1 = regular).
    pub mean_harmonic: f64,
    /// The largest normalized harmonic index.
    pub max_harmonic: f64,
    /// The mean conformal AMIPS energy (3 = regular).
    pub mean_amips: f64,
    /// The largest conformal AMIPS energy.
    pub max_amips: f64,
    /// Tetrahedra whose signed volume is not positive (inverted or flat).
    pub inverted: usize,
    /// With a target edge length `L`: the share (in `[0, 1]`) of the
    /// unique edges whose length is in `[4/5 L, 4/3 L]` (NaN without
    /// edges).
    pub edge_band: Option<f64>,
}

/// The [`Quality`] of `mesh`, in parallel; `target_length` (model units)
/// gives [`Quality::edge_band`].
///
/// # Panics
/// When a tetrahedron names a vertex past the positions
/// ([`crate::checks::check_valid`] reports that as an error).
pub fn quality(mesh: &TetMesh, target_length: Option<f64>) -> Quality {
    let per_tet: Vec<TetQuality> = mesh
        .tets
        .par_iter()
        .map(|&t| tet_quality(corners(&mesh.positions, t)))
        .collect();
    let cells = per_tet.len();
    let (min_dihedral, max_dihedral) = per_tet
        .par_iter()
        .map(|q| (q.min_dihedral, q.max_dihedral))
        .reduce(|| (f64::NAN, f64::NAN), |a, b| (a.0.min(b.0), a.1.max(b.1)));
    let mean = |f: fn(&TetQuality) -> f64| per_tet.par_iter().map(f).sum::<f64>() / cells as f64;
    let max = |f: fn(&TetQuality) -> f64| per_tet.par_iter().map(f).reduce(|| f64::NAN, f64::max);
    let used: Vec<AtomicBool> = mesh
        .positions
        .par_iter()
        .map(|_| AtomicBool::new(false))
        .collect();
    mesh.tets
        .par_iter()
        .flatten()
        .for_each(|&v| used[v as usize].store(true, Ordering::Relaxed));
    Quality {
        cells,
        vertices: used
            .par_iter()
            .filter(|u| u.load(Ordering::Relaxed))
            .count(),
        min_dihedral,
        max_dihedral,
        mean_harmonic: mean(|q| q.harmonic),
        max_harmonic: max(|q| q.harmonic),
        mean_amips: mean(|q| q.amips),
        max_amips: max(|q| q.amips),
        inverted: per_tet.par_iter().filter(|q| q.inverted).count(),
        edge_band: target_length.map(|l| edge_band(mesh, l)),
    }
}

/// The share of `mesh`'s unique edges whose length is in
/// `[4/5 l, 4/3 l]` (NaN without edges).
fn edge_band(mesh: &TetMesh, l: f64) -> f64 {
    let edges = mesh.edges();
    let (low, high) = ((0.8 * l).powi(2), (4.0 / 3.0 * l).powi(2));
    let inside = edges
        .par_iter()
        .filter(|&&[a, b]| {
            let d = sub(
                mesh.positions[a as usize].map(f64::from),
                mesh.positions[b as usize].map(f64::from),
            );
            (low..=high).contains(&dot(d, d))
        })
        .count();
    inside as f64 / edges.len() as f64
}

/// A table of the [`Quality`] of several meshes: a header line with the
/// labels, then one line per measure with one column per `(label,
/// quality)` row, numbers right-aligned (angles in degrees with two
/// decimals, harmonic index and AMIPS energy with four, the edge band as
/// a percentage, printed when a row has one; `-` where a value is NaN or
/// missing). Every line ends with a newline.
pub fn quality_table(rows: &[(&str, &Quality)]) -> String {
    let fixed = |x: f64, digits: usize| {
        if x.is_nan() {
            "-".to_string()
        } else {
            format!("{x:.digits$}")
        }
    };
    let each = |f: &dyn Fn(&Quality) -> String| rows.iter().map(|r| f(r.1)).collect::<Vec<_>>();
    let mut lines = vec![
        ("tetrahedra", each(&|q| q.cells.to_string())),
        ("vertices", each(&|q| q.vertices.to_string())),
        ("inverted", each(&|q| q.inverted.to_string())),
        ("min dihedral (deg)", each(&|q| fixed(q.min_dihedral, 2))),
        ("max dihedral (deg)", each(&|q| fixed(q.max_dihedral, 2))),
        (
            "mean harmonic (1 = regular)",
            each(&|q| fixed(q.mean_harmonic, 4)),
        ),
        ("max harmonic", each(&|q| fixed(q.max_harmonic, 4))),
        (
            "mean AMIPS (3 = regular)",
            each(&|q| fixed(q.mean_amips, 4)),
        ),
        ("max AMIPS", each(&|q| fixed(q.max_amips, 4))),
    ];
    if rows.iter().any(|r| r.1.edge_band.is_some()) {
        lines.push((
            "edges in [4/5 L, 4/3 L] (%)",
            each(&|q| q.edge_band.map_or("-".to_string(), |b| fixed(100.0 * b, 1))),
        ));
    }
    let first = lines.iter().map(|l| l.0.len()).max().unwrap_or(0);
    let widths: Vec<usize> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            lines
                .iter()
                .map(|l| l.1[i].len())
                .fold(r.0.chars().count(), usize::max)
        })
        .collect();
    let mut out = format!("{:first$}", "");
    for (r, w) in rows.iter().zip(&widths) {
        out += &format!("  {:>w$}", r.0);
    }
    out += "\n";
    for (name, values) in &lines {
        out += &format!("{name:first$}");
        for (v, w) in values.iter().zip(&widths) {
            out += &format!("  {v:>w$}");
        }
        out += "\n";
    }
    out
}

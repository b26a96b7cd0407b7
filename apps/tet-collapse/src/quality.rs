//! The quality measures printed for a mesh before and after collapsing
//! (section 4.6 of the paper), per tetrahedron and over a mesh, in `f64`:
//! on a backend ([`quality_on`]: the kernels of
//! `cavity_tet_collapse_kernels::quality`, the GPU or the CPU backend) and
//! on the host in parallel ([`quality`], rayon: the reference, and the
//! measure of the peers' outputs). Per tetrahedron they are the kernels'
//! [`measures`]: the normalized harmonic index (1 = regular), the
//! smallest and largest dihedral angle (degrees) and the conformal AMIPS
//! energy (3 = regular); see that module for their definitions.
//!
//! An inverted or flat tetrahedron (signed volume not positive, see
//! [`cavity_tet_collapse_kernels::geometry::is_valid_tet`] with ratio 0)
//! has an infinite normalized harmonic index and AMIPS energy; its
//! dihedral angles are those of its mirror image.

use std::sync::atomic::{AtomicBool, Ordering};

use cavity::backend::{Backend, BackendError};
use cavity_tet_collapse_kernels::blocks;
use cavity_tet_collapse_kernels::geometry::{dot, sub};
use cavity_tet_collapse_kernels::quality::{
    EdgeBand, TET_PARTIALS, TetMeasures, UsedVertices, launch_shared_bytes, measures,
};
use rayon::prelude::*;

use crate::TetMesh;
use crate::parallel::rows;

/// The measures of one tetrahedron, computed together from its corners.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TetQuality {
    /// The smallest dihedral angle, degrees (180° at an edge where a face
    /// has no area; NaN when every corner is at one point).
    pub min_dihedral: f64,
    /// The largest dihedral angle, degrees (as `min_dihedral` for
    /// degenerate faces).
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

pub use cavity_tet_collapse_kernels::criterion::harmonic_index;

/// The angle in degrees of cosine `c`.
fn degrees(c: f64) -> f64 {
    c.acos().to_degrees()
}

/// The measures of tetrahedron `p` ([`TetQuality`]; see the
/// [module](self)). The corners are scaled by the inverse of the longest
/// edge first, so any scale from the smallest to the largest `f32` gives
/// the same values.
pub fn tet_quality(p: [[f64; 3]; 4]) -> TetQuality {
    let m = measures(p);
    TetQuality {
        min_dihedral: degrees(m.cos_smallest),
        max_dihedral: degrees(m.cos_largest),
        harmonic: m.harmonic,
        amips: m.amips,
        inverted: m.inverted,
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

impl Quality {
    /// The first measure in which `self` and `other` differ, named with
    /// both values: the counts exactly, the measures by more than
    /// `relative` of the larger (NaN agreeing with NaN, an infinity with
    /// itself, a missing edge band with a missing one); `None` when they
    /// agree.
    pub fn differs_from(&self, other: &Quality, relative: f64) -> Option<String> {
        let (a, b) = (self, other);
        let counts = [
            ("tetrahedra", a.cells, b.cells),
            ("vertices", a.vertices, b.vertices),
            ("inverted", a.inverted, b.inverted),
        ];
        if let Some((name, x, y)) = counts.into_iter().find(|(_, x, y)| x != y) {
            return Some(format!("{name}: {x} against {y}"));
        }
        let close = |x: f64, y: f64| {
            if x.is_infinite() || y.is_infinite() {
                return x == y;
            }
            (x.is_nan() && y.is_nan()) || x == y || (x - y).abs() <= relative * x.abs().max(y.abs())
        };
        let band = |q: &Quality| q.edge_band.unwrap_or(-1.0);
        let measures = [
            ("min dihedral", a.min_dihedral, b.min_dihedral),
            ("max dihedral", a.max_dihedral, b.max_dihedral),
            ("mean harmonic", a.mean_harmonic, b.mean_harmonic),
            ("max harmonic", a.max_harmonic, b.max_harmonic),
            ("mean AMIPS", a.mean_amips, b.mean_amips),
            ("max AMIPS", a.max_amips, b.max_amips),
            ("edge band", band(a), band(b)),
        ];
        measures
            .into_iter()
            .find(|&(_, x, y)| !close(x, y))
            .map(|(name, x, y)| format!("{name}: {x} against {y}"))
    }
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

/// The [`Quality`] of `mesh` computed on `backend` (the kernels of
/// `cavity_tet_collapse_kernels::quality`, one partial per block combined
/// in block order on the host; the stars and edges built as the collapse
/// builds them); `target_length` (model units) gives
/// [`Quality::edge_band`]. The same as [`quality`] up to the order of the
/// sums (a few units in the last place of the means).
///
/// # Errors
/// A failed launch or copy; the GPU's kernels missing.
///
/// # Panics
/// On the CPU backend, when a tetrahedron names a vertex past the
/// positions (a kernel's bounds check stops; on the GPU it traps, and the
/// error is a [`BackendError`] after which the device is not usable).
/// [`crate::checks::check_valid`] reports such a mesh as an error first.
pub fn quality_on(
    backend: &Backend,
    mesh: &TetMesh,
    target_length: Option<f64>,
) -> Result<Quality, BackendError> {
    crate::add_kernels(backend)?;
    let d = backend;
    let (n, m) = (mesh.positions.len() as u32, mesh.tets.len() as u32);
    let tets = d.upload(mesh.tets.as_flattened())?;
    let positions = d.upload(mesh.positions.as_flattened())?;
    let shared = launch_shared_bytes();
    let mut partials = d.zeros::<u32>(2 * (TET_PARTIALS * blocks(m)) as usize)?;
    d.launch::<TetMeasures>(blocks(m), shared, (&tets, &positions, m, &mut partials))?;
    let combined = d.read_partials(&partials, TET_PARTIALS * blocks(m))?;
    let at = |j: u32| {
        combined
            .chunks(TET_PARTIALS as usize)
            .map(move |block| block[j as usize])
    };
    let sum = |values: &mut dyn Iterator<Item = f64>| values.sum::<f64>();
    let largest = |values: &mut dyn Iterator<Item = f64>| values.fold(f64::NAN, f64::max);
    let smallest = |values: &mut dyn Iterator<Item = f64>| values.fold(f64::NAN, f64::min);
    let cells = mesh.tets.len();
    // The identities of an empty block (infinities) are no cosine.
    let finite = |x: f64| if x.is_finite() { x } else { f64::NAN };
    let (sum_harmonic, sum_amips) = (sum(&mut at(0)), sum(&mut at(1)));
    let (max_harmonic, max_amips) = (largest(&mut at(2)), largest(&mut at(3)));
    let cos_smallest = finite(largest(&mut at(4)));
    let cos_largest = finite(smallest(&mut at(5)));
    let inverted = sum(&mut at(6)) as usize;
    let no_field = d.zeros::<f32>(0)?;
    let stars = rows(d, &tets, [&positions, &no_field], n, m, |_| Ok(()))?;
    let mut used = d.zeros::<u32>(2 * blocks(n) as usize)?;
    let params = (&stars.offsets, n, &mut used);
    d.launch::<UsedVertices>(blocks(n), shared, params)?;
    let vertices = d.read_partials(&used, blocks(n))?.into_iter().sum::<f64>() as usize;
    let edge_band = match target_length {
        Some(l) => {
            let e = stars.edge_count;
            let band = [(0.8 * l).powi(2), (4.0 / 3.0 * l).powi(2)];
            let mut inside = d.zeros::<u32>(2 * blocks(e) as usize)?;
            let params = (&stars.edges, &positions, e, band, &mut inside);
            d.launch::<EdgeBand>(blocks(e), shared, params)?;
            let inside: f64 = d.read_partials(&inside, blocks(e))?.into_iter().sum();
            Some(inside / f64::from(e))
        }
        None => None,
    };
    let mean = |total: f64| {
        if cells == 0 {
            f64::NAN
        } else {
            total / cells as f64
        }
    };
    let or_nan = |x: f64| if cells == 0 { f64::NAN } else { x };
    Ok(Quality {
        cells,
        vertices,
        min_dihedral: degrees(cos_smallest),
        max_dihedral: degrees(cos_largest),
        mean_harmonic: mean(sum_harmonic),
        max_harmonic: or_nan(max_harmonic),
        mean_amips: mean(sum_amips),
        max_amips: or_nan(max_amips),
        inverted,
        edge_band,
    })
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

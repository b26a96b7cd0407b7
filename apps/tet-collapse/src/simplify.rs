//! The target loop a user runs (issue 54): the parallel collapse
//! ([`crate::parallel::collapse_parallel_classes`], Algorithm 1) with one of the
//! built-in criteria (section 3.1; sections 4.5 and 4.6 for the field and
//! quality uses), run towards a [`Target`]:
//!
//! - [`Target::Length`]: the length criterion at the given target edge
//!   length `L`, run to convergence (no iteration collapses more than the
//!   paper's `ε_c`);
//! - [`Target::Ratio`] and [`Target::Cells`]: at most `ceil(r × cells)`
//!   or `n` tetrahedra. The length criterion starts at `L = 1.25 ×` the
//!   median edge length ([`median_edge_length`]) and runs with that cell
//!   count as `Settings::target_cells`; when it converges above the
//!   target, `L` grows by [`GROWTH`] and it runs again from the result,
//!   until the target is met or `L` reaches the diagonal of the bounding
//!   box ([`diagonal`]): at most the target where the criterion allows
//!   it, and [`Simplified::reached`] says whether it did. The field
//!   criterion grows its largest error the same way up to the field's
//!   span; the quality criterion has no parameter: it runs to
//!   convergence and stops at the target on the way;
//! - no target: the criterion at its starting bound, to convergence.
//!
//! A round starts from the previous round's mesh, and the boundary
//! classes (face, ridge, corner) are derived anew from it (within a round
//! they only rise, see `kernels::iteration::Classify`). Every round's
//! iterations and stage seconds add up in [`Simplified::report`].

use std::borrow::Cow;

use cavity::backend::Backend;
use cavity::settings::OutOfRange;
use rayon::prelude::*;

use crate::kernels::criterion::BAD_DIHEDRAL_DEGREES;
use crate::kernels::criterion::Placement;
use crate::kernels::iteration::Builtin;
use crate::parallel::{ParallelReport, collapse_parallel_classes};
use crate::{CollapseError, Settings, TetMesh, setting};

/// The length criterion's starting target length over the median edge
/// length, for a cell target or none: 1.25 collapses the edges shorter
/// than the median (`4/5 × 1.25 = 1`), as the paper's robustness run
/// does (section 4.1).
pub const START_LENGTH: f64 = 1.25;

/// The field criterion's default largest error over the field's span
/// `max − min` (section 4.5: `0.02 (Φ_max − Φ_min)`).
pub const FIELD_SHARE: f64 = 0.02;

/// A round towards a cell target ends, and the bound grows, once one of
/// its iterations collapses no more than this share of the cells left:
/// a bound's last few collapses take as many iterations as the rest (the
/// 1.30 M-tetrahedron grid: 20 iterations, the last eleven below 0.2 %),
/// and the next round's larger bound takes them up with its own. The
/// last round (at the bound's limit, or without a cell target) runs to
/// [`Settings::epsilon_c`].
pub const ROUND_TAIL: f64 = 0.002;

/// The factor by which a round's bound (target length or largest field
/// error) grows over the last when the last converged above the cell
/// target.
pub const GROWTH: f64 = 1.5;

/// What a simplification aims at ([`SimplifySettings::target`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    /// At most `ceil(r × cells)` tetrahedra, `r` in (0, 1] (1 keeps the
    /// mesh as it is).
    Ratio(f64),
    /// At most this many tetrahedra, at least 1 (a count at or above the
    /// input's keeps the mesh as it is).
    Cells(usize),
    /// The length criterion at this target edge length `L` (model units,
    /// positive and finite): edges shorter than `4/5 L` collapse and none
    /// is made longer than `4/3 L`, to convergence. Only with
    /// [`Criterion::Length`].
    Length(f64),
}

/// Which built-in criterion ranks and admits the collapses
/// (`kernels::criterion`; [`SimplifySettings::criterion`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Criterion {
    /// Edge length towards a target length `L`
    /// (`kernels::criterion::Length`): shortest first.
    Length,
    /// The error `|Φ(a) − Φ(b)|` of the per-vertex field
    /// (`kernels::criterion::Field`, section 4.5): smallest first, up to
    /// `max_error` (the field's units, positive and finite), by default
    /// [`FIELD_SHARE`] times the field's span (the smallest positive
    /// number for a constant field, so that its edges, all of error 0,
    /// are candidates). Needs a field.
    Field {
        /// The largest error collapsed; `None` for the default.
        max_error: Option<f64>,
    },
    /// Quality improvement by the harmonic index
    /// (`kernels::criterion::Harmonic`, section 4.6): the edges of
    /// tetrahedra with a dihedral angle below 13° collapse when that
    /// lowers the worst tetrahedron around them, the kept vertex placed by
    /// a line search (the placement is not used).
    Quality,
}

/// The settings of [`simplify`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimplifySettings {
    /// The target; `None` runs the criterion at its starting bound to
    /// convergence.
    pub target: Option<Target>,
    /// The criterion.
    pub criterion: Criterion,
    /// Where the kept vertex goes (length and field criteria).
    pub placement: Placement,
    /// The collapse's own settings (`volume_ratio`, `ε_F`, `ε_R`, `ε_c`,
    /// `max_iterations`, the last over all rounds together); its
    /// `target_cells` is replaced by the target's.
    pub settings: Settings,
}

impl Default for SimplifySettings {
    fn default() -> SimplifySettings {
        SimplifySettings {
            target: None,
            criterion: Criterion::Length,
            placement: Placement::Midpoint,
            settings: Settings::default(),
        }
    }
}

/// `setting` out of range: `message` says the range, `value` what was
/// given.
fn out_of_range(
    setting: cavity::settings::Setting,
    message: &'static str,
    value: impl std::fmt::Display,
) -> CollapseError {
    CollapseError::Setting {
        source: OutOfRange::new(setting, message),
        value: value.to_string(),
    }
}

impl SimplifySettings {
    /// Checks the settings for a mesh of `vertices` vertices with the
    /// per-vertex field `values` (empty for none).
    ///
    /// # Errors
    /// [`CollapseError::Setting`] for a ratio outside (0, 1], a cell count
    /// of 0, a target length or largest field error that is not positive
    /// and finite, a target length with another criterion than the
    /// length criterion; [`CollapseError::FieldLength`] for a field that
    /// does not have one value per vertex; [`CollapseError::NoField`] for
    /// the field criterion without a field, and
    /// [`CollapseError::NonFiniteField`] for a field it reads with a
    /// value that is not finite.
    pub fn check(&self, vertices: usize, values: &[f32]) -> Result<(), CollapseError> {
        match self.target {
            Some(Target::Ratio(r)) if !(r > 0.0 && r <= 1.0) => {
                return Err(out_of_range(setting::RATIO, "must be in (0, 1]", r));
            }
            Some(Target::Cells(0)) => {
                return Err(out_of_range(
                    setting::CELLS,
                    "must be at least 1 (a mesh keeps at least one tetrahedron)",
                    0,
                ));
            }
            Some(Target::Length(l)) if !(l > 0.0 && l.is_finite()) => {
                return Err(out_of_range(
                    setting::LENGTH,
                    "must be positive and finite (model units)",
                    l,
                ));
            }
            Some(Target::Length(l)) if self.criterion != Criterion::Length => {
                return Err(out_of_range(
                    setting::LENGTH,
                    "is the length criterion's: with the field or quality criterion give a ratio or a cell count",
                    l,
                ));
            }
            _ => {}
        }
        if let Criterion::Field { max_error: Some(e) } = self.criterion
            && !(e > 0.0 && e.is_finite())
        {
            return Err(out_of_range(
                setting::MAX_ERROR,
                "must be positive and finite (the field's units)",
                e,
            ));
        }
        if !values.is_empty() && values.len() != vertices {
            return Err(CollapseError::FieldLength {
                values: values.len(),
                vertices,
            });
        }
        if let Criterion::Field { .. } = self.criterion {
            if values.is_empty() {
                return Err(CollapseError::NoField);
            }
            if let Some((vertex, &value)) = values
                .par_iter()
                .enumerate()
                .find_first(|v| !v.1.is_finite())
            {
                return Err(CollapseError::NonFiniteField { vertex, value });
            }
        }
        Ok(())
    }
}

/// The result of [`simplify`].
#[derive(Clone, Debug, PartialEq)]
pub struct Simplified {
    /// The simplified mesh (every position kept but those the collapses
    /// removed, in their order).
    pub mesh: TetMesh,
    /// The field at the kept vertices (interpolated along each collapsed
    /// edge at the kept vertex's placement); empty without a field.
    pub values: Vec<f32>,
    /// Every round's iterations (collapses and tetrahedra left) one after
    /// the other, their stage seconds and conflict rounds summed, and the
    /// backend's name.
    pub report: ParallelReport,
    /// The length criterion's target length of the last round (model
    /// units); `None` for the other criteria.
    pub length: Option<f64>,
    /// The field criterion's largest error of the last round (the field's
    /// units); `None` for the other criteria.
    pub max_error: Option<f64>,
    /// Rounds of the target loop (1 without a cell target).
    pub rounds: u32,
    /// The tetrahedra aimed at (`ceil(r × cells)` or `n`); `None` without
    /// a cell target.
    pub target_cells: Option<usize>,
    /// With a cell target, whether at most that many tetrahedra are
    /// left; without one, whether the collapse converged (the last
    /// iteration collapsed at most `ε_c` edges) rather than stopping at
    /// `max_iterations`.
    pub reached: bool,
}

/// The median length of `mesh`'s edges (model units; NaN without
/// tetrahedra), in parallel: the unique edges ([`TetMesh::edges`]), their
/// lengths in `f64`, the upper median.
pub fn median_edge_length(mesh: &TetMesh) -> f64 {
    let mut lengths: Vec<f64> = mesh
        .edges()
        .par_iter()
        .map(|&[a, b]| {
            let (p, q) = (mesh.positions[a as usize], mesh.positions[b as usize]);
            (0..3)
                .map(|k| (f64::from(p[k]) - f64::from(q[k])).powi(2))
                .sum::<f64>()
                .sqrt()
        })
        .collect();
    if lengths.is_empty() {
        return f64::NAN;
    }
    let middle = lengths.len() / 2;
    *lengths.select_nth_unstable_by(middle, f64::total_cmp).1
}

/// The diagonal of the bounding box of the vertices `mesh`'s tetrahedra
/// name (model units; 0 without tetrahedra), in parallel.
pub fn diagonal(mesh: &TetMesh) -> f64 {
    let (lo, hi) = mesh
        .tets
        .par_iter()
        .flat_map_iter(|t| t.iter().map(|&v| mesh.positions[v as usize].map(f64::from)))
        .fold(
            || ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]),
            |(lo, hi), p| {
                (
                    std::array::from_fn(|k| lo[k].min(p[k])),
                    std::array::from_fn(|k| hi[k].max(p[k])),
                )
            },
        )
        .reduce(
            || ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]),
            |a, b| {
                (
                    std::array::from_fn(|k| a.0[k].min(b.0[k])),
                    std::array::from_fn(|k| a.1[k].max(b.1[k])),
                )
            },
        );
    if mesh.tets.is_empty() {
        return 0.0;
    }
    (0..3).map(|k| (hi[k] - lo[k]).powi(2)).sum::<f64>().sqrt()
}

/// The span `max − min` of `values` (0 when empty), in parallel.
fn span(values: &[f32]) -> f64 {
    let (lo, hi) = values
        .par_iter()
        .map(|&v| (f64::from(v), f64::from(v)))
        .reduce(
            || (f64::INFINITY, f64::NEG_INFINITY),
            |a, b| (a.0.min(b.0), a.1.max(b.1)),
        );
    if values.is_empty() { 0.0 } else { hi - lo }
}

/// `mesh` (with its per-vertex field `values`, empty for none) simplified
/// on `backend` towards `settings.target` with its criterion (see the
/// [module](self) for the loop), and the field at the kept vertices.
///
/// # Errors
/// [`SimplifySettings::check`]'s errors before any work;
/// [`CollapseError::Backend`] for a failed launch or copy (the GPU's
/// kernels missing).
pub fn simplify(
    backend: &Backend,
    mesh: &TetMesh,
    values: &[f32],
    settings: &SimplifySettings,
) -> Result<Simplified, CollapseError> {
    settings.check(mesh.positions.len(), values)?;
    let cells = mesh.tets.len();
    let target_cells = match settings.target {
        Some(Target::Ratio(r)) => Some((r * cells as f64).ceil() as usize),
        Some(Target::Cells(n)) => Some(n),
        Some(Target::Length(_)) | None => None,
    };
    // The criterion, its starting bound, and how far a cell target may
    // grow it.
    let (kind, mut bound, limit) = match settings.criterion {
        Criterion::Length => {
            let l = match settings.target {
                Some(Target::Length(l)) => l,
                _ => START_LENGTH * median_edge_length(mesh),
            };
            (0, l, diagonal(mesh))
        }
        Criterion::Field { max_error } => {
            let s = span(values);
            let e = max_error.unwrap_or(FIELD_SHARE * s);
            (1, if e > 0.0 { e } else { f64::MIN_POSITIVE }, s)
        }
        Criterion::Quality => (2, BAD_DIHEDRAL_DEGREES.to_radians().cos(), 0.0),
    };
    let placement = match settings.placement {
        Placement::Midpoint => 0,
        Placement::Endpoint => 1,
    };
    let mut current = Cow::Borrowed(mesh);
    let mut field = Cow::Borrowed(values);
    let mut report = ParallelReport {
        device: backend.name(),
        ..ParallelReport::default()
    };
    let max_iterations = settings.settings.max_iterations;
    let mut rounds = 0;
    // The boundary classes carried from round to round (a corner stays a
    // corner, as within one run).
    let mut classes = Vec::new();
    loop {
        rounds += 1;
        let last = target_cells.is_none() || kind == 2 || bound >= limit;
        let tail = (ROUND_TAIL * current.tets.len() as f64) as usize;
        let run = Settings {
            target_cells,
            max_iterations: max_iterations - report.iterations.len() as u32,
            epsilon_c: if last {
                settings.settings.epsilon_c
            } else {
                settings.settings.epsilon_c.max(tail)
            },
            ..settings.settings
        };
        let criterion = Builtin {
            kind,
            placement,
            bound,
        };
        let (out, out_values, out_classes, r) =
            collapse_parallel_classes(backend, &current, &field, &classes, criterion, &run, None)?;
        classes = out_classes;
        report.iterations.extend(r.iterations);
        if rounds == 1 {
            report.build_seconds = r.build_seconds;
        }
        report.rebuild_seconds += r.rebuild_seconds;
        report.candidate_seconds += r.candidate_seconds;
        report.conflict_seconds += r.conflict_seconds;
        report.apply_seconds += r.apply_seconds;
        report.conflict_rounds += r.conflict_rounds;
        current = Cow::Owned(out);
        field = Cow::Owned(out_values);
        let Some(target) = target_cells else { break };
        let stop = current.tets.len() <= target
            || report.iterations.len() as u32 >= max_iterations
            || kind == 2
            || bound >= limit
            || bound.is_nan();
        if stop {
            break;
        }
        bound = (bound * GROWTH).min(limit);
    }
    let mesh = current.into_owned();
    let reached = match target_cells {
        Some(target) => mesh.tets.len() <= target,
        None => report.iterations.last().map_or(mesh.tets.is_empty(), |i| {
            i.collapses <= settings.settings.epsilon_c
        }),
    };
    Ok(Simplified {
        mesh,
        values: field.into_owned(),
        report,
        length: (kind == 0).then_some(bound),
        max_error: (kind == 1).then_some(bound),
        rounds,
        target_cells,
        reached,
    })
}

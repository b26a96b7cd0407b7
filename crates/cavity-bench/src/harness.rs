//! What every benchmark shares: timed runs (warm-ups, then the median of
//! the timed ones: [`wall_median`], [`event_median`]), the devices it ran
//! on ([`Devices`]), the Markdown table it prints ([`Table`] and the
//! cells' formats), and the interface of a benchmark over meshes
//! ([`MeshBench`]) that the CLI runs the same way for every application.

use std::error::Error;
use std::time::Instant;

use cavity::TriMesh;
use cavity::backend::Backend;
use cavity::backend::cpu::CpuBackend;

use crate::{gpu_name, median};

/// A benchmark over named meshes (`"dragon.obj /3"`): the application's
/// settings, run on `backend` with progress lines, giving its table.
pub trait MeshBench {
    /// Runs on each of `meshes` and returns the Markdown table.
    ///
    /// # Errors
    /// The application's errors and the backend's.
    fn run(
        &self,
        meshes: &[(String, TriMesh)],
        backend: &Backend,
        progress: &dyn Fn(&str),
    ) -> Result<String, Box<dyn Error>>;
}

/// The median seconds of `reps` wall-clock runs of `f` after `warmup`
/// untimed ones (at least one timed run), with the last run's value.
///
/// # Errors
/// The first error of `f`.
pub fn wall_median<T, E>(
    warmup: usize,
    reps: usize,
    mut f: impl FnMut() -> Result<T, E>,
) -> Result<(T, f64), E> {
    repeated(warmup, reps, || {
        let start = Instant::now();
        let value = f()?;
        Ok((value, start.elapsed().as_secs_f64()))
    })
}

/// The median milliseconds of `reps` runs of `f` timed on `backend`
/// (CUDA events around the work it queues on the GPU; the wall clock on
/// the CPU backend) after `warmup` untimed ones, with the last run's
/// value.
///
/// # Errors
/// The first error of `f`, or of the GPU's events.
pub fn event_median<T, E: From<cavity::backend::BackendError>>(
    backend: &Backend,
    warmup: usize,
    reps: usize,
    mut f: impl FnMut() -> Result<T, E>,
) -> Result<(T, f64), E> {
    repeated(warmup, reps, || backend.timed(&mut f))
}

/// `warmup` runs of `timed` (a value and its time), then the median time
/// of `reps` more (at least one), with the last run's value.
fn repeated<T, E>(
    warmup: usize,
    reps: usize,
    mut timed: impl FnMut() -> Result<(T, f64), E>,
) -> Result<(T, f64), E> {
    for _ in 0..warmup {
        timed()?;
    }
    let mut times = Vec::with_capacity(reps.max(1));
    let mut last = None;
    for _ in 0..reps.max(1) {
        let (value, time) = timed()?;
        last = Some(value);
        times.push(time);
    }
    Ok((last.expect("one run at least"), median(times)))
}

/// The devices of a run, for a table's first line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Devices {
    /// The GPU's name, or "no GPU used".
    pub gpu: String,
    /// The CPU backend's description (its threads).
    pub cpu: String,
}

impl Devices {
    /// The devices of a run on `backend`.
    pub fn of(backend: &Backend) -> Devices {
        Devices {
            gpu: gpu_name(backend),
            cpu: CpuBackend::new().name(),
        }
    }

    /// `GPU: NAME; CPU backend: DESCRIPTION`.
    pub fn line(&self) -> String {
        format!("GPU: {}; CPU backend: {}", self.gpu, self.cpu)
    }
}

/// A benchmark's Markdown table: lines above it (the devices, the
/// settings), its columns, its rows.
#[derive(Clone, Debug, Default)]
pub struct Table {
    above: Vec<String>,
    columns: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table of `columns`, with `above` printed before it (each a line,
    /// a blank line after them).
    pub fn new(above: &[&str], columns: &[&str]) -> Table {
        Table {
            above: above.iter().map(|s| s.to_string()).collect(),
            columns: columns.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row of cells (as many as the columns).
    ///
    /// # Panics
    /// For another number of cells.
    pub fn row(&mut self, cells: Vec<String>) {
        assert_eq!(cells.len(), self.columns.len(), "a cell per column");
        self.rows.push(cells);
    }

    /// Adds a row of `cells` then `note` (a run that failed: its error),
    /// the rest of the row empty.
    ///
    /// # Panics
    /// For more cells than columns.
    pub fn row_with_note(&mut self, mut cells: Vec<String>, note: String) {
        cells.push(note);
        assert!(
            cells.len() <= self.columns.len(),
            "a cell per column at most"
        );
        cells.resize(self.columns.len(), String::new());
        self.rows.push(cells);
    }

    /// Whether it has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table in Markdown.
    pub fn render(&self) -> String {
        let mut s = String::new();
        for line in &self.above {
            s += line;
            s += "\n";
        }
        if !self.above.is_empty() {
            s += "\n";
        }
        let line = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
        s += &line(&self.columns);
        s += &format!("|{}\n", "---|".repeat(self.columns.len()));
        for r in &self.rows {
            s += &line(r);
        }
        s
    }
}

/// `x` with `decimals` decimals, or "-" when absent.
pub fn fixed(x: Option<f64>, decimals: usize) -> String {
    x.map_or("-".into(), |v| format!("{v:.decimals$}"))
}

/// How many times faster `fast` ran than `slow` ("12.3x"; below 0.1 with
/// two significant digits, "0.043x"), or "-" when either is absent.
pub fn speedup(slow: Option<f64>, fast: Option<f64>) -> String {
    slow.zip(fast).map_or("-".into(), |(s, f)| match s / f {
        r if r.abs() < 0.1 => format!("{}x", cavity::units::significant(r, 2)),
        r => format!("{r:.1}x"),
    })
}

/// `share` as a percentage ("47.0 %"), or "-" when absent.
pub fn percent(share: Option<f64>) -> String {
    share.map_or("-".into(), |s| format!("{:.1} %", 100.0 * s))
}

/// `x` as text, or "-" when absent.
pub fn or_dash<T: ToString>(x: Option<T>) -> String {
    x.map_or("-".into(), |v| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_renders_its_lines_columns_and_rows() {
        let mut t = Table::new(&["GPU: none"], &["mesh", "s", "speedup"]);
        t.row(vec![
            "a".into(),
            fixed(Some(0.5), 2),
            speedup(Some(2.0), Some(0.5)),
        ]);
        t.row(vec!["b".into(), fixed(None, 2), speedup(None, Some(1.0))]);
        t.row(vec![
            "c".into(),
            fixed(Some(2.0), 1),
            speedup(Some(0.1), Some(2.0)),
        ]);
        assert_eq!(
            t.render(),
            "GPU: none\n\n| mesh | s | speedup |\n|---|---|---|\n| a | 0.50 | 4.0x |\n| b | - | - |\n| c | 2.0 | 0.050x |\n"
        );
    }

    #[test]
    fn medians_take_the_timed_runs_after_the_warm_ups() {
        let mut calls = 0;
        let (last, _) = wall_median::<_, ()>(2, 3, || {
            calls += 1;
            Ok(calls)
        })
        .unwrap();
        assert_eq!((calls, last), (5, 5));
        assert_eq!(percent(Some(0.47)), "47.0 %");
        assert_eq!(or_dash(None::<u32>), "-");
    }
}

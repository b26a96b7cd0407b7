//! `cavity bench tet-simplify` (issue 54 item 8): one mesh reduced by
//! the length criterion at a fixed target length (a factor of the median
//! edge length, the paper's evaluation in section 4.3) to convergence, by
//! every variant in the same run: the parallel collapse on the GPU with
//! each conflict resolution, on the CPU backend, and the sequential
//! version; with the time (median of the runs after a warm-up, wall clock
//! of the whole call: upload, iterations, download), the iterations, the
//! tetrahedra left and the quality of each output. With a Python
//! interpreter ([`PeerSettings`]) the CPU peers a user would pick
//! (`xtask/peers/tet_peers.py`: MMG's remesher through mmgpy, VTK's
//! quadric decimation) run too, asked for the cell count the GPU's two
//! passes reached, with the same quality measures.

use std::path::PathBuf;
use std::time::Instant;

use cavity::backend::Backend;
use cavity::units::significant;
use cavity_bench::harness::{Table, fixed, percent, speedup};
use cavity_bench::{json_f64, median, peer_line, run_tet_peer_script};

use crate::kernels::criterion::{Length, Placement};
use crate::kernels::iteration::Builtin;
use crate::parallel::collapse_parallel;
use crate::quality::{Quality, quality};
use crate::sequential::collapse_sequential;
use crate::simplify::median_edge_length;
use crate::{CollapseError, Conflicts, Iteration, Settings, TetMesh};

/// A run's time and output.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// Seconds (ours: the median of the timed runs; a peer's: its one
    /// reported run).
    pub seconds: f64,
    /// Edges collapsed in each iteration, in order (ours; `None` for a
    /// peer): the iterations are its length.
    pub collapses: Option<Vec<usize>>,
    /// The output's quality, with the share of edges in `[4/5 L, 4/3 L]`.
    pub quality: Quality,
    /// How the run was made, in words (a peer's settings and runs; empty
    /// for ours).
    pub note: String,
}

/// One variant's or peer's row.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The variant, or the peer and its version.
    pub variant: String,
    /// Its run, or why there is none (a peer that failed, timed out or
    /// is not installed).
    pub run: Result<Run, String>,
}

/// How to run the CPU peers.
#[derive(Clone, Debug, PartialEq)]
pub struct PeerSettings {
    /// The Python interpreter with the peers (mmgpy, vtk) and numpy.
    pub python: PathBuf,
    /// The peer script, `xtask/peers/tet_peers.py`.
    pub script: PathBuf,
    /// Seconds each peer may take (the script's `--timeout`: its import,
    /// the input and every run included); the script's default (600 s)
    /// when `None`.
    pub timeout: Option<f64>,
    /// The peers to run, comma-separated (the script's `--peers`: `mmgpy`,
    /// `vtk`, `input`); the environment variable `CAVITY_PEERS`, else
    /// mmgpy and vtk, when `None`.
    pub peers: Option<String>,
}

/// The benchmark of one mesh.
#[derive(Clone, Debug)]
pub struct TetSimplifyBench {
    /// The mesh's name.
    pub mesh: String,
    /// Its tetrahedra.
    pub cells: usize,
    /// The target length used (model units).
    pub length: f64,
    /// The GPU's name (or the CPU backend's when there is no GPU).
    pub device: String,
    /// The tetrahedra the peers were asked for (the first row's output),
    /// when they ran.
    pub peer_target: Option<usize>,
    /// The rows: the parallel collapse (two passes, greedy, Gautron) on
    /// `device`, the two passes on the CPU backend, the sequential
    /// version, then the peers when they ran.
    pub rows: Vec<Row>,
}

/// What [`tet_simplify_bench`] runs.
#[derive(Clone, Debug, PartialEq)]
pub struct TetSimplifySettings {
    /// Timed runs of each parallel variant after a warm-up (the median
    /// is reported; at least one); the sequential version runs once.
    pub reps: usize,
    /// The target length over the median edge length.
    pub length_factor: f64,
    /// The CPU peers, when they are to run.
    pub peers: Option<PeerSettings>,
}

/// Runs the benchmark of `mesh` (named `name`) on `gpu` and `cpu` with
/// `settings.reps` timed runs each (one for the sequential version) at
/// the target length `settings.length_factor` times the median edge
/// length, then the peers when given ([`peer_rows`], at the cell count
/// of the first row); `progress` gets each variant's name as it starts.
///
/// # Errors
/// A failed launch or copy (a peer's failure is its row's).
pub fn tet_simplify_bench(
    name: &str,
    mesh: &TetMesh,
    gpu: &Backend,
    cpu: &Backend,
    settings: &TetSimplifySettings,
    mut progress: impl FnMut(&str),
) -> Result<TetSimplifyBench, CollapseError> {
    let length = settings.length_factor * median_edge_length(mesh);
    let criterion = Builtin {
        kind: 0,
        placement: 0,
        bound: length,
    };
    let mut rows = Vec::new();
    let mut two_passes = None;
    let variants = [
        ("two passes", gpu, Conflicts::TwoPass),
        ("greedy", gpu, Conflicts::Greedy),
        ("Gautron", gpu, Conflicts::Gautron),
        ("two passes, CPU backend", cpu, Conflicts::TwoPass),
    ];
    for (variant, backend, conflicts) in variants {
        progress(variant);
        let collapse = Settings {
            conflicts,
            ..Settings::default()
        };
        collapse_parallel(backend, mesh, &[], criterion, &collapse)?;
        let mut times = Vec::new();
        let mut last = None;
        for _ in 0..settings.reps.max(1) {
            let start = Instant::now();
            let (out, _, report) = collapse_parallel(backend, mesh, &[], criterion, &collapse)?;
            times.push(start.elapsed().as_secs_f64());
            last = Some((out, collapses_of(&report.iterations)));
        }
        let (out, collapses) = last.expect("one run at least");
        two_passes.get_or_insert(out.tets.len());
        rows.push(row(variant, median(times), collapses, &out, length));
    }
    progress("sequential");
    let start = Instant::now();
    let sequential = Length {
        length,
        placement: Placement::Midpoint,
    };
    let (out, _, iterations) = collapse_sequential(mesh, &[], &sequential, &Settings::default());
    rows.push(row(
        "sequential",
        start.elapsed().as_secs_f64(),
        collapses_of(&iterations),
        &out,
        length,
    ));
    let mut peer_target = None;
    if let Some(peers) = &settings.peers {
        progress("peers");
        let target = two_passes.expect("the two passes ran first");
        peer_target = Some(target);
        rows.extend(peer_rows(peers, mesh, target, length));
    }
    Ok(TetSimplifyBench {
        mesh: name.to_string(),
        cells: mesh.tets.len(),
        length,
        device: gpu.name(),
        peer_target,
        rows,
    })
}

/// The peers' rows: `xtask/peers/tet_peers.py` (`peers.script`) run on
/// `mesh` with `--target-cells target_cells --length length` (and
/// `--timeout`, `--peers`), one row per JSON line it printed; a row named "peers"
/// saying why when the script could not be started or printed none.
pub fn peer_rows(
    peers: &PeerSettings,
    mesh: &TetMesh,
    target_cells: usize,
    length: f64,
) -> Vec<Row> {
    let mut args = vec![
        "--target-cells".to_string(),
        target_cells.to_string(),
        "--length".into(),
        length.to_string(),
    ];
    if let Some(t) = peers.timeout {
        args.extend(["--timeout".into(), t.to_string()]);
    }
    if let Some(which) = &peers.peers {
        args.extend(["--peers".into(), which.clone()]);
    }
    let failed = |e: String| Row {
        variant: "peers".into(),
        run: Err(e),
    };
    match run_tet_peer_script(
        &peers.python,
        &peers.script,
        &mesh.positions,
        &mesh.tets,
        &args,
    ) {
        Ok(out) => out.runs(&peers.script, parse_peer, failed),
        Err(e) => vec![failed(e.to_string())],
    }
}

/// One JSON line of the peer script: a peer's row (its run, or its
/// `"error"`), or `None` for a line that is not a peer's object or lacks
/// a measure.
fn parse_peer(line: &str) -> Option<Row> {
    let (variant, v) = peer_line(line)?;
    let f = |k: &str| json_f64(&v[k]);
    let u = |k: &str| v[k].as_u64().map(|x| x as usize);
    let run = match v["error"].as_str() {
        Some(e) => Err(e.to_string()),
        None => Ok(Run {
            seconds: f("seconds")?,
            collapses: None,
            quality: Quality {
                cells: u("cells")?,
                vertices: u("vertices")?,
                min_dihedral: f("min_dihedral")?,
                max_dihedral: f("max_dihedral")?,
                mean_harmonic: f("mean_harmonic")?,
                max_harmonic: f("max_harmonic")?,
                mean_amips: f("mean_amips")?,
                max_amips: f("max_amips")?,
                inverted: u("inverted")?,
                edge_band: f("edge_band"),
            },
            note: v["note"].as_str().unwrap_or_default().to_string(),
        }),
    };
    Some(Row { variant, run })
}

/// The edges collapsed in each of `iterations`.
fn collapses_of(iterations: &[Iteration]) -> Vec<usize> {
    iterations.iter().map(|i| i.collapses).collect()
}

/// The row of a variant's output, its edge band against `length`.
fn row(variant: &str, seconds: f64, collapses: Vec<usize>, out: &TetMesh, length: f64) -> Row {
    Row {
        variant: variant.to_string(),
        run: Ok(Run {
            seconds,
            collapses: Some(collapses),
            quality: quality(out, Some(length)),
            note: String::new(),
        }),
    }
}

impl TetSimplifyBench {
    /// The Markdown table: each variant's and peer's time, iterations,
    /// tetrahedra and vertices left, quality (inverted tetrahedra,
    /// smallest and largest dihedral angle, mean and largest harmonic
    /// index and AMIPS energy, four significant digits; edges in
    /// `[4/5 L, 4/3 L]`), how many times
    /// faster the first row (the two passes on `device`) ran, and a note
    /// (a peer's settings, or why it has no run); below it, the edges
    /// each of our variants collapsed in each iteration.
    pub fn table(&self) -> String {
        let above = format!(
            "{}: {} tetrahedra, length criterion at L = {:.6} (to convergence); device {}",
            self.mesh, self.cells, self.length, self.device
        );
        let peers = self.peer_target.map(|n| {
            format!(
                "peers (xtask/peers/tet_peers.py) asked for {n} tetrahedra, the two passes' output"
            )
        });
        let mut above = vec![above.as_str()];
        above.extend(peers.as_deref());
        let mut t = Table::new(
            &above,
            &[
                "variant",
                "seconds",
                "iterations",
                "tetrahedra left",
                "vertices",
                "inverted",
                "min dihedral (deg)",
                "max dihedral (deg)",
                "mean harmonic",
                "max harmonic",
                "mean AMIPS",
                "max AMIPS",
                "edges in [4/5 L, 4/3 L]",
                "two passes faster by",
                "note",
            ],
        );
        let first = self.rows.first().and_then(|r| r.run.as_ref().ok());
        let first = first.map(|r| r.seconds);
        for r in &self.rows {
            match &r.run {
                Ok(run) => {
                    let q = &run.quality;
                    t.row(vec![
                        r.variant.clone(),
                        fixed(Some(run.seconds), 4),
                        run.collapses
                            .as_ref()
                            .map_or("-".into(), |c| c.len().to_string()),
                        q.cells.to_string(),
                        q.vertices.to_string(),
                        q.inverted.to_string(),
                        significant(q.min_dihedral, 4),
                        significant(q.max_dihedral, 4),
                        significant(q.mean_harmonic, 4),
                        significant(q.max_harmonic, 4),
                        significant(q.mean_amips, 4),
                        significant(q.max_amips, 4),
                        percent(q.edge_band),
                        speedup(Some(run.seconds), first),
                        run.note.clone(),
                    ]);
                }
                Err(e) => {
                    let mut cells = vec!["-".to_string(); 14];
                    cells[0] = r.variant.clone();
                    t.row_with_note(cells, e.clone());
                }
            }
        }
        let mut out = t.render();
        out.push_str("\nEdges collapsed per iteration:\n");
        for r in &self.rows {
            if let Ok(Run {
                collapses: Some(c), ..
            }) = &r.run
            {
                let c: Vec<String> = c.iter().map(usize::to_string).collect();
                out.push_str(&format!("- {}: {}\n", r.variant, c.join(", ")));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peers_json_line_reads_as_its_row_and_an_error_line_as_its_reason() {
        let line = r#"{"peer": "vtk", "version": "9.7.2", "seconds": 0.25, "threads": 1, "note": "zero point scalars", "cells": 120, "vertices": 40, "inverted": 2, "min_dihedral": 0.5, "max_dihedral": 179.5, "mean_harmonic": "inf", "max_harmonic": "inf", "mean_amips": "nan", "max_amips": 12.5, "edge_band": 0.25}"#;
        let row = parse_peer(line).expect("a peer's line");
        assert_eq!(row.variant, "vtk 9.7.2");
        let run = row.run.expect("a run");
        assert_eq!((run.seconds, run.collapses), (0.25, None));
        assert_eq!(run.note, "zero point scalars");
        let q = run.quality;
        assert_eq!((q.cells, q.vertices, q.inverted), (120, 40, 2));
        assert_eq!((q.min_dihedral, q.max_dihedral), (0.5, 179.5));
        assert_eq!(
            (q.mean_harmonic, q.max_harmonic),
            (f64::INFINITY, f64::INFINITY)
        );
        assert!(q.mean_amips.is_nan());
        assert_eq!((q.max_amips, q.edge_band), (12.5, Some(0.25)));

        let error = parse_peer(
            r#"{"peer": "mmgpy", "error": "ModuleNotFoundError: No module named 'mmgpy'"}"#,
        );
        assert_eq!(
            error,
            Some(Row {
                variant: "mmgpy".into(),
                run: Err("ModuleNotFoundError: No module named 'mmgpy'".into()),
            })
        );
        // Not a peer's object, or one without a measure: no row.
        assert_eq!(parse_peer("Traceback (most recent call last):"), None);
        assert_eq!(parse_peer(r#"{"peer": "vtk", "seconds": 1.0}"#), None);
    }

    #[test]
    fn the_table_has_a_row_per_run_and_a_peers_error_in_its_note() {
        let q = Quality {
            cells: 10,
            vertices: 8,
            min_dihedral: 10.0,
            max_dihedral: 150.0,
            mean_harmonic: 1.5,
            max_harmonic: 3.0,
            mean_amips: 4.0,
            max_amips: 9.0,
            inverted: 0,
            edge_band: Some(0.5),
        };
        let bench = TetSimplifyBench {
            mesh: "m".into(),
            cells: 20,
            length: 1.0,
            device: "d".into(),
            peer_target: Some(10),
            rows: vec![
                Row {
                    variant: "two passes".into(),
                    run: Ok(Run {
                        seconds: 0.5,
                        collapses: Some(vec![6, 3, 1]),
                        quality: q,
                        note: String::new(),
                    }),
                },
                Row {
                    variant: "mmgpy".into(),
                    run: Err("exceeded the timeout of 1 s".into()),
                },
            ],
        };
        let table = bench.table();
        assert!(table.contains("asked for 10 tetrahedra"), "{table}");
        assert!(
            table.contains(
                "| two passes | 0.5000 | 3 | 10 | 8 | 0 | 10.00 | 150.0 | 1.500 | 3.000 | 4.000 | 9.000 | 50.0 % | 1.0x |  |"
            ),
            "{table}"
        );
        assert!(
            table.contains(
                "| mmgpy | - | - | - | - | - | - | - | - | - | - | - | - | - | exceeded the timeout of 1 s |"
            ),
            "{table}"
        );
        assert!(
            table.ends_with("Edges collapsed per iteration:\n- two passes: 6, 3, 1\n"),
            "{table}"
        );
    }
}

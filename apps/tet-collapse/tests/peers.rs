//! The CPU peers of `cavity bench tet-simplify` (issue 54 item 8):
//! `xtask/peers/tet_peers.py` run for real on TetGen's bunny
//! (`apps/volume/tests/data`, 15 807 tetrahedra) through
//! [`peer_rows`], with the Python interpreter `CAVITY_TEST_PYTHON`
//! (`python3` when unset). A test whose Python modules are missing (numpy
//! for the measures, mmgpy and vtk for the peers) passes after printing
//! why it did not run, so that a machine without them (CI) is not failed;
//! one needs no Python at all.

use std::path::{Path, PathBuf};
use std::process::Command;

use cavity_tet_collapse::TetMesh;
use cavity_tet_collapse::bench::{PeerSettings, Row, Run, peer_rows};
use cavity_tet_collapse::quality::quality;
use cavity_tet_collapse::simplify::median_edge_length;

/// The interpreter the tests run the script with.
fn python() -> PathBuf {
    std::env::var_os("CAVITY_TEST_PYTHON").map_or_else(|| "python3".into(), PathBuf::from)
}

/// Whether `python()` imports every one of `modules`; prints why not
/// (the test named `test` is then skipped).
fn imports(test: &str, modules: &[&str]) -> bool {
    let python = python();
    let out = Command::new(&python)
        .arg("-c")
        .arg(format!("import {}", modules.join(", ")))
        .output();
    let why = match out {
        Ok(o) if o.status.success() => return true,
        Ok(o) => String::from_utf8_lossy(&o.stderr)
            .lines()
            .last()
            .unwrap_or("")
            .to_string(),
        Err(e) => e.to_string(),
    };
    eprintln!(
        "{test}: skipped: {} cannot import {} ({why}; set CAVITY_TEST_PYTHON to one that can)",
        python.display(),
        modules.join(", ")
    );
    false
}

/// The bunny and the peer script's settings at `timeout`.
fn bunny(timeout: Option<f64>) -> (TetMesh, PeerSettings) {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = cavity_volume::io::read_volume(&here.join("../volume/tests/data/bunny-tetgen.ele"))
        .expect("the bunny");
    let mesh = TetMesh::from_cells(read).expect("tetrahedra");
    let peers = PeerSettings {
        python: python(),
        script: here.join("../../xtask/peers/tet_peers.py"),
        timeout,
        peers: None,
    };
    (mesh, peers)
}

/// The rows of the peers `which` (comma-separated) on `mesh`.
fn rows_of(peers: &PeerSettings, which: &str, mesh: &TetMesh, target: usize, l: f64) -> Vec<Row> {
    let settings = PeerSettings {
        peers: Some(which.into()),
        ..peers.clone()
    };
    peer_rows(&settings, mesh, target, l)
}

/// The run of `row`, or a panic naming its error.
fn run_of(row: &Row) -> &Run {
    row.run
        .as_ref()
        .unwrap_or_else(|e| panic!("{}: {e}", row.variant))
}

#[test]
fn the_scripts_measures_of_the_input_are_cavitys() {
    if !imports("the_scripts_measures_of_the_input_are_cavitys", &["numpy"]) {
        return;
    }
    let (mesh, peers) = bunny(None);
    let l = 1.25 * median_edge_length(&mesh);
    let rows = rows_of(&peers, "input", &mesh, mesh.tets.len(), l);
    assert_eq!(rows.len(), 1, "{rows:?}");
    let theirs = run_of(&rows[0]).quality;
    let ours = quality(&mesh, Some(l));
    assert_eq!(
        theirs.differs_from(&ours, 1e-9),
        None,
        "the script's against ours"
    );
}

#[test]
fn mmg_and_vtk_coarsen_the_bunny_near_the_target_without_inverting() {
    let test = "mmg_and_vtk_coarsen_the_bunny_near_the_target_without_inverting";
    let (mesh, peers) = bunny(Some(300.0));
    let l = 1.25 * median_edge_length(&mesh);
    let target = mesh.tets.len() * 3 / 4;
    // MMG is driven by a size: its closest of three runs lands within a
    // few percent of the target (1.3 % when written); its first alone
    // (CAVITY_MMG_RUNS=1, as the largest benchmarks set it) lands far
    // off, 1.87 times the target here; VTK's decimation counts.
    let mmg = match std::env::var("CAVITY_MMG_RUNS").as_deref() {
        Ok("1") => 1.0,
        _ => 0.1,
    };
    for (peer, module, tolerance) in [
        ("mmgpy", "mmgpy", mmg),
        ("vtk", "vtkmodules.vtkFiltersCore", 0.01),
    ] {
        if !imports(test, &["numpy", module]) {
            continue;
        }
        let rows = rows_of(&peers, peer, &mesh, target, l);
        assert_eq!(rows.len(), 1, "{rows:?}");
        let run = run_of(&rows[0]);
        assert!(rows[0].variant.starts_with(peer), "{rows:?}");
        let q = run.quality;
        eprintln!("{}: {} s, {q:?}", rows[0].variant, run.seconds);
        let off = (q.cells as f64 - target as f64).abs() / target as f64;
        assert!(
            off <= tolerance,
            "{peer}: {} tetrahedra for {target}",
            q.cells
        );
        assert_eq!(q.inverted, 0, "{peer}");
        assert!(run.seconds > 0.0 && q.vertices > 0, "{peer}: {run:?}");
    }
}

#[test]
fn a_peer_past_its_timeout_gets_a_row_saying_so() {
    if !imports("a_peer_past_its_timeout_gets_a_row_saying_so", &["numpy"]) {
        return;
    }
    // A fresh interpreter takes longer than a millisecond to start.
    let (mesh, peers) = bunny(Some(0.001));
    let rows = rows_of(&peers, "input", &mesh, 100, 1.0);
    assert_eq!(
        rows,
        vec![Row {
            variant: "input".into(),
            run: Err("exceeded the timeout of 0.001 s".into()),
        }]
    );
}

#[test]
fn a_missing_interpreter_gets_a_row_saying_so() {
    let (mesh, mut peers) = bunny(None);
    peers.python = "/nonexistent/python3".into();
    let rows = peer_rows(&peers, &mesh, 100, 1.0);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].variant, "peers");
    let e = rows[0].run.as_ref().unwrap_err();
    assert!(e.contains("/nonexistent/python3"), "{e}");
}

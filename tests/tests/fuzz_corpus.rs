//! The fuzz corpus replayed as an ordinary test (no libFuzzer, any
//! toolchain): every input of `fuzz/corpus/<target>.tar.gz` (the corpus,
//! one archive per target, read here directly; `fuzz/corpus.sh` unpacks it
//! for libFuzzer and packs it back) and every file of
//! `fuzz/regressions/<target>/` goes through the same reader entry point
//! as its fuzz target (`fuzz/src/targets.rs`, included here), which must
//! return a mesh or an error, without a panic and within a time bound;
//! and header counts far beyond a file's length are refused with the
//! file, the line and the count, before anything is allocated for them
//! (issue 52 items 4 and 5; docs/fuzzing.md).

use std::io::Read;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[path = "../../fuzz/src/targets.rs"]
mod targets;

use targets::{SEPARATOR, Target, read};

/// The most one input may take to read (the fuzz runs allow 5 s; the
/// corpus inputs are a few kilobytes and read in microseconds).
const BOUND: Duration = Duration::from_secs(2);

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// The inputs of `fuzz/corpus/<target>.tar.gz`, each named by its path in
/// the archive (`<target>/<hash>`), in the archive's (sorted) order; the
/// archive holds the directory `<target>/` and regular files in it only.
fn corpus(target: Target) -> Vec<(String, Vec<u8>)> {
    let path = fuzz_dir()
        .join("corpus")
        .join(format!("{}.tar.gz", target.name()));
    let file = std::fs::File::open(&path)
        .unwrap_or_else(|e| panic!("{}: {e}: the corpus is missing", path.display()));
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let mut inputs = Vec::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let name = entry.path().unwrap().display().to_string();
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            continue;
        }
        assert!(kind.is_file(), "{}: {name} is not a file", path.display());
        assert!(
            name.starts_with(&format!("{}/", target.name())),
            "{}: {name} is outside {}/",
            path.display(),
            target.name()
        );
        let mut data = Vec::new();
        entry.read_to_end(&mut data).unwrap();
        inputs.push((name, data));
    }
    inputs
}

/// The files of `fuzz/regressions/<target>/`, sorted (none if it is
/// missing), each with its path.
fn regressions(target: Target) -> Vec<(String, Vec<u8>)> {
    let dir = fuzz_dir().join("regressions").join(target.name());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.is_file());
    files.sort();
    files
        .into_iter()
        .map(|f| (f.display().to_string(), std::fs::read(&f).unwrap()))
        .collect()
}

#[test]
fn every_corpus_and_regression_input_is_read_or_refused_in_time() {
    let mut failures = Vec::new();
    let mut replayed = 0;
    for target in Target::ALL {
        let corpus = corpus(target);
        assert!(
            corpus.len() >= 2,
            "fuzz/corpus/{}.tar.gz has {} inputs: the corpus is missing",
            target.name(),
            corpus.len()
        );
        let regressions = regressions(target);
        eprintln!(
            "{}: {} corpus inputs, {} regressions",
            target.name(),
            corpus.len(),
            regressions.len()
        );
        for (name, data) in corpus.iter().chain(&regressions) {
            let start = Instant::now();
            let outcome = catch_unwind(AssertUnwindSafe(|| read(target, data)));
            let took = start.elapsed();
            replayed += 1;
            if outcome.is_err() {
                failures.push(format!("{name}: panicked"));
            } else if took > BOUND {
                failures.push(format!("{name}: took {took:?}"));
            }
        }
    }
    eprintln!("{replayed} inputs replayed");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(replayed >= 2 * Target::ALL.len());
}

/// Every target reads at least one of its corpus inputs (the seeds are
/// valid files), so that the replay exercises the readers past their
/// headers.
#[test]
fn every_target_reads_a_mesh_of_its_corpus() {
    for target in Target::ALL {
        let read_one = corpus(target)
            .iter()
            .any(|(_, data)| read(target, data).is_ok());
        assert!(
            read_one,
            "no input of fuzz/corpus/{}.tar.gz reads",
            target.name()
        );
    }
}

/// `read`'s error for `data`, which must refuse it.
fn refused(target: Target, data: &[u8]) -> String {
    match read(target, data) {
        Ok(()) => panic!("{target:?} read {:?}", String::from_utf8_lossy(data)),
        Err(e) => e,
    }
}

/// A header count of 999999999999 (and `usize::MAX`) is an error naming
/// the file, the line and the count, in every text format with counts; the
/// test runs under the default allocator, where reserving that many
/// records would abort the process.
#[test]
fn huge_header_counts_are_refused_with_the_file_line_and_count() {
    let huge = "999999999999";
    let tetgen = |node: &str, ele: &str| [node.as_bytes(), SEPARATOR, ele.as_bytes()].concat();
    let cases: Vec<(Target, Vec<u8>, &str)> = vec![
        (
            Target::Medit,
            format!("MeshVersionFormatted 1\nDimension 3\nVertices\n{huge}\n0 0 0 0\n").into(),
            "input.mesh:4:",
        ),
        (
            Target::Medit,
            format!(
                "MeshVersionFormatted 1\nDimension 3\nVertices\n1\n0 0 0 0\nTetrahedra {huge}\n"
            )
            .into(),
            "input.mesh:6:",
        ),
        (
            Target::Medit,
            format!("Dimension 3\nTriangles\n{}\n", usize::MAX).into(),
            "input.mesh:3:",
        ),
        (
            Target::TetGen,
            tetgen(&format!("{huge} 3 0 0\n0 0 0 0\n"), "0 4 0\n"),
            "input.node:1:",
        ),
        (
            Target::TetGen,
            tetgen(
                "# a comment\n4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n",
                &format!("\n{huge} 4 0\n0 0 1 2 3\n"),
            ),
            "input.ele:2:",
        ),
        (
            Target::Gmsh22,
            format!("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n{huge}\n1 0 0 0\n").into(),
            "input.msh:5:",
        ),
        (
            Target::Triangle,
            tetgen(&format!("{huge} 2 0 0\n0 0 0\n"), "0 3 0\n"),
            "input.node:1:",
        ),
        (
            Target::Triangle,
            tetgen("3 2 0 0\n0 0 0\n1 1 0\n2 0 1\n", &format!("{huge} 3 0\n")),
            "input.ele:1:",
        ),
        (
            Target::Off2d,
            format!("OFF\n3 {huge} 0\n0 0 0\n1 0 0\n0 1 0\n").into(),
            "input.off:2:",
        ),
    ];
    for (target, data, place) in cases {
        let e = refused(target, &data);
        assert!(e.starts_with(place), "{target:?}: {e}");
        assert!(
            e.contains(huge) || e.contains(&usize::MAX.to_string()),
            "{target:?}: {e}"
        );
        assert!(e.contains("announced"), "{target:?}: {e}");
    }
}

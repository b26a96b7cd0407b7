//! Running a CPU peer's script (`xtask/peers/*.py`) on a mesh (a triangle
//! mesh as an OBJ file, a tetrahedral one as raw binary files): the
//! applications' benchmarks compare against the libraries a user would
//! pick, run by Python scripts that print one JSON object per peer.

use std::ffi::OsString;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::Command;

use cavity::TriMesh;
use cavity::io::{Format, write_mesh};

/// What a peer script printed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PeerOutput {
    /// Its standard output, line by line (one JSON object per peer).
    pub lines: Vec<String>,
    /// Its standard error.
    pub stderr: String,
}

impl PeerOutput {
    /// The runs the script printed: each line `parse` reads as one; when
    /// none is, the one run `failed` makes of a message naming the script
    /// and what it said on standard error.
    pub fn runs<T>(
        &self,
        script: &Path,
        parse: impl Fn(&str) -> Option<T>,
        failed: impl FnOnce(String) -> T,
    ) -> Vec<T> {
        let runs: Vec<T> = self.lines.iter().filter_map(|l| parse(l)).collect();
        if runs.is_empty() {
            return vec![failed(format!(
                "{} printed no result: {}",
                script.display(),
                self.stderr.trim()
            ))];
        }
        runs
    }
}

/// One line a peer script printed, read as a peer's JSON object: its label
/// (`"peer"`, then `"version"` when given) and the object; `None` for a
/// line that is not one.
pub fn peer_line(line: &str) -> Option<(String, serde_json::Value)> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    let name = v["peer"].as_str()?;
    let peer = match v["version"].as_str() {
        Some(version) => format!("{name} {version}"),
        None => name.to_string(),
    };
    Some((peer, v))
}

/// Writes `mesh` to a temporary OBJ file and runs `python script --mesh
/// PATH args...`, returning what it printed.
///
/// # Errors
/// The temporary file cannot be written, or the interpreter cannot be
/// started (the message names both).
pub fn run_peer_script(
    python: &Path,
    script: &Path,
    mesh: &TriMesh,
    args: &[String],
) -> Result<PeerOutput, Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("input.obj");
    write_mesh(&path, mesh, None, Format::Obj)?;
    let mut all: Vec<OsString> = vec!["--mesh".into(), path.into()];
    all.extend(args.iter().map(OsString::from));
    run_script(python, script, &all)
}

/// Writes a tetrahedral mesh to two raw binary files in a temporary
/// directory and runs `python script --positions POSITIONS --tets TETS
/// args...`, returning what it printed. The files, without header (the
/// counts are their sizes over 24 and 16 bytes):
///
/// - `POSITIONS`: `positions.len() × 3` little-endian `f64`, the `x, y, z`
///   of each vertex in turn (model units; widened from `f32`);
/// - `TETS`: `tets.len() × 4` little-endian `u32`, each tetrahedron's four
///   vertex indices in turn (0-based, as given: positively oriented in
///   `cavity-tet-collapse`'s meshes).
///
/// `xtask/peers/tet_peers.py` reads them with `numpy.fromfile`; at 5 M
/// tetrahedra they take about 100 MB.
///
/// # Errors
/// The temporary files cannot be written, or the interpreter cannot be
/// started (the message names both).
pub fn run_tet_peer_script(
    python: &Path,
    script: &Path,
    positions: &[[f32; 3]],
    tets: &[[u32; 4]],
    args: &[String],
) -> Result<PeerOutput, Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let positions_path = dir.path().join("positions.f64");
    let tets_path = dir.path().join("tets.u32");
    write_raw(&positions_path, positions.iter().flatten(), |&x| {
        f64::from(x).to_le_bytes()
    })?;
    write_raw(&tets_path, tets.iter().flatten(), |&v| v.to_le_bytes())?;
    let mut all: Vec<OsString> = vec![
        "--positions".into(),
        positions_path.into(),
        "--tets".into(),
        tets_path.into(),
    ];
    all.extend(args.iter().map(OsString::from));
    run_script(python, script, &all)
}

/// Writes each of `items` as the bytes `bytes` gives it, in turn, to a new
/// file at `path`.
fn write_raw<'a, T: 'a, const N: usize>(
    path: &Path,
    items: impl Iterator<Item = &'a T>,
    bytes: impl Fn(&T) -> [u8; N],
) -> std::io::Result<()> {
    let mut out = BufWriter::new(File::create(path)?);
    for x in items {
        out.write_all(&bytes(x))?;
    }
    out.flush()
}

/// Runs `python script args...` and collects what it printed, whatever
/// its exit status (a peer script reports failures as JSON lines).
///
/// # Errors
/// The interpreter cannot be started (the message names it and the
/// script).
pub fn run_script(
    python: &Path,
    script: &Path,
    args: &[OsString],
) -> Result<PeerOutput, Box<dyn std::error::Error>> {
    let out = Command::new(python)
        .arg(script)
        .args(args)
        .output()
        .map_err(|e| format!("running {} {}: {e}", python.display(), script.display()))?;
    Ok(PeerOutput {
        lines: String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// A number of a peer's JSON object: a JSON number, or a string that
/// parses as one (peer scripts write values that are not finite as
/// `"inf"`, `"-inf"` or `"nan"`, which JSON has no numbers for); `None`
/// otherwise.
pub fn json_f64(v: &serde_json::Value) -> Option<f64> {
    v.as_f64().or_else(|| v.as_str()?.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_number_or_a_string_of_one_reads_as_a_number() {
        let v: serde_json::Value =
            serde_json::from_str(r#"{"a": 1.5, "b": "inf", "c": "nan", "d": "x", "e": null}"#)
                .unwrap();
        assert_eq!(json_f64(&v["a"]), Some(1.5));
        assert_eq!(json_f64(&v["b"]), Some(f64::INFINITY));
        assert!(json_f64(&v["c"]).is_some_and(f64::is_nan));
        assert_eq!(json_f64(&v["d"]), None);
        assert_eq!(json_f64(&v["e"]), None);
        assert_eq!(json_f64(&v["missing"]), None);
    }

    #[test]
    fn raw_files_hold_each_value_little_endian_in_turn() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("positions.f64");
        let positions = [[1.0f32, -2.0, 0.5], [3.0, 4.0, 5.0]];
        write_raw(&path, positions.iter().flatten(), |&x| {
            f64::from(x).to_le_bytes()
        })
        .unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len(), 2 * 3 * 8);
        let read: Vec<f64> = bytes
            .as_chunks::<8>()
            .0
            .iter()
            .map(|&c| f64::from_le_bytes(c))
            .collect();
        assert_eq!(read, [1.0, -2.0, 0.5, 3.0, 4.0, 5.0]);
    }
}

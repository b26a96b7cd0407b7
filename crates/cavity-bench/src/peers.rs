//! Running a CPU peer's script (`xtask/peers/*.py`) on a mesh: the
//! applications' benchmarks compare against the libraries a user would
//! pick, run by Python scripts that print one JSON object per peer.

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
    let out = Command::new(python)
        .arg(script)
        .arg("--mesh")
        .arg(&path)
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

//! The temporary files that writes go to before they are renamed into
//! place ([`Temporary`]), kept in a process-wide registry so that a
//! signal handler can remove them before the process exits
//! ([`remove_temporary_files`]): an interrupted write leaves neither a
//! hidden `.tmp*` file nor a partial output behind.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The temporary files alive now: created by [`Temporary::new_in`], not
/// yet renamed into place or removed.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Environment variable naming milliseconds to wait after a temporary file
/// is written in full and before it is renamed into place: lets a test
/// interrupt a write at a known moment (unset in normal use: no wait).
pub const PAUSE_BEFORE_RENAME: &str = "CAVITY_TEST_PAUSE_BEFORE_RENAME_MS";

fn live() -> MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A temporary file beside a destination, registered while it lives:
/// dropping it removes the file, [`Temporary::persist`] renames it over
/// the destination.
pub(super) struct Temporary(Option<tempfile::NamedTempFile>);

impl Temporary {
    /// A temporary file in `dir` made by `builder`, registered.
    ///
    /// # Errors
    /// The operating system's, without the temporary file's name (which
    /// means nothing to a user).
    pub(super) fn new_in(builder: &tempfile::Builder<'_, '_>, dir: &Path) -> io::Result<Temporary> {
        let mut live = live();
        let file = builder.tempfile_in(dir).map_err(without_temporary_path)?;
        live.push(file.path().to_path_buf());
        Ok(Temporary(Some(file)))
    }

    /// The open file.
    pub(super) fn as_file(&self) -> &std::fs::File {
        self.file().as_file()
    }

    fn file(&self) -> &tempfile::NamedTempFile {
        self.0.as_ref().expect("a temporary file until persisted")
    }

    /// Renames the file over `path` (after the pause of
    /// [`PAUSE_BEFORE_RENAME`], if set). The registry is held meanwhile, so
    /// that a signal's clean-up sees either the temporary file or the
    /// complete output, never a rename half done.
    ///
    /// # Errors
    /// The rename's, without the temporary file's name.
    pub(super) fn persist(mut self, path: &Path) -> io::Result<()> {
        if let Some(ms) = std::env::var(PAUSE_BEFORE_RENAME)
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
        {
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
        let mut live = live();
        let file = self.0.take().expect("a temporary file until persisted");
        let temporary = file.path().to_path_buf();
        let persisted = file.persist(path);
        // A failed rename drops (removes) the temporary file with its error.
        live.retain(|p| *p != temporary);
        persisted
            .map(drop)
            .map_err(|e| without_temporary_path(e.error))
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        if let Some(file) = self.0.take() {
            let mut live = live();
            let temporary = file.path().to_path_buf();
            drop(file);
            live.retain(|p| *p != temporary);
        }
    }
}

/// Held while the process ends after [`remove_temporary_files`]: no
/// temporary file is created or renamed into place meanwhile.
pub struct TemporaryFilesRemoved {
    _held: MutexGuard<'static, Vec<PathBuf>>,
}

/// Removes every temporary file that a write of this process has open
/// (from a signal handler's thread, before the process exits: SIGINT,
/// SIGTERM, SIGHUP), and keeps any other write from creating or renaming
/// one until the returned guard is dropped; hold it until the process
/// exits. A rename already under way completes first, so the destination
/// is either as it was or the complete output.
pub fn remove_temporary_files() -> TemporaryFilesRemoved {
    let mut live = live();
    for path in live.drain(..) {
        // Gone already (a write that failed and removed its own) is fine.
        let _ = std::fs::remove_file(path);
    }
    TemporaryFilesRemoved { _held: live }
}

/// `e` without the path that `tempfile` adds to its errors (`... at path
/// "/dir/.tmpXYZ"`): a user's error names the destination, never the
/// temporary file.
fn without_temporary_path(e: io::Error) -> io::Error {
    let text = e.to_string();
    match text.rsplit_once(" at path ") {
        Some((message, _)) => io::Error::new(e.kind(), message.to_string()),
        None => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_removed_temporary_file_leaves_the_registry_and_the_directory() {
        let dir = tempfile::tempdir().expect("directory");
        let file = Temporary::new_in(&tempfile::Builder::new(), dir.path()).expect("temporary");
        let path = file.file().path().to_path_buf();
        assert!(live().contains(&path));
        drop(file);
        assert!(!live().contains(&path));
        assert_eq!(std::fs::read_dir(dir.path()).expect("list").count(), 0);
    }

    #[test]
    fn errors_do_not_name_the_temporary_file() {
        let dir = tempfile::tempdir().expect("directory");
        let missing = dir.path().join("missing");
        let e = match Temporary::new_in(&tempfile::Builder::new(), &missing) {
            Err(e) => e,
            Ok(_) => panic!("a temporary file in a missing directory"),
        };
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(!e.to_string().contains(".tmp"), "{e}");
    }
}

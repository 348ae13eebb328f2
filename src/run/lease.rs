//! One process at a time per run: executing (a new run or a resume) holds an exclusive lock
//! on a lease file beside the database, `.<database file>.run-<id>.lease`. The operating
//! system drops the lock when the process ends, however it ends, so a run whose process was
//! killed can be resumed at once, while a second resume of a run that is still being executed
//! is refused before it touches the run (it used to fail on the primary key and leave the
//! status `running`).

use super::RunError;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

pub struct RunLease {
    path: PathBuf,
    _file: File,
}

/// The lease file of `run_id` beside `database`.
fn lease_path(database: &Path, run_id: &str) -> PathBuf {
    let name = database.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    database.with_file_name(format!(".{name}.run-{run_id}.lease"))
}

/// Whether a process (this one included) is executing `run_id` now: its lease file exists and
/// is locked. A face asks this before offering Resume. The check takes a shared lock for an
/// instant; a resume started in that instant is refused as busy, as two resumes at once are.
pub fn is_held(database: &Path, run_id: &str) -> Result<bool, RunError> {
    let path = lease_path(database, run_id);
    let io = |e: std::io::Error| RunError::Lease { run: run_id.to_string(), message: format!("{}: {e}", path.display()) };
    // No file: nobody holds it (a lease removes its file when it ends). Never created here.
    let file = match File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(io(e)),
    };
    match file.try_lock_shared() {
        Ok(()) => Ok(false),
        Err(std::fs::TryLockError::WouldBlock) => Ok(true),
        Err(std::fs::TryLockError::Error(e)) => Err(io(e)),
    }
}

impl RunLease {
    pub fn take(database: &Path, run_id: &str) -> Result<Self, RunError> {
        let path = lease_path(database, run_id);
        let io = |e: std::io::Error| RunError::Lease { run: run_id.to_string(), message: format!("{}: {e}", path.display()) };
        // A lease file removed and created again between our open and our lock would let two
        // processes hold locks on different files: lock, then check it is still the file there.
        loop {
            let file = OpenOptions::new().create(true).truncate(false).write(true).open(&path).map_err(io)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(RunError::Busy { run: run_id.to_string() });
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
            }
            if same_file(&file, &path) {
                return Ok(Self { path, _file: file });
            }
        }
    }
}

#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_file: &File, path: &Path) -> bool {
    path.exists()
}

impl Drop for RunLease {
    fn drop(&mut self) {
        // Removed while still locked; a process waiting on the old file sees it gone and retries.
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_held_exactly_while_its_lease_is_taken() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let database = dir.path().join("assay.sqlite");
        assert!(!is_held(&database, "r1").expect("no lease file yet"));
        let lease = RunLease::take(&database, "r1").expect("the first lease");
        assert!(is_held(&database, "r1").expect("lease file readable"));
        assert!(!is_held(&database, "r2").expect("another run"), "only the leased run is held");
        drop(lease);
        assert!(!is_held(&database, "r1").expect("released"));
        // A lease file left behind without a lock (a crash between create and lock) holds nothing.
        std::fs::write(lease_path(&database, "r3"), b"").expect("a stale lease file");
        assert!(!is_held(&database, "r3").expect("stale file readable"));
    }
}

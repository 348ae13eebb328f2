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

impl RunLease {
    pub fn take(database: &Path, run_id: &str) -> Result<Self, RunError> {
        let name = database.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let path = database.with_file_name(format!(".{name}.run-{run_id}.lease"));
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

//! Finished items a run could not commit because the database stayed locked: kept as JSON
//! lines in a file beside the database, `.<database file>.run-<id>.kept.jsonl`, and stored
//! first when the run is resumed, so an answer already generated and judged is neither lost
//! nor computed again. Writing and taking the file both happen under the run's lease, so one
//! process at a time touches it.

use super::RunError;
use crate::record::ItemRecord;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The kept-items file of `run_id` beside `database`.
pub(super) fn kept_path(database: &Path, run_id: &str) -> PathBuf {
    let name = database.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    database.with_file_name(format!(".{name}.run-{run_id}.kept.jsonl"))
}

/// Append `items` to the run's kept-items file and flush it to disk; its path.
pub(super) fn keep(database: &Path, run_id: &str, items: &[ItemRecord]) -> std::io::Result<PathBuf> {
    let path = kept_path(database, run_id);
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    // The answers are as private as the database that should have held them.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&path)?;
    let mut lines = Vec::new();
    for item in items {
        serde_json::to_writer(&mut lines, item).map_err(std::io::Error::other)?;
        lines.push(b'\n');
    }
    file.write_all(&lines)?;
    file.sync_all()?;
    Ok(path)
}

/// The items kept for `run_id` (none when there is no file). The file stays until
/// `forget` removes it, once they are stored.
pub(super) fn kept(database: &Path, run_id: &str) -> Result<(PathBuf, Vec<ItemRecord>), RunError> {
    let path = kept_path(database, run_id);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((path, Vec::new())),
        Err(e) => return Err(RunError::KeptItems { location: path.display().to_string(), message: e.to_string() }),
    };
    let mut items = Vec::new();
    for (index, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        // A line cut short by a crash while it was written is the only damage expected here;
        // it is reported, never guessed at, and the file is left for a person to look at.
        let item: ItemRecord = serde_json::from_str(line).map_err(|e| RunError::KeptItems {
            location: format!("{}:{}", path.display(), index + 1),
            message: format!("not a kept item: {e}"),
        })?;
        items.push(item);
    }
    Ok((path, items))
}

/// Remove the kept-items file once its items are stored.
pub(super) fn forget(path: &Path) -> Result<(), RunError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(RunError::KeptItems { location: path.display().to_string(), message: format!("stored, but cannot be removed: {e}") }),
    }
}

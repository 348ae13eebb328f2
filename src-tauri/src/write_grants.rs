//! Where the app may write. The webview shows model output; should any of it ever run as
//! script, it could call our commands with any path. So a command that writes takes its path
//! only from places the webview cannot invent: a file or folder the user chose in a dialog that
//! Rust opened (this session), and the app's own data folder (the database's folder, which
//! `ASSAY_DB` moves; scripted use and the end-to-end test, which cannot drive native dialogs,
//! write there). Within the data folder the grant leaves out what the app never writes through
//! a command: the database and SQLite's files beside it, run leases and other dot-files, and
//! the user's `judges/` and `models/` (a judge or a models file written there would change
//! later evaluations). Read-only commands are not limited here: reading is what the app is for.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;
use tauri::AppHandle;
use tauri_plugin_dialog::DialogExt;

/// Folders and files chosen in this session's dialogs; a grant covers everything under it.
#[derive(Default)]
pub struct WriteGrants {
    chosen: Mutex<BTreeSet<PathBuf>>,
}

impl WriteGrants {
    fn grant(&self, path: &Path) -> Result<(), String> {
        let resolved = resolve(path)?;
        self.chosen.lock().map_err(|_| "the grant list is poisoned".to_string())?.insert(resolved);
        Ok(())
    }

    /// Ok when `path` may be written: under a chosen path or the app's data folder. The error
    /// says how to choose the place instead.
    pub fn check(&self, path: &Path) -> Result<(), String> {
        let resolved = resolve(path)?;
        let chosen = self.chosen.lock().map_err(|_| "the grant list is poisoned".to_string())?;
        if chosen.iter().any(|root| resolved.starts_with(root)) {
            return Ok(());
        }
        if let Some((data, database)) = data_folder() {
            if resolved.starts_with(&data) && !kept_from_commands(&resolved, &data, &database) {
                return Ok(());
            }
        }
        Err(format!(
            "{}: the app writes only where you chose with Browse… or Export… (or in its own data folder); choose the place in the dialog",
            path.display()
        ))
    }
}

/// The app's data folder (where the database is), resolved, and the database's file name.
fn data_folder() -> Option<(PathBuf, String)> {
    let db = assay::run::default_database()?;
    let name = db.file_name()?.to_string_lossy().into_owned();
    Some((resolve(db.parent()?).ok()?, name))
}

/// Whether `resolved` (inside `data`) is a place no command writes: the folder itself, the
/// database and the files SQLite keeps beside it (`-wal`, `-shm`, `-journal`), dot-files (run
/// leases), and the `judges` and `models` folders.
fn kept_from_commands(resolved: &Path, data: &Path, database: &str) -> bool {
    let Ok(inside) = resolved.strip_prefix(data) else { return true };
    let Some(first) = inside.components().next() else { return true };
    let first = first.as_os_str().to_string_lossy();
    first.starts_with(database) || first.starts_with('.') || first == "judges" || first == "models"
}

/// An absolute path with symlinks resolved as far as it exists (the rest appended), so a link
/// inside a granted folder cannot point the write elsewhere. `..` is refused rather than
/// interpreted: dialogs never return it.
fn resolve(path: &Path) -> Result<PathBuf, String> {
    if !path.is_absolute() {
        return Err(format!("{}: give an absolute path (choose it with Browse…)", path.display()));
    }
    if path.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err(format!("{}: `..` is not allowed in a path to write", path.display()));
    }
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let mut resolved = existing.canonicalize().map_err(|e| format!("{}: {e}", existing.display()))?;
    resolved.extend(rest.iter().rev());
    Ok(resolved)
}

/// A save dialog (a new file, or a new folder for an imported dataset); the answer is granted.
#[tauri::command]
pub async fn choose_save_path(
    app: AppHandle,
    grants: tauri::State<'_, WriteGrants>,
    title: String,
    default_name: Option<String>,
    filter_name: Option<String>,
    extensions: Option<Vec<String>>,
) -> Result<Option<String>, String> {
    let mut dialog = app.dialog().file().set_title(title);
    if let Some(name) = default_name {
        dialog = dialog.set_file_name(name);
    }
    if let (Some(name), Some(extensions)) = (filter_name, extensions) {
        let extensions: Vec<&str> = extensions.iter().map(String::as_str).collect();
        dialog = dialog.add_filter(name, &extensions);
    }
    let Some(chosen) = dialog.blocking_save_file() else { return Ok(None) };
    let path = chosen.into_path().map_err(|e| e.to_string())?;
    grants.grant(&path)?;
    Ok(Some(path.display().to_string()))
}

/// A folder dialog; the folder chosen is granted (a dataset to review in, a place to write).
#[tauri::command]
pub async fn choose_folder(app: AppHandle, grants: tauri::State<'_, WriteGrants>, title: String) -> Result<Option<String>, String> {
    let Some(chosen) = app.dialog().file().set_title(title).blocking_pick_folder() else { return Ok(None) };
    let path = chosen.into_path().map_err(|e| e.to_string())?;
    grants.grant(&path)?;
    Ok(Some(path.display().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_granted_places_are_writable() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().canonicalize().expect("canonical temp dir");
        let chosen = root.join("chosen");
        std::fs::create_dir(&chosen).expect("mkdir");
        let grants = WriteGrants::default();
        assert!(grants.check(&chosen.join("report.html")).is_err(), "nothing granted yet");
        grants.grant(&chosen).expect("grant");
        assert!(grants.check(&chosen.join("new/report.html")).is_ok());
        assert!(grants.check(&root.join("other.html")).is_err());
        assert!(grants.check(&chosen.join("../other.html")).is_err(), "`..` refused");
        assert!(grants.check(Path::new("relative.html")).is_err());
    }

    #[test]
    fn the_data_folder_keeps_the_database_judges_and_models_from_commands() {
        let data = Path::new("/data/assay");
        for kept in ["", "runs.sqlite", "runs.sqlite-wal", "runs.sqlite-shm", ".runs.sqlite.run-1.lease", "judges/evil.toml", "models/user-models.toml"] {
            assert!(kept_from_commands(&data.join(kept), data, "runs.sqlite"), "{kept} must not be writable");
        }
        for written in ["reports/run.html", "labels/run.jsonl", "imported/dataset.toml"] {
            assert!(!kept_from_commands(&data.join(written), data, "runs.sqlite"), "{written} must be writable");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_link_inside_a_grant_does_not_lead_out_of_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().canonicalize().expect("canonical temp dir");
        let (chosen, outside) = (root.join("chosen"), root.join("outside"));
        std::fs::create_dir(&chosen).expect("mkdir");
        std::fs::create_dir(&outside).expect("mkdir");
        std::os::unix::fs::symlink(&outside, chosen.join("link")).expect("symlink");
        let grants = WriteGrants::default();
        grants.grant(&chosen).expect("grant");
        assert!(grants.check(&chosen.join("link/report.html")).is_err());
    }
}

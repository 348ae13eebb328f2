//! Deleting runs from the runs list: the library's plan (what goes with each run) for the
//! confirmation the window shows, then the deletion: the same entries `assay delete` calls.

use crate::commands::open_store;
use assay::run::RunDeletion;

#[tauri::command]
pub async fn plan_run_deletion(runs: Vec<String>) -> Result<Vec<RunDeletion>, String> {
    open_store()?.plan_deletion(&runs).map_err(|e| e.to_string())
}

/// Delete the runs, planned again here: a resume may have started since the window asked.
#[tauri::command]
pub async fn delete_runs(runs: Vec<String>) -> Result<usize, String> {
    let mut store = open_store()?;
    let plan = store.plan_deletion(&runs).map_err(|e| e.to_string())?;
    store.delete(&plan).map_err(|e| e.to_string())
}

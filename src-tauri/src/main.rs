//! Assay desktop app: a Tauri window over the assay core. The commands in `commands` read the
//! store and render reports; `evaluation` runs an evaluation on a worker thread and streams its
//! progress as events; `write_grants` limits where commands write to places chosen in dialogs.
//! No evaluation logic lives here or in the UI.

// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod commands;
mod evaluation;
mod labels;
#[cfg(test)]
mod face_parity;
mod models;
mod pairwise;
mod run_deletion;
mod write_grants;

fn main() {
    // Best effort: an allocator that refuses only costs speed.
    let _ = assay::heap::keep_freed_memory_for_reuse();
    let app = tauri::Builder::default()
        .plugin(tauri_plugin_dialog::init())
        .manage(evaluation::ActiveRun::default())
        .manage(pairwise::ActivePairwise::default())
        .manage(write_grants::WriteGrants::default())
        .invoke_handler(tauri::generate_handler![
            commands::db_path,
            commands::list_runs,
            commands::run_view,
            commands::run_held,
            run_deletion::plan_run_deletion,
            run_deletion::delete_runs,
            commands::list_datasets,
            commands::compare_runs,
            commands::open_dataset,
            commands::read_manual,
            commands::pending_pairs,
            commands::apply_review,
            commands::import_dataset,
            commands::export_report,
            commands::list_judges,
            commands::calibrate_judges,
            evaluation::start_run,
            evaluation::cancel_run,
            pairwise::stored_pairwise,
            pairwise::judge_pairwise,
            pairwise::cancel_pairwise,
            models::list_models,
            models::pull_model,
            models::add_model,
            models::scan_models,
            models::add_server,
            models::remove_model,
            labels::labels_of_run,
            labels::label_answer,
            labels::clear_label,
            labels::export_labels,
            labels::import_labels_file,
            labels::judge_panel,
            write_grants::choose_save_path,
            write_grants::choose_folder,
        ])
        .run(tauri::generate_context!("../tauri.conf.json"));
    if let Err(error) = app {
        eprintln!("assay-desktop: the window could not start: {error}");
        std::process::exit(1);
    }
}

//! Builds the Tauri context from the root `tauri.conf.json` and declares the app's commands,
//! so capabilities can allow exactly the ones the UI uses.
fn main() {
    let manifest = tauri_build::AppManifest::new().commands(&[
        "db_path",
        "list_runs",
        "run_view",
        "run_held",
        "plan_run_deletion",
        "delete_runs",
        "list_datasets",
        "compare_runs",
        "start_run",
        "cancel_run",
        "open_dataset",
        "read_manual",
        "pending_pairs",
        "apply_review",
        "import_dataset",
        "export_report",
        "list_models",
        "pull_model",
        "add_model",
        "scan_models",
        "list_judges",
        "calibrate_judges",
        "choose_save_path",
        "choose_folder",
        "add_server",
        "remove_model",
        "labels_of_run",
        "label_answer",
        "clear_label",
        "export_labels",
        "import_labels_file",
        "judge_panel",
        "stored_pairwise",
        "judge_pairwise",
        "cancel_pairwise",
    ]);
    if let Err(error) = tauri_build::try_build(
        tauri_build::Attributes::new()
            .config_path("../tauri.conf.json")
            .app_manifest(manifest),
    ) {
        eprintln!("tauri build step failed: {error:#}");
        std::process::exit(1);
    }
}

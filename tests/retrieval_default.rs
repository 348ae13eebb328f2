//! The retrieval mode a run gets when it names none: hybrid (BM25 and MiniLM fused) where the
//! embedding model is installed, BM25 where it is not, so a machine without MiniLM still runs;
//! either way the run config records the mode that ran.

use crate::common::{assay_command, ok, trailgear};
use serde_json::Value;
use std::path::Path;

/// The recorded retrieval mode and target of a retrieve run that names no mode.
fn default_run(db: &Path, models_dir: Option<&Path>) -> (String, String) {
    let dataset = trailgear();
    let mut command = assay_command(
        &["run", dataset.to_str().unwrap(), "--target", "retrieve", "--limit", "3", "--json"],
        db,
    );
    if let Some(dir) = models_dir {
        command.env("ASSAY_MODELS", dir);
    }
    let export: Value = serde_json::from_str(&ok(command.output().unwrap())).unwrap();
    let config = &export["runs"][0]["config"];
    (config["retrieval"].as_str().unwrap().to_string(), config["target"].as_str().unwrap().to_string())
}

#[test]
fn without_minilm_a_run_that_names_no_mode_retrieves_by_bm25() {
    let tmp = tempfile::tempdir().unwrap();
    let no_models = tmp.path().join("models");
    std::fs::create_dir_all(&no_models).unwrap();
    let (mode, target) = default_run(&tmp.path().join("runs.sqlite"), Some(&no_models));
    assert_eq!(mode, "bm25");
    assert_eq!(target, "retrieve:bm25:top4");
}

#[test]
fn with_minilm_installed_a_run_that_names_no_mode_retrieves_hybrid() {
    let registry = assay::models::registry::Registry::load().unwrap();
    if let Err(e) = registry.model_path("minilm-l6-v2") {
        assert!(std::env::var_os("CI").is_none(), "CI pulls minilm-l6-v2 first: {e}");
        eprintln!("*** SKIPPED: minilm-l6-v2 is not installed ({e})");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (mode, target) = default_run(&tmp.path().join("runs.sqlite"), None);
    assert_eq!(mode, "hybrid");
    assert_eq!(target, "retrieve:hybrid:top4");
}

//! The two faces share one run loop: the same request through the CLI (`assay run`, the real
//! binary) and through the desktop adapter (`evaluation::run_request`, what the `start_run`
//! command's worker calls, here without a window) must store the same runs: the same names,
//! configs and config hashes, and the same items with the same scores.

use crate::evaluation::{run_request, StartRequest};
use assay::run::{StoredRuns, Unwatched};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The CLI binary of this workspace's build (scripts/test.sh builds every target first).
fn cli_binary() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let binary = target.join("debug").join(format!("assay{}", std::env::consts::EXE_SUFFIX));
    assert!(binary.is_file(), "{}: build the CLI first (cargo build --bin assay)", binary.display());
    binary
}

/// Every stored run as (name, config JSON, config hash, [(question id, metrics JSON)]),
/// sorted by name: what must agree between the faces (ids and times may not).
fn stored(db: &Path) -> Vec<(String, serde_json::Value, String, Vec<(String, String)>)> {
    let runs = StoredRuns::open_existing(db).expect("the database exists");
    let mut seen = Vec::new();
    for record in runs.runs().expect("runs listed") {
        let report = runs.report_of(record).expect("run read back");
        let items = report
            .items
            .iter()
            .map(|i| (i.question.id.clone(), serde_json::to_string(&i.metrics).expect("metrics serialise")))
            .collect();
        let config = serde_json::to_value(&report.run.config).expect("config serialises");
        seen.push((report.run.name.clone(), config, report.run.config_hash.clone(), items));
    }
    seen.sort_by(|a, b| a.0.cmp(&b.0));
    seen
}

#[test]
fn the_cli_and_the_desktop_app_store_the_same_runs_for_one_request() {
    let dir = tempfile::tempdir().expect("temp dir");
    let dataset = Path::new(env!("CARGO_MANIFEST_DIR")).join("../datasets/trailgear");
    let dataset = dataset.to_str().expect("utf-8 path").to_string();
    let (cli_db, app_db) = (dir.path().join("cli.sqlite"), dir.path().join("app.sqlite"));

    // A matrix of two runs (two top-k values), so planning and naming are shared too.
    let cli = Command::new(cli_binary())
        .args(["run", &dataset, "--target", "answers:answers-careful.jsonl", "--limit", "5", "--top-k", "3,5", "--json"])
        .env("ASSAY_DB", &cli_db)
        .output()
        .expect("the CLI runs");
    assert!(cli.status.success(), "assay run failed: {}", String::from_utf8_lossy(&cli.stderr));

    let request = StartRequest {
        dataset: dataset.clone(),
        target: Some("answers:answers-careful.jsonl".into()),
        limit: Some(5),
        top_ks: vec![3, 5],
        ..StartRequest::default()
    };
    let outcome = run_request(&request, &app_db, &Arc::new(AtomicBool::new(false)), &mut Unwatched)
        .expect("the desktop adapter runs the request");
    assert_eq!(outcome.reports.len(), 2);
    assert!(!outcome.cancelled);

    let (from_cli, from_app) = (stored(&cli_db), stored(&app_db));
    assert_eq!(from_cli.len(), 2, "the CLI stored one run per top-k value");
    assert_eq!(from_cli, from_app);
    // Scored for real: five items per run, each with metrics.
    for (name, _, _, items) in &from_cli {
        assert_eq!(items.len(), 5, "{name}");
        assert!(items.iter().all(|(_, metrics)| metrics.contains("token_f1")), "{name}: {items:?}");
    }
}

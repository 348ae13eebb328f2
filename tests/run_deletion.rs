//! `assay delete`: what a deletion removes is said before anything changes, nothing is deleted
//! without `--yes` when there is no terminal to ask on, an unknown reference or a run that a
//! process is executing (its lease held) leaves every run as it was, and a deletion takes the
//! run's items, verdicts, people's labels and pairwise judgments with it, leaving the other
//! runs whole. A run whose row is damaged can be deleted by the id `assay runs` names.
//! Real SQLite files and the real binary; the runs hold the sample's answers (no model).

use std::path::Path;
use std::process::{Command, Output};

use assay::judge::pairwise::recombined;
use assay::record::PairwiseJudgment;
use assay::store::{PairwiseKey, Store};
use serde_json::Value;

fn assay(args: &[&str], db: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(args)
        .env("ASSAY_DB", db)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// A finished run of the first `limit` sloppy or careful sample answers; its id.
fn answers_run(db: &Path, answers: &str, name: &str, limit: usize) -> String {
    let dataset = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/trailgear");
    let target = format!("answers:answers-{answers}.jsonl");
    let limit = limit.to_string();
    ok(&assay(&["run", dataset.to_str().unwrap(), "--target", &target, "--limit", &limit, "--name", name], db));
    let runs: Vec<Value> = serde_json::from_str(&ok(&assay(&["runs", "--json"], db))).unwrap();
    runs.iter().find(|r| r["name"] == name).unwrap()["id"].as_str().unwrap().to_string()
}

fn count(db: &Path, sql: &str) -> i64 {
    rusqlite::Connection::open(db).unwrap().query_row(sql, [], |r| r.get(0)).unwrap()
}

/// Rows in every table a run owns, in a fixed order: what "nothing changed" compares.
fn table_counts(db: &Path) -> Vec<i64> {
    ["runs", "items", "metrics", "labels", "pairwise_judgments"]
        .iter()
        .map(|t| count(db, &format!("SELECT COUNT(*) FROM {t}")))
        .collect()
}

/// A scored judgment of question `id` (the store keeps only scored ones).
fn judgment(id: &str) -> PairwiseJudgment {
    recombined(
        serde_json::from_value(serde_json::json!({
            "id": id, "a_first": {"1": 0.7, "2": 0.2, "tie": 0.1}, "b_first": {"1": 0.3, "2": 0.6, "tie": 0.1},
            "words_a": 12, "words_b": 30
        }))
        .unwrap(),
    )
}

#[test]
fn a_deletion_says_what_goes_takes_it_all_and_leaves_the_other_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("runs.sqlite");
    let sloppy = answers_run(&db, "sloppy", "sloppy", 4);
    let careful = answers_run(&db, "careful", "careful", 3);
    ok(&assay(&["labels", "set", &sloppy, "q001", "wrong"], &db));
    ok(&assay(&["labels", "set", &careful, "q002", "correct"], &db));
    let store = Store::open(&db).unwrap();
    for q in ["q001", "q002"] {
        let key = PairwiseKey { run_a: &careful, run_b: &sloppy, judge_sha256: "j", judge_model: "m" };
        store.record_pairwise(&key, "answers", &judgment(q)).unwrap();
    }
    drop(store);
    let careful_metrics = count(&db, &format!("SELECT COUNT(*) FROM metrics WHERE run_id = '{careful}'"));
    assert!(careful_metrics > 0);

    // No terminal and no --yes: refused, and said what would have gone.
    let before = table_counts(&db);
    let out = assay(&["delete", "sloppy"], &db);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("not deleting without --yes"), "{stderr}");
    assert!(stderr.contains(&format!("{sloppy} (sloppy): 4 answers, 0 verdicts, 2 pairwise judgments, 1 people's labels")), "{stderr}");
    assert_eq!(table_counts(&db), before);

    // One unknown reference among known ones: nothing deleted.
    let out = assay(&["delete", "sloppy", "no-such-run", "--yes"], &db);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no run matches \"no-such-run\""));
    assert_eq!(table_counts(&db), before);

    // Named twice (by name and by id prefix): planned and deleted once.
    let prefix = &sloppy[..sloppy.len() - 1];
    let deleted: Value = serde_json::from_str(&ok(&assay(&["delete", "sloppy", prefix, "--yes", "--json"], &db))).unwrap();
    assert_eq!(deleted["deleted"], 1);
    assert_eq!(deleted["runs"].as_array().unwrap().len(), 1);
    let contents = &deleted["runs"][0]["contents"];
    assert_eq!((contents["items"].as_i64(), contents["labels"].as_i64(), contents["pairwise_judgments"].as_i64()), (Some(4), Some(1), Some(2)));

    for table in ["items", "metrics", "labels"] {
        assert_eq!(count(&db, &format!("SELECT COUNT(*) FROM {table} WHERE run_id = '{sloppy}'")), 0, "{table}");
    }
    assert_eq!(count(&db, "SELECT COUNT(*) FROM pairwise_judgments"), 0, "judgments with a deleted run go with it");
    // The other run is whole: its items, metrics and label, and it still shows.
    assert_eq!(count(&db, &format!("SELECT COUNT(*) FROM items WHERE run_id = '{careful}'")), 3);
    assert_eq!(count(&db, &format!("SELECT COUNT(*) FROM metrics WHERE run_id = '{careful}'")), careful_metrics);
    assert_eq!(count(&db, &format!("SELECT COUNT(*) FROM labels WHERE run_id = '{careful}'")), 1);
    ok(&assay(&["show", "careful"], &db));
    assert!(assay(&["show", "sloppy"], &db).status.code() == Some(2));
}

#[test]
fn a_run_being_executed_is_not_deleted() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("runs.sqlite");
    let id = answers_run(&db, "careful", "careful", 2);
    // The lease an executing process holds (src/run/lease.rs): its file beside the database,
    // locked for as long as the process runs.
    let lease = std::fs::File::create(tmp.path().join(format!(".runs.sqlite.run-{id}.lease"))).unwrap();
    lease.lock().unwrap();
    let before = table_counts(&db);
    let out = assay(&["delete", &id, "--yes"], &db);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is being executed by a process right now"), "{stderr}");
    assert_eq!(table_counts(&db), before);

    lease.unlock().unwrap();
    ok(&assay(&["delete", &id, "--yes"], &db));
    assert_eq!(table_counts(&db)[0], 0);
}

#[test]
fn a_damaged_run_is_deleted_by_the_id_runs_names() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("runs.sqlite");
    let damaged = answers_run(&db, "sloppy", "sloppy", 2);
    let whole = answers_run(&db, "careful", "careful", 2);
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute("UPDATE runs SET status = 'exploded' WHERE id = ?1", [&damaged])
        .unwrap();
    let listed = assay(&["runs"], &db);
    assert!(String::from_utf8_lossy(&listed.stderr).contains(&format!("damaged run {damaged}")));

    // By name the damaged row is an error naming it; by its id it goes.
    let out = assay(&["delete", "sloppy", "--yes"], &db);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("exploded"));
    ok(&assay(&["delete", &damaged, "--yes"], &db));
    assert_eq!(count(&db, "SELECT COUNT(*) FROM runs"), 1);
    assert_eq!(count(&db, &format!("SELECT COUNT(*) FROM items WHERE run_id = '{damaged}'")), 0);
    assert!(assay(&["runs"], &db).stderr.is_empty());
    ok(&assay(&["show", &whole], &db));
}

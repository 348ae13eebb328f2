//! Crash safety: a real rag run (SmolLM2, judged by SmolLM2) is killed with SIGKILL at seeded
//! random moments and resumed each time; the finished run must equal an uninterrupted run item
//! for item (answers, citations, metrics, verdicts), the database must pass
//! `PRAGMA integrity_check`, no question may appear twice, and an item committed before a kill
//! must come through later resumes untouched (never recomputed).

use crate::common::{assay_command, dataset_copy, ok, smollm2_installed};
use rand::{Rng, SeedableRng};
use rusqlite::Connection;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

const ITEMS: usize = 4;
const KILLS: usize = 4;

/// The settings both runs share; resume must not be given any of them again.
fn run_args(dataset: &str) -> Vec<String> {
    [
        "run", dataset, "--target", "rag", "--model", "smollm2-135m-instruct", "--limit",
        &ITEMS.to_string(), "--max-tokens", "24", "--seed", "7", "--judges", "correctness",
        "--judge-model", "smollm2-135m-instruct", "--name", "killed",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// What must be identical between the killed-and-resumed run and the uninterrupted one:
/// everything an item holds except its timing and whether its generation came from the
/// store's cache (a kill after a generation was cached but before its item was committed
/// makes the resume reuse it: the same text, as the comparison checks).
fn comparable(item: &Value) -> Value {
    let mut item = item.clone();
    if let Some(object) = item.as_object_mut() {
        object.remove("latency_ms");
        object.remove("cached");
    }
    item
}

/// (question id → answer JSON, finished_at) of the items committed so far.
fn committed(db: &Path) -> BTreeMap<String, (Option<String>, String)> {
    if !db.exists() {
        return BTreeMap::new();
    }
    let conn = Connection::open(db).unwrap();
    let has_items: bool = conn
        .query_row("SELECT count(*) FROM sqlite_master WHERE name = 'items'", [], |r| r.get::<_, i64>(0))
        .map(|n| n > 0)
        .unwrap();
    if !has_items {
        return BTreeMap::new();
    }
    let mut statement = conn
        .prepare("SELECT question_id, answer_json, finished_at FROM items")
        .unwrap();
    let rows = statement
        .query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))
        .unwrap();
    rows.map(Result::unwrap).collect()
}

fn run_ids(db: &Path) -> Vec<String> {
    if !db.exists() {
        return Vec::new();
    }
    let conn = Connection::open(db).unwrap();
    let Ok(mut statement) = conn.prepare("SELECT id FROM runs") else {
        return Vec::new();
    };
    let ids = statement.query_map([], |r| r.get(0)).unwrap();
    ids.map(Result::unwrap).collect()
}

#[test]
fn a_run_killed_at_random_moments_resumes_to_the_same_result() {
    if !smollm2_installed() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dataset = dataset_copy(tmp.path());
    let ds = dataset.to_str().unwrap();
    let args = run_args(ds);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();

    // The uninterrupted run, which also builds the retrieval index and times one whole run.
    let reference_db = tmp.path().join("reference.sqlite");
    let started = Instant::now();
    let mut with_json = args.clone();
    with_json.push("--json");
    let reference: Value = serde_json::from_str(&ok(assay_command(&with_json, &reference_db).output().unwrap())).unwrap();
    // One item's share of an uninterrupted run (start-up included): the scale of the kill moments.
    let per_item = started.elapsed() / ITEMS as u32;
    let reference_items = reference["runs"][0]["items"].as_array().unwrap().clone();
    assert_eq!(reference_items.len(), ITEMS);
    for item in &reference_items {
        assert!(item["error"].is_null(), "{item}");
        assert!(item["verdicts"]["correctness"]["label"].is_string(), "{item}");
    }

    // The same run on a second copy of the dataset (so a kill can also land while its index
    // is built), killed at seeded random moments.
    let second = tmp.path().join("second");
    std::fs::create_dir_all(&second).unwrap();
    let dataset = dataset_copy(&second);
    let ds = dataset.to_str().unwrap();
    let args = run_args(ds);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let db = tmp.path().join("killed.sqlite");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(20261123);
    let mut kept = BTreeMap::new();
    let mut kills = 0;
    let mut attempts = 0;
    loop {
        attempts += 1;
        assert!(attempts < 40, "the run never finished between kills");
        let ids = run_ids(&db);
        assert!(ids.len() <= 1, "resume must not create runs: {ids:?}");
        let resume_args;
        let command_args: Vec<&str> = match ids.first() {
            // Killed before the run row existed: start it again.
            None => args.clone(),
            Some(id) => {
                resume_args = ["run", ds, "--resume", id.as_str()];
                resume_args.to_vec()
            }
        };
        let start_count = committed(&db).len();
        let remaining = ITEMS - start_count;
        let mut child = assay_command(&command_args, &db)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        if kills == KILLS || remaining == 0 {
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "final resume: {}", String::from_utf8_lossy(&out.stderr));
            break;
        }
        // A seeded random moment: after 0 to (remaining - 1) more items are committed, a
        // random part of one item's time later: during start-up, generation, judging or a
        // commit, mostly before the run could finish.
        let more_items = rng.random_range(0..remaining);
        let delay = per_item.mul_f64(rng.random_range(0.0..1.0));
        let mut finished = None;
        let mut reached: Option<Instant> = None;
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                finished = Some(status);
                break;
            }
            match reached {
                Some(at) if at.elapsed() >= delay => break,
                Some(_) => {}
                None if committed(&db).len() >= start_count + more_items => reached = Some(Instant::now()),
                None => {}
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        match finished {
            Some(status) => {
                let out = child.wait_with_output().unwrap();
                assert!(status.success(), "{}", String::from_utf8_lossy(&out.stderr));
                break;
            }
            None => {
                child.kill().unwrap(); // SIGKILL
                child.wait().unwrap();
                kills += 1;
            }
        }
        // What was committed before this kill must survive every later resume unchanged.
        let now = committed(&db);
        for (id, before) in &kept {
            assert_eq!(now.get(id), Some(before), "committed item {id} changed after a kill");
        }
        eprintln!(
            "kill {kills}: {more_items} more item(s) and {delay:?} after start; {} of {ITEMS} items committed",
            now.len()
        );
        kept = now;
    }

    eprintln!("{kills} kills, {attempts} starts");
    assert!(kills >= 2, "only {kills} kills landed before the run finished");
    let ids = run_ids(&db);
    assert_eq!(ids.len(), 1, "{ids:?}");
    let conn = Connection::open(&db).unwrap();
    let integrity: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(integrity, "ok");
    let duplicated: i64 = conn
        .query_row(
            "SELECT count(*) FROM (SELECT question_id FROM items GROUP BY run_id, question_id HAVING count(*) > 1)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(duplicated, 0);
    let status: String = conn.query_row("SELECT status FROM runs", [], |r| r.get(0)).unwrap();
    assert_eq!(status, "finished");
    drop(conn);
    for (id, before) in &kept {
        assert_eq!(committed(&db).get(id), Some(before), "committed item {id} was recomputed");
    }

    let export = tmp.path().join("killed.json");
    ok(assay_command(&["export", &ids[0], "--format", "json", "-o", export.to_str().unwrap()], &db).output().unwrap());
    let resumed: Value = serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    let resumed_items = resumed["runs"][0]["items"].as_array().unwrap();
    assert_eq!(resumed_items.len(), ITEMS);
    for (a, b) in reference_items.iter().zip(resumed_items) {
        assert_eq!(comparable(a), comparable(b), "item differs after kills and resumes");
    }
    assert_eq!(reference["runs"][0]["summary"], resumed["runs"][0]["summary"]);
    assert_eq!(reference["runs"][0]["config"], resumed["runs"][0]["config"]);
    assert_eq!(reference["runs"][0]["dataset_fingerprint"], resumed["runs"][0]["dataset_fingerprint"]);
}

const JUDGE_TOML: &str = "name = \"mine\"\nprompt = \"mine.md\"\noutcomes = [\"No\", \"Yes\"]\n";
const JUDGE_PROMPT: &str = "Question: {{ question }}\nAnswer: {{ answer }}\nIs the answer right?";

/// A judged answers run over `limit` questions with the user judge `mine` from `judges`.
fn judged_args(dataset: &str, judges: &Path, limit: usize) -> Vec<String> {
    let limit = limit.to_string();
    let args = [
        "run", dataset, "--target", "answers:answers-careful.jsonl", "--judges", "mine", "--judge-model",
        "smollm2-135m-instruct", "--judges-dir", judges.to_str().unwrap(), "--limit", limit.as_str(),
    ];
    args.iter().map(|s| s.to_string()).collect()
}

/// Spawn `args`, wait until `db` holds `items` committed items, SIGKILL it.
fn kill_after(args: &[String], db: &Path, items: usize) {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = assay_command(&args, db).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let started = Instant::now();
    while committed(db).len() < items {
        assert!(child.try_wait().unwrap().is_none(), "the run ended before it could be killed");
        assert!(started.elapsed() < Duration::from_secs(300));
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

fn run_status(db: &Path) -> String {
    let conn = Connection::open(db).unwrap();
    conn.query_row("SELECT status FROM runs", [], |r| r.get(0)).unwrap()
}

#[test]
fn resume_refuses_a_judge_spec_edited_since_the_run_started() {
    if !smollm2_installed() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dataset = dataset_copy(tmp.path());
    let ds = dataset.to_str().unwrap();
    let judges = tmp.path().join("judges");
    std::fs::create_dir_all(&judges).unwrap();
    std::fs::write(judges.join("mine.toml"), JUDGE_TOML).unwrap();
    std::fs::write(judges.join("mine.md"), JUDGE_PROMPT).unwrap();
    let db = tmp.path().join("runs.sqlite");
    kill_after(&judged_args(ds, &judges, 6), &db, 1);
    let id = run_ids(&db).remove(0);
    let before = committed(&db);

    // The rubric is edited between the kill and the resume: refused, with the reason.
    std::fs::write(judges.join("mine.md"), format!("{JUDGE_PROMPT} Be lenient.")).unwrap();
    let resume = ["run", ds, "--resume", id.as_str(), "--judges-dir", judges.to_str().unwrap()];
    let out = assay_command(&resume, &db).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("judge spec of mine changed since the run started"), "{stderr}");
    assert_eq!(committed(&db), before, "a refused resume changes nothing");

    // The spec as it was: the same resume goes through.
    std::fs::write(judges.join("mine.md"), JUDGE_PROMPT).unwrap();
    let out = assay_command(&resume, &db).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(committed(&db).len(), 6);
}

#[test]
fn two_resumes_of_one_run_at_once_the_second_is_refused() {
    if !smollm2_installed() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dataset = dataset_copy(tmp.path());
    let ds = dataset.to_str().unwrap();
    let judges = tmp.path().join("judges");
    std::fs::create_dir_all(&judges).unwrap();
    std::fs::write(judges.join("mine.toml"), JUDGE_TOML).unwrap();
    std::fs::write(judges.join("mine.md"), JUDGE_PROMPT).unwrap();
    let db = tmp.path().join("runs.sqlite");
    kill_after(&judged_args(ds, &judges, 12), &db, 1);
    let id = run_ids(&db).remove(0);
    let resume = ["run", ds, "--resume", id.as_str(), "--judges-dir", judges.to_str().unwrap()];

    // The first resume is under way (it committed an item of its own) when the second starts.
    let after_kill = committed(&db).len();
    let mut first = assay_command(&resume, &db).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    while committed(&db).len() <= after_kill {
        assert!(first.try_wait().unwrap().is_none(), "the first resume ended too early");
        std::thread::sleep(Duration::from_millis(10));
    }
    let second = assay_command(&resume, &db).output().unwrap();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("being executed by another process"), "{stderr}");

    let out = first.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(run_status(&db), "finished");
    assert_eq!(committed(&db).len(), 12);
    let leases: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".lease"))
        .collect();
    assert!(leases.is_empty(), "the lease file is removed when the run ends: {leases:?}");
}

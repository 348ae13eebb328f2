//! People's labels on answers, stored in the run database (`labels` table) and used through
//! the real CLI: set / list / clear, export to the JSONL `assay agree` reads and import back,
//! bad import files refused whole with file, line and field named, `assay agree RUN` with no
//! labels file reading the stored labels (the same figures as the exported file gives), and a
//! database of the schema before the table migrated with its runs. The run holds the sample's
//! long answers with `correct` and `correctness` verdicts whose scores follow the sample's own
//! human labels with a spread, so each agreement figure depends on which labels are stored.

use std::path::Path;
use std::process::{Command, Output};

use assay::dataset::Question;
use assay::record::{Answer, ItemRecord, RunRecord, Verdict};
use assay::store::Store;
use serde_json::{json, Value};

fn trailgear() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/trailgear")
}

fn jsonl(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn assay(args: &[&str], db: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_assay")).args(args).env("ASSAY_DB", db).output().unwrap()
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// The sample's human labels of the long answers: question id -> right.
fn human() -> Vec<(String, bool)> {
    jsonl(&trailgear().join("labels-long.jsonl"))
        .iter()
        .map(|l| (l["id"].as_str().unwrap().to_string(), l["label"] == "Yes"))
        .collect()
}

/// Store run `id` with the long answers, a `correct` and a `correctness` verdict each; the
/// first `failed` answers are stored as target failures (nothing to label).
fn store_run(db: &Path, id: &str, failed: usize) {
    let questions: Vec<Question> =
        jsonl(&trailgear().join("questions.jsonl")).into_iter().map(|q| serde_json::from_value(q).unwrap()).collect();
    let human = human();
    let record: RunRecord = serde_json::from_value(json!({
        "id": id, "name": id, "dataset": "trailgear", "dataset_root": "datasets/trailgear",
        "dataset_fingerprint": "f", "config": {"target": "answers:answers-long.jsonl", "top_k": 5, "seed": 0,
        "judges": ["correct", "correctness", "abstention"]}, "config_hash": id, "status": "finished", "total_items": 38,
        "created_at": "2026-11-26T00:00:00Z", "finished_at": "2026-11-26T00:00:01Z", "experiment": null
    }))
    .unwrap();
    let mut store = Store::open(db).unwrap();
    store.insert_run(&record).unwrap();
    for (position, answer) in jsonl(&trailgear().join("answers-long.jsonl")).iter().enumerate() {
        let qid = answer["id"].as_str().unwrap();
        let question = questions.iter().find(|q| q.id == qid).unwrap().clone();
        let right = human.iter().any(|(id, r)| id == qid && *r);
        // Mostly on the right side of 0.5, one in four on the wrong side.
        let spread = (position % 4) as f64 * 0.1;
        let score = if right { 0.85 - spread * 1.2 } else { 0.15 + spread * 1.2 };
        let yes_no = Verdict {
            label: Some(if score >= 0.5 { "Yes" } else { "No" }.into()),
            score: Some(score),
            distribution: [("Yes".to_string(), score), ("No".to_string(), 1.0 - score)].into(),
            ..Verdict::default()
        };
        let grade = ["Awful", "Poor", "Good", "Perfect"][((score * 4.0) as usize).min(3)];
        let graded = Verdict { label: Some(grade.into()), score: Some(score), ..Verdict::default() };
        let item = if position < failed {
            ItemRecord { question, position, error: Some("target failed".into()), finished_at: "t".into(), ..ItemRecord::default() }
        } else {
            ItemRecord {
                question,
                position,
                answer: Some(Answer { text: answer["answer"].as_str().unwrap().to_string(), ..Answer::default() }),
                verdicts: [
                    ("correct".to_string(), yes_no),
                    ("correctness".to_string(), graded),
                    // No pass outcome: not a verdict on rightness, so never read against the labels.
                    ("abstention".to_string(), Verdict { label: Some("Attempted".into()), score: Some(0.1), ..Verdict::default() }),
                ]
                .into(),
                finished_at: "2026-11-26T00:00:01Z".into(),
                ..ItemRecord::default()
            }
        };
        store.record_item(id, &item).unwrap();
    }
}

fn listed(db: &Path, run: &str) -> Value {
    serde_json::from_str(&ok(&assay(&["labels", "list", run, "--json"], db))).unwrap()
}

/// Label the first `n` answered questions as the sample's humans did, through `labels set`.
fn label_like_the_sample(db: &Path, run: &str, n: usize) -> Vec<(String, bool)> {
    let chosen: Vec<(String, bool)> = human().into_iter().take(n).collect();
    for (id, right) in &chosen {
        ok(&assay(&["labels", "set", run, id, if *right { "correct" } else { "wrong" }], db));
    }
    chosen
}

#[test]
fn set_replaces_one_label_per_question_and_clear_forgets_it() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("runs.sqlite");
    store_run(&db, "long", 1);
    let first_answered = human()[1].0.clone();
    ok(&assay(&["labels", "set", "long", &first_answered, "wrong", "--note", "misses the torque"], &db));
    ok(&assay(&["labels", "set", "long", &first_answered, "correct"], &db));
    let labels = listed(&db, "long");
    assert_eq!(labels["labels"].as_array().unwrap().len(), 1, "{labels}");
    assert_eq!(labels["labels"][0]["label"], "correct");
    assert!(labels["labels"][0].get("note").is_none(), "the second set replaced the note: {labels}");
    // 38 answers, the first stored as a failure.
    assert_eq!(labels["answered"], 37);

    // A failed item has no answer to label; an unknown id neither. Both change nothing.
    let failed = human()[0].0.clone();
    for question in [failed.as_str(), "q999"] {
        let out = assay(&["labels", "set", "long", question, "wrong"], &db);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(question) && err.contains("no question"), "{err}");
    }
    let out = assay(&["labels", "set", "long", &first_answered, "maybe"], &db);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("correct, wrong or skip"));
    assert_eq!(listed(&db, "long")["labels"].as_array().unwrap().len(), 1);

    ok(&assay(&["labels", "clear", "long", &first_answered], &db));
    assert!(listed(&db, "long")["labels"].as_array().unwrap().is_empty());
}

#[test]
fn export_then_import_carries_the_decisions_to_another_run() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("runs.sqlite");
    store_run(&db, "first", 0);
    store_run(&db, "second", 0);
    let chosen = label_like_the_sample(&db, "first", 10);
    let skipped = human()[10].0.clone();
    ok(&assay(&["labels", "set", "first", &skipped, "skip"], &db));

    let exported = ok(&assay(&["labels", "export", "first"], &db));
    let lines: Vec<Value> = exported.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    // Skips have no line; each decision is the `correct` judge's Yes or No.
    assert_eq!(lines.len(), chosen.len());
    for (line, (id, right)) in lines.iter().zip(&chosen) {
        assert_eq!((line["id"].as_str().unwrap(), line["judge"].as_str().unwrap()), (id.as_str(), "correct"));
        assert_eq!(line["label"] == "Yes", *right, "{line}");
    }
    let file = tmp.path().join("labels.jsonl");
    ok(&assay(&["labels", "export", "first", "-o", file.to_str().unwrap()], &db));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), exported);

    let said = ok(&assay(&["labels", "import", "second", file.to_str().unwrap()], &db));
    assert!(said.contains(&format!("stored {} labels", chosen.len())), "{said}");
    let second: Vec<(String, String)> = listed(&db, "second")["labels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["question_id"].as_str().unwrap().to_string(), l["label"].as_str().unwrap().to_string()))
        .collect();
    let expected: Vec<(String, String)> =
        chosen.iter().map(|(id, r)| (id.clone(), if *r { "correct" } else { "wrong" }.to_string())).collect();
    assert_eq!(second, expected);

    // A graded judge's labels import by its pass outcome (Good or better is correct).
    let graded = tmp.path().join("graded.jsonl");
    std::fs::write(&graded, format!("{{\"id\": \"{}\", \"judge\": \"correctness\", \"label\": \"Poor\"}}\n", chosen[0].0)).unwrap();
    let said = ok(&assay(&["labels", "import", "second", graded.to_str().unwrap()], &db));
    assert!(said.contains("stored 1 labels") && said.contains("1 replaced"), "{said}");
    assert_eq!(listed(&db, "second")["labels"][0]["label"], "wrong");
}

#[test]
fn a_bad_import_names_file_line_and_field_and_stores_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("runs.sqlite");
    store_run(&db, "long", 0);
    let ids: Vec<String> = human().into_iter().map(|(id, _)| id).collect();
    let good = format!("{{\"id\": \"{}\", \"judge\": \"correct\", \"label\": \"Yes\"}}", ids[0]);
    let cases = [
        (format!("{{\"id\": \"{}\", \"judge\": \"nosuch\", \"label\": \"Yes\"}}", ids[1]), "`judge`"),
        (format!("{{\"id\": \"{}\", \"judge\": \"correct\", \"label\": \"Maybe\"}}", ids[1]), "`label`"),
        (format!("{{\"id\": \"{}\", \"judge\": \"abstention\", \"label\": \"Abstained\"}}", ids[1]), "no pass outcome"),
        ("{\"id\": \"q999\", \"judge\": \"correct\", \"label\": \"Yes\"}".to_string(), "`id`"),
        (format!("{{\"id\": \"{}\", \"judge\": \"correct\", \"label\": \"No\"}}", ids[0]), "on line 1"),
        (format!("{{\"id\": \"{}\", \"judge\": \"correct\", \"verdict\": \"Yes\"}}", ids[1]), "not a label line"),
        ("{\"id\": ".to_string(), "not a label line"),
    ];
    for (bad, expected) in cases {
        let file = tmp.path().join("bad.jsonl");
        std::fs::write(&file, format!("{good}\n\n{bad}\n")).unwrap();
        let out = assay(&["labels", "import", "long", file.to_str().unwrap()], &db);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("{}:3:", file.display())) && err.contains(expected), "{bad}: {err}");
        // The good first line was not stored either.
        assert!(listed(&db, "long")["labels"].as_array().unwrap().is_empty(), "{bad}");
    }
    let missing = tmp.path().join("missing.jsonl");
    let out = assay(&["labels", "import", "long", missing.to_str().unwrap()], &db);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.jsonl"));
}

#[test]
fn agree_without_labels_reads_the_stored_ones_as_the_exported_file_would() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("runs.sqlite");
    store_run(&db, "long", 0);
    // No labels yet: a plain error saying where labels come from.
    let out = assay(&["agree", "long"], &db);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("label answers first"));

    let chosen = label_like_the_sample(&db, "long", 20);
    ok(&assay(&["labels", "set", "long", &human()[20].0, "skip"], &db));
    let stored: Vec<Value> = serde_json::from_str(&ok(&assay(&["agree", "long", "--json"], &db))).unwrap();
    let file = tmp.path().join("labels.jsonl");
    ok(&assay(&["labels", "export", "long", "-o", file.to_str().unwrap()], &db));
    let from_file: Vec<Value> = serde_json::from_str(&ok(&assay(
        &["agree", "long", "--labels", file.to_str().unwrap(), "--labels-as", "correct", "--json"],
        &db,
    )))
    .unwrap();
    assert_eq!(stored, from_file);
    let judges: Vec<&str> = stored.iter().map(|a| a["judge"].as_str().unwrap()).collect();
    assert_eq!(judges, ["correct", "correctness@correct"]);
    // The `correct` row against the verdicts stored above: the skip is not compared.
    let correct = &stored[0];
    assert_eq!(correct["n"].as_u64(), Some(chosen.len() as u64));
    let items = jsonl(&trailgear().join("answers-long.jsonl"));
    let agreeing = chosen
        .iter()
        .filter(|(id, right)| {
            let position = items.iter().position(|a| a["id"] == id.as_str()).unwrap();
            let spread = (position % 4) as f64 * 0.1;
            let score = if *right { 0.85 - spread * 1.2 } else { 0.15 + spread * 1.2 };
            (score >= 0.5) == *right
        })
        .count();
    let accuracy = correct["accuracy"].as_f64().unwrap();
    assert!((accuracy - agreeing as f64 / chosen.len() as f64).abs() < 1e-12, "{accuracy} vs {agreeing}/{}", chosen.len());
    assert!(agreeing < chosen.len(), "the spread puts some answers on the wrong side");
}

#[test]
fn a_database_from_before_labels_is_migrated_with_its_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("runs.sqlite");
    store_run(&db, "long", 0);
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch("DROP TABLE labels; PRAGMA user_version = 3;").unwrap();
    }
    label_like_the_sample(&db, "long", 2);
    assert_eq!(listed(&db, "long")["labels"].as_array().unwrap().len(), 2);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert!(version >= 4, "{version}");
}

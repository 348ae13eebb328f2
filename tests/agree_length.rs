//! Length bias through the real CLI: runs of the sample's long answers (175-437 words, human
//! labels in `labels-long.jsonl`) stored in a real SQLite file, with `correct` verdicts of two
//! kinds of judge: one whose score follows the answer's length, one whose score follows the
//! labels. `assay agree` must give each one's Spearman with length and with the labels, mark
//! the first and not the second, and the run summary must carry the length Spearman too.

use std::path::Path;
use std::process::Command;

use assay::dataset::Question;
use assay::metrics::rank_correlation::spearman;
use assay::record::{Answer, ItemRecord, RunRecord, Verdict};
use assay::store::Store;
use serde_json::{json, Value};

fn jsonl(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn run_record(id: &str) -> RunRecord {
    serde_json::from_value(json!({
        "id": id, "name": id, "dataset": "trailgear", "dataset_root": "datasets/trailgear",
        "dataset_fingerprint": "f", "config": {"target": "answers:answers-long.jsonl", "top_k": 5, "seed": 0,
        "judges": ["correct"]}, "config_hash": id, "status": "finished", "total_items": 38,
        "created_at": "2026-11-26T00:00:00Z", "finished_at": "2026-11-26T00:00:01Z", "experiment": null
    }))
    .unwrap()
}

/// Stores one run: each long answer with a `correct` verdict scored by `score(words, label)`.
fn store_run(db: &Path, id: &str, score: impl Fn(usize, bool) -> f64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let dataset = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/trailgear");
    let questions: Vec<Question> = jsonl(&dataset.join("questions.jsonl")).into_iter().map(|q| serde_json::from_value(q).unwrap()).collect();
    let labels = jsonl(&dataset.join("labels-long.jsonl"));
    let mut store = Store::open(db).unwrap();
    store.insert_run(&run_record(id)).unwrap();
    let (mut scores, mut words, mut human) = (Vec::new(), Vec::new(), Vec::new());
    for (position, answer) in jsonl(&dataset.join("answers-long.jsonl")).iter().enumerate() {
        let qid = answer["id"].as_str().unwrap();
        let question = questions.iter().find(|q| q.id == qid).unwrap().clone();
        let right = labels.iter().any(|l| l["id"] == qid && l["label"] == "Yes");
        let text = answer["answer"].as_str().unwrap().to_string();
        let length = text.split_whitespace().count();
        let s = score(length, right);
        scores.push(s);
        words.push(length as f64);
        human.push(f64::from(u8::from(right)));
        let verdict = Verdict {
            label: Some(if s >= 0.5 { "Yes" } else { "No" }.into()),
            score: Some(s),
            distribution: [("Yes".to_string(), s), ("No".to_string(), 1.0 - s)].into(),
            ..Verdict::default()
        };
        let item = ItemRecord {
            question,
            position,
            answer: Some(Answer { text, ..Answer::default() }),
            error: None,
            metrics: Default::default(),
            verdicts: [("correct".to_string(), verdict)].into(),
            finished_at: "2026-11-26T00:00:01Z".into(),
        };
        store.record_item(id, &item).unwrap();
    }
    (scores, words, human)
}

fn assay(args: &[&str], db: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_assay")).args(args).env("ASSAY_DB", db).output().unwrap()
}

#[test]
fn agree_marks_a_judge_that_scores_length() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("runs.sqlite");
    let labels = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/trailgear/labels-long.jsonl");
    let labels = labels.to_str().unwrap();
    // Scores from length alone (175-437 words map onto 0.1-0.9), and from the label with a
    // little length-independent spread.
    let (length_scores, words, human) = store_run(&db, "by-length", |words, _| 0.1 + 0.8 * (words as f64 - 150.0) / 300.0);
    let (label_scores, label_words, _) = store_run(&db, "by-label", |words, right| {
        let jitter = ((words * 7919) % 100) as f64 / 1000.0;
        if right { 0.8 + jitter } else { 0.1 + jitter }
    });

    let out = assay(&["agree", "by-length", "--labels", labels, "--json"], &db);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    let correct = &rows[0];
    assert_eq!(correct["judge"], "correct");
    let rho_length = correct["length_spearman"].as_f64().unwrap();
    let want = spearman(&length_scores, &words).unwrap();
    assert!((rho_length - want).abs() < 1e-12 && rho_length > 0.99, "{rho_length} vs {want}");
    let rho_labels = correct["label_spearman"].as_f64().unwrap();
    let want = spearman(&human, &length_scores).unwrap();
    assert!((rho_labels - want).abs() < 1e-12, "{rho_labels} vs {want}");
    assert_eq!(correct["length_biased"], true, "{correct}");

    let out = assay(&["agree", "by-length", "--labels", labels], &db);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("length spearman"), "{text}");
    assert!(text.contains("warning: correct's score tracks answer length"), "{text}");

    let out = assay(&["agree", "by-label", "--labels", labels, "--json"], &db);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    let correct = &rows[0];
    let want = spearman(&label_scores, &label_words).unwrap();
    assert!((correct["length_spearman"].as_f64().unwrap() - want).abs() < 1e-12);
    assert!(correct["label_spearman"].as_f64().unwrap() > 0.8, "{correct}");
    assert_eq!(correct["length_biased"], false, "{correct}");
    let out = assay(&["agree", "by-label", "--labels", labels], &db);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("warning"));

    // The run's summary (what `show`, the reports and the app read) has it too.
    let file = tmp.path().join("report.json");
    let out = assay(&["export", "by-length", "--format", "json", "-o", file.to_str().unwrap()], &db);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let export: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let summary = &export["runs"][0]["summary"]["correct"];
    assert!((summary["length_spearman"].as_f64().unwrap() - rho_length).abs() < 1e-12, "{summary}");
    let file = tmp.path().join("report.md");
    let out = assay(&["export", "by-length", "--format", "md", "-o", file.to_str().unwrap()], &db);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let md = std::fs::read_to_string(&file).unwrap();
    assert!(md.contains(&format!("length ρ {rho_length:.2}")), "{md}");
}

//! `assay agree --calibrate` through the real CLI: a stored run of the sample's long answers
//! whose `correct` judge scores every right answer between 0.38 and 0.46 and every wrong one
//! between 0.10 and 0.30. At the judge's own 0.5 cut every right answer is a "No", so it
//! agrees with the human labels only on the wrong ones; a threshold fitted on the labels falls
//! between the two groups and agrees on all. The calibrated copy of the spec is written into
//! the judges folder given, and a later listing loads it as calibrated.

use std::path::Path;
use std::process::Command;

use assay::dataset::Question;
use assay::record::{Answer, ItemRecord, RunRecord, Verdict};
use assay::store::Store;
use serde_json::{json, Value};

fn jsonl(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn assay(args: &[&str], db: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_assay")).args(args).env("ASSAY_DB", db).output().unwrap()
}

/// Stores run `id` with a `correct` verdict per long answer; returns (right answers, wrong ones)
/// among the labelled items.
fn store_run(db: &Path, id: &str) -> (usize, usize) {
    let dataset = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/trailgear");
    let questions: Vec<Question> =
        jsonl(&dataset.join("questions.jsonl")).into_iter().map(|q| serde_json::from_value(q).unwrap()).collect();
    let labels = jsonl(&dataset.join("labels-long.jsonl"));
    let record: RunRecord = serde_json::from_value(json!({
        "id": id, "name": id, "dataset": "trailgear", "dataset_root": "datasets/trailgear",
        "dataset_fingerprint": "f", "config": {"target": "answers:answers-long.jsonl", "top_k": 5, "seed": 0,
        "judges": ["correct"]}, "config_hash": id, "status": "finished", "total_items": 38,
        "created_at": "2026-11-26T00:00:00Z", "finished_at": "2026-11-26T00:00:01Z", "experiment": null
    }))
    .unwrap();
    let mut store = Store::open(db).unwrap();
    store.insert_run(&record).unwrap();
    let (mut right, mut wrong) = (0, 0);
    for (position, answer) in jsonl(&dataset.join("answers-long.jsonl")).iter().enumerate() {
        let qid = answer["id"].as_str().unwrap();
        let question = questions.iter().find(|q| q.id == qid).unwrap().clone();
        let is_right = labels.iter().any(|l| l["id"] == qid && l["label"] == "Yes");
        let spread = (position % 5) as f64 * 0.02;
        let score = if is_right { 0.38 + spread } else { 0.10 + 2.0 * spread + 0.02 * (position % 2) as f64 };
        if labels.iter().any(|l| l["id"] == qid) {
            if is_right {
                right += 1
            } else {
                wrong += 1
            }
        }
        let verdict = Verdict {
            label: Some(if score >= 0.5 { "Yes" } else { "No" }.into()),
            score: Some(score),
            distribution: [("Yes".to_string(), score), ("No".to_string(), 1.0 - score)].into(),
            ..Verdict::default()
        };
        let item = ItemRecord {
            question,
            position,
            answer: Some(Answer { text: answer["answer"].as_str().unwrap().to_string(), ..Answer::default() }),
            verdicts: [("correct".to_string(), verdict)].into(),
            finished_at: "2026-11-26T00:00:01Z".into(),
            ..ItemRecord::default()
        };
        store.record_item(id, &item).unwrap();
    }
    (right, wrong)
}

#[test]
fn calibrate_fits_a_threshold_between_the_groups_and_writes_a_spec_copy_that_later_loads() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("runs.sqlite");
    let judges_dir = tmp.path().join("judges");
    let (right, wrong) = store_run(&db, "shifted");
    assert!(right > 0 && wrong > 0, "the labels hold both outcomes");
    let labels = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/trailgear/labels-long.jsonl");
    let out = assay(
        &["agree", "shifted", "--labels", labels.to_str().unwrap(), "--calibrate", "--json", "--judges-dir", judges_dir.to_str().unwrap()],
        &db,
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let calibrations: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let correct = calibrations.iter().find(|c| c["judge"] == "correct").expect("a calibration of correct");
    assert_eq!(correct["labels"].as_u64(), Some((right + wrong) as u64));
    let cut = correct["thresholds"][0].as_f64().unwrap();
    assert!((0.30..=0.38).contains(&cut), "the cut falls between the groups: {cut}");
    // At 0.5 only the wrong answers agree with the labels; at the fitted cut all of them.
    let before = correct["before"]["accuracy"].as_f64().unwrap();
    assert!((before - wrong as f64 / (right + wrong) as f64).abs() < 1e-9, "before: {before}");
    assert_eq!(correct["after"]["accuracy"].as_f64(), Some(1.0));
    let written = correct["written"].as_str().expect("a spec copy was written");
    assert!(Path::new(written).starts_with(&judges_dir), "{written}");
    let copy = std::fs::read_to_string(written).unwrap();
    assert!(copy.contains("thresholds"), "{copy}");

    // The copy replaces the built-in for every later use of that folder.
    let listed = assay(&["judges", "list", "--json", "--judges-dir", judges_dir.to_str().unwrap()], &db);
    assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
    let specs: Vec<Value> = serde_json::from_slice(&listed.stdout).unwrap();
    let spec = specs.iter().find(|s| s["name"] == "correct").expect("correct listed");
    let thresholds = spec["thresholds"].as_array().expect("the listed judge is calibrated");
    assert!((thresholds[0].as_f64().unwrap() - cut).abs() < 1e-9, "{spec}");
    assert_eq!(spec["calibrated_on"].as_u64(), Some((right + wrong) as u64));

    // The text table says the same without --json.
    let table = assay(
        &["agree", "shifted", "--labels", labels.to_str().unwrap(), "--calibrate", "--judges-dir", judges_dir.to_str().unwrap()],
        &db,
    );
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(text.contains("calibrated copy of correct"), "{text}");
}

//! Agreement statistics against scikit-learn / scipy values (scripts/judge_agreement_reference.py).

use std::collections::BTreeMap;

use assay::judge::agreement::{agreement, cohen_kappa, compare_with_labels, read_labels, HumanLabel, JudgedItem, Weights};
use assay::metrics::rank_correlation::spearman;
use serde::Deserialize;

#[derive(Deserialize)]
struct Case {
    name: String,
    k: usize,
    a: Vec<usize>,
    b: Vec<usize>,
    kappa: f64,
    kappa_linear: f64,
    kappa_quadratic: f64,
    spearman: f64,
}

fn confusion(k: usize, a: &[usize], b: &[usize]) -> Vec<Vec<usize>> {
    let mut m = vec![vec![0; k]; k];
    for (x, y) in a.iter().zip(b) {
        m[*x][*y] += 1;
    }
    m
}

#[test]
fn kappa_and_spearman_match_the_reference_implementations() {
    let text = std::fs::read_to_string("tests/fixtures/judge/agreement_reference.json").unwrap();
    let cases: Vec<Case> = serde_json::from_str(&text).unwrap();
    assert_eq!(cases.len(), 3);
    for case in cases {
        let m = confusion(case.k, &case.a, &case.b);
        let close = |got: Option<f64>, want: f64, what: &str| {
            let got = got.unwrap_or_else(|| panic!("{} {what}: undefined", case.name));
            assert!((got - want).abs() < 1e-9, "{} {what}: {got} vs {want}", case.name);
        };
        close(cohen_kappa(&m, Weights::None), case.kappa, "kappa");
        close(cohen_kappa(&m, Weights::Linear), case.kappa_linear, "linear kappa");
        close(cohen_kappa(&m, Weights::Quadratic), case.kappa_quadratic, "quadratic kappa");
        let a: Vec<f64> = case.a.iter().map(|&x| x as f64).collect();
        let b: Vec<f64> = case.b.iter().map(|&x| x as f64).collect();
        close(spearman(&a, &b), case.spearman, "spearman");
    }
}

#[test]
fn agreement_counts_confusion_and_accuracy() {
    let outcomes: Vec<String> = ["No", "Yes"].iter().map(|s| s.to_string()).collect();
    let pairs = [(0, 0), (0, 1), (1, 1), (1, 1)];
    let a = agreement("correct", &outcomes, &pairs, 2);
    assert_eq!(a.confusion, vec![vec![1, 1], vec![0, 2]]);
    assert_eq!(a.accuracy, 0.75);
    assert_eq!(a.unscored, 2);
    assert_eq!(a.n, 4);
}

/// A judge whose argmax says "Yes" to everything but whose scores rank the items right:
/// kappa is undefined, the score Spearman shows the ranking.
#[test]
fn score_spearman_shows_a_ranking_behind_a_constant_label() {
    let outcomes: BTreeMap<String, Vec<String>> = [("correct".to_string(), vec!["No".to_string(), "Yes".to_string()])].into();
    let said = [("q1", "No", Some(0.55)), ("q2", "No", Some(0.60)), ("q3", "Yes", Some(0.80)), ("q4", "Yes", Some(0.90))];
    let mut verdicts = BTreeMap::new();
    let mut labels = Vec::new();
    for (id, human, score) in said {
        let judged = JudgedItem { label: Some("Yes".into()), score, words: None };
        verdicts.insert(id.to_string(), BTreeMap::from([("correct".to_string(), judged)]));
        labels.push(HumanLabel { id: id.into(), judge: "correct".into(), label: human.into(), note: None });
    }
    // q5 was left unscored by the judge: counted, not compared.
    verdicts.insert("q5".into(), BTreeMap::from([("correct".to_string(), JudgedItem::default())]));
    labels.push(HumanLabel { id: "q5".into(), judge: "correct".into(), label: "Yes".into(), note: None });
    let a = &compare_with_labels(&outcomes, &verdicts, &labels).unwrap()[0];
    assert_eq!((a.n, a.unscored, a.accuracy), (4, 1, 0.5));
    assert_eq!(a.kappa, Some(0.0));
    let want = spearman(&[0.0, 0.0, 1.0, 1.0], &[0.55, 0.60, 0.80, 0.90]).unwrap();
    assert!((a.score_spearman.unwrap() - want).abs() < 1e-12 && want > 0.85, "{:?}", a.score_spearman);
}

#[test]
fn constant_raters_give_undefined_kappa_not_a_number() {
    assert_eq!(cohen_kappa(&[vec![5, 0], vec![0, 0]], Weights::None), None);
    assert_eq!(spearman(&[1.0, 1.0, 1.0], &[0.0, 1.0, 2.0]), None);
}

#[test]
fn sample_label_files_cover_every_question() {
    for file in ["datasets/trailgear/labels-careful.jsonl", "datasets/trailgear/labels-sloppy.jsonl"] {
        let labels = read_labels(std::path::Path::new(file)).unwrap();
        let correctness = labels.iter().filter(|l| l.judge == "correctness").count();
        assert!(correctness >= 80, "{file}: {correctness} correctness labels");
    }
}

#[test]
fn a_bad_label_line_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("labels.jsonl");
    std::fs::write(&path, "{\"id\": \"q1\", \"judge\": \"correct\", \"label\": \"Yes\"}\n{\"id\": 3}\n").unwrap();
    let error = read_labels(&path).unwrap_err().to_string();
    assert!(error.contains("labels.jsonl:2:"), "{error}");
}

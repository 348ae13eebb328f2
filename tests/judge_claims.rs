//! Claims mode on a real model: claim lists come from constrained decoding, so every item is
//! scored even with SmolLM2-135M (which, asked for a list in free text, listed no claims on
//! every answer); support is a probability; each text is read once and each claim costs only
//! its own tokens.

use crate::llm_common;

use std::collections::BTreeMap;

use assay::dataset::Question;
use assay::judge::spec::{load_all, select};
use assay::judge::choice::JudgePanel;
use assay::judge::reading::Reading;
use assay::record::Answer;

fn sample(n: usize) -> Vec<(Question, Answer)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/trailgear");
    let questions: BTreeMap<String, Question> = std::fs::read_to_string(root.join("questions.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Question>(l).unwrap())
        .map(|q| (q.id.clone(), q))
        .collect();
    std::fs::read_to_string(root.join("answers-sloppy.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|v| (questions[v["id"].as_str().unwrap()].clone(), v["answer"].as_str().unwrap().to_string()))
        .filter(|(q, _)| !q.refuse)
        .take(n)
        .map(|(q, text)| (q, Answer { text, ..Answer::default() }))
        .collect()
}

#[test]
fn claims_score_every_item_with_the_smallest_model() {
    let Some(model) = llm_common::smollm2() else { return };
    let specs = load_all(None).unwrap();
    let mut panel = JudgePanel::new(select(&specs, &["claims".to_string()]).unwrap(), model).unwrap();
    for (question, answer) in sample(4) {
        let verdicts = panel.judge(&question, &answer);
        for key in ["claims", "claims.recall", "claims.precision", "claims.recall_labels", "claims.precision_labels"] {
            let v = &verdicts[key];
            assert!(v.error.is_none(), "{} {key}: {:?}", question.id, v.error);
            let score = v.score.unwrap();
            assert!((0.0..=1.0).contains(&score), "{key}: {score}");
        }
        let explanation = verdicts["claims"].explanation.clone().unwrap();
        assert!(explanation.contains("reference claims"), "{explanation}");
        let (r, p) = (verdicts["claims.recall"].score.unwrap(), verdicts["claims.precision"].score.unwrap());
        let f1 = if r + p == 0.0 { 0.0 } else { 2.0 * r * p / (r + p) };
        assert!((verdicts["claims"].score.unwrap() - f1).abs() < 1e-12);
    }
}

#[test]
fn each_text_is_read_once_in_claims_mode() {
    let Some(model) = llm_common::smollm2() else { return };
    let specs = load_all(None).unwrap();
    let judges = select(&specs, &["claims".to_string()]).unwrap();
    let (question, mut answer) = sample(1).remove(0);
    // A long answer: 120 words of the stove's manual.
    let manual = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/trailgear/corpus/summit-stove-2.md")).unwrap();
    answer.text = manual.split_whitespace().filter(|w| !w.starts_with('#')).take(120).collect::<Vec<_>>().join(" ");
    let mut shared = JudgePanel::new(judges.clone(), model.clone()).unwrap();
    let mut old = JudgePanel::new(judges, model.clone()).unwrap();
    old.reading = Reading::TemplateOnly;
    let a = shared.judge(&question, &answer);
    let b = old.judge(&question, &answer);
    assert!(a["claims"].error.is_none() && b["claims"].error.is_none());
    // The claims may differ in a late token (the text is read in other chunks), so the bound is
    // on the reading itself: shared, the texts are read once, plus each claim's own tokens and
    // its question; re-read per claim, the answer text alone is read once per reference claim.
    let text_tokens = model.tokenizer.encode_plain(&answer.text).unwrap().len();
    eprintln!("tokens read: {} shared, {} re-reading ({} answer tokens)", shared.tokens_read, old.tokens_read, text_tokens);
    assert!(shared.tokens_read < old.tokens_read, "{} vs {}", shared.tokens_read, old.tokens_read);
    let claims_text: usize = a["claims"].explanation.as_deref().unwrap().len() / 2;
    assert!(shared.tokens_read <= 2 * (text_tokens + 40) + claims_text + 300, "{}", shared.tokens_read);
}

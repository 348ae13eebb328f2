//! Statements mode on a real model (SmolLM2 for speed): every answer statement and every
//! reference statement is checked and kept on the verdict, F1 is made from the two means, a
//! number the reference contradicts counts as unsupported whatever the model says, and the
//! shared start of the checks (text and question) is read once per side — once for both
//! `correct` and `supported` when a long answer is judged by both.

use crate::llm_common;

use std::collections::BTreeMap;

use assay::dataset::Question;
use assay::judge::spec::{load_all, select};
use assay::judge::choice::JudgePanel;
use assay::judge::reading::Reading;
use assay::record::StatementSide;
use assay::record::Answer;

fn questions() -> BTreeMap<String, Question> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/trailgear");
    std::fs::read_to_string(root.join("questions.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Question>(l).unwrap())
        .map(|q| (q.id.clone(), q))
        .collect()
}

fn long_answers(n: usize) -> Vec<(Question, Answer)> {
    let questions = questions();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/trailgear");
    std::fs::read_to_string(root.join("answers-long.jsonl"))
        .unwrap()
        .lines()
        .take(n)
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|v| (questions[v["id"].as_str().unwrap()].clone(), Answer { text: v["answer"].as_str().unwrap().to_string(), ..Answer::default() }))
        .collect()
}

fn panel(names: &[&str], model: std::sync::Arc<assay::llm::model::LanguageModel>) -> JudgePanel {
    let specs = load_all(None).unwrap();
    JudgePanel::new(select(&specs, &names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap(), model).unwrap()
}

#[test]
fn every_statement_of_both_sides_is_checked_and_kept() {
    let Some(model) = llm_common::smollm2() else { return };
    let mut panel = panel(&["supported"], model);
    for (question, answer) in long_answers(2) {
        let verdicts = panel.judge(&question, &answer);
        let main = &verdicts["supported"];
        assert!(main.error.is_none(), "{}: {:?}", question.id, main.error);
        let sides = |side| main.statements.iter().filter(|s| s.side == side).count();
        let answer_statements = assay::judge::statement_split::split_statements(&answer.text).len();
        assert_eq!(sides(StatementSide::Answer), answer_statements.min(assay::judge::statements::MAX_STATEMENTS));
        assert!(sides(StatementSide::Reference) >= 1);
        assert!(main.statements.iter().all(|s| (0.0..=1.0).contains(&s.supported)));
        let (p, r) = (verdicts["supported.precision"].score.unwrap(), verdicts["supported.recall"].score.unwrap());
        let f1 = if p + r == 0.0 { 0.0 } else { 2.0 * p * r / (p + r) };
        assert!((main.score.unwrap() - f1).abs() < 1e-12, "{} vs {f1}", main.score.unwrap());
        assert_eq!(main.label.as_deref(), Some(if f1 >= 0.5 { "Yes" } else { "No" }));
    }
}

#[test]
fn a_contradicted_number_is_unsupported_whatever_the_model_says() {
    let Some(model) = llm_common::smollm2() else { return };
    let questions = questions();
    // A question whose reference gives a number: the answer repeats the reference with the
    // number changed, so the model would read it as nearly the same text.
    let question = questions
        .values()
        .find(|q| q.answer.as_deref().is_some_and(|a| a.split_whitespace().any(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))))
        .unwrap()
        .clone();
    let reference = question.answer.clone().unwrap();
    let changed: String = reference
        .split_whitespace()
        .map(|w| match w.chars().next() {
            Some(c) if c.is_ascii_digit() => w.replacen(c, if c == '9' { "1" } else { "9" }, 1),
            _ => w.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ");
    let mut panel = panel(&["supported"], model);
    let verdicts = panel.judge(&question, &Answer { text: changed.clone(), ..Answer::default() });
    let vetoed: Vec<_> = verdicts["supported"].statements.iter().filter(|s| s.number_conflict.is_some()).collect();
    assert!(!vetoed.is_empty(), "{reference} / {changed}: {:?}", verdicts["supported"].statements);
    assert!(vetoed.iter().all(|s| s.supported == 0.0));
    let same = panel.judge(&question, &Answer { text: reference.clone(), ..Answer::default() });
    assert!(same["supported"].statements.iter().all(|s| s.number_conflict.is_none()), "{:?}", same["supported"].statements);
}

#[test]
fn the_shared_start_is_read_once_and_shared_with_correct() {
    let Some(model) = llm_common::smollm2() else { return };
    let (question, answer) = long_answers(1).remove(0);
    let mut shared = panel(&["supported"], model.clone());
    let mut whole = panel(&["supported"], model.clone());
    whole.reading = Reading::Whole;
    let a = shared.judge(&question, &answer);
    let b = whole.judge(&question, &answer);
    let checks = a["supported"].statements.len();
    eprintln!("tokens read: {} shared, {} whole, {checks} checks", shared.tokens_read, whole.tokens_read);
    assert!(checks >= 3);
    assert!(shared.tokens_read * 2 < whole.tokens_read, "{} vs {}", shared.tokens_read, whole.tokens_read);
    // Same verdicts either way, to rounding (other chunkings of one prompt).
    for (x, y) in a["supported"].statements.iter().zip(&b["supported"].statements) {
        assert!((x.supported - y.supported).abs() < 0.06, "{} vs {}", x.supported, y.supported);
    }
    // A long answer judged by `correct` and `supported` in one panel: the answer is read once
    // for both (their prompts start alike), so the pair costs less than the two apart.
    let mut both = panel(&["correct", "supported"], model.clone());
    let mut correct_alone = panel(&["correct"], model.clone());
    let mut supported_alone = panel(&["supported"], model);
    both.judge(&question, &answer);
    correct_alone.judge(&question, &answer);
    supported_alone.judge(&question, &answer);
    let answer_tokens = shared.model().tokenizer.encode_plain(&answer.text).unwrap().len();
    eprintln!(
        "correct+supported {} against {} + {} apart ({answer_tokens} answer tokens)",
        both.tokens_read, correct_alone.tokens_read, supported_alone.tokens_read
    );
    assert!(both.tokens_read + answer_tokens <= correct_alone.tokens_read + supported_alone.tokens_read + 20);
}

#[test]
fn an_item_without_a_reference_is_unscored_with_the_reason() {
    let Some(model) = llm_common::smollm2() else { return };
    let question = questions().into_values().find(|q| q.refuse).unwrap();
    let mut panel = panel(&["supported"], model);
    let verdicts = panel.judge(&question, &Answer { text: "The manual says to keep the stove upright at all times.".into(), ..Answer::default() });
    for key in ["supported", "supported.precision", "supported.recall"] {
        assert!(verdicts[key].score.is_none() && verdicts[key].error.as_deref().unwrap().contains("refusal"), "{key}: {:?}", verdicts[key]);
    }
}

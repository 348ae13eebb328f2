//! The rule that fails answers stating nothing without asking the judge model
//! (`judge::nothing_stated`), against every answer people labelled in `datasets/`: it must
//! never catch a right answer, and it must catch the empty answers small models really write.

use assay::dataset::{load_dataset, Question};
use assay::judge::choice::JudgePanel;
use assay::judge::nothing_stated::{fails_without_model, NothingStated};
use assay::judge::prompt::item_variables;
use assay::judge::spec::{load_all, select, JudgeSpec};
use assay::metrics::refusal::is_refusal;
use assay::record::{Answer, FLAG_STATES_NOTHING};
use assay::targets::load_answers_file;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::llm_common;

/// What the built-in `correct` judge does with this answer before any model is asked.
fn caught(correct: &JudgeSpec, question: &Question, answer: &str) -> Option<NothingStated> {
    fails_without_model(correct, &item_variables(question, &Answer { text: answer.to_string(), ..Answer::default() }))
}

fn correct_spec() -> JudgeSpec {
    load_all(None).expect("built-in judges").remove("correct").expect("correct")
}

fn dataset_root(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets").join(name)
}

/// `id -> label` of one labels file's `correct` labels.
fn correct_labels(file: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    text.lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|v| v["judge"] == "correct")
        .map(|v| (v["id"].as_str().unwrap_or_default().to_string(), v["label"].as_str().unwrap_or_default().to_string()))
        .collect()
}

#[test]
fn no_reference_and_no_answer_labelled_right_states_nothing() {
    let sets = [
        ("trailgear", vec![("answers-careful.jsonl", "labels-careful.jsonl"), ("answers-sloppy.jsonl", "labels-sloppy.jsonl"), ("answers-long.jsonl", "labels-long.jsonl")]),
        ("realdocs-hard", vec![("answers-long.jsonl", "labels-long.jsonl")]),
        ("budgets", vec![("answers-long.jsonl", "labels-long.jsonl")]),
        ("realdocs", vec![("answers-long.jsonl", "labels-long.jsonl")]),
    ];
    let correct = correct_spec();
    assert!(correct.nothing_stated_fails);
    let (mut right, mut declining) = (0, 0);
    for (name, files) in sets {
        let root = dataset_root(name);
        let dataset = load_dataset(&root).expect(name);
        for q in &dataset.questions {
            // A reference is a right answer; one that declines makes declining right.
            if let Some(reference) = &q.answer {
                assert_eq!(caught(&correct, q, reference), None, "{name} {}: its reference {reference:?}", q.id);
                if is_refusal(reference) {
                    assert_eq!(caught(&correct, q, "I can't answer that from the documents."), None, "{name} {}", q.id);
                    declining += 1;
                }
            }
        }
        let questions: BTreeMap<&str, &Question> = dataset.questions.iter().map(|q| (q.id.as_str(), q)).collect();
        for (answers_file, labels_file) in files {
            let answers = load_answers_file(&root.join(answers_file), &dataset).expect(answers_file);
            for (id, _) in correct_labels(&root.join(labels_file)).into_iter().filter(|(_, label)| label == "Yes") {
                let answer = &answers[&id].answer;
                assert_eq!(caught(&correct, questions[id.as_str()], answer), None, "{name} {answers_file} {id}: {answer:?}");
                right += 1;
            }
        }
    }
    assert!(right > 150 && declining > 0, "{right} right answers read, {declining} references that decline");
}

/// The real answers of SmolLM2 and the 0.5B over the R FAQ's PDFs (PAIRS.md): every answer the
/// rule catches is one that gives no key fact (the pair is a tie, or the other answer is the
/// better), and it catches the kinds small models write (lead-ins, refusals, the question).
#[test]
fn the_real_answers_it_catches_give_no_key_fact() {
    let correct = correct_spec();
    let root = dataset_root("realdocs");
    let dataset = load_dataset(&root).expect("realdocs");
    let text = std::fs::read_to_string(root.join("pairs-smollm2-qwen0.5b.jsonl")).expect("pairs");
    let mut found = Vec::new();
    for line in text.lines() {
        let pair: serde_json::Value = serde_json::from_str(line).expect("pair");
        let id = pair["id"].as_str().expect("id");
        let question = dataset.questions.iter().find(|q| q.id == id).expect("question");
        for (side, better_side) in [("answer_a", "a"), ("answer_b", "b")] {
            let answer = pair[side].as_str().expect("answer");
            // Read as the judge reads it: a looping answer once.
            if let Some(kind) = caught(&correct, question, answer) {
                assert_ne!(pair["better"], better_side, "{id} {side} was labelled the better answer: {answer:?}");
                found.push((id.to_string(), side, kind));
            }
        }
    }
    for kind in [NothingStated::LeadIn, NothingStated::Refusal, NothingStated::Questions] {
        assert!(found.iter().any(|(_, _, k)| *k == kind), "no {kind:?} among {found:?}");
    }
    assert!(found.len() >= 8, "{found:?}");
    eprintln!("caught {} of 60: {found:?}", found.len());
}

/// Through the judges on a real model (SmolLM2): `correct`, `supported` and `claims` fail a
/// lead-in without reading it, `abstention` (no such rule in its spec) still asks the model, and a
/// refusal where the question expects one is left to the model.
#[test]
fn judges_fail_an_answer_stating_nothing_without_reading_it() {
    let Some(model) = llm_common::smollm2() else { return };
    let specs = load_all(None).expect("built-in judges");
    let panel_of = |names: &[&str]| {
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        JudgePanel::new(select(&specs, &names).expect("judges"), model.clone()).expect("panel")
    };
    let (mut panel, mut abstention_alone) = (panel_of(&["correct", "supported", "claims", "abstention"]), panel_of(&["abstention"]));
    let question: Question =
        serde_json::from_str(r#"{"id": "q013", "question": "What is the pore size of the AquaPure 500 membrane?", "answer": "0.1 micron."}"#).expect("question");
    let answer = |text: &str| Answer { text: text.to_string(), ..Answer::default() };

    let first = panel.judge(&question, &answer("The membrane has 0.1-micron pores."));
    assert!(first["correct"].explanation.is_none() && first["correct"].score.is_some_and(|s| s > 0.0), "{:?}", first["correct"]);
    abstention_alone.judge(&question, &answer("The membrane has 0.1-micron pores."));
    let read_before = (panel.tokens_read, abstention_alone.tokens_read);
    let text = "The answer to this question is:\n\nThe answer to this question is:\n\nThe answer to this question is:";
    let lead_in = panel.judge(&question, &answer(text));
    abstention_alone.judge(&question, &answer(text));
    // Only abstention read the lead-in: the panel read what abstention alone reads.
    assert_eq!(panel.tokens_read - read_before.0, abstention_alone.tokens_read - read_before.1);
    for judge in ["correct", "supported"] {
        let verdict = &lead_in[judge];
        assert_eq!((verdict.score, verdict.label.as_deref(), verdict.passed), (Some(0.0), Some("No"), Some(false)), "{judge}: {verdict:?}");
        assert!(verdict.explanation.as_deref().is_some_and(|e| e.contains("answer")), "{judge}: {verdict:?}");
        assert_eq!(verdict.flags, vec![FLAG_STATES_NOTHING.to_string()], "{judge}");
    }
    // A claims judge has no label; it scores 0 on every key without making up claims.
    for key in ["claims", "claims.recall", "claims.precision"] {
        assert_eq!(lead_in[key].score, Some(0.0), "{key}: {:?}", lead_in[key]);
        assert!(lead_in[key].explanation.as_deref().is_some_and(|e| e.contains("not asked")), "{key}: {:?}", lead_in[key]);
    }
    assert!(lead_in["abstention"].score.is_some() && lead_in["abstention"].explanation.is_none(), "{:?}", lead_in["abstention"]);

    let expects_refusal: Question =
        serde_json::from_str(r#"{"id": "q099", "question": "What does the AquaPure 500 cost?", "refuse": true}"#).expect("question");
    let refusal = panel.judge(&expects_refusal, &answer("I can't answer that from the documents."));
    assert!(refusal["correct"].explanation.is_none() && refusal["correct"].score.is_some_and(|s| s > 0.0), "{:?}", refusal["correct"]);
}

//! Choice-mode judging on a real GGUF model (SmolLM2-135M). The model is too small to judge
//! well; these tests check the mechanics: distributions, prefix reuse, unscored on overflow.

use assay::dataset::Question;
use assay::judge::spec::{load_all, select, JudgeSpec};
use assay::judge::choice::JudgePanel;
use assay::judge::prompt::item_variables;
use assay::judge::reading::Reading;
use assay::llm::chat_template::ChatMessage;
use assay::metrics::numbers::written_as_the_reference;
use assay::record::{Answer, RetrievedChunk};
use crate::common::numbered_sentences;
use crate::llm_common;

fn item() -> (Question, Answer) {
    let question: Question = serde_json::from_str(
        r#"{"id": "q013", "question": "What is the pore size of the AquaPure 500 membrane?", "answer": "0.1 micron."}"#,
    )
    .unwrap();
    let answer = Answer {
        text: "The hollow-fibre membrane has 0.1-micron pores.".into(),
        retrieved: vec![RetrievedChunk {
            chunk_id: "aquapure-500#2".into(),
            doc: "aquapure-500".into(),
            score: 3.0,
            text: "The membrane has a pore size of 0.1 micron.".into(),
        }],
        ..Answer::default()
    };
    (question, answer)
}

fn panel(names: &[&str]) -> Option<JudgePanel> {
    let model = llm_common::smollm2()?;
    let specs = load_all(None).unwrap();
    let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    Some(JudgePanel::new(select(&specs, &names).unwrap(), model).unwrap())
}

#[test]
fn choice_verdicts_are_distributions_and_shared_reading_changes_nothing() {
    let judges = ["correctness", "correct", "faithfulness", "abstention"];
    let Some(mut reusing) = panel(&judges) else { return };
    let Some(mut fresh) = panel(&judges) else { return };
    let Some(mut template_only) = panel(&judges) else { return };
    fresh.reading = Reading::Whole;
    template_only.reading = Reading::TemplateOnly;
    let (question, answer) = item();
    let with_reuse = reusing.judge(&question, &answer);
    let read_once = reusing.tokens_read;
    let again = reusing.judge(&question, &answer);
    let without = fresh.judge(&question, &answer);
    template_only.judge(&question, &answer);
    // Whole prompts: every token of every judge's prompt. Shared: the item once (correct and
    // correctness share question, reference and answer).
    let prompts = fresh.prompt_tokens_of(&question, &answer);
    let whole: usize = prompts.values().map(|t| t.as_ref().unwrap().len()).sum();
    assert_eq!(fresh.tokens_read, whole);
    assert!(template_only.tokens_read < whole, "the template text is read once");
    assert!(read_once < template_only.tokens_read, "the item is read once: {read_once} vs {}", template_only.tokens_read);
    assert!(reusing.tokens_read - read_once < read_once, "the second item reuses the template state");
    for name in judges {
        let v = &with_reuse[name];
        assert!(v.error.is_none(), "{name}: {:?}", v.error);
        let total: f64 = v.distribution.values().sum();
        assert!((total - 1.0).abs() < 1e-9, "{name}: distribution sums to {total}");
        let score = v.score.unwrap();
        assert!((0.0..=1.0).contains(&score));
        let label = v.label.as_ref().unwrap();
        let max = v.distribution.values().cloned().fold(0.0, f64::max);
        assert_eq!(v.distribution[label], max, "{name}: the label is the argmax");
        for (outcome, p) in &v.distribution {
            let q = without[name].distribution[outcome];
            // Same tokens, read in different batches (prefix + rest vs. all at once): the
            // activations are re-quantized to 8 bits per row before each quantized matmul, so a
            // last-bit difference in summation order can flip a rounding step and 30 layers
            // carry it on. Measured up to 0.004 here and 0.011 on the CI machine's CPU (its gemm
            // picks other kernels) while every Q8_0 product summed as candle does; 0.033 on
            // AVX-512 VNNI, where prompts of 8 rows or more take our panels, which sum in
            // another order than the rows of a short rest. llm_model.rs bounds the logits
            // themselves on a short prompt.
            assert!((p - q).abs() < 0.06, "{name} {outcome}: {p} with reuse, {q} without");
            assert_eq!(*p, again[name].distribution[outcome], "{name}: same item, same scores");
        }
    }
}

/// An answer past the judge model's window (30,000 words against SmolLM2's 8,192 tokens) is cut
/// by the stated rule (`judge::context_fit`) and scored, its verdict flagged as cut; it used to
/// be stored unscored.
#[test]
fn an_item_that_overflows_the_context_is_cut_scored_and_flagged() {
    let Some(mut panel) = panel(&["correct"]) else { return };
    let (question, mut answer) = item();
    answer.text = numbered_sentences("the pores are tiny", 6000);
    let verdicts = panel.judge(&question, &answer);
    let v = &verdicts["correct"];
    assert!(v.error.is_none() && v.score.is_some() && v.label.is_some(), "{v:?}");
    assert!(v.flags.iter().any(|f| f == assay::record::FLAG_CUT_TO_FIT), "{:?}", v.flags);
}

#[test]
fn a_judge_without_its_input_is_unscored() {
    let Some(mut panel) = panel(&["faithfulness"]) else { return };
    let (question, mut answer) = item();
    answer.retrieved.clear();
    let v = &panel.judge(&question, &answer)["faithfulness"];
    assert!(v.score.is_none());
    assert!(v.error.as_deref().unwrap().contains("context"), "{:?}", v.error);
}

/// A judge with `baseline = "question"` also reads its prompt with the question in place of
/// the answer and divides by that distribution: the baseline it reports is what the same
/// judge without a baseline says of the question as an answer, and its distribution is the
/// division of the two. Shared reading reads the start both prompts have once.
#[test]
fn a_baseline_judge_divides_by_the_question_read_as_the_answer() {
    let Some(model) = llm_common::smollm2() else { return };
    let dir = tempfile::tempdir().unwrap();
    let plain = load_all(None).unwrap()["correct"].clone();
    std::fs::write(dir.path().join("correct.md"), &plain.template).unwrap();
    std::fs::write(
        dir.path().join("vs_nothing.toml"),
        "name = \"vs_nothing\"\nprompt = \"correct.md\"\noutcomes = [\"No\", \"Yes\"]\ninputs = [\"question\", \"reference\", \"answer\"]\npass = \"Yes\"\nbaseline = \"question\"\n",
    )
    .unwrap();
    let specs = load_all(Some(dir.path())).unwrap();
    let pair = select(&specs, &["correct".into(), "vs_nothing".into()]).unwrap();
    let mut whole = JudgePanel::new(pair.clone(), model.clone()).unwrap();
    let mut shared = JudgePanel::new(pair, model.clone()).unwrap();
    // The model's own reading of the question as an answer: without the rule that fails an
    // answer of only questions before any model is asked (`nothing_stated`).
    let mut alone = JudgePanel::new(vec![JudgeSpec { nothing_stated_fails: false, ..plain }], model).unwrap();
    // Whole prompts, so every figure below is read in the same batches and compares exactly.
    whole.reading = Reading::Whole;
    alone.reading = Reading::Whole;
    let (question, answer) = item();
    let verdicts = whole.judge(&question, &answer);
    let (raw, against) = (&verdicts["correct"], &verdicts["vs_nothing"]);
    assert!(against.error.is_none(), "{:?}", against.error);

    let echo = Answer { text: question.question.clone(), ..answer.clone() };
    let of_question = &alone.judge(&question, &echo)["correct"];
    let baseline = against.baseline.as_ref().expect("the baseline distribution is kept");
    assert!((baseline["Yes"] - of_question.distribution["Yes"]).abs() < 1e-9, "{baseline:?} vs {:?}", of_question.distribution);
    let (p, b) = (raw.distribution["Yes"], baseline["Yes"]);
    let divided = (p / b) / (p / b + (1.0 - p) / (1.0 - b));
    assert!((against.distribution["Yes"] - divided).abs() < 1e-9, "{:?}", against.distribution);
    assert_eq!(against.label.as_deref() == Some("Yes"), p > b);
    assert_eq!(against.passed, Some(p > b));
    assert!(raw.baseline.is_none());

    // Three prompts (correct, vs_nothing, its baseline) share the template and the question.
    let shared_verdicts = shared.judge(&question, &answer);
    assert!(shared_verdicts["vs_nothing"].baseline.is_some());
    assert!(shared.tokens_read < whole.tokens_read, "{} read shared, {} whole", shared.tokens_read, whole.tokens_read);
}

/// Every short sample answer reaches the judge as its prompt text tokenized whole, the way
/// judges tokenized before values were marked and stripped (2026-11-23, when `correct` agreed
/// with the labels at 0.811): an answer without marker text loses nothing and gains no token
/// boundary, so a change in its verdict since then comes from the arithmetic, not the prompt.
/// The Qwen 0.5B has the default judge's tokenizer; SmolLM2 another.
#[test]
fn sample_answers_reach_the_judge_as_their_text_tokenized_whole() {
    let models: Vec<_> = ["smollm2-135m-instruct", "qwen2.5-coder-0.5b-instruct"].iter().filter_map(|id| llm_common::installed(id)).collect();
    let correct = load_all(None).unwrap()["correct"].clone();
    let dataset = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/trailgear");
    let lines = |file: &str| -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(dataset.join(file)).unwrap();
        text.lines().map(|line| serde_json::from_str(line).unwrap()).collect()
    };
    let questions: std::collections::BTreeMap<String, Question> = lines("questions.jsonl")
        .into_iter()
        .map(|q| (q["id"].as_str().unwrap().to_string(), serde_json::from_value(q).unwrap()))
        .collect();
    for model in models {
        let panel = JudgePanel::new(vec![correct.clone()], model.clone()).unwrap();
        // The reference: the whole prompt tokenized in one go with control-token matching on.
        let mut whole_text_tokenizer = (*model.tokenizer.tokenizer).clone();
        whole_text_tokenizer.set_encode_special_tokens(false);
        let mut checked = 0;
        for set in ["answers-careful.jsonl", "answers-sloppy.jsonl"] {
            for row in lines(set) {
                let id = row["id"].as_str().unwrap();
                let answer = Answer { text: row["answer"].as_str().unwrap().to_string(), ..Answer::default() };
                let ours = panel.prompt_tokens_of(&questions[id], &answer).remove("correct").unwrap().unwrap();
                // The values as written, but for the numbers the answer states as the reference
                // does, which the judge reads in the reference's writing (`4.5 hours` as `4 hours
                // 30 minutes`; 19 careful and 2 sloppy answers).
                let mut values = item_variables(&questions[id], &answer);
                let (answer_read, reference_read) = written_as_the_reference(&values["answer"], &values["reference"]);
                values.insert("answer", answer_read);
                values.insert("reference", reference_read);
                let rendered = correct.render(&values).unwrap();
                let text = model.chat_prompt(&[ChatMessage::user(rendered)]).unwrap();
                let tokenizer = &model.tokenizer;
                let mut whole: Vec<u32> = tokenizer.bos_id.filter(|_| tokenizer.add_bos).into_iter().collect();
                whole.extend_from_slice(whole_text_tokenizer.encode_fast(text.as_str(), false).unwrap().get_ids());
                assert_eq!(ours, whole, "{}: {set} {id}", model.name);
                checked += 1;
            }
        }
        assert_eq!(checked, 180, "{}", model.name);
    }
}

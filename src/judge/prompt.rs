//! A judge's prompt for one item: the item's values (without chat-marker text and marked
//! untrusted, so no answer can write a turn into the prompt) and the tokens of the one-message
//! chat the judge reads.

use std::collections::BTreeMap;

use super::injection::without_injection;
use super::repetition::without_repeats;
use super::spec::{Baseline, JudgeSpec};
use crate::dataset::Question;
use crate::llm::chat_template::ChatMessage;
use crate::llm::error::LlmError;
use crate::llm::model::LanguageModel;
use crate::llm::prompt_text::untrusted;
use crate::llm::prompt_text::without_chat_markers;
use crate::metrics::numbers::written_as_the_reference;
use crate::record::Answer;

/// What the reference is shown as when the right behaviour is to decline.
pub(super) const NO_REFERENCE: &str = "(The documents do not cover this question; the right reply is to say so and not guess.)";

/// The template variables of one item.
pub fn item_variables<'a>(question: &Question, answer: &Answer) -> BTreeMap<&'a str, String> {
    let mut variables = question_variables(question);
    variables.insert("answer", answer_as_read(answer));
    let context = answer.retrieved.iter().map(|c| format!("[{}] {}", c.chunk_id, c.text)).collect::<Vec<_>>().join("\n\n");
    if !context.is_empty() {
        variables.insert("context", context);
    }
    variables
}

/// The question's own values: the question, its reference (or what stands for a refusal) and
/// its golden context where it has one. Every judge's prompt, one answer or two, starts here.
pub(super) fn question_variables<'a>(question: &Question) -> BTreeMap<&'a str, String> {
    let mut variables = BTreeMap::new();
    variables.insert("question", question.question.clone());
    variables.insert("reference", question.answer.clone().unwrap_or_else(|| NO_REFERENCE.to_string()));
    if let Some(gold) = &question.context {
        variables.insert("gold_context", gold.clone());
    }
    variables
}

/// An answer's text as every judge reads it: a looping answer read once (`repetition`).
pub(super) fn answer_as_read(answer: &Answer) -> String {
    without_repeats(&answer.text).0
}

/// The values a judge that compares the answer with the reference reads: each number of the
/// answer that states a value of the reference written as the reference writes it, and
/// abbreviated periods spelled out on both sides (`written_as_the_reference`). The judge model
/// does not see that `4,200 million` is `$4.2 billion` or `4.5 hours` is `4 hours 30 minutes`
/// (a right answer in other scales: `facts` 0.545 as written, 0.768 read this way, default
/// judge, docs/judges.md); the numeric check does, and a number stating another value is left
/// as written, for the model and the check to catch. A judge that does not read both (`faithfulness` reads the context) gets the values
/// as they are.
pub(super) fn numbers_as_the_reference<'a>(spec: &JudgeSpec, variables: &BTreeMap<&'a str, String>) -> BTreeMap<&'a str, String> {
    let mut values = variables.clone();
    let reads = |input: &str| spec.inputs.iter().any(|i| i == input);
    let Some(reference) = variables.get("reference").filter(|r| reads("reference") && *r != NO_REFERENCE) else {
        return values;
    };
    // One answer, or the two a pairwise judge reads side by side.
    for key in ["answer", "answer_1", "answer_2"] {
        if let Some(answer) = variables.get(key).filter(|_| reads(key)) {
            let (answer, reference) = written_as_the_reference(answer, reference);
            values.insert(key, answer);
            values.insert("reference", reference);
        }
    }
    values
}

/// The values of the stand-in item a judge with a baseline also reads (None without one).
pub(super) fn baseline_variables<'a>(spec: &JudgeSpec, variables: &BTreeMap<&'a str, String>) -> Option<BTreeMap<&'a str, String>> {
    match spec.baseline? {
        Baseline::Question => {
            let mut stand_in = variables.clone();
            stand_in.insert("answer", variables.get("question")?.clone());
            Some(stand_in)
        }
    }
}

/// The item's values for a judge's prompt template: without the sentences the injection
/// detector flags (`injection::without_injection`: the item is flagged, and the judge reads
/// what the answer tells the user), without chat-marker text (the model's own
/// control tokens' and every common format's, to a fixed point: read as text, a forged end of
/// turn still sways a judge) and marked untrusted (never control tokens). Values are not
/// fenced: a quoted block stating its length and datamarking both cost the 1.5B judge
/// agreement with the sample labels (docs/judge-injection.md) and the forged turns stay
/// inert without them.
pub fn marked<'a>(model: &LanguageModel, variables: &BTreeMap<&'a str, String>) -> BTreeMap<&'a str, String> {
    variables.iter().map(|(k, v)| (*k, untrusted(&model.tokenizer.without_control_text(&without_injection(v))))).collect()
}

/// The item's values for a served judge's prompt template: without the chat markers of every
/// common format (the server's vocabulary is not ours to read) and marked untrusted; the
/// server client strips marker text from marked values again (`prompt_text::for_server`).
pub fn marked_for_server<'a>(variables: &BTreeMap<&'a str, String>) -> BTreeMap<&'a str, String> {
    variables.iter().map(|(k, v)| (*k, untrusted(&without_chat_markers(&without_injection(v))))).collect()
}

/// Token ids of a one-message chat whose user text is `rendered` (values already marked).
pub(super) fn user_prompt_tokens(model: &LanguageModel, rendered: &str) -> Result<Vec<u32>, LlmError> {
    let text = model.chat_prompt(&[ChatMessage::user(rendered.to_string())])?;
    model.encode_prompt(&text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::spec::builtin;

    fn values(reference: &str, answer: &str) -> BTreeMap<&'static str, String> {
        [("question", "What was revenue?"), ("reference", reference), ("answer", answer), ("context", "Revenue: 4,213 million.")]
            .into_iter()
            .map(|(k, v)| (k, v.to_string()))
            .collect()
    }

    #[test]
    fn a_judge_of_answer_against_reference_reads_the_answers_numbers_as_the_reference_writes_them() {
        let correct = builtin("correct").expect("built-in");
        let read = numbers_as_the_reference(&correct, &values("Revenue was $4.2 billion.", "Revenue was 4,213 million dollars, up 12 percent."));
        // The same value in the reference's writing; a value the reference does not state stays.
        assert_eq!(read["answer"], "Revenue was $4.2 billion, up 12 percent.");
        assert_eq!(read["reference"], "Revenue was $4.2 billion.");
        assert_eq!(read["context"], "Revenue: 4,213 million.");
        // Another value is not made to look like the reference's.
        let wrong = numbers_as_the_reference(&correct, &values("Revenue was $4.2 billion.", "Revenue was $4.9 billion."));
        assert_eq!(wrong["answer"], "Revenue was $4.9 billion.");
        // A judge that reads the context, not the reference, sees the answer as written.
        let faithfulness = builtin("faithfulness").expect("built-in");
        let as_written = values("Revenue was $4.2 billion.", "Revenue was 4,213 million dollars.");
        assert_eq!(numbers_as_the_reference(&faithfulness, &as_written), as_written);
        // Both answers of a pairwise judge.
        let better = builtin("better").expect("built-in");
        let mut pair = values("Revenue was $4.2 billion.", "");
        pair.remove("answer");
        pair.insert("answer_1", "It was 4,200 million dollars.".into());
        pair.insert("answer_2", "It was $4.2bn in FY2023.".into());
        let read = numbers_as_the_reference(&better, &pair);
        assert_eq!((read["answer_1"].as_str(), read["answer_2"].as_str()), ("It was $4.2 billion.", "It was $4.2 billion in fiscal year 2023."));
        // Nor is anything rewritten against the stand-in for a refusal.
        let refusal = values(NO_REFERENCE, "In FY2023 it was 4 percent.");
        assert_eq!(numbers_as_the_reference(&correct, &refusal), refusal);
    }
}

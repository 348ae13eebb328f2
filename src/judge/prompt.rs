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

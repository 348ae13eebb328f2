//! Asking the model for one candidate pair: a question in one of the styles of real support
//! traffic, its short answer, and a verbatim quote from the excerpt. The reply is constrained
//! to a JSON schema, so it always parses unless it was cut off.

use super::Rejection;
use crate::corpus::Chunk;
use crate::llm::chat_template::ChatMessage;
use crate::llm::generate::{FinishReason, GenerationParams};
use crate::llm::model::LanguageModel;
use crate::llm::prompt_text::untrusted;
use serde::{Deserialize, Serialize};
use std::sync::atomic::AtomicBool;

/// The prompt (minijinja), kept in a file so it can be read and tuned like the judges'.
pub const GENERATE_PROMPT: &str = include_str!("../../prompts/generate.md");

/// How the question is phrased, after the kinds of message support teams receive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum QuestionStyle {
    /// A few search words: "warranty contact phone".
    Keyword,
    /// A whole customer message that names the product and the situation.
    Message,
    /// A question that does not name the product: asked from the product's page, so the
    /// pair is scoped to its document (`doc` set).
    Scoped,
}

impl QuestionStyle {
    pub const ALL: [QuestionStyle; 3] = [Self::Keyword, Self::Message, Self::Scoped];

    pub fn tag(self) -> &'static str {
        match self {
            Self::Keyword => "keyword",
            Self::Message => "message",
            Self::Scoped => "scoped",
        }
    }

    fn instruction(self) -> &'static str {
        match self {
            Self::Keyword => {
                "phrased as a terse search query of three to six keywords, the way people type into a \
                 search box (for example: warranty contact phone)"
            }
            Self::Message => {
                "phrased as a complete message from a customer: one to three sentences that name the \
                 product and describe their situation"
            }
            Self::Scoped => {
                "phrased as a short question that does not name the product (the customer is already \
                 on the product's page)"
            }
        }
    }
}

/// The model's reply, as the schema forces it.
#[derive(Debug, Clone, Deserialize)]
pub struct RawPair {
    pub question: String,
    pub answer: String,
    pub quote: String,
}

/// Most tokens of a reply: the grammar's string limits fit well within it.
const MAX_REPLY_TOKENS: usize = 240;

/// Longest question and answer the grammar allows. A reply that reaches either limit was cut
/// there by the grammar, mid-word as often as not, and is rejected as cut short.
const QUESTION_MAX_CHARS: usize = 300;
const ANSWER_MAX_CHARS: usize = 160;

/// The reply's grammar: a JSON object whose quote can only be a run of whole words of the
/// excerpt (llguidance's `substring_words`), followed by the question and the answer. The
/// quote comes first: small models quote well before they have written their own words, and
/// even the 0.5B model paraphrased most quotes when it was free to (0 of 6 verbatim on the
/// sample manuals). The pair is still checked against the excerpt afterwards.
fn reply_grammar(excerpt: &str) -> Result<String, Rejection> {
    // Inside a JSON string the excerpt appears escaped; with whitespace made plain spaces the
    // only escapes left are \" and \\, which never split across llguidance's word chunks.
    let plain: String = excerpt.chars().map(|c| if c.is_whitespace() || c.is_control() { ' ' } else { c }).collect();
    let escaped = serde_json::to_string(&plain).map_err(|e| Rejection::ModelFailed(e.to_string()))?;
    let inner = &escaped[1..escaped.len() - 1];
    let words = serde_json::to_string(inner).map_err(|e| Rejection::ModelFailed(e.to_string()))?;
    Ok(format!(
        r#"start: "{{\"quote\": \"" QUOTE "\", \"question\": " question ", \"answer\": " answer "}}"
question: %json {{"type": "string", "minLength": 3, "maxLength": {QUESTION_MAX_CHARS}}}
answer: %json {{"type": "string", "minLength": 1, "maxLength": {ANSWER_MAX_CHARS}}}
QUOTE: %regex {{"substring_words": {words}}}
"#
    ))
}

/// Whether the grammar closed the question or the answer at its length limit.
fn reached_length_limit(pair: &RawPair) -> bool {
    pair.question.chars().count() >= QUESTION_MAX_CHARS || pair.answer.chars().count() >= ANSWER_MAX_CHARS
}

/// The chat prompt for one candidate.
pub fn candidate_prompt(model: &LanguageModel, product: &str, chunk: &Chunk, style: QuestionStyle) -> Result<String, Rejection> {
    let mut env = minijinja::Environment::new();
    let failed = |e: &dyn std::fmt::Display| Rejection::ModelFailed(format!("generation prompt: {e}"));
    env.add_template("generate", GENERATE_PROMPT).map_err(|e| failed(&e))?;
    let user = env
        .get_template("generate")
        .and_then(|t| {
            t.render(minijinja::context! {
                // The product name and the manual excerpt are values, never chat markers.
                product => untrusted(product),
                excerpt => untrusted(&chunk.text),
                style => style.instruction(),
            })
        })
        .map_err(|e| failed(&e))?;
    model.chat_prompt(&[ChatMessage::user(user)]).map_err(|e| failed(&e))
}

/// Ask the model once. Sampling (seeded) rather than greedy: a second attempt on the same
/// excerpt must be able to give a different pair.
pub fn ask_for_pair(
    model: &LanguageModel,
    prompt: &str,
    excerpt: &str,
    seed: u64,
    cancel: Option<&AtomicBool>,
) -> Result<RawPair, Rejection> {
    let params = GenerationParams {
        max_tokens: MAX_REPLY_TOKENS,
        temperature: 0.7,
        top_p: Some(0.9),
        seed,
        ..GenerationParams::default()
    };
    let generation = model
        .generate_lark(prompt, &reply_grammar(excerpt)?, &params, &mut |_| {}, cancel)
        .map_err(|e| Rejection::ModelFailed(e.to_string()))?;
    match generation.finish {
        FinishReason::MaxTokens | FinishReason::ContextFull => return Err(Rejection::CutShort),
        FinishReason::Cancelled => return Err(Rejection::Cancelled),
        _ => {}
    }
    let pair: RawPair = serde_json::from_str(&generation.text).map_err(|e| Rejection::Unparsable(e.to_string()))?;
    if reached_length_limit(&pair) {
        return Err(Rejection::CutShort);
    }
    Ok(pair)
}

#[cfg(test)]
mod length_limit_tests {
    use super::*;

    fn pair(question: &str, answer: &str) -> RawPair {
        RawPair { question: question.into(), answer: answer.into(), quote: String::new() }
    }

    #[test]
    fn a_reply_at_either_limit_was_cut_by_the_grammar() {
        assert!(!reached_length_limit(&pair("How long is the warranty?", "5 years")));
        // Characters, not bytes: 159 two-byte characters are still under the limit.
        assert!(!reached_length_limit(&pair("Q?", &"é".repeat(ANSWER_MAX_CHARS - 1))));
        assert!(reached_length_limit(&pair("Q?", &"a".repeat(ANSWER_MAX_CHARS))));
        assert!(reached_length_limit(&pair(&"q".repeat(QUESTION_MAX_CHARS), "5 years")));
    }
}

//! Pairwise judges: two answers to one question side by side, "which is better?", scored from
//! the options' log-probabilities (`1`, `2`, `tie`) like choice mode, never from free text.
//!
//! Every question is judged in both orders (run A's answer first, then run B's) and the two
//! distributions are averaged with the labels swapped back (`pairwise_orders`), so a judge's
//! preference for a position cancels. Both answers are untrusted values: the same stripping,
//! withholding and marking as every other judge's values (`prompt::marked`), and a question
//! whose answers look like they address the grader is flagged.
//!
//! In process the two orders' prompts share their start (the template's opening, the question
//! and the reference, which the `better` prompt puts before the answers), so that stretch is
//! read once per question and each order continues from it. A served judge asks the server
//! for each order's first-token log-probabilities.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::distribution::normalise;
use super::error::JudgeError;
use super::injection::item_is_suspect;
use super::pairwise_orders::combine_orders;
use super::prompt::{marked, marked_for_server, user_prompt_tokens, NO_REFERENCE};
use super::reading::{common_prefix, cached_template_states, Reader, Reading};
use super::spec::{JudgeMode, JudgeSpec};
use crate::dataset::Question;
use crate::llm::chat_template::ChatMessage;
use crate::llm::model::LanguageModel;
use crate::llm::prompt_state::PromptState;
use crate::llm::scoring::first_token_outcome_logprobs;
use crate::llm::server::ServerModel;
use crate::record::{Answer, PairwiseJudgment, FLAG_POSSIBLE_INJECTION};

/// Top tokens asked of a server: enough for every spelling of `1`, `2` and `tie`.
const TOP_LOGPROBS: usize = 20;

/// A judge of two answers side by side, in process or on a server.
pub trait JudgingPairs {
    /// The judge's name (its spec's).
    fn name(&self) -> &str;
    /// How the outcomes are read, for the record.
    fn scoring(&self) -> String;
    /// One question judged in both orders: `a` is run A's answer, `b` run B's.
    fn judge_pair(&mut self, question: &Question, a: &Answer, b: &Answer) -> PairwiseJudgment;
}

/// The template variables with `first` shown as answer 1 and `second` as answer 2.
pub fn pair_variables<'a>(question: &Question, first: &Answer, second: &Answer) -> BTreeMap<&'a str, String> {
    let mut variables = BTreeMap::new();
    variables.insert("question", question.question.clone());
    variables.insert("reference", question.answer.clone().unwrap_or_else(|| NO_REFERENCE.to_string()));
    if let Some(gold) = &question.context {
        variables.insert("gold_context", gold.clone());
    }
    variables.insert("answer_1", first.text.clone());
    variables.insert("answer_2", second.text.clone());
    variables
}

/// An answer's length in words.
fn words(answer: &Answer) -> usize {
    answer.text.split_whitespace().count()
}

/// The judgment before any order is read: id, lengths and flags. The judge reads the question
/// and both answers' text (not their retrieved chunks), so those are what is checked.
fn blank_judgment(question: &Question, a: &Answer, b: &Answer) -> PairwiseJudgment {
    let text_only = |answer: &Answer| Answer { text: answer.text.clone(), ..Answer::default() };
    let suspect = item_is_suspect(question, &text_only(a)) || item_is_suspect(question, &text_only(b));
    PairwiseJudgment {
        id: question.id.clone(),
        words_a: words(a),
        words_b: words(b),
        flags: if suspect { vec![FLAG_POSSIBLE_INJECTION.to_string()] } else { Vec::new() },
        ..PairwiseJudgment::default()
    }
}

/// The judgment from each order's log-probabilities of the spec's outcomes.
fn finish(mut judgment: PairwiseJudgment, spec: &JudgeSpec, a_first: &[f64], b_first: &[f64]) -> PairwiseJudgment {
    let distribution = |logprobs: &[f64]| -> Option<BTreeMap<String, f64>> {
        Some(spec.outcomes.iter().cloned().zip(normalise(logprobs)?).collect())
    };
    match (distribution(a_first), distribution(b_first)) {
        (Some(a_first), Some(b_first)) => {
            judgment.preference = Some(combine_orders(&a_first, &b_first));
            judgment.a_first = a_first;
            judgment.b_first = b_first;
        }
        _ => judgment.error = Some("the model gave no finite probability to the outcomes".into()),
    }
    judgment
}

/// The judgment's preference combined again from its two orders' distributions (a judgment
/// read back from the store is combined by the rule in force now); unchanged when unscored.
pub fn recombined(mut judgment: PairwiseJudgment) -> PairwiseJudgment {
    if !judgment.a_first.is_empty() && !judgment.b_first.is_empty() {
        judgment.preference = Some(combine_orders(&judgment.a_first, &judgment.b_first));
    }
    judgment
}

fn missing_input(spec: &JudgeSpec, variables: &BTreeMap<&str, String>) -> Option<String> {
    spec.inputs
        .iter()
        .find(|input| !variables.contains_key(input.as_str()))
        .map(|input| format!("the question has no `{input}` (needed by judge {})", spec.name))
}

fn require_pairwise(spec: &JudgeSpec) -> Result<(), JudgeError> {
    if spec.mode != JudgeMode::Pairwise {
        return Err(JudgeError::NotPairwise { judge: spec.name.clone(), mode: spec.mode.as_str() });
    }
    Ok(())
}

/// A pairwise judge on the in-process runtime.
pub struct PairwiseJudge {
    model: Arc<LanguageModel>,
    spec: JudgeSpec,
    /// How prompts are read (`Shared` unless measuring the difference).
    pub reading: Reading,
    /// The state after the chat template's opening (None inside: none to reuse).
    template: Option<Option<PromptState>>,
    /// Prompt tokens the model has read (shared stretches counted once).
    pub tokens_read: usize,
}

impl PairwiseJudge {
    /// Check the spec is a pairwise one whose outcomes tokenize with this model.
    pub fn new(spec: JudgeSpec, model: Arc<LanguageModel>) -> Result<Self, JudgeError> {
        require_pairwise(&spec)?;
        for outcome in &spec.outcomes {
            let tokens = model.encode_continuation(outcome).map_err(|source| JudgeError::Model { judge: spec.name.clone(), source })?;
            if tokens.is_empty() {
                return Err(JudgeError::EmptyOutcome { judge: spec.name.clone(), outcome: outcome.clone(), model: model.name.clone() });
            }
        }
        Ok(PairwiseJudge { model, spec, reading: Reading::Shared, template: None, tokens_read: 0 })
    }

    /// The token ids of both orders' prompts (A first, B first), for tests and inspection.
    pub fn prompt_tokens(&self, question: &Question, a: &Answer, b: &Answer) -> Result<[Vec<u32>; 2], JudgeError> {
        let tokens = |first: &Answer, second: &Answer| -> Result<Vec<u32>, JudgeError> {
            let rendered = self.spec.render(&marked(&self.model, &pair_variables(question, first, second)))?;
            user_prompt_tokens(&self.model, &rendered).map_err(|source| JudgeError::Model { judge: self.spec.name.clone(), source })
        };
        Ok([tokens(a, b)?, tokens(b, a)?])
    }

    fn template_states(&mut self) -> Vec<PromptState> {
        cached_template_states(&self.model, self.reading, &mut self.template, &mut self.tokens_read)
    }

    fn both_orders(&mut self, question: &Question, a: &Answer, b: &Answer) -> Result<[Vec<f64>; 2], JudgeError> {
        let [a_first, b_first] = self.prompt_tokens(question, a, b)?;
        let model = self.model.clone();
        let known = self.template_states();
        let mut reader = Reader::new(&model, known, self.reading == Reading::Shared);
        let model_err = |source| JudgeError::Model { judge: self.spec.name.clone(), source };
        // The state after the stretch both orders share is kept while reading the first.
        let shared = common_prefix(&a_first, &b_first);
        let mut outcome_logprobs = |tokens: &[u32], keep_at: usize| -> Result<Vec<f64>, JudgeError> {
            let state = reader.read(tokens, keep_at).map_err(model_err)?;
            let scores = model.score_options(&state, &self.spec.outcomes).map_err(model_err)?;
            Ok(scores.iter().map(|s| s.logprob as f64).collect())
        };
        let first = outcome_logprobs(&a_first, shared)?;
        let second = outcome_logprobs(&b_first, 0)?;
        self.tokens_read += reader.tokens_read;
        Ok([first, second])
    }
}

impl JudgingPairs for PairwiseJudge {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn scoring(&self) -> String {
        format!("model {} in process: option log-probabilities, both orders", self.model.name)
    }

    fn judge_pair(&mut self, question: &Question, a: &Answer, b: &Answer) -> PairwiseJudgment {
        let mut judgment = blank_judgment(question, a, b);
        if let Some(missing) = missing_input(&self.spec, &pair_variables(question, a, b)) {
            judgment.error = Some(missing);
            return judgment;
        }
        match self.both_orders(question, a, b) {
            Ok([a_first, b_first]) => finish(judgment, &self.spec, &a_first, &b_first),
            Err(e) => {
                judgment.error = Some(e.to_string());
                judgment
            }
        }
    }
}

/// A pairwise judge on a model an inference server serves: each order's first-token
/// log-probabilities (never the reply's text).
pub struct ServedPairwiseJudge {
    server: Arc<ServerModel>,
    spec: JudgeSpec,
}

impl ServedPairwiseJudge {
    /// Check the spec is a pairwise one and that the server gives log-probabilities.
    pub fn new(spec: JudgeSpec, server: Arc<ServerModel>) -> Result<Self, JudgeError> {
        require_pairwise(&spec)?;
        server
            .first_token_logprobs(&[ChatMessage::user("Reply with one digit: 1 or 2. Which is larger, 1 or 2?")], TOP_LOGPROBS)
            .map_err(|source| JudgeError::Model { judge: spec.name.clone(), source })?;
        Ok(ServedPairwiseJudge { server, spec })
    }

    fn outcome_logprobs(&self, question: &Question, first: &Answer, second: &Answer) -> Result<Vec<f64>, JudgeError> {
        let rendered = self.spec.render(&marked_for_server(&pair_variables(question, first, second)))?;
        let top = self
            .server
            .first_token_logprobs(&[ChatMessage::user(rendered)], TOP_LOGPROBS)
            .map_err(|source| JudgeError::Model { judge: self.spec.name.clone(), source })?;
        first_token_outcome_logprobs(&self.spec.outcomes, &top).ok_or_else(|| JudgeError::NoOutcomeInTop {
            judge: self.spec.name.clone(),
            outcomes: self.spec.outcomes.join(", "),
            top: TOP_LOGPROBS,
        })
    }
}

impl JudgingPairs for ServedPairwiseJudge {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn scoring(&self) -> String {
        format!("served model {}: first-token log-probabilities (top {TOP_LOGPROBS}), both orders", self.server.spec.model)
    }

    fn judge_pair(&mut self, question: &Question, a: &Answer, b: &Answer) -> PairwiseJudgment {
        let mut judgment = blank_judgment(question, a, b);
        if let Some(missing) = missing_input(&self.spec, &pair_variables(question, a, b)) {
            judgment.error = Some(missing);
            return judgment;
        }
        let orders = self.outcome_logprobs(question, a, b).and_then(|first| Ok((first, self.outcome_logprobs(question, b, a)?)));
        match orders {
            Ok((a_first, b_first)) => finish(judgment, &self.spec, &a_first, &b_first),
            Err(e) => {
                judgment.error = Some(e.to_string());
                judgment
            }
        }
    }
}

//! Pairwise judges: two answers to one question side by side, "which is better?", scored from
//! the options' log-probabilities (`1`, `2`, `tie`) like choice mode, never from free text.
//!
//! Every question is judged in both orders (run A's answer first, then run B's) and the two
//! distributions are averaged with the labels swapped back (`pairwise_orders`), so a judge's
//! preference for a position cancels. Both answers are untrusted values: the same stripping,
//! withholding and marking as every other judge's values (`prompt::marked`), and a question
//! whose answers look like they address the grader is flagged.
//!
//! A pairwise spec asks one of two things in each order: which answer is better (outcomes `1`,
//! `2`, `tie`), or, after showing both answers, whether each agrees with the reference
//! (outcomes such as `No`, `Yes`, its prompt naming the answer with `{{ asked }}`): two
//! probabilities on one scale, read from one shared reading of both answers.
//!
//! In process the orders' prompts share their start (the template's opening, the question and
//! the reference, which the prompts put before the answers), so that stretch is read once per
//! question and each order continues from it; a judge of each answer reads an order's answers
//! once for both of its questions. A served judge asks the server for each prompt's first-token
//! log-probabilities. Values too long for the judge's window are cut once per question by
//! `context_fit`'s rule (both answers by the same rule, and both orders read the same cut
//! texts, so neither order nor position is favoured) and the judgment is flagged.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::context_fit::fit_to_context;
use super::distribution::normalise;
use super::error::JudgeError;
use super::injection::item_is_suspect;
use super::pairwise_orders::{combine_orders, from_each_answer, from_scores};
use super::prompt::{answer_as_read, marked, marked_for_server, numbers_as_the_reference, question_variables, user_prompt_tokens};
use super::reading::{common_prefix, cached_template_states, Reader, Reading};
use super::served::{cut_after_overflow, overflow_of, MAX_CUTS};
use super::spec::{JudgeMode, JudgeSpec, ASKED};
use crate::dataset::Question;
use crate::llm::chat_template::ChatMessage;
use crate::llm::model::LanguageModel;
use crate::llm::prompt_state::PromptState;
use crate::llm::scoring::first_token_outcome_logprobs;
use crate::llm::server::ServerModel;
use crate::record::{Answer, PairwiseJudgment, FIRST_ANSWER, FLAG_CUT_TO_FIT, FLAG_POSSIBLE_INJECTION, SECOND_ANSWER};

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
    let mut variables = question_variables(question);
    variables.insert("answer_1", answer_as_read(first));
    variables.insert("answer_2", answer_as_read(second));
    variables
}

/// An answer's length in words.
fn words(answer: &Answer) -> usize {
    answer.text.split_whitespace().count()
}

/// The judgment before any order is read: id, lengths and flags. The judge reads the question
/// and both answers' text (not their retrieved chunks), so those are what is checked.
pub(super) fn blank_judgment(question: &Question, a: &Answer, b: &Answer) -> PairwiseJudgment {
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

/// Each order's prompts' outcome log-probabilities: A's answer first, then B's (one prompt per
/// order, or one per answer asked about).
type BothOrders = [Vec<Vec<f64>>; 2];

/// What a pairwise spec asks in each order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Asks {
    /// Which answer is better: one prompt per order, outcomes `1`, `2` (and `tie`).
    WhichBetter,
    /// Whether each answer agrees with the reference: two prompts per order (`asked` 1, then 2),
    /// the last outcome (the best, outcomes are worst first) read as agreeing.
    EachAnswer,
}

fn asks(spec: &JudgeSpec) -> Asks {
    if spec.outcomes.iter().any(|o| o == FIRST_ANSWER) {
        Asks::WhichBetter
    } else {
        Asks::EachAnswer
    }
}

/// The variables of each prompt of one order (shown first, shown second): one prompt asking
/// which is better, or one per answer asked about.
fn order_prompts<'a>(spec: &JudgeSpec, marked: BTreeMap<&'a str, String>) -> Vec<BTreeMap<&'a str, String>> {
    match asks(spec) {
        Asks::WhichBetter => vec![marked],
        Asks::EachAnswer => [FIRST_ANSWER, SECOND_ANSWER]
            .into_iter()
            .map(|n| {
                // Set by the judge, not an item's value: not marked untrusted.
                let mut variables = marked.clone();
                variables.insert(ASKED, n.to_string());
                variables
            })
            .collect(),
    }
}

/// The pair's values in one order: A's answer first (as cut) or B's.
fn in_order<'a>(values: &BTreeMap<&'a str, String>, a_first: bool) -> BTreeMap<&'a str, String> {
    let mut variables = values.clone();
    if !a_first {
        let (one, two) = (values["answer_1"].clone(), values["answer_2"].clone());
        variables.insert("answer_1", two);
        variables.insert("answer_2", one);
    }
    variables
}

/// One order's distribution over `1`, `2`, `tie` from the log-probabilities of its prompts'
/// outcomes (one prompt, or one per answer); None when the model gave no finite probability.
fn order_distribution(spec: &JudgeSpec, prompts: &[Vec<f64>]) -> Option<BTreeMap<String, f64>> {
    match asks(spec) {
        Asks::WhichBetter => Some(spec.outcomes.iter().cloned().zip(normalise(prompts.first()?)?).collect()),
        Asks::EachAnswer => {
            let agrees = |logprobs: &Vec<f64>| normalise(logprobs).and_then(|p| p.last().copied());
            Some(from_each_answer(agrees(prompts.first()?)?, agrees(prompts.get(1)?)?))
        }
    }
}

/// The judgment from each order's prompts' log-probabilities of the spec's outcomes.
fn finish(mut judgment: PairwiseJudgment, spec: &JudgeSpec, a_first: &[Vec<f64>], b_first: &[Vec<f64>]) -> PairwiseJudgment {
    match (order_distribution(spec, a_first), order_distribution(spec, b_first)) {
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
    if let Some([y_a, y_b]) = judgment.scores {
        judgment.preference = Some(from_scores(y_a, y_b).2);
    } else if !judgment.a_first.is_empty() && !judgment.b_first.is_empty() {
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

    /// The pair's values (A's answer as answer 1) cut to fit the model's window, and whether any
    /// was cut. Cut once for both orders, so both read the same texts.
    fn fitted(&self, question: &Question, a: &Answer, b: &Answer) -> (BTreeMap<&'static str, String>, bool) {
        let mut values = pair_variables(question, a, b);
        let cut = fit_to_context(&self.model, &mut values);
        (values, cut)
    }

    /// Token ids of each prompt of one order's values.
    fn order_tokens(&self, values: &BTreeMap<&str, String>) -> Result<Vec<Vec<u32>>, JudgeError> {
        order_prompts(&self.spec, marked(&self.model, &numbers_as_the_reference(&self.spec, values)))
            .iter()
            .map(|variables| {
                let rendered = self.spec.render(variables)?;
                user_prompt_tokens(&self.model, &rendered).map_err(|source| JudgeError::Model { judge: self.spec.name.clone(), source })
            })
            .collect()
    }

    /// The token ids of both orders' prompts (A first, B first), as cut to fit, for tests and
    /// inspection; a judge of each answer gives the prompt asking about answer 1.
    pub fn prompt_tokens(&self, question: &Question, a: &Answer, b: &Answer) -> Result<[Vec<u32>; 2], JudgeError> {
        let (values, _) = self.fitted(question, a, b);
        let first = |a_first: bool| -> Result<Vec<u32>, JudgeError> {
            Ok(self.order_tokens(&in_order(&values, a_first))?.swap_remove(0))
        };
        Ok([first(true)?, first(false)?])
    }

    fn template_states(&mut self) -> Vec<PromptState> {
        cached_template_states(&self.model, self.reading, &mut self.template, &mut self.tokens_read)
    }

    /// Each order's prompts' outcome log-probabilities (A first, B first).
    fn both_orders(&mut self, values: &BTreeMap<&str, String>) -> Result<BothOrders, JudgeError> {
        let a_first = self.order_tokens(&in_order(values, true))?;
        let b_first = self.order_tokens(&in_order(values, false))?;
        let model = self.model.clone();
        let known = self.template_states();
        let sharing = self.reading == Reading::Shared;
        let mut reader = Reader::new(&model, known, sharing);
        let model_err = |source| JudgeError::Model { judge: self.spec.name.clone(), source };
        let score = |state: &PromptState| -> Result<Vec<f64>, JudgeError> {
            let scores = model.score_options(state, &self.spec.outcomes).map_err(model_err)?;
            Ok(scores.iter().map(|s| s.logprob as f64).collect())
        };
        // The state after the stretch both orders share is kept while reading the first.
        let shared = common_prefix(&a_first[0], &b_first[0]);
        let read_order = |prompts: &[Vec<u32>], keep_at: usize, reader: &mut Reader| -> Result<(Vec<Vec<f64>>, usize), JudgeError> {
            // One prompt; or, when not sharing, each answer's prompt read on its own.
            if prompts.len() == 1 || !sharing {
                let mut out = Vec::new();
                for tokens in prompts {
                    out.push(score(&reader.read(tokens, keep_at).map_err(model_err)?)?);
                }
                return Ok((out, 0));
            }
            // Both answers are read once; each question about one of them continues from there.
            let branch = prompts.windows(2).map(|w| common_prefix(&w[0], &w[1])).min().unwrap_or(0);
            for tokens in prompts {
                model.check_fits(tokens.len() + 1).map_err(model_err)?;
            }
            let both_read = reader.read(&prompts[0][..branch.max(1)], keep_at).map_err(model_err)?;
            let mut extra = 0;
            let mut out = Vec::new();
            for tokens in prompts {
                let rest = &tokens[both_read.len()..];
                out.push(score(&model.extend(&both_read, rest).map_err(model_err)?)?);
                extra += rest.len();
            }
            Ok((out, extra))
        };
        let (first, first_extra) = read_order(&a_first, shared, &mut reader)?;
        let (second, second_extra) = read_order(&b_first, 0, &mut reader)?;
        self.tokens_read += reader.tokens_read + first_extra + second_extra;
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
        let (values, cut) = self.fitted(question, a, b);
        if cut {
            judgment.flags.push(FLAG_CUT_TO_FIT.to_string());
        }
        match self.both_orders(&values) {
            Ok([a_first, b_first]) => finish(judgment, &self.spec, &a_first, &b_first),
            Err(e) => {
                judgment.error = Some(e.to_string());
                judgment
            }
        }
    }
}

/// A pairwise judge on a model an inference server serves: each prompt's first-token
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

    /// The outcomes' log-probabilities of each prompt of one order.
    fn order_logprobs(&self, values: &BTreeMap<&str, String>) -> Result<Vec<Vec<f64>>, JudgeError> {
        order_prompts(&self.spec, marked_for_server(&numbers_as_the_reference(&self.spec, values)))
            .iter()
            .map(|variables| {
                let rendered = self.spec.render(variables)?;
                let top = self
                    .server
                    .first_token_logprobs(&[ChatMessage::user(rendered)], TOP_LOGPROBS)
                    .map_err(|source| JudgeError::Model { judge: self.spec.name.clone(), source })?;
                first_token_outcome_logprobs(&self.spec.outcomes, &top).ok_or_else(|| JudgeError::NoOutcomeInTop {
                    judge: self.spec.name.clone(),
                    outcomes: self.spec.outcomes.join(", "),
                    top: TOP_LOGPROBS,
                })
            })
            .collect()
    }

    /// Both orders from the same values; when the server says a prompt does not fit its window,
    /// the values are cut (`served`'s rule for every served judge) and both orders asked again,
    /// so they always read the same texts. The number of cuts made comes with the result.
    fn both_orders(&self, mut values: BTreeMap<&str, String>) -> (Result<BothOrders, JudgeError>, usize) {
        let mut cuts = 0;
        loop {
            let orders = self
                .order_logprobs(&in_order(&values, true))
                .and_then(|first| Ok([first, self.order_logprobs(&in_order(&values, false))?]));
            match orders {
                Err(e) => match overflow_of(&e) {
                    Some(overflow) if cuts < MAX_CUTS && cut_after_overflow(&mut values, &overflow, cuts) => cuts += 1,
                    _ => return (Err(e), cuts),
                },
                done => return (done, cuts),
            }
        }
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
        let values = pair_variables(question, a, b);
        if let Some(missing) = missing_input(&self.spec, &values) {
            judgment.error = Some(missing);
            return judgment;
        }
        let (orders, cuts) = self.both_orders(values);
        if cuts > 0 {
            judgment.flags.push(FLAG_CUT_TO_FIT.to_string());
        }
        match orders {
            Ok([a_first, b_first]) => finish(judgment, &self.spec, &a_first, &b_first),
            Err(e) => {
                judgment.error = Some(e.to_string());
                judgment
            }
        }
    }
}

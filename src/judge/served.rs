//! Judges on a model an inference server serves. Choice mode reads the server's token
//! log-probabilities for the first token of the reply — never its text — and scores each
//! allowed outcome by the probability of the tokens that begin it (`Yes`, ` Yes`, `yes`…); a
//! token that begins two outcomes counts for neither. A server that gives no
//! log-probabilities is refused when the panel is built, before a run starts. Statements
//! judges ask one such question per statement. Claims judges read token by token through our
//! own runtime and are unscored here, with the reason. A prompt longer than the server's window
//! is cut to fit and asked again, flagged (the server states its window only when refusing).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::choice::{apply_calibration, finish_verdicts, missing_input};
use super::context_fit::fit_to_chars;
use super::distribution::{unscored, verdict_against_baseline, verdict_from_logprobs};
use super::error::JudgeError;
use super::nothing_stated::{fails_without_model, worst_outcome};
use super::prompt::{baseline_variables, item_variables, marked_for_server, numbers_as_the_reference};
use super::spec::{JudgeMode, JudgeSpec};
use super::statements;
use super::{Judging, Verdict};
use crate::dataset::Question;
use crate::llm::chat_template::ChatMessage;
use crate::llm::error::{ContextOverflow, LlmError};
use crate::llm::generate::GenerationParams;
use crate::llm::scoring::first_token_outcome_logprobs;
use crate::llm::server::ServerModel;
use crate::record::{Answer, FLAG_CUT_TO_FIT};

/// Top tokens asked for: enough for every spelling of a handful of outcomes.
const TOP_LOGPROBS: usize = 20;

pub struct ServedJudgePanel {
    server: Arc<ServerModel>,
    judges: Vec<JudgeSpec>,
}

impl ServedJudgePanel {
    /// Check the specs (jury members present) and that the server gives log-probabilities.
    pub fn new(specs: Vec<JudgeSpec>, server: Arc<ServerModel>) -> Result<Self, JudgeError> {
        if let Some(spec) = specs.iter().find(|s| s.mode == JudgeMode::Pairwise) {
            return Err(JudgeError::PairwiseInRun { judge: spec.name.clone() });
        }
        for spec in specs.iter().filter(|s| s.mode == JudgeMode::Jury) {
            for member in &spec.members {
                if !specs.iter().any(|s| &s.name == member) && !super::jury_metrics::is_jury_metric(member) {
                    return Err(JudgeError::MissingMember { judge: spec.name.clone(), member: member.clone() });
                }
            }
        }
        if let Some(spec) = specs.iter().find(|s| matches!(s.mode, JudgeMode::Choice | JudgeMode::Statements)) {
            server
                .first_token_logprobs(&[ChatMessage::user("Reply with one word: Yes or No. Is water wet?")], TOP_LOGPROBS)
                .map_err(|source| JudgeError::Model { judge: spec.name.clone(), source })?;
        }
        Ok(ServedJudgePanel { server, judges: specs })
    }

    /// The prompt with the item's values (numbers as the reference writes them), chat markers
    /// taken out and marked (the server's tokenizer is not ours to ask which text is a value).
    fn render(&self, spec: &JudgeSpec, variables: &BTreeMap<&str, String>) -> Result<String, JudgeError> {
        Ok(spec.render(&marked_for_server(&numbers_as_the_reference(spec, variables)))?)
    }

    /// Each outcome's log-probability as the reply's first token (None: no outcome begins any
    /// of the server's most likely first tokens).
    fn outcome_logprobs(&self, spec: &JudgeSpec, rendered: &str) -> Result<Option<Vec<f64>>, JudgeError> {
        let messages = [ChatMessage::user(rendered.to_string())];
        let top = self
            .server
            .first_token_logprobs(&messages, TOP_LOGPROBS)
            .map_err(|source| JudgeError::Model { judge: spec.name.clone(), source })?;
        Ok(first_token_outcome_logprobs(&spec.outcomes, &top))
    }

    fn no_outcome(&self, spec: &JudgeSpec) -> String {
        format!("none of the outcomes ({}) begins any of the server's {TOP_LOGPROBS} most likely first tokens", spec.outcomes.join(", "))
    }

    fn choose(&self, spec: &JudgeSpec, variables: &BTreeMap<&str, String>) -> Result<Verdict, JudgeError> {
        if let Some(kind) = fails_without_model(spec, variables) {
            return Ok(worst_outcome(spec, kind.verdict_explanation()));
        }
        let rendered = self.render(spec, variables)?;
        let Some(logprobs) = self.outcome_logprobs(spec, &rendered)? else {
            return Ok(unscored(self.no_outcome(spec)));
        };
        let mut verdict = match baseline_variables(spec, variables) {
            None => verdict_from_logprobs(spec, &logprobs),
            Some(stand_in) => match self.outcome_logprobs(spec, &self.render(spec, &stand_in)?)? {
                Some(baseline) => verdict_against_baseline(spec, &logprobs, &baseline),
                None => return Ok(unscored(format!("baseline (the question in place of the answer): {}", self.no_outcome(spec)))),
            },
        };
        apply_calibration(spec, &mut verdict);
        if spec.explain {
            if let Some(label) = verdict.label.clone() {
                // The label is fixed; the explanation comes after it and cannot change it.
                let follow_up = [
                    ChatMessage::user(rendered),
                    ChatMessage::assistant(label),
                    ChatMessage::user("In one short sentence, why?".to_string()),
                ];
                let params = GenerationParams { max_tokens: 60, stop: vec!["\n".into()], ..GenerationParams::default() };
                verdict.explanation = Some(match self.server.chat(&follow_up, &params, None) {
                    Ok(reply) => reply.text.trim().to_string(),
                    Err(e) => format!("(no explanation: {e})"),
                });
            }
        }
        Ok(verdict)
    }
}

impl ServedJudgePanel {
    /// A statements judge on the server: one first-token request per statement the numbers
    /// did not already decide.
    fn statements(&self, spec: &JudgeSpec, variables: &BTreeMap<&str, String>) -> Result<Vec<(String, Verdict)>, JudgeError> {
        let fail = |error: String| statements::keys(spec).into_iter().map(|k| (k, unscored(error.clone()))).collect::<Vec<_>>();
        let checks = match statements::plan_for(spec, variables) {
            Ok(checks) => checks,
            Err(e) => return Ok(fail(e)),
        };
        let mut supported = vec![0.0; checks.len()];
        for (check, p) in checks.iter().zip(supported.iter_mut()) {
            if check.number_conflict.is_some() {
                continue;
            }
            match self.outcome_logprobs(spec, &self.render(spec, &check.variables)?)? {
                Some(logprobs) => match statements::probability_of_support(spec, check, &logprobs) {
                    Ok(yes) => *p = yes,
                    Err(e) => return Ok(fail(e)),
                },
                None => return Ok(fail(self.no_outcome(spec))),
            }
        }
        Ok(statements::verdicts(spec, &checks, &supported))
    }

    /// One judge's verdicts on an item (a statements judge gives three); Err when the server
    /// failed, so the caller can tell a prompt too long for its window from other failures.
    fn judge_with(&self, spec: &JudgeSpec, variables: &BTreeMap<&str, String>) -> Result<Vec<(String, Verdict)>, JudgeError> {
        match spec.mode {
            JudgeMode::Claims => Ok(vec![(
                spec.name.clone(),
                unscored(format!("claims judge {} runs on the in-process runtime only (it reads claims token by token)", spec.name)),
            )]),
            JudgeMode::Statements => self.statements(spec, variables),
            _ => Ok(vec![(spec.name.clone(), self.choose(spec, variables)?)]),
        }
    }
}

/// Tries at cutting an item's values after the server said its prompt did not fit: the first
/// cut uses the sizes the server stated, each later one keeps 60% of what was left.
pub(super) const MAX_CUTS: usize = 4;

/// The item's values cut (`context_fit`'s rule, counted in characters) after the server said
/// the prompt overflowed its window; false when there is nothing left to cut. With the sizes
/// stated, the values keep the share of their characters that the window (less room for the
/// template and the reply) is of the prompt; without them, half. Shared with the served
/// pairwise judge, which cuts a pair's values by the same rule.
pub(super) fn cut_after_overflow(variables: &mut BTreeMap<&str, String>, overflow: &ContextOverflow, cuts_before: usize) -> bool {
    let chars: usize = variables.values().map(|v| v.chars().count()).sum();
    let share = match (cuts_before, overflow.prompt_tokens, overflow.window) {
        (0, Some(prompt), Some(window)) if prompt > 0 => window.saturating_sub(SERVED_ROOM) as f64 / prompt as f64,
        (0, _, _) => 0.5,
        _ => 0.6,
    };
    let budget = (chars as f64 * share.clamp(0.0, 0.95)) as usize;
    budget > 0 && fit_to_chars(budget, variables)
}

/// Tokens of a served judge's window kept for what is not a value (template, rubric, reply).
const SERVED_ROOM: usize = 256;

/// The overflow a server reported, when that is why a judge failed.
pub(super) fn overflow_of(error: &JudgeError) -> Option<ContextOverflow> {
    match error {
        JudgeError::Model { source: LlmError::Server { overflow, .. }, .. } => *overflow,
        _ => None,
    }
}

impl Judging for ServedJudgePanel {
    fn names(&self) -> Vec<String> {
        self.judges.iter().map(|j| j.name.clone()).collect()
    }

    fn scoring(&self) -> Option<String> {
        Some(format!(
            "served model {}: first-token log-probabilities (top {TOP_LOGPROBS})",
            self.server.spec.model
        ))
    }

    fn judge(&mut self, question: &Question, answer: &Answer) -> BTreeMap<String, Verdict> {
        // The server's window is known only when a prompt overflows it: then the item's values
        // are cut by `context_fit`'s rule and the judge asked again, and every verdict of the
        // item is flagged, as in process.
        let mut variables = item_variables(question, answer);
        let (mut verdicts, mut cuts) = (BTreeMap::new(), 0);
        for spec in self.judges.iter().filter(|j| j.mode != JudgeMode::Jury) {
            if let Some(missing) = missing_input(spec, &variables) {
                verdicts.insert(spec.name.clone(), unscored(missing));
                continue;
            }
            let judged = loop {
                match self.judge_with(spec, &variables) {
                    Ok(judged) => break judged,
                    Err(e) => match overflow_of(&e) {
                        Some(overflow) if cuts < MAX_CUTS && cut_after_overflow(&mut variables, &overflow, cuts) => cuts += 1,
                        _ => {
                            let keys = match spec.mode {
                                JudgeMode::Statements => statements::keys(spec),
                                _ => vec![spec.name.clone()],
                            };
                            break keys.into_iter().map(|k| (k, unscored(e.to_string()))).collect();
                        }
                    },
                }
            };
            verdicts.extend(judged);
        }
        finish_verdicts(&self.judges, &mut verdicts, question, answer);
        // Text that addresses the grader or mimics a turn: scored, but never silently.
        super::injection::flag_if_suspect(question, answer, &mut verdicts);
        if cuts > 0 {
            for verdict in verdicts.values_mut() {
                verdict.flags.push(FLAG_CUT_TO_FIT.to_string());
            }
        }
        verdicts
    }
}

//! Judges on a model an inference server serves. Choice mode reads the server's token
//! log-probabilities for the first token of the reply — never its text — and scores each
//! allowed outcome by the probability of the tokens that begin it (`Yes`, ` Yes`, `yes`…); a
//! token that begins two outcomes counts for neither. A server that gives no
//! log-probabilities is refused when the panel is built, before a run starts. Statements
//! judges ask one such question per statement. Claims judges read token by token through our
//! own runtime and are unscored here, with the reason.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::choice::{apply_calibration, finish_verdicts, missing_input};
use super::distribution::{unscored, verdict_against_baseline, verdict_from_logprobs};
use super::error::JudgeError;
use super::prompt::{baseline_variables, item_variables, marked_for_server};
use super::spec::{JudgeMode, JudgeSpec};
use super::statements;
use super::{Judging, Verdict};
use crate::dataset::Question;
use crate::llm::chat_template::ChatMessage;
use crate::llm::generate::GenerationParams;
use crate::llm::scoring::first_token_outcome_logprobs;
use crate::llm::server::ServerModel;
use crate::record::Answer;

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

    /// The prompt with the item's values, chat markers taken out and marked (the server's
    /// tokenizer is not ours to ask which text is a value).
    fn render(&self, spec: &JudgeSpec, variables: &BTreeMap<&str, String>) -> Result<String, JudgeError> {
        Ok(spec.render(&marked_for_server(variables))?)
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
    fn statements(&self, spec: &JudgeSpec, variables: &BTreeMap<&str, String>) -> Vec<(String, Verdict)> {
        let fail = |error: String| statements::keys(&spec.name).into_iter().map(|k| (k, unscored(error.clone()))).collect::<Vec<_>>();
        let checks = match statements::plan(variables) {
            Ok(checks) => checks,
            Err(e) => return fail(e),
        };
        let mut supported = vec![0.0; checks.len()];
        for (check, p) in checks.iter().zip(supported.iter_mut()) {
            if check.number_conflict.is_some() {
                continue;
            }
            let logprobs = self.render(spec, &check.variables).and_then(|rendered| self.outcome_logprobs(spec, &rendered));
            match logprobs {
                Ok(Some(logprobs)) => {
                    *p = super::distribution::normalise(&logprobs).and_then(|d| d.get(1).copied()).unwrap_or(0.0);
                }
                Ok(None) => return fail(self.no_outcome(spec)),
                Err(e) => return fail(e.to_string()),
            }
        }
        statements::verdicts(spec, &checks, &supported)
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
        let variables = item_variables(question, answer);
        let mut verdicts = BTreeMap::new();
        for spec in self.judges.iter().filter(|j| j.mode != JudgeMode::Jury) {
            let verdict = match (spec.mode, missing_input(spec, &variables)) {
                (_, Some(missing)) => unscored(missing),
                (JudgeMode::Claims, None) => unscored(format!(
                    "claims judge {} runs on the in-process runtime only (it reads claims token by token)",
                    spec.name
                )),
                (JudgeMode::Statements, None) => {
                    for (key, verdict) in self.statements(spec, &variables) {
                        verdicts.insert(key, verdict);
                    }
                    continue;
                }
                _ => self.choose(spec, &variables).unwrap_or_else(|e| unscored(e.to_string())),
            };
            verdicts.insert(spec.name.clone(), verdict);
        }
        finish_verdicts(&self.judges, &mut verdicts, question, answer);
        // Text that addresses the grader or mimics a turn: scored, but never silently.
        super::injection::flag_if_suspect(question, answer, &mut verdicts);
        verdicts
    }
}

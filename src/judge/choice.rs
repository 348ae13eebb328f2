//! Running judges with a language model: choice mode (option scoring, never free text), claims
//! mode (see `claims`) and juries (the mean of member judges' expected scores: `jury`).
//!
//! Prompts put the item first and each judge's rubric after it, so the judges of one item
//! continue from one reading of the item (see `reading`): the chat template's text before the
//! item is read once per panel, the item once per answer, and each judge reads only its rubric
//! and options. Item values are marked untrusted, so no answer can write chat markers into the
//! judge's prompt. Values too long for the model's window are cut by `context_fit`'s rule and
//! the item flagged; any other failure on one item (tokenizer, model) becomes an unscored
//! verdict carrying the reason.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::context_fit::fit_to_context;
use super::distribution::{unscored, verdict_against_baseline, verdict_from_logprobs};
use super::reading::{branch_points, cached_template_states, Reader, Reading};
use super::spec::{JudgeMode, JudgeSpec};
use super::error::JudgeError;
use super::jury::jury_verdict;
use super::jury_metrics::is_jury_metric;
use super::nothing_stated::{fails_without_model, worst_outcome};
use super::statements::{failed as failed_statements, judge_prepared, prepare as prepare_statements, PreparedStatements};
use super::prompt::{baseline_variables, item_variables, marked, numbers_as_the_reference, user_prompt_tokens};
use super::Verdict;
use crate::dataset::Question;
use crate::llm::chat_template::ChatMessage;
use crate::llm::error::LlmError;
use crate::llm::generate::GenerationParams;
use crate::llm::model::LanguageModel;
use crate::llm::prompt_state::PromptState;
use crate::record::{Answer, FLAG_CUT_TO_FIT};

/// The judges of a run, sharing one model.
pub struct JudgePanel {
    model: Arc<LanguageModel>,
    judges: Vec<JudgeSpec>,
    /// How prompts are read (`Shared` unless measuring or testing the difference).
    pub reading: Reading,
    /// The state after the chat template's text before any item (None inside: none to reuse).
    template: Option<Option<PromptState>>,
    /// Prompt tokens the model has read for this panel (shared stretches counted once).
    pub tokens_read: usize,
}

impl JudgePanel {
    /// Check each spec against the model (outcomes must tokenize, jury members be present).
    pub fn new(specs: Vec<JudgeSpec>, model: Arc<LanguageModel>) -> Result<Self, JudgeError> {
        for spec in &specs {
            if spec.mode == JudgeMode::Pairwise {
                return Err(JudgeError::PairwiseInRun { judge: spec.name.clone() });
            }
            if spec.mode == JudgeMode::Jury {
                for member in &spec.members {
                    if !specs.iter().any(|s| &s.name == member) && !is_jury_metric(member) {
                        return Err(JudgeError::MissingMember { judge: spec.name.clone(), member: member.clone() });
                    }
                }
                continue;
            }
            for outcome in &spec.outcomes {
                let tokens = model
                    .encode_continuation(outcome)
                    .map_err(|source| JudgeError::Model { judge: spec.name.clone(), source })?;
                if tokens.is_empty() {
                    return Err(JudgeError::EmptyOutcome {
                        judge: spec.name.clone(),
                        outcome: outcome.clone(),
                        model: model.name.clone(),
                    });
                }
            }
        }
        Ok(JudgePanel { model, judges: specs, reading: Reading::Shared, template: None, tokens_read: 0 })
    }

    pub fn names(&self) -> Vec<String> {
        self.judges.iter().map(|j| j.name.clone()).collect()
    }

    pub fn model(&self) -> &Arc<LanguageModel> {
        &self.model
    }

    /// All judges on one item. Claims judges add `<name>.recall`, `<name>.precision` and the
    /// label shares `<name>.recall_labels`, `<name>.precision_labels`.
    pub fn judge(&mut self, question: &Question, answer: &Answer) -> BTreeMap<String, Verdict> {
        let model = self.model.clone();
        let (variables, cut) = self.fitted_variables(question, answer);
        let known = self.template_state();
        let mut reader = Reader::new(&model, known, self.reading == Reading::Shared);
        let mut verdicts = BTreeMap::new();

        // Choice judges: every prompt (and baseline prompt) is tokenized first, so the
        // stretches they share are known (the item, a baseline's start) and read once.
        let choice: Vec<usize> = (0..self.judges.len()).filter(|i| self.judges[*i].mode == JudgeMode::Choice).collect();
        let mut prompts: Vec<ChoicePrompts> = Vec::new();
        for &index in &choice {
            let spec = &self.judges[index];
            if let Some(kind) = fails_without_model(spec, &variables) {
                verdicts.insert(spec.name.clone(), worst_outcome(spec, kind.verdict_explanation()));
                continue;
            }
            match missing_input(spec, &variables) {
                Some(error) => {
                    verdicts.insert(spec.name.clone(), unscored(error));
                }
                None => prompts.push(ChoicePrompts {
                    index,
                    tokens: self.prompt_tokens(spec, &variables),
                    baseline: baseline_variables(spec, &variables).map(|stand_in| self.prompt_tokens(spec, &stand_in)),
                }),
            }
        }
        // Statements judges' prompts are tokenized now too: their checks against the answer
        // start as `correct`'s long layout does, so the answer is read once for both.
        let statements: Vec<(usize, Result<PreparedStatements, String>)> = (0..self.judges.len())
            .filter(|i| self.judges[*i].mode == JudgeMode::Statements)
            .map(|i| (i, prepare_statements(&model, &self.judges[i], &variables)))
            .collect();
        let ready: Vec<Vec<u32>> = prompts
            .iter()
            .flat_map(|p| [p.tokens.as_ref().ok(), p.baseline.as_ref().and_then(|b| b.as_ref().ok())])
            .flatten()
            .chain(statements.iter().filter_map(|(_, s)| s.as_ref().ok()).flat_map(|s| s.prompts.iter()))
            .cloned()
            .collect();
        let mut branches = branch_points(&ready).into_iter();
        for prompt in prompts {
            let spec = self.judges[prompt.index].clone();
            // Taken in the order `ready` was built: the prompt's branch point, then its baseline's.
            let keep_at = prompt.tokens.is_ok().then(|| branches.next().unwrap_or(0));
            let baseline_at = matches!(prompt.baseline, Some(Ok(_))).then(|| branches.next().unwrap_or(0));
            let verdict = match (prompt.tokens, prompt.baseline) {
                (Err(e), _) | (_, Some(Err(e))) => unscored(e.to_string()),
                (Ok(tokens), baseline) => {
                    let baseline = baseline.and_then(Result::ok).map(|t| (t, baseline_at.unwrap_or(0)));
                    choose(&model, &mut reader, &spec, (&tokens, keep_at.unwrap_or(0)), baseline, &variables)
                        .unwrap_or_else(|e| unscored(e.to_string()))
                }
            };
            verdicts.insert(spec.name.clone(), verdict);
        }

        for spec in self.judges.iter().filter(|j| j.mode == JudgeMode::Claims) {
            for (key, verdict) in super::claims::judge_claims(&model, spec, &variables, &mut reader) {
                verdicts.insert(key, verdict);
            }
        }
        // The rest of the branch points are the statements judges' prompts', in order.
        for (index, prepared) in statements {
            let spec = &self.judges[index];
            let judged = match prepared {
                Ok(prepared) => {
                    let keep_at: Vec<usize> = prepared.prompts.iter().map(|_| branches.next().unwrap_or(0)).collect();
                    judge_prepared(&model, spec, &prepared, &keep_at, &mut reader)
                }
                Err(e) => failed_statements(spec, e),
            };
            verdicts.extend(judged);
        }
        finish_verdicts(&self.judges, &mut verdicts, question, answer);
        self.tokens_read += reader.tokens_read;
        // Text that addresses the grader or mimics a turn: scored, but never silently.
        super::injection::flag_if_suspect(question, answer, &mut verdicts);
        if cut {
            for verdict in verdicts.values_mut() {
                verdict.flags.push(FLAG_CUT_TO_FIT.to_string());
            }
        }
        verdicts
    }

    /// The item's template variables, cut to fit the judge model's window (`context_fit`),
    /// and whether any was cut.
    fn fitted_variables<'a>(&self, question: &Question, answer: &Answer) -> (BTreeMap<&'a str, String>, bool) {
        let mut variables = item_variables(question, answer);
        let cut = fit_to_context(&self.model, &mut variables);
        (variables, cut)
    }

    /// Token ids of each choice judge's prompt for an item, by judge name (for tests and for
    /// checking what the model is shown).
    pub fn prompt_tokens_of(&self, question: &Question, answer: &Answer) -> BTreeMap<String, Result<Vec<u32>, JudgeError>> {
        let (variables, _) = self.fitted_variables(question, answer);
        self.judges
            .iter()
            .filter(|j| j.mode == JudgeMode::Choice)
            .map(|spec| (spec.name.clone(), self.prompt_tokens(spec, &variables)))
            .collect()
    }

    /// The item's own tokens as this panel's judges see them: each input value any judge uses,
    /// read as plain text, counted once. The base of the reading ratio in `assay bench`.
    pub fn item_tokens(&self, question: &Question, answer: &Answer) -> usize {
        let (variables, _) = self.fitted_variables(question, answer);
        let mut inputs: Vec<&str> = self.judges.iter().flat_map(|j| j.inputs.iter().map(|s| s.as_str())).collect();
        inputs.sort();
        inputs.dedup();
        inputs
            .iter()
            .filter_map(|input| variables.get(input))
            .map(|value| self.model.tokenizer.encode_plain(value).map(|t| t.len()).unwrap_or(0))
            .sum()
    }

    fn prompt_tokens(&self, spec: &JudgeSpec, variables: &BTreeMap<&str, String>) -> Result<Vec<u32>, JudgeError> {
        let rendered = spec.render(&marked(&self.model, &numbers_as_the_reference(spec, variables)))?;
        let tokens = user_prompt_tokens(&self.model, &rendered).map_err(|source| JudgeError::Model { judge: spec.name.clone(), source })?;
        // What the judge model is shown, to trace a change in verdicts to its prompt
        // (ASSAY_LOG=assay::judge::prompt=debug): the token ids, and the text they decode to.
        if tracing::enabled!(target: "assay::judge::prompt", tracing::Level::DEBUG) {
            // Control tokens written out, so the turns the model sees are visible.
            let text = self.model.tokenizer.decode(&tokens, false).unwrap_or_else(|e| format!("(not decodable: {e})"));
            tracing::debug!(target: "assay::judge::prompt", judge = %spec.name, tokens = ?tokens, text = %text.escape_debug(), "judge prompt");
        }
        Ok(tokens)
    }

    /// The state after the chat template's text that comes before any item, read once.
    fn template_state(&mut self) -> Vec<PromptState> {
        cached_template_states(&self.model, self.reading, &mut self.template, &mut self.tokens_read)
    }
}

/// A choice judge's prompt for one item, and its baseline prompt when the spec has one.
struct ChoicePrompts {
    index: usize,
    tokens: Result<Vec<u32>, JudgeError>,
    baseline: Option<Result<Vec<u32>, JudgeError>>,
}

/// One choice judge's verdict: the prompt's outcomes scored (each prompt with the position
/// where the reader keeps a state for others that share its start), against the baseline's
/// when there is one.
fn choose(
    model: &LanguageModel,
    reader: &mut Reader<'_>,
    spec: &JudgeSpec,
    (tokens, keep_at): (&[u32], usize),
    baseline: Option<(Vec<u32>, usize)>,
    variables: &BTreeMap<&str, String>,
) -> Result<Verdict, JudgeError> {
    let model_err = |source| JudgeError::Model { judge: spec.name.clone(), source };
    let mut outcome_logprobs = |tokens: &[u32], keep_at: usize| -> Result<Vec<f64>, JudgeError> {
        let state = reader.read(tokens, keep_at).map_err(model_err)?;
        let scores = model.score_options(&state, &spec.outcomes).map_err(model_err)?;
        Ok(scores.iter().map(|s| s.logprob as f64).collect())
    };
    let logprobs = outcome_logprobs(tokens, keep_at)?;
    let mut verdict = match baseline {
        None => verdict_from_logprobs(spec, &logprobs),
        Some((baseline_tokens, baseline_at)) => {
            let baseline = outcome_logprobs(&baseline_tokens, baseline_at)?;
            verdict_against_baseline(spec, &logprobs, &baseline)
        }
    };
    apply_calibration(spec, &mut verdict);
    if spec.explain {
        if let Some(label) = verdict.label.clone() {
            // The label is fixed; the explanation is generated after it and cannot change it.
            let rendered = spec.render(&marked(model, &numbers_as_the_reference(spec, variables)))?;
            verdict.explanation = Some(explain(model, &rendered, &label).unwrap_or_else(|e| format!("(no explanation: {e})")));
        }
    }
    Ok(verdict)
}

/// With calibrated thresholds, the label is the outcome whose score band holds the expected
/// score (the distribution and score are unchanged).
pub(super) fn apply_calibration(spec: &JudgeSpec, verdict: &mut Verdict) {
    if let Some(score) = verdict.score {
        if let Some(label) = spec.calibrated_label(score) {
            verdict.label = Some(label.to_string());
        }
    }
}

fn explain(model: &LanguageModel, rendered: &str, label: &str) -> Result<String, LlmError> {
    let prompt = model.chat_prompt(&[
        ChatMessage::user(rendered.to_string()),
        ChatMessage::assistant(label.to_string()),
        ChatMessage::user("In one short sentence, why?".to_string()),
    ])?;
    let params = GenerationParams { max_tokens: 60, stop: vec!["\n".into()], ..GenerationParams::default() };
    Ok(model.generate(&prompt, &params, &mut |_| {}, None)?.text.trim().to_string())
}

/// The juries' verdicts from their members', then pass or fail by each spec's own threshold
/// on the final label (calibrated or jury).
pub(super) fn finish_verdicts(judges: &[JudgeSpec], verdicts: &mut BTreeMap<String, Verdict>, question: &Question, answer: &Answer) {
    for spec in judges.iter().filter(|j| j.mode == JudgeMode::Jury) {
        let verdict = jury_verdict(spec, verdicts, question, answer);
        verdicts.insert(spec.name.clone(), verdict);
    }
    for spec in judges {
        if let Some(verdict) = verdicts.get_mut(&spec.name) {
            verdict.passed = verdict.label.as_deref().and_then(|label| spec.passes(label));
        }
    }
}

/// An input the judge needs but the item lacks (e.g. no retrieved context for faithfulness).
pub(super) fn missing_input(spec: &JudgeSpec, variables: &BTreeMap<&str, String>) -> Option<String> {
    spec.inputs
        .iter()
        .find(|input| !variables.contains_key(input.as_str()))
        .map(|input| format!("the item has no `{input}` (needed by judge {})", spec.name))
}

impl super::Judging for JudgePanel {
    fn names(&self) -> Vec<String> {
        JudgePanel::names(self)
    }

    fn judge(&mut self, question: &Question, answer: &Answer) -> BTreeMap<String, Verdict> {
        JudgePanel::judge(self, question, answer)
    }
}

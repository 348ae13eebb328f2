//! Option scoring: how likely the model finds each of several continuations after a prompt.
//! The judges pick an allowed outcome this way, without parsing free text: the prompt is read
//! once, each option costs one forward pass over its own tokens.

use serde::Serialize;

use super::error::{LlmError, Result};
use super::model::LanguageModel;
use super::prompt_state::PromptState;
use super::transformer::log_softmax;

#[derive(Debug, Clone, Serialize)]
pub struct OptionScore {
    pub option: String,
    pub tokens: Vec<u32>,
    /// Log-probability of each token of the option given everything before it.
    pub token_logprobs: Vec<f32>,
    /// Sum of `token_logprobs`: the log-probability of the whole option.
    pub logprob: f32,
}

impl OptionScore {
    /// Mean log-probability per token (compares options of different lengths more fairly).
    pub fn mean_logprob(&self) -> f32 {
        self.logprob / self.tokens.len().max(1) as f32
    }
}

impl LanguageModel {
    /// Score each option as a continuation of `state` (which is not changed). Options are
    /// tokenized on their own, so start them with the space the text needs (" Yes").
    pub fn score_options<S: AsRef<str>>(&self, state: &PromptState, options: &[S]) -> Result<Vec<OptionScore>> {
        if state.next_logits.is_empty() {
            return Err(LlmError::Invalid("option scoring needs a prompt of at least one token".into()));
        }
        let first = log_softmax(&state.next_logits);
        let mut scores = Vec::with_capacity(options.len());
        for option in options {
            let option = option.as_ref();
            let tokens = self.encode_continuation(option)?;
            if tokens.is_empty() {
                return Err(LlmError::Invalid(format!("option `{option}` has no tokens")));
            }
            let mut token_logprobs = Vec::with_capacity(tokens.len());
            token_logprobs.push(logprob_of(&first, tokens[0])?);
            if tokens.len() > 1 {
                // Every position but the last predicts the next token of the option.
                self.check_fits(state.cache.len() + tokens.len() - 1)?;
                let mut cache = state.cache.clone();
                let logits = self.forward(&tokens[..tokens.len() - 1], &mut cache, true)?;
                let rows = logits.to_vec2::<f32>()?;
                for (row, &next) in rows.iter().zip(&tokens[1..]) {
                    token_logprobs.push(logprob_of(&log_softmax(row), next)?);
                }
            }
            scores.push(OptionScore {
                option: option.to_string(),
                logprob: token_logprobs.iter().sum(),
                tokens,
                token_logprobs,
            });
        }
        Ok(scores)
    }
}

fn logprob_of(logprobs: &[f32], token: u32) -> Result<f32> {
    logprobs.get(token as usize).copied().ok_or_else(|| {
        LlmError::Invalid(format!("token {token} is outside the model's vocabulary of {}", logprobs.len()))
    })
}

/// Probabilities of the options relative to each other (softmax of their summed
/// log-probabilities): the judge's distribution over outcomes.
pub fn option_distribution(scores: &[OptionScore]) -> Vec<f64> {
    let max = scores
        .iter()
        .map(|s| s.logprob as f64)
        .fold(f64::NEG_INFINITY, f64::max);
    let exps: Vec<f64> = scores.iter().map(|s| (s.logprob as f64 - max).exp()).collect();
    let total: f64 = exps.iter().sum();
    exps.iter().map(|e| e / total).collect()
}

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

/// Each outcome's log-probability from a server's top first tokens (token text, logprob): the
/// probability of the top tokens that begin it and no other outcome, summed. An outcome none of
/// them begins gets what a token outside the top is worth on average (`unseen_token_logprob`).
/// None when no outcome is begun at all.
pub fn first_token_outcome_logprobs(outcomes: &[String], top: &[(String, f64)]) -> Option<Vec<f64>> {
    let lowered: Vec<String> = outcomes.iter().map(|o| o.to_lowercase()).collect();
    let mut mass = vec![0.0f64; outcomes.len()];
    for (token, logprob) in top {
        let piece = token.trim_start().to_lowercase();
        if piece.is_empty() {
            continue;
        }
        let begun: Vec<usize> = (0..outcomes.len()).filter(|&i| lowered[i].starts_with(&piece)).collect();
        if let [only] = begun.as_slice() {
            mass[*only] += logprob.exp();
        }
    }
    if mass.iter().all(|m| *m == 0.0) {
        return None;
    }
    let unseen = unseen_token_logprob(top);
    Some(mass.iter().map(|&m| if m > 0.0 { m.ln() } else { unseen }).collect())
}

/// The smallest vocabulary of the common chat models (Llama 2 and Mistral: 32,000 tokens).
/// Larger vocabularies share what the top leaves out among more tokens, so this errs towards
/// an outcome the server left out.
const SMALLEST_VOCABULARY: f64 = 32_000.0;

/// The log-probability of a token the server left out of its top: the probability the top
/// leaves (1 − their sum) shared among the rest of the vocabulary, and never more than the least
/// probable token shown. The least probable token shown is only a bound: with it, an outcome
/// the model all but rules out (`tie` between two answers) scored 0.13 on a served SmolLM2
/// where the same model in process gives it 0.0002, and the other outcomes lost that much.
fn unseen_token_logprob(top: &[(String, f64)]) -> f64 {
    let least_shown = top.iter().map(|(_, l)| *l).fold(f64::INFINITY, f64::min);
    let shown: f64 = top.iter().map(|(_, l)| l.exp()).sum();
    let rest = (SMALLEST_VOCABULARY - top.len() as f64).max(1.0);
    // The top's own rounding can leave nothing over; the least positive value keeps it finite.
    let share = ((1.0 - shown).max(0.0) / rest).max(f64::MIN_POSITIVE);
    share.ln().min(least_shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn top(pairs: &[(&str, f64)]) -> Vec<(String, f64)> {
        pairs.iter().map(|(t, p)| (t.to_string(), p.ln())).collect()
    }

    #[test]
    fn spellings_of_an_outcome_add_up_and_shared_prefixes_count_for_neither() {
        let outcomes = vec!["No".to_string(), "Yes".to_string()];
        let lp = first_token_outcome_logprobs(&outcomes, &top(&[("Yes", 0.5), (" yes", 0.2), ("No", 0.1), ("Maybe", 0.05)])).unwrap();
        assert!((lp[1].exp() - 0.7).abs() < 1e-9 && (lp[0].exp() - 0.1).abs() < 1e-9);
        let graded: Vec<String> = ["Awful", "Poor", "Good", "Perfect"].iter().map(|s| s.to_string()).collect();
        let lp = first_token_outcome_logprobs(&graded, &top(&[("P", 0.6), ("Good", 0.3), ("Per", 0.05)])).unwrap();
        // "P" begins Poor and Perfect: neither gets it; Awful and Poor get a left-out token's
        // share of the 0.05 the top leaves.
        assert!((lp[2].exp() - 0.3).abs() < 1e-9 && (lp[3].exp() - 0.05).abs() < 1e-9);
        assert_eq!(lp[0], lp[1]);
        assert!((lp[0].exp() - 0.05 / (SMALLEST_VOCABULARY - 3.0)).abs() < 1e-12, "{}", lp[0].exp());
        assert!(first_token_outcome_logprobs(&outcomes, &top(&[("Maybe", 0.9)])).is_none());
    }

    #[test]
    fn a_left_out_outcome_is_worth_at_most_the_least_token_shown() {
        let outcomes = vec!["No".to_string(), "Yes".to_string()];
        // A flat top of 21 that leaves 0.899 over: the share of one of the rest is below the
        // least shown (0.001), so the share stands.
        let flat: Vec<(String, f64)> = (0..20).map(|i| (format!("w{i}"), 0.005f64.ln())).chain([("Yes".to_string(), 0.001f64.ln())]).collect();
        let lp = first_token_outcome_logprobs(&outcomes, &flat).unwrap();
        let leaves: f64 = 1.0 - flat.iter().map(|(_, l)| l.exp()).sum::<f64>();
        assert!((lp[0].exp() - leaves / (SMALLEST_VOCABULARY - 21.0)).abs() < 1e-12);
        // Two tokens shown, the second tiny, nearly everything left over: capped at the least shown.
        let lp = first_token_outcome_logprobs(&outcomes, &top(&[("Yes", 0.01), ("x", 1e-9)])).unwrap();
        assert!((lp[0] - (1e-9f64).ln()).abs() < 1e-9, "{}", lp[0].exp());
        // A top that takes it all (rounded past 1): finite, and far below every outcome shown.
        let lp = first_token_outcome_logprobs(&outcomes, &top(&[("Yes", 0.7), ("yes", 0.3000001)])).unwrap();
        assert!(lp[0].is_finite() && lp[0] < -700.0);
    }
}

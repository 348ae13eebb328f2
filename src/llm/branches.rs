//! Scoring several continuations of one prompt state side by side. A judge that checks many
//! short statements against one text reads the text once and then each check's few tokens;
//! read one after another, every check is a forward step of its own over a handful of rows,
//! which streams every weight once per check and is too short for the prompt kernels. Read as
//! branches of one step (`TransformerWeights::forward_branches`), the checks share those.

use super::error::{LlmError, Result};
use super::model::LanguageModel;
use super::prompt_state::PromptState;
use super::scoring::OptionScore;
use super::transformer::{log_softmax, logits_rows};

/// Most new tokens read in one step of branches: bounds the attention scores' memory the way
/// prompts are read in chunks.
const BRANCH_STEP_TOKENS: usize = 512;

impl LanguageModel {
    /// Each option scored after `base` continued with each of `continuations`, when every
    /// option is one token: `[continuation][option]`. None when an option takes
    /// more than one token (those need each continuation's own state: `extend` then
    /// `score_options`). The continuations are read in steps of at most 512 new tokens.
    pub fn score_one_token_options_after<S: AsRef<str>>(
        &self,
        base: &PromptState,
        continuations: &[&[u32]],
        options: &[S],
    ) -> Result<Option<Vec<Vec<OptionScore>>>> {
        let mut option_tokens = Vec::with_capacity(options.len());
        for option in options {
            match self.encode_continuation(option.as_ref())?.as_slice() {
                [token] => option_tokens.push(*token),
                _ => return Ok(None),
            }
        }
        let mut scores = Vec::with_capacity(continuations.len());
        for step in steps(continuations, BRANCH_STEP_TOKENS) {
            for tokens in step {
                if tokens.is_empty() {
                    return Err(LlmError::Invalid("a continuation of no tokens".into()));
                }
                self.check_fits(base.len() + tokens.len() + 1)?;
            }
            let logits = self.forward_branches(step, &base.cache)?;
            for row in logits_rows(&logits)? {
                let logprobs = log_softmax(&row);
                let of_options = options
                    .iter()
                    .zip(&option_tokens)
                    .map(|(option, &t)| {
                        let logprob = logprobs.get(t as usize).copied().ok_or_else(|| {
                            LlmError::Invalid(format!("token {t} is outside the model's vocabulary of {}", logprobs.len()))
                        })?;
                        Ok(OptionScore { option: option.as_ref().to_string(), tokens: vec![t], token_logprobs: vec![logprob], logprob })
                    })
                    .collect::<Result<Vec<OptionScore>>>()?;
                scores.push(of_options);
            }
        }
        Ok(Some(scores))
    }
}

/// `continuations` cut into consecutive runs of at most `budget` tokens (a longer one alone).
fn steps<'a, 'b>(continuations: &'b [&'a [u32]], budget: usize) -> Vec<&'b [&'a [u32]]> {
    let mut out = Vec::new();
    let (mut start, mut tokens) = (0, 0);
    for (i, c) in continuations.iter().enumerate() {
        if i > start && tokens + c.len() > budget {
            out.push(&continuations[start..i]);
            (start, tokens) = (i, 0);
        }
        tokens += c.len();
    }
    if start < continuations.len() {
        out.push(&continuations[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::steps;

    #[test]
    fn steps_keep_order_and_budget() {
        let (a, b, c, d) = (vec![1u32; 300], vec![2u32; 200], vec![3u32; 100], vec![4u32; 600]);
        let all: Vec<&[u32]> = vec![&a, &b, &c, &d];
        let cut = steps(&all, 512);
        let sizes: Vec<usize> = cut.iter().map(|s| s.len()).collect();
        assert_eq!(sizes, vec![2, 1, 1]);
        assert_eq!(cut.iter().map(|s| s.len()).sum::<usize>(), 4);
        assert_eq!(cut[2][0][0], 4);
        assert!(steps(&[], 512).is_empty());
    }
}

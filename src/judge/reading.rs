//! Reading prompts that begin alike once: the judges of one item all start with the item's
//! text, and the claim checks against one text all start with that text. A `Reader` keeps the
//! model's state after each shared beginning and continues a clone of it for each prompt, so
//! every shared token is read once per item; it counts the tokens it reads.

use super::prompt::user_prompt_tokens;
use crate::llm::error::LlmError;
use crate::llm::model::LanguageModel;
use crate::llm::prompt_state::PromptState;
use crate::llm::prompt_text::untrusted;

/// How a judge panel reads its prompts (the older ways are kept to measure the difference).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reading {
    /// Every prompt read whole, from its first token.
    Whole,
    /// Only the chat template's text before the item is reused (read once per panel); each
    /// prompt reads the item again. This is how judges read before items were shared.
    TemplateOnly,
    /// The template once per panel, and every stretch that prompts of one item share once per
    /// item: the item before the judges' rubrics, a text before its claims.
    Shared,
}

/// Tokens the two sequences share at their start.
pub fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// For each sequence, the longest start it shares with any other: where a state is worth
/// keeping so the others can continue from it.
pub fn branch_points(sequences: &[Vec<u32>]) -> Vec<usize> {
    sequences
        .iter()
        .enumerate()
        .map(|(i, s)| {
            sequences
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, t)| common_prefix(s, t))
                .max()
                .unwrap_or(0)
        })
        .collect()
}

/// The state after the chat template's text that comes before any user message, read once per
/// panel and reused by every prompt; None when the template puts nothing there to reuse.
pub fn template_state(model: &LanguageModel) -> Result<Option<PromptState>, LlmError> {
    let probe = |value: &str| user_prompt_tokens(model, &untrusted(value));
    let (a, b) = (probe("Alpha")?, probe("Omega")?);
    // A margin: text after the template may merge with its last tokens.
    let shared = common_prefix(&a, &b).saturating_sub(2);
    if shared == 0 {
        return Ok(None);
    }
    model.prefill(&a[..shared]).map(Some)
}

/// The template state for a judge that keeps it between items: read on first use (counted in
/// `tokens_read`), then reused; none under `Reading::Whole` or when the template has no shared
/// start, so every prompt is read whole (slower, the same distributions).
pub fn cached_template_states(
    model: &LanguageModel,
    reading: Reading,
    cache: &mut Option<Option<PromptState>>,
    tokens_read: &mut usize,
) -> Vec<PromptState> {
    if reading == Reading::Whole {
        return Vec::new();
    }
    let state = cache.get_or_insert_with(|| {
        let state = template_state(model).ok().flatten();
        *tokens_read += state.as_ref().map_or(0, |s| s.len());
        state
    });
    state.clone().into_iter().collect()
}

/// The states read so far for one item (and the panel's template state).
pub struct Reader<'m> {
    model: &'m LanguageModel,
    states: Vec<PromptState>,
    keep: bool,
    /// Prompt tokens run through the model by this reader.
    pub tokens_read: usize,
}

impl<'m> Reader<'m> {
    /// A reader starting from `known` states (e.g. the template); `keep` false never stores new
    /// states, so each prompt is read from the longest known state only.
    pub fn new(model: &'m LanguageModel, known: Vec<PromptState>, keep: bool) -> Self {
        Reader { model, states: known, keep, tokens_read: 0 }
    }

    /// The state after `tokens`: continued from the longest known state they start with. When
    /// `keep_at` is past that state, the state after `tokens[..keep_at]` is kept for later
    /// prompts that share it.
    pub fn read(&mut self, tokens: &[u32], keep_at: usize) -> Result<PromptState, LlmError> {
        if tokens.is_empty() {
            return Err(LlmError::Invalid("a judge prompt of no tokens".into()));
        }
        // Refuse before any work when the prompt cannot fit (the options need room too).
        self.model.check_fits(tokens.len() + 1)?;
        let base = self
            .states
            .iter()
            .filter(|s| s.len() <= tokens.len() && !s.next_logits.is_empty() && tokens.starts_with(&s.tokens))
            .max_by_key(|s| s.len())
            .cloned();
        let mut state = base.unwrap_or_else(|| PromptState {
            cache: self.model.new_cache(),
            tokens: Vec::new(),
            next_logits: Vec::new(),
        });
        if self.keep && keep_at > state.len() && keep_at < tokens.len() {
            let from = state.len();
            self.model.extend_in_place(&mut state, &tokens[from..keep_at])?;
            self.tokens_read += keep_at - from;
            self.states.push(state.clone());
        }
        let from = state.len();
        self.model.extend_in_place(&mut state, &tokens[from..])?;
        self.tokens_read += tokens.len() - from;
        Ok(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_points_are_the_longest_shared_starts() {
        let seqs = vec![vec![1, 2, 3, 4], vec![1, 2, 3, 9], vec![1, 7]];
        assert_eq!(branch_points(&seqs), vec![3, 3, 1]);
        assert_eq!(branch_points(&[vec![1, 2]]), vec![0]);
        assert_eq!(common_prefix(&[1, 2], &[1, 2, 3]), 2);
    }
}

//! A prompt after the model has read it: its KV cache, its tokens and the logits for the next
//! token. Cloning is cheap, which is what prefix reuse is: read a shared prefix (a judge's
//! rubric) once, then continue a clone with each item.

use std::sync::atomic::{AtomicBool, Ordering};

use candle_core::Tensor;

use super::error::Result;
use super::model::LanguageModel;
use super::transformer::KvCache;

/// Prompts are read in chunks of this many tokens, bounding the attention scores' memory.
const PREFILL_CHUNK: usize = 512;

#[derive(Debug, Clone)]
pub struct PromptState {
    pub cache: KvCache,
    pub tokens: Vec<u32>,
    /// Logits (f32, whole vocabulary) for the token after `tokens`.
    pub next_logits: Vec<f32>,
}

impl PromptState {
    pub fn len(&self) -> usize {
        self.tokens.len()
    }
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }
}

impl LanguageModel {
    /// Read `tokens` from scratch.
    pub fn prefill(&self, tokens: &[u32]) -> Result<PromptState> {
        let empty = PromptState {
            cache: self.new_cache(),
            tokens: Vec::new(),
            next_logits: Vec::new(),
        };
        self.extend(&empty, tokens)
    }

    /// `prefill`, checking `cancel` before each chunk (the same chunks, so the same numbers):
    /// None when it was raised. A long prompt on a large model takes seconds to read.
    pub fn prefill_cancellable(&self, tokens: &[u32], cancel: Option<&AtomicBool>) -> Result<Option<PromptState>> {
        self.check_fits(tokens.len())?;
        let mut state = PromptState {
            cache: self.new_cache(),
            tokens: Vec::new(),
            next_logits: Vec::new(),
        };
        for chunk in tokens.chunks(PREFILL_CHUNK) {
            if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                return Ok(None);
            }
            self.extend_in_place(&mut state, chunk)?;
        }
        Ok(Some(state))
    }

    /// A new state: `state` continued with `tokens` (`state` itself is left as it was).
    pub fn extend(&self, state: &PromptState, tokens: &[u32]) -> Result<PromptState> {
        let mut next = state.clone();
        self.extend_in_place(&mut next, tokens)?;
        Ok(next)
    }

    /// Continue `state` with `tokens`.
    pub fn extend_in_place(&self, state: &mut PromptState, tokens: &[u32]) -> Result<()> {
        if tokens.is_empty() {
            return Ok(());
        }
        self.check_fits(state.cache.len() + tokens.len())?;
        let mut last: Option<Tensor> = None;
        for chunk in tokens.chunks(PREFILL_CHUNK) {
            last = Some(self.forward(chunk, &mut state.cache, false)?);
        }
        if let Some(logits) = last {
            state.next_logits = logits.squeeze(0)?.to_vec1::<f32>()?;
        }
        state.tokens.extend_from_slice(tokens);
        Ok(())
    }

    /// Tokenize and read a prompt text (BOS first when the model wants one).
    pub fn prefill_text(&self, text: &str) -> Result<PromptState> {
        let tokens = self.encode_prompt(text)?;
        self.prefill(&tokens)
    }
}

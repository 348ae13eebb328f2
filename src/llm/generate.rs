//! Text generation: greedy or seeded sampling (temperature, top-k, top-p, repeat penalty), stop
//! sequences, a token budget, streaming of finished text, and cancellation between tokens (and
//! between the 512-token chunks a long prompt is read in).
//! The same model, prompt, parameters and seed give the same text.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use candle_core::{Device, Tensor};
use candle_transformers::generation::{LogitsProcessor, Sampling};
use serde::{Deserialize, Serialize};

use super::error::{LlmError, Result};
use super::model::LanguageModel;
use super::prompt_state::PromptState;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GenerationParams {
    pub max_tokens: usize,
    /// 0 means greedy (always the most likely token).
    pub temperature: f64,
    pub top_k: Option<usize>,
    pub top_p: Option<f64>,
    /// 1.0 is none; above 1 discourages tokens seen in the last `repeat_last_n`.
    pub repeat_penalty: f32,
    pub repeat_last_n: usize,
    pub seed: u64,
    /// Generation ends before the first of these texts; it is not part of the result.
    pub stop: Vec<String>,
}

impl Default for GenerationParams {
    fn default() -> Self {
        GenerationParams {
            max_tokens: 256,
            temperature: 0.0,
            top_k: None,
            top_p: None,
            repeat_penalty: 1.0,
            repeat_last_n: 64,
            seed: 0,
            stop: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// The model ended its reply (EOS or an end-of-turn token).
    EndOfText,
    /// A stop sequence appeared.
    Stop,
    MaxTokens,
    /// The context window is full.
    ContextFull,
    Cancelled,
}

#[derive(Debug, Clone, Serialize)]
pub struct Generation {
    pub text: String,
    pub tokens: Vec<u32>,
    pub prompt_tokens: usize,
    pub finish: FinishReason,
    pub prompt_seconds: f64,
    pub decode_seconds: f64,
}

impl LanguageModel {
    /// Generate a reply to a prompt text (already formatted, e.g. by [`LanguageModel::chat_prompt`]).
    /// `on_text` receives the text as it becomes final; `cancel` is checked between tokens.
    pub fn generate(
        &self,
        prompt: &str,
        params: &GenerationParams,
        on_text: &mut dyn FnMut(&str),
        cancel: Option<&AtomicBool>,
    ) -> Result<Generation> {
        let tokens = self.encode_prompt(prompt)?;
        if tokens.len() >= self.context_length() {
            return Err(LlmError::ContextOverflow {
                model: self.name.clone(),
                tokens: tokens.len(),
                context: self.context_length(),
            });
        }
        let start = Instant::now();
        let Some(state) = self.prefill_cancellable(&tokens, cancel)? else {
            return Ok(Generation {
                text: String::new(),
                tokens: Vec::new(),
                prompt_tokens: tokens.len(),
                finish: FinishReason::Cancelled,
                prompt_seconds: start.elapsed().as_secs_f64(),
                decode_seconds: 0.0,
            });
        };
        let prompt_seconds = start.elapsed().as_secs_f64();
        let mut generation = self.generate_after(state, params, on_text, cancel)?;
        generation.prompt_seconds = prompt_seconds;
        Ok(generation)
    }

    /// Generate a continuation of a prompt the model has already read.
    pub fn generate_after(
        &self,
        state: PromptState,
        params: &GenerationParams,
        on_text: &mut dyn FnMut(&str),
        cancel: Option<&AtomicBool>,
    ) -> Result<Generation> {
        if state.next_logits.is_empty() {
            return Err(LlmError::Invalid("generation needs a prompt of at least one token".into()));
        }
        validate(params)?;
        let mut choice = FreeChoice { params };
        self.decode_loop(state, params, &params.stop, &mut choice, on_text, cancel)
    }

    /// The one decode loop (free text here, grammar-constrained text in `structured`): asks
    /// `choice` for each step's tokens, streams the text that is final, and ends on the token
    /// budget, a stop sequence, a full context, cancellation or the end `choice` reports.
    pub(crate) fn decode_loop(
        &self,
        mut state: PromptState,
        params: &GenerationParams,
        stops: &[String],
        choice: &mut dyn TokenChoice,
        on_text: &mut dyn FnMut(&str),
        cancel: Option<&AtomicBool>,
    ) -> Result<Generation> {
        let prompt_tokens = state.tokens.len();
        let mut sampler = LogitsProcessor::from_sampling(params.seed, sampling_for(params));
        let mut stream = StopStream::new(stops);
        let mut generated: Vec<u32> = Vec::new();
        let start = Instant::now();
        let finish = loop {
            if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                break FinishReason::Cancelled;
            }
            if generated.len() >= params.max_tokens {
                break FinishReason::MaxTokens;
            }
            let (tokens, end) = match choice.step(self, &mut state, &mut generated, &mut sampler)? {
                Step::Append(tokens) => (tokens, None),
                Step::AppendAndEnd(tokens, reason) => (tokens, Some(reason)),
            };
            if !tokens.is_empty() {
                generated.extend_from_slice(&tokens);
                let text = self.decode(&generated)?;
                if stream.push(&text, on_text) {
                    break FinishReason::Stop;
                }
            }
            if let Some(reason) = end {
                break reason;
            }
            if !tokens.is_empty() {
                if state.tokens.len() + tokens.len() >= self.context_length() {
                    break FinishReason::ContextFull;
                }
                self.extend_in_place(&mut state, &tokens)?;
            }
        };
        let text = self.decode(&generated)?;
        let text = stream.finish(&text, on_text, finish != FinishReason::Stop);
        Ok(Generation {
            text,
            tokens: generated,
            prompt_tokens,
            finish,
            prompt_seconds: 0.0,
            decode_seconds: start.elapsed().as_secs_f64(),
        })
    }
}

/// What the decode loop appends at one step.
pub(crate) enum Step {
    /// These tokens (one sampled token, or the text a grammar forces, possibly none).
    Append(Vec<u32>),
    /// These tokens, then the end of generation.
    AppendAndEnd(Vec<u32>, FinishReason),
}

/// Chooses each step's tokens. Two kinds: free sampling (`FreeChoice`) and sampling under a
/// grammar (`structured::GrammarChoice`, which may also force or take back tokens).
pub(crate) trait TokenChoice {
    fn step(
        &mut self,
        model: &LanguageModel,
        state: &mut PromptState,
        generated: &mut Vec<u32>,
        sampler: &mut LogitsProcessor,
    ) -> Result<Step>;
}

/// Sampling from the model's next-token distribution, with the repeat penalty; an end-of-text
/// token ends generation and is not part of it.
struct FreeChoice<'a> {
    params: &'a GenerationParams,
}

impl TokenChoice for FreeChoice<'_> {
    fn step(&mut self, model: &LanguageModel, state: &mut PromptState, _: &mut Vec<u32>, sampler: &mut LogitsProcessor) -> Result<Step> {
        let mut logits = state.next_logits.clone();
        if self.params.repeat_penalty != 1.0 {
            let recent_from = state.tokens.len().saturating_sub(self.params.repeat_last_n);
            apply_repeat_penalty(&mut logits, self.params.repeat_penalty, &state.tokens[recent_from..]);
        }
        let n = logits.len();
        let next = sampler.sample(&Tensor::from_vec(logits, n, &Device::Cpu)?)?;
        if model.tokenizer.stop_ids.contains(&next) {
            return Ok(Step::AppendAndEnd(Vec::new(), FinishReason::EndOfText));
        }
        Ok(Step::Append(vec![next]))
    }
}

fn validate(p: &GenerationParams) -> Result<()> {
    let bad = |m: &str| Err(LlmError::Invalid(format!("generation parameters: {m}")));
    if !(p.temperature.is_finite() && p.temperature >= 0.0) {
        return bad("temperature must be 0 or more");
    }
    if let Some(top_p) = p.top_p {
        if !(top_p > 0.0 && top_p <= 1.0) {
            return bad("top_p must be in (0, 1]");
        }
    }
    if p.top_k == Some(0) {
        return bad("top_k must be at least 1");
    }
    if !(p.repeat_penalty.is_finite() && p.repeat_penalty > 0.0) {
        return bad("repeat_penalty must be positive");
    }
    if p.stop.iter().any(|s| s.is_empty()) {
        return bad("a stop sequence is empty");
    }
    Ok(())
}

pub(crate) fn sampling_for(p: &GenerationParams) -> Sampling {
    if p.temperature < 1e-7 {
        return Sampling::ArgMax;
    }
    let temperature = p.temperature;
    match (p.top_k, p.top_p) {
        (None, None) => Sampling::All { temperature },
        (Some(k), None) => Sampling::TopK { k, temperature },
        (None, Some(p)) => Sampling::TopP { p, temperature },
        (Some(k), Some(p)) => Sampling::TopKThenTopP { k, p, temperature },
    }
}

fn apply_repeat_penalty(logits: &mut [f32], penalty: f32, recent: &[u32]) {
    let mut seen = std::collections::HashSet::new();
    for &t in recent {
        if seen.insert(t) {
            if let Some(l) = logits.get_mut(t as usize) {
                *l = if *l >= 0.0 { *l / penalty } else { *l * penalty };
            }
        }
    }
}

/// Streams text while holding back what could still turn out to be the start of a stop
/// sequence (or half a UTF-8 character).
struct StopStream<'a> {
    stops: &'a [String],
    emitted: usize,
}

impl<'a> StopStream<'a> {
    fn new(stops: &'a [String]) -> Self {
        StopStream { stops, emitted: 0 }
    }

    /// Where the first stop sequence starts in `text`, if one is there.
    fn stop_at(&self, text: &str) -> Option<usize> {
        self.stops.iter().filter_map(|s| text.find(s.as_str())).min()
    }

    /// Emit what is final in `text` (the whole decoded output so far); true when a stop
    /// sequence appeared.
    fn push(&mut self, text: &str, on_text: &mut dyn FnMut(&str)) -> bool {
        if let Some(at) = self.stop_at(text) {
            self.emit_to(text, at, on_text);
            return true;
        }
        let mut safe = text.len();
        // A replacement character at the end is an incomplete multi-byte character.
        if text.ends_with('\u{FFFD}') {
            safe -= '\u{FFFD}'.len_utf8();
        }
        for stop in self.stops {
            for k in (1..stop.len()).rev() {
                if stop.is_char_boundary(k) && text[..safe].ends_with(&stop[..k]) {
                    safe = safe.min(text.len() - k).min(safe);
                    break;
                }
            }
        }
        self.emit_to(text, safe, on_text);
        false
    }

    fn emit_to(&mut self, text: &str, end: usize, on_text: &mut dyn FnMut(&str)) {
        let mut end = end.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        if end > self.emitted {
            on_text(&text[self.emitted..end]);
            self.emitted = end;
        }
    }

    /// The final text; emits what was held back unless a stop sequence cut it.
    fn finish(&mut self, text: &str, on_text: &mut dyn FnMut(&str), flush: bool) -> String {
        let end = self.stop_at(text).unwrap_or(text.len());
        if flush {
            self.emit_to(text, end, on_text);
        }
        text[..end].to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::StopStream;

    #[test]
    fn holds_back_a_possible_stop_sequence_and_cuts_at_it() {
        let stops = vec!["\nQ:".to_string()];
        let mut s = StopStream::new(&stops);
        let mut out = String::new();
        assert!(!s.push("Paris", &mut |t| out.push_str(t)));
        assert!(!s.push("Paris.\n", &mut |t| out.push_str(t)));
        assert_eq!(out, "Paris.");
        assert!(s.push("Paris.\nQ: next", &mut |t| out.push_str(t)));
        assert_eq!(out, "Paris.");
        assert_eq!(s.finish("Paris.\nQ: next", &mut |t| out.push_str(t), false), "Paris.");
    }

    #[test]
    fn flushes_held_back_text_at_the_end() {
        let stops = vec!["###".to_string()];
        let mut s = StopStream::new(&stops);
        let mut out = String::new();
        s.push("a #", &mut |t| out.push_str(t));
        assert_eq!(out, "a ");
        assert_eq!(s.finish("a #", &mut |t| out.push_str(t), true), "a #");
        assert_eq!(out, "a #");
    }
}

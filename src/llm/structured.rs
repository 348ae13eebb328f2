//! Structured output: generation constrained to a JSON schema with llguidance, so that a claim
//! list or a question/answer/quote triple always parses, even from a 135M model. At each step
//! llguidance says which tokens may come next; all others are removed before sampling.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use candle_core::{Device, Tensor};
use candle_transformers::generation::LogitsProcessor;
use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{TokEnv, TokRxInfo, TokTrie, TokenId, TokenizerEnv};
use llguidance::{Constraint, ParserFactory};

use super::error::{LlmError, Result};
use super::generate::{FinishReason, Generation, GenerationParams, Step, TokenChoice};
use super::gguf_tokenizer::ModelTokenizer;
use super::model::LanguageModel;
use super::prompt_state::PromptState;

/// The model's vocabulary as llguidance sees it: each token's bytes, and our tokenizer for
/// the text it forces.
struct GrammarVocabulary {
    trie: TokTrie,
    tokenizer: ModelTokenizer,
}

impl TokenizerEnv for GrammarVocabulary {
    fn tok_trie(&self) -> &TokTrie {
        &self.trie
    }

    fn tokenize_bytes(&self, s: &[u8]) -> Vec<TokenId> {
        let text = String::from_utf8_lossy(s);
        // Forced text of the grammar comes here, and it can be a quote of untrusted text: read
        // it as plain text, never as control markers.
        self.tokenizer.encode_plain(&text).unwrap_or_default()
    }

    fn tokenize_is_canonical(&self) -> bool {
        true
    }
}

fn grammar_error(e: impl std::fmt::Display) -> LlmError {
    LlmError::Invalid(format!("structured output: {e}"))
}

/// The parser factory of a model (built once per model: it precomputes over the vocabulary).
fn parser_factory(model: &LanguageModel) -> Result<Arc<ParserFactory>> {
    model.grammar.get_or_init(|| build_factory(model).map_err(|e| e.to_string()))
        .clone()
        .map_err(grammar_error)
}

fn build_factory(model: &LanguageModel) -> Result<Arc<ParserFactory>> {
    let json = model
        .tokenizer
        .tokenizer
        .to_string(false)
        .map_err(grammar_error)?;
    let value: serde_json::Value = serde_json::from_str(&json).map_err(grammar_error)?;
    let mut words = llguidance::token_bytes_from_tokenizer_json(&value).map_err(grammar_error)?;
    let vocab = model.config().vocab;
    // The output layer may be wider than the tokenizer's vocabulary (padding rows).
    words.resize(vocab.max(words.len()), Vec::new());
    let eos = model
        .tokenizer
        .eos_id
        .ok_or_else(|| grammar_error("the model has no end-of-text token"))?;
    let info = TokRxInfo {
        vocab_size: words.len() as u32,
        tok_eos: eos,
        tok_bos: model.tokenizer.bos_id,
        tok_pad: None,
        tok_unk: None,
        tok_end_of_turn: None,
    };
    let env: TokEnv = Arc::new(GrammarVocabulary {
        trie: TokTrie::from(&info, &words),
        tokenizer: model.tokenizer.clone(),
    });
    let mut factory = ParserFactory::new_simple(&env).map_err(grammar_error)?;
    // Quiet: llguidance would otherwise print warnings about the grammar to stderr.
    factory.set_stderr_log_level(0);
    Ok(Arc::new(factory))
}

impl LanguageModel {
    /// Generate text that is valid JSON for `schema` (a JSON Schema), after `prompt`.
    /// Sampling parameters apply among the allowed tokens; stop sequences are not used.
    pub fn generate_json(
        &self,
        prompt: &str,
        schema: &serde_json::Value,
        params: &GenerationParams,
        on_text: &mut dyn FnMut(&str),
        cancel: Option<&AtomicBool>,
    ) -> Result<Generation> {
        let start = Instant::now();
        let state = self.prefill_text(prompt)?;
        let prompt_seconds = start.elapsed().as_secs_f64();
        let mut generation = self.generate_json_after(state, schema, params, on_text, cancel)?;
        generation.prompt_seconds = prompt_seconds;
        Ok(generation)
    }

    /// `generate_json` after a prompt the model has already read (a shared prefix continued).
    pub fn generate_json_after(
        &self,
        state: PromptState,
        schema: &serde_json::Value,
        params: &GenerationParams,
        on_text: &mut dyn FnMut(&str),
        cancel: Option<&AtomicBool>,
    ) -> Result<Generation> {
        let mut schema = schema.clone();
        // Compact JSON on one line: with free whitespace, small models loop on newlines.
        if let Some(obj) = schema.as_object_mut() {
            obj.entry("x-guidance").or_insert_with(|| {
                serde_json::json!({
                    "whitespace_flexible": false,
                    "item_separator": ", ",
                    "key_separator": ": ",
                })
            });
        }
        self.generate_constrained(state, TopLevelGrammar::from_json_schema(schema), params, on_text, cancel)
    }

    /// Generate text in the language of a Lark grammar (llguidance's dialect: `%json {schema}`
    /// embeds a JSON schema, `%regex {"substring_words": text}` matches any run of whole words
    /// of `text`, which is how a quote is made verbatim by construction).
    pub fn generate_lark(
        &self,
        prompt: &str,
        grammar: &str,
        params: &GenerationParams,
        on_text: &mut dyn FnMut(&str),
        cancel: Option<&AtomicBool>,
    ) -> Result<Generation> {
        let start = Instant::now();
        let state = self.prefill_text(prompt)?;
        let prompt_seconds = start.elapsed().as_secs_f64();
        let mut generation = self.generate_lark_after(state, grammar, params, on_text, cancel)?;
        generation.prompt_seconds = prompt_seconds;
        Ok(generation)
    }

    /// `generate_lark` after a prompt the model has already read (e.g. a reply it just
    /// wrote, followed by a cue).
    pub fn generate_lark_after(
        &self,
        state: PromptState,
        grammar: &str,
        params: &GenerationParams,
        on_text: &mut dyn FnMut(&str),
        cancel: Option<&AtomicBool>,
    ) -> Result<Generation> {
        self.generate_constrained(state, TopLevelGrammar::from_lark(grammar.to_string()), params, on_text, cancel)
    }

    fn generate_constrained(
        &self,
        state: PromptState,
        grammar: TopLevelGrammar,
        params: &GenerationParams,
        on_text: &mut dyn FnMut(&str),
        cancel: Option<&AtomicBool>,
    ) -> Result<Generation> {
        let factory = parser_factory(self)?;
        let parser = factory.create_parser(grammar).map_err(grammar_error)?;
        let mut choice = GrammarChoice { constraint: Constraint::new(parser), prompt_tokens: state.tokens.len() };
        // The grammar decides where the text ends: no stop sequences.
        self.decode_loop(state, params, &[], &mut choice, on_text, cancel)
    }
}

/// Sampling among the tokens the grammar allows next; the grammar may also force text (no
/// sampling needed), end the output, or take back tokens (token healing at boundaries).
struct GrammarChoice {
    constraint: Constraint,
    prompt_tokens: usize,
}

impl TokenChoice for GrammarChoice {
    fn step(&mut self, model: &LanguageModel, state: &mut PromptState, generated: &mut Vec<u32>, sampler: &mut LogitsProcessor) -> Result<Step> {
        let mask = self.constraint.compute_mask().map_err(grammar_error)?;
        if mask.is_stop() {
            return Ok(Step::AppendAndEnd(Vec::new(), FinishReason::EndOfText));
        }
        let sampled = match &mask.sample_mask {
            Some(mask) => {
                let mut logits = state.next_logits.clone();
                for (i, l) in logits.iter_mut().enumerate() {
                    if !mask.is_allowed(i as TokenId) {
                        *l = f32::NEG_INFINITY;
                    }
                }
                let n = logits.len();
                Some(sampler.sample(&Tensor::from_vec(logits, n, &Device::Cpu)?)?)
            }
            None => None,
        };
        let commit = self.constraint.commit_token(sampled).map_err(grammar_error)?;
        if commit.backtrack > 0 {
            let keep = generated
                .len()
                .checked_sub(commit.backtrack as usize)
                .ok_or_else(|| grammar_error("backtrack past the start of the output"))?;
            generated.truncate(keep);
            let mut tokens = state.tokens.clone();
            tokens.truncate(self.prompt_tokens + keep);
            // Re-read from the prompt: backtracking is rare.
            *state = model.prefill(&tokens)?;
        }
        let forced: Vec<u32> = commit.ff_tokens.iter().copied().filter(|t| !model.tokenizer.stop_ids.contains(t)).collect();
        Ok(if commit.stop { Step::AppendAndEnd(forced, FinishReason::EndOfText) } else { Step::Append(forced) })
    }
}

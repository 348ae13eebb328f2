//! Errors of the model runtime: loading, tokenizer, chat template, generation, servers (the
//! model files' own errors are `models::error::ModelsError`, carried inside).
//!
//! Each variant names the file or model it is about, so a user sees what to fix.

use crate::models::error::ModelsError;
use crate::models::error::candle_message;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// A model file problem: not registered, not installed, a wrong sha256, a bad header.
    #[error(transparent)]
    Models(#[from] ModelsError),
    #[error("{path}: not a usable GGUF model: {message}")]
    Gguf { path: PathBuf, message: String },
    #[error("{path}: tokenizer: {message}")]
    Tokenizer { path: PathBuf, message: String },
    #[error("{path}: chat template: {message}")]
    ChatTemplate { path: PathBuf, message: String },
    #[error("prompt of {tokens} tokens does not fit the context window of {context} tokens of {model}")]
    ContextOverflow {
        model: String,
        tokens: usize,
        context: usize,
    },
    #[error("device: {0}")]
    Device(String),
    /// `overflow`: the prompt did not fit the server's context window (a judge cuts and retries).
    #[error("{endpoint}: {message}")]
    Server { endpoint: String, message: String, overflow: Option<ContextOverflow> },
    #[error("{0}")]
    Invalid(String),
    #[error("model computation failed: {}", candle_message(.0))]
    Compute(#[from] candle_core::Error),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl LlmError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        LlmError::Io {
            path: path.into(),
            source,
        }
    }
}

pub type Result<T> = std::result::Result<T, LlmError>;

/// A prompt longer than a server's context window, with the sizes the server stated (llama-
/// server states both; vLLM and OpenAI-style servers write them in their message).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextOverflow {
    pub prompt_tokens: Option<usize>,
    pub window: Option<usize>,
}

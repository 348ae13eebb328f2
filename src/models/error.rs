//! Errors of the model files: the registry, installing (pull, add, scan) and reading GGUF headers.
//!
//! Each variant names the file or model it is about, so a user sees what to fix.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ModelsError {
    #[error("{file}: {field}: {message}")]
    Registry {
        file: PathBuf,
        field: String,
        message: String,
    },
    #[error("unknown model id `{id}` (known: {known})")]
    UnknownModel { id: String, known: String },
    #[error("model `{id}` is not installed: run `assay models pull {id}`")]
    NotInstalled { id: String },
    #[error("{path}: sha256 is {actual}, expected {expected}")]
    Sha256Mismatch {
        path: PathBuf,
        expected: String,
        actual: String,
    },
    #[error("{path}: size is {actual} bytes, expected {expected}")]
    SizeMismatch {
        path: PathBuf,
        expected: u64,
        actual: u64,
    },
    #[error("pulling `{id}`: {message}")]
    Pull { id: String, message: String },
    #[error("{path}: not a usable GGUF model: {message}")]
    Gguf { path: PathBuf, message: String },
    #[error("{0}")]
    Invalid(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl ModelsError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        ModelsError::Io {
            path: path.into(),
            source,
        }
    }
}

/// candle's message without the backtrace candle attaches to it when `RUST_BACKTRACE` is set
/// (a user needs the reason, not our stack). Shared with the runtime's errors.
pub(crate) fn candle_message(error: &candle_core::Error) -> String {
    match error {
        candle_core::Error::WithBacktrace { inner, .. } => candle_message(inner),
        other => other.to_string(),
    }
}

pub type Result<T> = std::result::Result<T, ModelsError>;

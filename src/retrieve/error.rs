//! Errors of the retrieval stage. Per-document problems are not errors (see
//! `corpus::DocumentIssue`); these stop indexing or searching as a whole.

use super::minilm::EmbedError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum RetrieveError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("tantivy index at {path}: {message}")]
    Index { path: PathBuf, message: String },
    #[error("{path}: unreadable index file: {message}")]
    Corrupt { path: PathBuf, message: String },
    #[error("unknown retrieval mode {0:?}; expected bm25, dense or hybrid")]
    UnknownMode(String),
    #[error("retrieval mode {0} needs MiniLM embeddings; load the model and call ensure_embeddings first")]
    NoEmbeddings(&'static str),
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error(transparent)]
    Cancelled(#[from] crate::corpus::ReadCancelled),
    #[error("reranking with {model}: {source}")]
    Rerank { model: String, source: crate::llm::error::LlmError },
}

impl RetrieveError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io { path: path.into(), source }
    }

    pub(crate) fn index(path: impl Into<PathBuf>, e: impl std::fmt::Display) -> Self {
        Self::Index { path: path.into(), message: e.to_string() }
    }
}

//! Retrieval: a tantivy BM25 index over a corpus's chunks, cached on disk under a fingerprint
//! of the documents and the settings, optional MiniLM vectors beside it, and fusion of the two.
//!
//! An optional second stage (`rerank`) rescores the first stage's best chunks with a language
//! model.
//!
//! A stale index silently ruins an evaluation, so the cache is keyed by content hashes, never
//! by modification times, and every open says whether it reused or rebuilt the index and why.

pub(crate) mod bm25;
mod cache;
pub(crate) mod dense;
mod error;
mod fingerprint;
mod fusion;
mod minilm;
mod rerank;
mod search;
mod shared_vectors;

pub use cache::{
    index_dataset, index_dataset_cancellable, index_dir_for, open_or_build, open_or_build_cancellable, CorpusIndex, IndexManifest, IndexReport,
    IndexStatus,
};
pub use dense::EmbeddingStatus;
pub use error::RetrieveError;
pub use fingerprint::{DocumentState, IndexSettings};
pub use fusion::reciprocal_rank_fusion;
pub use minilm::{minilm_dir, EmbedError, MiniLm, MINILM_ID};
pub use rerank::{fuse_with_first_stage, relevance_prompt, RerankCost, RerankModel, Reranker, DEFAULT_RERANK_DEPTH};

use serde::{Deserialize, Serialize};

/// How chunks are ranked for a question. `Default` is BM25, the mode that needs no model; a run
/// that names no mode gets `run::default_retrieval` (hybrid when MiniLM is installed).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash, Default)]
#[serde(rename_all = "lowercase")]
pub enum RetrievalMode {
    /// Lexical: tantivy BM25 over heading + text, English stemming.
    #[default]
    Bm25,
    /// MiniLM embeddings, cosine similarity.
    Dense,
    /// Reciprocal rank fusion of the BM25 and dense rankings.
    Hybrid,
}

impl RetrievalMode {
    pub const ALL: [RetrievalMode; 3] = [Self::Bm25, Self::Dense, Self::Hybrid];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Bm25 => "bm25",
            Self::Dense => "dense",
            Self::Hybrid => "hybrid",
        }
    }

    pub fn needs_embeddings(self) -> bool {
        !matches!(self, Self::Bm25)
    }
}

impl std::fmt::Display for RetrievalMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for RetrievalMode {
    type Err = RetrieveError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "bm25" => Ok(Self::Bm25),
            "dense" => Ok(Self::Dense),
            "hybrid" => Ok(Self::Hybrid),
            _ => Err(RetrieveError::UnknownMode(s.to_string())),
        }
    }
}

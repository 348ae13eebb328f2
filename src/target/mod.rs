//! Targets: the system under test. A target turns a question into an `Answer`.
//!
//! Implementations: `answers` replays a JSONL file of answers produced elsewhere; `retrieve`
//! runs retrieval alone; `rag` retrieves, then answers with a local model and cites chunks. Every target fills
//! the same `Answer`, so metrics, judges, the store and reports never care which one ran.

mod answers;
mod rag;
mod retrieve;
mod sources;
mod spec;

pub use answers::{load_answers_file, AnswersFileTarget, ReplayedAnswer};
pub use sources::{answer_text, answer_with_sources, SOURCES_CUE};
pub use retrieve::{golden_chunks, RetrieveSetup, RetrieveTarget};
pub use rag::{cited_ids, RagCache, RagPrompt, RagPromptError, RagTarget, DEFAULT_RAG_PROMPT};
pub use spec::{
    build_target, BuiltTarget, TargetOptions, TargetSpecError, DEFAULT_GENERATOR,
    EMBEDDING_MODEL_ID,
};
use crate::dataset::Question;
use serde::{Deserialize, Serialize};

/// A chunk of the corpus that retrieval returned for a question, best first.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RetrievedChunk {
    /// Stable id `doc#n`.
    pub chunk_id: String,
    pub doc: String,
    pub score: f32,
    pub text: String,
}

/// What a target produced for one question.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Answer {
    pub text: String,
    /// Document ids or chunk ids (`doc#n`) the answer cites.
    #[serde(default)]
    pub citations: Vec<String>,
    #[serde(default)]
    pub retrieved: Vec<RetrievedChunk>,
    #[serde(default)]
    pub prompt_tokens: Option<u32>,
    #[serde(default)]
    pub completion_tokens: Option<u32>,
    /// Wall time the target took for this answer (for a reused generation: when it was made).
    #[serde(default)]
    pub latency_ms: u64,
    /// The generation was served from the store's generation cache, not computed again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("no answer for question {id:?} in {source_name}")]
    MissingAnswer { id: String, source_name: String },
    #[error("{0}")]
    Failed(String),
}

/// The system under test. `&mut self` because real targets hold model state (KV caches).
pub trait Target {
    /// A short description stored with the run, e.g. `answers:answers-careful.jsonl`.
    fn describe(&self) -> String;
    fn answer(&mut self, question: &Question) -> Result<Answer, TargetError>;
}

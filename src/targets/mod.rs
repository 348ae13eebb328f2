//! Targets: the system under test. A target turns a question into an `Answer`.
//!
//! Implementations: `answers` replays a JSONL file of answers produced elsewhere; `retrieve`
//! runs retrieval alone; `rag` retrieves, then answers with a local model and cites chunks;
//! `http` asks the user's own service over HTTP. Every target fills
//! the same `Answer`, so metrics, judges, the store and reports never care which one ran.

mod answers;
mod generation_store;
mod http;
mod http_spec;
mod rag;
mod retrieve;
mod sources;
mod spec;

pub use answers::{load_answers_file, AnswersFileTarget, ReplayedAnswer};
pub use generation_store::{generation_key, GenerationStore};
pub use http::HttpTarget;
pub use http_spec::{HttpSpecError, HttpTargetSpec};
pub use sources::{answer_text, answer_with_sources, SOURCES_CUE};
pub use retrieve::{golden_chunks, RetrieveTarget};
pub use rag::{cited_ids, RagPrompt, RagPromptError, RagTarget, DEFAULT_RAG_PROMPT};
pub use spec::{
    build_reranker, build_target, BuiltTarget, TargetOptions, TargetSpecError, DEFAULT_GENERATOR,
    EMBEDDING_MODEL_ID,
};
use crate::dataset::Question;
use crate::record::Answer;

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
    /// How many questions [`Target::answer_batch`] takes at once.
    fn concurrency(&self) -> usize {
        1
    }
    /// Answer several questions; a target that can work on them side by side (requests to a
    /// server) overrides this. Results come back in the questions' order.
    fn answer_batch(&mut self, questions: &[&Question]) -> Vec<Result<Answer, TargetError>> {
        questions.iter().map(|q| self.answer(q)).collect()
    }
    /// True for a target that generates and looks its generations up in a store first (rag).
    fn keeps_generations(&self) -> bool {
        false
    }
    /// Take the run's generation store (see [`GenerationStore`]); ignored by targets that do
    /// not generate.
    fn use_generation_store(&mut self, _store: Box<dyn GenerationStore>) {}
}

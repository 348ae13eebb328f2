//! What can go wrong when a panel of judges is set up or run.

use crate::llm::LlmError;

#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    #[error("judge {judge}: outcome `{outcome}` tokenizes to nothing with model {model}")]
    EmptyOutcome { judge: String, outcome: String, model: String },
    #[error("judge {judge}: {source}")]
    Model { judge: String, source: LlmError },
    #[error("judge {judge}: member `{member}` of the jury is not in the panel")]
    MissingMember { judge: String, member: String },
    #[error(transparent)]
    Spec(#[from] super::SpecError),
}

//! What can go wrong when a panel of judges is set up or run.

use crate::llm::error::LlmError;

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
    #[error("judge {judge} is a {mode} judge: one that reads two answers side by side needs mode = \"pairwise\" (such as `better`); `compare --pairwise --judge {judge}` judges each answer alone with it")]
    NotPairwise { judge: String, mode: &'static str },
    #[error("judge {judge} compares two answers side by side: it judges a pairwise comparison of two runs (`compare A B --pairwise --judge {judge}`), not the items of one run")]
    PairwiseInRun { judge: String },
    #[error("judge {judge}: none of the outcomes ({outcomes}) begins any of the server's {top} most likely first tokens")]
    NoOutcomeInTop { judge: String, outcomes: String, top: usize },
    #[error("judge {judge}: the model gave no finite probability to Yes or No for the claim {claim:?}")]
    NoFiniteProbability { judge: String, claim: String },
}

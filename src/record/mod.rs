//! The records every stage passes along: answers and their retrieved chunks, verdicts, a run's
//! config, and the rows the store keeps. Plain data with serde at the edges.
//!
//! This is a leaf layer (DESIGN.md, Layering): it imports only `dataset`, so every stage above
//! can name these types without importing another stage's behaviour.

mod answer;
mod answer_label;
mod generation;
mod pairwise;
mod run_config;
mod run_record;
mod time;
mod verdict;

pub use answer::{Answer, RetrievedChunk};
pub use answer_label::{AnswerLabel, LabelRecord};
pub use generation::CachedGeneration;
pub use pairwise::{PairPreference, PairwiseJudgment, Preferred, FIRST_ANSWER, SECOND_ANSWER, TIE};
pub use run_config::{KnowledgeArm, RerankConfig, RunConfig};
pub use run_record::{ItemRecord, RunRecord, RunStatus};
pub use time::now_rfc3339;
pub use verdict::{
    flag_meaning, StatementCheck, StatementSide, Verdict, FLAG_CUT_TO_FIT, FLAG_MEMBERS_LEFT_OUT, FLAG_POSSIBLE_INJECTION,
    FLAG_STATES_NOTHING,
};

//! Assay: an offline evaluator for RAG and question-answering systems built on local models.
//!
//! One module per pipeline stage (see ARCHITECTURE.md): a dataset's questions go to a target,
//! which produces answers; metrics and judges score them; the store keeps every run; compare and
//! report read runs back. The CLI (`src/bin/assay`) and the desktop app call these functions.

pub mod bench;
pub mod bounded_template;
pub mod compare;
pub mod corpus;
pub mod dataset;
pub mod generate;
pub mod heap;
pub mod judge;
pub mod llm;
pub mod metrics;
pub mod models;
pub mod record;
pub mod report;
pub mod retrieve;
pub mod run;
pub mod stats;
pub mod store;
pub mod targets;
mod third_party_panic;

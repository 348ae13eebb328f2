//! The rows of the store as plain data: a run and its items.

use crate::dataset::Question;
use super::{Answer, RunConfig, Verdict};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    Finished,
    Cancelled,
    Failed,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Finished => "finished",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Failed => "failed",
        }
    }

    /// Unknown text reads as `failed`: a row we cannot interpret must not look finished.
    pub fn parse(text: &str) -> RunStatus {
        match text {
            "running" => RunStatus::Running,
            "finished" => RunStatus::Finished,
            "cancelled" => RunStatus::Cancelled,
            _ => RunStatus::Failed,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunRecord {
    pub id: String,
    pub name: String,
    pub dataset: String,
    pub dataset_root: String,
    pub dataset_fingerprint: String,
    pub config: RunConfig,
    pub config_hash: String,
    pub status: RunStatus,
    /// Questions the run plans to answer (after `--limit`).
    pub total_items: usize,
    /// RFC 3339, UTC.
    pub created_at: String,
    pub finished_at: Option<String>,
    pub experiment: Option<String>,
}

/// One question's outcome in a run. `answer` is None when the target failed (`error` says why).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ItemRecord {
    pub question: Question,
    /// Index of the question in the dataset, for stable ordering.
    pub position: usize,
    pub answer: Option<Answer>,
    pub error: Option<String>,
    pub metrics: BTreeMap<String, f64>,
    pub verdicts: BTreeMap<String, Verdict>,
    pub finished_at: String,
}

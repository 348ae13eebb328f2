//! The JSON export: a stable, documented shape users script against (DESIGN.md, "The JSON
//! export"). Field names here are a contract: add fields, never rename them.

use super::RunReport;
use crate::record::{RetrievedChunk, RunConfig, Verdict};
use crate::stats::{item_flags, MetricSummary};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Serialize)]
pub struct JsonExport {
    pub runs: Vec<JsonRun>,
    /// Pairwise comparisons of these runs whose judgments are stored (the shape of
    /// `assay compare --pairwise --json`'s `pairwise`); absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pairwise: Vec<crate::compare::PairwiseOutcome>,
}

#[derive(Debug, Serialize)]
pub struct JsonRun {
    pub id: String,
    pub name: String,
    pub dataset: String,
    pub dataset_fingerprint: String,
    pub created_at: String,
    pub finished_at: Option<String>,
    pub status: String,
    /// The experiment the run belongs to (a matrix run's shared id), if any.
    pub experiment: Option<String>,
    pub config: RunConfig,
    pub items_total: usize,
    pub items_done: usize,
    pub errors: usize,
    pub avg_latency_ms: Option<f64>,
    pub summary: BTreeMap<String, MetricSummary>,
    /// For each flag (`possible injection`), how many items carry it; absent when none does.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub flagged: BTreeMap<String, usize>,
    /// What each of those flags means, for a reader; absent when no item is flagged.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub flag_meanings: BTreeMap<String, String>,
    pub items: Vec<JsonItem>,
}

#[derive(Debug, Serialize)]
pub struct JsonItem {
    pub id: String,
    pub question: String,
    pub reference: Option<String>,
    pub refuse: bool,
    pub doc: Option<String>,
    pub answer: Option<String>,
    pub citations: Vec<String>,
    pub retrieved: Vec<RetrievedChunk>,
    pub metrics: BTreeMap<String, f64>,
    pub verdicts: BTreeMap<String, Verdict>,
    /// Every flag on any of the item's verdicts (each verdict keeps its own in `verdicts`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    pub latency_ms: Option<u64>,
    /// Time to the first chunk of a streamed answer (http target).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_chunk_ms: Option<u64>,
    pub prompt_tokens: Option<u32>,
    pub completion_tokens: Option<u32>,
    /// The answer's generation was served from the store's generation cache.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
    pub error: Option<String>,
}

pub fn to_json(reports: &[RunReport]) -> JsonExport {
    JsonExport {
        runs: reports.iter().map(json_run).collect(),
        pairwise: Vec::new(),
    }
}

fn json_run(report: &RunReport) -> JsonRun {
    let run = &report.run;
    JsonRun {
        id: run.id.clone(),
        name: run.name.clone(),
        dataset: run.dataset.clone(),
        dataset_fingerprint: run.dataset_fingerprint.clone(),
        created_at: run.created_at.clone(),
        finished_at: run.finished_at.clone(),
        status: run.status.as_str().to_string(),
        experiment: run.experiment.clone(),
        config: run.config.clone(),
        items_total: run.total_items,
        items_done: report.items.len(),
        errors: report.summary.errors,
        avg_latency_ms: report.summary.avg_latency_ms,
        summary: report.summary.metrics.clone(),
        flagged: report.summary.flagged.clone(),
        flag_meanings: super::findings::flag_meanings(report),
        items: report
            .items
            .iter()
            .map(|item| {
                let answer = item.answer.as_ref();
                JsonItem {
                    id: item.question.id.clone(),
                    question: item.question.question.clone(),
                    reference: item.question.answer.clone(),
                    refuse: item.question.refuse,
                    doc: item.question.doc.clone(),
                    answer: answer.map(|a| a.text.clone()),
                    citations: answer.map(|a| a.citations.clone()).unwrap_or_default(),
                    retrieved: answer.map(|a| a.retrieved.clone()).unwrap_or_default(),
                    metrics: item.metrics.clone(),
                    verdicts: item.verdicts.clone(),
                    flags: item_flags(item),
                    latency_ms: answer.map(|a| a.latency_ms),
                    first_chunk_ms: answer.and_then(|a| a.first_chunk_ms),
                    prompt_tokens: answer.and_then(|a| a.prompt_tokens),
                    completion_tokens: answer.and_then(|a| a.completion_tokens),
                    cached: answer.is_some_and(|a| a.cached),
                    error: item.error.clone(),
                }
            })
            .collect(),
    }
}

//! What a caller (CLI, desktop app) asks for: a new run, or the resume of an interrupted one.
//! Both validate everything before the store is written to.

use super::execute::{plan_resume, start_run, RunError};
use super::RunConfig;
use crate::dataset::Dataset;
use crate::store::{RunRecord, Store};
use crate::llm::DeviceChoice;
use crate::retrieve::RetrievalMode;
use crate::retrieve::IndexReport;
use crate::target::{build_target, Target, TargetOptions};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub const DEFAULT_TOP_K: usize = 4;

/// A new run's settings.
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    /// `answers:FILE`, …
    pub target: String,
    /// Deterministic metrics; empty means all that apply.
    pub metrics: Vec<String>,
    pub top_k: Option<usize>,
    pub limit: Option<usize>,
    pub seed: Option<u64>,
    pub name: Option<String>,
    pub experiment: Option<String>,
    /// Generator model id (rag).
    pub model: Option<String>,
    pub retrieval: Option<RetrievalMode>,
    /// Prompt template file (rag).
    pub prompt: Option<PathBuf>,
    pub max_tokens: Option<usize>,
    pub device: DeviceChoice,
    pub cancel: Option<Arc<AtomicBool>>,
}

/// Settings given again on resume; any that differ from the stored run make resume refuse.
#[derive(Debug, Clone, Default)]
pub struct ResumeRequest {
    /// Run id, unique prefix or name.
    pub run: String,
    pub target: Option<String>,
    pub metrics: Option<Vec<String>>,
    pub top_k: Option<usize>,
    pub limit: Option<usize>,
    pub seed: Option<u64>,
    pub prompt: Option<PathBuf>,
    pub device: DeviceChoice,
    pub cancel: Option<Arc<AtomicBool>>,
}

/// A run ready to execute.
pub struct PreparedRun {
    pub record: RunRecord,
    pub target: Box<dyn Target>,
    /// The retrieval index the target uses, and whether it was reused or rebuilt.
    pub index: Option<IndexReport>,
}

pub fn prepare_new_run(
    store: &Store,
    dataset: &Dataset,
    request: &RunRequest,
) -> Result<PreparedRun, RunError> {
    let top_k = request.top_k.unwrap_or(DEFAULT_TOP_K);
    let seed = request.seed.unwrap_or(0);
    let retrieval = request.retrieval.unwrap_or_default();
    let options = TargetOptions {
        top_k,
        retrieval,
        model: request.model.clone(),
        prompt: request.prompt.clone(),
        seed,
        max_tokens: request.max_tokens,
        device: request.device,
        cancel: request.cancel.clone(),
    };
    let built = build_target(&request.target, dataset, &options)?;
    let uses_retrieval = built.index.is_some();
    let metrics = if request.metrics.is_empty() && !built.answers_in_text {
        // A retrieval-only run's answers have no text: score the retrieval.
        crate::metrics::RETRIEVAL_METRICS.iter().map(|m| m.to_string()).collect()
    } else {
        request.metrics.clone()
    };
    let config = RunConfig {
        target: built.target.describe(),
        answers_sha256: built.input_sha256,
        model: built.model,
        judge_model: None,
        judges: Vec::new(),
        metrics,
        top_k,
        retrieval: uses_retrieval.then(|| retrieval.as_str().to_string()),
        max_tokens: request.max_tokens,
        seed,
        limit: request.limit,
    };
    let record = start_run(store, dataset, config, request.name.clone(), request.experiment.clone())?;
    Ok(PreparedRun {
        record,
        target: built.target,
        index: built.index,
    })
}

pub fn prepare_resume(
    store: &Store,
    dataset: &Dataset,
    request: &ResumeRequest,
) -> Result<PreparedRun, RunError> {
    let record = store.find_run(&request.run)?;
    let spec = request
        .target
        .clone()
        .unwrap_or_else(|| record.config.target.clone());
    let retrieval = match &record.config.retrieval {
        Some(mode) => mode.parse().map_err(crate::target::TargetSpecError::from)?,
        None => RetrievalMode::default(),
    };
    let options = TargetOptions {
        top_k: request.top_k.unwrap_or(record.config.top_k),
        retrieval,
        model: record.config.model.clone(),
        prompt: request.prompt.clone(),
        seed: request.seed.unwrap_or(record.config.seed),
        max_tokens: record.config.max_tokens,
        device: request.device,
        cancel: request.cancel.clone(),
    };
    let built = build_target(&spec, dataset, &options)?;
    let mut config = record.config.clone();
    config.target = built.target.describe();
    config.answers_sha256 = built.input_sha256;
    if let Some(metrics) = &request.metrics {
        config.metrics = metrics.clone();
    }
    config.top_k = request.top_k.unwrap_or(config.top_k);
    config.seed = request.seed.unwrap_or(config.seed);
    config.limit = request.limit.or(config.limit);
    plan_resume(&record, dataset, &config)?;
    Ok(PreparedRun {
        record,
        target: built.target,
        index: built.index,
    })
}

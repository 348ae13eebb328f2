//! What a caller (CLI, desktop app) asks for: a new run, or the resume of an interrupted one.
//! Both validate everything before the store is written to.

use super::execute::{plan_resume, start_run, RunError};
use super::RunConfig;
use crate::dataset::Dataset;
use crate::store::{RunRecord, Store};
use crate::target::{build_target, Target};

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
}

/// A run ready to execute.
pub struct PreparedRun {
    pub record: RunRecord,
    pub target: Box<dyn Target>,
}

pub fn prepare_new_run(
    store: &Store,
    dataset: &Dataset,
    request: &RunRequest,
) -> Result<PreparedRun, RunError> {
    let built = build_target(&request.target, dataset)?;
    let config = RunConfig {
        target: built.target.describe(),
        answers_sha256: built.input_sha256,
        model: None,
        judge_model: None,
        judges: Vec::new(),
        metrics: request.metrics.clone(),
        top_k: request.top_k.unwrap_or(DEFAULT_TOP_K),
        retrieval: None,
        seed: request.seed.unwrap_or(0),
        limit: request.limit,
    };
    let record = start_run(store, dataset, config, request.name.clone(), request.experiment.clone())?;
    Ok(PreparedRun {
        record,
        target: built.target,
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
    let built = build_target(&spec, dataset)?;
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
    })
}

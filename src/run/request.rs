//! What a caller (CLI, desktop app) asks for: a new run, or the resume of an interrupted one.
//! Both validate everything before the store is written to.

use super::execute::{metric_selection, plan_resume, start_run, RunError};
use super::generation_store::hand_generation_store;
use crate::dataset::Dataset;
use crate::judge::{spec, Judging};
use crate::judge::choice::JudgePanel;
use crate::judge::spec::JudgeSpec;
use crate::judge::served::ServedJudgePanel;
use crate::llm::device::DeviceChoice;
use crate::llm::model::LanguageModel;
use crate::llm::server::ServerModel;
use crate::models::registry::{InstallState, Registry};
use crate::record::RerankConfig;
use crate::record::{KnowledgeArm, RunConfig};
use crate::retrieve::IndexReport;
use crate::retrieve::RetrievalMode;
use crate::store::Store;
use crate::record::RunRecord;
use crate::targets::{build_target, Target, TargetOptions};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub const DEFAULT_TOP_K: usize = 4;

/// The retrieval mode a run gets when it names none: hybrid (BM25 and MiniLM fused) when the
/// embedding model is installed, BM25 when it is not, so a machine without MiniLM still runs.
/// Hybrid ranked the golden passage higher than BM25 alone on the sample manuals, the harder
/// real PDFs, the budget volumes and two annual reports, and tied on the pdfTeX manuals
/// (docs/retrieval.md); the run config records the mode that ran.
pub fn default_retrieval() -> RetrievalMode {
    let installed = Registry::load().ok().and_then(|registry| {
        let entry = registry.entry(crate::targets::EMBEDDING_MODEL_ID).ok()?;
        Some(registry.install_state(entry))
    });
    match installed {
        Some(InstallState::Verified | InstallState::Present) => RetrievalMode::Hybrid,
        _ => RetrievalMode::Bm25,
    }
}

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
    /// Judge names (built-in or from `judges_dir`); empty means no judging.
    pub judges: Vec<String>,
    /// Judge model id; `DEFAULT_JUDGE_MODEL` when None.
    pub judge_model: Option<String>,
    pub judges_dir: Option<PathBuf>,
    /// An arm of the knowledge-removal experiment; None for an ordinary run.
    pub knowledge: Option<KnowledgeArm>,
    /// Requests in flight at once (http target); None: the target's own setting.
    pub concurrency: Option<usize>,
    /// A second retrieval stage (retrieve and rag targets).
    pub rerank: Option<RerankConfig>,
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
    pub judges_dir: Option<PathBuf>,
    pub concurrency: Option<usize>,
    /// `METRIC=VALUE` gates on the finished run's means (`--fail-under`).
    pub fail_under: Vec<String>,
}

/// The second retrieval stage a face asks for: none without a model (a blank one counts as
/// none), `retrieve::DEFAULT_RERANK_DEPTH` first-stage chunks when no depth is given.
pub fn rerank_config(model: Option<String>, depth: Option<usize>) -> Option<RerankConfig> {
    let model = model.filter(|m| !m.trim().is_empty())?;
    Some(RerankConfig { model, depth: depth.unwrap_or(crate::retrieve::DEFAULT_RERANK_DEPTH).max(1) })
}

/// A run ready to execute.
pub struct PreparedRun {
    pub record: RunRecord,
    pub target: Box<dyn Target>,
    /// The retrieval index the target uses, and whether it was reused or rebuilt.
    pub index: Option<IndexReport>,
    /// The judges, when the run has any.
    pub judges: Option<Box<dyn Judging>>,
}

/// The judge model when a run names judges but no `--judge-model` (DESIGN.md: the 1.5B model;
/// 135M–270M models cannot tell right from wrong).
pub const DEFAULT_JUDGE_MODEL: &str = "qwen2.5-coder-1.5b-instruct";

/// The named judges' specs, read and selected once per run: their hashes go into the config
/// (see [`RunConfig::judge_specs`]) and the same specs make the panel.
fn chosen_judges(names: &[String], dir: Option<&std::path::Path>) -> Result<Vec<JudgeSpec>, RunError> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    // The same folder `judge_catalog` lists, so a face runs the judges it showed.
    let specs = super::judge_catalog(dir).map_err(|e| RunError::Judge(e.to_string()))?;
    spec::select(&specs, names).map_err(|e| RunError::Judge(e.to_string()))
}

fn spec_hashes(chosen: &[JudgeSpec]) -> std::collections::BTreeMap<String, String> {
    chosen.iter().map(|s| (s.name.clone(), s.content_sha256())).collect()
}

/// The judges on their model (a served one when the registry names a server by that id);
/// None when the run has no judges.
pub(super) fn judge_panel(
    chosen: Vec<JudgeSpec>,
    model: Option<&str>,
    device: DeviceChoice,
) -> Result<Option<(Box<dyn Judging>, String)>, RunError> {
    if chosen.is_empty() {
        return Ok(None);
    }
    let judge_error = |e: String| RunError::Judge(e);
    let model_id = model.unwrap_or(DEFAULT_JUDGE_MODEL).to_string();
    let registry = Registry::load().map_err(|e| judge_error(e.to_string()))?;
    let panel: Box<dyn Judging> = match registry.server(&model_id) {
        Some(server) => Box::new(
            ServedJudgePanel::new(chosen, Arc::new(ServerModel::new(server.clone()))).map_err(|e| judge_error(e.to_string()))?,
        ),
        None => {
            let model = LanguageModel::by_id(&registry, &model_id, device).map_err(|e| judge_error(e.to_string()))?;
            Box::new(JudgePanel::new(chosen, model).map_err(|e| judge_error(e.to_string()))?)
        }
    };
    Ok(Some((panel, model_id)))
}

/// A new run checked and built (target, judges, config) but not yet in the store: everything
/// that can be wrong with the request is found before the database is opened or written.
pub struct CheckedRun {
    config: RunConfig,
    name: Option<String>,
    experiment: Option<String>,
    target: Box<dyn Target>,
    index: Option<IndexReport>,
    judges: Option<Box<dyn Judging>>,
}

impl CheckedRun {
    /// Create the run row and hand the target the database's generation cache; the run is
    /// then ready to execute.
    pub fn start(self, store: &Store, dataset: &Dataset) -> Result<PreparedRun, RunError> {
        let mut target = self.target;
        hand_generation_store(target.as_mut(), store)?;
        let record = start_run(store, dataset, self.config, self.name, self.experiment)?;
        Ok(PreparedRun {
            record,
            target,
            index: self.index,
            judges: self.judges,
        })
    }
}

/// Validate a new run's request and build its target and judges, without touching a store.
pub fn check_new_run(dataset: &Dataset, request: &RunRequest) -> Result<CheckedRun, RunError> {
    let top_k = request.top_k.unwrap_or(DEFAULT_TOP_K);
    let seed = request.seed.unwrap_or(0);
    let retrieval = request.retrieval.unwrap_or_else(default_retrieval);
    let options = TargetOptions {
        top_k,
        retrieval,
        model: request.model.clone(),
        prompt: request.prompt.clone(),
        seed,
        max_tokens: request.max_tokens,
        device: request.device,
        cancel: request.cancel.clone(),
        remove_golden_context: request.knowledge == Some(KnowledgeArm::Removed),
        concurrency: request.concurrency,
        rerank: request.rerank.clone(),
    };
    let chosen = chosen_judges(&request.judges, request.judges_dir.as_deref())?;
    let judge_specs = spec_hashes(&chosen);
    let judges = judge_panel(chosen, request.judge_model.as_deref(), request.device)?;
    let built = build_target(&request.target, dataset, &options)?;
    let uses_retrieval = built.index.is_some();
    if request.knowledge.is_some() && !uses_retrieval {
        return Err(RunError::Experiment(format!(
            "knowledge removal needs a target that retrieves (rag or retrieve), not {}",
            request.target
        )));
    }
    if request.rerank.is_some() && !uses_retrieval {
        return Err(RunError::Experiment(format!(
            "--rerank reorders retrieved chunks: it needs a target that retrieves (rag or retrieve), not {}",
            request.target
        )));
    }
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
        judge_model: judges.as_ref().map(|(_, id)| id.clone()),
        judge_scoring: judges.as_ref().and_then(|(panel, _)| panel.scoring()),
        judges: request.judges.clone(),
        judge_specs,
        metrics,
        top_k,
        retrieval: uses_retrieval.then(|| retrieval.as_str().to_string()),
        max_tokens: request.max_tokens,
        seed,
        limit: request.limit,
        knowledge: request.knowledge,
        rerank: request.rerank.clone(),
    };
    metric_selection(&config)?;
    Ok(CheckedRun {
        config,
        name: request.name.clone(),
        experiment: request.experiment.clone(),
        target: built.target,
        index: built.index,
        judges: judges.map(|(panel, _)| panel),
    })
}

pub fn prepare_new_run(
    store: &Store,
    dataset: &Dataset,
    request: &RunRequest,
) -> Result<PreparedRun, RunError> {
    check_new_run(dataset, request)?.start(store, dataset)
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
        Some(mode) => mode.parse().map_err(crate::targets::TargetSpecError::from)?,
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
        remove_golden_context: record.config.knowledge == Some(KnowledgeArm::Removed),
        concurrency: request.concurrency,
        rerank: record.config.rerank.clone(),
    };
    let mut built = build_target(&spec, dataset, &options)?;
    hand_generation_store(built.target.as_mut(), store)?;
    let mut config = record.config.clone();
    config.target = built.target.describe();
    config.answers_sha256 = built.input_sha256;
    if let Some(metrics) = &request.metrics {
        config.metrics = metrics.clone();
    }
    config.top_k = request.top_k.unwrap_or(config.top_k);
    config.seed = request.seed.unwrap_or(config.seed);
    config.limit = request.limit.or(config.limit);
    let chosen = chosen_judges(&config.judges, request.judges_dir.as_deref())?;
    // Runs stored before spec hashes were kept cannot be checked; every later one is.
    if !record.config.judge_specs.is_empty() {
        config.judge_specs = spec_hashes(&chosen);
    }
    plan_resume(&record, dataset, &config, store.failed_item_count(&record.id)?)?;
    let judges = judge_panel(chosen, config.judge_model.as_deref(), request.device)?;
    Ok(PreparedRun {
        record,
        target: built.target,
        index: built.index,
        judges: judges.map(|(panel, _)| panel),
    })
}

//! Experiments: one request for several runs. Lists of generator models, judge models, top-k
//! values and retrieval modes make a matrix (one run per combination, models varying slowest);
//! the knowledge-removal experiment runs each combination twice, in-scope then context-removed.
//! Both faces (CLI, desktop app) plan through here, so they offer the same experiments.

use super::execute::RunError;
use super::request::RunRequest;
use crate::compare::{knowledge_removal, KnowledgeRemoval, ABSTENTION_JUDGE};
use crate::metrics::MetricSelection;
use crate::record::KnowledgeArm;
use crate::retrieve::RetrievalMode;
use crate::stats::RunReport;
use crate::stats::{parse_gate, Gate};
use serde::{Deserialize, Serialize};

/// Experiments made of several runs that are read together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExperimentKind {
    /// KnowOrNot's knowledge removal: does the target abstain when the golden context is gone?
    RemoveContext,
}

impl ExperimentKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ExperimentKind::RemoveContext => "remove-context",
        }
    }
}

impl std::str::FromStr for ExperimentKind {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "remove-context" => Ok(ExperimentKind::RemoveContext),
            other => Err(format!("unknown experiment {other:?}; the one there is: remove-context")),
        }
    }
}

/// What a face asks for: the settings every run shares (`base`; its model, judge model, top-k
/// and retrieval are the defaults for lists left empty) and the lists that make the matrix.
#[derive(Debug, Clone, Default)]
pub struct ExperimentRequest {
    /// The settings every run shares; its `target` is replaced by `target` below.
    pub base: RunRequest,
    /// `answers:FILE`, `retrieve`, `rag` or `http:FILE.toml`; None: [`DEFAULT_TARGET`].
    pub target: Option<String>,
    pub models: Vec<String>,
    pub judge_models: Vec<String>,
    pub top_ks: Vec<usize>,
    pub retrievals: Vec<RetrievalMode>,
    pub kind: Option<ExperimentKind>,
    /// `METRIC=VALUE` gates on each run's mean (`--fail-under`), checked when the runs finish.
    pub fail_under: Vec<String>,
}

/// The target when a request names none: `rag`, the one target that needs nothing more than
/// the dataset (an answers file or an HTTP description must be named; `retrieve` writes no
/// answers). Both faces get it from here, so a run without a target is the same run in both.
pub const DEFAULT_TARGET: &str = "rag";

/// One combination of the matrix, and the words that tell it apart in run names.
#[derive(Debug, Clone)]
struct MatrixCell {
    model: Option<String>,
    judge_model: Option<String>,
    top_k: Option<usize>,
    retrieval: Option<RetrievalMode>,
    label: String,
}

/// The runs an experiment request stands for, in order (for remove-context: each cell's
/// in-scope arm, then its context-removed arm). Several runs share a new experiment id and
/// are named after `dataset_name` and what varies; a single plain run keeps the request as it
/// is. Metric names, gates and list values are checked here, before anything is built.
pub fn plan_experiment(request: &ExperimentRequest, dataset_name: &str) -> Result<Vec<RunRequest>, RunError> {
    if !request.base.metrics.is_empty() {
        MetricSelection::parse(&request.base.metrics.join(",")).map_err(RunError::Metrics)?;
    }
    run_gates(&request.fail_under, &request.base.judges)?;
    if let Some(k) = request.top_ks.iter().chain(&request.base.top_k).find(|k| **k == 0) {
        return Err(RunError::Experiment(format!("top-k {k}: retrieve at least one chunk")));
    }
    let cells = matrix_cells(request);
    let experiment = (cells.len() > 1 || request.kind.is_some()).then(super::new_experiment_id);
    let mut judges = request.base.judges.clone();
    if request.kind == Some(ExperimentKind::RemoveContext) && !judges.iter().any(|j| j == ABSTENTION_JUDGE) {
        judges.push(ABSTENTION_JUDGE.to_string());
    }
    // Knowledge removal needs retrieval, which the default target has.
    let target = request.target.clone().filter(|t| !t.trim().is_empty()).unwrap_or_else(|| DEFAULT_TARGET.to_string());
    let arms: Vec<Option<KnowledgeArm>> = match request.kind {
        Some(ExperimentKind::RemoveContext) => vec![Some(KnowledgeArm::InScope), Some(KnowledgeArm::Removed)],
        None => vec![None],
    };
    let name = request.base.name.clone().filter(|n| !n.trim().is_empty());
    let mut runs = Vec::new();
    for cell in cells {
        for arm in &arms {
            let label = join_label(&cell.label, arm.map(KnowledgeArm::as_str));
            let base = &request.base;
            runs.push(RunRequest {
                target: target.clone(),
                metrics: base.metrics.clone(),
                top_k: cell.top_k.or(base.top_k),
                limit: base.limit,
                seed: base.seed,
                name: match (&name, &experiment) {
                    (Some(name), Some(_)) => Some(join_label(name, Some(&label))),
                    (None, Some(_)) => Some(join_label(dataset_name, Some(&label))),
                    (name, None) => name.clone(),
                },
                experiment: experiment.clone(),
                model: cell.model.clone().or_else(|| base.model.clone()),
                retrieval: cell.retrieval.or(base.retrieval),
                prompt: base.prompt.clone(),
                max_tokens: base.max_tokens,
                device: base.device,
                cancel: base.cancel.clone(),
                judges: judges.clone(),
                judge_model: cell.judge_model.clone().or_else(|| base.judge_model.clone()),
                judges_dir: base.judges_dir.clone(),
                knowledge: *arm,
                concurrency: base.concurrency,
                rerank: base.rerank.clone(),
            });
        }
    }
    Ok(runs)
}

/// The `--fail-under` gates on a run's means: each names a deterministic metric or one of the
/// run's judges.
pub(super) fn run_gates(fail_under: &[String], judges: &[String]) -> Result<Vec<Gate>, RunError> {
    let mut known: Vec<&str> = crate::metrics::ALL_METRICS.to_vec();
    known.extend(judges.iter().map(String::as_str));
    fail_under.iter().map(|g| parse_gate(g, &known)).collect::<Result<_, _>>().map_err(RunError::Experiment)
}

/// The knowledge-removal readings of an experiment's finished runs: they come in pairs, each
/// cell's in-scope run then its context-removed run (the order `plan_experiment` makes).
pub fn knowledge_removals(kind: Option<ExperimentKind>, reports: &[RunReport], seed: u64) -> Vec<KnowledgeRemoval> {
    match kind {
        Some(ExperimentKind::RemoveContext) => reports
            .chunks_exact(2)
            .filter_map(|pair| knowledge_removal(&pair[0], &pair[1], seed))
            .collect(),
        None => Vec::new(),
    }
}

fn join_label(first: &str, second: Option<&str>) -> String {
    [first, second.unwrap_or("")].iter().filter(|s| !s.is_empty()).copied().collect::<Vec<_>>().join(" ")
}

/// Every combination of the listed settings, models varying slowest. The label names only
/// the settings that vary, so models `a,b` give runs "NAME a" and "NAME b".
fn matrix_cells(request: &ExperimentRequest) -> Vec<MatrixCell> {
    fn options<T: Clone>(list: &[T]) -> Vec<Option<T>> {
        if list.is_empty() {
            vec![None]
        } else {
            list.iter().cloned().map(Some).collect()
        }
    }
    let (models, judge_models) = (options(&request.models), options(&request.judge_models));
    let (top_ks, retrievals) = (options(&request.top_ks), options(&request.retrievals));
    let mut cells = Vec::new();
    for model in &models {
        for judge_model in &judge_models {
            for top_k in &top_ks {
                for retrieval in &retrievals {
                    let mut label = Vec::new();
                    if models.len() > 1 {
                        label.extend(model.clone());
                    }
                    if judge_models.len() > 1 {
                        label.extend(judge_model.as_ref().map(|j| format!("judge={j}")));
                    }
                    if top_ks.len() > 1 {
                        label.extend(top_k.map(|k| format!("k={k}")));
                    }
                    if retrievals.len() > 1 {
                        label.extend(retrieval.map(|r| r.as_str().to_string()));
                    }
                    cells.push(MatrixCell {
                        model: model.clone(),
                        judge_model: judge_model.clone(),
                        top_k: *top_k,
                        retrieval: *retrieval,
                        label: label.join(" "),
                    });
                }
            }
        }
    }
    cells
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> RunRequest {
        RunRequest { limit: Some(2), judges: vec!["correct".into()], ..RunRequest::default() }
    }

    fn request(models: &[&str], top_ks: &[usize], kind: Option<ExperimentKind>) -> ExperimentRequest {
        ExperimentRequest {
            base: base(),
            target: Some("rag".into()),
            models: models.iter().map(|m| m.to_string()).collect(),
            top_ks: top_ks.to_vec(),
            kind,
            ..ExperimentRequest::default()
        }
    }

    #[test]
    fn a_single_run_keeps_its_request() {
        let runs = plan_experiment(&request(&["m"], &[], None), "trailgear").unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].experiment, None);
        assert_eq!(runs[0].name, None);
        assert_eq!(runs[0].model.as_deref(), Some("m"));
    }

    #[test]
    fn a_matrix_is_every_combination_named_by_what_varies() {
        let runs = plan_experiment(&request(&["a", "b"], &[3, 5], None), "trailgear").unwrap();
        let names: Vec<_> = runs.iter().map(|r| r.name.clone().unwrap_or_default()).collect();
        assert_eq!(names, ["trailgear a k=3", "trailgear a k=5", "trailgear b k=3", "trailgear b k=5"]);
        let experiment = runs[0].experiment.clone();
        assert!(experiment.is_some());
        assert!(runs.iter().all(|r| r.experiment == experiment));
        assert_eq!(runs[3].top_k, Some(5));
        assert_eq!(runs[3].model.as_deref(), Some("b"));
    }

    #[test]
    fn remove_context_makes_two_arms_per_cell_and_judges_abstention() {
        let mut req = request(&["a"], &[], Some(ExperimentKind::RemoveContext));
        req.target = None;
        let runs = plan_experiment(&req, "trailgear").unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].knowledge, Some(KnowledgeArm::InScope));
        assert_eq!(runs[1].knowledge, Some(KnowledgeArm::Removed));
        assert!(runs.iter().all(|r| r.target == "rag"));
        assert!(runs.iter().all(|r| r.judges.iter().any(|j| j == ABSTENTION_JUDGE)));
        assert_eq!(runs[1].name.as_deref(), Some("trailgear context-removed"));
    }

    #[test]
    fn without_a_target_every_face_gets_the_default_target() {
        let mut req = request(&[], &[], None);
        req.target = None;
        let runs = plan_experiment(&req, "trailgear").unwrap();
        assert_eq!(runs[0].target, DEFAULT_TARGET);
    }

    #[test]
    fn a_bad_metric_gate_or_top_k_is_refused_before_any_run_is_planned() {
        let mut req = request(&[], &[], None);
        req.base.metrics = vec!["token_f2".into()];
        assert!(matches!(plan_experiment(&req, "t"), Err(RunError::Metrics(_))));
        let mut req = request(&[], &[], None);
        req.fail_under = vec!["nonsense=0.5".into()];
        let message = plan_experiment(&req, "t").unwrap_err().to_string();
        assert!(message.contains("unknown metric"), "{message}");
        // A judge of the run may be gated.
        req.fail_under = vec!["correct=0.5".into()];
        assert!(plan_experiment(&req, "t").is_ok());
        let req = request(&[], &[4, 0], None);
        assert!(matches!(plan_experiment(&req, "t"), Err(RunError::Experiment(_))));
    }
}

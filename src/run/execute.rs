//! Executing a run: questions → target → metrics → store, one committed item at a time.

use crate::dataset::{Dataset, Question};
use crate::judge::Judging;
use crate::metrics::{self, MetricSelection, MetricsError};
use crate::record::{now_rfc3339, RunConfig};
use crate::store::{Store, StoreError};
use crate::record::{ItemRecord, RunRecord, RunStatus};
use crate::targets::Target;
use super::kept_items;
use super::locked_writes::{retried, LockedOut, WriteFailure};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "run {run} cannot be resumed: the dataset changed since it started \
         (fingerprint {stored:.12} then, {current:.12} now); start a new run"
    )]
    DatasetChanged {
        run: String,
        stored: String,
        current: String,
    },
    #[error(
        "run {run} cannot be resumed with different settings ({what}); \
         resume without changing options, or start a new run"
    )]
    ConfigChanged { run: String, what: String },
    #[error(
        "run {run} is being executed by another process right now; wait for it to finish \
         (or cancel it) before resuming"
    )]
    Busy { run: String },
    #[error(
        "run {run} is being executed by a process right now; cancel it (or wait for it to \
         finish) before deleting it"
    )]
    DeleteWhileRunning { run: String },
    #[error("run {run}: cannot take the run's lease: {message}")]
    Lease { run: String, message: String },
    #[error("run {run} is already finished with every item answered; nothing to resume")]
    AlreadyFinished { run: String },
    #[error(transparent)]
    Metrics(MetricsError),
    #[error(transparent)]
    Target(#[from] crate::targets::TargetSpecError),
    #[error("judges: {0}")]
    Judge(String),
    #[error("{0}")]
    Experiment(String),
    #[error(
        "run {run} stopped after {attempts} tries over {waited_s:.1} s to write to its database: {source}. {kept} {status}"
    )]
    DatabaseLocked {
        run: String,
        #[source]
        source: Box<StoreError>,
        attempts: u32,
        waited_s: f64,
        /// Where the finished items that could not be committed are kept, said in words.
        kept: String,
        /// Whether the run could be marked failed, said in words.
        status: String,
    },
    /// The kept-items file (`file` or `file:line`) and what is wrong with it.
    #[error("{location}: {message}")]
    KeptItems { location: String, message: String },
}

/// What the orchestrator reports while it works (the CLI draws a progress bar, the desktop
/// app forwards these as events).
#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Progress {
    Started {
        run_id: String,
        total: usize,
        already_done: usize,
    },
    ItemStarted {
        question_id: String,
        question: String,
    },
    ItemDone {
        question_id: String,
        done: usize,
        total: usize,
        error: Option<String>,
    },
}

/// Create the run row for a new run over `dataset`.
pub fn start_run(
    store: &Store,
    dataset: &Dataset,
    config: RunConfig,
    name: Option<String>,
    experiment: Option<String>,
) -> Result<RunRecord, RunError> {
    metric_selection(&config)?;
    let created_at = now_rfc3339();
    let id = new_run_id();
    let total_items = planned_questions(dataset, &config).len();
    let run = RunRecord {
        name: name.unwrap_or_else(|| format!("{} {}", dataset.manifest.name, config.target)),
        dataset: dataset.manifest.name.clone(),
        dataset_root: dataset.root.display().to_string(),
        dataset_fingerprint: dataset.fingerprint.clone(),
        config_hash: config.hash(),
        config,
        status: RunStatus::Running,
        total_items,
        created_at,
        finished_at: None,
        experiment,
        id,
    };
    store.insert_run(&run)?;
    Ok(run)
}

/// Check that `run` may be resumed over `dataset` with `config`. A finished run may be, when
/// `failed_items` of it are waiting for another try.
pub fn plan_resume(
    run: &RunRecord,
    dataset: &Dataset,
    config: &RunConfig,
    failed_items: usize,
) -> Result<(), RunError> {
    if run.status == RunStatus::Finished && failed_items == 0 {
        return Err(RunError::AlreadyFinished {
            run: run.id.clone(),
        });
    }
    if run.dataset_fingerprint != dataset.fingerprint {
        return Err(RunError::DatasetChanged {
            run: run.id.clone(),
            stored: run.dataset_fingerprint.clone(),
            current: dataset.fingerprint.clone(),
        });
    }
    let edited: Vec<&str> = run
        .config
        .judge_specs
        .iter()
        .filter(|(name, sha)| config.judge_specs.get(*name) != Some(*sha))
        .map(|(name, _)| name.as_str())
        .collect();
    if !edited.is_empty() {
        return Err(RunError::ConfigChanged {
            run: run.id.clone(),
            what: format!(
                "the judge spec of {} changed since the run started, so its items would be judged by two rubrics",
                edited.join(", ")
            ),
        });
    }
    if run.config_hash != config.hash() {
        return Err(RunError::ConfigChanged {
            run: run.id.clone(),
            what: describe_config_change(&run.config, config),
        });
    }
    Ok(())
}

fn describe_config_change(stored: &RunConfig, requested: &RunConfig) -> String {
    let (Ok(serde_json::Value::Object(a)), Ok(serde_json::Value::Object(b))) = (
        serde_json::to_value(stored),
        serde_json::to_value(requested),
    ) else {
        return "config".into();
    };
    let changed: Vec<String> = a
        .iter()
        .filter(|(k, v)| b.get(*k) != Some(v))
        .map(|(k, v)| format!("{k}: {v} then, {} now", b.get(k).unwrap_or(&serde_json::Value::Null)))
        .collect();
    if changed.is_empty() {
        "config".into()
    } else {
        changed.join("; ")
    }
}

fn planned_questions<'a>(dataset: &'a Dataset, config: &RunConfig) -> Vec<(usize, &'a Question)> {
    let limit = config.limit.unwrap_or(usize::MAX);
    dataset
        .questions
        .iter()
        .enumerate()
        .filter(|(_, q)| config.knowledge.is_none() || crate::record::KnowledgeArm::asks(q))
        .take(limit)
        .collect()
}

/// Answer and score every question of `run` not yet committed. Returns the final status:
/// `Cancelled` when `cancel` was raised (what finished is kept), else `Finished`.
pub fn execute(
    store: &mut Store,
    run: &RunRecord,
    dataset: &Dataset,
    target: &mut dyn Target,
    on_progress: &mut dyn FnMut(&Progress),
    cancel: &AtomicBool,
) -> Result<RunStatus, RunError> {
    execute_judged(store, run, dataset, target, None, on_progress, cancel)
}

/// `execute`, with every answered item also judged by `judges` (verdicts committed with it).
pub fn execute_judged(
    store: &mut Store,
    run: &RunRecord,
    dataset: &Dataset,
    target: &mut dyn Target,
    mut judges: Option<&mut (dyn Judging + 'static)>,
    on_progress: &mut dyn FnMut(&Progress),
    cancel: &AtomicBool,
) -> Result<RunStatus, RunError> {
    let selection = metric_selection(&run.config)?;
    let _lease = super::lease::RunLease::take(store.path(), &run.id)?;
    // Read under the lease: another process may have finished the run meanwhile.
    if store.find_run(&run.id)?.status == RunStatus::Finished && store.failed_item_count(&run.id)? == 0 {
        return Err(RunError::AlreadyFinished { run: run.id.clone() });
    }
    // Items finished while the database stayed locked, kept beside it: stored before anything
    // is planned, so they are not asked again.
    let (kept_file, kept) = kept_items::kept(store.path(), &run.id)?;
    if !kept.is_empty() {
        for item in &kept {
            retried(store, cancel, |s| s.record_item(&run.id, item))?;
        }
        kept_items::forget(&kept_file)?;
    }
    let planned = planned_questions(dataset, &run.config);
    let done_ids = store.done_question_ids(&run.id)?;
    let total = planned.len();
    let mut done = planned
        .iter()
        .filter(|(_, q)| done_ids.contains(&q.id))
        .count();
    on_progress(&Progress::Started {
        run_id: run.id.clone(),
        total,
        already_done: done,
    });
    let stop = |store: &mut Store, status: RunStatus| -> Result<RunStatus, RunError> {
        retried(store, cancel, |s| s.set_status(&run.id, status, Some(&now_rfc3339())))?;
        Ok(status)
    };
    retried(store, cancel, |s| s.set_status(&run.id, RunStatus::Running, None))?;
    let pending: Vec<(usize, &Question)> = planned
        .into_iter()
        .filter(|(_, q)| !done_ids.contains(&q.id))
        .collect();
    // A target that works on several questions at once (requests to a server) gets them in
    // batches; each answer is then scored, judged and committed on its own, as before.
    for batch in pending.chunks(target.concurrency().max(1)) {
        if cancel.load(Ordering::Relaxed) {
            return stop(store, RunStatus::Cancelled);
        }
        for (_, question) in batch {
            on_progress(&Progress::ItemStarted {
                question_id: question.id.clone(),
                question: question.question.clone(),
            });
        }
        let started = Instant::now();
        let answers = match batch {
            [(_, question)] => vec![target.answer(question)],
            _ => target.answer_batch(&batch.iter().map(|(_, q)| *q).collect::<Vec<_>>()),
        };
        // A cancel raised while the target worked may have cut its answers short (generation
        // stops between tokens): those items are not committed, so a resume asks them again.
        if cancel.load(Ordering::Relaxed) {
            return stop(store, RunStatus::Cancelled);
        }
        // Once the database stayed locked past every try, the batch's other answers are still
        // scored and kept with the one that could not be committed.
        let mut locked_out: Option<LockedOut> = None;
        let mut uncommitted: Vec<ItemRecord> = Vec::new();
        for (&(position, question), answered) in batch.iter().zip(answers) {
            let item = match answered {
                Ok(mut answer) => {
                    if answer.latency_ms == 0 {
                        answer.latency_ms = started.elapsed().as_millis() as u64;
                    }
                    let scores =
                        metrics::score_selected(question, &answer, run.config.top_k, &selection);
                    // A judge that fails on an item records an unscored verdict; it never errors here.
                    let verdicts = match judges.as_deref_mut() {
                        Some(panel) => panel.judge(question, &answer),
                        None => BTreeMap::new(),
                    };
                    ItemRecord {
                        question: question.clone(),
                        position,
                        metrics: scores,
                        answer: Some(answer),
                        error: None,
                        verdicts,
                        finished_at: now_rfc3339(),
                    }
                }
                Err(e) => ItemRecord {
                    question: question.clone(),
                    position,
                    answer: None,
                    error: Some(e.to_string()),
                    metrics: BTreeMap::new(),
                    verdicts: BTreeMap::new(),
                    finished_at: now_rfc3339(),
                },
            };
            if cancel.load(Ordering::Relaxed) {
                // The judges stop between tokens too: an item judged halfway is not committed.
                if locked_out.is_some() {
                    break;
                }
                return stop(store, RunStatus::Cancelled);
            }
            if locked_out.is_some() {
                uncommitted.push(item);
                continue;
            }
            match retried(store, cancel, |s| s.record_item(&run.id, &item)) {
                Ok(()) => {}
                Err(WriteFailure::Locked(out)) => {
                    locked_out = Some(out);
                    uncommitted.push(item);
                    continue;
                }
                Err(WriteFailure::Other(error)) => return Err(error.into()),
            }
            done += 1;
            on_progress(&Progress::ItemDone {
                question_id: question.id.clone(),
                done,
                total,
                error: item.error.clone(),
            });
        }
        if let Some(out) = locked_out {
            return Err(give_up_locked(store, &run.id, &uncommitted, out));
        }
    }
    stop(store, RunStatus::Finished)
}

/// The database stayed locked through every try: keep the finished items beside it (a resume
/// stores them first), try once more to mark the run failed (resumable), and say all of it.
fn give_up_locked(store: &mut Store, run_id: &str, uncommitted: &[ItemRecord], out: LockedOut) -> RunError {
    let questions: Vec<&str> = uncommitted.iter().map(|i| i.question.id.as_str()).collect();
    let kept = match kept_items::keep(store.path(), run_id, uncommitted) {
        Ok(path) => format!(
            "The finished answers to {} are kept in {}; `assay run DATASET --resume {run_id}` stores them first and asks only the rest.",
            questions.join(", "),
            path.display()
        ),
        Err(e) => format!(
            "The finished answers to {} could not be kept either ({}: {e}); a resume asks them again.",
            questions.join(", "),
            kept_items::kept_path(store.path(), run_id).display()
        ),
    };
    let status = match store.set_status(run_id, RunStatus::Failed, Some(&now_rfc3339())) {
        Ok(()) => "The run is marked failed and can be resumed.".to_string(),
        Err(_) => "The run could not be marked either: it still reads `running`, but no process executes it, so it can be resumed.".to_string(),
    };
    RunError::DatabaseLocked {
        run: run_id.to_string(),
        source: Box::new(out.error),
        attempts: out.attempts,
        waited_s: out.waited.as_secs_f64(),
        kept,
        status,
    }
}

/// The run's metric selection; an empty list means all metrics.
pub fn metric_selection(config: &RunConfig) -> Result<MetricSelection, RunError> {
    if config.metrics.is_empty() {
        return Ok(MetricSelection::all());
    }
    MetricSelection::parse(&config.metrics.join(",")).map_err(RunError::Metrics)
}

/// Id of the experiment a matrix run makes: `exp-` and a run-id-like stamp.
pub fn new_experiment_id() -> String {
    format!("exp-{}", new_run_id())
}

/// Sortable and readable: `20261122-224501-3fa2`.
fn new_run_id() -> String {
    let now = time::OffsetDateTime::now_utc();
    let format = time::macros::format_description!("[year][month][day]-[hour][minute][second]");
    let stamp = now.format(&format).unwrap_or_default();
    format!("{stamp}-{:04x}", rand::random::<u16>())
}

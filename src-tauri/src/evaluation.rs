//! Starting, following and cancelling an evaluation. The run is prepared and executed on its own
//! thread (the core's `execute_judged` blocks until the last item), and each progress event from
//! the core is forwarded to the window as a `run-progress` event, with the running means of the
//! items stored so far (the core's summary). One run at a time.

use crate::commands::{default_db, open_store};
use assay::dataset::load_dataset;
use assay::judge::spec::default_judges_dir;
use assay::record::RerankConfig;
use assay::retrieve::{RetrievalMode, DEFAULT_RERANK_DEPTH};
use assay::llm::DeviceChoice;
use assay::run::{self, ExperimentKind, ExperimentRequest, Progress, ResumeRequest, RunRequest};
use assay::stats::summarize;
use assay::store::Store;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;
use tauri::{AppHandle, Emitter, State};

/// The cancel flag of the run in flight, if any.
#[derive(Default)]
pub struct ActiveRun(Mutex<Option<Arc<AtomicBool>>>);

/// What the New run screen asks for. `resume` names an interrupted run to finish instead.
/// Lists (`models`, `judge_models`, `top_ks`, `retrievals`) make a matrix and `experiment`
/// names an experiment kind, exactly as the CLI's comma-separated flags do: the core plans it.
#[derive(Deserialize)]
pub struct StartRequest {
    dataset: String,
    /// `answers:FILE`, `retrieve` or `rag`; None lets the experiment choose (remove-context: rag).
    target: Option<String>,
    metrics: Vec<String>,
    #[serde(default)]
    models: Vec<String>,
    /// Any of `bm25`, `dense`, `hybrid`; empty: the core's default.
    #[serde(default)]
    retrievals: Vec<String>,
    #[serde(default)]
    top_ks: Vec<usize>,
    limit: Option<usize>,
    /// Most tokens per generated answer (rag); the core's default when None.
    max_tokens: Option<usize>,
    seed: Option<u64>,
    name: Option<String>,
    resume: Option<String>,
    /// Judges to run on every answer (names from `list_judges`); empty: no judging.
    #[serde(default)]
    judges: Vec<String>,
    /// Models for the judges; empty: the core's default.
    #[serde(default)]
    judge_models: Vec<String>,
    /// `remove-context`, or None for plain runs.
    experiment: Option<String>,
    /// A model that rescores the first stage's chunks (retrieve and rag targets), as `--rerank`.
    #[serde(default)]
    rerank: Option<String>,
    /// How many first-stage chunks it rescores; None: the core's default.
    #[serde(default)]
    rerank_depth: Option<usize>,
}

/// What `start_run` answers: the first run's id and how many runs the request stands for.
#[derive(Serialize)]
pub struct StartedRuns {
    run_id: String,
    runs: usize,
}

/// The runs a request stands for, planned by the core (the same planning as `assay run`).
fn plan(request: &StartRequest, dataset_name: &str, cancel: &Arc<AtomicBool>) -> Result<Vec<RunRequest>, String> {
    if !request.metrics.is_empty() {
        assay::metrics::MetricSelection::parse(&request.metrics.join(",")).map_err(|e| e.to_string())?;
    }
    let retrievals = request
        .retrievals
        .iter()
        .map(|mode| mode.parse::<RetrievalMode>().map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let kind = match request.experiment.as_deref().filter(|e| !e.is_empty()) {
        Some(kind) => Some(kind.parse::<ExperimentKind>()?),
        None => None,
    };
    let target = request.target.clone().filter(|t| !t.is_empty());
    let experiment = ExperimentRequest {
        base: RunRequest {
            target: target.clone().unwrap_or_else(|| "rag".into()),
            metrics: request.metrics.clone(),
            top_k: None,
            limit: request.limit,
            seed: request.seed,
            name: request.name.clone().filter(|n| !n.trim().is_empty()),
            experiment: None,
            model: None,
            retrieval: None,
            prompt: None,
            max_tokens: request.max_tokens,
            device: DeviceChoice::Cpu,
            cancel: Some(cancel.clone()),
            judges: request.judges.clone(),
            judge_model: None,
            judges_dir: default_judges_dir(),
            knowledge: None,
            // An http target's file says how many requests it may have in flight.
            concurrency: None,
            rerank: request.rerank.clone().filter(|m| !m.trim().is_empty()).map(|model| RerankConfig {
                model,
                depth: request.rerank_depth.unwrap_or(DEFAULT_RERANK_DEPTH),
            }),
        },
        target_given: target.is_some(),
        dataset_name: dataset_name.to_string(),
        models: request.models.clone(),
        judge_models: request.judge_models.iter().filter(|m| !m.trim().is_empty()).cloned().collect(),
        top_ks: request.top_ks.clone(),
        retrievals,
        kind,
    };
    Ok(run::plan_experiment(&experiment))
}

/// One progress event as the window receives it.
#[derive(Serialize, Clone)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ProgressEvent {
    Started { run_id: String, total: usize, already_done: usize },
    Item { question_id: String, question: String },
    Done {
        question_id: String,
        done: usize,
        total: usize,
        error: Option<String>,
        /// Items per second since this session of the run started.
        rate: f64,
        /// Seconds left at that rate; None until an item has finished.
        eta_s: Option<f64>,
        /// Each metric's (and judge's) mean over the items stored so far, from the core's summary.
        means: BTreeMap<String, f64>,
    },
    Finished { run_id: String, status: String },
    Failed { message: String },
}

fn emit(app: &AppHandle, event: ProgressEvent) {
    // A closed window is not an error for the run: it carries on and stays resumable.
    let _ = app.emit("run-progress", event);
}

/// Prepare the run, start it on a worker thread and return its id once it is in the store.
#[tauri::command]
pub async fn start_run(app: AppHandle, state: State<'_, ActiveRun>, request: StartRequest) -> Result<StartedRuns, String> {
    let cancel = Arc::new(AtomicBool::new(false));
    {
        let mut active = state.0.lock().map_err(|_| "run state poisoned")?;
        if active.as_ref().is_some_and(|c| Arc::strong_count(c) > 1) {
            return Err("a run is already in progress; wait for it or cancel it".into());
        }
        *active = Some(cancel.clone());
    }
    let (ready_tx, ready_rx) = mpsc::channel::<Result<StartedRuns, String>>();
    std::thread::spawn(move || worker(app, request, cancel, ready_tx));
    tauri::async_runtime::spawn_blocking(move || ready_rx.recv())
        .await
        .map_err(|e| e.to_string())?
        .map_err(|_| "the run stopped before it started".to_string())?
}

fn worker(app: AppHandle, request: StartRequest, cancel: Arc<AtomicBool>, ready: mpsc::Sender<Result<StartedRuns, String>>) {
    let setup = (|| {
        let dataset = load_dataset(Path::new(&request.dataset)).map_err(|e| e.to_string())?;
        let store = open_store()?;
        let plans = match &request.resume {
            None => plan(&request, &dataset.manifest.name, &cancel)?.into_iter().map(Plan::New).collect(),
            Some(reference) => vec![Plan::Resume(ResumeRequest {
                run: reference.clone(),
                target: None,
                metrics: None,
                top_k: None,
                limit: None,
                seed: None,
                prompt: None,
                device: DeviceChoice::Cpu,
                cancel: Some(cancel.clone()),
                judges_dir: default_judges_dir(),
                concurrency: None,
            })],
        };
        Ok::<_, String>((dataset, store, plans))
    })();
    let (dataset, mut store, plans) = match setup {
        Ok(setup) => setup,
        Err(message) => {
            let _ = ready.send(Err(message));
            return;
        }
    };
    let planned = plans.len();
    let mut ready = Some(ready);
    for plan in plans {
        let prepared = match &plan {
            Plan::New(request) => run::prepare_new_run(&store, &dataset, request),
            Plan::Resume(request) => run::prepare_resume(&store, &dataset, request),
        };
        let prepared = match prepared {
            Ok(prepared) => prepared,
            Err(error) => {
                // Before the first run starts the error goes back to the form; later, as an event.
                match ready.take() {
                    Some(ready) => drop(ready.send(Err(error.to_string()))),
                    None => emit(&app, ProgressEvent::Failed { message: error.to_string() }),
                }
                return;
            }
        };
        let record = prepared.record;
        let mut target = prepared.target;
        let mut judges = prepared.judges;
        if let Some(ready) = ready.take() {
            let _ = ready.send(Ok(StartedRuns { run_id: record.id.clone(), runs: planned }));
        }
        let started = Instant::now();
        let mut first_done: Option<usize> = None;
        // A second connection reads the items committed so far (the first is busy writing).
        let reader = default_db().ok().and_then(|path| Store::open_existing(&path).ok());
        let running_means = |run_id: &str| -> BTreeMap<String, f64> {
            let items = reader.as_ref().and_then(|store| store.items(run_id).ok()).unwrap_or_default();
            summarize(&items, record.config.seed).metrics.into_iter().map(|(name, m)| (name, m.mean)).collect()
        };
        let mut on_progress = |event: &Progress| {
            let forwarded = match event {
                Progress::Started { run_id, total, already_done } => {
                    ProgressEvent::Started { run_id: run_id.clone(), total: *total, already_done: *already_done }
                }
                Progress::ItemStarted { question_id, question } => {
                    ProgressEvent::Item { question_id: question_id.clone(), question: question.clone() }
                }
                Progress::ItemDone { question_id, done, total, error } => {
                    // Items finished before this session (a resumed run) do not count toward the rate.
                    let base = *first_done.get_or_insert(done.saturating_sub(1));
                    let finished_here = done.saturating_sub(base) as f64;
                    let secs = started.elapsed().as_secs_f64().max(1e-3);
                    let rate = finished_here / secs;
                    let eta_s = (rate > 0.0).then(|| total.saturating_sub(*done) as f64 / rate);
                    ProgressEvent::Done {
                        question_id: question_id.clone(),
                        done: *done,
                        total: *total,
                        error: error.clone(),
                        rate,
                        eta_s,
                        means: running_means(&record.id),
                    }
                }
            };
            emit(&app, forwarded);
        };
        let outcome =
            run::execute_judged(&mut store, &record, &dataset, target.as_mut(), judges.as_deref_mut(), &mut on_progress, &cancel);
        match outcome {
            Ok(status) => {
                emit(&app, ProgressEvent::Finished { run_id: record.id.clone(), status: status.as_str().into() });
                if cancel.load(Ordering::Relaxed) {
                    return;
                }
            }
            Err(error) => {
                emit(&app, ProgressEvent::Failed { message: error.to_string() });
                return;
            }
        }
    }
    // Dropping `cancel` (end of this function) marks the slot free (see start_run).
}

enum Plan {
    New(RunRequest),
    Resume(ResumeRequest),
}

/// Ask the run in flight to stop after its current item; what finished stays and is resumable.
#[tauri::command]
pub async fn cancel_run(state: State<'_, ActiveRun>) -> Result<bool, String> {
    let active = state.0.lock().map_err(|_| "run state poisoned")?;
    match active.as_ref() {
        Some(flag) if Arc::strong_count(flag) > 1 => {
            flag.store(true, Ordering::Relaxed);
            Ok(true)
        }
        _ => Ok(false),
    }
}

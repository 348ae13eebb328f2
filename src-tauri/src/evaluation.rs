//! Starting, following and cancelling an evaluation. The core's front door (`run_experiment`)
//! plans, checks, executes and reads back the runs on a worker thread; this file only maps the
//! New run form into an order and forwards the front door's events to the window as
//! `run-progress` events, with the running means of the items stored so far. One run at a time.

use crate::commands::default_db;
use assay::dataset::load_dataset;
use assay::record::{RunRecord, RunStatus};
use assay::retrieve::RetrievalMode;
use assay::run::{
    rerank_config, run_experiment, ExperimentEvents, ExperimentKind, ExperimentOrder, ExperimentOutcome,
    ExperimentRequest, Progress, ResumeRequest, RunRequest, StoredRuns,
};
use assay::stats::RunReport;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
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
#[derive(Deserialize, Default, Clone)]
pub struct StartRequest {
    pub dataset: String,
    /// `answers:FILE`, `retrieve` or `rag`; None: the core's default target.
    pub target: Option<String>,
    #[serde(default)]
    pub metrics: Vec<String>,
    #[serde(default)]
    pub models: Vec<String>,
    /// Any of `bm25`, `dense`, `hybrid`; empty: the core's default.
    #[serde(default)]
    pub retrievals: Vec<String>,
    #[serde(default)]
    pub top_ks: Vec<usize>,
    pub limit: Option<usize>,
    /// Most tokens per generated answer (rag); the core's default when None.
    pub max_tokens: Option<usize>,
    pub seed: Option<u64>,
    pub name: Option<String>,
    pub resume: Option<String>,
    /// Judges to run on every answer (names from `list_judges`); empty: no judging.
    #[serde(default)]
    pub judges: Vec<String>,
    /// Models for the judges; empty: the core's default.
    #[serde(default)]
    pub judge_models: Vec<String>,
    /// `remove-context`, or None for plain runs.
    pub experiment: Option<String>,
    /// A model that rescores the first stage's chunks (retrieve and rag targets), as `--rerank`.
    #[serde(default)]
    pub rerank: Option<String>,
    /// How many first-stage chunks it rescores; None: the core's default.
    #[serde(default)]
    pub rerank_depth: Option<usize>,
}

/// What `start_run` answers: the first run's id and how many runs the request stands for.
#[derive(Serialize)]
pub struct StartedRuns {
    run_id: String,
    runs: usize,
}

/// The order a form stands for: the core plans it (the same planning as `assay run`).
pub fn order(request: &StartRequest) -> Result<ExperimentOrder, String> {
    if let Some(run) = request.resume.clone().filter(|r| !r.trim().is_empty()) {
        return Ok(ExperimentOrder::Resume(ResumeRequest { run, ..ResumeRequest::default() }));
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
    Ok(ExperimentOrder::New(ExperimentRequest {
        base: RunRequest {
            metrics: request.metrics.clone(),
            limit: request.limit,
            seed: request.seed,
            name: request.name.clone().filter(|n| !n.trim().is_empty()),
            max_tokens: request.max_tokens,
            judges: request.judges.clone(),
            rerank: rerank_config(request.rerank.clone(), request.rerank_depth),
            ..RunRequest::default()
        },
        target: request.target.clone(),
        models: request.models.clone(),
        judge_models: request.judge_models.iter().filter(|m| !m.trim().is_empty()).cloned().collect(),
        top_ks: request.top_ks.clone(),
        retrievals,
        kind,
        ..ExperimentRequest::default()
    }))
}

/// Run a form's request to its end on this thread, storing into `db`: what the worker of
/// `start_run` does, without a window (the tests call it as the app would).
pub fn run_request(
    request: &StartRequest,
    db: &Path,
    cancel: &Arc<AtomicBool>,
    events: &mut dyn ExperimentEvents,
) -> Result<ExperimentOutcome, String> {
    let dataset = load_dataset(Path::new(&request.dataset)).map_err(|e| e.to_string())?;
    run_experiment(order(request)?, &dataset, db, cancel, events).map_err(|e| e.to_string())
}

/// One progress event as the window receives it.
#[derive(Serialize, Clone)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ProgressEvent {
    /// `index`: what became of the retrieval index and its vectors (the core's line), for
    /// targets that retrieve.
    Started { run_id: String, name: String, total: usize, already_done: usize, index: Option<String> },
    Item { question_id: String, question: String },
    Done {
        question_id: String,
        done: usize,
        total: usize,
        error: Option<String>,
        /// Items per second over the last few items (`window_items` finished in `window_s`
        /// seconds): a moving rate, so a run that slows down or speeds up shows it.
        rate: f64,
        window_items: usize,
        window_s: f64,
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
    let mut events = WindowEvents { app, ready: Some(ready), reader: None, finishes: VecDeque::new(), index: None };
    let result = default_db().and_then(|db| run_request(&request, &db, &cancel, &mut events));
    if let Err(message) = result {
        // Before the first run starts the error goes back to the form; later, as an event.
        match events.ready.take() {
            Some(ready) => drop(ready.send(Err(message))),
            None => emit(&events.app, ProgressEvent::Failed { message }),
        }
    }
    // Dropping `cancel` (end of this function) marks the slot free (see start_run).
}

/// The front door's events as the window receives them.
struct WindowEvents {
    app: AppHandle,
    /// Answered when the first run is in the store (or the request failed before).
    ready: Option<mpsc::Sender<Result<StartedRuns, String>>>,
    /// A second connection reads the items committed so far (the run's own is busy writing).
    reader: Option<StoredRuns>,
    /// When this session of the run started, then when each of its last items finished (at
    /// most `RATE_WINDOW` of them): the moving rate's window. A resumed run's earlier items
    /// are not in it.
    finishes: VecDeque<Instant>,
    /// The index line of the run under way, sent with its `Started` event.
    index: Option<String>,
}

/// How many of the latest items the moving rate is measured over.
const RATE_WINDOW: usize = 8;

impl ExperimentEvents for WindowEvents {
    fn run_started(&mut self, run: &RunRecord, index: Option<&str>, _position: usize, planned: usize) {
        self.index = index.map(str::to_string);
        if let Some(ready) = self.ready.take() {
            let _ = ready.send(Ok(StartedRuns { run_id: run.id.clone(), runs: planned }));
        }
        self.finishes = VecDeque::from([Instant::now()]);
        self.reader = default_db().ok().and_then(|path| StoredRuns::open_existing(&path).ok());
    }

    fn progress(&mut self, run: &RunRecord, event: &Progress) {
        let forwarded = match event {
            Progress::Started { run_id, total, already_done } => {
                ProgressEvent::Started {
                    run_id: run_id.clone(),
                    name: run.name.clone(),
                    total: *total,
                    already_done: *already_done,
                    index: self.index.clone(),
                }
            }
            Progress::ItemStarted { question_id, question } => {
                ProgressEvent::Item { question_id: question_id.clone(), question: question.clone() }
            }
            Progress::ItemDone { question_id, done, total, error } => {
                self.finishes.push_back(Instant::now());
                if self.finishes.len() > RATE_WINDOW + 1 {
                    self.finishes.pop_front();
                }
                let window_items = self.finishes.len() - 1;
                let window_s = match (self.finishes.front(), self.finishes.back()) {
                    (Some(first), Some(last)) => last.duration_since(*first).as_secs_f64().max(1e-3),
                    _ => 1e-3,
                };
                let rate = window_items as f64 / window_s;
                let eta_s = (rate > 0.0).then(|| total.saturating_sub(*done) as f64 / rate);
                let means = self
                    .reader
                    .as_ref()
                    .and_then(|reader| reader.running_means(&run.id, run.config.seed).ok())
                    .unwrap_or_default();
                ProgressEvent::Done {
                    question_id: question_id.clone(),
                    done: *done,
                    total: *total,
                    error: error.clone(),
                    rate,
                    window_items,
                    window_s,
                    eta_s,
                    means,
                }
            }
        };
        emit(&self.app, forwarded);
    }

    fn run_finished(&mut self, report: &RunReport, status: RunStatus) {
        emit(&self.app, ProgressEvent::Finished { run_id: report.run.id.clone(), status: status.as_str().into() });
    }
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

//! The front door (DESIGN.md): the one entry both faces call to run an experiment. It plans the
//! runs a request stands for, checks each before the database is opened, prepares it (run row,
//! target, judges), executes it, reads it back, and compares the runs: knowledge-removal arms
//! pairwise, a plain matrix against its first run, and the `--fail-under` gates on every run.
//! The faces map their arguments into an [`ExperimentOrder`] and render [`ExperimentEvents`];
//! nothing here prints.

use super::execute::{execute_judged, Progress, RunError};
use super::experiment::{knowledge_removals, plan_experiment, run_gates, ExperimentKind, ExperimentRequest};
use super::request::{check_new_run, prepare_resume, PreparedRun, ResumeRequest, RunRequest};
use crate::compare::{experiment, ExperimentComparison, ExperimentOptions, KnowledgeRemoval};
use crate::dataset::Dataset;
use crate::record::{RunRecord, RunStatus};
use crate::stats::{check_gates, load_report, RunReport};
use crate::store::Store;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What a face asks the front door for: a new experiment (one run or a matrix), or the resume
/// of one interrupted run.
#[derive(Debug, Clone)]
pub enum ExperimentOrder {
    New(ExperimentRequest),
    Resume(ResumeRequest),
}

/// What happens while an experiment runs, for a face to show (a progress bar, window events).
/// Every method has an empty default, so a face implements only what it shows.
pub trait ExperimentEvents {
    /// `run` is in the store and about to execute: run `position` (from 0) of `planned`;
    /// `index` tells whether the retrieval index was reused or built, when the target retrieves.
    fn run_started(&mut self, _run: &RunRecord, _index: Option<&str>, _position: usize, _planned: usize) {}
    /// An item started or finished, as the run loop reports it.
    fn progress(&mut self, _run: &RunRecord, _event: &Progress) {}
    /// `report` was read back from the store after its run ended with `status`.
    fn run_finished(&mut self, _report: &RunReport, _status: RunStatus) {}
}

/// Events nobody watches (tests, scripts).
pub struct Unwatched;
impl ExperimentEvents for Unwatched {}

/// What an experiment produced, read back from the store.
#[derive(Debug)]
pub struct ExperimentOutcome {
    /// Each run that executed, in plan order (a cancelled experiment stops after the run that
    /// was cancelled).
    pub reports: Vec<RunReport>,
    pub cancelled: bool,
    /// The experiment kind asked for (None for plain runs and matrices).
    pub kind: Option<ExperimentKind>,
    /// remove-context: one reading per pair of arms.
    pub knowledge_removal: Vec<KnowledgeRemoval>,
    /// A plain experiment of several runs: every run against the first.
    pub comparison: Option<ExperimentComparison>,
    /// One sentence per failed `--fail-under` gate (prefixed with the run's name when there
    /// are several runs); empty when all passed.
    pub gate_failures: Vec<String>,
}

impl ExperimentOutcome {
    /// The exit status a command line reports for it: 130 cancelled, 1 a gate failed, else 0.
    pub fn exit_code(&self) -> i32 {
        if self.cancelled {
            130
        } else if !self.gate_failures.is_empty() {
            1
        } else {
            0
        }
    }
}

/// Run what `order` asks over `dataset`, storing into the database at `db` (created when a
/// new run checks out; a resume needs it to exist). Raising `cancel` stops generation between
/// tokens and the run after the item in flight; what finished is kept and resumable.
/// Errors before the first run starts leave no database file behind.
pub fn run_experiment(
    order: ExperimentOrder,
    dataset: &Dataset,
    db: &Path,
    cancel: &Arc<AtomicBool>,
    events: &mut dyn ExperimentEvents,
) -> Result<ExperimentOutcome, RunError> {
    let (plans, kind, seed, gates, mut store) = match order {
        ExperimentOrder::New(mut request) => {
            request.base.cancel = Some(cancel.clone());
            let gates = run_gates(&request.fail_under, &request.base.judges)?;
            let plans = plan_experiment(&request, &dataset.manifest.name)?.into_iter().map(Plan::New).collect();
            (plans, request.kind, request.base.seed.unwrap_or(0), gates, None)
        }
        ExperimentOrder::Resume(mut request) => {
            request.cancel = Some(cancel.clone());
            let gates = run_gates(&request.fail_under, &[])?;
            let store = Store::open_existing(db)?;
            let seed = request.seed.unwrap_or(0);
            (vec![Plan::Resume(Box::new(request))], None, seed, gates, Some(store))
        }
    };
    let planned: usize = plans.len();
    let mut reports = Vec::new();
    let mut cancelled = false;
    for (position, plan) in plans.into_iter().enumerate() {
        let (store, prepared) = match plan {
            Plan::New(request) => {
                // Stopped before a run row or a database exists, so nothing is left behind (not
                // an empty "cancelled" run).
                let Some(checked) = unless_cancelled(check_new_run(dataset, &request), cancel)? else {
                    cancelled = true;
                    break;
                };
                // Opened once the first run checked out: a bad prompt or judge spec must not
                // leave a new database file behind.
                let store = match &mut store {
                    Some(store) => store,
                    None => store.insert(Store::open(db)?),
                };
                let prepared = checked.start(store, dataset)?;
                (store, prepared)
            }
            Plan::Resume(request) => {
                let store = store.as_mut().ok_or_else(|| RunError::Experiment("resume without an open database".into()))?;
                // Cancelled while its target was rebuilt: the run stays as it was.
                let Some(prepared) = unless_cancelled(prepare_resume(store, dataset, &request), cancel)? else {
                    cancelled = true;
                    break;
                };
                (store, prepared)
            }
        };
        let PreparedRun { record, mut target, index, mut judges } = prepared;
        let headline = index.as_ref().map(|i| i.headline());
        events.run_started(&record, headline.as_deref(), position, planned);
        let status = execute_judged(
            store,
            &record,
            dataset,
            target.as_mut(),
            judges.as_deref_mut(),
            &mut |event| events.progress(&record, event),
            cancel,
        )?;
        let report = load_report(store, store.find_run(&record.id)?)?;
        events.run_finished(&report, status);
        reports.push(report);
        if status == RunStatus::Cancelled {
            cancelled = true;
            break;
        }
    }
    let knowledge_removal = knowledge_removals(kind, &reports, seed);
    let comparison = match kind {
        None if reports.len() > 1 => Some(
            experiment(&reports, &ExperimentOptions { seed, ..ExperimentOptions::default() })
                .map_err(|e| RunError::Experiment(e.to_string()))?,
        ),
        _ => None,
    };
    let several = reports.len() > 1;
    let gate_failures = reports
        .iter()
        .flat_map(|report| {
            check_gates(&gates, &report.summary).into_iter().map(move |failure| {
                if several {
                    format!("{}: {failure}", report.run.name)
                } else {
                    failure.to_string()
                }
            })
        })
        .collect();
    Ok(ExperimentOutcome { reports, cancelled, kind, knowledge_removal, comparison, gate_failures })
}

enum Plan {
    New(RunRequest),
    Resume(Box<ResumeRequest>),
}

/// What preparing a run gave, unless Ctrl-C came while it prepared (an index build or a model
/// load stops where it can, between documents or batches of vectors): then `None`, whether
/// the preparation failed because of it or finished anyway, since the error it gives is the
/// cancellation, not a failure to report.
fn unless_cancelled<T>(prepared: Result<T, RunError>, cancel: &AtomicBool) -> Result<Option<T>, RunError> {
    match prepared {
        _ if cancel.load(Ordering::Relaxed) => Ok(None),
        Ok(value) => Ok(Some(value)),
        Err(e) => Err(e),
    }
}

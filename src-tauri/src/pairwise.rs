//! The Compare screen's pairwise comparison: the judgments stored for two runs, and "Judge
//! pairwise", which calls the same library entry as `assay compare A B --pairwise`
//! (`run::compare_pairwise`) on a blocking thread, forwards its progress to the window as
//! `pairwise-progress` events and can be cancelled (judgments made so far stay stored). Only
//! translation lives here: the judging, statistics, verdict and headline are the core's.

use crate::commands::default_db;
use assay::compare::PairwiseOutcome;
use assay::llm::device::DeviceChoice;
use assay::run::{compare_pairwise, stored_pairwise_of, PairwiseOrder, PairwiseProgress};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tauri::{AppHandle, Emitter, State};

/// The cancel flag of the pairwise comparison in flight, if any.
#[derive(Default)]
pub struct ActivePairwise(Mutex<Option<Arc<AtomicBool>>>);

fn order(run_a: String, run_b: String, judge: Option<String>, judge_model: Option<String>, cancel: Option<Arc<AtomicBool>>) -> Result<PairwiseOrder, String> {
    Ok(PairwiseOrder {
        database: default_db()?,
        run_a,
        run_b,
        // An empty choice is the core's default pairwise judge.
        judge: judge.filter(|j| !j.trim().is_empty()),
        judges_dir: None,
        // An empty choice is the core's default judge model, as when the CLI's flag is left out.
        judge_model: judge_model.filter(|m| !m.trim().is_empty()),
        device: DeviceChoice::default(),
        cancel,
    })
}

/// The pairwise comparison stored for the two runs (nothing is judged); None when none is.
#[tauri::command]
pub async fn stored_pairwise(run_a: String, run_b: String) -> Result<Option<PairwiseOutcome>, String> {
    let order = order(run_a, run_b, None, None, None)?;
    tauri::async_runtime::spawn_blocking(move || stored_pairwise_of(&order).map_err(|e| e.to_string()))
        .await
        .map_err(|e| e.to_string())?
}

/// Judge the two runs' answers (what is not stored yet) with the pairwise judge chosen (the
/// core's default when none), with progress events.
#[tauri::command]
pub async fn judge_pairwise(
    app: AppHandle,
    state: State<'_, ActivePairwise>,
    run_a: String,
    run_b: String,
    judge: Option<String>,
    judge_model: Option<String>,
) -> Result<PairwiseOutcome, String> {
    let cancel = Arc::new(AtomicBool::new(false));
    {
        let mut active = state.0.lock().map_err(|_| "pairwise state poisoned")?;
        if active.as_ref().is_some_and(|c| Arc::strong_count(c) > 1) {
            return Err("a pairwise comparison is already being judged; wait for it or cancel it".into());
        }
        *active = Some(cancel.clone());
    }
    let order = order(run_a, run_b, judge, judge_model, Some(cancel))?;
    tauri::async_runtime::spawn_blocking(move || {
        compare_pairwise(&order, &mut |event: PairwiseProgress| {
            // A closed window is no reason to stop: what is judged is stored either way.
            let _ = app.emit("pairwise-progress", event);
        })
        .map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| e.to_string())?
}

/// Stop the pairwise comparison in flight after its current question.
#[tauri::command]
pub async fn cancel_pairwise(state: State<'_, ActivePairwise>) -> Result<bool, String> {
    let active = state.0.lock().map_err(|_| "pairwise state poisoned")?;
    match active.as_ref() {
        Some(flag) if Arc::strong_count(flag) > 1 => {
            flag.store(true, Ordering::Relaxed);
            Ok(true)
        }
        _ => Ok(false),
    }
}

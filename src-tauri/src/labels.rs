//! The labelling screen's and the judge panel's commands: a run's labels (read, set, clear,
//! export to the JSONL `assay agree` reads, import from it) and every judge of the run against
//! the labels so far, calibrated on them when asked: the library's `run::labels` and
//! `run::judge_agreement`, the same entries `assay labels` and `assay agree RUN` call.

use crate::commands::default_db;
use crate::write_grants::WriteGrants;
use assay::record::{AnswerLabel, LabelRecord};
use assay::run::{
    import_labels, judge_agreement, judge_catalog, remove_label, run_labels, set_label, write_labels_file, AgreementRequest,
    JudgeAgreement, LabelsImported, RunLabels, StoredRuns,
};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tauri::State;

/// The user's judges folder as the CLI finds it: `$ASSAY_JUDGES_DIR`, else the default one.
fn judges_dir() -> Option<PathBuf> {
    std::env::var_os("ASSAY_JUDGES_DIR").filter(|d| !d.is_empty()).map(PathBuf::from)
}

#[tauri::command]
pub async fn labels_of_run(run: String) -> Result<RunLabels, String> {
    run_labels(&default_db()?, &run).map_err(|e| e.to_string())
}

/// Store one answer's label at once (`label`: correct, wrong or skip).
#[tauri::command]
pub async fn label_answer(run: String, question: String, label: String, note: Option<String>) -> Result<LabelRecord, String> {
    let label = AnswerLabel::parse(&label).ok_or_else(|| format!("label {label:?}: give correct, wrong or skip"))?;
    set_label(&default_db()?, &run, &question, label, note.as_deref()).map_err(|e| e.to_string())
}

#[tauri::command]
pub async fn clear_label(run: String, question: String) -> Result<(), String> {
    remove_label(&default_db()?, &run, &question).map_err(|e| e.to_string())
}

/// Write the labels as `assay agree` JSONL to a path chosen in the save dialog, or with no
/// path to `<data folder>/labels/<run id>.jsonl`; returns the path and the lines written.
#[tauri::command]
pub async fn export_labels(grants: State<'_, WriteGrants>, run: String, path: Option<String>) -> Result<(String, usize), String> {
    let db = default_db()?;
    let path = match path {
        Some(path) => {
            grants.check(Path::new(&path))?;
            PathBuf::from(path)
        }
        None => {
            let full = run_labels(&db, &run).map_err(|e| e.to_string())?.run;
            let dir = db.parent().map(|p| p.join("labels")).ok_or("the database has no folder")?;
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            dir.join(format!("{full}.jsonl"))
        }
    };
    let lines = write_labels_file(&db, &run, &path).map_err(|e| e.to_string())?;
    Ok((path.display().to_string(), lines))
}

/// Read labels from an `assay agree` JSONL file (checked whole before any is stored).
#[tauri::command]
pub async fn import_labels_file(run: String, path: String) -> Result<LabelsImported, String> {
    let path = PathBuf::from(path.trim());
    if !path.is_absolute() {
        return Err(format!("labels file {}: give an absolute path (choose it with Browse…)", path.display()));
    }
    import_labels(&default_db()?, &run, &path, judges_dir().as_deref()).map_err(|e| e.to_string())
}

/// One judge of the run as the panel shows it: its scale and its calibration now.
#[derive(Serialize)]
pub struct PanelJudge {
    name: String,
    outcomes: Vec<String>,
    pass: Option<String>,
    /// Score cut points between outcomes, from the spec in use now (None: not calibrated).
    thresholds: Option<Vec<f64>>,
    calibrated_on: Option<usize>,
    /// `built-in` or the spec file's path.
    source: String,
}

/// The judge panel: each judge of the run, how many labels there are, and the agreement with
/// them (or why there is none yet); with `calibrate`, thresholds fitted on them and spec copies
/// written into the judges folder, the same as `assay agree RUN --calibrate`.
#[derive(Serialize)]
pub struct JudgePanel {
    run: String,
    judges: Vec<PanelJudge>,
    labels: RunLabels,
    agreement: Option<JudgeAgreement>,
    /// Why there is no agreement (no labels yet, no judge to compare).
    problem: Option<String>,
    /// By question id, by calibrated judge: the label its calibrated thresholds give the stored
    /// score now (the verdict's own label was set by the spec the run used).
    calibrated_labels: BTreeMap<String, BTreeMap<String, String>>,
}

#[tauri::command]
pub async fn judge_panel(run: String, calibrate: bool) -> Result<JudgePanel, String> {
    let db = default_db()?;
    let report = StoredRuns::open_existing(&db).and_then(|stored| stored.report(&run)).map_err(|e| e.to_string())?;
    let record = report.run;
    let labels = run_labels(&db, &record.id).map_err(|e| e.to_string())?;
    let dir = judges_dir();
    // Agreement first: a calibration writes spec copies that the catalog then reads.
    let request = AgreementRequest { runs: vec![record.id.clone()], labels: vec![], labels_as: None, calibrate, judges_dir: dir.clone() };
    let (agreement, problem) = match judge_agreement(&db, &request) {
        Ok(agreement) => (Some(agreement), None),
        Err(error) => (None, Some(error.to_string())),
    };
    let specs = judge_catalog(dir.as_deref()).map_err(|e| e.to_string())?;
    let mut calibrated_labels: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for item in &report.items {
        for (judge, verdict) in &item.verdicts {
            let label = specs.get(judge).zip(verdict.score).and_then(|(spec, score)| spec.calibrated_label(score));
            if let Some(label) = label {
                calibrated_labels.entry(item.question.id.clone()).or_default().insert(judge.clone(), label.to_string());
            }
        }
    }
    let judges = record
        .config
        .judges
        .iter()
        .filter_map(|name| specs.get(name))
        .map(|spec| PanelJudge {
            name: spec.name.clone(),
            outcomes: spec.outcomes.clone(),
            pass: spec.pass.clone(),
            thresholds: spec.thresholds.clone(),
            calibrated_on: spec.calibrated_on,
            source: spec.source.clone(),
        })
        .collect();
    Ok(JudgePanel { run: record.id, judges, labels, agreement, problem, calibrated_labels })
}

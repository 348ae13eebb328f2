//! Judges against human labels, for both faces (`assay agree`, the app's calibration panel):
//! each judge of stored runs compared with a labels file, and, when asked, decision thresholds
//! fitted on the judge's expected score, the agreement before and after, and a calibrated copy
//! of each judge spec written into the judges folder (where later runs load it from).
//!
//! Several runs, each with its own labels file, are pooled: their items are told apart by run,
//! so two answer sets over the same questions give one table over all items.

use crate::judge::agreement::{band, compare_with_labels, fit_thresholds, read_labels, Agreement, HumanLabel, JudgedItem, LabelsError};
use crate::judge::spec::{default_judges_dir, load_all, write_calibrated_copy};
use crate::judge::spec::{JudgeMode, JudgeSpec, SpecError};
use super::labels::{stored_human_labels, LABELS_JUDGE};
use crate::store::{Store, StoreError};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum CalibrationError {
    #[error("give one labels file per run ({runs} runs, {labels} labels files)")]
    LabelsPerRun { runs: usize, labels: usize },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Labels(#[from] LabelsError),
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error("{0}")]
    Labelled(String),
    #[error("no judge of run(s) {0} has human labels in the labels file(s)")]
    NoLabels(String),
    #[error("no judge of run(s) {0} can be compared with their stored labels: label answers first (the app's run page, or `assay labels import RUN FILE`)")]
    NoStoredLabels(String),
    #[error("--labels-as: no judge named {0}")]
    UnknownBase(String),
}

/// What to compare: runs and one labels file per run, in the same order; no labels files: the
/// labels stored with the runs (`run::set_label`), as the `correct` judge's Yes / No, with
/// every other judge compared with them as pass / fail.
#[derive(Debug, Clone, Default)]
pub struct AgreementRequest {
    pub runs: Vec<String>,
    pub labels: Vec<PathBuf>,
    /// Judges without labels of their own (a jury, claims) are compared with the labels of this
    /// judge, as pass / fail (its pass outcome or better is a pass).
    pub labels_as: Option<String>,
    /// Fit score thresholds from the labels and write calibrated copies of the specs.
    pub calibrate: bool,
    /// Folder of user judge specs, where calibrated copies go; None: the default folder.
    pub judges_dir: Option<PathBuf>,
}

/// One judge's thresholds fitted on the labels, with the agreement before and after.
#[derive(Debug, Clone, Serialize)]
pub struct Calibration {
    pub judge: String,
    /// Human labels the thresholds were fitted on.
    pub labels: usize,
    pub thresholds: Vec<f64>,
    pub before: Agreement,
    pub after: Option<Agreement>,
    /// The calibrated spec copy written, if any (judges whose label the thresholds set).
    pub written: Option<String>,
}

/// The agreement of every labelled judge, and the calibrations when asked for.
#[derive(Debug, Clone, Serialize)]
pub struct JudgeAgreement {
    pub agreements: Vec<Agreement>,
    pub calibrations: Vec<Calibration>,
}

/// Compare the judges of the stored runs in the database at `db` with the human labels, and
/// calibrate them when `request.calibrate`.
pub fn judge_agreement(db: &Path, request: &AgreementRequest) -> Result<JudgeAgreement, CalibrationError> {
    let (runs, label_files) = (&request.runs, &request.labels);
    let stored_labels = label_files.is_empty();
    if !stored_labels && runs.len() != label_files.len() {
        return Err(CalibrationError::LabelsPerRun { runs: runs.len(), labels: label_files.len() });
    }
    let store = Store::open_existing(db)?;
    let dir = request.judges_dir.clone().or_else(default_judges_dir);
    let specs = load_all(dir.as_deref())?;
    let mut outcomes_of: BTreeMap<String, Vec<String>> = specs.iter().map(|(k, s)| (k.clone(), s.outcomes.clone())).collect();
    let mut verdicts: BTreeMap<String, BTreeMap<String, JudgedItem>> = BTreeMap::new();
    let mut human = Vec::new();
    for (index, run) in runs.iter().enumerate() {
        let record = store.find_run(run)?;
        // One key space per run: `0:q001` and `1:q001` are different items.
        let key = |id: &str| if runs.len() == 1 { id.to_string() } else { format!("{index}:{id}") };
        for item in store.items(&record.id)? {
            let words = item.answer.as_ref().map(|a| crate::metrics::normalize::word_count(&a.text));
            let labels = item
                .verdicts
                .iter()
                .map(|(judge, v)| (judge.clone(), JudgedItem { label: v.label.clone(), score: v.score, words }))
                .collect();
            verdicts.insert(key(&item.question.id), labels);
        }
        let labels = match label_files.get(index) {
            Some(file) => read_labels(file)?,
            None => stored_human_labels(&store, &record.id)?,
        };
        for mut label in labels {
            label.id = key(&label.id);
            human.push(label);
        }
    }
    let labels_as = request.labels_as.clone().or_else(|| stored_labels.then(|| LABELS_JUDGE.to_string()));
    if let Some(base) = &labels_as {
        add_pass_fail_rows(base, &specs, &mut outcomes_of, &mut verdicts, &mut human)?;
    }
    let agreements = compare_with_labels(&outcomes_of, &verdicts, &human).map_err(CalibrationError::Labelled)?;
    if agreements.is_empty() && stored_labels {
        return Err(CalibrationError::NoStoredLabels(runs.join(", ")));
    }
    if agreements.is_empty() {
        return Err(CalibrationError::NoLabels(runs.join(", ")));
    }
    let mut calibrations = Vec::new();
    if request.calibrate {
        for before in &agreements {
            let labelled = Labelled { outcomes_of: &outcomes_of, verdicts: &verdicts, human: &human };
            if let Some(calibration) = calibrate(before, &labelled, &specs, dir.as_deref())? {
                calibrations.push(calibration);
            }
        }
    }
    Ok(JudgeAgreement { agreements, calibrations })
}

/// The judges' outcomes, what they said per item, and the human labels.
struct Labelled<'a> {
    outcomes_of: &'a BTreeMap<String, Vec<String>>,
    verdicts: &'a BTreeMap<String, BTreeMap<String, JudgedItem>>,
    human: &'a [HumanLabel],
}

/// Thresholds for one agreement row, its agreement after relabelling by them, and the spec
/// copy; None when the labels do not fall on both sides of any cut.
fn calibrate(
    before: &Agreement,
    labelled: &Labelled,
    specs: &BTreeMap<String, JudgeSpec>,
    dir: Option<&Path>,
) -> Result<Option<Calibration>, CalibrationError> {
    let outcomes = &labelled.outcomes_of[&before.judge];
    // Pairs of (human outcome, expected score) for this row.
    let mut pairs = Vec::new();
    for label in labelled.human.iter().filter(|l| l.judge == before.judge) {
        let judged = labelled.verdicts.get(&label.id).and_then(|v| v.get(&label.judge));
        let Some(score) = judged.and_then(|j| j.score) else { continue };
        if let Some(h) = outcomes.iter().position(|o| o.eq_ignore_ascii_case(&label.label)) {
            pairs.push((h, score));
        }
    }
    let Some(cuts) = fit_thresholds(&pairs, outcomes.len()) else { return Ok(None) };
    let mut relabelled = labelled.verdicts.clone();
    for items in relabelled.values_mut() {
        if let Some(j) = items.get_mut(&before.judge) {
            if let Some(score) = j.score {
                j.label = Some(outcomes[band(score, &cuts)].clone());
            }
        }
    }
    let after = compare_with_labels(labelled.outcomes_of, &relabelled, labelled.human)
        .map_err(CalibrationError::Labelled)?
        .into_iter()
        .find(|a| a.judge == before.judge);
    // A pass / fail row (`judge@base`) calibrates the judge it names.
    let judge_name = before.judge.split('@').next().unwrap_or(&before.judge);
    let written = match (specs.get(judge_name), dir) {
        (Some(spec), Some(dir)) if spec.outcomes.len() == outcomes.len() && spec.mode != JudgeMode::Claims => {
            Some(write_calibrated_copy(spec, dir, &cuts, pairs.len())?.display().to_string())
        }
        _ => None,
    };
    Ok(Some(Calibration { judge: before.judge.clone(), labels: pairs.len(), thresholds: cuts, before: before.clone(), after, written }))
}

/// Rows `<judge>@<base>` for every judge of the runs that has a score but no labels of its own:
/// pass / fail against the pass / fail of `base`'s human labels (its label by its 0.5 score
/// cut, or its calibrated band, when it has no two-outcome label of its own).
fn add_pass_fail_rows(
    base: &str,
    specs: &BTreeMap<String, JudgeSpec>,
    outcomes_of: &mut BTreeMap<String, Vec<String>>,
    verdicts: &mut BTreeMap<String, BTreeMap<String, JudgedItem>>,
    human: &mut Vec<HumanLabel>,
) -> Result<(), CalibrationError> {
    let base_spec = specs.get(base).ok_or_else(|| CalibrationError::UnknownBase(base.to_string()))?;
    let labelled: BTreeSet<String> = human.iter().map(|l| l.judge.clone()).collect();
    let judged: BTreeSet<String> = verdicts.values().flat_map(|v| v.keys().cloned()).collect();
    let pass_fail = vec!["No".to_string(), "Yes".to_string()];
    let mut added = Vec::new();
    // A judge without a pass outcome (abstention: "did it decline?") says nothing about whether
    // the answer is right, so the labels' pass / fail is no yardstick for it. Sub-scores
    // (`supported.precision`) have no spec of their own and are read by their score.
    let judges_quality = |judge: &str| specs.get(judge).is_none_or(|spec| spec.pass.is_some());
    for judge in judged.iter().filter(|j| !labelled.contains(*j) && j.as_str() != base && judges_quality(j)) {
        let key = format!("{judge}@{base}");
        outcomes_of.insert(key.clone(), pass_fail.clone());
        for items in verdicts.values_mut() {
            let Some(j) = items.get(judge).cloned() else { continue };
            let label = j.score.map(|s| if s >= 0.5 { "Yes" } else { "No" }.to_string());
            let label = match (&j.label, specs.get(judge.as_str())) {
                (Some(l), Some(spec)) if spec.outcomes == pass_fail => Some(l.clone()),
                _ => label,
            };
            items.insert(key.clone(), JudgedItem { label, score: j.score, words: j.words });
        }
        for label in human.iter().filter(|l| l.judge == base) {
            let passes = base_spec.passes(&label.label).unwrap_or(false);
            added.push(HumanLabel {
                id: label.id.clone(),
                judge: key.clone(),
                label: if passes { "Yes" } else { "No" }.to_string(),
                note: None,
            });
        }
    }
    human.extend(added);
    Ok(())
}

//! People's labels on a run's answers, for both faces: read, set and clear one question's
//! label (the app's labelling screen, `assay labels set`), and move them in and out as the
//! JSONL that `assay agree --labels` reads (`assay labels export|import`, the app's buttons).
//!
//! A label says whether the answer is correct, which is the question the built-in `correct`
//! judge asks; so the exchange format writes a correct answer as `{"judge": "correct",
//! "label": "Yes"}` and a wrong one as `"No"`, and `assay agree RUN` compares every other
//! judge of the run with them as pass / fail (as `--labels-as correct` does with a file).
//! Skipped answers are kept in the store but have no line in that format: an exported file
//! holds the decisions only.

use crate::judge::agreement::HumanLabel;
use crate::judge::spec::{default_judges_dir, load_all, JudgeSpec, SpecError};
use crate::record::{now_rfc3339, AnswerLabel, LabelRecord};
use crate::store::{Store, StoreError};
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// The judge whose Yes / No the stored labels stand for in the exchange format and in
/// agreement: "is the answer consistent with the reference and does it hold its key facts?".
pub const LABELS_JUDGE: &str = "correct";

/// Longest note kept with a label, in characters: a note is a reminder, not a document.
pub const MAX_NOTE_CHARS: usize = 2000;

#[derive(Debug, thiserror::Error)]
pub enum LabelError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error("run {run} has no question {question:?} with an answer to label (see `assay show {run}`)")]
    UnknownQuestion { run: String, question: String },
    #[error("note of {question}: {chars} characters, at most {MAX_NOTE_CHARS} are kept; shorten it")]
    NoteTooLong { question: String, chars: usize },
    #[error("{file}: {source}")]
    Io {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}:{line}: field `{field}`: {message}")]
    Line { file: PathBuf, line: usize, field: &'static str, message: String },
    #[error("{file}:{line}: not a label line: {message} (expected {{\"id\": \"q001\", \"judge\": \"correct\", \"label\": \"Yes\"}})")]
    Syntax { file: PathBuf, line: usize, message: String },
}

/// A run's labels, with the run's full id and how many answers it has to label.
#[derive(Debug, Clone, Serialize)]
pub struct RunLabels {
    pub run: String,
    /// Questions of the run with an answer (what can be labelled).
    pub answered: usize,
    pub labels: Vec<LabelRecord>,
}

/// What an import did.
#[derive(Debug, Clone, Serialize)]
pub struct LabelsImported {
    pub run: String,
    /// Labels stored (new or replacing one).
    pub stored: usize,
    /// Of those, questions that had a label before.
    pub replaced: usize,
}

/// The labels of a run (id, unique prefix or name) in the order of its questions.
pub fn run_labels(db: &Path, run: &str) -> Result<RunLabels, LabelError> {
    let store = Store::open_existing(db)?;
    let record = store.find_run(run)?;
    let answered = answered_questions(&store, &record.id)?.len();
    Ok(RunLabels { labels: store.labels(&record.id)?, run: record.id, answered })
}

/// Label one answered question of a run (replacing its label); returns what was stored.
pub fn set_label(db: &Path, run: &str, question: &str, label: AnswerLabel, note: Option<&str>) -> Result<LabelRecord, LabelError> {
    let mut store = Store::open_existing(db)?;
    let record = store.find_run(run)?;
    if !answered_questions(&store, &record.id)?.contains(question) {
        return Err(LabelError::UnknownQuestion { run: record.id, question: question.to_string() });
    }
    let note = checked_note(question, note)?;
    let stored = LabelRecord { question_id: question.to_string(), label, note, labelled_at: now_rfc3339() };
    store.set_labels(&record.id, std::slice::from_ref(&stored))?;
    Ok(stored)
}

/// Forget one question's label.
pub fn remove_label(db: &Path, run: &str, question: &str) -> Result<(), LabelError> {
    let store = Store::open_existing(db)?;
    let record = store.find_run(run)?;
    store.remove_label(&record.id, question)?;
    Ok(())
}

/// The run's correct / wrong labels as `assay agree` JSONL (one line each, skips left out).
pub fn export_labels(db: &Path, run: &str) -> Result<String, LabelError> {
    let labels = run_labels(db, run)?;
    let mut text = String::new();
    for label in &labels.labels {
        if let Some(line) = exchange_line(label) {
            // A HumanLabel of plain strings always serializes.
            text.push_str(&serde_json::to_string(&line).unwrap_or_default());
            text.push('\n');
        }
    }
    Ok(text)
}

/// Write the run's labels as `assay agree` JSONL to `file` (a temporary file renamed into
/// place, so a failed write leaves no half file); returns how many lines were written.
pub fn write_labels_file(db: &Path, run: &str, file: &Path) -> Result<usize, LabelError> {
    let text = export_labels(db, run)?;
    let io = |source| LabelError::Io { file: file.to_path_buf(), source };
    let mut staging = file.as_os_str().to_owned();
    staging.push(".partial");
    let staging = PathBuf::from(staging);
    std::fs::write(&staging, &text).map_err(io)?;
    std::fs::rename(&staging, file).map_err(|e| {
        let _ = std::fs::remove_file(&staging);
        io(e)
    })?;
    Ok(text.lines().count())
}

/// The exchange line of a stored label; None for a skip.
pub fn exchange_line(label: &LabelRecord) -> Option<HumanLabel> {
    let verdict = match label.label {
        AnswerLabel::Correct => "Yes",
        AnswerLabel::Wrong => "No",
        AnswerLabel::Skip => return None,
    };
    Some(HumanLabel { id: label.question_id.clone(), judge: LABELS_JUDGE.into(), label: verdict.into(), note: label.note.clone() })
}

/// The stored labels of a run as human labels of `LABELS_JUDGE` (what `assay agree RUN`
/// compares the judges with when no labels file is given).
pub(crate) fn stored_human_labels(store: &Store, run_id: &str) -> Result<Vec<HumanLabel>, StoreError> {
    Ok(store.labels(run_id)?.iter().filter_map(exchange_line).collect())
}

/// Read an `assay agree` labels file into the run's labels: every line is checked (its judge
/// must have a pass outcome, its label must be one of the judge's outcomes, its id a question
/// the run answered, and lines about one question must agree) before anything is stored, and
/// then all are stored in one transaction. A line's label passes or not by its judge's pass
/// outcome: `correctness` "Good" is correct, "Poor" wrong.
pub fn import_labels(db: &Path, run: &str, file: &Path, judges_dir: Option<&Path>) -> Result<LabelsImported, LabelError> {
    let text = std::fs::read_to_string(file).map_err(|source| LabelError::Io { file: file.to_path_buf(), source })?;
    let mut store = Store::open_existing(db)?;
    let record = store.find_run(run)?;
    let answered = answered_questions(&store, &record.id)?;
    let dir = judges_dir.map(Path::to_path_buf).or_else(default_judges_dir);
    let specs = load_all(dir.as_deref())?;
    let now = now_rfc3339();
    // Question id -> (line it was first set on, label).
    let mut decided: BTreeMap<String, (usize, LabelRecord)> = BTreeMap::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let bad = |field, message: String| LabelError::Line { file: file.to_path_buf(), line: number, field, message };
        let human: HumanLabel = serde_json::from_str(line)
            .map_err(|e| LabelError::Syntax { file: file.to_path_buf(), line: number, message: e.to_string() })?;
        let passes = label_passes(&specs, &human).map_err(|(field, message)| bad(field, message))?;
        if !answered.contains(&human.id) {
            return Err(bad("id", format!("run {} has no answered question {:?}", record.id, human.id)));
        }
        let note = checked_note(&human.id, human.note.as_deref()).map_err(|e| bad("note", e.to_string()))?;
        let label = if passes { AnswerLabel::Correct } else { AnswerLabel::Wrong };
        match decided.get(&human.id) {
            Some((first, earlier)) if earlier.label != label => {
                return Err(bad(
                    "label",
                    format!("{} is {} here but {} on line {first}; keep one", human.id, label.as_str(), earlier.label.as_str()),
                ))
            }
            Some(_) => {}
            None => {
                let stored = LabelRecord { question_id: human.id.clone(), label, note, labelled_at: now.clone() };
                decided.insert(human.id, (number, stored));
            }
        }
    }
    let before: HashSet<String> = store.labels(&record.id)?.into_iter().map(|l| l.question_id).collect();
    let labels: Vec<LabelRecord> = decided.into_values().map(|(_, l)| l).collect();
    let replaced = labels.iter().filter(|l| before.contains(&l.question_id)).count();
    store.set_labels(&record.id, &labels)?;
    Ok(LabelsImported { run: record.id, stored: labels.len(), replaced })
}

/// Whether a line's label is a pass of its judge; the error names the field at fault.
fn label_passes(specs: &BTreeMap<String, JudgeSpec>, human: &HumanLabel) -> Result<bool, (&'static str, String)> {
    let spec = specs.get(&human.judge).ok_or_else(|| {
        ("judge", format!("no judge named {:?} (known: {})", human.judge, specs.keys().cloned().collect::<Vec<_>>().join(", ")))
    })?;
    let outcome = spec
        .outcomes
        .iter()
        .find(|o| o.eq_ignore_ascii_case(&human.label))
        .ok_or_else(|| ("label", format!("{:?} is not an outcome of judge {} ({})", human.label, spec.name, spec.outcomes.join(", "))))?;
    spec.passes(outcome).ok_or_else(|| {
        ("judge", format!("judge {} has no pass outcome, so its labels do not say correct or wrong; use {LABELS_JUDGE} (Yes / No)", spec.name))
    })
}

fn checked_note(question: &str, note: Option<&str>) -> Result<Option<String>, LabelError> {
    let Some(note) = note.map(str::trim).filter(|n| !n.is_empty()) else { return Ok(None) };
    let chars = note.chars().count();
    if chars > MAX_NOTE_CHARS {
        return Err(LabelError::NoteTooLong { question: question.to_string(), chars });
    }
    Ok(Some(note.to_string()))
}

/// The questions of a run that have an answer (an item the target failed has nothing to label).
fn answered_questions(store: &Store, run_id: &str) -> Result<HashSet<String>, StoreError> {
    store.done_question_ids(run_id)
}

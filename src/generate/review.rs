//! The review step: generated pairs wait in `questions.generated.jsonl` until a person accepts
//! (possibly after editing), or rejects each one. Accepted pairs join the dataset's questions
//! file; rejected ones are dropped; the rest stay pending.
//!
//! Both files are rewritten whole through a temporary file and a rename, so a crash leaves
//! either the old or the new version of each. Should it strike between the two renames, an
//! accepted pair is in both files; the next review sees its id already in the dataset and
//! drops it from the pending file instead of adding it twice.

use super::GenerateError;
use crate::dataset::{jsonl_lines, load_dataset, parse_question_line, Dataset, Question};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where generated pairs wait for review, in the dataset folder.
pub const GENERATED_FILE: &str = "questions.generated.jsonl";
/// The tag every generated pair carries (kept after review, for provenance).
pub const GENERATED_TAG: &str = "generated";
/// Added to a generated pair when a person accepts it.
pub const REVIEWED_TAG: &str = "reviewed";

/// What a reviewer decided about one pending pair.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum ReviewDecision {
    /// Add the pair to the dataset as given (the reviewer may have edited its text; the id
    /// must stay the pending pair's id).
    Accept { question: Question },
    Reject { id: String },
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ReviewOutcome {
    pub accepted: usize,
    pub rejected: usize,
    /// Pairs still waiting for a decision.
    pub pending: usize,
}

pub fn generated_path(dataset_root: &Path) -> PathBuf {
    dataset_root.join(GENERATED_FILE)
}

/// The pending pairs of `dataset`, validated like its questions file (file, line, field on
/// error). None pending when the file does not exist.
pub fn pending_pairs(dataset: &Dataset) -> Result<Vec<Question>, GenerateError> {
    let path = generated_path(&dataset.root);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(GenerateError::Io { path, source: e }),
    };
    let doc_ids: BTreeSet<String> = dataset.documents.iter().map(|d| d.id.clone()).collect();
    let mut seen = BTreeSet::new();
    let mut pairs = Vec::new();
    for line in jsonl_lines(&path, &bytes) {
        let (number, text) = line?;
        let question = parse_question_line(&path, number, text, &doc_ids)?;
        if !seen.insert(question.id.clone()) {
            return Err(GenerateError::Invalid(format!(
                "{}:{number}: field `id`: duplicate id {:?}",
                path.display(),
                question.id
            )));
        }
        pairs.push(question);
    }
    Ok(pairs)
}

/// Apply `decisions` to the dataset at `dataset_root`. Every decision is checked before
/// either file is touched: an unknown id, an edited id, an empty question or answer, or a
/// pair whose id the dataset already uses differently is an error and changes nothing.
pub fn apply_review(dataset_root: &Path, decisions: &[ReviewDecision]) -> Result<ReviewOutcome, GenerateError> {
    let dataset = load_dataset(dataset_root)?;
    let pending = pending_pairs(&dataset)?;
    let pending_ids: BTreeSet<&str> = pending.iter().map(|q| q.id.as_str()).collect();
    let mut decided = BTreeSet::new();
    let mut accepted: Vec<Question> = Vec::new();
    for decision in decisions {
        let id = match decision {
            ReviewDecision::Accept { question } => question.id.as_str(),
            ReviewDecision::Reject { id } => id.as_str(),
        };
        if !pending_ids.contains(id) {
            return Err(GenerateError::Invalid(format!("{GENERATED_FILE}: no pending pair with id {id:?}")));
        }
        if !decided.insert(id.to_string()) {
            return Err(GenerateError::Invalid(format!("two decisions for pair {id:?}")));
        }
        if let ReviewDecision::Accept { question } = decision {
            accepted.push(checked_for_dataset(question.clone(), &dataset)?);
        }
    }

    let questions_path = dataset.root.join(&dataset.manifest.questions);
    // Pairs already in the dataset (an earlier review that was cut off) leave the pending file.
    let in_dataset: BTreeSet<&str> = dataset.questions.iter().map(|q| q.id.as_str()).collect();
    let new_lines: Vec<&Question> = accepted.iter().filter(|q| !in_dataset.contains(q.id.as_str())).collect();
    let still_pending: Vec<&Question> = pending
        .iter()
        .filter(|q| !decided.contains(&q.id) && !in_dataset.contains(q.id.as_str()))
        .collect();

    if !new_lines.is_empty() {
        let mut text = std::fs::read_to_string(&questions_path)
            .map_err(|e| GenerateError::Io { path: questions_path.clone(), source: e })?;
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        for q in &new_lines {
            text.push_str(&question_line(q)?);
            text.push('\n');
        }
        write_atomically(&questions_path, text.as_bytes())?;
    }
    let mut text = String::new();
    for q in &still_pending {
        text.push_str(&question_line(q)?);
        text.push('\n');
    }
    write_atomically(&generated_path(&dataset.root), text.as_bytes())?;
    Ok(ReviewOutcome {
        accepted: accepted.len(),
        rejected: decisions.len() - accepted.len(),
        pending: still_pending.len(),
    })
}

/// An accepted pair as it will stand in the dataset: text trimmed, non-empty, its document
/// known, tagged as reviewed; refused if its id is taken by a different question.
fn checked_for_dataset(mut question: Question, dataset: &Dataset) -> Result<Question, GenerateError> {
    let invalid = |field: &str, what: &str| {
        GenerateError::Invalid(format!("pair {:?}: field `{field}`: {what}", question.id))
    };
    question.question = question.question.trim().to_string();
    if question.question.is_empty() {
        return Err(invalid("question", "empty"));
    }
    let answer = question.answer.as_deref().map(str::trim).unwrap_or_default();
    if answer.is_empty() && !question.refuse {
        return Err(invalid("answer", "empty"));
    }
    question.answer = (!answer.is_empty()).then(|| answer.to_string());
    if let Some(doc) = &question.doc {
        if !dataset.documents.iter().any(|d| &d.id == doc) {
            return Err(invalid("doc", &format!("no document {doc:?} in the corpus")));
        }
    }
    if let Some(existing) = dataset.question(&question.id) {
        if existing.question != question.question {
            return Err(invalid("id", "already used by another question of the dataset"));
        }
    }
    if !question.tags.iter().any(|t| t == REVIEWED_TAG) {
        question.tags.push(REVIEWED_TAG.to_string());
    }
    // The line as it will be written must pass the very check the dataset loader makes
    // (line length, id alphabet, tags, fields): an edit can never leave a dataset that no
    // longer loads.
    let questions_path = dataset.root.join(&dataset.manifest.questions);
    let line = question_line(&question)?;
    let doc_ids: BTreeSet<String> = dataset.documents.iter().map(|d| d.id.clone()).collect();
    for checked in jsonl_lines(&questions_path, line.as_bytes()) {
        let (number, text) = checked.map_err(|e| invalid("question", &e.to_string()))?;
        parse_question_line(&questions_path, number, text, &doc_ids).map_err(|e| invalid("question", &e.to_string()))?;
    }
    Ok(question)
}

pub(crate) fn question_line(question: &Question) -> Result<String, GenerateError> {
    serde_json::to_string(question).map_err(|e| GenerateError::Invalid(format!("pair {:?}: {e}", question.id)))
}

/// Write `bytes` to `path` through a temporary file in the same folder and a rename.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), GenerateError> {
    let io = |e: std::io::Error| GenerateError::Io { path: path.to_path_buf(), source: e };
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    file.write_all(bytes).map_err(io)?;
    file.as_file().sync_all().map_err(io)?;
    file.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

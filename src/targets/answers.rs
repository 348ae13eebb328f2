//! The `answers` target: replays a JSONL file of answers another system produced.
//!
//! The whole file is read and checked against the dataset before a run starts: a malformed
//! line, a duplicate id or an id the dataset does not have is an error naming file, line and
//! field. A question with no line in the file is recorded as unscored (the target errors).

use super::{Answer, Target, TargetError};
use crate::dataset::{citation_doc, jsonl_lines, Dataset, DatasetError, Question};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One line of an answers file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReplayedAnswer {
    pub id: String,
    pub answer: String,
    #[serde(default)]
    pub citations: Vec<String>,
}

/// Read an answers file and check every line against `dataset`.
pub fn load_answers_file(
    path: &Path,
    dataset: &Dataset,
) -> Result<HashMap<String, ReplayedAnswer>, DatasetError> {
    let bytes = crate::dataset::read_jsonl_file(path)?;
    let doc_ids: std::collections::BTreeSet<&str> =
        dataset.documents.iter().map(|d| d.id.as_str()).collect();
    let mut answers = HashMap::new();
    let mut first_line_of: HashMap<String, usize> = HashMap::new();
    for entry in jsonl_lines(path, &bytes) {
        let (line, text) = entry?;
        let field_error = |field: &str, message: String| DatasetError::Field {
            path: path.to_path_buf(),
            line,
            field: field.to_string(),
            message,
        };
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| DatasetError::Json {
                path: path.to_path_buf(),
                line,
                message: e.to_string(),
            })?;
        let object = value.as_object().ok_or_else(|| DatasetError::Json {
            path: path.to_path_buf(),
            line,
            message: "expected a JSON object".into(),
        })?;
        for (field, ok) in [
            ("id", object.get("id").map(|v| v.is_string())),
            ("answer", object.get("answer").map(|v| v.is_string())),
        ] {
            match ok {
                None => return Err(field_error(field, "missing (required)".into())),
                Some(false) => return Err(field_error(field, "expected a string".into())),
                Some(true) => {}
            }
        }
        let replayed: ReplayedAnswer = serde_json::from_value(value.clone())
            .map_err(|e| field_error(unknown_field_name(&e.to_string()), e.to_string()))?;
        if dataset.question(&replayed.id).is_none() {
            return Err(field_error(
                "id",
                format!(
                    "{:?} is not a question of dataset {:?}",
                    replayed.id, dataset.manifest.name
                ),
            ));
        }
        for citation in &replayed.citations {
            if !doc_ids.contains(citation_doc(citation)) {
                return Err(field_error(
                    "citations",
                    format!("unknown document in citation {citation:?}"),
                ));
            }
        }
        if let Some(first) = first_line_of.insert(replayed.id.clone(), line) {
            return Err(DatasetError::DuplicateId {
                path: path.to_path_buf(),
                line,
                id: replayed.id,
                first_line: first,
            });
        }
        answers.insert(replayed.id.clone(), replayed);
    }
    Ok(answers)
}

/// serde names the offending field in its message ("unknown field `x`", "invalid type … `citations`");
/// fall back to the citations field, the only other typed one.
fn unknown_field_name(message: &str) -> &str {
    message
        .split('`')
        .nth(1)
        .filter(|_| message.starts_with("unknown field"))
        .unwrap_or("citations")
}

/// Replays answers loaded by `load_answers_file`.
pub struct AnswersFileTarget {
    file: PathBuf,
    answers: HashMap<String, ReplayedAnswer>,
}

impl AnswersFileTarget {
    pub fn new(file: PathBuf, answers: HashMap<String, ReplayedAnswer>) -> Self {
        AnswersFileTarget { file, answers }
    }
}

impl Target for AnswersFileTarget {
    fn describe(&self) -> String {
        let name = self
            .file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        format!("answers:{name}")
    }

    fn answer(&mut self, question: &Question) -> Result<Answer, TargetError> {
        let replayed = self
            .answers
            .get(&question.id)
            .ok_or_else(|| TargetError::MissingAnswer {
                id: question.id.clone(),
                source_name: self.file.display().to_string(),
            })?;
        Ok(Answer {
            text: replayed.answer.clone(),
            citations: replayed.citations.clone(),
            ..Answer::default()
        })
    }
}

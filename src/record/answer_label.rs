//! A person's label on one answer of a run: correct, wrong, or skipped (looked at and left
//! undecided), with an optional note. What the app's labelling screen writes and `assay agree`
//! reads when no labels file is given.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerLabel {
    Correct,
    Wrong,
    /// Seen but not judged (unclear reference, both readings defensible): counted, never
    /// compared with a judge.
    Skip,
}

impl AnswerLabel {
    pub fn as_str(self) -> &'static str {
        match self {
            AnswerLabel::Correct => "correct",
            AnswerLabel::Wrong => "wrong",
            AnswerLabel::Skip => "skip",
        }
    }

    /// The label a word names (`correct`, `wrong`, `skip`, any case); None for anything else.
    pub fn parse(text: &str) -> Option<AnswerLabel> {
        match text.trim().to_ascii_lowercase().as_str() {
            "correct" => Some(AnswerLabel::Correct),
            "wrong" => Some(AnswerLabel::Wrong),
            "skip" => Some(AnswerLabel::Skip),
            _ => None,
        }
    }
}

/// The current label of one question of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelRecord {
    pub question_id: String,
    pub label: AnswerLabel,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// When it was last set (RFC 3339, UTC).
    pub labelled_at: String,
}

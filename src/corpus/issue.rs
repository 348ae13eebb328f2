//! Per-document problems met while reading a corpus: a skipped document or a warning about
//! one that was read anyway. Each names the file; none stops the other documents.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, thiserror::Error)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DocumentProblem {
    #[error("cannot read the file: {message}")]
    Io { message: String },
    #[error("the file is empty")]
    Empty,
    #[error("no extractable text")]
    NoText,
    #[error("binary data, not text (NUL byte at offset {offset})")]
    Binary { offset: u64 },
    #[error("{bytes} bytes is over the limit of {limit} bytes for one document")]
    TooLarge { bytes: u64, limit: u64 },
    #[error("invalid UTF-8 at line {line} (byte {byte}); {count} invalid sequence(s) replaced with U+FFFD")]
    InvalidUtf8 { line: u64, byte: u64, count: u64 },
    #[error("encrypted PDF that needs a password")]
    Encrypted,
    #[error("not a readable PDF: {message}")]
    PdfUnreadable { message: String },
    #[error("page {page}: text could not be extracted ({message})")]
    PdfPage { page: u32, message: String },
    #[error("unsupported file type (expected .md, .txt or .pdf)")]
    Unsupported,
}

/// A problem with one document. `skipped` documents are not in the index; the others are,
/// with the warning attached.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DocumentIssue {
    pub doc: String,
    pub path: PathBuf,
    pub skipped: bool,
    pub problem: DocumentProblem,
}

impl std::fmt::Display for DocumentIssue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.skipped { "skipped" } else { "warning" };
        write!(f, "{}: {what}: {}", self.path.display(), self.problem)
    }
}

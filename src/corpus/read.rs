//! Reading documents from disk: one file into a `Document`, or a whole corpus listing into
//! documents plus the issues met on the way.

use super::markdown::markdown_sections;
use super::pdf::layout::pdf_sections;
use super::pdf::pages::pdf_pages;
use super::text::{decode_text, paragraph_blocks};
use super::{Document, DocumentIssue, DocumentKind, DocumentProblem, Section};
use crate::dataset::CorpusFile;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct ReadLimits {
    /// Larger files are skipped, so a stray dump cannot fill memory or the index. 128 MiB, not
    /// less: an annual report with photographs runs to tens of MB, mostly JPEG that is never
    /// decoded (its text is what is read, and the decoded-stream budget bounds the rest).
    pub max_document_bytes: u64,
}

impl Default for ReadLimits {
    fn default() -> Self {
        Self { max_document_bytes: 128 * 1024 * 1024 }
    }
}

/// A corpus, read: the documents that have text, and every problem met, by document.
#[derive(Debug, Clone, Default)]
pub struct CorpusRead {
    pub documents: Vec<Document>,
    pub issues: Vec<DocumentIssue>,
}

impl CorpusRead {
    pub fn skipped(&self) -> impl Iterator<Item = &DocumentIssue> {
        self.issues.iter().filter(|i| i.skipped)
    }
}

/// Read one document. `Ok` carries the document and its warnings; `Err` means it is skipped.
pub fn read_document(
    id: &str,
    path: &Path,
    limits: ReadLimits,
) -> Result<(Document, Vec<DocumentProblem>), DocumentProblem> {
    let kind = path
        .extension()
        .and_then(|e| e.to_str())
        .and_then(DocumentKind::from_extension)
        .ok_or(DocumentProblem::Unsupported)?;
    let io = |e: std::io::Error| DocumentProblem::Io { message: e.to_string() };
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(DocumentProblem::Io { message: "not a regular file".into() });
    }
    if meta.len() > limits.max_document_bytes {
        return Err(DocumentProblem::TooLarge { bytes: meta.len(), limit: limits.max_document_bytes });
    }
    let bytes = std::fs::read(path).map_err(io)?;
    if bytes.is_empty() {
        return Err(DocumentProblem::Empty);
    }
    let mut warnings = Vec::new();
    let mut pages = None;
    let sections = match kind {
        DocumentKind::Markdown | DocumentKind::Text => {
            let (text, warning) = decode_text(&bytes)?;
            warnings.extend(warning);
            if kind == DocumentKind::Markdown {
                markdown_sections(&text)
            } else {
                vec![Section { heading: None, blocks: paragraph_blocks(&text, None) }]
            }
        }
        DocumentKind::Pdf => {
            let pdf = pdf_pages(&bytes)?;
            warnings.extend(pdf.warnings);
            pages = Some(pdf.pages.len() as u32);
            pdf_sections(&pdf.pages)
        }
    };
    let document = Document { id: id.to_string(), path: path.to_path_buf(), kind, pages, sections };
    if document.word_count() == 0 {
        return Err(DocumentProblem::NoText);
    }
    Ok((document, warnings))
}

/// Read every listed document; a document that fails is recorded and skipped.
pub fn read_corpus(files: &[CorpusFile], limits: ReadLimits) -> CorpusRead {
    // Without a flag nothing can stop it.
    read_corpus_cancellable(files, limits, None).unwrap_or_default()
}

/// `read_corpus`, stopping between documents once `cancel` is raised (a run cancelled while
/// it builds its index: a long PDF takes seconds, a corpus minutes). Stopped, it says how many
/// documents it had read.
pub fn read_corpus_cancellable(
    files: &[CorpusFile],
    limits: ReadLimits,
    cancel: Option<&AtomicBool>,
) -> Result<CorpusRead, ReadCancelled> {
    let mut read = CorpusRead::default();
    for (done, file) in files.iter().enumerate() {
        if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(ReadCancelled { done, total: files.len() });
        }
        let issue = |skipped, problem| DocumentIssue {
            doc: file.id.clone(),
            path: file.path.clone(),
            skipped,
            problem,
        };
        match read_document(&file.id, &file.path, limits) {
            Ok((document, warnings)) => {
                read.issues.extend(warnings.into_iter().map(|w| issue(false, w)));
                read.documents.push(document);
            }
            Err(problem) => read.issues.push(issue(true, problem)),
        }
    }
    Ok(read)
}

/// A corpus read stopped by its cancel flag after `done` of `total` documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("cancelled while reading the corpus ({done} of {total} documents read)")]
pub struct ReadCancelled {
    pub done: usize,
    pub total: usize,
}

//! Corpus: reads a dataset's manuals (.md, .txt, .pdf) into documents and splits them into
//! chunks with stable ids `doc#n`.
//!
//! Reading keeps what retrieval and citations need (headings, page numbers) and drops what
//! only hurts them (Markdown markup, PDF running headers, footers and page numbers). A document
//! that cannot be read is reported by name with the reason and skipped; the others go on.

mod chunk;
mod issue;
mod markdown;
mod pdf;
mod read;
mod sentence;
mod text;

pub use chunk::{chunk_document, ChunkSettings};
pub use issue::{DocumentIssue, DocumentProblem};
pub use read::{read_corpus, read_corpus_cancellable, read_document, CorpusRead, ReadCancelled, ReadLimits};
pub use sentence::split_sentences;

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The file kinds the corpus reads, by extension.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum DocumentKind {
    Markdown,
    Text,
    Pdf,
}

impl DocumentKind {
    pub fn from_extension(ext: &str) -> Option<Self> {
        match ext.to_ascii_lowercase().as_str() {
            "md" | "markdown" => Some(Self::Markdown),
            "txt" => Some(Self::Text),
            "pdf" => Some(Self::Pdf),
            _ => None,
        }
    }
}

/// A paragraph, list item, table row or code block: text that chunking never splits across
/// a line. `page` is the (1-based) PDF page the block starts on.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Block {
    pub text: String,
    pub page: Option<u32>,
}

/// The blocks under one heading. `heading` is the path of headings above the text, outermost
/// first, joined with " > " (e.g. `Ridgeline Stove > Lighting the stove > Cold weather`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Section {
    pub heading: Option<String>,
    pub blocks: Vec<Block>,
}

/// One manual, read: id is the file stem.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Document {
    pub id: String,
    pub path: PathBuf,
    pub kind: DocumentKind,
    /// Page count for PDFs.
    pub pages: Option<u32>,
    pub sections: Vec<Section>,
}

impl Document {
    pub fn word_count(&self) -> usize {
        self.sections
            .iter()
            .flat_map(|s| &s.blocks)
            .map(|b| b.text.split_whitespace().count())
            .sum()
    }
}

/// A retrievable piece of a document. `id` is `doc#n`, n counting from 0 in document order,
/// the same for the same document bytes and chunk settings.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Chunk {
    pub id: String,
    pub doc: String,
    pub text: String,
    pub heading: Option<String>,
    pub page: Option<u32>,
}

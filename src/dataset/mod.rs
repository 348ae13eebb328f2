//! Datasets: a folder with `dataset.toml`, a corpus of manuals and `questions.jsonl`.
//!
//! Loading validates the whole dataset before anything else sees it: every error names the
//! file, the line and the field. Importers turn other formats (eShopSupport JSON, CSV) into
//! this one. The fingerprint ties a run to the exact questions and corpus it was scored on.

mod catalog;
mod error;
mod import;
mod load;

pub use catalog::{known_datasets, KnownDataset};
pub use error::DatasetError;
pub use import::{import_csv, import_eshop, CsvColumns, ImportSummary};
pub use load::{
    citation_doc, jsonl_lines, read_jsonl_file, list_corpus, load_dataset, parse_question_line, CORPUS_EXTENSIONS,
};

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// `dataset.toml`: the dataset's name and where its parts live, relative to its folder.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DatasetManifest {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default = "default_corpus")]
    pub corpus: String,
    #[serde(default = "default_questions")]
    pub questions: String,
    /// `[chunking]`: how the manuals are cut for retrieval; unset fields keep the defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunking: Option<ChunkingManifest>,
    /// The rag target's prompt template for this dataset (a file inside it), used when a run
    /// names none: the built-in prompt knows nothing of the documents' domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
}

/// `[chunking]` in dataset.toml. Bounds are checked when the dataset loads.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(deny_unknown_fields)]
pub struct ChunkingManifest {
    /// Most words in a chunk.
    pub size_words: Option<usize>,
    /// Words of the previous chunk's last sentences repeated at the start of the next.
    pub overlap_words: Option<usize>,
}

/// Chunk sizes a dataset may ask for: below, a chunk is a phrase; above, five chunks overflow
/// a small model's context.
pub const CHUNK_WORDS_RANGE: std::ops::RangeInclusive<usize> = 20..=1000;

fn default_corpus() -> String {
    "corpus".into()
}
fn default_questions() -> String {
    "questions.jsonl".into()
}

/// One line of `questions.jsonl`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Question {
    pub id: String,
    pub question: String,
    /// The reference answer; absent only when `refuse` is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// Scopes retrieval to one document (like a product id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    /// The golden passage, verbatim from its document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// Expected document ids (`doc`) or chunk ids (`doc#n`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub citations: Vec<String>,
    /// True when the right behaviour is to decline (not in the manuals).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refuse: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

/// A document of the corpus, known by its id (the file stem) before it is read.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CorpusFile {
    pub id: String,
    pub path: PathBuf,
}

/// A loaded, validated dataset.
#[derive(Debug, Clone)]
pub struct Dataset {
    pub root: PathBuf,
    pub manifest: DatasetManifest,
    pub questions: Vec<Question>,
    pub documents: Vec<CorpusFile>,
    /// The dataset's own rag prompt template (`prompt` in dataset.toml), checked to exist.
    pub prompt: Option<PathBuf>,
    /// sha256 over the manifest, the questions file and every corpus file (hex).
    pub fingerprint: String,
}

impl Dataset {
    pub fn question(&self, id: &str) -> Option<&Question> {
        self.questions.iter().find(|q| q.id == id)
    }

    pub fn corpus_dir(&self) -> PathBuf {
        self.root.join(&self.manifest.corpus)
    }
}

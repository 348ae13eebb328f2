//! Importers from other dataset formats into Assay's folder format.
//!
//! Each importer builds every question in memory and validates it exactly as `load_dataset`
//! would; only then is the output folder written (into a temporary sibling, renamed at the end),
//! so a bad input leaves nothing behind.

use super::load::{list_corpus, parse_question_line};
use super::{DatasetError, DatasetManifest, Question};
use serde::Deserialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What an import wrote.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ImportSummary {
    pub output: PathBuf,
    pub questions: usize,
    pub documents: usize,
}

/// One entry of eShopSupport's `evalquestions.json`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct EshopQuestion {
    question_id: i64,
    product_id: i64,
    question: String,
    answer: String,
}

/// Import eShopSupport's `evalquestions.json` (a JSON array of QuestionId, ProductId, Question,
/// Answer). A product's manual is the corpus document named `<ProductId>` or `product-<ProductId>`.
pub fn import_eshop(
    file: &Path,
    corpus: &Path,
    output: &Path,
) -> Result<ImportSummary, DatasetError> {
    let bytes = std::fs::read(file).map_err(|e| DatasetError::io(file, e))?;
    let text = std::str::from_utf8(&bytes).map_err(|_| DatasetError::NotUtf8 {
        path: file.to_path_buf(),
        line: line_of_first_invalid_utf8(&bytes),
    })?;
    let values: Vec<serde_json::Value> =
        serde_json::from_str(text).map_err(|e| DatasetError::Json {
            path: file.to_path_buf(),
            line: e.line(),
            message: format!("{e}; expected a JSON array of questions"),
        })?;
    let documents = list_corpus(corpus)?;
    let doc_ids: BTreeSet<String> = documents.iter().map(|d| d.id.clone()).collect();

    let mut questions = Vec::with_capacity(values.len());
    for (index, value) in values.into_iter().enumerate() {
        let entry: EshopQuestion =
            serde_json::from_value(value).map_err(|e| DatasetError::Import {
                path: file.to_path_buf(),
                message: format!("entry {}: {e}", index + 1),
            })?;
        let doc = [
            entry.product_id.to_string(),
            format!("product-{}", entry.product_id),
        ]
        .into_iter()
        .find(|id| doc_ids.contains(id))
        .ok_or_else(|| DatasetError::Import {
            path: file.to_path_buf(),
            message: format!(
                "entry {} (QuestionId {}): field `ProductId`: no manual named {} or product-{} in {}",
                index + 1,
                entry.question_id,
                entry.product_id,
                entry.product_id,
                corpus.display()
            ),
        })?;
        questions.push(Question {
            id: format!("q{}", entry.question_id),
            question: entry.question,
            answer: Some(entry.answer),
            citations: vec![doc.clone()],
            doc: Some(doc),
            context: None,
            refuse: false,
            tags: vec!["eshop".into()],
        });
    }
    write_dataset(file, corpus, output, questions, &doc_ids)
}

/// Column names of a CSV import. Defaults match FinQABench-style files.
#[derive(Debug, Clone)]
pub struct CsvColumns {
    pub question: String,
    pub answer: String,
    pub context: String,
    /// Optional id column; without it ids are `q0001`, `q0002`, … in row order.
    pub id: Option<String>,
    /// Optional column naming the document a question is about.
    pub doc: Option<String>,
}

impl Default for CsvColumns {
    fn default() -> Self {
        CsvColumns {
            question: "Question".into(),
            answer: "Golden Response".into(),
            context: "Golden Context".into(),
            id: None,
            doc: None,
        }
    }
}

/// Import a CSV with question, answer and golden-context columns.
pub fn import_csv(
    file: &Path,
    corpus: &Path,
    output: &Path,
    columns: &CsvColumns,
) -> Result<ImportSummary, DatasetError> {
    let bytes = std::fs::read(file).map_err(|e| DatasetError::io(file, e))?;
    if std::str::from_utf8(&bytes).is_err() {
        return Err(DatasetError::NotUtf8 {
            path: file.to_path_buf(),
            line: line_of_first_invalid_utf8(&bytes),
        });
    }
    let documents = list_corpus(corpus)?;
    let doc_ids: BTreeSet<String> = documents.iter().map(|d| d.id.clone()).collect();

    let mut reader = csv::ReaderBuilder::new()
        .flexible(false)
        .from_reader(bytes.as_slice());
    let headers = reader
        .headers()
        .map_err(|e| csv_error(file, &e))?
        .clone();
    let column = |name: &str| -> Result<usize, DatasetError> {
        headers
            .iter()
            .position(|h| h.trim() == name)
            .ok_or_else(|| DatasetError::Field {
                path: file.to_path_buf(),
                line: 1,
                field: name.to_string(),
                message: format!(
                    "no such column; the header has: {}",
                    headers.iter().collect::<Vec<_>>().join(", ")
                ),
            })
    };
    let question_col = column(&columns.question)?;
    let answer_col = column(&columns.answer)?;
    let context_col = column(&columns.context)?;
    let id_col = columns.id.as_deref().map(column).transpose()?;
    let doc_col = columns.doc.as_deref().map(column).transpose()?;

    let mut questions = Vec::new();
    for (index, record) in reader.records().enumerate() {
        let record = record.map_err(|e| csv_error(file, &e))?;
        let line = record
            .position()
            .map(|p| p.line() as usize)
            .unwrap_or(index + 2);
        let cell = |col: usize| record.get(col).unwrap_or("").trim().to_string();
        let non_empty = |s: String| if s.is_empty() { None } else { Some(s) };
        let id = match id_col {
            Some(col) => cell(col),
            None => format!("q{:04}", index + 1),
        };
        let doc = doc_col.map(cell).and_then(non_empty);
        let question = Question {
            id,
            question: cell(question_col),
            answer: non_empty(cell(answer_col)),
            citations: doc.iter().cloned().collect(),
            doc,
            context: non_empty(cell(context_col)),
            refuse: false,
            tags: vec!["csv".into()],
        };
        // Validate through the same line parser the loader uses, so errors read the same.
        let json = serde_json::to_string(&question).map_err(|e| DatasetError::Import {
            path: file.to_path_buf(),
            message: e.to_string(),
        })?;
        questions.push(parse_question_line(file, line, &json, &doc_ids)?);
    }
    write_dataset(file, corpus, output, questions, &doc_ids)
}

fn csv_error(file: &Path, e: &csv::Error) -> DatasetError {
    let line = e.position().map(|p| p.line() as usize).unwrap_or(0);
    DatasetError::Json {
        path: file.to_path_buf(),
        line,
        message: format!("invalid CSV: {e}"),
    }
}

fn line_of_first_invalid_utf8(bytes: &[u8]) -> usize {
    let valid_up_to = match std::str::from_utf8(bytes) {
        Ok(_) => bytes.len(),
        Err(e) => e.valid_up_to(),
    };
    1 + bytes[..valid_up_to].iter().filter(|b| **b == b'\n').count()
}

/// Validate the questions (ids unique, fields as the loader wants) and write the dataset folder.
fn write_dataset(
    source: &Path,
    corpus: &Path,
    output: &Path,
    questions: Vec<Question>,
    doc_ids: &BTreeSet<String>,
) -> Result<ImportSummary, DatasetError> {
    if output.exists() {
        return Err(DatasetError::OutputExists {
            path: output.to_path_buf(),
        });
    }
    let mut lines = String::new();
    let mut seen = BTreeSet::new();
    for (index, question) in questions.iter().enumerate() {
        let json = serde_json::to_string(question).map_err(|e| DatasetError::Import {
            path: source.to_path_buf(),
            message: e.to_string(),
        })?;
        parse_question_line(source, index + 1, &json, doc_ids)?;
        if !seen.insert(question.id.clone()) {
            return Err(DatasetError::Import {
                path: source.to_path_buf(),
                message: format!("duplicate question id {:?}", question.id),
            });
        }
        lines.push_str(&json);
        lines.push('\n');
    }
    if questions.is_empty() {
        return Err(DatasetError::Empty {
            path: source.to_path_buf(),
        });
    }
    let name = output
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("imported")
        .to_string();
    let manifest = DatasetManifest {
        name,
        description: format!("Imported from {}", source.display()),
        corpus: "corpus".into(),
        questions: "questions.jsonl".into(),
        chunking: None,
        prompt: None,
    };
    let manifest_text = toml::to_string(&manifest).map_err(|e| DatasetError::Import {
        path: source.to_path_buf(),
        message: e.to_string(),
    })?;

    let parent = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(|e| DatasetError::io(&parent, e))?;
    // An unpredictable name, created exclusively: a predictable one could be planted as a
    // symlink to a folder elsewhere that the corpus would then be copied into.
    let prefix = format!(".{}.importing-", manifest.name);
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix);
    // The mode a plain create_dir gives (0777 less the umask), not the temporary folder's 0700.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o777));
    let staging = builder
        .tempdir_in(&parent)
        .map_err(|e| DatasetError::io(&parent, e))?
        .keep();
    let result = (|| {
        let corpus_out = staging.join("corpus");
        std::fs::create_dir_all(&corpus_out).map_err(|e| DatasetError::io(&corpus_out, e))?;
        let documents = list_corpus(corpus)?;
        for doc in &documents {
            let Some(file_name) = doc.path.file_name() else {
                continue;
            };
            let to = corpus_out.join(file_name);
            std::fs::copy(&doc.path, &to).map_err(|e| DatasetError::io(&doc.path, e))?;
        }
        let manifest_path = staging.join("dataset.toml");
        std::fs::write(&manifest_path, manifest_text)
            .map_err(|e| DatasetError::io(&manifest_path, e))?;
        let questions_path = staging.join("questions.jsonl");
        std::fs::write(&questions_path, &lines)
            .map_err(|e| DatasetError::io(&questions_path, e))?;
        std::fs::rename(&staging, output).map_err(|e| DatasetError::io(output, e))?;
        Ok(ImportSummary {
            output: output.to_path_buf(),
            questions: questions.len(),
            documents: documents.len(),
        })
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    result
}

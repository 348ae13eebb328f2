//! Loading and validating a dataset folder.
//!
//! Every check runs before a `Dataset` exists, so callers never see half-valid data. Question
//! lines are checked field by field against the expected JSON types first (serde's own messages
//! do not always say which field was wrong), then for cross-references (`doc`, `citations`).

use super::{CorpusFile, Dataset, DatasetError, DatasetManifest, Question};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::{BTreeSet, HashMap};
use std::path::{Component, Path, PathBuf};

/// File kinds the corpus stage can read.
pub const CORPUS_EXTENSIONS: &[&str] = &["md", "txt", "pdf"];

/// Load `dir/dataset.toml`, its corpus listing and its questions, and validate them all.
pub fn load_dataset(dir: &Path) -> Result<Dataset, DatasetError> {
    let manifest_path = dir.join("dataset.toml");
    if !manifest_path.is_file() {
        return Err(DatasetError::NotADataset {
            path: dir.to_path_buf(),
        });
    }
    let manifest_bytes =
        std::fs::read(&manifest_path).map_err(|e| DatasetError::io(&manifest_path, e))?;
    let manifest_text =
        std::str::from_utf8(&manifest_bytes).map_err(|e| DatasetError::NotUtf8 {
            path: manifest_path.clone(),
            line: line_of(&manifest_bytes, e.valid_up_to()),
        })?;
    let manifest: DatasetManifest =
        toml::from_str(manifest_text).map_err(|e| manifest_error(&manifest_path, manifest_text, &e))?;
    if manifest.name.trim().is_empty() {
        return Err(DatasetError::Manifest {
            path: manifest_path,
            message: "field `name` must not be empty".into(),
        });
    }
    if let Some(chunking) = &manifest.chunking {
        let bad = |message: String| DatasetError::Manifest { path: manifest_path.clone(), message };
        let range = super::CHUNK_WORDS_RANGE;
        if let Some(size) = chunking.size_words.filter(|s| !range.contains(s)) {
            return Err(bad(format!("chunking.size_words = {size}: must be from {} to {}", range.start(), range.end())));
        }
        let size = chunking.size_words.unwrap_or(*range.end());
        if let Some(overlap) = chunking.overlap_words.filter(|o| *o >= size) {
            return Err(bad(format!("chunking.overlap_words = {overlap}: must be below size_words ({size})")));
        }
    }
    let corpus_dir = inside(dir, &manifest_path, "corpus", &manifest.corpus)?;
    let questions_path = inside(dir, &manifest_path, "questions", &manifest.questions)?;
    let prompt = match &manifest.prompt {
        None => None,
        Some(file) => {
            let path = inside(dir, &manifest_path, "prompt", file)?;
            if !path.is_file() {
                return Err(DatasetError::Manifest {
                    path: manifest_path,
                    message: format!("field `prompt`: `{file}` is not a file in the dataset folder"),
                });
            }
            Some(path)
        }
    };

    let documents = list_corpus(&corpus_dir)?;
    let doc_ids: BTreeSet<String> = documents.iter().map(|d| d.id.clone()).collect();

    let questions_bytes = read_jsonl_file(&questions_path)?;
    let questions = parse_questions(&questions_path, &questions_bytes, &doc_ids)?;

    let fingerprint = fingerprint(&manifest_bytes, &questions_bytes, &documents)?;
    Ok(Dataset {
        root: dir.to_path_buf(),
        manifest,
        questions,
        documents,
        prompt,
        fingerprint,
    })
}

/// 1-based line of byte `offset` in `bytes`.
fn line_of(bytes: &[u8], offset: usize) -> usize {
    bytes[..offset.min(bytes.len())].iter().filter(|b| **b == b'\n').count() + 1
}

/// A `dataset.toml` parse error with its line and, when the line assigns one, the key.
fn manifest_error(path: &Path, text: &str, error: &toml::de::Error) -> DatasetError {
    let message = error.message().trim_end().to_string();
    let Some(span) = error.span() else {
        return DatasetError::Manifest {
            path: path.to_path_buf(),
            message,
        };
    };
    let line = line_of(text.as_bytes(), span.start);
    let line_text = text.lines().nth(line - 1).unwrap_or_default();
    let key = line_text
        .split_once('=')
        .map(|(key, _)| key.trim())
        .filter(|key| !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || "_-.\"".contains(c)));
    let message = match key {
        Some(key) if !message.contains("field `") => format!("field `{}`: {message}", key.trim_matches('"')),
        _ => message,
    };
    DatasetError::ManifestLine {
        path: path.to_path_buf(),
        line,
        message,
    }
}

/// Resolve a manifest path field, refusing absolute paths and `..` (a dataset is one folder).
fn inside(
    dir: &Path,
    manifest_path: &Path,
    field: &'static str,
    value: &str,
) -> Result<PathBuf, DatasetError> {
    let relative = Path::new(value);
    let escapes = relative.is_absolute()
        || relative
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir));
    let outside = || DatasetError::OutsideDataset {
        path: manifest_path.to_path_buf(),
        field,
        value: value.to_string(),
    };
    if escapes || value.is_empty() {
        return Err(outside());
    }
    let resolved = dir.join(relative);
    // A symbolic link inside the folder can still lead out of it.
    if let (Ok(real_dir), Ok(real_path)) = (dir.canonicalize(), resolved.canonicalize()) {
        if !real_path.starts_with(&real_dir) {
            return Err(outside());
        }
    }
    Ok(resolved)
}

/// The documents of a corpus folder, sorted by id. Two files with one stem (`a.md`, `a.pdf`)
/// would make citations ambiguous, so that is an error.
pub fn list_corpus(corpus_dir: &Path) -> Result<Vec<CorpusFile>, DatasetError> {
    let entries = std::fs::read_dir(corpus_dir).map_err(|e| DatasetError::io(corpus_dir, e))?;
    let mut by_id: HashMap<String, PathBuf> = HashMap::new();
    for entry in entries {
        let entry = entry.map_err(|e| DatasetError::io(corpus_dir, e))?;
        let path = entry.path();
        let is_file = entry.file_type().map(|t| t.is_file()).unwrap_or(false);
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        let Some(ext) = ext else { continue };
        if !is_file || !CORPUS_EXTENSIONS.contains(&ext.as_str()) {
            continue;
        }
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()).map(str::to_string) else {
            return Err(DatasetError::Import {
                path,
                message: "document file name is not valid UTF-8".into(),
            });
        };
        if let Some(other) = by_id.insert(stem.clone(), path.clone()) {
            return Err(DatasetError::Import {
                path,
                message: format!(
                    "document id {stem:?} is also used by {}; one file per id",
                    other.display()
                ),
            });
        }
    }
    let mut documents: Vec<CorpusFile> = by_id
        .into_iter()
        .map(|(id, path)| CorpusFile { id, path })
        .collect();
    documents.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(documents)
}

/// The longest line a JSONL file of questions or answers may have. Real lines are a few KB;
/// a longer one is a broken export (or an attack), and would otherwise be carried into every
/// prompt, report and database row.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The bytes of a JSONL file, read in pieces: a line over `MAX_LINE_BYTES` is an error as soon
/// as the limit is passed, so a huge file (or one that never ends, a pipe or a device) is
/// never read whole just to be refused.
pub fn read_jsonl_file(path: &Path) -> Result<Vec<u8>, DatasetError> {
    use std::io::BufRead;
    let file = std::fs::File::open(path).map_err(|e| DatasetError::io(path, e))?;
    let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
    let mut bytes = Vec::new();
    let (mut line, mut line_bytes) = (1usize, 0usize);
    loop {
        let piece = reader.fill_buf().map_err(|e| DatasetError::io(path, e))?;
        if piece.is_empty() {
            return Ok(bytes);
        }
        for b in piece {
            if *b == b'\n' {
                line += 1;
                line_bytes = 0;
            } else {
                line_bytes += 1;
                if line_bytes > MAX_LINE_BYTES {
                    return Err(DatasetError::LineTooLong { path: path.to_path_buf(), line, limit: MAX_LINE_BYTES });
                }
            }
        }
        bytes.extend_from_slice(piece);
        let n = piece.len();
        reader.consume(n);
    }
}

/// The non-blank lines of a JSONL file as (1-based line number, text); a line that is not
/// UTF-8 or is over `MAX_LINE_BYTES` is an error naming it. A UTF-8 byte order mark at the
/// start (as some editors write) is skipped.
pub fn jsonl_lines<'a>(
    path: &'a Path,
    bytes: &'a [u8],
) -> impl Iterator<Item = Result<(usize, &'a str), DatasetError>> + 'a {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    bytes
        .split(|b| *b == b'\n')
        .enumerate()
        .filter_map(move |(index, raw)| {
            if raw.len() > MAX_LINE_BYTES {
                return Some(Err(DatasetError::LineTooLong {
                    path: path.to_path_buf(),
                    line: index + 1,
                    limit: MAX_LINE_BYTES,
                }));
            }
            match std::str::from_utf8(raw) {
                Ok(text) if text.trim().is_empty() => None,
                Ok(text) => Some(Ok((index + 1, text))),
                Err(_) => Some(Err(DatasetError::NotUtf8 {
                    path: path.to_path_buf(),
                    line: index + 1,
                })),
            }
        })
}

/// A JSON value for an error message: short values whole, long ones cut (a wrong-typed field
/// can hold megabytes).
pub(crate) fn shown_value(value: &Value) -> String {
    const SHOWN: usize = 60;
    let text = value.to_string();
    match text.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{}… ({} bytes)", &text[..cut], text.len()),
        None => text,
    }
}

fn parse_questions(
    path: &Path,
    bytes: &[u8],
    doc_ids: &BTreeSet<String>,
) -> Result<Vec<Question>, DatasetError> {
    let mut questions = Vec::new();
    let mut first_line_of: HashMap<String, usize> = HashMap::new();
    for entry in jsonl_lines(path, bytes) {
        let (line, text) = entry?;
        let question = parse_question_line(path, line, text, doc_ids)?;
        if let Some(first_line) = first_line_of.get(&question.id) {
            return Err(DatasetError::DuplicateId {
                path: path.to_path_buf(),
                line,
                id: question.id,
                first_line: *first_line,
            });
        }
        first_line_of.insert(question.id.clone(), line);
        questions.push(question);
    }
    if questions.is_empty() {
        return Err(DatasetError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(questions)
}

#[derive(Clone, Copy)]
enum FieldType {
    Text,
    TextList,
    Bool,
}

const QUESTION_FIELDS: &[(&str, FieldType)] = &[
    ("id", FieldType::Text),
    ("question", FieldType::Text),
    ("answer", FieldType::Text),
    ("doc", FieldType::Text),
    ("context", FieldType::Text),
    ("citations", FieldType::TextList),
    ("refuse", FieldType::Bool),
    ("tags", FieldType::TextList),
];

/// Parse and validate one line of `questions.jsonl` (1-based `line`).
pub fn parse_question_line(
    path: &Path,
    line: usize,
    text: &str,
    doc_ids: &BTreeSet<String>,
) -> Result<Question, DatasetError> {
    let field_error = |field: &str, message: String| DatasetError::Field {
        path: path.to_path_buf(),
        line,
        field: field.to_string(),
        message,
    };
    let value: Value = serde_json::from_str(text).map_err(|e| DatasetError::Json {
        path: path.to_path_buf(),
        line,
        message: e.to_string(),
    })?;
    let Value::Object(object) = value else {
        return Err(DatasetError::Json {
            path: path.to_path_buf(),
            line,
            message: "expected a JSON object".into(),
        });
    };
    check_field_types(&object, field_error)?;

    let question: Question = serde_json::from_value(Value::Object(object)).map_err(|e| {
        DatasetError::Json {
            path: path.to_path_buf(),
            line,
            message: e.to_string(),
        }
    })?;

    validate_id(&question.id).map_err(|m| field_error("id", m))?;
    if question.question.trim().is_empty() {
        return Err(field_error("question", "must not be empty".into()));
    }
    match (&question.answer, question.refuse) {
        (None, false) => {
            return Err(field_error(
                "answer",
                "required unless `refuse` is true".into(),
            ))
        }
        (Some(a), false) if a.trim().is_empty() => {
            return Err(field_error("answer", "must not be empty".into()))
        }
        _ => {}
    }
    if let Some(doc) = &question.doc {
        if !doc_ids.contains(doc) {
            return Err(field_error(
                "doc",
                format!("unknown document {doc:?} (not in the corpus folder)"),
            ));
        }
    }
    for citation in &question.citations {
        let doc = citation_doc(citation);
        if !doc_ids.contains(doc) {
            return Err(field_error(
                "citations",
                format!("unknown document {doc:?} in citation {citation:?}"),
            ));
        }
    }
    Ok(question)
}

fn check_field_types(
    object: &Map<String, Value>,
    field_error: impl Fn(&str, String) -> DatasetError,
) -> Result<(), DatasetError> {
    for (name, value) in object {
        let Some((_, expected)) = QUESTION_FIELDS.iter().find(|(f, _)| f == name) else {
            let known: Vec<&str> = QUESTION_FIELDS.iter().map(|(f, _)| *f).collect();
            return Err(field_error(
                name,
                format!("unknown field; expected one of {}", known.join(", ")),
            ));
        };
        let ok = match expected {
            FieldType::Text => value.is_string(),
            FieldType::Bool => value.is_boolean(),
            FieldType::TextList => value
                .as_array()
                .is_some_and(|items| items.iter().all(Value::is_string)),
        };
        if !ok {
            let wanted = match expected {
                FieldType::Text => "a string",
                FieldType::Bool => "true or false",
                FieldType::TextList => "a list of strings",
            };
            return Err(field_error(name, format!("expected {wanted}, found {}", shown_value(value))));
        }
    }
    for required in ["id", "question"] {
        if !object.contains_key(required) {
            return Err(field_error(required, "missing (required)".into()));
        }
    }
    Ok(())
}

/// Ids end up in file names, URLs and reports: keep them to a safe alphabet.
pub(crate) fn validate_id(id: &str) -> Result<(), String> {
    if id.is_empty() {
        return Err("must not be empty".into());
    }
    if id.len() > 128 {
        return Err("longer than 128 characters".into());
    }
    if let Some(c) = id
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':')))
    {
        return Err(format!(
            "{id:?} contains {c:?}; use letters, digits, '-', '_', '.', ':'"
        ));
    }
    if id.starts_with('.') {
        return Err(format!("{id:?} must not start with '.'"));
    }
    Ok(())
}

/// `doc#3` → `doc`; `doc` → `doc`.
pub fn citation_doc(citation: &str) -> &str {
    citation.split('#').next().unwrap_or(citation)
}

fn fingerprint(
    manifest: &[u8],
    questions: &[u8],
    documents: &[CorpusFile],
) -> Result<String, DatasetError> {
    let mut hasher = Sha256::new();
    // Length-prefix every part so that moving bytes between parts changes the hash.
    fn part(hasher: &mut Sha256, bytes: &[u8]) {
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    }
    part(&mut hasher, manifest);
    part(&mut hasher, questions);
    for doc in documents {
        part(&mut hasher, doc.id.as_bytes());
        // Streamed: a corpus file can be far larger than memory allows (the corpus reader
        // skips it later, by name); hashed as if whole, length first.
        let io = |e| DatasetError::io(&doc.path, e);
        let mut file = std::fs::File::open(&doc.path).map_err(io)?;
        let length = file.metadata().map_err(io)?.len();
        hasher.update(length.to_le_bytes());
        let copied = std::io::copy(&mut file, &mut hasher).map_err(io)?;
        if copied != length {
            return Err(DatasetError::io(
                &doc.path,
                std::io::Error::other("the file changed while it was read"),
            ));
        }
    }
    Ok(hex::encode(hasher.finalize()))
}

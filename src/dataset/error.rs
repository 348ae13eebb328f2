//! Dataset errors: each names the file and, where there is one, the line and the field.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error("{path}: cannot read: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a dataset folder (no dataset.toml)")]
    NotADataset { path: PathBuf },
    #[error("{path}: invalid dataset.toml: {message}")]
    Manifest { path: PathBuf, message: String },
    #[error("{path}:{line}: invalid dataset.toml: {message}")]
    ManifestLine {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{path}: {field} points outside the dataset folder: {value:?}")]
    OutsideDataset {
        path: PathBuf,
        field: &'static str,
        value: String,
    },
    #[error("{path}:{line}: not valid UTF-8")]
    NotUtf8 { path: PathBuf, line: usize },
    /// Refused as soon as the limit is passed: the rest of the line is never read.
    #[error("{path}:{line}: line is over the limit of {limit} bytes")]
    LineTooLong {
        path: PathBuf,
        line: usize,
        limit: usize,
    },
    #[error("{path}:{line}: invalid JSON: {message}")]
    Json {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{path}:{line}: field `{field}`: {message}")]
    Field {
        path: PathBuf,
        line: usize,
        field: String,
        message: String,
    },
    #[error("{path}:{line}: field `id`: duplicate id {id:?} (first on line {first_line})")]
    DuplicateId {
        path: PathBuf,
        line: usize,
        id: String,
        first_line: usize,
    },
    #[error("{path}: no questions")]
    Empty { path: PathBuf },
    #[error("{path}: {message}")]
    Import { path: PathBuf, message: String },
    #[error("{path}: already exists; choose another output folder")]
    OutputExists { path: PathBuf },
}

impl DatasetError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        DatasetError::Io {
            path: path.into(),
            source,
        }
    }
}

//! `--target` values: parsing a target spec and building the target it names.

use super::{load_answers_file, AnswersFileTarget, Target};
use crate::dataset::{Dataset, DatasetError};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum TargetSpecError {
    #[error("unknown target {0:?}; available: answers:FILE")]
    Unknown(String),
    #[error("--target answers needs a file: --target answers:FILE")]
    AnswersWithoutFile,
    #[error("{file}: answers file not found (looked in the current folder and in {dataset})")]
    AnswersNotFound { file: String, dataset: PathBuf },
    #[error(transparent)]
    Dataset(#[from] DatasetError),
}

/// A built target and the fingerprint of its inputs that belongs in the run config
/// (the answers file's sha256), if any.
pub struct BuiltTarget {
    pub target: Box<dyn Target>,
    pub input_sha256: Option<String>,
}

/// Build the target named by `spec` for `dataset`.
pub fn build_target(spec: &str, dataset: &Dataset) -> Result<BuiltTarget, TargetSpecError> {
    match spec.split_once(':') {
        Some(("answers", file)) => {
            let path = resolve_answers_path(file, &dataset.root)?;
            let bytes = std::fs::read(&path).map_err(|e| DatasetError::Io {
                path: path.clone(),
                source: e,
            })?;
            let answers = load_answers_file(&path, dataset)?;
            Ok(BuiltTarget {
                target: Box::new(AnswersFileTarget::new(path, answers)),
                input_sha256: Some(hex::encode(Sha256::digest(&bytes))),
            })
        }
        _ if spec == "answers" => Err(TargetSpecError::AnswersWithoutFile),
        _ => Err(TargetSpecError::Unknown(spec.to_string())),
    }
}

/// An answers file is looked up as given, then inside the dataset folder (so the sample
/// dataset's `answers-careful.jsonl` works from anywhere).
fn resolve_answers_path(file: &str, dataset_root: &Path) -> Result<PathBuf, TargetSpecError> {
    let given = PathBuf::from(file);
    if given.is_file() {
        return Ok(given);
    }
    let in_dataset = dataset_root.join(file);
    if in_dataset.is_file() {
        return Ok(in_dataset);
    }
    Err(TargetSpecError::AnswersNotFound {
        file: file.to_string(),
        dataset: dataset_root.to_path_buf(),
    })
}

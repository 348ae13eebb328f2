//! `assay index`: build a dataset's retrieval index, or find the one built from exactly this
//! corpus and reuse it, as a run's retrieval would.

use super::execute::RunError;
use crate::dataset::Dataset;
use crate::retrieve::{index_dataset, IndexReport, IndexSettings};

/// The index report: reused / built / rebuilt with the reason, and the documents skipped.
pub fn build_index(dataset: &Dataset) -> Result<IndexReport, RunError> {
    let (_index, report) = index_dataset(dataset, IndexSettings::for_dataset(dataset))
        .map_err(|e| RunError::Experiment(e.to_string()))?;
    Ok(report)
}

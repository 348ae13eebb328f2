//! A run read back from the store with its summary: what compare and every report start from.

use super::{summarize, RunSummary};
use crate::record::{ItemRecord, RunRecord};
use crate::store::{Store, StoreError};

/// A run with everything a report shows.
#[derive(Debug, Clone)]
pub struct RunReport {
    pub run: RunRecord,
    pub summary: RunSummary,
    pub items: Vec<ItemRecord>,
}

pub fn load_report(store: &Store, run: RunRecord) -> Result<RunReport, StoreError> {
    let items = store.items(&run.id)?;
    let summary = summarize(&items, run.config.seed);
    Ok(RunReport {
        run,
        summary,
        items,
    })
}

//! Runs read back from the database, as the faces need them: the list, one run or several
//! (ids, unique prefixes, names, experiment ids) with their summaries, and the running means of
//! a run in progress. The faces open the database only through here, so both read it alike.

use crate::record::RunRecord;
use crate::stats::{load_report, summarize, RunReport};
use crate::store::{RunListing, Store, StoreError};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The run database, opened for reading back.
pub struct StoredRuns {
    pub(super) store: Store,
}

/// `$ASSAY_DB`, else `<data dir>/assay/assay.sqlite`: the one default both faces use, so runs
/// of the CLI show in the app and back. None without a home directory.
pub fn default_database() -> Option<PathBuf> {
    crate::store::default_db_path()
}

impl StoredRuns {
    /// Open a database that must exist (reading never creates one).
    pub fn open_existing(path: &Path) -> Result<Self, StoreError> {
        Ok(StoredRuns { store: Store::open_existing(path)? })
    }

    /// Open the database, creating an empty one on first use (the app's first start).
    pub fn open_or_create(path: &Path) -> Result<Self, StoreError> {
        Ok(StoredRuns { store: Store::open(path)? })
    }

    pub fn path(&self) -> &Path {
        self.store.path()
    }

    /// Every run that reads whole, newest first (a damaged row is left out: see `listing`).
    pub fn runs(&self) -> Result<Vec<RunRecord>, StoreError> {
        self.store.runs()
    }

    /// Every run, newest first, with the runs whose row is damaged set apart by id with what
    /// is wrong: what a list shows, so one damaged row never hides the others.
    pub fn listing(&self) -> Result<RunListing, StoreError> {
        self.store.run_listing()
    }

    /// One run (id, unique prefix or name) with its items and summary.
    pub fn report(&self, reference: &str) -> Result<RunReport, StoreError> {
        load_report(&self.store, self.store.find_run(reference)?)
    }

    /// A listed run with its items and summary.
    pub fn report_of(&self, run: RunRecord) -> Result<RunReport, StoreError> {
        load_report(&self.store, run)
    }

    /// The runs `references` name, in order; an experiment id stands for all of its runs.
    pub fn reports(&self, references: &[String]) -> Result<Vec<RunReport>, StoreError> {
        let mut reports = Vec::new();
        for reference in references {
            for run in self.store.find_runs(reference)? {
                reports.push(load_report(&self.store, run)?);
            }
        }
        Ok(reports)
    }

    /// Whether a process is executing the run now (it holds the run's lease): a face offers
    /// Resume only when none does.
    pub fn is_held(&self, run_id: &str) -> Result<bool, super::RunError> {
        super::lease::is_held(self.store.path(), run_id)
    }

    /// Each metric's (and judge's) mean over the items of `run_id` stored so far: what a face
    /// shows while the run goes on (a second connection reads while the run's own writes).
    pub fn running_means(&self, run_id: &str, seed: u64) -> Result<BTreeMap<String, f64>, StoreError> {
        let items = self.store.items(run_id)?;
        Ok(summarize(&items, seed).metrics.into_iter().map(|(name, m)| (name, m.mean)).collect())
    }
}

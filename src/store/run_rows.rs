//! The `runs` table read back: every run, with the rows that cannot be read set apart by id
//! (one damaged row used to make `runs`, `show` and `export` fail for every run), and a run
//! found by reference (id, unique prefix, name, experiment id).
//!
//! A damaged row is never changed or skipped silently: the listing names it with its field and
//! problem, and naming that run (or its experiment) is an error saying the same.

use super::damaged_row::{self, DamagedRow, FieldDamage};
use super::{Store, StoreError};
use crate::record::{RunConfig, RunRecord, RunStatus};

/// Every run of a database, newest first: those read whole, and those whose row is damaged.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct RunListing {
    pub runs: Vec<RunRecord>,
    pub damaged: Vec<DamagedRun>,
}

/// A run whose row cannot be read, with what could be read of it (to name and find it).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DamagedRun {
    /// The run's id, or `rowid N` when the id itself is unreadable.
    pub id: String,
    pub name: Option<String>,
    pub experiment: Option<String>,
    pub damage: DamagedRow,
}

const RUN_COLUMNS: &str = "rowid, id, name, dataset, dataset_root, dataset_fingerprint, config_json, \
     config_hash, status, total_items, created_at, finished_at, experiment";

const STATUSES: [RunStatus; 4] = [RunStatus::Running, RunStatus::Finished, RunStatus::Cancelled, RunStatus::Failed];

/// One row of `runs` (columns as in `RUN_COLUMNS`), or what is wrong with it.
fn read_run(row: &rusqlite::Row<'_>) -> Result<RunRecord, DamagedRun> {
    let key = match (damaged_row::text(row, 1, "id"), row.get_ref(0)) {
        (Ok(id), _) => id,
        (Err(_), Ok(rusqlite::types::ValueRef::Integer(rowid))) => format!("rowid {rowid}"),
        (Err(_), _) => "with an unreadable rowid".into(),
    };
    let damaged = |damage: FieldDamage| DamagedRun {
        id: key.clone(),
        name: damaged_row::text(row, 2, "name").ok(),
        experiment: damaged_row::optional_text(row, 12, "experiment").ok().flatten(),
        damage: damage.in_row("runs", key.clone()),
    };
    let read = || -> Result<RunRecord, FieldDamage> {
        let stored_status = damaged_row::text(row, 8, "status")?;
        let status = STATUSES.into_iter().find(|s| s.as_str() == stored_status).ok_or_else(|| {
            FieldDamage::new("status", format!("is {stored_status:?}, not one of running, finished, cancelled, failed"))
        })?;
        Ok(RunRecord {
            id: damaged_row::text(row, 1, "id")?,
            name: damaged_row::text(row, 2, "name")?,
            dataset: damaged_row::text(row, 3, "dataset")?,
            dataset_root: damaged_row::text(row, 4, "dataset_root")?,
            dataset_fingerprint: damaged_row::text(row, 5, "dataset_fingerprint")?,
            config: damaged_row::json::<RunConfig>(row, 6, "config_json", "a run's settings")?,
            config_hash: damaged_row::text(row, 7, "config_hash")?,
            status,
            total_items: damaged_row::count(row, 9, "total_items")?,
            created_at: damaged_row::text(row, 10, "created_at")?,
            finished_at: damaged_row::optional_text(row, 11, "finished_at")?,
            experiment: damaged_row::optional_text(row, 12, "experiment")?,
        })
    };
    read().map_err(damaged)
}

impl Store {
    /// Every run, newest first, with the damaged rows apart.
    pub fn run_listing(&self) -> Result<RunListing, StoreError> {
        let mut statement = self
            .conn
            .prepare(&format!("SELECT {RUN_COLUMNS} FROM runs ORDER BY created_at DESC, id DESC"))
            .map_err(|e| self.err(e))?;
        let mut rows = statement.query([]).map_err(|e| self.err(e))?;
        let mut listing = RunListing::default();
        while let Some(row) = rows.next().map_err(|e| self.err(e))? {
            match read_run(row) {
                Ok(run) => listing.runs.push(run),
                Err(damaged) => listing.damaged.push(damaged),
            }
        }
        Ok(listing)
    }

    /// The runs that read whole, newest first (`run_listing` has the damaged ones too).
    pub fn runs(&self) -> Result<Vec<RunRecord>, StoreError> {
        Ok(self.run_listing()?.runs)
    }

    /// Find a run by full id, unique id prefix, or name (the newest run of that name). A
    /// reference that names a damaged run is an error naming its row and field.
    pub fn find_run(&self, reference: &str) -> Result<RunRecord, StoreError> {
        let listing = self.run_listing()?;
        let damaged = |run: &DamagedRun| StoreError::Damaged { path: self.path.clone(), damage: run.damage.clone() };
        if let Some(run) = listing.runs.iter().find(|r| r.id == reference) {
            return Ok(run.clone());
        }
        if let Some(run) = listing.damaged.iter().find(|r| r.id == reference) {
            return Err(damaged(run));
        }
        let readable: Vec<&RunRecord> = listing.runs.iter().filter(|r| r.id.starts_with(reference)).collect();
        let unreadable: Vec<&DamagedRun> =
            listing.damaged.iter().filter(|r| !r.id.starts_with("rowid ") && r.id.starts_with(reference)).collect();
        match (readable.as_slice(), unreadable.as_slice()) {
            ([one], []) => return Ok((*one).clone()),
            ([], [one]) => return Err(damaged(*one)),
            ([], []) => {}
            _ => {
                let ids: Vec<&str> = readable.iter().map(|r| r.id.as_str()).chain(unreadable.iter().map(|r| r.id.as_str())).collect();
                return Err(StoreError::AmbiguousRun { reference: reference.to_string(), candidates: ids.join(", ") });
            }
        }
        if let Some(run) = listing.runs.iter().find(|r| r.name == reference) {
            return Ok(run.clone());
        }
        if let Some(run) = listing.damaged.iter().find(|r| r.name.as_deref() == Some(reference)) {
            return Err(damaged(run));
        }
        Err(StoreError::UnknownRun { reference: reference.to_string() })
    }

    /// The runs a reference names: all runs of an experiment (by its id or a unique prefix of
    /// it), oldest first, else the one run `find_run` finds. An experiment one of whose runs is
    /// damaged is an error naming that row: a comparison without it would mislead.
    pub fn find_runs(&self, reference: &str) -> Result<Vec<RunRecord>, StoreError> {
        let listing = self.run_listing()?;
        let mut experiments: Vec<&str> = listing
            .runs
            .iter()
            .filter_map(|r| r.experiment.as_deref())
            .chain(listing.damaged.iter().filter_map(|r| r.experiment.as_deref()))
            .filter(|e| reference.starts_with("exp-") && e.starts_with(reference))
            .collect();
        experiments.sort_unstable();
        experiments.dedup();
        let chosen = match experiments.as_slice() {
            [one] => Some(one.to_string()),
            many => many.iter().find(|e| **e == reference).map(|e| e.to_string()),
        };
        let Some(experiment) = chosen else {
            return Ok(vec![self.find_run(reference)?]);
        };
        if let Some(run) = listing.damaged.iter().find(|r| r.experiment.as_deref() == Some(experiment.as_str())) {
            return Err(StoreError::Damaged { path: self.path.clone(), damage: run.damage.clone() });
        }
        Ok(listing.runs.into_iter().rev().filter(|r| r.experiment.as_deref() == Some(experiment.as_str())).collect())
    }
}

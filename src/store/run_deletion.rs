//! Deleting a run: its row and, through the schema's cascades, its items, metrics, verdicts,
//! people's labels and the pairwise judgments it took part in, in one transaction. What a
//! deletion removes is counted first, so a face can say it (and ask) before anything changes.
//!
//! The generation cache is not a run's: it is keyed by prompt and model and stays.

use super::{sqlite_error, Store, StoreError};
use rusqlite::{params, TransactionBehavior};

/// What deleting one run removes with it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct RunContents {
    pub items: usize,
    pub verdicts: usize,
    /// People's labels: the one part a run cannot compute again.
    pub labels: usize,
    pub pairwise_judgments: usize,
}

impl Store {
    /// The rows that deleting `run_id` would remove with it.
    pub fn run_contents(&self, run_id: &str) -> Result<RunContents, StoreError> {
        let count = |sql: &str| -> Result<usize, StoreError> {
            let n: i64 = self.conn.query_row(sql, params![run_id], |row| row.get(0)).map_err(|e| self.err(e))?;
            Ok(usize::try_from(n).unwrap_or(0))
        };
        Ok(RunContents {
            items: count("SELECT COUNT(*) FROM items WHERE run_id = ?1")?,
            verdicts: count("SELECT COUNT(*) FROM verdicts WHERE run_id = ?1")?,
            labels: count("SELECT COUNT(*) FROM labels WHERE run_id = ?1")?,
            pairwise_judgments: count("SELECT COUNT(*) FROM pairwise_judgments WHERE run_a = ?1 OR run_b = ?1")?,
        })
    }

    /// Delete the runs `run_ids` (with everything the cascades take) in one transaction: all
    /// of them or, on any error, none. Returns how many run rows were deleted (an id no longer
    /// there, deleted meanwhile by another process, counts none).
    pub fn delete_runs(&mut self, run_ids: &[String]) -> Result<usize, StoreError> {
        let path = self.path.clone();
        let wait = self.busy_timeout;
        let sqlite = |source| sqlite_error(&path, wait, source);
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sqlite)?;
        let mut deleted = 0;
        for id in run_ids {
            deleted += tx.execute("DELETE FROM runs WHERE id = ?1", params![id]).map_err(sqlite)?;
        }
        tx.commit().map_err(sqlite)?;
        Ok(deleted)
    }
}

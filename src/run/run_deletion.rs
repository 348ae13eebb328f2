//! Deleting stored runs, as both faces offer it: references resolved as `show` and `compare`
//! resolve them (an experiment id stands for its runs; an exact id also names a run whose row
//! is damaged, which the damaged-row error tells a person to delete), what each run would take
//! with it counted before anything changes, and a run that a process is executing refused.

use super::{RunError, StoredRuns};
use crate::store::{RunContents, StoreError};

/// One run a deletion would remove, with what goes with it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RunDeletion {
    pub id: String,
    /// None for a damaged row whose name cannot be read.
    pub name: Option<String>,
    pub contents: RunContents,
}

impl StoredRuns {
    /// The runs `references` name, each once, with what deleting it removes. Nothing changes.
    /// A run being executed now is refused: its process would go on writing into a run that
    /// is gone.
    pub fn plan_deletion(&self, references: &[String]) -> Result<Vec<RunDeletion>, RunError> {
        let mut plan: Vec<RunDeletion> = Vec::new();
        for reference in references {
            let named: Vec<(String, Option<String>)> = match self.store.find_runs(reference) {
                Ok(runs) => runs.into_iter().map(|r| (r.id, Some(r.name))).collect(),
                Err(StoreError::Damaged { path, damage }) => {
                    match self.listing()?.damaged.into_iter().find(|d| &d.id == reference) {
                        Some(damaged) => vec![(damaged.id, damaged.name)],
                        // Named by prefix or name: the error gives the full id to delete by.
                        None => return Err(StoreError::Damaged { path, damage }.into()),
                    }
                }
                Err(e) => return Err(e.into()),
            };
            for (id, name) in named {
                if plan.iter().any(|p| p.id == id) {
                    continue;
                }
                if self.is_held(&id)? {
                    return Err(RunError::DeleteWhileRunning { run: id });
                }
                let contents = self.store.run_contents(&id)?;
                plan.push(RunDeletion { id, name, contents });
            }
        }
        Ok(plan)
    }

    /// Delete the planned runs, all or none; how many were still there to delete. Each run's
    /// lease is looked at again, as a resume may have started since the plan was made.
    pub fn delete(&mut self, plan: &[RunDeletion]) -> Result<usize, RunError> {
        for run in plan {
            if self.is_held(&run.id)? {
                return Err(RunError::DeleteWhileRunning { run: run.id.clone() });
            }
        }
        let ids: Vec<String> = plan.iter().map(|r| r.id.clone()).collect();
        Ok(self.store.delete_runs(&ids)?)
    }
}

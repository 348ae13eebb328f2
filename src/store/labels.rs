//! People's labels on a run's answers: one current label (correct / wrong / skip, a note, the
//! time) per (run, question).
//!
//! Only the current label is kept, not a history: agreement and calibration read what a person
//! decides now, a changed mind is a correction rather than a second observation, and a
//! snapshot is one `assay labels export` away. A label belongs to the stored answer it was
//! given to: the row references the item and goes with it, so an item answered again (a
//! resumed run retrying a failure) starts unlabelled instead of carrying a label it never had.

use super::{damaged_row, Store, StoreError};
use crate::record::{AnswerLabel, LabelRecord};
use rusqlite::params;

impl Store {
    /// The run's labels in the order of its items.
    pub fn labels(&self, run_id: &str) -> Result<Vec<LabelRecord>, StoreError> {
        let mut statement = self
            .conn
            .prepare(
                "SELECT l.question_id, l.label, l.note, l.labelled_at FROM labels l
                 JOIN items i ON i.run_id = l.run_id AND i.question_id = l.question_id
                 WHERE l.run_id = ?1 ORDER BY i.position",
            )
            .map_err(|e| self.err(e))?;
        let mut rows = statement.query([run_id]).map_err(|e| self.err(e))?;
        let damaged = |damage| StoreError::Damaged { path: self.path.clone(), damage };
        let mut labels = Vec::new();
        while let Some(row) = rows.next().map_err(|e| self.err(e))? {
            let question_id = damaged_row::text(row, 0, "question_id").map_err(|d| damaged(d.in_row("labels", format!("run {run_id}"))))?;
            let read = || -> Result<LabelRecord, damaged_row::FieldDamage> {
                let stored = damaged_row::text(row, 1, "label")?;
                // The table's CHECK admits only the three words; anything else is a damaged file.
                let label = AnswerLabel::parse(&stored)
                    .ok_or_else(|| damaged_row::FieldDamage::new("label", format!("is {stored:?}, not one of correct, wrong, skip")))?;
                Ok(LabelRecord {
                    question_id: question_id.clone(),
                    label,
                    note: damaged_row::optional_text(row, 2, "note")?,
                    labelled_at: damaged_row::text(row, 3, "labelled_at")?,
                })
            };
            labels.push(read().map_err(|d| damaged(d.in_row("labels", format!("run {run_id}, question {question_id}"))))?);
        }
        Ok(labels)
    }

    /// Set (or replace) the labels of some questions of a run, all in one transaction: either
    /// every label is stored or none. The caller has checked that each question was answered.
    pub fn set_labels(&mut self, run_id: &str, labels: &[LabelRecord]) -> Result<(), StoreError> {
        let path = self.path.clone();
        let wait = self.busy_timeout;
        let sqlite = |source| super::sqlite_error(&path, wait, source);
        let tx = self.conn.transaction().map_err(sqlite)?;
        for label in labels {
            tx.execute(
                "INSERT OR REPLACE INTO labels (run_id, question_id, label, note, labelled_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![run_id, label.question_id, label.label.as_str(), label.note, label.labelled_at],
            )
            .map_err(sqlite)?;
        }
        tx.commit().map_err(sqlite)?;
        Ok(())
    }

    /// Forget the label of one question (no row is not an error: there is nothing to forget).
    pub fn remove_label(&self, run_id: &str, question_id: &str) -> Result<(), StoreError> {
        self.conn
            .execute("DELETE FROM labels WHERE run_id = ?1 AND question_id = ?2", params![run_id, question_id])
            .map_err(|e| self.err(e))?;
        Ok(())
    }
}

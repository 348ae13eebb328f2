//! People's labels on a run's answers: one current label (correct / wrong / skip, a note, the
//! time) per (run, question).
//!
//! Only the current label is kept, not a history: agreement and calibration read what a person
//! decides now, a changed mind is a correction rather than a second observation, and a
//! snapshot is one `assay labels export` away. A label belongs to the stored answer it was
//! given to: the row references the item and goes with it, so an item answered again (a
//! resumed run retrying a failure) starts unlabelled instead of carrying a label it never had.

use super::{Store, StoreError};
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
        let rows = statement
            .query_map([run_id], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, Option<String>>(2)?, r.get::<_, String>(3)?))
            })
            .map_err(|e| self.err(e))?;
        let mut labels = Vec::new();
        for row in rows {
            let (question_id, label, note, labelled_at) = row.map_err(|e| self.err(e))?;
            // The table's CHECK admits only the three words; anything else is a damaged file.
            let label = AnswerLabel::parse(&label).ok_or_else(|| StoreError::Corrupt {
                path: self.path.clone(),
                run: run_id.to_string(),
                what: "label",
                message: format!("question {question_id}: unknown label {label:?}"),
            })?;
            labels.push(LabelRecord { question_id, label, note, labelled_at });
        }
        Ok(labels)
    }

    /// Set (or replace) the labels of some questions of a run, all in one transaction: either
    /// every label is stored or none. The caller has checked that each question was answered.
    pub fn set_labels(&mut self, run_id: &str, labels: &[LabelRecord]) -> Result<(), StoreError> {
        let path = self.path.clone();
        let sqlite = |source| StoreError::Sqlite { path: path.clone(), source };
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

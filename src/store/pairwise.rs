//! Stored pairwise judgments: one row per question of a compared pair of runs, keyed by the two
//! runs (in order), the question, the judge spec's sha256 and the judge model, so a second
//! comparison of the same runs with the same judge reads them instead of judging again.
//!
//! A row also keeps a hash of what the judge read (`answers_sha256`, made by the caller): a
//! row whose answers have changed since (a run resumed over a failed item) is not reused. The
//! same runs compared the other way round reuse the rows with A and B swapped back: both
//! orders were judged, so nothing about the judgment depends on which run was named first.
//! Only scored judgments are stored; a failed one is judged again next time.

use super::{damaged_row, Store, StoreError};
use crate::record::{now_rfc3339, PairPreference, PairwiseJudgment, Preferred};
use rusqlite::params;
use std::collections::BTreeMap;

/// What a judgment was made with: the runs in order, the judge spec and the judge model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairwiseKey<'a> {
    pub run_a: &'a str,
    pub run_b: &'a str,
    pub judge_sha256: &'a str,
    pub judge_model: &'a str,
}

/// A judge and judge model with judgments stored for a pair of runs (either way round).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPairwiseJudge {
    pub judge_sha256: String,
    pub judge_model: String,
    /// Questions judged.
    pub questions: usize,
    /// When the latest of them was stored (RFC 3339).
    pub latest: String,
}

/// A stored judgment, turned to face the runs as asked.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredPairwise {
    pub judgment: PairwiseJudgment,
    /// The hash stored with it, of the answers in the row's own order.
    pub answers_sha256: String,
    /// True when the row was stored for the runs the other way round (and `judgment` has been
    /// swapped back): the caller hashes the answers as B, A to check it.
    pub reversed: bool,
}

/// The judgment with the runs' roles exchanged: what A had, B has.
pub fn swap_runs(judgment: &PairwiseJudgment) -> PairwiseJudgment {
    let preference = judgment.preference.map(|p| PairPreference {
        a_better: p.b_better,
        b_better: p.a_better,
        tie: p.tie,
        p_b: p.a_better + p.tie / 2.0,
        order_consistent: p.order_consistent,
        preferred: match p.preferred {
            Preferred::A => Preferred::B,
            Preferred::B => Preferred::A,
            Preferred::Tie => Preferred::Tie,
        },
    });
    PairwiseJudgment {
        id: judgment.id.clone(),
        a_first: judgment.b_first.clone(),
        b_first: judgment.a_first.clone(),
        preference,
        scores: judgment.scores.map(|[a, b]| [b, a]),
        words_a: judgment.words_b,
        words_b: judgment.words_a,
        flags: judgment.flags.clone(),
        error: judgment.error.clone(),
    }
}

impl Store {
    /// The stored judgments for these runs and this judge, by question id: rows stored for
    /// (A, B) as they are, rows stored for (B, A) swapped (a row of the asked order wins).
    pub fn pairwise_judgments(&self, key: &PairwiseKey<'_>) -> Result<BTreeMap<String, StoredPairwise>, StoreError> {
        let mut found = BTreeMap::new();
        let mut statement = self
            .conn
            .prepare(
                "SELECT question_id, answers_sha256, judgment_json, run_a = ?1 FROM pairwise_judgments
                 WHERE ((run_a = ?1 AND run_b = ?2) OR (run_a = ?2 AND run_b = ?1))
                   AND judge_sha256 = ?3 AND judge_model = ?4
                 ORDER BY run_a = ?1",
            )
            .map_err(|e| self.err(e))?;
        let mut rows = statement.query(params![key.run_a, key.run_b, key.judge_sha256, key.judge_model]).map_err(|e| self.err(e))?;
        while let Some(row) = rows.next().map_err(|e| self.err(e))? {
            let damaged = |question: &str, d: damaged_row::FieldDamage| StoreError::Damaged {
                path: self.path.clone(),
                damage: d.in_row("pairwise_judgments", format!("runs {} and {}, question {question}", key.run_a, key.run_b)),
            };
            let question = damaged_row::text(row, 0, "question_id").map_err(|d| damaged("?", d))?;
            let answers_sha256 = damaged_row::text(row, 1, "answers_sha256").map_err(|d| damaged(&question, d))?;
            let stored: PairwiseJudgment =
                damaged_row::json(row, 2, "judgment_json", "a pairwise judgment").map_err(|d| damaged(&question, d))?;
            let asked_order = damaged_row::integer(row, 3, "run_a").map_err(|d| damaged(&question, d))? != 0;
            let judgment = if asked_order { stored } else { swap_runs(&stored) };
            // Rows come reversed first, so a row stored in the asked order replaces its twin.
            found.insert(question, StoredPairwise { judgment, answers_sha256, reversed: !asked_order });
        }
        Ok(found)
    }

    /// The judges with judgments stored for these two runs (in either order), the most
    /// recently used first: what a report of the two runs can show without judging.
    pub fn pairwise_judges(&self, run_a: &str, run_b: &str) -> Result<Vec<StoredPairwiseJudge>, StoreError> {
        let mut statement = self
            .conn
            .prepare(
                "SELECT judge_sha256, judge_model, count(DISTINCT question_id), max(created_at) FROM pairwise_judgments
                 WHERE (run_a = ?1 AND run_b = ?2) OR (run_a = ?2 AND run_b = ?1)
                 GROUP BY judge_sha256, judge_model
                 ORDER BY max(created_at) DESC, judge_model",
            )
            .map_err(|e| self.err(e))?;
        let rows = statement
            .query_map(params![run_a, run_b], |r| {
                Ok(StoredPairwiseJudge {
                    judge_sha256: r.get(0)?,
                    judge_model: r.get(1)?,
                    questions: r.get::<_, i64>(2)? as usize,
                    latest: r.get(3)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }

    /// Keep one scored judgment (committed on its own, so a stopped comparison keeps what it
    /// judged). A judgment with an error is not stored: it is judged again next time.
    pub fn record_pairwise(&self, key: &PairwiseKey<'_>, answers_sha256: &str, judgment: &PairwiseJudgment) -> Result<(), StoreError> {
        if judgment.error.is_some() || judgment.preference.is_none() {
            return Ok(());
        }
        let json = serde_json::to_string(judgment).map_err(|e| StoreError::Corrupt {
            path: self.path.clone(),
            run: key.run_a.to_string(),
            what: "pairwise judgment",
            message: e.to_string(),
        })?;
        self.conn
            .execute(
                "INSERT OR REPLACE INTO pairwise_judgments
                 (run_a, run_b, question_id, judge_sha256, judge_model, answers_sha256, judgment_json, p_b, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    key.run_a,
                    key.run_b,
                    judgment.id,
                    key.judge_sha256,
                    key.judge_model,
                    answers_sha256,
                    json,
                    judgment.preference.map(|p| p.p_b),
                    now_rfc3339(),
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swapping_twice_gives_the_judgment_back_and_mirrors_the_preference() {
        let judgment = PairwiseJudgment {
            id: "q1".into(),
            a_first: [("1".to_string(), 0.2), ("2".to_string(), 0.7), ("tie".to_string(), 0.1)].into_iter().collect(),
            b_first: [("1".to_string(), 0.6), ("2".to_string(), 0.3), ("tie".to_string(), 0.1)].into_iter().collect(),
            preference: Some(PairPreference { a_better: 0.25, b_better: 0.65, tie: 0.1, p_b: 0.65 + 0.1 / 2.0, order_consistent: true, preferred: Preferred::B }),
            words_a: 3,
            words_b: 9,
            scores: Some([0.4, 0.8]),
            ..PairwiseJudgment::default()
        };
        let swapped = swap_runs(&judgment);
        assert_eq!(swapped.scores, Some([0.8, 0.4]));
        let p = swapped.preference.unwrap();
        assert!((p.p_b - 0.3).abs() < 1e-12 && p.preferred == Preferred::A, "{p:?}");
        assert_eq!((swapped.words_a, swapped.words_b, swapped.a_first.get("1")), (9, 3, Some(&0.6)));
        assert_eq!(swap_runs(&swapped), judgment);
    }
}

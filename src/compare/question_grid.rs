//! The question × run grid of a comparison: one row per question with every metric of every
//! run, and whether each run failed the question on the primary metric, so a face can show all
//! of a question's scores on one line and filter to the failures (promptfoo's pass/fail grid).

use crate::metrics::{in_report_order, readable_name};
use crate::stats::RunReport;
use serde::Serialize;
use std::collections::BTreeMap;

/// Under this score a question fails on a metric that has no pass rule of its own; a judge
/// with a pass threshold fails a question where its label did not pass.
pub const FAILS_BELOW: f64 = 0.5;

/// One question across the runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GridRow {
    pub question_id: String,
    pub question: String,
    /// Per run (in the runs' order), per metric (in `QuestionGrid::metrics` order): the score;
    /// None where the run did not score it (unscored, errored or not asked).
    pub scores: Vec<Vec<Option<f64>>>,
    /// Per run: whether it failed the question on the primary metric (the target's error, a
    /// judge label that did not pass, or a score under `FAILS_BELOW`); an unscored primary is
    /// not a failure.
    pub failed: Vec<bool>,
    /// Per run: the target's error on this question, if any.
    pub errors: Vec<Option<String>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QuestionGrid {
    /// The primary metric first, then the others in report order.
    pub metrics: Vec<String>,
    /// The name a person reads for each of `metrics` ("Token F1"; a judge keeps its own name).
    pub labels: Vec<String>,
    /// Questions in the first run's order, then any only later runs asked.
    pub rows: Vec<GridRow>,
    /// `FAILS_BELOW`, for the face to say the rule it marks failures by.
    pub fails_below: f64,
}

/// The grid of `reports` (in order) with `primary` as the metric that decides failures.
pub fn question_grid(reports: &[RunReport], primary: &str) -> QuestionGrid {
    let mut metrics = in_report_order(reports.iter().flat_map(|r| r.summary.metrics.keys()));
    if let Some(at) = metrics.iter().position(|m| m == primary) {
        let first = metrics.remove(at);
        metrics.insert(0, first);
    }
    let mut order: Vec<(String, String)> = Vec::new();
    for report in reports {
        for item in &report.items {
            if !order.iter().any(|(id, _)| *id == item.question.id) {
                order.push((item.question.id.clone(), item.question.question.clone()));
            }
        }
    }
    let by_id: Vec<BTreeMap<&str, &crate::record::ItemRecord>> =
        reports.iter().map(|r| r.items.iter().map(|i| (i.question.id.as_str(), i)).collect()).collect();
    let rows = order
        .into_iter()
        .map(|(question_id, question)| {
            let items: Vec<_> = by_id.iter().map(|items| items.get(question_id.as_str()).copied()).collect();
            let score = |item: &crate::record::ItemRecord, metric: &str| {
                item.metrics.get(metric).copied().or_else(|| item.verdicts.get(metric).and_then(|v| v.score))
            };
            GridRow {
                scores: items
                    .iter()
                    .map(|item| metrics.iter().map(|m| item.and_then(|i| score(i, m))).collect())
                    .collect(),
                failed: items
                    .iter()
                    .map(|item| match item {
                        None => false,
                        Some(i) if i.error.is_some() => true,
                        Some(i) => match i.verdicts.get(primary).and_then(|v| v.passed) {
                            Some(passed) => !passed,
                            None => score(i, primary).is_some_and(|s| s < FAILS_BELOW),
                        },
                    })
                    .collect(),
                errors: items.iter().map(|item| item.and_then(|i| i.error.clone())).collect(),
                question_id,
                question,
            }
        })
        .collect();
    let labels = metrics.iter().map(|m| readable_name(m).map_or_else(|| m.clone(), str::to_string)).collect();
    QuestionGrid { metrics, labels, rows, fails_below: FAILS_BELOW }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::Question;
    use crate::record::{ItemRecord, RunRecord, RunStatus, Verdict};
    use crate::stats::summarize;

    fn item(id: &str, token_f1: f64, correct: Option<bool>, error: Option<&str>) -> ItemRecord {
        let mut verdicts = BTreeMap::new();
        if let Some(passed) = correct {
            let score = if passed { 0.9 } else { 0.2 };
            verdicts.insert("correct".to_string(), Verdict { score: Some(score), passed: Some(passed), ..Verdict::default() });
        }
        ItemRecord {
            question: Question { id: id.into(), question: format!("question {id}"), ..Question::default() },
            metrics: if error.is_some() { BTreeMap::new() } else { [("token_f1".to_string(), token_f1)].into() },
            verdicts,
            error: error.map(String::from),
            ..ItemRecord::default()
        }
    }

    fn report(name: &str, items: Vec<ItemRecord>) -> RunReport {
        let run = RunRecord {
            id: name.into(),
            name: name.into(),
            dataset: "d".into(),
            dataset_root: "d".into(),
            dataset_fingerprint: "f".into(),
            // Only what the grid reads is set; the rest as a stored run without them reads back.
            config: serde_json::from_value(serde_json::json!({ "target": "answers:a.jsonl", "top_k": 5, "seed": 0 }))
                .expect("a minimal stored config"),
            config_hash: "h".into(),
            status: RunStatus::Finished,
            total_items: items.len(),
            created_at: "2026-11-27T00:00:00Z".into(),
            finished_at: None,
            experiment: None,
        };
        RunReport { summary: summarize(&items, 0), run, items }
    }

    #[test]
    fn primary_first_with_readable_labels_and_failures_by_its_rule() {
        let a = report("a", vec![item("q1", 0.9, Some(true), None), item("q2", 0.1, Some(true), None)]);
        let b = report("b", vec![item("q2", 0.8, Some(false), None), item("q3", 0.0, None, Some("timed out"))]);
        let grid = question_grid(&[a, b], "correct");
        assert_eq!(grid.metrics, ["correct", "token_f1"]);
        assert_eq!(grid.labels, ["correct", "Token F1"], "a judge keeps its own name");
        let ids: Vec<_> = grid.rows.iter().map(|r| r.question_id.as_str()).collect();
        assert_eq!(ids, ["q1", "q2", "q3"], "the first run's order, then questions only later runs asked");
        // q2: A passed the judge though its token F1 is low (the judge's rule decides); B's label failed.
        assert_eq!(grid.rows[1].failed, [false, true]);
        assert_eq!(grid.rows[1].scores, [vec![Some(0.9), Some(0.1)], vec![Some(0.2), Some(0.8)]]);
        // q1 was not asked of B: no scores and no failure; q3 errored in B: a failure with its error.
        assert_eq!((grid.rows[0].failed.clone(), grid.rows[0].scores[1].clone()), (vec![false, false], vec![None, None]));
        assert_eq!(grid.rows[2].failed, [false, true]);
        assert_eq!(grid.rows[2].errors[1].as_deref(), Some("timed out"));
    }

    #[test]
    fn a_metric_without_a_pass_rule_fails_under_the_threshold() {
        let a = report("a", vec![item("q1", FAILS_BELOW - 0.01, None, None), item("q2", FAILS_BELOW, None, None)]);
        let grid = question_grid(&[a], "token_f1");
        assert_eq!(grid.rows.iter().map(|r| r.failed[0]).collect::<Vec<_>>(), [true, false]);
    }
}

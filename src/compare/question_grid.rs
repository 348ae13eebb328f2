//! The question × run grid of a comparison: one row per question with every metric of every
//! run, and whether each run failed the question on the primary metric, so a face can show all
//! of a question's scores on one line and filter to the failures (promptfoo's pass/fail grid).

use crate::metrics::in_report_order;
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
    QuestionGrid { metrics, rows, fails_below: FAILS_BELOW }
}

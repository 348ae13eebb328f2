//! How a run's metrics are read: the primary metric, then the report's groups (judges, answer
//! overlap, citations and refusals, retrieval) in report order, each metric with a readable
//! name and its one-line description; and what a judge's score is, in words. The faces lay a
//! run out from this rather than keeping lists of their own.

use crate::compare::default_primary;
use crate::metrics::{describe, metric_group, readable_name, METRIC_GROUPS};
use crate::stats::RunReport;
use serde::Serialize;
use std::collections::BTreeMap;

/// One metric (or judge) of a run as a face names and explains it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricEntry {
    /// The name the run stores the scores under.
    pub name: String,
    /// The name a person reads ("Token F1"; a judge keeps its own name).
    pub label: String,
    /// What it measures, in one line; None when nothing describes it.
    pub description: Option<String>,
}

/// One of the report's groups with the run's metrics in it, in report order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricSection {
    pub group: &'static str,
    pub metrics: Vec<MetricEntry>,
}

/// The primary metric first, then the other metrics by group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricGuide {
    /// The metric a comparison of this run would lead with (`compare::default_primary`);
    /// None when the run has no scores.
    pub primary: Option<MetricEntry>,
    /// The other metrics, grouped as the Markdown report groups them; empty groups left out.
    pub sections: Vec<MetricSection>,
}

/// The guide to `report`'s summary. `judge_descriptions` names what each judge asks (the judge
/// catalog's descriptions, which this layer cannot read itself).
pub fn metric_guide(report: &RunReport, judge_descriptions: &BTreeMap<String, String>) -> MetricGuide {
    let entry = |name: &str| MetricEntry {
        name: name.to_string(),
        label: readable_name(name).map_or_else(|| name.to_string(), str::to_string),
        description: describe(name).map(str::to_string).or_else(|| judge_descriptions.get(name).cloned()),
    };
    let names = super::ordered_metric_names(report.summary.metrics.keys());
    let primary = (!names.is_empty()).then(|| default_primary(report, report)).filter(|p| names.contains(p));
    let sections = METRIC_GROUPS
        .iter()
        .map(|group| MetricSection {
            group,
            metrics: names
                .iter()
                .filter(|n| metric_group(n) == *group && Some(*n) != primary.as_ref())
                .map(|n| entry(n))
                .collect(),
        })
        .filter(|section| !section.metrics.is_empty())
        .collect();
    MetricGuide { primary: primary.as_deref().map(entry), sections }
}

/// What a judge's score is, given its outcomes from worst to best: with two outcomes the
/// probability of the second ("score = P(Abstained)"), with more the expected grade with the
/// worst at 0 and the best at 1. Said beside every verdict, so a label and a score that seem
/// to disagree ("Attempted · score 0.241") read as what they are.
pub fn score_meaning(outcomes: &[String]) -> String {
    match outcomes {
        [] => "score in [0, 1]".to_string(),
        [only] => format!("score = P({only})"),
        [_, second] => format!("score = P({second})"),
        [first, .., last] => format!("score = expected grade, {first} = 0 … {last} = 1"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_score_is_named_by_the_outcomes() {
        let two = ["Attempted".to_string(), "Abstained".to_string()];
        assert_eq!(score_meaning(&two), "score = P(Abstained)");
        let three = ["Wrong", "Partial", "Right"].map(String::from);
        assert_eq!(score_meaning(&three), "score = expected grade, Wrong = 0 … Right = 1");
    }
}

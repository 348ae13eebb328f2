//! An experiment's runs compared as one: the assembly the CLI (`assay compare`, `assay run`
//! with several runs), the desktop app's Compare screen and the HTML / Markdown reports all
//! show. Every run after the first is compared with the first (the baseline) on one primary
//! metric; the runs are ranked on it; the primary metric is broken down by question group; the
//! questions the runs disagree on most come with both answers; and the difference gates
//! (`--fail-under METRIC=VALUE` on B − A) are checked. Written once here so the faces cannot
//! drift apart.

use super::breakdown::{breakdown, GroupBy, GroupDiff};
use super::leaderboard::{leaderboard, LeaderboardRow};
use super::headline::format_p;
use super::paired::{default_primary, Comparison, Verdict};
use super::runs::compare_runs_on;
use crate::stats::{parse_gate, Gate, RunReport};
use serde::Serialize;
use std::collections::BTreeSet;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CompareError {
    #[error("comparing needs at least two runs (the first is the baseline), or an experiment of several; got {0}")]
    TooFewRuns(usize),
    #[error("--primary {name}: no run has this metric; the runs have {known}")]
    UnknownPrimary { name: String, known: String },
    #[error("{0}")]
    Gate(String),
}

/// How to compare: the seed of every bootstrap, the primary metric (None: `default_primary`),
/// how to group the breakdown (None: by tag when the questions have tags), and difference gates.
#[derive(Debug, Clone, Default)]
pub struct ExperimentOptions {
    pub seed: u64,
    pub primary: Option<String>,
    pub by: Option<GroupBy>,
    /// `METRIC=VALUE`: fails when the lower end of B − A's interval is under VALUE (B may be
    /// worse than the baseline by at most that much).
    pub fail_under: Vec<String>,
}

/// One question two runs disagree on, with both answers (model text: escape where shown).
#[derive(Debug, Clone, Serialize)]
pub struct SideBySide {
    pub metric: String,
    pub question_id: String,
    pub question: String,
    pub reference: Option<String>,
    pub answer_a: Option<String>,
    pub answer_b: Option<String>,
    pub score_a: f64,
    pub score_b: f64,
}

/// The whole comparison of an experiment.
#[derive(Debug, Clone, Serialize)]
pub struct ExperimentComparison {
    /// The metric the leaderboard, the headlines and the breakdowns are on.
    pub primary: String,
    /// The runs ranked on the primary metric (ties where intervals overlap).
    pub leaderboard: Vec<LeaderboardRow>,
    /// Where the leaderboard (each run's own interval, unpaired) and a comparison's paired
    /// test on the same questions disagree, one sentence saying so and which to act on.
    pub leaderboard_notes: Vec<String>,
    /// Every later run against the first.
    pub comparisons: Vec<Comparison>,
    /// How the breakdowns group questions; None when there is nothing to group by.
    #[serde(skip)]
    pub grouped_by: Option<GroupBy>,
    /// Per comparison: the primary metric's difference per group (exploratory).
    pub breakdowns: Vec<Vec<GroupDiff>>,
    /// Per comparison: the most-disagreeing questions with both answers.
    pub side_by_side: Vec<Vec<SideBySide>>,
    /// One sentence per difference gate that failed; empty when all passed.
    pub gate_failures: Vec<String>,
}

/// Compare `reports` (the first is the baseline). Errors on fewer than two runs, an unknown
/// `--primary` or a malformed gate, before any figure is computed from them.
pub fn experiment(reports: &[RunReport], options: &ExperimentOptions) -> Result<ExperimentComparison, CompareError> {
    if reports.len() < 2 {
        return Err(CompareError::TooFewRuns(reports.len()));
    }
    let known = scored_names(reports);
    if let Some(name) = &options.primary {
        if !known.contains(name.as_str()) {
            let known = known.iter().copied().collect::<Vec<_>>().join(", ");
            return Err(CompareError::UnknownPrimary { name: name.clone(), known });
        }
    }
    let known_list: Vec<&str> = known.iter().copied().collect();
    let gates = options
        .fail_under
        .iter()
        .map(|g| parse_gate(g, &known_list))
        .collect::<Result<Vec<_>, _>>()
        .map_err(CompareError::Gate)?;
    let baseline = &reports[0];
    let primary = options.primary.clone().unwrap_or_else(|| default_primary(baseline, &reports[1]));
    let comparisons: Vec<Comparison> =
        reports[1..].iter().map(|b| compare_runs_on(baseline, b, options.seed, Some(&primary))).collect();
    let tagged = reports.iter().any(|r| r.items.iter().any(|i| !i.question.tags.is_empty()));
    let grouped_by = options.by.or(tagged.then_some(GroupBy::Tag));
    let breakdowns = reports[1..]
        .iter()
        .map(|b| match grouped_by {
            Some(by) => breakdown(baseline, b, &primary, by, options.seed),
            None => Vec::new(),
        })
        .collect();
    let side_by_side = comparisons.iter().zip(&reports[1..]).map(|(c, b)| side_by_side(c, baseline, b)).collect();
    let gate_failures = difference_gate_failures(&comparisons, &gates);
    let ranked = leaderboard(reports, &primary);
    Ok(ExperimentComparison {
        leaderboard_notes: leaderboard_notes(&ranked, &comparisons),
        leaderboard: ranked,
        primary,
        comparisons,
        grouped_by,
        breakdowns,
        side_by_side,
        gate_failures,
    })
}

/// The leaderboard ranks each run by its own interval; a comparison tests the paired
/// differences on the same questions, which leaves out how hard each question is and so
/// separates runs whose intervals overlap. Where the two disagree, say so in words.
fn leaderboard_notes(rows: &[LeaderboardRow], comparisons: &[Comparison]) -> Vec<String> {
    let rank = |run: &str| rows.iter().find(|r| r.run == run).map(|r| r.rank);
    comparisons
        .iter()
        .filter_map(|c| {
            let d = c.primary_diff()?;
            let (rank_a, rank_b) = (rank(&c.run_a)?, rank(&c.run_b)?);
            let separated = matches!(d.verdict, Verdict::ABetter | Verdict::BBetter);
            let p = format_p(d.adjusted_p);
            if separated && rank_a == rank_b {
                Some(format!(
                    "{} and {} share rank {rank_a} because their own intervals overlap (unpaired); the paired test on the \
                     same questions finds {} (p = {p}). The paired test is the one to act on: it compares each question \
                     with itself.",
                    c.name_a, c.name_b, d.verdict_text
                ))
            } else if !separated && rank_a != rank_b && d.pairs > 0 {
                Some(format!(
                    "{} and {} are ranked apart by their own intervals (unpaired), but the paired test on the questions \
                     both answered finds {} (p = {p}).",
                    c.name_a, c.name_b, d.verdict_text
                ))
            } else {
                None
            }
        })
        .collect()
}

/// Every metric and judge either run scored (what `--primary` and gates may name).
fn scored_names(reports: &[RunReport]) -> BTreeSet<&str> {
    reports.iter().flat_map(|r| r.summary.metrics.keys().map(String::as_str)).collect()
}

/// A difference gate bounds B − A from below: it fails when the lower end of the interval is
/// under the threshold. Written so that a NaN bound (no pairs) fails too.
pub fn difference_gate_failures(comparisons: &[Comparison], gates: &[Gate]) -> Vec<String> {
    let mut failures = Vec::new();
    for comparison in comparisons {
        for gate in gates {
            let Some(diff) = comparison.diffs.iter().find(|d| d.metric == gate.metric) else {
                continue;
            };
            if diff.ci95_diff[0].partial_cmp(&gate.threshold).is_none_or(|o| o.is_lt()) {
                failures.push(format!(
                    "{} − {} on {}: lower bound {:.4} is under {}",
                    comparison.name_b, comparison.name_a, gate.metric, diff.ci95_diff[0], gate.threshold
                ));
            }
        }
    }
    failures
}

fn side_by_side(comparison: &Comparison, a: &RunReport, b: &RunReport) -> Vec<SideBySide> {
    let answer = |report: &RunReport, id: &str| {
        report.items.iter().find(|i| i.question.id == id).and_then(|i| i.answer.as_ref().map(|a| a.text.clone()))
    };
    comparison
        .diffs
        .iter()
        .flat_map(|d| d.disagreements.iter().map(move |g| (d.metric.as_str(), g)))
        .map(|(metric, g)| {
            let question = a.items.iter().find(|i| i.question.id == g.question_id).map(|i| &i.question);
            SideBySide {
                metric: metric.to_string(),
                question_id: g.question_id.clone(),
                question: question.map(|q| q.question.clone()).unwrap_or_default(),
                reference: question.and_then(|q| q.answer.clone()),
                answer_a: answer(a, &g.question_id),
                answer_b: answer(b, &g.question_id),
                score_a: g.a,
                score_b: g.b,
            }
        })
        .collect()
}

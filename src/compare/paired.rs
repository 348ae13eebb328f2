//! Pairing two runs item by item and measuring their difference per metric.

use super::sign_test::sign_test_p;
use crate::stats::RunReport;
use crate::stats::{mean, mean_ci95};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// How many of the most different questions a comparison keeps per metric.
const DISAGREEMENTS_KEPT: usize = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The interval of B − A lies below zero.
    ABetter,
    /// The interval of B − A lies above zero.
    BBetter,
    NoSignificantDifference,
    /// Fewer than `MIN_PAIRS_FOR_VERDICT` questions scored in both runs.
    TooFewPairs,
    /// No question scored in both runs.
    NoPairs,
}

/// Fewer pairs than this get no verdict. On a handful of questions the percentile bootstrap's
/// interval is too narrow (it undercovers), and two or three pairs can exclude zero by chance;
/// even five wins out of five is not significant for the sign test (p = 0.0625).
pub const MIN_PAIRS_FOR_VERDICT: usize = 10;

impl Verdict {
    pub fn describe(self, a: &str, b: &str) -> String {
        match self {
            Verdict::ABetter => format!("{a} better"),
            Verdict::BBetter => format!("{b} better"),
            Verdict::NoSignificantDifference => "no significant difference".into(),
            Verdict::TooFewPairs => format!("too few pairs for a verdict (under {MIN_PAIRS_FOR_VERDICT})"),
            Verdict::NoPairs => "no paired items".into(),
        }
    }
}

/// One question where the runs differ, `b - a`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Disagreement {
    pub question_id: String,
    pub a: f64,
    pub b: f64,
    pub diff: f64,
}

/// The comparison of run B against baseline run A on one metric or judge.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PairedDiff {
    pub metric: String,
    /// Questions scored in both runs.
    pub pairs: usize,
    /// Questions scored in only one of the runs (unscored or missing in the other).
    pub excluded: usize,
    pub mean_a: f64,
    pub ci95_a: [f64; 2],
    pub mean_b: f64,
    pub ci95_b: [f64; 2],
    /// Mean of B − A over the pairs.
    pub mean_diff: f64,
    pub ci95_diff: [f64; 2],
    /// Questions where B scored higher / the same / lower than A.
    pub wins: usize,
    pub ties: usize,
    pub losses: usize,
    pub sign_test_p: f64,
    pub verdict: Verdict,
    pub disagreements: Vec<Disagreement>,
}

/// Run B compared with baseline run A.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub run_a: String,
    pub name_a: String,
    pub run_b: String,
    pub name_b: String,
    /// False when the runs were made on different versions of the dataset: pairs are still
    /// matched by question id, but the reader should know.
    pub same_dataset: bool,
    pub diffs: Vec<PairedDiff>,
}

/// Scores of one item by metric and judge name (judges under their own names).
fn item_scores(report: &RunReport) -> BTreeMap<String, BTreeMap<String, f64>> {
    let mut by_question = BTreeMap::new();
    for item in &report.items {
        let mut scores: BTreeMap<String, f64> = item.metrics.clone();
        for (judge, verdict) in &item.verdicts {
            if let Some(score) = verdict.score {
                scores.insert(judge.clone(), score);
            }
        }
        by_question.insert(item.question.id.clone(), scores);
    }
    by_question
}

/// Compare `b` with baseline `a` on every metric either run has. `seed` fixes the bootstrap.
pub fn compare_runs(a: &RunReport, b: &RunReport, seed: u64) -> Comparison {
    let scores_a = item_scores(a);
    let scores_b = item_scores(b);
    let metrics: BTreeSet<&String> = scores_a
        .values()
        .chain(scores_b.values())
        .flat_map(|s| s.keys())
        .collect();
    let questions: BTreeSet<&String> = scores_a.keys().chain(scores_b.keys()).collect();
    let diffs = metrics
        .into_iter()
        .map(|metric| {
            let mut pairs = Vec::new();
            let mut excluded = 0;
            for question in &questions {
                let va = scores_a.get(*question).and_then(|s| s.get(metric));
                let vb = scores_b.get(*question).and_then(|s| s.get(metric));
                match (va, vb) {
                    (Some(x), Some(y)) => pairs.push(((*question).clone(), *x, *y)),
                    (None, None) => {}
                    _ => excluded += 1,
                }
            }
            paired_diff(metric, &pairs, excluded, seed)
        })
        .collect();
    Comparison {
        run_a: a.run.id.clone(),
        name_a: a.run.name.clone(),
        run_b: b.run.id.clone(),
        name_b: b.run.name.clone(),
        same_dataset: a.run.dataset_fingerprint == b.run.dataset_fingerprint,
        diffs,
    }
}

/// The statistics of one metric over `(question, a, b)` pairs.
pub fn paired_diff(metric: &str, pairs: &[(String, f64, f64)], excluded: usize, seed: u64) -> PairedDiff {
    let a: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    let b: Vec<f64> = pairs.iter().map(|p| p.2).collect();
    let diffs: Vec<f64> = pairs.iter().map(|p| p.2 - p.1).collect();
    // Exact float equality is intended: metrics are computed the same way on both sides.
    let wins = diffs.iter().filter(|d| **d > 0.0).count();
    let losses = diffs.iter().filter(|d| **d < 0.0).count();
    let ties = diffs.len() - wins - losses;
    let ci_diff = paired_bootstrap_ci95(&diffs, seed);
    let verdict = match ci_diff {
        None => Verdict::NoPairs,
        Some(_) if pairs.len() < MIN_PAIRS_FOR_VERDICT => Verdict::TooFewPairs,
        Some((lo, _)) if lo > 0.0 => Verdict::BBetter,
        Some((_, hi)) if hi < 0.0 => Verdict::ABetter,
        Some(_) => Verdict::NoSignificantDifference,
    };
    let mut disagreements: Vec<Disagreement> = pairs
        .iter()
        .filter(|p| p.2 != p.1)
        .map(|p| Disagreement {
            question_id: p.0.clone(),
            a: p.1,
            b: p.2,
            diff: p.2 - p.1,
        })
        .collect();
    disagreements.sort_by(|x, y| {
        y.diff
            .abs()
            .total_cmp(&x.diff.abs())
            .then_with(|| x.question_id.cmp(&y.question_id))
    });
    disagreements.truncate(DISAGREEMENTS_KEPT);
    let pair = |ci: Option<(f64, f64)>| ci.map(|(l, h)| [l, h]).unwrap_or([f64::NAN, f64::NAN]);
    PairedDiff {
        metric: metric.to_string(),
        pairs: pairs.len(),
        excluded,
        mean_a: mean(&a).unwrap_or(f64::NAN),
        ci95_a: pair(mean_ci95(&a, seed)),
        mean_b: mean(&b).unwrap_or(f64::NAN),
        ci95_b: pair(mean_ci95(&b, seed)),
        mean_diff: mean(&diffs).unwrap_or(f64::NAN),
        ci95_diff: pair(ci_diff),
        wins,
        ties,
        losses,
        sign_test_p: sign_test_p(wins, losses),
        verdict,
        disagreements,
    }
}

/// Percentile bootstrap of the mean paired difference. Resampling the differences is
/// resampling whole pairs: each question's two scores stay together, which makes it paired.
fn paired_bootstrap_ci95(diffs: &[f64], seed: u64) -> Option<(f64, f64)> {
    mean_ci95(diffs, seed)
}

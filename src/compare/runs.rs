//! Comparing two runs: pair them by question, compute every metric's paired difference, mark
//! the primary metric, adjust the secondary ones behind it, and write the headline.

use super::headline::headline;
use super::paired::{adjust_secondary, default_primary, paired_diff, Comparison, PairedDiff};
use super::settings::settings_diff;
use super::verdict_words::verdict_words;
use crate::stats::RunReport;
use std::collections::{BTreeMap, BTreeSet};

/// Scores of one item by metric and judge name (judges under their own names).
pub(super) fn item_scores(report: &RunReport) -> BTreeMap<String, BTreeMap<String, f64>> {
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

/// Compare `b` with baseline `a` on every metric either run has, deciding on the default
/// primary metric. `seed` fixes the bootstrap and the Monte Carlo permutation test.
pub fn compare_runs(a: &RunReport, b: &RunReport, seed: u64) -> Comparison {
    compare_runs_on(a, b, seed, None)
}

/// As `compare_runs`, deciding on `primary` (None: `default_primary`).
pub fn compare_runs_on(a: &RunReport, b: &RunReport, seed: u64, primary: Option<&str>) -> Comparison {
    let scores_a = item_scores(a);
    let scores_b = item_scores(b);
    let metrics: BTreeSet<&String> = scores_a
        .values()
        .chain(scores_b.values())
        .flat_map(|s| s.keys())
        .collect();
    let questions: BTreeSet<&String> = scores_a.keys().chain(scores_b.keys()).collect();
    let primary_name = primary.map(str::to_string).unwrap_or_else(|| default_primary(a, b));
    let mut diffs: Vec<PairedDiff> = metrics
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
    let has_primary = diffs.iter().any(|d| d.metric == primary_name);
    for d in &mut diffs {
        d.primary = d.metric == primary_name;
    }
    adjust_secondary(&mut diffs);
    diffs.sort_by_key(|d| !d.primary);
    let settings = settings_diff(&a.run, &b.run);
    for d in &mut diffs {
        d.verdict_text = verdict_words(d, &a.run.name, &b.run.name, settings.confounded);
    }
    let mut comparison = Comparison {
        run_a: a.run.id.clone(),
        name_a: a.run.name.clone(),
        run_b: b.run.id.clone(),
        name_b: b.run.name.clone(),
        same_dataset: a.run.dataset_fingerprint == b.run.dataset_fingerprint,
        primary: has_primary.then_some(primary_name),
        diffs,
        settings,
        headline: String::new(),
    };
    comparison.headline = headline(&comparison);
    comparison
}

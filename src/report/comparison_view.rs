//! A comparison laid out for the HTML and Markdown exports, answer first: a headline on the
//! primary metric (both means with intervals, the difference, its p and the verdict in words,
//! or the difference these questions could have detected), then a row per metric (the primary
//! first, then the rest in the report's metric order) with raw and Holm-adjusted p, then the
//! questions where the runs disagree most, and the primary metric per question tag. Every
//! export of two runs or more also gets a leaderboard on the primary metric.

use super::{charts, ordered_metric_names};
use crate::compare::{experiment, format_p, Comparison, ExperimentOptions, GroupDiff, LeaderboardRow, Verdict};
use crate::stats::RunReport;
use serde::Serialize;

#[derive(Serialize)]
pub(crate) struct ComparisonView {
    pub name_a: String,
    pub name_b: String,
    pub same_dataset: bool,
    /// One sentence, computed from the primary metric's figures.
    pub headline: String,
    pub rows: Vec<ComparisonRow>,
    /// The SVG difference chart (empty when not asked for, as in Markdown).
    pub chart: String,
    pub disagreements: Vec<DisagreementView>,
    /// The primary metric's name, and its difference per question tag (empty when the
    /// questions have no tags).
    pub primary: String,
    pub breakdown: Vec<GroupRow>,
}

#[derive(Serialize)]
pub(crate) struct GroupRow {
    pub group: String,
    pub pairs: usize,
    pub a: String,
    pub b: String,
    pub diff: String,
    pub p: String,
    pub adjusted_p: String,
}

#[derive(Serialize)]
pub(crate) struct ComparisonRow {
    pub metric: String,
    /// "primary metric", or the secondary metric's group (judges, answer overlap, …).
    pub group: &'static str,
    pub a: String,
    pub b: String,
    pub diff: String,
    pub wtl: String,
    pub p: String,
    pub adjusted_p: String,
    pub pairs: String,
    pub verdict: String,
    pub class: &'static str,
}

#[derive(Serialize)]
pub(crate) struct DisagreementView {
    pub metric: String,
    pub question_id: String,
    pub a: String,
    pub b: String,
}

/// The comparison views and the leaderboard of `reports` (none below two runs), laid out from
/// the one comparison assembly the faces show too (`compare::experiment`).
pub(crate) fn experiment_views(reports: &[RunReport], seed: u64, with_charts: bool) -> (Vec<ComparisonView>, Option<LeaderboardView>) {
    let options = ExperimentOptions { seed, ..ExperimentOptions::default() };
    // Fewer than two runs is the only way this fails without gates or a named primary.
    let Ok(assembled) = experiment(reports, &options) else {
        return (Vec::new(), None);
    };
    let views = assembled
        .comparisons
        .iter()
        .zip(&assembled.breakdowns)
        .map(|(comparison, groups)| comparison_view(comparison, groups, with_charts))
        .collect();
    let leaderboard = (!assembled.leaderboard.is_empty())
        .then(|| LeaderboardView { metric: assembled.primary.clone(), rows: assembled.leaderboard.clone() });
    (views, leaderboard)
}

fn comparison_view(comparison: &Comparison, groups: &[GroupDiff], with_chart: bool) -> ComparisonView {
    let order = ordered_metric_names(comparison.diffs.iter().map(|d| &d.metric));
    let mut diffs = comparison.diffs.clone();
    diffs.sort_by_key(|d| (!d.primary, order.iter().position(|m| *m == d.metric)));
    let headline = comparison.headline.clone();
    let rows = diffs
        .iter()
        .filter(|d| d.pairs > 0)
        .map(|d| ComparisonRow {
            metric: if d.primary { format!("{} (primary)", d.metric) } else { d.metric.clone() },
            group: if d.primary { "primary metric" } else { crate::metrics::metric_group(&d.metric) },
            a: format!("{:.3} [{:.3}, {:.3}]", d.mean_a, d.ci95_a[0], d.ci95_a[1]),
            b: format!("{:.3} [{:.3}, {:.3}]", d.mean_b, d.ci95_b[0], d.ci95_b[1]),
            diff: format!("{:+.3} [{:+.3}, {:+.3}]", d.mean_diff, d.ci95_diff[0], d.ci95_diff[1]),
            wtl: format!("{}/{}/{}", d.wins, d.ties, d.losses),
            p: format_p(d.permutation_p),
            adjusted_p: if d.primary { "—".into() } else { format_p(d.adjusted_p) },
            pairs: if d.excluded > 0 { format!("{} ({} unpaired)", d.pairs, d.excluded) } else { d.pairs.to_string() },
            verdict: d.verdict.describe(&comparison.name_a, &comparison.name_b),
            class: match d.verdict {
                Verdict::BBetter => "better",
                Verdict::ABetter => "worse",
                _ => "",
            },
        })
        .collect();
    let chart = if with_chart { charts::difference_chart(comparison) } else { String::new() };
    let disagreements = diffs
        .iter()
        .flat_map(|d| {
            d.disagreements.iter().take(3).map(|x| DisagreementView {
                metric: d.metric.clone(),
                question_id: x.question_id.clone(),
                a: format!("{:.2}", x.a),
                b: format!("{:.2}", x.b),
            })
        })
        .collect();
    let breakdown = groups
        .iter()
        .map(|g| GroupRow {
            group: g.group.clone(),
            pairs: g.pairs,
            a: format!("{:.3}", g.mean_a),
            b: format!("{:.3}", g.mean_b),
            diff: format!("{:+.3} [{:+.3}, {:+.3}]", g.mean_diff, g.ci95_diff[0], g.ci95_diff[1]),
            p: format_p(g.permutation_p),
            adjusted_p: format_p(g.adjusted_p),
        })
        .collect();
    ComparisonView {
        primary: comparison.primary.clone().unwrap_or_default(),
        breakdown,
        name_a: comparison.name_a.clone(),
        name_b: comparison.name_b.clone(),
        same_dataset: comparison.same_dataset,
        headline,
        rows,
        chart,
        disagreements,
    }
}

/// The leaderboard of an experiment (two runs or more), on the primary metric every
/// comparison leads with.
#[derive(Serialize)]
pub(crate) struct LeaderboardView {
    pub metric: String,
    pub rows: Vec<LeaderboardRow>,
}

//! The charts of a set of runs, as SVG strings: one builder shared by the HTML report and the
//! desktop app, so both show the same pictures of the same numbers.

use super::svg_chart::{histogram_chart, interval_chart, IntervalRow};
use super::{ordered_metric_names, RunReport};
use crate::compare::Comparison;

/// Per metric (in report order): each run's mean with its 95% interval. A run without the
/// metric gets an empty row, so rows line up across charts.
pub fn mean_charts(reports: &[RunReport]) -> Vec<String> {
    metric_names(reports)
        .iter()
        .map(|name| {
            let rows: Vec<IntervalRow> = reports
                .iter()
                .map(|r| match r.summary.metrics.get(name) {
                    Some(m) => IntervalRow { label: r.run.name.clone(), value: m.mean, low: m.ci95[0], high: m.ci95[1] },
                    None => IntervalRow { label: r.run.name.clone(), value: f64::NAN, low: f64::NAN, high: f64::NAN },
                })
                .collect();
            interval_chart(&format!("{name}: mean with 95% interval"), &rows, 0.0, 1.0, None)
        })
        .collect()
}

/// One run's metrics (in report order) on one chart, each mean with its 95% interval.
pub fn run_means_chart(report: &RunReport) -> String {
    let rows: Vec<IntervalRow> = metric_names(std::slice::from_ref(report))
        .iter()
        .filter_map(|name| report.summary.metrics.get(name).map(|m| (name, m)))
        .map(|(name, m)| IntervalRow { label: name.clone(), value: m.mean, low: m.ci95[0], high: m.ci95[1] })
        .collect();
    interval_chart(&format!("{}: mean with 95% interval", report.run.name), &rows, 0.0, 1.0, None)
}

/// Per metric: the share of items in each score band, one series per run. A judge's score
/// counts for its metric name like a deterministic metric does.
pub fn distribution_charts(reports: &[RunReport]) -> Vec<String> {
    metric_names(reports)
        .iter()
        .map(|name| {
            let series: Vec<(String, Vec<f64>)> = reports
                .iter()
                .map(|r| {
                    let values = r
                        .items
                        .iter()
                        .filter_map(|i| i.metrics.get(name).copied().or_else(|| i.verdicts.get(name).and_then(|v| v.score)))
                        .collect();
                    (r.run.name.clone(), values)
                })
                .collect();
            histogram_chart(&format!("{name}: share of items per score band"), &series)
        })
        .collect()
}

/// B − A per metric with its paired 95% interval; metrics without pairs are left out.
pub fn difference_chart(comparison: &Comparison) -> String {
    let order = ordered_metric_names(comparison.diffs.iter().map(|d| &d.metric));
    let mut diffs: Vec<_> = comparison.diffs.iter().filter(|d| d.pairs > 0).collect();
    diffs.sort_by_key(|d| order.iter().position(|m| *m == d.metric));
    let rows: Vec<IntervalRow> = diffs
        .iter()
        .map(|d| IntervalRow { label: d.metric.clone(), value: d.mean_diff, low: d.ci95_diff[0], high: d.ci95_diff[1] })
        .collect();
    interval_chart(
        &format!("{} − {}: difference with 95% paired interval", comparison.name_b, comparison.name_a),
        &rows,
        -1.0,
        1.0,
        Some(0.0),
    )
}

fn metric_names(reports: &[RunReport]) -> Vec<String> {
    ordered_metric_names(reports.iter().flat_map(|r| r.summary.metrics.keys()))
}

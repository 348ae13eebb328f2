//! A leaderboard for an experiment of several runs: one row per run on the primary metric, its
//! mean with its 95% interval, and a rank that ties runs whose intervals overlap (a run ranks
//! below another only when its whole interval lies under the other's).

use crate::stats::RunReport;
use serde::Serialize;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LeaderboardRow {
    /// 1 for the best; runs whose intervals overlap share a rank.
    pub rank: usize,
    pub run: String,
    pub name: String,
    pub mean: f64,
    pub ci95: [f64; 2],
    /// Items the metric scored in this run.
    pub n: usize,
}

/// The runs that have `metric`, best first. A run's rank is one more than the number of runs
/// whose interval lies wholly above its own.
pub fn leaderboard(reports: &[RunReport], metric: &str) -> Vec<LeaderboardRow> {
    let mut rows: Vec<LeaderboardRow> = reports
        .iter()
        .filter_map(|r| {
            let m = r.summary.metrics.get(metric)?;
            Some(LeaderboardRow { rank: 0, run: r.run.id.clone(), name: r.run.name.clone(), mean: m.mean, ci95: m.ci95, n: m.n })
        })
        .collect();
    let bounds: Vec<[f64; 2]> = rows.iter().map(|r| r.ci95).collect();
    for row in &mut rows {
        row.rank = 1 + bounds.iter().filter(|other| other[0] > row.ci95[1]).count();
    }
    rows.sort_by(|x, y| x.rank.cmp(&y.rank).then(y.mean.total_cmp(&x.mean)));
    rows
}

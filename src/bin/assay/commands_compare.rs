//! `assay compare`: every run after the first against the first (the baseline), per metric.

use crate::print::print_comparison;
use crate::stored_runs::reports_with_gates;
use crate::DbArg;
use crate::print::{print_breakdown, print_leaderboard};
use assay::compare::{breakdown, compare_runs_on, default_primary, leaderboard, Comparison, GroupBy};

pub fn compare(
    references: &[String],
    json: bool,
    fail_under: &[String],
    seed: u64,
    primary: Option<&str>,
    by: Option<GroupBy>,
    db: &DbArg,
) -> anyhow::Result<i32> {
    let (reports, gates) = reports_with_gates(references, fail_under, db)?;
    if reports.len() < 2 {
        anyhow::bail!("compare needs at least two runs (the first is the baseline), or an experiment");
    }

    let comparisons: Vec<Comparison> = reports[1..]
        .iter()
        .map(|b| compare_runs_on(&reports[0], b, seed, primary))
        .collect();
    if let Some(name) = primary {
        let known = comparisons.iter().any(|c| c.diffs.iter().any(|d| d.metric == name));
        if !known {
            let names: std::collections::BTreeSet<&str> =
                comparisons.iter().flat_map(|c| c.diffs.iter().map(|d| d.metric.as_str())).collect();
            anyhow::bail!(
                "--primary {name}: no run has this metric; the runs have {}",
                names.into_iter().collect::<Vec<_>>().join(", ")
            );
        }
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&comparisons)?);
    } else {
        // An experiment of several runs: who leads on the primary metric, ties where the
        // intervals overlap.
        let primary_name = primary.map(str::to_string).unwrap_or_else(|| default_primary(&reports[0], &reports[1]));
        if reports.len() > 1 {
            print_leaderboard(&primary_name, &leaderboard(&reports, &primary_name));
        }
        for (comparison, b) in comparisons.iter().zip(&reports[1..]) {
            print_comparison(comparison);
            if let Some(by) = by {
                print_breakdown(comparison, by, &breakdown(&reports[0], b, &primary_name, by, seed));
            }
        }
    }

    // A compare gate bounds the difference to the baseline from below: fail when the lower
    // end of the interval of B − A is under the value (B may be worse by at most that much).
    let mut failures = Vec::new();
    for comparison in &comparisons {
        for gate in &gates {
            let Some(diff) = comparison.diffs.iter().find(|d| d.metric == gate.metric) else {
                continue;
            };
            // Written so that a NaN bound (no pairs) fails the gate too.
            if diff.ci95_diff[0].partial_cmp(&gate.threshold).is_none_or(|o| o.is_lt()) {
                failures.push(format!(
                    "{} − {} on {}: lower bound {:.4} is under {}",
                    comparison.name_b, comparison.name_a, gate.metric, diff.ci95_diff[0], gate.threshold
                ));
            }
        }
    }
    if !failures.is_empty() {
        eprintln!("gate failed: {}", failures.join("; "));
        return Ok(1);
    }
    Ok(0)
}

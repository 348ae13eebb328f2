//! `assay compare`: every run after the first against the first (the baseline), per metric.

use crate::commands_data::reports_with_gates;
use crate::{terminal, DbArg};
use assay::compare::{compare_runs, Comparison};

pub fn compare(
    references: &[String],
    json: bool,
    fail_under: &[String],
    seed: u64,
    db: &DbArg,
) -> anyhow::Result<i32> {
    let (reports, gates) = reports_with_gates(references, fail_under, db)?;
    if reports.len() < 2 {
        anyhow::bail!("compare needs at least two runs (the first is the baseline), or an experiment");
    }

    let comparisons: Vec<Comparison> = reports[1..]
        .iter()
        .map(|b| compare_runs(&reports[0], b, seed))
        .collect();
    if json {
        println!("{}", serde_json::to_string_pretty(&comparisons)?);
    } else {
        for comparison in &comparisons {
            print_comparison(comparison);
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

pub fn print_comparison(c: &Comparison) {
    println!(
        "A = {} ({})   B = {} ({})",
        terminal::line(&c.name_a, 40),
        c.run_a,
        terminal::line(&c.name_b, 40),
        c.run_b
    );
    if !c.same_dataset {
        println!("note: the runs used different versions of the dataset; pairs matched by question id");
    }
    println!(
        "{}  {:>22}  {:>22}  {:>25}  {:>11}  {:>7}  verdict",
        terminal::pad("metric", 18),
        "A mean [95% CI]",
        "B mean [95% CI]",
        "B − A [95% CI]",
        "wins/ties/losses",
        "p"
    );
    for d in &c.diffs {
        if d.pairs == 0 {
            println!(
                "{}  no question scored in both runs ({} scored in one only)",
                terminal::pad(&d.metric, 18),
                d.excluded
            );
            continue;
        }
        let excluded = if d.excluded > 0 {
            format!(" ({} unpaired)", d.excluded)
        } else {
            String::new()
        };
        println!(
            "{}  {:>6.3} [{:>6.3},{:>6.3}]  {:>6.3} [{:>6.3},{:>6.3}]  {:>+7.3} [{:>+7.3},{:>+7.3}]  {:>16}  {:>7}  {}{}",
            terminal::pad(&d.metric, 18),
            d.mean_a,
            d.ci95_a[0],
            d.ci95_a[1],
            d.mean_b,
            d.ci95_b[0],
            d.ci95_b[1],
            d.mean_diff,
            d.ci95_diff[0],
            d.ci95_diff[1],
            format!("{}/{}/{}", d.wins, d.ties, d.losses),
            format_p(d.sign_test_p),
            d.verdict.describe(&c.name_a, &c.name_b),
            excluded
        );
    }
    println!();
}

/// Small p-values in scientific notation, so "0.0000" never hides how small.
fn format_p(p: f64) -> String {
    if p < 0.001 {
        format!("{p:.1e}")
    } else {
        format!("{p:.4}")
    }
}

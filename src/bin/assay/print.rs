//! What the CLI prints on stdout for people: run summaries, comparisons, knowledge removal.
//! Every figure comes from the core; this module only lays it out, and passes model and
//! dataset text through `terminal` so it cannot drive the terminal.

use crate::terminal;
use assay::compare::{Comparison, KnowledgeRemoval};
use assay::report::RunReport;

/// Both abstention rates of a knowledge-removal pair of runs and their difference.
pub fn print_knowledge_removal(k: &KnowledgeRemoval, in_scope: &str, removed: &str) {
    let d = &k.abstained;
    println!(
        "knowledge removal: A = {} ({})   B = {} ({})",
        terminal::line(in_scope, 40),
        k.in_scope_run,
        terminal::line(removed, 40),
        k.removed_run
    );
    if d.pairs == 0 {
        println!("  no question has an abstention verdict in both runs ({} in one only)", d.excluded);
        return;
    }
    let unpaired = if d.excluded > 0 { format!(", {} left out (unscored in a run)", d.excluded) } else { String::new() };
    println!("  questions with a golden context: {}{unpaired}", d.pairs);
    println!(
        "  abstains with the context in the index:  {:.3} [{:.3}, {:.3}]",
        d.mean_a, d.ci95_a[0], d.ci95_a[1]
    );
    println!(
        "  abstains with the context removed:       {:.3} [{:.3}, {:.3}]",
        d.mean_b, d.ci95_b[0], d.ci95_b[1]
    );
    println!(
        "  difference (removed − in index):        {:+.3} [{:+.3}, {:+.3}]  ({}/{}/{} more/same/fewer abstentions, sign test p = {:.3})",
        d.mean_diff, d.ci95_diff[0], d.ci95_diff[1], d.wins, d.ties, d.losses, d.sign_test_p
    );
    println!(
        "  answers anyway without the context:      {:.3}  (invented or from the model's own knowledge)",
        1.0 - d.mean_b
    );
}

/// The eShopSupport evaluator's closing lines, with intervals: items, average duration, and the
/// mean of every metric.
pub fn print_run_summary(report: &RunReport) {
    let summary = &report.summary;
    println!(
        "{}  {}  [{}]",
        report.run.id,
        terminal::line(&report.run.name, 60),
        report.run.status.as_str()
    );
    println!(
        "items: {}/{}   errors: {}   avg duration: {}",
        summary.items,
        report.run.total_items,
        summary.errors,
        summary
            .avg_latency_ms
            .map(|l| format!("{l:.1} ms"))
            .unwrap_or_else(|| "—".into())
    );
    if summary.metrics.is_empty() {
        println!("no scored items");
        return;
    }
    println!("{}  {:>6}  {:>17}  {:>4}  {:>8}", terminal::pad("metric", 20), "mean", "95% CI", "n", "unscored");
    for (name, m) in &summary.metrics {
        println!(
            "{}  {:>6.3}  [{:>6.3}, {:>6.3}]  {:>4}  {:>8}",
            terminal::pad(name, 20),
            m.mean,
            m.ci95[0],
            m.ci95[1],
            m.n,
            m.unscored
        );
    }
}

/// Each metric of a comparison: both means with intervals, the difference, W/T/L, verdict.
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

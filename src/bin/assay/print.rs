//! What the CLI prints on stdout for people: run summaries, comparisons, knowledge removal.
//! Every figure comes from the core; this module only lays it out, and passes model and
//! dataset text through `terminal` so it cannot drive the terminal.

use assay::compare::{format_p, Comparison, ExperimentComparison, GroupBy, GroupDiff, KnowledgeRemoval, LeaderboardRow};
use assay::record::{ItemRecord, StatementCheck};
use assay::report::{flagged_lines, judged_statements};
use assay::stats::RunReport;
use crate::terminal;

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
    // Before the scores: each flag says which scores to read with care, and why.
    for line in flagged_lines(report) {
        println!("{}", terminal::line(&line, 300));
    }
    if summary.metrics.is_empty() {
        println!("no scored items");
        return;
    }
    println!(
        "{}  {:>6}  {:>17}  {:>4}  {:>8}  {:>6}  {:>8}",
        terminal::pad("metric", 20),
        "mean",
        "95% CI",
        "n",
        "unscored",
        "passed",
        "length ρ"
    );
    for (name, m) in &summary.metrics {
        println!(
            "{}  {:>6.3}  [{:>6.3}, {:>6.3}]  {:>4}  {:>8}  {:>6}  {:>8}",
            terminal::pad(name, 20),
            m.mean,
            m.ci95[0],
            m.ci95[1],
            m.n,
            m.unscored,
            m.pass_rate.map(|p| format!("{:.0}%", p * 100.0)).unwrap_or_default(),
            m.length_spearman.map(|rho| format!("{rho:.2}")).unwrap_or_default()
        );
    }
}

/// A comparison, answer first: the headline on the primary metric (both means with intervals,
/// the difference, its p and the verdict in words, or what difference these questions could
/// have detected), then every metric: the primary, then the secondary ones with raw and
/// Holm-adjusted p.
fn print_comparison(c: &Comparison) {
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
    print_settings(c);
    println!("{}", terminal::line(&c.headline, 2_000));
    println!(
        "{}  {:>22}  {:>22}  {:>25}  {:>11}  {:>7}  {:>7}  verdict",
        terminal::pad("metric", 20),
        "A mean [95% CI]",
        "B mean [95% CI]",
        "B − A [95% BCa CI]",
        "wins/ties/losses",
        "p",
        "Holm p"
    );
    for d in &c.diffs {
        let name = if d.primary { format!("{} (primary)", d.metric) } else { d.metric.clone() };
        if d.pairs == 0 {
            println!(
                "{}  no question scored in both runs ({} scored in one only)",
                terminal::pad(&name, 20),
                d.excluded
            );
            continue;
        }
        let excluded = if d.excluded > 0 {
            format!(" ({} unpaired)", d.excluded)
        } else {
            String::new()
        };
        let adjusted = if d.primary { "—".to_string() } else { format_p(d.adjusted_p) };
        println!(
            "{}  {:>6.3} [{:>6.3},{:>6.3}]  {:>6.3} [{:>6.3},{:>6.3}]  {:>+7.3} [{:>+7.3},{:>+7.3}]  {:>16}  {:>7}  {:>7}  {}{}",
            terminal::pad(&name, 20),
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
            format_p(d.permutation_p),
            adjusted,
            terminal::line(&d.verdict_text, 200),
            excluded
        );
    }
    println!("p: paired permutation test; Holm p: adjusted over the secondary metrics and never below the primary's p; a verdict needs p < 0.05 and the interval off zero");
    println!();
}

/// An experiment's comparison as the library assembled it: the leaderboard, then every later
/// run against the first, each with its breakdown when `with_breakdown` (and there is one).
pub fn print_experiment(experiment: &ExperimentComparison, with_breakdown: bool) {
    print_leaderboard(&experiment.primary, &experiment.leaderboard);
    for note in &experiment.leaderboard_notes {
        println!("note: {}", terminal::line(note, 600));
    }
    if !experiment.leaderboard_notes.is_empty() {
        println!();
    }
    for (comparison, groups) in experiment.comparisons.iter().zip(&experiment.breakdowns) {
        print_comparison(comparison);
        if let (true, Some(by)) = (with_breakdown, experiment.grouped_by) {
            print_breakdown(comparison, by, groups);
        }
    }
}

/// What differs between A and B (the rows that differ, then how many are the same); the
/// library's warning when more than one setting differs and the verdicts are confounded.
fn print_settings(c: &Comparison) {
    let differing: Vec<_> = c.settings.rows.iter().filter(|r| r.differs).collect();
    if differing.is_empty() {
        println!("settings: the same in both runs");
    }
    for row in &differing {
        println!(
            "differs: {}  A {}  B {}",
            terminal::pad(&row.setting, 24),
            terminal::line(&row.a, 60),
            terminal::line(&row.b, 60)
        );
    }
    if let Some(warning) = &c.settings.warning {
        println!("warning: {}", terminal::line(warning, 600));
    }
}

/// The runs of an experiment ranked on the primary metric (ties where intervals overlap).
fn print_leaderboard(metric: &str, rows: &[LeaderboardRow]) {
    println!("leaderboard on {} (primary metric; runs whose intervals overlap share a rank):", terminal::line(metric, 30));
    for row in rows {
        println!(
            "  {:>2}. {}  {:.3} [{:.3}, {:.3}]  n={}  ({})",
            row.rank,
            terminal::pad(&row.name, 40),
            row.mean,
            row.ci95[0],
            row.ci95[1],
            row.n,
            row.run
        );
    }
    println!();
}

/// The primary metric's difference per tag or document (exploratory).
fn print_breakdown(c: &Comparison, by: GroupBy, rows: &[GroupDiff]) {
    let metric = c.primary.as_deref().unwrap_or("the primary metric");
    let what = match by {
        GroupBy::Tag => "tag",
        GroupBy::Doc => "document",
    };
    println!("{} by {what} (exploratory; BH p adjusted across these groups):", terminal::line(metric, 30));
    println!("  {}  {:>5}  {:>6}  {:>6}  {:>25}  {:>7}  {:>7}", terminal::pad(what, 24), "n", "A", "B", "B − A [95% BCa CI]", "p", "BH p");
    for r in rows {
        println!(
            "  {}  {:>5}  {:>6.3}  {:>6.3}  {:>+7.3} [{:>+7.3},{:>+7.3}]  {:>7}  {:>7}",
            terminal::pad(&r.group, 24),
            r.pairs,
            r.mean_a,
            r.mean_b,
            r.mean_diff,
            r.ci95_diff[0],
            r.ci95_diff[1],
            format_p(r.permutation_p),
            format_p(r.adjusted_p)
        );
    }
    println!();
}

/// What a reader must see under an item's row: its flags, then each statement judge's
/// unsupported answer statements and missed reference statements with their probability of
/// being supported and any number the reference contradicts. Nothing when there is nothing.
pub fn print_item_findings(item: &ItemRecord, indent: usize) {
    let pad = " ".repeat(indent);
    let flags = assay::stats::item_flags(item);
    if !flags.is_empty() {
        println!("{pad}! flagged: {}", terminal::line(&flags.join(", "), 200));
    }
    let judged = judged_statements(item);
    // The judge's name only where two statement judges could be told apart by it.
    let named = judged.len() > 1;
    for j in &judged {
        let judge = if named { format!("{}: ", terminal::line(&j.judge, 40)) } else { String::new() };
        let shown = |kind: &str, check: &StatementCheck| {
            println!("{pad}{judge}{kind} (P supported {:.2}): {}", check.supported, terminal::line(&check.text, 300));
            if let Some(conflict) = &check.number_conflict {
                println!("{pad}    number conflict: {}", terminal::line(conflict, 300));
            }
        };
        for check in j.unsupported() {
            shown("unsupported", check);
        }
        for check in j.missed() {
            shown("missed", check);
        }
    }
}

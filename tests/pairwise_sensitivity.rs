//! Pairwise against absolute judging on two real model runs (issue 34, "Measure it"): the
//! runs, their `correct` verdicts and the pairwise judgments are made and stored by
//! `scripts/pairwise-sensitivity.sh`; this reads them back and, over growing prefixes of the
//! questions both runs answered (10, 20, …), computes each method's verdict with the
//! comparison's own code (`compare::experiment` on the prefix for the absolute judge,
//! `compare::pairwise_outcome` on the prefix's judgments for the pairwise one), then each
//! judge model's order bias on these answers. On demand only (it needs the script's database):
//! `ASSAY_SENS_DB=… ASSAY_SENS_RUNS=A,B ASSAY_SENS_JUDGE_MODELS=M1,M2 cargo test -p assay
//! --test integration pairwise_sensitivity::real_runs -- --ignored --nocapture`.

use std::collections::BTreeSet;
use std::path::Path;

use assay::compare::{experiment, pairwise_outcome, ExperimentOptions, PairedDiff, PairwiseOutcome, PairwiseSource, Verdict};
use assay::record::PairwiseJudgment;
use assay::stats::{load_report, summarize, RunReport};
use assay::store::Store;

/// The absolute judge the runs were scored by, and the comparison's primary metric here.
const ABSOLUTE: &str = "correct";

fn setting(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set: run scripts/pairwise-sensitivity.sh, which sets it"))
}

/// The reports cut down to the questions in `keep`, their summaries computed again from the
/// items left (as a run of only those questions would have them).
fn only(reports: &[RunReport], keep: &BTreeSet<&str>) -> Vec<RunReport> {
    reports
        .iter()
        .map(|r| {
            let items: Vec<_> = r.items.iter().filter(|i| keep.contains(i.question.id.as_str())).cloned().collect();
            RunReport { run: r.run.clone(), summary: summarize(&items, r.run.config.seed), items }
        })
        .collect()
}

fn absolute(reports: &[RunReport]) -> PairedDiff {
    let options = ExperimentOptions { primary: Some(ABSOLUTE.into()), ..ExperimentOptions::default() };
    let compared = experiment(reports, &options).expect("the two runs compare on correct");
    compared.comparisons[0].primary_diff().expect("both runs were judged by correct").clone()
}

fn prefix_outcome(whole: &PairwiseOutcome, n: usize) -> PairwiseOutcome {
    let source = PairwiseSource { scoring: None, excluded: 0, reused: n, judged: 0, ..whole.source.clone() };
    pairwise_outcome(source, whole.judgments[..n].to_vec())
}

fn decided(verdict: Verdict) -> bool {
    matches!(verdict, Verdict::ABetter | Verdict::BBetter)
}

fn mean_of(judgments: &[&PairwiseJudgment], value: impl Fn(&PairwiseJudgment) -> f64) -> f64 {
    judgments.iter().map(|j| value(j)).sum::<f64>() / judgments.len() as f64
}

#[test]
#[ignore]
fn real_runs() {
    let database = setting("ASSAY_SENS_DB");
    let runs = setting("ASSAY_SENS_RUNS");
    let judge_models = setting("ASSAY_SENS_JUDGE_MODELS");
    let run_names: Vec<&str> = runs.split(',').collect();
    assert_eq!(run_names.len(), 2, "ASSAY_SENS_RUNS names two runs, A then B: {runs:?}");
    let store = Store::open_existing(Path::new(&database)).unwrap();
    let records: Vec<_> = run_names.iter().map(|name| store.find_run(name).unwrap_or_else(|e| panic!("{name}: {e}"))).collect();
    let reports: Vec<RunReport> = records.iter().map(|r| load_report(&store, r.clone()).unwrap()).collect();
    let (name_a, name_b) = (&records[0].name, &records[1].name);

    // Every judge model's stored judgments of the two runs; the first model is the one whose
    // sensitivity is measured (the default judge model).
    let outcomes: Vec<(&str, PairwiseOutcome)> = judge_models
        .split(',')
        .filter_map(|model| {
            let outcome = assay::run::stored_pairwise(&store, &records[0], &records[1], Some(model), None).unwrap();
            if outcome.is_none() {
                println!("{model}: no pairwise judgments stored for {name_a} and {name_b}");
            }
            outcome.map(|o| (model, o))
        })
        .collect();
    let (model, main) = outcomes.first().expect("pairwise judgments are stored for the first judge model");
    assert_eq!(*model, judge_models.split(',').next().unwrap(), "the first judge model's judgments are stored");
    let whole = absolute(&reports);
    println!("A = {name_a}, B = {name_b}; absolute {ABSOLUTE} (the judge's expected score, P(Yes), per answer) over {} questions: A {:.3}, B {:.3}", whole.pairs, whole.mean_a, whole.mean_b);
    println!("pairwise judge {} on {model}: {}", main.source.judge, main.headline);

    // Growing prefixes of the questions both runs answered, in the dataset's order.
    let ids: Vec<&str> = main.judgments.iter().map(|j| j.id.as_str()).collect();
    assert!(ids.len() >= 10, "a verdict needs at least 10 questions; {} judged", ids.len());
    let sizes = prefix_sizes(ids.len());
    println!("\n| n | absolute `{ABSOLUTE}`: B − A [95% CI] | p | verdict | pairwise: win rate of B [95% CI] | p | verdict |");
    println!("|---|---|---|---|---|---|---|");
    let (mut first_absolute, mut first_pairwise) = (None, None);
    let mut last = None;
    for &n in &sizes {
        let keep: BTreeSet<&str> = ids[..n].iter().copied().collect();
        let abs = absolute(&only(&reports, &keep));
        assert_eq!(abs.pairs + abs.excluded, n, "the prefix holds the questions both runs answered");
        let pair = prefix_outcome(main, n);
        let stats = pair.statistics.clone().expect("scored judgments");
        println!(
            "| {n} | {:+.3} [{:+.3}, {:+.3}] | {:.2e} | {} | {:.3} [{:.3}, {:.3}] | {:.2e} | {} |",
            abs.mean_diff,
            abs.ci95_diff[0],
            abs.ci95_diff[1],
            abs.adjusted_p,
            abs.verdict.describe(name_a, name_b),
            stats.win_rate,
            stats.win_rate_ci95[0],
            stats.win_rate_ci95[1],
            stats.permutation_p,
            pair.verdict_text
        );
        if first_absolute.is_none() && decided(abs.verdict) {
            first_absolute = Some((n, abs.verdict.describe(name_a, name_b)));
        }
        if first_pairwise.is_none() && decided(pair.verdict) {
            first_pairwise = Some((n, pair.verdict_text.clone()));
        }
        last = Some((abs, pair));
    }
    let show = |first: &Option<(usize, String)>| match first {
        Some((n, verdict)) => format!("n = {n} ({verdict})"),
        None => format!("no verdict up to n = {}", ids.len()),
    };
    println!("\nfirst verdict: absolute {ABSOLUTE} at {}; pairwise at {}", show(&first_absolute), show(&first_pairwise));

    // The whole prefix is the whole comparison: the prefix machinery recomputes what
    // `assay compare` stored and showed.
    let (abs, pair) = last.unwrap();
    if ids.len() == whole.pairs {
        assert!((abs.mean_diff - whole.mean_diff).abs() < 1e-12 && abs.verdict == whole.verdict, "{abs:?}\n{whole:?}");
    }
    assert_eq!(pair.statistics, main.statistics);

    // Where the absolute judge's most probable label differs between the two answers (one
    // passed, one not), does the pairwise judge lean towards the passed one?
    let passed = |report: &RunReport, id: &str| -> Option<bool> { report.items.iter().find(|i| i.question.id == id)?.verdicts.get(ABSOLUTE)?.passed };
    let (mut differ, mut agree) = (0, 0);
    for j in &main.judgments {
        let (Some(a), Some(b), Some(p)) = (passed(&reports[0], &j.id), passed(&reports[1], &j.id), j.preference) else { continue };
        if a != b {
            differ += 1;
            if b == (p.p_b > 0.5) {
                agree += 1;
            }
        }
    }
    println!("questions where {ABSOLUTE} passes one answer and not the other: {differ}; pairwise ({model}) prefers the passed one on {agree}");

    // Order bias on these answers, per judge model.
    println!("\n| judge model | questions | winner flips with the order | mean P(`1`), A first | mean P(`1`), B first | mean P(`tie`) | win rate of B [95% CI] | p | verdict | first verdict |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (model, outcome) in &outcomes {
        let scored: Vec<&PairwiseJudgment> = outcome.judgments.iter().filter(|j| j.preference.is_some()).collect();
        let s = outcome.statistics.clone().expect("scored judgments");
        let first_one = |order: &std::collections::BTreeMap<String, f64>| order.get("1").copied().unwrap_or(0.0);
        let tie = |j: &PairwiseJudgment| j.preference.map_or(0.0, |p| p.tie);
        // The same prefixes for this judge model: where its comparison first decides.
        let first = prefix_sizes(outcome.judgments.len())
            .into_iter()
            .map(|n| (n, prefix_outcome(outcome, n)))
            .find(|(_, o)| decided(o.verdict))
            .map(|(n, o)| (n, o.verdict_text));
        println!(
            "| {model} | {} | {} of {} ({:.0}%) | {:.3} | {:.3} | {:.4} | {:.3} [{:.3}, {:.3}] | {:.2e} | {} | {} |",
            s.pairs,
            s.pairs - s.order_consistent,
            s.pairs,
            100.0 * (1.0 - s.order_consistency),
            mean_of(&scored, |j| first_one(&j.a_first)),
            mean_of(&scored, |j| first_one(&j.b_first)),
            mean_of(&scored, tie),
            s.win_rate,
            s.win_rate_ci95[0],
            s.win_rate_ci95[1],
            s.permutation_p,
            outcome.verdict_text,
            show(&first)
        );
    }
}

/// The prefix sizes of `len` questions: 10, 20, … and `len` itself.
fn prefix_sizes(len: usize) -> Vec<usize> {
    let mut sizes: Vec<usize> = (10..=len).step_by(10).collect();
    if len > 0 && sizes.last() != Some(&len) {
        sizes.push(len);
    }
    sizes
}

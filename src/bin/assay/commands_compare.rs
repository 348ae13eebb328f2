//! `assay compare`: every run after the first against the first (the baseline), per metric,
//! as the library assembles it (`compare::experiment`), with its difference gates; with
//! `--pairwise`, the two runs' answers also compared question by question (`run::compare_pairwise`).

use std::path::PathBuf;

use assay::compare::{experiment, ExperimentOptions, GroupBy};
use assay::record::PairwiseJudgment;
use assay::compare::PairwiseOutcome;
use assay::run::{compare_pairwise, PairwiseOrder, PairwiseProgress, StoredRuns};
use crate::DbArg;
use crate::print::print_experiment;

/// The name `--primary` gives the pairwise verdict.
const PAIRWISE_PRIMARY: &str = "pairwise";

#[derive(clap::Args, Debug)]
pub struct PairwiseArgs {
    /// Also compare the two runs answer against answer ("which is better?"), stored so a
    /// second compare reuses the judgments; `--primary pairwise` leads with it.
    #[arg(long)]
    pairwise: bool,
    /// The pairwise judge (default: correct, each answer judged alone; `better` shows both
    /// side by side in both orders; see `assay judges list`).
    #[arg(long, value_name = "NAME", requires = "pairwise")]
    judge: Option<String>,
    /// The model of the pairwise judge (default: qwen2.5-coder-1.5b-instruct).
    #[arg(long, value_name = "MODEL", requires = "pairwise")]
    judge_model: Option<String>,
    /// Folder of user judge specs (adds to / replaces the built-ins).
    #[arg(long, env = "ASSAY_JUDGES_DIR")]
    judges_dir: Option<PathBuf>,
    /// cpu, or cuda / metal in builds with those features.
    #[arg(long, default_value = "cpu")]
    device: assay::llm::device::DeviceChoice,
}

#[allow(clippy::too_many_arguments)]
pub fn compare(
    references: &[String],
    json: bool,
    fail_under: &[String],
    seed: u64,
    primary: Option<&str>,
    by: Option<GroupBy>,
    pairwise: &PairwiseArgs,
    db: &DbArg,
) -> anyhow::Result<i32> {
    let pairwise_first = primary == Some(PAIRWISE_PRIMARY);
    if pairwise_first && !pairwise.pairwise {
        anyhow::bail!("--primary pairwise needs --pairwise");
    }
    if pairwise.pairwise && references.len() != 2 {
        anyhow::bail!("--pairwise compares two runs (A, then B); got {}", references.len());
    }
    let database = db.path()?;
    let reports = StoredRuns::open_existing(&database)?.reports(references)?;
    let primary = primary.filter(|_| !pairwise_first).map(str::to_string);
    let options = ExperimentOptions { seed, primary, by, fail_under: fail_under.to_vec() };
    let compared = experiment(&reports, &options)?;
    let judged = if pairwise.pairwise {
        let order = PairwiseOrder {
            database,
            run_a: references[0].clone(),
            run_b: references[1].clone(),
            judge: pairwise.judge.clone(),
            judges_dir: pairwise.judges_dir.clone(),
            judge_model: pairwise.judge_model.clone(),
            device: pairwise.device,
            cancel: None,
        };
        Some(compare_pairwise(&order, &mut show_progress)?)
    } else {
        None
    };
    match (&judged, json) {
        (None, true) => println!("{}", serde_json::to_string_pretty(&compared.comparisons)?),
        (Some(outcome), true) => println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "comparisons": compared.comparisons, "pairwise": outcome }))?
        ),
        (None, false) => print_experiment(&compared, by.is_some()),
        (Some(outcome), false) if pairwise_first => {
            print_pairwise(outcome);
            println!();
            print_experiment(&compared, by.is_some());
        }
        (Some(outcome), false) => {
            print_experiment(&compared, by.is_some());
            println!();
            print_pairwise(outcome);
        }
    }
    if !compared.gate_failures.is_empty() {
        eprintln!("gate failed: {}", compared.gate_failures.join("; "));
        return Ok(1);
    }
    Ok(0)
}

fn show_progress(event: PairwiseProgress) {
    match event {
        PairwiseProgress::Started { pairs, reused } => {
            eprintln!("pairwise: {pairs} questions both runs answered, {reused} judged before (reused)")
        }
        PairwiseProgress::LoadingJudge { model } => eprintln!("pairwise: loading judge model {model}"),
        PairwiseProgress::Judged { question_id, done, missing, error } => match error {
            Some(error) => eprintln!("pairwise: {done}/{missing} {question_id}: unscored: {error}"),
            None => eprintln!("pairwise: {done}/{missing} {question_id}"),
        },
    }
}

/// The headline, then one line per question: P(B better) after both orders and each order's
/// distribution (question ids are of a safe alphabet; no model text is printed).
fn print_pairwise(outcome: &PairwiseOutcome) {
    println!("{}", outcome.headline);
    if let Some(s) = &outcome.statistics {
        match &s.length_controlled {
            Some(l) => println!(
                "  length: slope {:+.3} on tanh(Δwords / {:.1}) ({} the longer answer); win rate at equal length {:.3}",
                l.slope,
                l.length_scale,
                if l.slope > 0.0 { "towards" } else { "away from" },
                l.win_rate
            ),
            None => println!("  win rate at equal length: {}", assay::compare::NO_EQUAL_LENGTH),
        }
    }
    if outcome.source.excluded > 0 {
        println!("  {} questions answered by only one run are left out", outcome.source.excluded);
    }
    if outcome.each_answer_alone {
        println!("  {:<12} {:>6}  {:>16} {:>16}", "question", "P(B)", format!("{} score", short(&outcome.source.name_a)), format!("{} score", short(&outcome.source.name_b)));
    } else {
        println!(
            "  {:<12} {:>6}  {:<28} {:<28} {}",
            "question",
            "P(B)",
            format!("{} first: 1 / 2 / tie", short(&outcome.source.name_a)),
            format!("{} first: 1 / 2 / tie", short(&outcome.source.name_b)),
            "same winner"
        );
    }
    for judgment in &outcome.judgments {
        print_row(judgment);
    }
}

fn short(name: &str) -> String {
    name.chars().take(10).collect()
}

fn print_row(j: &PairwiseJudgment) {
    let order = |d: &std::collections::BTreeMap<String, f64>| {
        let p = |k: &str| d.get(k).map_or("-".to_string(), |v| format!("{v:.2}"));
        format!("{} / {} / {}", p("1"), p("2"), p("tie"))
    };
    let flags = if j.flags.is_empty() { String::new() } else { format!("  [{}]", j.flags.join(", ")) };
    match (&j.preference, &j.error) {
        (Some(p), _) if j.scores.is_some() => {
            let [a, b] = j.scores.unwrap_or_default();
            println!("  {:<12} {:>6.3}  {a:>16.3} {b:>16.3}{flags}", j.id, p.p_b)
        }
        (Some(p), _) => println!(
            "  {:<12} {:>6.3}  {:<28} {:<28} {}{flags}",
            j.id,
            p.p_b,
            order(&j.a_first),
            order(&j.b_first),
            if p.order_consistent { "yes" } else { "no" }
        ),
        (None, error) => println!("  {:<12} unscored: {}{flags}", j.id, error.as_deref().unwrap_or("no preference")),
    }
}

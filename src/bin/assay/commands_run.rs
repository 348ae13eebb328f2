//! `assay run`: load and validate everything first, then create (or resume) the run, execute
//! it with a progress bar, print the summary and apply the `--fail-under` gates.

use crate::{terminal, DbArg};
use anyhow::{bail, Context};
use assay::dataset::{load_dataset, Dataset};
use assay::report::{load_report, to_json, RunReport};
use assay::run::{self, check_gates, parse_gate, Progress, RunConfig};
use assay::store::{RunStatus, Store};
use assay::target::{load_answers_file, AnswersFileTarget, Target};
use indicatif::{ProgressBar, ProgressStyle};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(clap::Args)]
pub struct RunArgs {
    /// Dataset folder (holds dataset.toml).
    dataset: PathBuf,
    /// What to evaluate: `answers:FILE` replays answers produced elsewhere (FILE relative to
    /// the current folder or to the dataset folder).
    #[arg(long)]
    target: Option<String>,
    /// Deterministic metrics to compute, comma-separated (default: all that apply).
    #[arg(long, value_delimiter = ',')]
    metrics: Option<Vec<String>>,
    /// Retrieved chunks that count for hit@k and nDCG@k.
    #[arg(long)]
    top_k: Option<usize>,
    /// Only the first N questions.
    #[arg(long)]
    limit: Option<usize>,
    /// Seed for sampling and bootstrap intervals.
    #[arg(long)]
    seed: Option<u64>,
    /// A name for the run (default: dataset and target).
    #[arg(long)]
    name: Option<String>,
    /// Exit with code 1 when a metric's mean is under VALUE, e.g. token_f1=0.6. Repeatable.
    #[arg(long, value_name = "METRIC=VALUE")]
    fail_under: Vec<String>,
    /// Finish an interrupted run (id, prefix or name) instead of starting a new one.
    #[arg(long)]
    resume: Option<String>,
    /// Print the run as JSON (the export schema) on stdout.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    db: DbArg,
}

const DEFAULT_TOP_K: usize = 4;

pub fn run(args: RunArgs) -> anyhow::Result<i32> {
    // Everything that can be wrong with the input is found before the database is opened.
    let dataset = load_dataset(&args.dataset)?;
    let gates = args
        .fail_under
        .iter()
        .map(|g| parse_gate(g, assay::metrics::ALL_METRICS))
        .collect::<Result<Vec<_>, _>>()
        .map_err(anyhow::Error::msg)?;
    let db_path = args.db.path()?;

    let (mut store, run_record, mut target) = match &args.resume {
        None => {
            let target_spec = args.target.clone().unwrap_or_else(|| "answers".into());
            let (target, answers_sha256) = build_target(&target_spec, &dataset)?;
            let config = RunConfig {
                target: target.describe(),
                answers_sha256,
                model: None,
                judge_model: None,
                judges: Vec::new(),
                metrics: args.metrics.clone().unwrap_or_default(),
                top_k: args.top_k.unwrap_or(DEFAULT_TOP_K),
                retrieval: None,
                seed: args.seed.unwrap_or(0),
                limit: args.limit,
            };
            assay::metrics::select(&config.metrics).map_err(anyhow::Error::msg)?;
            let store = Store::open(&db_path)?;
            let record = run::start_run(&store, &dataset, config, args.name.clone(), None)?;
            (store, record, target)
        }
        Some(reference) => {
            let store = Store::open_existing(&db_path)?;
            let record = store.find_run(reference)?;
            let target_spec = args
                .target
                .clone()
                .unwrap_or_else(|| record.config.target.clone());
            let (target, answers_sha256) = build_target(&target_spec, &dataset)?;
            // The stored config, overridden by whatever was given: any difference refuses.
            let mut config = record.config.clone();
            config.target = target.describe();
            config.answers_sha256 = answers_sha256;
            if let Some(m) = &args.metrics {
                config.metrics = m.clone();
            }
            config.top_k = args.top_k.unwrap_or(config.top_k);
            config.seed = args.seed.unwrap_or(config.seed);
            config.limit = args.limit.or(config.limit);
            run::plan_resume(&record, &dataset, &config)?;
            (store, record, target)
        }
    };

    let cancel = Arc::new(AtomicBool::new(false));
    {
        let cancel = cancel.clone();
        // Ctrl-C stops after the item in flight; what finished is kept and resumable.
        let _ = ctrlc::set_handler(move || cancel.store(true, Ordering::Relaxed));
    }
    let bar = ProgressBar::new(run_record.total_items as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {per_sec} eta {eta} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut on_progress = |event: &Progress| match event {
        Progress::Started {
            run_id,
            already_done,
            ..
        } => {
            bar.set_position(*already_done as u64);
            bar.println(format!("run {run_id}"));
        }
        Progress::ItemStarted { question_id, .. } => bar.set_message(question_id.clone()),
        Progress::ItemDone { done, error, question_id, .. } => {
            bar.set_position(*done as u64);
            if let Some(error) = error {
                bar.println(format!("{question_id}: {}", terminal::line(error, 200)));
            }
        }
    };
    let status = run::execute(
        &mut store,
        &run_record,
        &dataset,
        target.as_mut(),
        &mut on_progress,
        &cancel,
    )?;
    bar.finish_and_clear();

    let record = store.find_run(&run_record.id)?;
    let report = load_report(&store, record)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&to_json(std::slice::from_ref(&report)))?);
    } else {
        print_run_summary(&report);
    }
    if status == RunStatus::Cancelled {
        eprintln!(
            "cancelled: {} of {} items kept; finish with `assay run {} --resume {}`",
            report.items.len(),
            report.run.total_items,
            args.dataset.display(),
            report.run.id
        );
        // The shell's convention for "stopped by Ctrl-C".
        return Ok(130);
    }
    let failures = check_gates(&gates, &report.summary);
    if !failures.is_empty() {
        let reasons: Vec<String> = failures.iter().map(ToString::to_string).collect();
        eprintln!("gate failed: {}", reasons.join("; "));
        return Ok(1);
    }
    Ok(0)
}

/// Resolve `--target`; returns the target and, for answer files, the file's sha256.
fn build_target(spec: &str, dataset: &Dataset) -> anyhow::Result<(Box<dyn Target>, Option<String>)> {
    match spec.split_once(':') {
        Some(("answers", file)) => {
            let path = resolve_answers_path(file, &dataset.root)?;
            let bytes =
                std::fs::read(&path).with_context(|| format!("{}: cannot read", path.display()))?;
            let answers = load_answers_file(&path, dataset)?;
            let sha = hex::encode(Sha256::digest(&bytes));
            Ok((Box::new(AnswersFileTarget::new(path, answers)), Some(sha)))
        }
        _ if spec == "answers" => bail!("--target answers needs a file: --target answers:FILE"),
        _ => bail!("unknown target {spec:?}; available: answers:FILE"),
    }
}

fn resolve_answers_path(file: &str, dataset_root: &Path) -> anyhow::Result<PathBuf> {
    let given = PathBuf::from(file);
    if given.is_file() {
        return Ok(given);
    }
    let in_dataset = dataset_root.join(file);
    if in_dataset.is_file() {
        return Ok(in_dataset);
    }
    bail!(
        "{file}: answers file not found (looked in the current folder and in {})",
        dataset_root.display()
    )
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

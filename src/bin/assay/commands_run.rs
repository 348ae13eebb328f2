//! `assay run`: load and validate everything first, then create (or resume) the run, execute
//! it with a progress bar, print the summary and apply the `--fail-under` gates.

use crate::{terminal, DbArg};
use assay::dataset::load_dataset;
use assay::report::{load_report, to_json, RunReport};
use assay::run::{self, check_gates, parse_gate, Progress, ResumeRequest, RunRequest};
use assay::store::{RunStatus, Store};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(clap::Args)]
pub struct RunArgs {
    /// Dataset folder (holds dataset.toml).
    dataset: PathBuf,
    /// What to evaluate: `rag` (retrieve, then answer with --model), `retrieve` (retrieval
    /// alone), or `answers:FILE` (replay answers produced elsewhere; FILE relative to the
    /// current folder or to the dataset folder).
    #[arg(long)]
    target: Option<String>,
    /// Generator model id for `--target rag` (see `assay models list`).
    #[arg(long)]
    model: Option<String>,
    /// Retrieval mode: bm25, dense or hybrid.
    #[arg(long)]
    retrieval: Option<assay::retrieve::RetrievalMode>,
    /// Prompt template for `--target rag` (minijinja; default: prompts/rag.md).
    #[arg(long)]
    prompt: Option<PathBuf>,
    /// Most tokens generated per answer.
    #[arg(long)]
    max_tokens: Option<usize>,
    /// cpu, or cuda / metal in builds with those features.
    #[arg(long, default_value = "cpu")]
    device: assay::llm::DeviceChoice,
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

    let cancel = Arc::new(AtomicBool::new(false));
    {
        let cancel = cancel.clone();
        // Ctrl-C stops generation at the next token and the run after the item in flight;
        // what finished is kept and resumable.
        let _ = ctrlc::set_handler(move || cancel.store(true, Ordering::Relaxed));
    }
    let (mut store, prepared) = match &args.resume {
        None => {
            let request = RunRequest {
                target: args.target.clone().unwrap_or_else(|| "answers".into()),
                metrics: args.metrics.clone().unwrap_or_default(),
                top_k: args.top_k,
                limit: args.limit,
                seed: args.seed,
                name: args.name.clone(),
                experiment: None,
                model: args.model.clone(),
                retrieval: args.retrieval,
                prompt: args.prompt.clone(),
                max_tokens: args.max_tokens,
                device: args.device,
                cancel: Some(cancel.clone()),
            };
            // Metric names are checked before the database file is created.
            if !request.metrics.is_empty() {
                assay::metrics::MetricSelection::parse(&request.metrics.join(","))?;
            }
            let store = Store::open(&db_path)?;
            let prepared = run::prepare_new_run(&store, &dataset, &request)?;
            (store, prepared)
        }
        Some(reference) => {
            let store = Store::open_existing(&db_path)?;
            let request = ResumeRequest {
                run: reference.clone(),
                target: args.target.clone(),
                metrics: args.metrics.clone(),
                top_k: args.top_k,
                limit: args.limit,
                seed: args.seed,
                prompt: args.prompt.clone(),
                device: args.device,
                cancel: Some(cancel.clone()),
            };
            let prepared = run::prepare_resume(&store, &dataset, &request)?;
            (store, prepared)
        }
    };
    let run_record = prepared.record;
    let mut target = prepared.target;
    if let Some(index) = &prepared.index {
        eprintln!("{}", index.headline());
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

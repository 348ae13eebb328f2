//! `assay run`: load and validate everything first, then create (or resume) the run, execute
//! it with a progress bar, print the summary and apply the `--fail-under` gates.

use crate::{terminal, DbArg};
use assay::compare::{compare_runs, knowledge_removal, KnowledgeRemoval, ABSTENTION_JUDGE};
use assay::dataset::{load_dataset, Dataset};
use assay::report::{load_report, to_json, JsonExport, RunReport};
use assay::run::{
    self, check_gates, parse_gate, KnowledgeArm, PreparedRun, Progress, ResumeRequest, RunRequest,
};
use assay::store::{RunStatus, Store};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Experiments made of several runs that are read together.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExperimentKind {
    RemoveContext,
}

#[derive(clap::Args)]
pub struct RunArgs {
    /// Dataset folder (holds dataset.toml).
    dataset: PathBuf,
    /// What to evaluate: `rag` (retrieve, then answer with --model), `retrieve` (retrieval
    /// alone), or `answers:FILE` (replay answers produced elsewhere; FILE relative to the
    /// current folder or to the dataset folder).
    #[arg(long)]
    target: Option<String>,
    /// Generator model id(s) for `--target rag` (see `assay models list`); several,
    /// comma-separated, run as one experiment and are compared with the first.
    #[arg(long, value_delimiter = ',')]
    model: Option<Vec<String>>,
    /// Retrieval mode(s): bm25, dense or hybrid; several, comma-separated, are a matrix.
    #[arg(long, value_delimiter = ',')]
    retrieval: Option<Vec<assay::retrieve::RetrievalMode>>,
    /// Prompt template for `--target rag` (minijinja; default: prompts/rag.md).
    #[arg(long)]
    prompt: Option<PathBuf>,
    /// Most tokens generated per answer.
    #[arg(long)]
    max_tokens: Option<usize>,
    /// Judges to run on every answer, comma-separated (see `assay judges list`).
    #[arg(long, value_delimiter = ',')]
    judges: Option<Vec<String>>,
    /// Model(s) for the judges (default: qwen2.5-coder-1.5b-instruct); several,
    /// comma-separated, are a matrix.
    #[arg(long, value_delimiter = ',')]
    judge_model: Option<Vec<String>>,
    /// Folder of user judge specs (adds to / replaces the built-ins).
    #[arg(long, env = "ASSAY_JUDGES_DIR")]
    judges_dir: Option<PathBuf>,
    /// cpu, or cuda / metal in builds with those features.
    #[arg(long, default_value = "cpu")]
    device: assay::llm::DeviceChoice,
    /// Deterministic metrics to compute, comma-separated (default: all that apply).
    #[arg(long, value_delimiter = ',')]
    metrics: Option<Vec<String>>,
    /// Chunks retrieved per question (and counted by hit@k and nDCG@k); several,
    /// comma-separated, are a matrix.
    #[arg(long, value_delimiter = ',')]
    top_k: Option<Vec<usize>>,
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
    /// `remove-context`: run each setting twice, with every question's golden context in the
    /// index and with the chunks holding it removed, judge abstention, and report both
    /// abstention rates and their difference (KnowOrNot's knowledge removal). Asks only the
    /// questions that have a golden context; the target defaults to rag.
    #[arg(long, value_name = "EXPERIMENT")]
    experiment: Option<ExperimentKind>,
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

    let (mut store, plans): (Option<Store>, Vec<RunPlan>) = match &args.resume {
        None => {
            // Metric names are checked before the database file is created.
            let metrics = args.metrics.clone().unwrap_or_default();
            if !metrics.is_empty() {
                assay::metrics::MetricSelection::parse(&metrics.join(","))?;
            }
            // Lists in `--model`, `--judge-model`, `--top-k` and `--retrieval` make a matrix:
            // one run per combination, grouped as one experiment and compared with the first.
            let cells = matrix_cells(&args);
            let experiment = (cells.len() > 1 || args.experiment.is_some()).then(run::new_experiment_id);
            let default_target = if args.experiment.is_some() { "rag" } else { "answers" };
            let mut judges = args.judges.clone().unwrap_or_default();
            if args.experiment.is_some() && !judges.iter().any(|j| j == ABSTENTION_JUDGE) {
                judges.push(ABSTENTION_JUDGE.to_string());
            }
            // The knowledge-removal experiment runs each cell once per arm, in-scope first.
            let arms: Vec<Option<KnowledgeArm>> = match args.experiment {
                Some(ExperimentKind::RemoveContext) => vec![Some(KnowledgeArm::InScope), Some(KnowledgeArm::Removed)],
                None => vec![None],
            };
            let cells: Vec<(MatrixCell, Option<KnowledgeArm>)> = cells
                .into_iter()
                .flat_map(|cell| arms.iter().map(move |arm| (cell.clone(), *arm)))
                .collect();
            let plans: Vec<RunPlan> = cells
                .into_iter()
                .map(|(cell, knowledge)| (cell.labelled(knowledge), knowledge))
                .map(|(cell, knowledge)| RunRequest {
                    target: args.target.clone().unwrap_or_else(|| default_target.into()),
                    metrics: metrics.clone(),
                    top_k: cell.top_k,
                    limit: args.limit,
                    seed: args.seed,
                    name: match (&args.name, &experiment) {
                        (Some(name), Some(_)) => Some(format!("{name} {}", cell.label)),
                        (None, Some(_)) => Some(format!("{} {}", dataset.manifest.name, cell.label)),
                        (name, None) => name.clone(),
                    },
                    experiment: experiment.clone(),
                    model: cell.model,
                    retrieval: cell.retrieval,
                    prompt: args.prompt.clone(),
                    max_tokens: args.max_tokens,
                    device: args.device,
                    cancel: Some(cancel.clone()),
                    judges: judges.clone(),
                    judge_model: cell.judge_model,
                    judges_dir: args.judges_dir.clone(),
                    knowledge,
                })
                .map(RunPlan::New)
                .collect();
            // Opened once the first run checked out (a bad prompt or judge spec must not
            // leave a new database file behind).
            (None, plans)
        }
        Some(reference) => {
            let store = Store::open_existing(&db_path)?;
            let request = ResumeRequest {
                run: reference.clone(),
                target: args.target.clone(),
                metrics: args.metrics.clone(),
                top_k: single(&args.top_k, "--top-k")?,
                limit: args.limit,
                seed: args.seed,
                prompt: args.prompt.clone(),
                device: args.device,
                cancel: Some(cancel.clone()),
                judges_dir: args.judges_dir.clone(),
            };
            (Some(store), vec![RunPlan::Resume(request)])
        }
    };

    let mut reports = Vec::new();
    let mut cancelled = false;
    for plan in plans {
        let (store, prepared) = match &plan {
            RunPlan::New(request) => {
                let checked = run::check_new_run(&dataset, request)?;
                let store = match &mut store {
                    Some(store) => store,
                    None => store.insert(Store::open(&db_path)?),
                };
                let prepared = checked.start(store, &dataset)?;
                (store, prepared)
            }
            RunPlan::Resume(request) => {
                let store = store
                    .as_mut()
                    .ok_or_else(|| anyhow::anyhow!("internal: resume without an open database"))?;
                let prepared = run::prepare_resume(store, &dataset, request)?;
                (store, prepared)
            }
        };
        let (report, status) = execute_with_progress(store, prepared, &dataset, &cancel)?;
        if !args.json {
            print_run_summary(&report);
            println!();
        }
        if status == RunStatus::Cancelled {
            eprintln!(
                "cancelled: {} of {} items kept; finish with `assay run {} --resume {}`",
                report.items.len(),
                report.run.total_items,
                args.dataset.display(),
                report.run.id
            );
            cancelled = true;
        }
        reports.push(report);
        if cancelled {
            break;
        }
    }
    let removals: Vec<KnowledgeRemoval> = match args.experiment {
        // The arms come in pairs: each cell's in-scope run, then its context-removed run.
        Some(ExperimentKind::RemoveContext) => reports
            .chunks_exact(2)
            .filter_map(|pair| knowledge_removal(&pair[0], &pair[1], args.seed.unwrap_or(0)))
            .collect(),
        None => Vec::new(),
    };
    if args.json {
        // Serialised straight from the structs (not through serde_json::Value, which widens
        // f32 scores to f64) so `run --json` prints the same numbers as `export --format json`.
        #[derive(serde::Serialize)]
        struct RunJson<'a> {
            #[serde(flatten)]
            export: JsonExport,
            #[serde(skip_serializing_if = "Option::is_none")]
            knowledge_removal: Option<&'a [KnowledgeRemoval]>,
        }
        let json = RunJson {
            export: to_json(&reports),
            knowledge_removal: args.experiment.map(|_| removals.as_slice()),
        };
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else if args.experiment.is_some() {
        for (removal, pair) in removals.iter().zip(reports.chunks_exact(2)) {
            print_knowledge_removal(removal, &pair[0].run.name, &pair[1].run.name);
        }
    } else if reports.len() > 1 {
        for other in &reports[1..] {
            crate::commands_compare::print_comparison(&compare_runs(&reports[0], other, 0));
        }
    }
    if cancelled {
        // The shell's convention for "stopped by Ctrl-C".
        return Ok(130);
    }
    let mut reasons = Vec::new();
    for report in &reports {
        for failure in check_gates(&gates, &report.summary) {
            reasons.push(if reports.len() > 1 {
                format!("{}: {failure}", report.run.name)
            } else {
                failure.to_string()
            });
        }
    }
    if !reasons.is_empty() {
        eprintln!("gate failed: {}", reasons.join("; "));
        return Ok(1);
    }
    Ok(0)
}

enum RunPlan {
    New(RunRequest),
    Resume(ResumeRequest),
}

/// One combination of a matrix run, and the words that tell it apart in run names.
#[derive(Clone)]
struct MatrixCell {
    model: Option<String>,
    judge_model: Option<String>,
    top_k: Option<usize>,
    retrieval: Option<assay::retrieve::RetrievalMode>,
    label: String,
}

impl MatrixCell {
    /// The cell as one arm of the knowledge-removal experiment (its name says which).
    fn labelled(mut self, arm: Option<KnowledgeArm>) -> Self {
        if let Some(arm) = arm {
            self.label = [self.label.as_str(), arm.as_str()]
                .iter()
                .filter(|s| !s.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join(" ");
        }
        self
    }
}

/// Every combination of the listed settings, models varying slowest. The label names only
/// the settings that vary, so `--model a,b` gives runs "NAME a" and "NAME b".
fn matrix_cells(args: &RunArgs) -> Vec<MatrixCell> {
    fn options<T: Clone>(list: &Option<Vec<T>>) -> Vec<Option<T>> {
        match list {
            Some(values) if !values.is_empty() => values.iter().cloned().map(Some).collect(),
            _ => vec![None],
        }
    }
    let (models, judge_models) = (options(&args.model), options(&args.judge_model));
    let (top_ks, retrievals) = (options(&args.top_k), options(&args.retrieval));
    let mut cells = Vec::new();
    for model in &models {
        for judge_model in &judge_models {
            for top_k in &top_ks {
                for retrieval in &retrievals {
                    let mut label = Vec::new();
                    if models.len() > 1 {
                        label.extend(model.clone());
                    }
                    if judge_models.len() > 1 {
                        label.extend(judge_model.as_ref().map(|j| format!("judge={j}")));
                    }
                    if top_ks.len() > 1 {
                        label.extend(top_k.map(|k| format!("k={k}")));
                    }
                    if retrievals.len() > 1 {
                        label.extend(retrieval.map(|r| r.as_str().to_string()));
                    }
                    cells.push(MatrixCell {
                        model: model.clone(),
                        judge_model: judge_model.clone(),
                        top_k: *top_k,
                        retrieval: *retrieval,
                        label: label.join(" "),
                    });
                }
            }
        }
    }
    cells
}

/// A setting given as a list must hold one value where a matrix makes no sense (resume).
fn single<T: Copy>(list: &Option<Vec<T>>, flag: &str) -> anyhow::Result<Option<T>> {
    match list.as_deref() {
        None | Some([]) => Ok(None),
        Some([one]) => Ok(Some(*one)),
        Some(_) => Err(anyhow::anyhow!("{flag} takes one value with --resume")),
    }
}

/// Execute a prepared run with a progress bar on stderr; returns its report and final status.
fn execute_with_progress(
    store: &mut Store,
    prepared: PreparedRun,
    dataset: &Dataset,
    cancel: &AtomicBool,
) -> anyhow::Result<(RunReport, RunStatus)> {
    let run_record = prepared.record;
    let mut target = prepared.target;
    let mut judges = prepared.judges;
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
            bar.println(format!("run {run_id} ({})", run_record.config.target));
        }
        Progress::ItemStarted { question_id, .. } => bar.set_message(question_id.clone()),
        Progress::ItemDone { done, error, question_id, .. } => {
            bar.set_position(*done as u64);
            if let Some(error) = error {
                bar.println(format!("{question_id}: {}", terminal::line(error, 200)));
            }
        }
    };
    let status = run::execute_judged(
        store,
        &run_record,
        dataset,
        target.as_mut(),
        judges.as_mut(),
        &mut on_progress,
        cancel,
    )?;
    bar.finish_and_clear();
    let record = store.find_run(&run_record.id)?;
    Ok((load_report(store, record)?, status))
}

/// Both abstention rates of a knowledge-removal pair of runs and their difference.
fn print_knowledge_removal(k: &KnowledgeRemoval, in_scope: &str, removed: &str) {
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

//! `assay run`: load and validate everything first, then create (or resume) the run, execute
//! it with a progress bar, print the summary and apply the `--fail-under` gates.

use crate::print::{print_comparison, print_knowledge_removal, print_run_summary};
use crate::{terminal, DbArg};
use assay::compare::{compare_runs, KnowledgeRemoval};
use assay::dataset::{load_dataset, Dataset};
use assay::report::{load_report, to_json, JsonExport, RunReport};
use assay::run::{
    self, check_gates, parse_gate, ExperimentKind, ExperimentRequest, PreparedRun, Progress, ResumeRequest,
    RunRequest,
};
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
    /// alone), `answers:FILE` (replay answers produced elsewhere; FILE relative to the
    /// current folder or to the dataset folder), or `http:FILE.toml` (ask your own service
    /// over HTTP; see examples/http-target).
    #[arg(long)]
    target: Option<String>,
    /// Generator model id(s) for `--target rag` (see `assay models list`); several,
    /// comma-separated, run as one experiment and are compared with the first.
    #[arg(long, value_delimiter = ',')]
    model: Option<Vec<String>>,
    /// Retrieval mode(s): bm25, dense or hybrid; several, comma-separated, are a matrix.
    #[arg(long, value_delimiter = ',')]
    retrieval: Option<Vec<assay::retrieve::RetrievalMode>>,
    /// Prompt template for `--target rag` (minijinja; default: the dataset's `prompt` file, else prompts/rag.md).
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
    /// Requests in flight at once for `--target http` (default: the target file's setting).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=64))]
    concurrency: Option<u16>,
    /// Rerank the first stage's chunks with this model (a registry id or a served model, see
    /// `assay models list`; retrieve and rag targets). In process a chunk scores by how likely
    /// the model finds the question after reading it; a served model by its P(Yes) that the
    /// chunk answers the question. The model's order is fused with the first stage's.
    #[arg(long, value_name = "MODEL")]
    rerank: Option<String>,
    /// First-stage chunks the reranker rescores (default 20, never fewer than --top-k).
    #[arg(long, value_name = "N", requires = "rerank", value_parser = clap::value_parser!(u16).range(1..=200))]
    rerank_depth: Option<u16>,
    /// Finish an interrupted run, or retry the items that failed (id, prefix or name),
    /// instead of starting a new one.
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
            // one run per combination, grouped as one experiment (the library plans it).
            let request = ExperimentRequest {
                base: RunRequest {
                    target: args.target.clone().unwrap_or_else(|| "answers".into()),
                    metrics,
                    top_k: None,
                    limit: args.limit,
                    seed: args.seed,
                    name: args.name.clone(),
                    experiment: None,
                    model: None,
                    retrieval: None,
                    prompt: args.prompt.clone(),
                    max_tokens: args.max_tokens,
                    device: args.device,
                    cancel: Some(cancel.clone()),
                    judges: args.judges.clone().unwrap_or_default(),
                    judge_model: None,
                    judges_dir: args.judges_dir.clone(),
                    knowledge: None,
                    concurrency: args.concurrency.map(usize::from),
                    rerank: args.rerank.clone().map(|model| assay::record::RerankConfig {
                        model,
                        depth: args.rerank_depth.map_or(assay::retrieve::DEFAULT_RERANK_DEPTH, usize::from),
                    }),
                },
                target_given: args.target.is_some(),
                dataset_name: dataset.manifest.name.clone(),
                models: args.model.clone().unwrap_or_default(),
                judge_models: args.judge_model.clone().unwrap_or_default(),
                top_ks: args.top_k.clone().unwrap_or_default(),
                retrievals: args.retrieval.clone().unwrap_or_default(),
                kind: args.experiment,
            };
            let plans = run::plan_experiment(&request).into_iter().map(RunPlan::New).collect();
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
                concurrency: args.concurrency.map(usize::from),
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
        let failed: Vec<_> = report.items.iter().filter_map(|i| Some((&i.question.id, i.error.as_ref()?))).collect();
        if !failed.is_empty() && status != RunStatus::Cancelled {
            for (id, error) in failed.iter().take(3) {
                eprintln!("{id}: {}", terminal::line(error, 300));
            }
            eprintln!(
                "{} item(s) failed and are unscored; retry them with `assay run {} --resume {}`",
                failed.len(),
                args.dataset.display(),
                report.run.id
            );
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
    let removals = run::knowledge_removals(args.experiment, &reports, args.seed.unwrap_or(0));
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
            print_comparison(&compare_runs(&reports[0], other, 0));
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
        judges.as_deref_mut(),
        &mut on_progress,
        cancel,
    )?;
    bar.finish_and_clear();
    let record = store.find_run(&run_record.id)?;
    Ok((load_report(store, record)?, status))
}

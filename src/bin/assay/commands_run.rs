//! `assay run`: load and validate everything first, then create (or resume) the run, execute
//! it with a progress bar, print the summary and apply the `--fail-under` gates.

use assay::compare::KnowledgeRemoval;
use assay::dataset::load_dataset;
use assay::record::{RunRecord, RunStatus};
use assay::report::{to_json, JsonExport};
use crate::print::{print_experiment, print_knowledge_removal, print_run_summary};
use crate::{terminal, DbArg};
use assay::run::{
    rerank_config, run_experiment, ExperimentEvents, ExperimentKind, ExperimentOrder, ExperimentRequest, Progress,
    ResumeRequest, RunRequest,
};
use assay::stats::RunReport;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct RunArgs {
    /// Dataset folder (holds dataset.toml).
    dataset: PathBuf,
    /// What to evaluate: `rag` (retrieve, then answer with --model; the default), `retrieve`
    /// (retrieval alone), `answers:FILE` (replay answers produced elsewhere; FILE relative to
    /// the current folder or to the dataset folder), or `http:FILE.toml` (ask your own service
    /// over HTTP; see examples/http-target).
    #[arg(long)]
    target: Option<String>,
    /// Generator model id(s) for `--target rag` (see `assay models list`); several,
    /// comma-separated, run as one experiment and are compared with the first.
    #[arg(long, value_delimiter = ',')]
    model: Option<Vec<String>>,
    /// Retrieval mode(s): bm25, dense or hybrid; several, comma-separated, are a matrix.
    /// Default: hybrid when minilm-l6-v2 is installed, else bm25.
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
    device: assay::llm::device::DeviceChoice,
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
    // Everything that can be wrong with the input is found before the database is opened
    // (the library checks the request before it creates the file).
    let dataset = load_dataset(&args.dataset)?;
    let db_path = args.db.path()?;
    // Ctrl-C stops generation at the next token and the run after the item in flight; what
    // finished is kept and resumable.
    let cancel = crate::interrupt::cancel_on_ctrl_c(
        "Every finished item is stored; `assay run DATASET --resume RUN` goes on from there.",
    );
    let order = match &args.resume {
        None => ExperimentOrder::New(ExperimentRequest {
            base: RunRequest {
                metrics: args.metrics.clone().unwrap_or_default(),
                limit: args.limit,
                seed: args.seed,
                name: args.name.clone(),
                prompt: args.prompt.clone(),
                max_tokens: args.max_tokens,
                device: args.device,
                judges: args.judges.clone().unwrap_or_default(),
                judges_dir: args.judges_dir.clone(),
                concurrency: args.concurrency.map(usize::from),
                rerank: rerank_config(args.rerank.clone(), args.rerank_depth.map(usize::from)),
                ..RunRequest::default()
            },
            // Lists in `--model`, `--judge-model`, `--top-k` and `--retrieval` make a matrix:
            // one run per combination, grouped as one experiment (the library plans it).
            target: args.target.clone(),
            models: args.model.clone().unwrap_or_default(),
            judge_models: args.judge_model.clone().unwrap_or_default(),
            top_ks: args.top_k.clone().unwrap_or_default(),
            retrievals: args.retrieval.clone().unwrap_or_default(),
            kind: args.experiment,
            fail_under: args.fail_under.clone(),
        }),
        Some(reference) => ExperimentOrder::Resume(ResumeRequest {
            run: reference.clone(),
            target: args.target.clone(),
            metrics: args.metrics.clone(),
            top_k: single(&args.top_k, "--top-k")?,
            limit: args.limit,
            seed: args.seed,
            prompt: args.prompt.clone(),
            device: args.device,
            judges_dir: args.judges_dir.clone(),
            concurrency: args.concurrency.map(usize::from),
            fail_under: args.fail_under.clone(),
            ..ResumeRequest::default()
        }),
    };
    let mut terminal_events = TerminalEvents { bar: None, json: args.json, dataset: &args.dataset };
    let outcome = run_experiment(order, &dataset, &db_path, &cancel, &mut terminal_events)?;
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
            export: to_json(&outcome.reports),
            knowledge_removal: outcome.kind.map(|_| outcome.knowledge_removal.as_slice()),
        };
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else if outcome.kind.is_some() {
        for (removal, pair) in outcome.knowledge_removal.iter().zip(outcome.reports.chunks_exact(2)) {
            print_knowledge_removal(removal, &pair[0].run.name, &pair[1].run.name);
        }
    } else if let Some(comparison) = &outcome.comparison {
        print_experiment(comparison, false);
    }
    if !outcome.gate_failures.is_empty() && !outcome.cancelled {
        eprintln!("gate failed: {}", outcome.gate_failures.join("; "));
    }
    Ok(outcome.exit_code())
}

/// A setting given as a list must hold one value where a matrix makes no sense (resume).
fn single<T: Copy>(list: &Option<Vec<T>>, flag: &str) -> anyhow::Result<Option<T>> {
    match list.as_deref() {
        None | Some([]) => Ok(None),
        Some([one]) => Ok(Some(*one)),
        Some(_) => Err(anyhow::anyhow!("{flag} takes one value with --resume")),
    }
}

/// The experiment's events on the terminal: a progress bar per run on stderr, each finished
/// run's summary on stdout (unless `--json`), failed and cancelled items with the command
/// that retries them.
struct TerminalEvents<'a> {
    bar: Option<ProgressBar>,
    json: bool,
    dataset: &'a std::path::Path,
}

impl ExperimentEvents for TerminalEvents<'_> {
    fn run_started(&mut self, run: &RunRecord, index: Option<&str>, _position: usize, _planned: usize) {
        if let Some(index) = index {
            eprintln!("{index}");
        }
        let bar = ProgressBar::new(run.total_items as u64);
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} {per_sec} eta {eta} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        self.bar = Some(bar);
    }

    fn progress(&mut self, run: &RunRecord, event: &Progress) {
        let Some(bar) = &self.bar else { return };
        match event {
            Progress::Started { run_id, already_done, .. } => {
                bar.set_position(*already_done as u64);
                bar.println(format!("run {run_id} ({})", terminal::line(&run.config.target, 200)));
            }
            Progress::ItemStarted { question_id, .. } => bar.set_message(question_id.clone()),
            Progress::ItemDone { done, error, question_id, .. } => {
                bar.set_position(*done as u64);
                if let Some(error) = error {
                    bar.println(format!("{question_id}: {}", terminal::line(error, 200)));
                }
            }
        }
    }

    fn run_finished(&mut self, report: &RunReport, status: RunStatus) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        if !self.json {
            print_run_summary(report);
            println!();
        }
        let failed: Vec<_> = report.items.iter().filter_map(|i| Some((&i.question.id, i.error.as_ref()?))).collect();
        let retry = format!("assay run {} --resume {}", self.dataset.display(), report.run.id);
        if status == RunStatus::Cancelled {
            eprintln!("cancelled: {} of {} items kept; finish with `{retry}`", report.items.len(), report.run.total_items);
        } else if !failed.is_empty() {
            for (id, error) in failed.iter().take(3) {
                eprintln!("{id}: {}", terminal::line(error, 300));
            }
            eprintln!("{} item(s) failed and are unscored; retry them with `{retry}`", failed.len());
        }
    }
}

//! The `assay` command line: a thin layer over the library.
//!
//! Results go to stdout (`--json` makes them machine-readable), progress and messages to stderr.
//! Exit codes: 0 ok, 1 a `--fail-under` gate failed, 2 bad input or usage (clap uses 2 too).

mod commands_compare;
mod commands_data;
mod commands_delete;
mod commands_generate;
mod commands_index_bench;
mod commands_judge;
mod commands_labels;
mod commands_run;
mod commands_text;
mod interrupt;
mod models;
mod print;
mod terminal;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(name = "assay", version, about = "Offline evaluator for RAG and QA systems on local models")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a dataset through a target, score every answer and store the run.
    Run(commands_run::RunArgs),
    /// List stored runs, newest first.
    Runs {
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        db: DbArg,
    },
    /// Delete stored runs with their answers, verdicts, people's labels and pairwise judgments
    /// (says what goes and asks first; `--yes` for scripts).
    Delete {
        /// Run ids, unique id prefixes, run names or experiment ids.
        #[arg(required = true)]
        runs: Vec<String>,
        /// Delete without asking.
        #[arg(long)]
        yes: bool,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        db: DbArg,
    },
    /// Show one run: summary and per-question table.
    Show {
        /// Run id, unique id prefix, or run name.
        run: String,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        db: DbArg,
    },
    /// Compare runs paired by question: each run after the first against the first.
    Compare {
        /// Run ids, prefixes or names, or an experiment id (its runs); the first run is the
        /// baseline.
        #[arg(required = true, num_args = 1..)]
        runs: Vec<String>,
        #[arg(long)]
        json: bool,
        /// Exit 1 when the lower bound of B − A's interval is under VALUE, e.g. token_f1=-0.05.
        #[arg(long, value_name = "METRIC=VALUE")]
        fail_under: Vec<String>,
        /// Seed of the bootstrap.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// The metric or judge the headline verdict is on (default: the first judge the runs
        /// used, else token_f1); the others are secondary, their p-values Holm-adjusted.
        #[arg(long, value_name = "METRIC")]
        primary: Option<String>,
        /// Also break the primary metric's difference down by question `tag` or by `doc`
        /// (exploratory: p-values Benjamini–Hochberg-adjusted across the groups).
        #[arg(long, value_name = "tag|doc")]
        by: Option<assay::compare::GroupBy>,
        #[command(flatten)]
        pairwise: commands_compare::PairwiseArgs,
        #[command(flatten)]
        db: DbArg,
    },
    /// Export runs as a report file.
    Export {
        /// Run ids, prefixes or names.
        #[arg(required = true)]
        runs: Vec<String>,
        /// html, md, csv, json or junit.
        #[arg(long)]
        format: assay::report::ReportFormat,
        #[arg(short, long)]
        output: PathBuf,
        /// JUnit: a question fails when METRIC is under VALUE for it. Repeatable.
        #[arg(long, value_name = "METRIC=VALUE")]
        fail_under: Vec<String>,
        #[command(flatten)]
        db: DbArg,
    },
    /// Print the text Assay reads from one manual (.pdf, .md, .txt): headings and blocks, as
    /// retrieval sees them.
    Text {
        file: PathBuf,
        /// The document as JSON: sections, blocks and their PDF pages.
        #[arg(long)]
        json: bool,
    },
    /// Build or verify a dataset's retrieval index (reused while the corpus is unchanged).
    Index {
        dataset: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Measure retrieval quality and speed and the model runtime (not a test: figures only).
    Bench {
        /// Dataset for the retrieval quality figures.
        #[arg(long, default_value = "datasets/trailgear")]
        dataset: PathBuf,
        /// Models to measure (default: the installed default models).
        #[arg(long, value_delimiter = ',')]
        models: Option<Vec<String>>,
        /// Leave out retrieval quality and speed.
        #[arg(long)]
        skip_retrieval: bool,
        /// Leave out the generation speed of the models.
        #[arg(long)]
        skip_models: bool,
        /// Leave out the judge bench (choice mode against free text).
        #[arg(long)]
        skip_judge: bool,
        /// Choice-mode judge compared with free-text judging (and its model, and how many
        /// sample answers it judges).
        #[arg(long, default_value = "correct")]
        judge: String,
        #[arg(long, default_value = "qwen2.5-coder-1.5b-instruct")]
        judge_model: String,
        #[arg(long, default_value_t = 20)]
        judge_items: usize,
        /// Judge sets whose reading is measured, old layout against new (sets separated by
        /// `;`, judges by `,`); empty to leave it out.
        #[arg(long, default_value = "correct,supported;correct,correctness,claims")]
        judge_sets: String,
        /// Answers file (in the dataset folder) for the reading bench.
        #[arg(long, default_value = "answers-long.jsonl")]
        judge_answers: String,
        /// How many of its answers the reading bench judges.
        #[arg(long, default_value_t = 8)]
        judge_reading_items: usize,
        #[arg(long)]
        json: bool,
        /// Add reranked retrieval rows (every mode's first stage rescored by this model, a
        /// registry id or a served model) with their cost per question.
        #[arg(long, value_name = "MODEL")]
        rerank: Option<String>,
        /// First-stage chunks the reranker rescores (default 20).
        #[arg(long)]
        rerank_depth: Option<usize>,
        /// Retrieval quality over the first N questions only (reranking on CPU is slow).
        #[arg(long, value_name = "N")]
        questions: Option<usize>,
        /// RAG questions (the dataset's first N) answered end to end in process and by
        /// llama-server serving the same file with the same threads and one slot; 0 leaves
        /// the row out (so does --skip-models).
        #[arg(long, value_name = "N", default_value_t = 8)]
        end_to_end: usize,
        /// The model of the end-to-end row.
        #[arg(long, default_value = "qwen2.5-coder-0.5b-instruct")]
        end_to_end_model: String,
        /// Measure only the model runtime on random weights of a real architecture
        /// (qwen2-1.5b, qwen2-0.5b, smollm2-135m): no model file needed.
        #[arg(long, value_name = "ARCH")]
        synthetic: Option<String>,
        /// Where the synthetic model runs: cpu, cuda or metal.
        #[arg(long, default_value = "cpu")]
        device: String,
        /// Synthetic decode batch sizes (sequences decoded side by side), e.g. 1,16.
        #[arg(long, value_delimiter = ',', default_value = "1")]
        batch: Vec<usize>,
    },
    /// Local models: list, pull, add, try.
    #[command(subcommand)]
    Models(models::ModelsCommand),
    /// Generate question/answer pairs from a dataset's manuals (kept only with a verbatim,
    /// supporting quote), or `--review` the generated pairs.
    Generate(commands_generate::GenerateArgs),
    /// Import a dataset from another format.
    #[command(subcommand)]
    Import(commands_data::ImportCommand),
    /// Judge specs: list the built-in and user judges, show one.
    #[command(subcommand)]
    Judges(commands_judge::JudgesCommand),
    /// People's labels on a run's answers: list, set, clear, export, import.
    #[command(subcommand)]
    Labels(commands_labels::LabelsCommand),
    /// Agreement of a run's judges with human labels (accuracy, kappa, Spearman, confusion).
    Agree {
        /// Run id, unique id prefix, or run name; several runs are pooled.
        #[arg(required = true)]
        runs: Vec<String>,
        /// Labels JSONL: {"id": "q001", "judge": "correctness", "label": "Good"} per line;
        /// one per run, in the same order. None: the labels stored with the runs (`assay
        /// labels`, the app), every judge compared with them as pass / fail.
        #[arg(long)]
        labels: Vec<PathBuf>,
        #[arg(long)]
        json: bool,
        /// Compare judges that have no labels of their own (a jury, claims) with the pass /
        /// fail of this judge's labels, e.g. `--labels-as correct`.
        #[arg(long)]
        labels_as: Option<String>,
        /// Fit decision thresholds on the expected score from the labels, report agreement
        /// before and after, and write calibrated copies of the specs into the judges dir.
        #[arg(long)]
        calibrate: bool,
        #[arg(long, env = "ASSAY_JUDGES_DIR")]
        judges_dir: Option<PathBuf>,
        #[command(flatten)]
        db: DbArg,
    },
}

/// `--db PATH`, else `$ASSAY_DB`, else the platform data dir.
#[derive(clap::Args, Clone)]
pub struct DbArg {
    /// SQLite file holding the runs.
    #[arg(long, env = "ASSAY_DB")]
    db: Option<PathBuf>,
}

impl DbArg {
    pub fn path(&self) -> anyhow::Result<PathBuf> {
        if let Some(path) = &self.db {
            return Ok(path.clone());
        }
        assay::run::default_database().ok_or_else(|| anyhow::anyhow!("no home directory; pass --db PATH"))
    }
}

fn main() {
    // Behave like other Unix tools when the reader goes away (`assay show … | head`): exit
    // quietly instead of panicking on a broken pipe.
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // Best effort: an allocator that refuses only costs speed.
    let _ = assay::heap::keep_freed_memory_for_reuse();
    if !cpu_has_avx2() {
        eprintln!(
            "error: this build of assay needs a CPU with AVX2 and FMA (x86-64-v3); \
             rebuild without `-C target-cpu=x86-64-v3` in .cargo/config.toml to run here"
        );
        std::process::exit(2);
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("ASSAY_LOG")
                // pdf-extract warns once per odd glyph (hundreds of lines for one InDesign
                // report) about nothing a user can act on; unreadable documents and pages
                // reach the user as Assay's own warnings.
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,pdf_extract=error"))
                // ureq's debug lines hold whole requests (every header but Authorization and
                // Cookie, and URLs with their query): secrets the HTTP target sends. Never below
                // warn, whatever ASSAY_LOG says.
                .add_directive("ureq=warn".parse().expect("a fixed directive")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => commands_run::run(args),
        Command::Runs { json, db } => commands_data::runs(json, &db).map(|_| 0),
        Command::Delete { runs, yes, json, db } => commands_delete::delete(&runs, yes, json, &db),
        Command::Show { run, json, db } => commands_data::show(&run, json, &db).map(|_| 0),
        Command::Compare {
            runs,
            json,
            fail_under,
            seed,
            primary,
            by,
            pairwise,
            db,
        } => commands_compare::compare(&runs, json, &fail_under, seed, primary.as_deref(), by, &pairwise, &db),
        Command::Export {
            runs,
            format,
            output,
            fail_under,
            db,
        } => commands_data::export(&runs, format, &output, &fail_under, &db).map(|_| 0),
        Command::Generate(args) => commands_generate::run(args),
        Command::Import(command) => commands_data::import(command).map(|_| 0),
        Command::Text { file, json } => commands_text::text(&file, json).map(|_| 0),
        Command::Index { dataset, json } => commands_index_bench::index(&dataset, json).map(|_| 0),
        Command::Bench {
            synthetic: Some(arch),
            device,
            batch,
            json,
            ..
        } => commands_index_bench::bench_synthetic(&arch, &device, &batch, json).map(|_| 0),
        Command::Bench {
            dataset,
            models,
            skip_retrieval,
            skip_models,
            skip_judge,
            judge,
            judge_model,
            judge_items,
            judge_sets,
            judge_answers,
            judge_reading_items,
            json,
            rerank,
            rerank_depth,
            questions,
            end_to_end,
            end_to_end_model,
            ..
        } => {
            let sets = judge_sets
                .split(';')
                .map(|set| set.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect::<Vec<_>>())
                .filter(|set| !set.is_empty())
                .collect();
            let judge = commands_index_bench::JudgeBenchArgs {
                judge,
                model: judge_model,
                items: judge_items,
                sets,
                answers: judge_answers,
                reading_items: judge_reading_items,
            };
            let parts = commands_index_bench::BenchParts {
                retrieval: !skip_retrieval,
                models: !skip_models,
                judge: !skip_judge,
            };
            let retrieval = commands_index_bench::RetrievalBenchArgs {
                rerank: assay::run::rerank_config(rerank, rerank_depth),
                questions,
            };
            let end_to_end = commands_index_bench::EndToEndArgs { questions: end_to_end, model: end_to_end_model };
            commands_index_bench::bench(&dataset, models, parts, retrieval, judge, end_to_end, json).map(|_| 0)
        }
        Command::Judges(command) => commands_judge::run(command),
        Command::Agree { runs, labels, json, labels_as, calibrate, judges_dir, db } => db.path().and_then(|db| {
            let request = assay::run::AgreementRequest { runs, labels, labels_as, calibrate, judges_dir };
            commands_judge::agree(&request, json, &db)
        }),
        Command::Models(command) => models::run(command),
        Command::Labels(command) => commands_labels::run(command),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(error) => {
            // Causes quote files, model output and server replies: escaped like any untrusted text.
            eprintln!("error: {}", terminal::text(&error_chain(&error)));
            std::process::exit(2);
        }
    }
}

/// The error and its causes on one line, each cause once: many of our errors already quote
/// their source (`path: cannot read: No such file`), which `{:#}` would print a second time.
fn error_chain(error: &anyhow::Error) -> String {
    let mut message = error.to_string();
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !message.contains(&cause) {
            message.push_str(": ");
            message.push_str(&cause);
        }
    }
    message
}

#[cfg(target_arch = "x86_64")]
fn cpu_has_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu_has_avx2() -> bool {
    true
}

//! `assay index` (build or verify a dataset's retrieval index) and `assay bench` (retrieval
//! quality and speed, and the model runtime's speed, measured side by side in one process).

use anyhow::Context;
use assay::dataset::load_dataset;
use assay::bench::end_to_end::{EndToEnd, EndToEndSide};
use assay::bench::model::{LlamaCppBench, ModelBench};
use assay::llm::device::DeviceChoice;
use assay::llm::model::LanguageModel;
use assay::models::registry::Registry;
use assay::bench::retrieval::{bench_retrieval, BenchOptions};
use assay::retrieve::IndexSettings;
use assay::targets::EMBEDDING_MODEL_ID;
use serde::Serialize;
use std::path::{Path, PathBuf};

pub fn index(dataset_dir: &Path, json: bool) -> anyhow::Result<()> {
    let dataset = load_dataset(dataset_dir)?;
    let report = assay::run::build_index(&dataset)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!("{}", report.headline());
    for issue in report.skipped.iter().chain(&report.warnings) {
        println!("  {issue}");
    }
    Ok(())
}

#[derive(Serialize)]
struct BenchReport {
    retrieval: Option<assay::bench::retrieval::RetrievalBench>,
    /// Each retrieval mode against the baseline on answer-in-top-5, question by question.
    retrieval_against_baseline: Vec<assay::bench::baseline::ModeAgainstBaseline>,
    /// Each model on the default kernel path, then on each narrower path measured (the forced
    /// AVX2 path on a CPU with a wider one), each against llama.cpp built for that path.
    models: Vec<assay::bench::model::ModelBench>,
    /// RAG questions in process against llama-server on the same file (None when left out,
    /// or llama-server or the model is missing: said on stderr).
    end_to_end: Option<EndToEnd>,
    /// Models asked for but not installed.
    skipped_models: Vec<String>,
    /// Choice-mode judging against generate-then-parse, when the judge model is installed.
    judge: Option<assay::bench::judge::JudgeBench>,
    /// Prompt tokens read and seconds per answer, old layout against new, per judge set.
    judge_reading: Vec<assay::bench::judge::ReadingBench>,
}

/// What the judge bench measures: the judge, its model, and how many sample answers.
pub struct JudgeBenchArgs {
    pub judge: String,
    pub model: String,
    pub items: usize,
    /// Judge sets for the reading bench (each a list of judge names).
    pub sets: Vec<Vec<String>>,
    /// Answers file (in the dataset) for the reading bench; default: the long answers.
    pub answers: String,
    /// How many of its answers.
    pub reading_items: usize,
}

/// Options of the retrieval quality bench.
pub struct RetrievalBenchArgs {
    /// Adds reranked rows.
    pub rerank: Option<assay::record::RerankConfig>,
    /// Only the first N questions.
    pub questions: Option<usize>,
}

/// Which parts of the bench run (each can be left out: the model parts take long on CPU).
pub struct BenchParts {
    pub retrieval: bool,
    pub models: bool,
    pub judge: bool,
}

/// The end-to-end row: how many of the dataset's questions, with which model.
pub struct EndToEndArgs {
    /// 0 leaves the row out.
    pub questions: usize,
    pub model: String,
}

/// Most tokens per answer on both sides of the end-to-end row: enough for the sample's short
/// answers, few enough that reading the ~2,500-token prompts (where the runtimes differ most)
/// is not drowned by decoding.
const END_TO_END_MAX_TOKENS: usize = 64;

/// Seeds the bootstrap and Monte Carlo permutation test of the comparisons with the baseline,
/// as `assay compare` does (seed 0), so a bench is reproducible.
const BENCH_SEED: u64 = 0;

/// The generators and judges measured by default, when installed.
const BENCH_MODELS: &[&str] = &[
    "smollm2-135m-instruct",
    "qwen2.5-coder-0.5b-instruct",
    "qwen2.5-coder-1.5b-instruct",
    "gemma3-270m",
];

pub fn bench(
    dataset_dir: &Path,
    models: Option<Vec<String>>,
    parts: BenchParts,
    retrieval: RetrievalBenchArgs,
    judge: JudgeBenchArgs,
    end_to_end_args: EndToEndArgs,
    json: bool,
) -> anyhow::Result<()> {
    let registry = Registry::load()?;
    let retrieval = if parts.retrieval {
        let reranker = match &retrieval.rerank {
            Some(config) => Some(assay::targets::build_reranker(config, assay::llm::device::DeviceChoice::Cpu)?.0),
            None => None,
        };
        let dataset = load_dataset(dataset_dir)?;
        let minilm_dir: Option<PathBuf> = registry
            .model_path(EMBEDDING_MODEL_ID)
            .ok()
            .and_then(|file| file.parent().map(Path::to_path_buf));
        let options = BenchOptions {
            minilm_dir,
            settings: IndexSettings::for_dataset(&dataset),
            reranker,
            questions: retrieval.questions,
            ..BenchOptions::default()
        };
        eprintln!("== retrieval on {} and a generated corpus", dataset.manifest.name);
        Some(bench_retrieval(Some(&dataset), &options).context("retrieval bench")?)
    } else {
        None
    };
    let ids: Vec<String> = match (parts.models, models) {
        (false, _) => Vec::new(),
        (true, Some(ids)) => ids,
        (true, None) => BENCH_MODELS.iter().map(|s| s.to_string()).collect(),
    };
    let mut measured = Vec::new();
    let mut skipped = Vec::new();
    for id in ids {
        let Ok(path) = registry.model_path(&id) else {
            skipped.push(id);
            continue;
        };
        eprintln!("== model {id} ({})", path.display());
        measured.push(bench_model_in_own_process(&id, None)?);
        for cpu_path in narrower_paths() {
            eprintln!("== model {id} on the {cpu_path} path (ASSAY_CPU={cpu_path})");
            measured.push(bench_model_in_own_process(&id, Some(cpu_path))?);
        }
    }
    let end_to_end = if parts.models && end_to_end_args.questions > 0 {
        end_to_end(&registry, dataset_dir, &end_to_end_args)?
    } else {
        None
    };
    let args = judge;
    let judge = match registry.model_path(&args.model) {
        _ if !parts.judge => None,
        Err(_) => {
            skipped.push(format!("{} (judge bench)", args.model));
            None
        }
        Ok(path) => {
            eprintln!("== judge {} on {} ({} sample answers)", args.judge, args.model, args.items);
            let dataset = load_dataset(dataset_dir)?;
            let items = sample_answers(&dataset, args.items)?;
            let specs = assay::judge::spec::load_all(None)?;
            let spec = assay::judge::spec::select(&specs, std::slice::from_ref(&args.judge))?.remove(0);
            if spec.mode != assay::judge::spec::JudgeMode::Choice {
                anyhow::bail!("judge {} is not a choice-mode judge: the bench compares choice mode with free text", spec.name);
            }
            let model = LanguageModel::shared(&path, &args.model, DeviceChoice::Cpu)?;
            Some(assay::bench::judge::bench_judge(model, &spec, &items)?)
        }
    };
    let mut judge_reading = Vec::new();
    if parts.judge && !args.sets.is_empty() {
        if let Ok(path) = registry.model_path(&args.model) {
            let dataset = load_dataset(dataset_dir)?;
            let items = answers_of(&dataset, &args.answers, args.reading_items)?;
            let model = LanguageModel::shared(&path, &args.model, DeviceChoice::Cpu)?;
            let specs = assay::judge::spec::load_all(None)?;
            for set in &args.sets {
                eprintln!("== judges {} on {}: old layout against new, {} answers of {}", set.join(","), args.model, items.len(), args.answers);
                let selected = assay::judge::spec::select(&specs, set)?;
                judge_reading.push(assay::bench::judge::bench_reading(model.clone(), &selected, &items)?);
            }
        }
    }
    let retrieval_against_baseline = retrieval
        .as_ref()
        .and_then(|r| r.quality.as_ref())
        .map(|q| assay::bench::baseline::against_baseline(q, BENCH_SEED))
        .unwrap_or_default();
    let report = BenchReport {
        retrieval,
        retrieval_against_baseline,
        models: measured,
        end_to_end,
        skipped_models: skipped,
        judge,
        judge_reading,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_bench(&report);
    }
    Ok(())
}

fn print_bench(report: &BenchReport) {
    if let Some(r) = &report.retrieval {
        if let Some(q) = &r.quality {
            let c = q.chunk_settings;
            println!("retrieval quality on {} ({} chunks of at most {} words, {} overlap):", q.dataset, q.chunks, c.size_words, c.overlap_words);
            println!("  {:<15} {:>6} {:>6} {:>6} {:>10}", "method", "hit@1", "hit@5", "MRR", "answer@5");
            println!("  {} questions", q.rows.first().map_or(0, |r| r.questions));
            for row in &q.rows {
                let cost = match (row.rerank_seconds_per_question, row.rerank_tokens_per_question) {
                    (Some(s), Some(t)) if t > 0.0 => format!("  rerank: {s:.1} s, {t:.0} prompt tokens a question"),
                    (Some(s), _) => format!("  rerank: {s:.1} s a question"),
                    _ => String::new(),
                };
                println!(
                    "  {:<15} {:>6.3} {:>6.3} {:>6.3} {:>10.3}{cost}",
                    row.method, row.hit_at_1, row.hit_at_5, row.mrr, row.answer_in_top_5
                );
            }
            if let Some(reranker) = &q.reranker {
                println!("  +rerank: each mode's first-stage chunks rescored ({reranker})");
            }
            println!(
                "  baseline: BM25 over fixed {}-word windows ({}-word stride) of {}",
                assay::bench::retrieval::BASELINE_WINDOW_WORDS, assay::bench::retrieval::BASELINE_STRIDE_WORDS, q.baseline_text
            );
            for reason in &q.not_measured {
                println!("  not measured: {reason}");
            }
            print_against_baseline(&report.retrieval_against_baseline);
        }
        let s = &r.scale;
        println!(
            "index build: {} chunks in {:.2}s ({:.0} chunks/s); BM25 query latency p50 {:.2} ms, p99 {:.2} ms over {} queries",
            s.chunks, s.build_seconds, s.chunks_per_second, s.query_p50_ms, s.query_p99_ms, s.queries
        );
        if let Some(e) = &r.embedding {
            println!("embedding (MiniLM, CPU): {} chunks in {:.1}s ({:.1} chunks/s)", e.chunks, e.seconds, e.chunks_per_second);
        }
    }
    for b in &report.models {
        let path = if b.cpu_path_forced { format!("{} path, forced", b.cpu_path) } else { format!("{} path", b.cpu_path) };
        println!(
            "{} ({path}, {} threads): prompt {:.1} tok/s, decode {:.1} tok/s; {} options after {} tokens: {:.2}s with prefix reuse, {:.2}s without ({:.1}x); peak RSS {}",
            b.model,
            b.threads,
            b.prompt_tok_per_s,
            b.decode_tok_per_s,
            b.scoring_options,
            b.scoring_prompt_tokens,
            b.scoring_with_prefix_reuse_s,
            b.scoring_without_prefix_reuse_s,
            b.scoring_without_prefix_reuse_s / b.scoring_with_prefix_reuse_s.max(1e-9),
            b.peak_rss_mib.map(|m| format!("{m:.0} MiB")).unwrap_or_else(|| "unknown".into())
        );
        if let Some(l) = &b.llama_cpp {
            println!(
                "  llama.cpp ({}), same file and threads: prompt {:.1} tok/s, decode {:.1} tok/s → ours/llama.cpp {}{}",
                b.llama_bench_program, l.prompt_tok_per_s, l.decode_tok_per_s, llama_ratios(l, b.rounds.len()),
                l.peak_rss_mib.zip(l.rss_ratio).map(|(m, r)| format!(", peak RSS {m:.0} MiB (ours {r:.2}x)")).unwrap_or_default()
            );
        } else {
            let build = match b.llama_bench_program.strip_prefix("llama-bench-") {
                Some(isa) => format!("scripts/llm_build_llama_cpp.sh DIR {isa}"),
                None => "scripts/llm_build_llama_cpp.sh".to_string(),
            };
            println!("  llama.cpp: `{}` not on the PATH ({build} builds it)", b.llama_bench_program);
        }
    }
    if let Some(e) = &report.end_to_end {
        print_end_to_end(e);
    }
    if let Some(j) = &report.judge {
        println!(
            "judge {} on {} over {} answers: choice {:.2} items/s (prefix reused), {:.2} items/s (whole prompt); \
             free text then parse {:.2} items/s with {} parse failures ({} same label as choice) → choice {:.1}x faster",
            j.judge,
            j.model,
            j.items,
            j.choice_items_per_s,
            j.choice_without_prefix_reuse_items_per_s,
            j.free_text_items_per_s,
            j.free_text_parse_failures,
            j.free_text_same_label,
            j.choice_speedup
        );
    }
    for r in &report.judge_reading {
        let cpu = |f: &assay::bench::judge::ReadingFigures| f.cpu_seconds_per_answer.map(|c| format!(" ({c:.2} s of processor time)")).unwrap_or_default();
        println!(
            "judges {} on {} over {} answers ({:.0} item tokens each): old layout reads {:.0} tokens/answer ({:.2}x the item), \
             {:.2} s/answer{}, {} unscored; new layout {:.0} tokens/answer ({:.2}x the item), {:.2} s/answer{}, {} unscored → {:.2}x faster",
            r.judges.join(","),
            r.model,
            r.answers,
            r.item_tokens_per_answer,
            r.old.tokens_read_per_answer,
            r.old.read_ratio,
            r.old.seconds_per_answer,
            cpu(&r.old),
            r.old.unscored,
            r.new.tokens_read_per_answer,
            r.new.read_ratio,
            r.new.seconds_per_answer,
            cpu(&r.new),
            r.new.unscored,
            r.speedup
        );
    }
    if !report.skipped_models.is_empty() {
        println!("not installed, not measured: {}", report.skipped_models.join(", "));
    }
}

/// The narrower kernel paths measured besides the default one; none when the user's
/// `ASSAY_CPU` already names the path to measure.
fn narrower_paths() -> Vec<&'static str> {
    if std::env::var("ASSAY_CPU").is_ok_and(|v| !v.trim().is_empty()) {
        return Vec::new();
    }
    assay::bench::model::narrower_paths_to_compare()
}

/// "prompt 1.02x (0.97-1.05), decode 0.99x (0.94-1.03) over 3 rounds": the median ratio of
/// the rounds and their range.
pub(crate) fn llama_ratios(l: &LlamaCppBench, rounds: usize) -> String {
    let spread = |range: Option<(f64, f64)>| match range {
        Some((lo, hi)) if rounds > 1 => format!(" ({lo:.2}-{hi:.2})"),
        _ => String::new(),
    };
    let over = if rounds > 1 { format!(" over {rounds} rounds") } else { String::new() };
    format!(
        "prompt {:.2}x{}, decode {:.2}x{}{over}",
        l.prompt_ratio,
        spread(l.prompt_ratio_range),
        l.decode_ratio,
        spread(l.decode_ratio_range)
    )
}

/// `assay models bench ID --json` in a child process, so that the peak RSS it reports is this
/// model's own: one process loading the models in turn keeps the high-water mark of the
/// largest so far (and the allocator's leftovers). `cpu_path` forces a kernel path
/// (`ASSAY_CPU`).
fn bench_model_in_own_process(id: &str, cpu_path: Option<&str>) -> anyhow::Result<ModelBench> {
    let exe = std::env::current_exe().context("finding the assay binary to run the model bench")?;
    let mut command = std::process::Command::new(exe);
    command.args(["models", "bench", id, "--json"]).stderr(std::process::Stdio::inherit());
    if let Some(path) = cpu_path {
        command.env("ASSAY_CPU", path);
    }
    let out = command.output().with_context(|| format!("starting `assay models bench {id}`"))?;
    if !out.status.success() {
        anyhow::bail!("`assay models bench {id}` failed ({})", out.status);
    }
    let row: ModelBench =
        serde_json::from_slice(&out.stdout).with_context(|| format!("reading the figures of `assay models bench {id} --json`"))?;
    // Each row as it lands: the whole bench prints at its end, which on a busy CPU is long after.
    let llama = row
        .llama_cpp
        .as_ref()
        .map(|l| format!("; {}: {:.1} / {:.1} tok/s ({})", row.llama_bench_program, l.prompt_tok_per_s, l.decode_tok_per_s, llama_ratios(l, row.rounds.len())))
        .unwrap_or_default();
    eprintln!("   {} path: prompt {:.1} tok/s, decode {:.1} tok/s{llama}", row.cpu_path, row.prompt_tok_per_s, row.decode_tok_per_s);
    Ok(row)
}

/// The end-to-end row: the first `questions` questions of the dataset through `assay run
/// --target rag`, once with the model served by llama-server (one slot, same threads), then in
/// process on each kernel path. Each side is its own process and database, as a user runs it.
fn end_to_end(registry: &Registry, dataset_dir: &Path, args: &EndToEndArgs) -> anyhow::Result<Option<EndToEnd>> {
    let Some(server_program) = assay::bench::end_to_end::find_llama_server() else {
        eprintln!("== end to end: left out, llama-server is neither on the PATH nor cached (scripts/llm_build_llama_server.sh builds it)");
        return Ok(None);
    };
    let Ok(model_path) = registry.model_path(&args.model) else {
        eprintln!("== end to end: left out, {} is not installed (assay models pull {})", args.model, args.model);
        return Ok(None);
    };
    // The same count on both sides: the runtime's pool takes RAYON_NUM_THREADS, else the cores.
    let threads = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let exe = std::env::current_exe().context("finding the assay binary to run the end-to-end bench")?;
    let dataset = dataset_dir.to_str().with_context(|| format!("{}: the dataset path is not UTF-8", dataset_dir.display()))?;
    let scratch = tempfile::tempdir().context("a scratch folder for the end-to-end bench")?;
    // The index is built (or found) once, before either side is timed.
    let index = std::process::Command::new(&exe).args(["index", dataset]).output().context("starting `assay index`")?;
    if !index.status.success() {
        anyhow::bail!("`assay index {dataset}` failed: {}", String::from_utf8_lossy(&index.stderr).trim());
    }
    let run_side = |label: &str, model: &str, env: &[(&str, &std::ffi::OsStr)]| -> anyhow::Result<EndToEndSide> {
        let db = scratch.path().join(format!("{label}.sqlite"));
        let mut command = std::process::Command::new(&exe);
        command
            .args(["run", dataset, "--target", "rag", "--model", model])
            .args(["--limit", &args.questions.to_string(), "--max-tokens", &END_TO_END_MAX_TOKENS.to_string(), "--json"])
            .arg("--db")
            .arg(&db)
            .env("RAYON_NUM_THREADS", threads.to_string());
        for (key, value) in env {
            command.env(key, value);
        }
        let started = std::time::Instant::now();
        let out = command.output().with_context(|| format!("starting `assay run` for the end-to-end side {label}"))?;
        let wall_s = started.elapsed().as_secs_f64();
        if !out.status.success() {
            anyhow::bail!("the end-to-end side {label} (`assay run {dataset} --model {model}`) failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr).trim());
        }
        Ok(assay::bench::end_to_end::side_from_run_json(label, wall_s, &out.stdout)?)
    };

    eprintln!("== end to end: {} questions of {dataset} with {} on llama-server ({}), {threads} threads, one slot", args.questions, args.model, server_program.display());
    let server = assay::bench::end_to_end::LlamaServerProcess::start(&server_program, &model_path, threads, 8192, &scratch.path().join("llama-server.log"))?;
    let served_models = scratch.path().join("models");
    let mut served_registry = Registry::load_in(served_models.clone())?;
    served_registry.add_server(assay::models::server_spec::ServerSpec {
        id: "bench-served".into(),
        base_urls: vec![server.url()],
        model: args.model.clone(),
        api_key_env: None,
        timeout_s: 600,
        // A retried request would count twice in the time.
        retries: 0,
    })?;
    let served = run_side("llama-server", "bench-served", &[("ASSAY_MODELS", served_models.as_os_str())])?;
    let server_cpu_features = server.cpu_features();
    let server_start_s = server.start_s;
    // Stopped before the in-process side runs: its memory is no longer the machine's.
    drop(server);

    let mut in_process = Vec::new();
    let default_label = "in process (default path)".to_string();
    for cpu_path in std::iter::once(None).chain(narrower_paths().into_iter().map(Some)) {
        let label = cpu_path.map_or(default_label.clone(), |p| format!("in process ({p} path, forced)"));
        eprintln!("== end to end: the same questions {label}");
        let env: Vec<(&str, &std::ffi::OsStr)> = cpu_path.map(|p| ("ASSAY_CPU", std::ffi::OsStr::new(p))).into_iter().collect();
        let mut side = run_side(&label, &args.model, &env)?;
        side.ratio = Some(served.wall_s / side.wall_s);
        in_process.push(side);
    }
    let ratio = served.wall_s / in_process[0].wall_s;
    Ok(Some(EndToEnd {
        model: args.model.clone(),
        dataset: dataset.to_string(),
        questions: args.questions,
        threads,
        max_tokens: END_TO_END_MAX_TOKENS,
        server_program: server_program.display().to_string(),
        server_cpu_features,
        server_start_s,
        served,
        in_process,
        ratio,
    }))
}

fn print_end_to_end(e: &EndToEnd) {
    println!(
        "end to end: {} questions of {} with {} (at most {} tokens an answer, {} threads)",
        e.questions, e.dataset, e.model, e.max_tokens, e.threads
    );
    let line = |side: &EndToEndSide| {
        format!(
            "{:.1} s ({:.1} s answering, {} prompt + {} answer tokens)",
            side.wall_s, side.answer_s, side.prompt_tokens, side.completion_tokens
        )
    };
    println!(
        "  llama-server, one slot: {} [server built with: {}; up in {:.1} s, not counted]",
        line(&e.served),
        e.server_cpu_features.as_deref().unwrap_or("unknown"),
        e.server_start_s
    );
    for side in &e.in_process {
        let ratio = side.ratio.map(|r| format!(" → {r:.2}x the server's speed")).unwrap_or_default();
        println!("  {}: {}{ratio}", side.label, line(side));
    }
}

/// One line per mode: its answer@5 minus the baseline's, the interval, the Holm-adjusted p
/// and the verdict, as `assay compare` words them.
fn print_against_baseline(modes: &[assay::bench::baseline::ModeAgainstBaseline]) {
    if modes.is_empty() {
        return;
    }
    println!("  answer@5 against the baseline (paired over questions; p Holm-adjusted over {} modes):", modes.len());
    for m in modes {
        let d = &m.diff;
        println!(
            "  {:<15} {:+.3} [{:+.3}, {:+.3}]  {} better / {} worse of {}  p {}  {}",
            m.method,
            d.mean_diff,
            d.ci95_diff[0],
            d.ci95_diff[1],
            d.wins,
            d.losses,
            d.pairs,
            assay::compare::format_p(d.adjusted_p),
            d.verdict.describe("baseline", &m.method)
        );
    }
}

/// The first `n` answerable questions of a dataset with the answers of its sloppy (else
/// careful) sample answer set: a mix of right and wrong answers for the judge bench.
fn sample_answers(dataset: &assay::dataset::Dataset, n: usize) -> anyhow::Result<Vec<(assay::dataset::Question, assay::record::Answer)>> {
    let file = ["answers-sloppy.jsonl", "answers-careful.jsonl"]
        .iter()
        .find(|f| dataset.root.join(f).is_file())
        .with_context(|| format!("{}: no sample answers file for the judge bench", dataset.root.display()))?;
    answers_of(dataset, file, n)
}

/// The first `n` answerable questions with their answers in `file` (in the dataset folder).
fn answers_of(dataset: &assay::dataset::Dataset, file: &str, n: usize) -> anyhow::Result<Vec<(assay::dataset::Question, assay::record::Answer)>> {
    let path = dataset.root.join(file);
    let answers = assay::targets::load_answers_file(&path, dataset)?;
    Ok(dataset
        .questions
        .iter()
        .filter(|q| q.answer.is_some())
        .filter_map(|q| {
            let replayed = answers.get(&q.id)?;
            Some((q.clone(), assay::record::Answer { text: replayed.answer.clone(), ..Default::default() }))
        })
        .take(n)
        .collect())
}

/// `assay bench --synthetic ARCH`: the model runtime's speed on random weights of a real
/// architecture, on any device, without the model file.
pub fn bench_synthetic(arch: &str, device: &str, batches: &[usize], json: bool) -> anyhow::Result<()> {
    let arch: assay::llm::synthetic::SyntheticArch = arch.parse()?;
    let device: DeviceChoice = device.parse()?;
    eprintln!(
        "== synthetic {} on {device}: making {:.2}B random {:?} weights",
        arch.id,
        arch.parameters() as f64 / 1e9,
        arch.matrix_dtype
    );
    let b = assay::bench::model::bench_synthetic(&arch, device, batches, 512, 128)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&b)?);
        return Ok(());
    }
    println!(
        "synthetic {} ({:.2}B weights, {:?}) on {} ({} CPU threads); weights made in {:.1}s",
        b.arch.id,
        b.parameters as f64 / 1e9,
        b.arch.matrix_dtype,
        b.device,
        b.threads,
        b.setup_s
    );
    println!("  prompt: {:.1} tok/s ({} tokens)", b.prompt_tok_per_s, b.prompt_tokens);
    for d in &b.decode {
        println!(
            "  decode batch {:>3}: {:.1} tok/s ({:.2} ms per step, {} steps)",
            d.batch, d.tok_per_s, d.step_ms, d.steps
        );
    }
    if let Some(rss) = b.peak_rss_mib {
        println!("  peak RSS {rss:.0} MiB");
    }
    Ok(())
}

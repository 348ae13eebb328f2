//! Served models through the real binary against a real llama.cpp `llama-server` (built by
//! scripts/llm_build_llama_server.sh, on PATH in CI) serving SmolLM2 on 127.0.0.1: a rag run
//! and a judged run over the server; reranking over the server; choice verdicts over the server agree with the
//! in-process runtime on the same file; two replicas share the load; a server killed mid-run
//! leaves unscored items that `--resume` completes; the API key is in no file Assay writes;
//! an unreachable server is an error that names the endpoint; an item too long for the
//! server's window is cut, scored and flagged.

use crate::common;
use crate::llm_common;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::ok;

const API_KEY: &str = "sk-local-9Xq2-never-stored";

/// A llama-server process on 127.0.0.1, killed when dropped.
struct LlamaServer {
    child: Child,
    port: u16,
}

impl LlamaServer {
    fn start(model: &Path, port: u16, extra: &[&str]) -> LlamaServer {
        let child = Command::new("llama-server")
            .args(["-m", model.to_str().unwrap(), "--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["-t", "1", "-c", "8192", "-np", "4", "--jinja", "--metrics", "--no-webui"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("llama-server starts");
        let server = LlamaServer { child, port };
        let deadline = Instant::now() + Duration::from_secs(60);
        while !server.healthy() {
            assert!(Instant::now() < deadline, "llama-server did not come up on port {port}");
            std::thread::sleep(Duration::from_millis(100));
        }
        server
    }

    fn healthy(&self) -> bool {
        ureq::get(&format!("http://127.0.0.1:{}/health", self.port)).call().is_ok()
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Requests this server finished (its Prometheus counter of decoded tokens > 0 means it
    /// generated for at least one).
    fn tokens_predicted(&self) -> f64 {
        let text = ureq::get(&format!("http://127.0.0.1:{}/metrics", self.port))
            .call()
            .ok()
            .and_then(|r| r.into_string().ok())
            .unwrap_or_default();
        text.lines()
            .find(|l| l.starts_with("llamacpp:tokens_predicted_total"))
            .and_then(|l| l.split_whitespace().last())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    }
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn llama_server_available() -> bool {
    let found = Command::new("llama-server").arg("--version").output().is_ok();
    if !found {
        eprintln!("\n*** SKIPPED: llama-server is not on PATH (scripts/llm_build_llama_server.sh builds it)\n");
    }
    found
}

/// A models folder of its own: the local SmolLM2 by reference, and `servers` registered.
fn models_dir(dir: &Path, model: &Path, servers: &[(&str, Vec<String>, Option<&str>)]) -> PathBuf {
    let models = dir.join("models");
    let run = |args: &[&str]| ok(Command::new(env!("CARGO_BIN_EXE_assay")).args(args).env("ASSAY_MODELS", &models).output().unwrap());
    run(&["models", "add", model.to_str().unwrap(), "--id", "smol-local"]);
    for (id, urls, key_env) in servers {
        let mut args = vec!["models", "add-server", id, "--served-model", "smollm2"];
        for url in urls {
            args.extend(["--url", url.as_str()]);
        }
        if let Some(env) = key_env {
            args.extend(["--api-key-env", env]);
        }
        run(&args);
    }
    models
}

fn assay(models: &Path, db: &Path, args: &[&str]) -> std::process::Output {
    common::assay_command(args, db)
        .env("ASSAY_MODELS", models)
        .env("SERVER_KEY", API_KEY)
        .output()
        .expect("assay runs")
}

fn items(out: &str) -> Vec<serde_json::Value> {
    let json: serde_json::Value = serde_json::from_str(out).expect("json");
    json["runs"][0]["items"].as_array().expect("items").clone()
}

// The rag runs below retrieve one chunk (`--top-k 1`): what they check is the serving, not the
// retrieval, and llama-server on one thread reads a four-chunk prompt in about 18 s on a 2-core
// AMD EPYC Zen 3 (SmolLM2, 2026-11-29), which made these two tests the suite's last four minutes.
#[test]
fn rag_and_judges_run_over_llama_server_and_agree_with_the_in_process_runtime() {
    let Some(model) = llm_common::smollm2() else { return };
    if !llama_server_available() {
        return;
    }
    let server = LlamaServer::start(&model.path, free_port(), &["--api-key", API_KEY]);
    let dir = tempfile::tempdir().unwrap();
    let models = models_dir(dir.path(), &model.path, &[("smol-served", vec![server.url()], Some("SERVER_KEY"))]);
    let db = dir.path().join("assay.sqlite");
    let dataset = common::trailgear();
    let dataset = dataset.to_str().unwrap();

    // The listing says whether the server answers.
    let list = ok(Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["models", "list"])
        .env("ASSAY_MODELS", &models)
        .env("SERVER_KEY", API_KEY)
        .output()
        .unwrap());
    assert!(list.contains("served: 1 of 1 replicas answer"), "{list}");

    // Generation over the server, four questions in flight.
    let out = ok(assay(
        &models,
        &db,
        &["run", dataset, "--target", "rag", "--model", "smol-served", "--retrieval", "bm25", "--top-k", "1", "--limit", "4", "--concurrency", "4", "--max-tokens", "48", "--json"],
    ));
    let rag_run: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rag_run = rag_run["runs"][0]["id"].as_str().unwrap().to_string();
    let answered = items(&out);
    assert_eq!(answered.len(), 4);
    for item in &answered {
        assert!(item["error"].is_null(), "{item}");
        assert!(!item["answer"].as_str().unwrap().trim().is_empty(), "{item}");
        assert!(item["completion_tokens"].as_u64().unwrap() > 0, "{item}");
    }

    // The same 20 answers judged over the server and in process: P(Yes) agrees.
    let judged = |judge_model: &str, db: &Path| {
        items(&ok(assay(
            &models,
            db,
            &["run", dataset, "--target", "answers:answers-careful.jsonl", "--judges", "correct", "--judge-model", judge_model, "--limit", "20", "--json"],
        )))
    };
    let served = judged("smol-served", &db);
    // The run config says how the verdicts were read.
    let stored = String::from_utf8_lossy(&std::fs::read(&db).unwrap()).into_owned();
    assert!(stored.contains("served model smollm2: first-token log-probabilities (top 20)"));
    let local = judged("smol-local", &dir.path().join("local.sqlite"));
    let p_yes = |item: &serde_json::Value| item["verdicts"]["correct"]["distribution"]["Yes"].as_f64().expect("a scored verdict");
    let diffs: Vec<f64> = served.iter().zip(&local).map(|(a, b)| (p_yes(a) - p_yes(b)).abs()).collect();
    let mean = diffs.iter().sum::<f64>() / diffs.len() as f64;
    eprintln!("P(Yes) served vs in-process over {} items: mean |Δ| {mean:.3}", diffs.len());
    assert_eq!(diffs.len(), 20);
    assert!(mean <= 0.05, "mean |ΔP| {mean:.3}: {diffs:?}");

    // A judge with a baseline asks the server twice: the answer, then the question in its
    // place; its verdict is the first divided by the second.
    let judges = dir.path().join("judges");
    std::fs::create_dir_all(&judges).unwrap();
    std::fs::write(judges.join("correct.md"), &assay::judge::spec::load_all(None).unwrap()["correct"].template).unwrap();
    std::fs::write(
        judges.join("vs_nothing.toml"),
        "name = \"vs_nothing\"\nprompt = \"correct.md\"\noutcomes = [\"No\", \"Yes\"]\ninputs = [\"question\", \"reference\", \"answer\"]\nbaseline = \"question\"\n",
    )
    .unwrap();
    let against = items(&ok(assay(
        &models,
        &db,
        &["run", dataset, "--target", "answers:answers-careful.jsonl", "--judges", "correct,vs_nothing", "--judges-dir", judges.to_str().unwrap(), "--judge-model", "smol-served", "--limit", "4", "--json"],
    )));
    for item in &against {
        let verdicts = &item["verdicts"];
        let p = verdicts["correct"]["distribution"]["Yes"].as_f64().expect("scored");
        let b = verdicts["vs_nothing"]["baseline"]["Yes"].as_f64().expect("the baseline is kept");
        let divided = (p / b) / (p / b + (1.0 - p) / (1.0 - b));
        let got = verdicts["vs_nothing"]["distribution"]["Yes"].as_f64().unwrap();
        assert!((got - divided).abs() < 1e-9, "{got} vs {divided}: {verdicts}");
    }

    // The statements judge over the server: every statement checked with one first-token
    // request, and each statement's P(supported) close to the in-process runtime's.
    let statements = |judge_model: &str, db: &Path| {
        items(&ok(assay(
            &models,
            db,
            &["run", dataset, "--target", "answers:answers-long.jsonl", "--judges", "supported", "--judge-model", judge_model, "--limit", "2", "--json"],
        )))
    };
    let served = statements("smol-served", &db);
    let local = statements("smol-local", &dir.path().join("local.sqlite"));
    let mut deltas = Vec::new();
    for (a, b) in served.iter().zip(&local) {
        let (sa, sb) = (&a["verdicts"]["supported"]["statements"], &b["verdicts"]["supported"]["statements"]);
        let (sa, sb) = (sa.as_array().expect("served statements"), sb.as_array().expect("local statements"));
        assert!(!sa.is_empty() && sa.len() == sb.len(), "{a}");
        for (x, y) in sa.iter().zip(sb) {
            assert_eq!(x["text"], y["text"]);
            deltas.push((x["supported"].as_f64().unwrap() - y["supported"].as_f64().unwrap()).abs());
        }
    }
    let mean = deltas.iter().sum::<f64>() / deltas.len() as f64;
    eprintln!("P(supported) served vs in-process over {} statements: mean |Δ| {mean:.3}", deltas.len());
    assert!(mean <= 0.06, "mean |ΔP| {mean:.3}: {deltas:?}");

    // Reranking over the server: each of the first stage's chunks scored by first-token P(Yes).
    let out = ok(assay(
        &models,
        &db,
        &["run", dataset, "--target", "retrieve", "--retrieval", "bm25", "--top-k", "2", "--rerank", "smol-served", "--rerank-depth", "4", "--limit", "2", "--json"],
    ));
    let reranked: serde_json::Value = serde_json::from_str(&out).unwrap();
    let target = reranked["runs"][0]["config"]["target"].as_str().unwrap();
    assert!(target.contains("rerank=smol-served@4:yes-no"), "{target}");
    for item in items(&out) {
        assert!(item["error"].is_null(), "{item}");
        let scores: Vec<f64> = item["retrieved"].as_array().unwrap().iter().map(|c| c["score"].as_f64().unwrap()).collect();
        assert_eq!(scores.len(), 2);
        assert!(scores.iter().all(|p| (0.0..=1.0).contains(p)) && scores[0] >= scores[1], "P(Yes), best first: {scores:?}");
    }

    // The key is in no file Assay wrote.
    for file in [db.clone(), models.join("user-models.toml")] {
        let bytes = std::fs::read(&file).unwrap();
        assert!(!bytes.windows(API_KEY.len()).any(|w| w == API_KEY.as_bytes()), "the key is in {}", file.display());
    }
    let export = dir.path().join("runs.json");
    ok(assay(&models, &db, &["export", &rag_run, "--format", "json", "--output", export.to_str().unwrap()]));
    let bytes = std::fs::read(&export).unwrap();
    assert!(!bytes.windows(API_KEY.len()).any(|w| w == API_KEY.as_bytes()));
}

#[test]
fn two_replicas_share_the_load_and_a_killed_server_leaves_items_that_resume_completes() {
    let Some(model) = llm_common::smollm2() else { return };
    if !llama_server_available() {
        return;
    }
    let first = LlamaServer::start(&model.path, free_port(), &[]);
    let second = LlamaServer::start(&model.path, free_port(), &[]);
    let dir = tempfile::tempdir().unwrap();
    let models = models_dir(dir.path(), &model.path, &[("smol-pair", vec![first.url(), second.url()], None)]);
    let dataset = common::trailgear();
    let dataset = dataset.to_str().unwrap();
    let out = ok(assay(
        &models,
        &dir.path().join("pair.sqlite"),
        &["run", dataset, "--target", "rag", "--model", "smol-pair", "--retrieval", "bm25", "--top-k", "1", "--limit", "6", "--concurrency", "2", "--max-tokens", "24", "--json"],
    ));
    assert!(items(&out).iter().all(|i| i["error"].is_null()), "{out}");
    assert!(first.tokens_predicted() > 0.0 && second.tokens_predicted() > 0.0, "both replicas answered");
    drop(second);

    // Killed mid-run: the items after it are unscored with the reason, resume finishes them.
    let port = first.port;
    let db = dir.path().join("killed.sqlite");
    let models = models_dir(&dir.path().join("k"), &model.path, &[("smol-one", vec![first.url()], None)]);
    let running = common::assay_command(
        &["run", dataset, "--target", "rag", "--model", "smol-one", "--retrieval", "bm25", "--top-k", "1", "--limit", "8", "--max-tokens", "64"],
        &db,
    )
    .env("ASSAY_MODELS", &models)
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let answered = || -> i64 {
        rusqlite::Connection::open(&db)
            .and_then(|c| c.query_row("SELECT COUNT(*) FROM items WHERE error IS NULL", [], |r| r.get(0)))
            .unwrap_or(0)
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    while answered() < 2 {
        assert!(Instant::now() < deadline, "no answers within two minutes");
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(first);
    let finished = running.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&finished.stderr);
    assert!(stderr.contains("failed and are unscored"), "{stderr}");
    assert!(stderr.contains(&format!("http://127.0.0.1:{port}/v1/chat/completions (smollm2)")), "{stderr}");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let (failed, run_id): (i64, String) = conn
        .query_row("SELECT COUNT(*), MAX(run_id) FROM items WHERE error IS NOT NULL", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    assert!(failed >= 1);
    drop(conn);
    let _back = LlamaServer::start(&model.path, port, &[]);
    let out = ok(common::assay_command(&["run", dataset, "--resume", &run_id, "--json"], &db)
        .env("ASSAY_MODELS", &models)
        .output()
        .unwrap());
    let done = items(&out);
    assert_eq!(done.len(), 8);
    assert!(done.iter().all(|i| i["error"].is_null()), "{out}");
}

#[test]
fn an_unreachable_server_is_an_error_naming_the_endpoint() {
    let Some(model) = llm_common::smollm2() else { return };
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let models = models_dir(dir.path(), &model.path, &[("nowhere", vec![url.clone()], None)]);
    let db = dir.path().join("assay.sqlite");
    let dataset = common::trailgear();
    // As a judge: refused before the run starts, nothing written.
    let out = assay(
        &models,
        &db,
        &["run", dataset.to_str().unwrap(), "--target", "answers:answers-careful.jsonl", "--judges", "correct", "--judge-model", "nowhere"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains(&format!("{url}/chat/completions (smollm2)")) && stderr.contains("Connection"), "{stderr}");
    assert!(!db.exists());
    // As a generator: each item unscored with the reason.
    let out = ok(assay(&models, &db, &["run", dataset.to_str().unwrap(), "--target", "rag", "--model", "nowhere", "--retrieval", "bm25", "--limit", "1", "--json"]));
    let error = items(&out)[0]["error"].as_str().unwrap().to_string();
    assert!(error.contains(&url) && error.contains("Connection"), "{error}");
}

#[test]
fn a_prompt_past_the_servers_window_is_cut_to_fit_scored_and_flagged() {
    let Some(model) = llm_common::smollm2() else { return };
    if !llama_server_available() {
        return;
    }
    // One slot of 1,024 tokens: a 1,500-word answer cannot be read whole.
    let server = LlamaServer::start(&model.path, free_port(), &["-c", "1024", "-np", "1"]);
    let dir = tempfile::tempdir().unwrap();
    let models = models_dir(dir.path(), &model.path, &[("small-window", vec![server.url()], None)]);
    let db = dir.path().join("assay.sqlite");
    let dataset = common::trailgear();
    let careful = std::fs::read_to_string(dataset.join("answers-careful.jsonl")).unwrap();
    let first: serde_json::Value = serde_json::from_str(careful.lines().next().unwrap()).unwrap();
    let mut long = first["answer"].as_str().unwrap().to_string();
    for n in 0..120 {
        long.push_str(&format!(" Step {n}: check the seal, rinse the cartridge and log the result before the next use."));
    }
    let answers = dir.path().join("long.jsonl");
    std::fs::write(&answers, serde_json::json!({"id": first["id"], "answer": long}).to_string() + "\n").unwrap();
    let target = format!("answers:{}", answers.display());
    let out = ok(assay(
        &models,
        &db,
        &["run", dataset.to_str().unwrap(), "--target", &target, "--limit", "1"]
            .into_iter()
            .chain(["--judges", "correct,supported", "--judge-model", "small-window", "--json"])
            .collect::<Vec<_>>(),
    ));
    let item = &items(&out)[0];
    for judge in ["correct", "supported"] {
        let verdict = &item["verdicts"][judge];
        assert!(verdict["score"].as_f64().is_some(), "{judge} unscored: {verdict}");
        let flags: Vec<&str> = verdict["flags"].as_array().unwrap().iter().filter_map(|f| f.as_str()).collect();
        assert!(flags.contains(&"cut to fit the judge's context"), "{judge}: {flags:?}");
    }
}

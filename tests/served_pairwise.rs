//! Pairwise judging over a real llama.cpp `llama-server` (on PATH, as for `server_models`)
//! serving SmolLM2 on 127.0.0.1: the server reads the very tokens the in-process judge reads,
//! and each order's distribution over `1`/`2`/`tie` agrees with the in-process runtime's on the
//! same GGUF file — through the real binary, judged once, stored and reused; so does a judge
//! asked about each answer in turn. A pair past the server's window is cut to fit, scored and
//! flagged.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use assay::dataset::Question;
use assay::judge::pairwise::{pair_variables, PairwiseJudge};
use assay::judge::prompt::{marked, marked_for_server};
use assay::judge::spec::builtin;
use assay::llm::chat_template::ChatMessage;
use assay::llm::prompt_text::{for_server, without_marks};
use assay::metrics::numbers::written_as_the_reference;
use assay::record::Answer;
use serde_json::{json, Value};

use crate::common::{self, ok};
use crate::llm_common;

/// A llama-server process on 127.0.0.1, killed when dropped.
struct LlamaServer {
    child: Child,
    port: u16,
}

impl LlamaServer {
    /// A server of one slot whose window is `context` tokens.
    fn start(model: &Path, context: &str) -> Option<LlamaServer> {
        let port = TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
        let child = Command::new("llama-server")
            .args(["-m", model.to_str()?, "--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["-t", "1", "-c", context, "-np", "1", "--jinja", "--no-webui"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let Ok(child) = child else {
            eprintln!("\n*** SKIPPED: llama-server is not on PATH (scripts/llm_build_llama_server.sh builds it)\n");
            return None;
        };
        let server = LlamaServer { child, port };
        let deadline = Instant::now() + Duration::from_secs(60);
        while ureq::get(&format!("http://127.0.0.1:{port}/health")).call().is_err() {
            assert!(Instant::now() < deadline, "llama-server did not come up on port {port}");
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(server)
    }

    fn post(&self, path: &str, body: Value) -> Value {
        ureq::post(&format!("http://127.0.0.1:{}{path}", self.port))
            .send_json(body)
            .unwrap_or_else(|e| panic!("{path}: {e}"))
            .into_json()
            .unwrap()
    }
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn sample() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/trailgear")
}

fn jsonl(name: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(sample().join(name)).unwrap();
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// A database and models dir of its own, and the binary run against them.
struct Workspace {
    dir: tempfile::TempDir,
}

impl Workspace {
    fn new() -> Workspace {
        Workspace { dir: tempfile::tempdir().unwrap() }
    }

    /// `assay ARGS` on this workspace's database and models dir; its standard output.
    fn assay(&self, args: &[&str]) -> String {
        let db = self.dir.path().join("runs.sqlite");
        ok(common::assay_command(args, &db).env("ASSAY_MODELS", self.dir.path().join("models")).output().unwrap())
    }

    /// SmolLM2 added in process (`smol-local`) and on `server` (`smol-served`), and the sample's
    /// first `limit` careful and sloppy answers run as `careful` and `sloppy`.
    fn with_both_judges_and_runs(model: &Path, server: &LlamaServer, limit: usize) -> Workspace {
        let workspace = Workspace::new();
        workspace.assay(&["models", "add", model.to_str().unwrap(), "--id", "smol-local"]);
        let url = format!("http://127.0.0.1:{}/v1", server.port);
        workspace.assay(&["models", "add-server", "smol-served", "--served-model", "smollm2", "--url", &url]);
        let (dataset, limit) = (sample(), limit.to_string());
        for set in ["careful", "sloppy"] {
            let target = format!("answers:answers-{set}.jsonl");
            workspace.assay(&["run", dataset.to_str().unwrap(), "--target", &target, "--limit", &limit, "--name", set]);
        }
        workspace
    }
}

/// The sample's first `n` questions with their careful and sloppy answers.
fn pairs(n: usize) -> Vec<(Question, Answer, Answer)> {
    let answer = |set: &str, id: &str| {
        let found = jsonl(&format!("answers-{set}.jsonl")).into_iter().find(|a| a["id"] == id).unwrap();
        Answer { text: found["answer"].as_str().unwrap().to_string(), ..Answer::default() }
    };
    jsonl("questions.jsonl")
        .into_iter()
        .take(n)
        .map(|q| {
            let question: Question = serde_json::from_value(q).unwrap();
            let (careful, sloppy) = (answer("careful", &question.id), answer("sloppy", &question.id));
            (question, careful, sloppy)
        })
        .collect()
}

#[test]
fn served_pairwise_reads_the_in_process_prompt_and_agrees_with_it() {
    let Some(model) = llm_common::smollm2() else { return };
    let Some(server) = LlamaServer::start(&model.path, "4096") else { return };
    let spec = builtin("better").unwrap();
    let local = PairwiseJudge::new(spec.clone(), model.clone()).unwrap();
    for (question, a, b) in pairs(4) {
        // The pair's values as both judges read them: each answer's figures as the reference
        // writes them (q001's `3.5 minutes` reads `3 minutes 30 seconds`).
        let mut values = pair_variables(&question, &a, &b);
        for key in ["answer_1", "answer_2"] {
            let (answer, reference) = written_as_the_reference(&values[key], &values["reference"]);
            values.insert(key, answer);
            values.insert("reference", reference);
        }
        // The text the served judge sends, with the server's own chat template applied, is the
        // text the in-process judge reads, and the server tokenizes it to the same ids.
        let rendered = spec.render(&marked_for_server(&values)).unwrap();
        let applied = server.post("/apply-template", json!({"messages": [{"role": "user", "content": for_server(&rendered)}]}));
        let served_text = applied["prompt"].as_str().expect("the server's prompt");
        let in_process = spec.render(&marked(&model, &values)).unwrap();
        let local_text = without_marks(&model.chat_prompt(&[ChatMessage::user(in_process)]).unwrap());
        assert_eq!(served_text, local_text, "{}", question.id);
        let tokenized = server.post("/tokenize", json!({"content": served_text, "add_special": true, "parse_special": true}));
        let served_tokens: Vec<u64> = tokenized["tokens"].as_array().unwrap().iter().map(|t| t.as_u64().unwrap()).collect();
        let [local_tokens, _] = local.prompt_tokens(&question, &a, &b).unwrap();
        assert_eq!(served_tokens, local_tokens.iter().map(|&t| t as u64).collect::<Vec<_>>(), "{}", question.id);
    }

    // Both runs' answers judged pairwise through the binary, on the server and in process.
    let workspace = Workspace::with_both_judges_and_runs(&model.path, &server, 4);
    let assay = |args: &[&str]| workspace.assay(args);
    let compare = |judge_model: &str| -> Value {
        let out = assay(&["compare", "careful", "sloppy", "--pairwise", "--judge-model", judge_model, "--json"]);
        serde_json::from_str::<Value>(&out).unwrap()["pairwise"].clone()
    };
    let served = compare("smol-served");
    assert_eq!((served["judged"].as_u64(), served["reused"].as_u64()), (Some(4), Some(0)), "{served}");
    assert!(served["scoring"].as_str().unwrap().contains("served model smollm2"), "{served}");
    let local = compare("smol-local");
    let orders = |outcome: &Value| -> Vec<Value> {
        outcome["judgments"].as_array().unwrap().iter().flat_map(|j| [j["a_first"].clone(), j["b_first"].clone()]).collect()
    };
    let (served_orders, local_orders) = (orders(&served), orders(&local));
    assert_eq!(served_orders.len(), 8);
    let mut deltas = Vec::new();
    for (s, l) in served_orders.iter().zip(&local_orders) {
        let sum: f64 = ["1", "2", "tie"].iter().map(|k| s[k].as_f64().unwrap()).sum();
        assert!((sum - 1.0).abs() < 1e-9, "{s}");
        for outcome in ["1", "2", "tie"] {
            deltas.push((s[outcome].as_f64().unwrap() - l[outcome].as_f64().unwrap()).abs());
        }
    }
    let mean = deltas.iter().sum::<f64>() / deltas.len() as f64;
    let worst = deltas.iter().cloned().fold(0.0, f64::max);
    let one = deltas.iter().step_by(3).sum::<f64>() / 8.0;
    eprintln!("pairwise served vs in-process over 8 orders: mean |Δ| {mean:.3} over P(1), P(2), P(tie) (P(1) alone {one:.3}), largest {worst:.3}");
    // The bound of the choice judges' agreement (server_models): the same runtime numerics.
    assert!(mean <= 0.05 && worst <= 0.12, "mean |ΔP| {mean:.3}, largest {worst:.3}: {deltas:?}");

    // Again on the server: every judgment read back, none judged.
    let again = compare("smol-served");
    assert_eq!((again["judged"].as_u64(), again["reused"].as_u64()), (Some(0), Some(4)), "{again}");
    // (read back and combined again: the same to within a unit in the last place)
    for (x, y) in orders(&again).iter().zip(&served_orders) {
        for outcome in ["1", "2", "tie"] {
            assert!((x[outcome].as_f64().unwrap() - y[outcome].as_f64().unwrap()).abs() < 1e-12, "{x} vs {y}");
        }
    }
}

/// Two answers of about 1,500 words each on a server of 1,024 tokens: the server refuses the
/// prompt, both answers are cut by the served judges' rule and both orders asked again with
/// the same cut texts; the judgment is scored and flagged (it used to be left unscored).
#[test]
fn a_pair_past_the_servers_window_is_cut_to_fit_scored_and_flagged() {
    let Some(model) = llm_common::smollm2() else { return };
    let Some(server) = LlamaServer::start(&model.path, "1024") else { return };
    let workspace = Workspace::new();
    let (dir, assay) = (workspace.dir.path(), |args: &[&str]| workspace.assay(args));
    assay(&["models", "add-server", "small-window", "--served-model", "smollm2", "--url", &format!("http://127.0.0.1:{}/v1", server.port)]);
    let dataset = sample();
    for (set, filler) in [("careful", "Rinse the cartridge and check the seal before the next use."), ("sloppy", "Any filter works the same in cold water, so skip the seal.")] {
        let first = jsonl(&format!("answers-{set}.jsonl")).swap_remove(0);
        let long = format!("{} {}", first["answer"].as_str().unwrap(), common::numbered_sentences(filler, 140));
        let file = dir.join(format!("{set}.jsonl"));
        std::fs::write(&file, json!({"id": first["id"], "answer": long}).to_string() + "\n").unwrap();
        assay(&["run", dataset.to_str().unwrap(), "--target", &format!("answers:{}", file.display()), "--limit", "1", "--name", set]);
    }
    let out = assay(&["compare", "careful", "sloppy", "--pairwise", "--judge-model", "small-window", "--json"]);
    let judgment = serde_json::from_str::<Value>(&out).unwrap()["pairwise"]["judgments"][0].clone();
    assert!(judgment["error"].is_null() && judgment["p_b"].as_f64().is_some(), "unscored: {judgment}");
    assert!(judgment["words_a"].as_u64().unwrap() > 1_000, "{judgment}");
    let flags: Vec<&str> = judgment["flags"].as_array().map(|f| f.iter().filter_map(|f| f.as_str()).collect()).unwrap_or_default();
    assert!(flags.contains(&"cut to fit the judge's context"), "{flags:?}");
}

/// A pairwise judge asked about each answer in turn (`{{ asked }}`, outcomes No/Yes) on the
/// server: two first-token requests per order, and each order's distribution agrees with the
/// in-process one on the same file (the choice judges' bound).
#[test]
fn a_served_judge_of_each_answer_agrees_with_the_in_process_one() {
    let Some(model) = llm_common::smollm2() else { return };
    let Some(server) = LlamaServer::start(&model.path, "4096") else { return };
    let workspace = Workspace::with_both_judges_and_runs(&model.path, &server, 3);
    let judges = workspace.dir.path().join("judges");
    std::fs::create_dir(&judges).unwrap();
    std::fs::write(
        judges.join("each.toml"),
        "name = \"each\"\nprompt = \"each.md\"\noutcomes = [\"No\", \"Yes\"]\ninputs = [\"question\", \"reference\", \"answer_1\", \"answer_2\"]\nmode = \"pairwise\"\n",
    )
    .unwrap();
    std::fs::write(
        judges.join("each.md"),
        "Question: {{ question }}\nCorrect answer: {{ reference }}\n\nAnswer 1: {{ answer_1 }}\n\nAnswer 2: {{ answer_2 }}\n\nDoes answer {{ asked }} give the correct answer? Reply Yes or No.",
    )
    .unwrap();
    let assay = |args: &[&str]| workspace.assay(args);
    let orders = |judge_model: &str| -> Vec<Value> {
        let args = ["compare", "careful", "sloppy", "--pairwise", "--judge", "each", "--judges-dir", judges.to_str().unwrap()];
        let out = assay(&args.into_iter().chain(["--judge-model", judge_model, "--json"]).collect::<Vec<_>>());
        let pairwise = serde_json::from_str::<Value>(&out).unwrap()["pairwise"].clone();
        pairwise["judgments"].as_array().unwrap().iter().flat_map(|j| [j["a_first"].clone(), j["b_first"].clone()]).collect()
    };
    let (served, local) = (orders("smol-served"), orders("smol-local"));
    assert_eq!(served.len(), 6, "{served:?}");
    let mut deltas = Vec::new();
    for (s, l) in served.iter().zip(&local) {
        for outcome in ["1", "2", "tie"] {
            deltas.push((s[outcome].as_f64().unwrap() - l[outcome].as_f64().unwrap()).abs());
        }
    }
    let mean = deltas.iter().sum::<f64>() / deltas.len() as f64;
    let worst = deltas.iter().cloned().fold(0.0, f64::max);
    eprintln!("each answer, served vs in-process over 6 orders: mean |Δ| {mean:.3}, largest {worst:.3}");
    assert!(mean <= 0.05 && worst <= 0.12, "mean |ΔP| {mean:.3}, largest {worst:.3}: {deltas:?}");
}

#[test]
fn the_default_pairwise_judge_reads_each_answer_alone_on_a_server_as_in_process() {
    let Some(model) = llm_common::smollm2() else { return };
    let Some(server) = LlamaServer::start(&model.path, "4096") else { return };
    let workspace = Workspace::with_both_judges_and_runs(&model.path, &server, 3);
    let scores = |judge_model: &str| -> Vec<[f64; 2]> {
        let out = workspace.assay(&["compare", "careful", "sloppy", "--pairwise", "--judge-model", judge_model, "--json"]);
        let pairwise = serde_json::from_str::<Value>(&out).unwrap()["pairwise"].clone();
        assert_eq!(pairwise["judge"], "correct", "{pairwise}");
        assert_eq!(pairwise["each_answer_alone"], true);
        pairwise["judgments"].as_array().unwrap().iter().map(|j| [j["scores"][0].as_f64().unwrap(), j["scores"][1].as_f64().unwrap()]).collect()
    };
    let (served, local) = (scores("smol-served"), scores("smol-local"));
    assert_eq!(served.len(), 3, "{served:?}");
    let deltas: Vec<f64> = served.iter().zip(&local).flat_map(|(s, l)| [(s[0] - l[0]).abs(), (s[1] - l[1]).abs()]).collect();
    let mean = deltas.iter().sum::<f64>() / deltas.len() as f64;
    let worst = deltas.iter().cloned().fold(0.0, f64::max);
    eprintln!("each answer alone, served vs in-process over 6 answers: mean |Δ| {mean:.3}, largest {worst:.3}");
    // The choice judges' bound (served_pairwise's other tests, judge_choice).
    assert!(mean <= 0.05 && worst <= 0.12, "mean |Δscore| {mean:.3}, largest {worst:.3}: {deltas:?}");
}

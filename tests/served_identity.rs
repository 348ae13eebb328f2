//! Served models (issue 36) through the real binary against OpenAI-compatible servers in this
//! process: two servers that both call their model `model` (llama-server's default) never
//! share cached answers; a pasted key in place of `--api-key-env`'s variable name is refused
//! without being repeated; a reply past the response cap is an error.

use crate::common::{assay_command, trailgear};
use crate::local_http::{LocalServer, Received, Reply};
use std::path::Path;
use std::process::Command;

/// An OpenAI-compatible server whose every answer is `answer`, serving a model named `model`
/// whose `/models` entry reports `weights` (as llama-server reports its file's size).
fn served(answer: &'static str, weights: u64) -> LocalServer {
    LocalServer::start(move |request: &Received| match (request.method.as_str(), request.path.as_str()) {
        ("GET", "/v1/models") => Reply::json(&format!(
            r#"{{"object":"list","data":[{{"id":"model","object":"model","created":{},"owned_by":"llamacpp","meta":{{"size":{weights}}}}}]}}"#,
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
        )),
        ("POST", "/v1/chat/completions") => Reply {
            status: 200,
            headers: vec![("Content-Type".into(), "text/event-stream".into())],
            body: format!(
                "data: {{\"choices\":[{{\"delta\":{{\"content\":\"{answer}\"}},\"finish_reason\":null}}]}}\n\n\
                 data: {{\"choices\":[{{\"delta\":{{}},\"finish_reason\":\"stop\"}}],\"usage\":{{\"prompt_tokens\":9,\"completion_tokens\":3}}}}\n\n\
                 data: [DONE]\n\n"
            )
            .into_bytes(),
        },
        _ => Reply { status: 404, headers: Vec::new(), body: b"not found".to_vec() },
    })
}

fn add_server(models: &Path, id: &str, url: &str, key_env: Option<&str>) -> std::process::Output {
    let mut args = vec!["models", "add-server", id, "--url", url, "--served-model", "model"];
    if let Some(env) = key_env {
        args.extend(["--api-key-env", env]);
    }
    Command::new(env!("CARGO_BIN_EXE_assay")).args(&args).env("ASSAY_MODELS", models).output().expect("assay runs")
}

fn rag_answers(models: &Path, db: &Path, model: &str) -> Vec<serde_json::Value> {
    let out = assay_command(
        &["run", trailgear().to_str().unwrap(), "--target", "rag", "--model", model, "--retrieval", "bm25", "--limit", "2", "--json"],
        db,
    )
    .env("ASSAY_MODELS", models)
    .output()
    .expect("assay runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    json["runs"][0]["items"].as_array().expect("items").clone()
}

#[test]
fn two_servers_calling_their_model_model_never_share_cached_answers() {
    let first = served("Answer from the first server.", 1_000);
    let second = served("Answer from the second server.", 2_000);
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models");
    for (id, server) in [("first", &first), ("second", &second)] {
        let out = add_server(&models, id, &server.url("/v1"), None);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let db = tmp.path().join("runs.sqlite");

    let from_first = rag_answers(&models, &db, "first");
    assert!(from_first.iter().all(|i| i["answer"].as_str().unwrap().contains("first server")), "{from_first:?}");
    let from_second = rag_answers(&models, &db, "second");
    for item in &from_second {
        assert!(item["answer"].as_str().unwrap().contains("second server"), "the first server's answer was served: {item}");
    }
    let asked = |server: &LocalServer| server.received().iter().filter(|r| r.path == "/v1/chat/completions").count();
    assert!(asked(&second) >= 2, "the second server was never asked");

    // The same server again: its answers come from the cache (the cache still works).
    let before = asked(&first);
    let again = rag_answers(&models, &db, "first");
    assert!(again.iter().all(|i| i["answer"].as_str().unwrap().contains("first server")));
    assert_eq!(asked(&first), before, "a repeat run asked the server again instead of reading the cache");
}

#[test]
fn a_pasted_key_is_refused_as_a_variable_name_without_being_repeated() {
    let server = served("unused", 1);
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models");
    let pasted = "sk-proj-7fQ2xR9vLm3Kp8Zt";
    let out = add_server(&models, "pasted", &server.url("/v1"), Some(pasted));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a key was accepted as a variable name");
    assert!(stderr.contains("api_key_env") && stderr.contains("[A-Z_][A-Z0-9_]*"), "{stderr}");
    assert!(!stderr.contains(pasted) && !String::from_utf8_lossy(&out.stdout).contains(pasted), "the key was echoed: {stderr}");
    let written = std::fs::read_dir(&models).into_iter().flatten().flatten().any(|e| {
        std::fs::read_to_string(e.path()).is_ok_and(|text| text.contains(pasted))
    });
    assert!(!written, "the key was written to the models folder");
    // A proper name is accepted.
    let out = add_server(&models, "named", &server.url("/v1"), Some("MY_SERVER_KEY"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_served_reply_past_the_cap_is_an_error() {
    let huge = "x".repeat(17 << 20);
    let server = LocalServer::start(move |request: &Received| match request.path.as_str() {
        "/v1/chat/completions" => Reply {
            status: 200,
            headers: vec![("Content-Type".into(), "text/event-stream".into())],
            body: format!("data: {{\"choices\":[{{\"delta\":{{\"content\":\"{huge}\"}}}}]}}\n\ndata: [DONE]\n\n").into_bytes(),
        },
        _ => Reply::json(r#"{"data":[{"id":"model"}]}"#),
    });
    let tmp = tempfile::tempdir().unwrap();
    let models = tmp.path().join("models");
    assert!(add_server(&models, "big", &server.url("/v1"), None).status.success());
    let out = assay_command(
        &["run", trailgear().to_str().unwrap(), "--target", "rag", "--model", "big", "--retrieval", "bm25", "--limit", "1", "--json"],
        &tmp.path().join("runs.sqlite"),
    )
    .env("ASSAY_MODELS", &models)
    .output()
    .expect("assay runs");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("no JSON: {}", String::from_utf8_lossy(&out.stderr)));
    let error = json["runs"][0]["items"][0]["error"].as_str().unwrap_or_default();
    assert!(error.contains("the response passed 16 MiB"), "{error}");
    // Not retried: a reply that large will be as large next time.
    let asked = server.received().iter().filter(|r| r.path == "/v1/chat/completions").count();
    assert_eq!(asked, 1, "asked {asked} times");
}

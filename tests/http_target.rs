//! `--target http:FILE.toml` through the real binary against the real example service
//! (examples/http-target/app.py: streamed answers, a bearer token) on 127.0.0.1: a judged
//! run of several questions in flight at once, the token in no file Assay writes, a service
//! killed mid-run leaving unscored items that `--resume` completes, and each bad input (an
//! HTML page, a malformed chunk, an unset token, a broken file) a clear error that names the
//! endpoint or file.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::common::{assay_command, ok};

const TOKEN: &str = "tok-s3cret-7Q2v";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The example service, killed when dropped.
struct Service {
    child: Child,
    port: u16,
}

impl Service {
    fn start(port: u16, delay: f64) -> Service {
        let mut child = Command::new("python3")
            .arg(root().join("examples/http-target/app.py"))
            .arg(root().join("datasets/trailgear/corpus"))
            .args(["--port", &port.to_string(), "--delay", &delay.to_string()])
            .env("ASSISTANT_TOKEN", TOKEN)
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs the example service");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the service says where it listens");
        let port = line.trim().strip_prefix("listening on ").expect(&line).parse().expect("port");
        Service { child, port }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The example target file pointed at `port`, at `endpoint`, with `edits` applied.
fn target_file(dir: &Path, port: u16, endpoint: &str, edits: &[(&str, &str)]) -> PathBuf {
    let mut text = std::fs::read_to_string(root().join("examples/http-target/assistant.toml")).expect("example");
    text = text.replace("127.0.0.1:8765/ask\"", &format!("127.0.0.1:{port}{endpoint}\""));
    for (from, to) in edits {
        assert!(text.contains(from), "{from}");
        text = text.replace(from, to);
    }
    let path = dir.join(format!("target{}.toml", endpoint.replace('/', "-")));
    std::fs::write(&path, text).expect("write target file");
    path
}

fn run_http(db: &Path, target: &Path, extra: &[&str]) -> std::process::Output {
    let spec = format!("http:{}", target.display());
    let dataset = common::trailgear();
    let mut args = vec!["run", dataset.to_str().expect("path"), "--target", &spec, "--json"];
    args.extend_from_slice(extra);
    assay_command(&args, db).env("ASSISTANT_TOKEN", TOKEN).output().expect("assay runs")
}

fn items(json: &serde_json::Value) -> &Vec<serde_json::Value> {
    json["runs"][0]["items"].as_array().expect("items")
}

#[test]
fn a_service_over_http_is_evaluated_with_answers_citations_and_latency() {
    let service = Service::start(0, 0.0);
    let dir = tempfile::tempdir().expect("temp");
    let db = dir.path().join("assay.sqlite");
    let target = target_file(dir.path(), service.port, "/ask", &[]);
    let out = ok(run_http(&db, &target, &["--limit", "6", "--concurrency", "3"]));
    let json: serde_json::Value = serde_json::from_str(&out).expect("json");
    let run = &json["runs"][0];
    assert_eq!(run["status"], "finished");
    assert_eq!(run["config"]["target"], format!("http:{}", target.file_name().unwrap().to_string_lossy()));
    let items = items(&json);
    assert_eq!(items.len(), 6);
    for item in items {
        assert!(item["error"].is_null(), "{item}");
        assert!(!item["answer"].as_str().unwrap().trim().is_empty(), "{item}");
        assert_eq!(item["citations"].as_array().unwrap().len(), 1, "{item}");
        assert!(item["first_chunk_ms"].as_u64().unwrap() <= item["latency_ms"].as_u64().unwrap(), "{item}");
    }
    // The service's keyword answers cite the right manual for most of the sample questions.
    let recall = run["summary"]["citation_recall"]["mean"].as_f64().unwrap();
    assert!(recall >= 0.5, "citation recall {recall}");

    // The token is in no file Assay wrote: not the database, not any export.
    let exports = dir.path().join("exports");
    std::fs::create_dir_all(&exports).unwrap();
    let run_id = run["id"].as_str().unwrap();
    for (format, name) in [("html", "r.html"), ("md", "r.md"), ("json", "r.json"), ("csv", "r.csv"), ("junit", "r.xml")] {
        let out_path = exports.join(name);
        ok(assay_command(&["export", run_id, "--format", format, "--output", out_path.to_str().unwrap()], &db)
            .output()
            .unwrap());
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&exports).unwrap().map(|e| e.unwrap().path()).collect();
    files.extend(std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_file()));
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        assert!(
            !bytes.windows(TOKEN.len()).any(|w| w == TOKEN.as_bytes()),
            "the token is in {}",
            file.display()
        );
    }
}

#[test]
fn a_service_killed_mid_run_leaves_unscored_items_that_resume_completes() {
    let service = Service::start(0, 0.15);
    let port = service.port;
    let dir = tempfile::tempdir().expect("temp");
    let db = dir.path().join("assay.sqlite");
    let target = target_file(dir.path(), port, "/ask", &[("retries = 3", "retries = 1")]);
    let spec = format!("http:{}", target.display());
    let dataset = common::trailgear();
    let running = assay_command(&["run", dataset.to_str().unwrap(), "--target", &spec, "--limit", "8", "--concurrency", "1"], &db)
        .env("ASSISTANT_TOKEN", TOKEN)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("assay runs");
    // Kill the service once two answers are committed.
    let answered = || -> i64 {
        rusqlite::Connection::open(&db)
            .and_then(|c| c.query_row("SELECT COUNT(*) FROM items WHERE error IS NULL", [], |r| r.get(0)))
            .unwrap_or(0)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while answered() < 2 {
        assert!(std::time::Instant::now() < deadline, "no answers within a minute");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    drop(service);
    let finished = running.wait_with_output().expect("the run ends");
    let stderr = String::from_utf8_lossy(&finished.stderr);
    assert!(stderr.contains("failed and are unscored; retry them with"), "{stderr}");
    assert!(stderr.contains(&format!("POST http://127.0.0.1:{port}/ask")), "{stderr}");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let (failed, run_id): (i64, String) = conn
        .query_row("SELECT COUNT(*), MAX(run_id) FROM items WHERE error IS NOT NULL", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    assert!(failed >= 1, "the items after the kill failed");
    let error: String = conn.query_row("SELECT error FROM items WHERE error IS NOT NULL LIMIT 1", [], |r| r.get(0)).unwrap();
    assert!(error.contains("Connection") || error.contains("stream"), "{error}");
    // Failed items are unscored, never zero.
    let zeros: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM metrics m JOIN items i USING (run_id, question_id) WHERE i.error IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(zeros, 0);
    drop(conn);

    // The service is back on the same port: resume asks only the failed items again.
    let _service = Service::start(port, 0.0);
    let out = ok(run_http(&db, &target, &["--resume", &run_id]));
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["runs"][0]["status"], "finished");
    let items = items(&json);
    assert_eq!(items.len(), 8);
    assert!(items.iter().all(|i| i["error"].is_null()), "{out}");
    // Nothing left to retry now.
    let again = run_http(&db, &target, &["--resume", &run_id]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already finished"));
}

#[test]
fn bad_services_and_bad_files_are_clear_errors() {
    let service = Service::start(0, 0.0);
    let dir = tempfile::tempdir().expect("temp");
    let db = dir.path().join("assay.sqlite");

    // An HTML page where JSON was expected; a stream with a chunk that is not JSON.
    for (endpoint, expected) in [("/", "returned an HTML page, not JSON"), ("/ask-broken", "streamed chunk 2 is not JSON")] {
        let target = target_file(dir.path(), service.port, endpoint, &[]);
        let out = ok(run_http(&db, &target, &["--limit", "1"]));
        let json: serde_json::Value = serde_json::from_str(&out).unwrap();
        let error = items(&json)[0]["error"].as_str().expect("the item failed").to_string();
        assert!(error.contains(&format!("POST http://127.0.0.1:{}{endpoint}", service.port)), "{error}");
        assert!(error.contains(expected), "{error}");
        let summary = json["runs"][0]["summary"].as_object().expect("summary");
        assert!(summary.values().all(|m| m["n"] == 0), "a failed item is unscored: {summary:?}");
    }

    // 503 on every other request: retried, every item answered.
    let flaky = target_file(
        dir.path(),
        service.port,
        "/flaky",
        &[("stream = \"sse\"", "stream = \"none\""), ("answer = \"/delta\"", "answer = \"/answer\"")],
    );
    let out = ok(run_http(&db, &flaky, &["--limit", "3"]));
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(items(&json).iter().all(|i| i["error"].is_null()), "{out}");

    // Refused before anything is written: an unset token, a broken file, a missing field.
    let fresh = dir.path().join("fresh.sqlite");
    let target = target_file(dir.path(), service.port, "/ask", &[]);
    let spec = format!("http:{}", target.display());
    let unset = assay_command(&["run", common::trailgear().to_str().unwrap(), "--target", &spec], &fresh)
        .env_remove("ASSISTANT_TOKEN")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&unset.stderr);
    assert!(!unset.status.success());
    assert!(stderr.contains("headers.Authorization") && stderr.contains("ASSISTANT_TOKEN is not set"), "{stderr}");
    let broken = dir.path().join("broken.toml");
    std::fs::write(&broken, "url = \"http://127.0.0.1:1/\"\n\n[response]\nanswer = \"answer\"\n").unwrap();
    let missing_field = dir.path().join("missing.toml");
    std::fs::write(&missing_field, "url = \"http://127.0.0.1:1/\"\nmethod = \"POST\"\ntimeout = 3\n").unwrap();
    for (file, expected) in [
        (&broken, "field `response.answer`: \"answer\" is not a JSON pointer"),
        (&missing_field, "line 3: unknown field `timeout`"),
    ] {
        let spec = format!("http:{}", file.display());
        let out = assay_command(&["run", common::trailgear().to_str().unwrap(), "--target", &spec], &fresh)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(stderr.contains(&file.display().to_string()) && stderr.contains(expected), "{stderr}");
    }
    assert!(!fresh.exists(), "a refused run writes no database");
}

//! The HTTP target's secrets and limits (issue 36), through the real binary against servers in
//! this process: a redirect to another host is refused (the secret headers reach nobody else),
//! a file reads only the environment variables it lists and never in the URL's host, errors
//! and debug logs never show a secret's value, and a response past the cap is an error.

use crate::common::{assay_command, trailgear};
use crate::local_http::{LocalServer, Reply};
use std::path::{Path, PathBuf};

const SECRET: &str = "key-4Hq9-only-for-the-service";

fn spec_file(dir: &Path, url: &str, extra_top: &str) -> PathBuf {
    let path = dir.join("service.toml");
    std::fs::write(
        &path,
        format!(
            "{extra_top}\nurl = \"{url}\"\nmethod = \"POST\"\nretries = 0\ntimeout_s = 20\n\n[headers]\n\
             X-Api-Key = \"${{MY_KEY}}\"\nAuthorization = \"Bearer ${{MY_KEY}}\"\n\n[body]\nquestion = \"{{{{ question }}}}\"\n\n\
             [response]\nanswer = \"/answer\"\n"
        ),
    )
    .unwrap();
    path
}

fn run(dir: &Path, spec: &Path, log: Option<&str>) -> (std::process::Output, String) {
    let db = dir.join("runs.sqlite");
    let target = format!("http:{}", spec.display());
    let mut command = assay_command(
        &["run", trailgear().to_str().unwrap(), "--target", &target, "--limit", "1", "--json"],
        &db,
    );
    command.env("MY_KEY", SECRET).env("OTHER_SECRET", "other-7Zx-not-listed");
    if let Some(level) = log {
        command.env("ASSAY_LOG", level);
    }
    let out = command.output().expect("assay runs");
    // Everything Assay wrote or printed, to prove the secret is in none of it.
    let mut everything = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if let Ok(bytes) = std::fs::read(&db) {
        everything.push_str(&String::from_utf8_lossy(&bytes));
    }
    if let Ok(bytes) = std::fs::read(db.with_extension("sqlite-wal")) {
        everything.push_str(&String::from_utf8_lossy(&bytes));
    }
    (out, everything)
}

fn first_item_error(out: &std::process::Output) -> String {
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("no JSON: {}", String::from_utf8_lossy(&out.stderr)));
    json["runs"][0]["items"][0]["error"].as_str().unwrap_or_default().to_string()
}

#[test]
fn a_redirect_to_another_host_is_refused_and_the_secret_reaches_no_one_else() {
    let other = LocalServer::start(|_| Reply::json(r#"{"answer": "stolen"}"#));
    let location = format!("http://localhost:{}/collect", other.port);
    // 302: ureq followed it for a POST (as a GET), keeping every header but Authorization.
    let service = LocalServer::start(move |_| Reply {
        status: 302,
        headers: vec![("Location".into(), location.clone())],
        body: Vec::new(),
    });
    let tmp = tempfile::tempdir().unwrap();
    let spec = spec_file(tmp.path(), &service.url("/ask"), "secrets = [\"MY_KEY\"]");
    let (out, everything) = run(tmp.path(), &spec, None);
    assert_eq!(service.received().len(), 1, "the service was asked once");
    assert!(other.received().is_empty(), "the redirect was followed: {:?}", other.received());
    let error = first_item_error(&out);
    assert!(error.contains("HTTP 302") && error.contains("redirects are not followed"), "{error}");
    assert!(error.contains("localhost"), "the error does not say where it pointed: {error}");
    assert!(!everything.contains(SECRET), "the secret was written or printed");
}

#[test]
fn a_file_reads_only_the_variables_it_lists_and_never_echoes_them() {
    let service = LocalServer::start(|_| Reply::json(r#"{"answer": "fine"}"#));
    let tmp = tempfile::tempdir().unwrap();

    // Not listed: refused before any request, naming the variable, not its value.
    let spec = spec_file(tmp.path(), &service.url("/ask"), "");
    let (out, everything) = run(tmp.path(), &spec, None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("MY_KEY") && stderr.contains("not listed in `secrets`"), "{stderr}");
    assert!(!everything.contains(SECRET));

    // A listed variable may not choose the host.
    let spec = spec_file(tmp.path(), "http://${OTHER_SECRET}/ask", "secrets = [\"MY_KEY\", \"OTHER_SECRET\"]");
    let (out, everything) = run(tmp.path(), &spec, None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("never choose where requests go"), "{stderr}");
    assert!(!everything.contains("other-7Zx-not-listed") && !everything.contains(SECRET));

    // A bad URL is quoted as written, not expanded.
    let spec = spec_file(tmp.path(), "ftp://127.0.0.1/${MY_KEY}", "secrets = [\"MY_KEY\"]");
    let (out, everything) = run(tmp.path(), &spec, None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ftp://127.0.0.1/${MY_KEY}"), "{stderr}");
    assert!(!everything.contains(SECRET));

    // A pasted token in place of a name is refused without being repeated.
    let spec = spec_file(tmp.path(), &service.url("/ask"), &format!("secrets = [\"MY_KEY\", \"{SECRET}\"]"));
    let (out, everything) = run(tmp.path(), &spec, None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("entry 2 is not an environment variable name"), "{stderr}");
    assert!(!everything.contains(SECRET));
    assert!(service.received().is_empty(), "a refused file still sent a request");

    // Listed: sent to the service only, and not in a debug log.
    let spec = spec_file(tmp.path(), &service.url("/ask"), "secrets = [\"MY_KEY\"]");
    let (out, everything) = run(tmp.path(), &spec, Some("debug"));
    assert!(out.status.success() || first_item_error(&out).is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    let sent = service.received();
    assert_eq!(sent.len(), 1);
    assert!(sent[0].headers.iter().any(|h| h == &format!("X-Api-Key: {SECRET}")), "{:?}", sent[0].headers);
    // The body carries the question as the file's [body] says, and the secret only where listed.
    let body: serde_json::Value = serde_json::from_str(&sent[0].body).unwrap();
    assert!(body["question"].as_str().is_some_and(|q| !q.is_empty()), "{body}");
    assert!(!sent[0].body.contains(SECRET), "{body}");
    assert!(!everything.contains(SECRET), "the secret is in the output or the debug log");
}

#[test]
fn a_response_past_the_cap_is_an_error_not_a_cut_answer() {
    let huge = format!("{{\"answer\": \"{}\"}}", "x".repeat(17 << 20));
    let service = LocalServer::start(move |_| Reply::json(&huge));
    let tmp = tempfile::tempdir().unwrap();
    let spec = spec_file(tmp.path(), &service.url("/ask"), "secrets = [\"MY_KEY\"]");
    let (out, _) = run(tmp.path(), &spec, None);
    let error = first_item_error(&out);
    assert!(error.contains("the response passed 16 MiB"), "{error}");
}

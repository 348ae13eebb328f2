//! Answers are untrusted text: hostile strings from a target must come out of every report
//! format as inert text.

use std::path::Path;
use std::process::Command;

const HOSTILE: &[&str] = &[
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(2)>",
    "[click](javascript:alert(3))",
    "=HYPERLINK(\"http://evil.example\")",
    "a | b \u{1b}[31mred\u{7}",
];

fn assay(args: &[&str], db: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(args)
        .env("ASSAY_DB", db)
        .output()
        .unwrap()
}

#[test]
fn hostile_answers_are_inert_in_every_format() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("runs.sqlite");
    let dataset = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/trailgear");
    let answers = tmp.path().join("hostile.jsonl");
    let lines: String = HOSTILE
        .iter()
        .enumerate()
        .map(|(i, text)| {
            serde_json::json!({"id": format!("q{:03}", i + 1), "answer": text}).to_string() + "\n"
        })
        .collect();
    std::fs::write(&answers, lines).unwrap();
    let target = format!("answers:{}", answers.display());
    let out = assay(
        &["run", dataset.to_str().unwrap(), "--target", &target, "--limit", "5", "--name", "<b>bold</b>"],
        &db,
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains('\u{1b}'), "terminal output carries an escape sequence");

    let export = |format: &str| {
        let file = tmp.path().join(format!("report.{format}"));
        let out = assay(&["export", "<b>bold</b>", "--format", format, "-o", file.to_str().unwrap()], &db);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        std::fs::read_to_string(file).unwrap()
    };

    let html = export("html");
    for raw in ["<script>alert", "<img src=x", "<b>bold", "href=\"javascript:"] {
        assert!(!html.contains(raw), "HTML contains {raw:?}");
    }
    assert!(html.contains("&lt;script&gt;alert(1)"), "the text is shown, escaped");
    assert!(html.contains("Content-Security-Policy"));

    let md = export("md");
    assert!(!md.contains("<script>") && !md.contains("<img"), "Markdown passes HTML through");
    assert!(md.contains("a \\| b"), "pipes are escaped in table cells");

    let csv = export("csv");
    assert!(csv.contains("'=HYPERLINK"), "formula cells are defused");

    let junit = export("junit");
    let doc = roxmltree::Document::parse(&junit).expect("JUnit output is well-formed XML");
    assert_eq!(doc.root_element().tag_name().name(), "testsuites");
    assert_eq!(doc.descendants().filter(|n| n.has_tag_name("testcase")).count(), 5);
}

//! Answers files (`--target answers:FILE`): malformed, truncated, huge, non-UTF-8, wrong-typed,
//! and hostile (ids and citations that are not the dataset's, a 100 MB line).

use crate::common::{dataset_copy, expect_rejected, seeded_db};

/// (what, file content, expected error parts).
fn cases() -> Vec<(&'static str, Vec<u8>, Vec<&'static str>)> {
    let good = r#"{"id": "q001", "answer": "About 3.5 minutes.", "citations": ["summit-stove-2"]}"#;
    let lines = |second: &str| format!("{good}\n{second}\n").into_bytes();
    let mut huge = br#"{"id": "q002", "answer": ""#.to_vec();
    huge.extend(std::iter::repeat_n(b'a', 100 << 20));
    huge.extend(b"\"}\n");
    vec![
        ("malformed line", lines(r#"{"id": "q002", "answer": "#), vec!["answers-bad.jsonl:2", "invalid JSON"]),
        ("truncated file", good[..30].as_bytes().to_vec(), vec!["answers-bad.jsonl:1", "invalid JSON", "EOF"]),
        ("not an object", lines(r#""just text""#), vec!["answers-bad.jsonl:2", "expected a JSON object"]),
        ("unknown id", lines(r#"{"id": "q500", "answer": "who?"}"#), vec!["answers-bad.jsonl:2", "`id`", "\"q500\" is not a question of dataset"]),
        ("path-traversal id", lines(r#"{"id": "../../etc/passwd", "answer": "x"}"#), vec!["answers-bad.jsonl:2", "`id`", "is not a question of dataset"]),
        ("missing answer", lines(r#"{"id": "q002"}"#), vec!["answers-bad.jsonl:2", "`answer`", "missing (required)"]),
        ("wrong type: answer", lines(r#"{"id": "q002", "answer": 42}"#), vec!["answers-bad.jsonl:2", "`answer`", "expected a string"]),
        ("wrong type: citations", lines(r#"{"id": "q002", "answer": "x", "citations": "summit-stove-2"}"#), vec!["answers-bad.jsonl:2", "`citations`"]),
        ("unknown field", lines(r#"{"id": "q002", "answer": "x", "confidence": 0.9}"#), vec!["answers-bad.jsonl:2", "`confidence`", "unknown field"]),
        ("duplicate id", lines(r#"{"id": "q001", "answer": "again"}"#), vec!["answers-bad.jsonl:2", "duplicate id \"q001\"", "line 1"]),
        ("path-traversal citation", lines(r#"{"id": "q002", "answer": "x", "citations": ["../../etc/passwd"]}"#), vec!["answers-bad.jsonl:2", "`citations`", "unknown document"]),
        ("non-UTF-8 line", [good.as_bytes(), b"\n{\"id\": \"q002\", \"answer\": \"\xc3\x28\"}\n"].concat(), vec!["answers-bad.jsonl:2", "not valid UTF-8"]),
        ("a 100 MB single line", huge, vec!["answers-bad.jsonl:1", "over the limit of 1048576 bytes"]),
    ]
}

#[test]
fn each_bad_answers_file_is_named_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = dataset_copy(tmp.path());
    let (db, before) = seeded_db(tmp.path(), &dataset);
    let ds = dataset.to_str().unwrap();
    let file = dataset.join("answers-bad.jsonl");
    let cases = cases();
    for (what, content, needles) in &cases {
        std::fs::write(&file, content).unwrap();
        let stderr = expect_rejected(&["run", ds, "--target", "answers:answers-bad.jsonl"], &db, &before, needles);
        eprintln!("ok: {what}: {}", stderr.trim());
    }
    std::fs::remove_file(&file).unwrap();
    // Files that are not there, or not files.
    expect_rejected(&["run", ds, "--target", "answers:answers-missing.jsonl"], &db, &before, &["answers-missing.jsonl: answers file not found"]);
    std::fs::create_dir(dataset.join("answers-dir.jsonl")).unwrap();
    expect_rejected(&["run", ds, "--target", "answers:answers-dir.jsonl"], &db, &before, &["answers-dir.jsonl: answers file not found"]);
    expect_rejected(&["run", ds, "--target", "answers"], &db, &before, &["--target answers needs a file"]);
    eprintln!("{} answers cases", cases.len() + 3);
}

/// A 4 GiB answers file with no line break (sparse: it takes no disk): refused at its first
/// MiB, never read whole. The process runs with 2 GB of address space, so reading the file into
/// memory before checking its lines would fail to allocate instead.
#[test]
fn a_huge_answers_file_is_refused_without_reading_it_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = dataset_copy(tmp.path());
    let file = dataset.join("answers-huge.jsonl");
    std::fs::File::create(&file).unwrap().set_len(4 << 30).unwrap();
    let db = tmp.path().join("runs.sqlite");
    let script = format!(
        "ulimit -v 2000000; exec '{}' run '{}' --target answers:answers-huge.jsonl",
        env!("CARGO_BIN_EXE_assay"),
        dataset.display()
    );
    let out = std::process::Command::new("sh").arg("-c").arg(script).env("ASSAY_DB", &db).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("answers-huge.jsonl:1") && stderr.contains("line is over the limit of 1048576 bytes"), "{stderr}");
    assert!(!db.exists());
}

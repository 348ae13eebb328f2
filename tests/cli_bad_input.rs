//! Bad input through the real CLI: each case exits with code 2, names the file, line and field,
//! and leaves the database exactly as it was.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn assay(args: &[&str], db: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(args)
        .env("ASSAY_DB", db)
        .output()
        .expect("assay runs")
}

/// A copy of the sample dataset in a temp dir, so cases can break it.
fn dataset_copy(dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/trailgear");
    let dst = dir.join("trailgear");
    std::fs::create_dir_all(dst.join("corpus")).unwrap();
    for name in ["dataset.toml", "questions.jsonl", "answers-careful.jsonl"] {
        std::fs::copy(src.join(name), dst.join(name)).unwrap();
    }
    for entry in std::fs::read_dir(src.join("corpus")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dst.join("corpus").join(path.file_name().unwrap())).unwrap();
    }
    dst
}

/// A database that already holds one run, and its bytes (to prove nothing changes).
fn seeded_db(dir: &Path, dataset: &Path) -> (PathBuf, Vec<u8>) {
    let db = dir.join("runs.sqlite");
    let out = assay(
        &["run", dataset.to_str().unwrap(), "--target", "answers:answers-careful.jsonl", "--limit", "3"],
        &db,
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Fold the WAL into the main file so the byte comparison covers everything.
    let conn = rusqlite_free_checkpoint(&db);
    (db, conn)
}

fn rusqlite_free_checkpoint(db: &Path) -> Vec<u8> {
    // Reading the runs list opens the DB and closes it cleanly, which checkpoints the WAL.
    let out = assay(&["runs"], db);
    assert!(out.status.success());
    snapshot(db)
}

fn snapshot(db: &Path) -> Vec<u8> {
    let mut bytes = std::fs::read(db).unwrap();
    if let Ok(wal) = std::fs::read(db.with_extension("sqlite-wal")) {
        bytes.extend(wal);
    }
    bytes
}

/// Run `args`, expect exit 2 and every `needles` in stderr, and an unchanged database.
fn expect_rejected(args: &[&str], db: &Path, before: &[u8], needles: &[&str]) {
    let out = assay(args, db);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "args {args:?}\nstderr: {stderr}");
    for needle in needles {
        assert!(stderr.contains(needle), "stderr lacks {needle:?}: {stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(snapshot(db), before, "database changed for {args:?}");
}

fn replace_line(file: &Path, line: usize, text: &str) {
    let content = std::fs::read_to_string(file).unwrap();
    let mut lines: Vec<String> = content.lines().map(str::to_string).collect();
    lines[line - 1] = text.to_string();
    std::fs::write(file, lines.join("\n") + "\n").unwrap();
}

#[test]
fn each_bad_input_is_named_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = dataset_copy(tmp.path());
    let (db, before) = seeded_db(tmp.path(), &dataset);
    let ds = dataset.to_str().unwrap();
    let questions = dataset.join("questions.jsonl");
    let original = std::fs::read(&questions).unwrap();
    let run = ["run", ds, "--target", "answers:answers-careful.jsonl"];

    // A malformed line.
    replace_line(&questions, 7, r#"{"id": "q007", "question": "broken"#);
    expect_rejected(&run, &db, &before, &["questions.jsonl:7", "invalid JSON"]);

    // A duplicate id.
    std::fs::write(&questions, &original).unwrap();
    replace_line(&questions, 9, r#"{"id": "q003", "question": "Again?", "answer": "Yes."}"#);
    expect_rejected(&run, &db, &before, &["questions.jsonl:9", "duplicate id \"q003\"", "line 3"]);

    // A missing required field.
    std::fs::write(&questions, &original).unwrap();
    replace_line(&questions, 4, r#"{"id": "q004", "question": "What now?"}"#);
    expect_rejected(&run, &db, &before, &["questions.jsonl:4", "`answer`", "required"]);

    // A field of the wrong type.
    std::fs::write(&questions, &original).unwrap();
    replace_line(&questions, 5, r#"{"id": "q005", "question": "Q?", "answer": "A", "refuse": "no"}"#);
    expect_rejected(&run, &db, &before, &["questions.jsonl:5", "`refuse`", "true or false"]);

    // An unknown doc.
    std::fs::write(&questions, &original).unwrap();
    replace_line(&questions, 2, r#"{"id": "q002", "question": "Q?", "answer": "A", "doc": "no-such-manual"}"#);
    expect_rejected(&run, &db, &before, &["questions.jsonl:2", "`doc`", "no-such-manual"]);

    // A path-traversal id.
    std::fs::write(&questions, &original).unwrap();
    replace_line(&questions, 3, r#"{"id": "../../etc/passwd", "question": "Q?", "answer": "A"}"#);
    expect_rejected(&run, &db, &before, &["questions.jsonl:3", "`id`"]);

    // A non-UTF-8 line.
    let mut bytes = original.clone();
    bytes.extend_from_slice(b"{\"id\": \"q999\", \"question\": \"\xff\xfe\", \"answer\": \"x\"}\n");
    std::fs::write(&questions, &bytes).unwrap();
    expect_rejected(&run, &db, &before, &["questions.jsonl:91", "UTF-8"]);
    std::fs::write(&questions, &original).unwrap();

    // A corpus folder outside the dataset.
    let manifest = dataset.join("dataset.toml");
    let manifest_original = std::fs::read(&manifest).unwrap();
    std::fs::write(&manifest, "name = \"x\"\ncorpus = \"../../etc\"\n").unwrap();
    expect_rejected(&run, &db, &before, &["dataset.toml", "corpus", "outside"]);
    std::fs::write(&manifest, &manifest_original).unwrap();

    // An answers file with an id the dataset does not have.
    let answers = dataset.join("answers-bad.jsonl");
    std::fs::write(
        &answers,
        "{\"id\": \"q001\", \"answer\": \"fine\"}\n{\"id\": \"q500\", \"answer\": \"who?\"}\n",
    )
    .unwrap();
    expect_rejected(
        &["run", ds, "--target", "answers:answers-bad.jsonl"],
        &db,
        &before,
        &["answers-bad.jsonl:2", "`id`", "q500"],
    );

    // An answers line with the wrong type.
    std::fs::write(&answers, "{\"id\": \"q001\", \"answer\": 42}\n").unwrap();
    expect_rejected(
        &["run", ds, "--target", "answers:answers-bad.jsonl"],
        &db,
        &before,
        &["answers-bad.jsonl:1", "`answer`"],
    );

    // Unknown metric and malformed gate.
    expect_rejected(
        &["run", ds, "--target", "answers:answers-careful.jsonl", "--metrics", "token_f1,vibes"],
        &db,
        &before,
        &["vibes"],
    );
    expect_rejected(
        &["run", ds, "--target", "answers:answers-careful.jsonl", "--fail-under", "token_f1"],
        &db,
        &before,
        &["METRIC=VALUE"],
    );

    // The sanity of the harness: the untouched dataset still runs.
    let ok = assay(&run, &db);
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
}

#[test]
fn a_file_that_is_not_sqlite_is_refused_and_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = dataset_copy(tmp.path());
    let db = tmp.path().join("notes.sqlite");
    let content = b"these are my notes, not a database\n".repeat(200);
    std::fs::write(&db, &content).unwrap();
    let out = assay(
        &["run", dataset.to_str().unwrap(), "--target", "answers:answers-careful.jsonl"],
        &db,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("notes.sqlite") && stderr.contains("not an Assay database"), "{stderr}");
    assert_eq!(std::fs::read(&db).unwrap(), content);
    assert!(!db.with_extension("sqlite-wal").exists());
}

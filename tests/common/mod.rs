//! The harness the CLI tests share: run the real `assay` binary on a given database, copy the
//! sample dataset into a temp dir so a case can break it, and prove that a refused input left
//! the database byte for byte as it was.
#![allow(dead_code)] // each test file uses a different part of this module

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The sample dataset in the repository (read-only for tests).
pub fn trailgear() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/trailgear")
}

/// `assay ARGS` with `ASSAY_DB=db`, waited for.
pub fn assay(args: &[&str], db: &Path) -> Output {
    assay_command(args, db).output().expect("assay runs")
}

/// The command for `assay ARGS` with `ASSAY_DB=db`, to spawn or to adjust first.
pub fn assay_command(args: &[&str], db: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_assay"));
    command.args(args).env("ASSAY_DB", db);
    command
}

/// The stdout of a command that must have succeeded.
pub fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 stdout")
}

/// A copy of the sample dataset (manifest, questions, answer sets, corpus) under `dir`.
pub fn dataset_copy(dir: &Path) -> PathBuf {
    let src = trailgear();
    let dst = dir.join("trailgear");
    std::fs::create_dir_all(dst.join("corpus")).unwrap();
    for name in ["dataset.toml", "prompt.md", "questions.jsonl", "answers-careful.jsonl", "answers-sloppy.jsonl"] {
        std::fs::copy(src.join(name), dst.join(name)).unwrap();
    }
    for entry in std::fs::read_dir(src.join("corpus")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dst.join("corpus").join(path.file_name().unwrap())).unwrap();
    }
    dst
}

/// A database under `dir` that already holds one run, and its bytes (to prove nothing changes).
pub fn seeded_db(dir: &Path, dataset: &Path) -> (PathBuf, Vec<u8>) {
    let db = dir.join("runs.sqlite");
    let out = assay(
        &["run", dataset.to_str().unwrap(), "--target", "answers:answers-careful.jsonl", "--limit", "3"],
        &db,
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Listing the runs opens the database and closes it cleanly, which folds the WAL into the
    // main file, so the byte comparison covers everything.
    let out = assay(&["runs"], &db);
    assert!(out.status.success());
    let bytes = snapshot(&db);
    (db, bytes)
}

/// The database's bytes, WAL included.
pub fn snapshot(db: &Path) -> Vec<u8> {
    let mut bytes = std::fs::read(db).unwrap();
    if let Ok(wal) = std::fs::read(db.with_extension("sqlite-wal")) {
        bytes.extend(wal);
    }
    bytes
}

/// Every file under `dir` (recursively) with its bytes: to prove a refused command wrote nothing.
pub fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_default();
                files.push((path, bytes));
            }
        }
    }
    files.sort();
    files
}

/// Run `args`, expect exit 2, every one of `needles` in stderr, no panic, and an unchanged
/// database; then again with a database path that does not exist, which must not be created.
/// Returns stderr for further checks.
pub fn expect_rejected(args: &[&str], db: &Path, before: &[u8], needles: &[&str]) -> String {
    let stderr = expect_refusal(args, db, needles);
    assert_eq!(snapshot(db), before, "database changed for {args:?}");
    let fresh = db.with_file_name("never-created.sqlite");
    expect_refusal(args, &fresh, needles);
    assert!(!fresh.exists(), "a database was created for {args:?}");
    stderr
}

/// Run `args`, expect exit 2, every one of `needles` in stderr, a short message (a huge input
/// must not be echoed back) and no panic. Returns stderr.
pub fn expect_refusal(args: &[&str], db: &Path, needles: &[&str]) -> String {
    let out = assay(args, db);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "args {args:?}\nstderr: {stderr}");
    for needle in needles {
        assert!(stderr.contains(needle), "stderr lacks {needle:?}: {stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.len() < 4000, "{} bytes of error output for {args:?}", stderr.len());
    stderr
}

/// Replace 1-based line `line` of a text file.
pub fn replace_line(file: &Path, line: usize, text: &str) {
    let content = std::fs::read_to_string(file).unwrap();
    let mut lines: Vec<String> = content.lines().map(str::to_string).collect();
    lines[line - 1] = text.to_string();
    std::fs::write(file, lines.join("\n") + "\n").unwrap();
}

/// Whether the test model is installed; when it is not, outside CI, say so loudly and let the
/// caller skip. In CI (`CI` set) a missing model fails the test: CI pulls it first.
pub fn smollm2_installed() -> bool {
    let registry = assay::models::registry::Registry::load().expect("the built-in registry loads");
    match registry.model_path("smollm2-135m-instruct") {
        Ok(_) => true,
        Err(e) if std::env::var_os("CI").is_none() => {
            eprintln!(
                "\n*** SKIPPED: smollm2-135m-instruct is not installed ({e}).\n*** Run `assay models pull smollm2-135m-instruct` first.\n"
            );
            false
        }
        Err(e) => panic!("CI pulls smollm2-135m-instruct before the tests: {e}"),
    }
}

/// A long text for a test: `copies` of `sentence`, each numbered ("(1) …", "(2) …"), so it is
/// not a loop (a judge reads a loop once, `judge::repetition`, which would leave it short).
pub fn numbered_sentences(sentence: &str, copies: usize) -> String {
    (1..=copies).map(|i| format!("({i}) {sentence} ")).collect()
}

//! Test-set generation (`assay generate`) and its review step, on copies of the sample dataset
//! with the real smallest model: the checks that keep a pair (a planted fake quote must be
//! rejected), what a run writes and reports, a document too short to use, and the review
//! that moves accepted pairs into the dataset.

use assay::corpus::{chunk_document, read_document, Chunk};
use assay::dataset::{load_dataset, Question};
use crate::llm_common;
use assay::generate::{
    apply_review, check_candidate, pending_pairs, RawPair, Rejection, ReviewDecision, GENERATED_FILE, SUPPORT_JUDGE,
};
use assay::judge::choice::JudgePanel;
use assay::judge::spec::{load_all, select};
use assay::retrieve::IndexSettings;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn trailgear() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/trailgear")
}

/// A copy of the sample dataset (manuals and questions) in `dir`.
fn copy_trailgear(dir: &Path) -> PathBuf {
    let root = dir.join("trailgear");
    std::fs::create_dir_all(root.join("corpus")).unwrap();
    for name in ["dataset.toml", "prompt.md", "questions.jsonl"] {
        std::fs::copy(trailgear().join(name), root.join(name)).unwrap();
    }
    for entry in std::fs::read_dir(trailgear().join("corpus")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, root.join("corpus").join(path.file_name().unwrap())).unwrap();
    }
    root
}

fn aquapure_chunk(holding: &str) -> Chunk {
    let path = trailgear().join("corpus/aquapure-500.md");
    let (document, _) = read_document("aquapure-500", &path, IndexSettings::default().limits).unwrap();
    chunk_document(&document, IndexSettings::default().chunking)
        .into_iter()
        .find(|c| c.text.contains(holding))
        .expect("the manual holds the sentence")
}

fn raw(question: &str, answer: &str, quote: &str) -> RawPair {
    serde_json::from_value(serde_json::json!({"question": question, "answer": answer, "quote": quote})).unwrap()
}

#[test]
fn a_planted_fake_quote_and_other_bad_candidates_are_rejected() {
    let Some(model) = llm_common::smollm2() else { return };
    let specs = load_all(None).unwrap();
    let mut checker = JudgePanel::new(select(&specs, &[SUPPORT_JUDGE.to_string()]).unwrap(), model).unwrap();
    let chunk = aquapure_chunk("pore size of 0.1 micron");
    let known = vec![("q013".to_string(), "What is the pore size of the AquaPure 500 membrane?".to_string())];
    let question = "How fine is the filter membrane?";

    // Planted: a plausible sentence that is not in the manual (the size is changed).
    let fake = raw(question, "0.2 micron.", "a hollow-fibre membrane cartridge with a pore size of 0.2 micron");
    assert!(matches!(check_candidate(&fake, &chunk, &known, &mut checker), Err(Rejection::QuoteNotInManual(_))));
    // The same quote from another manual's sentence is not in this excerpt either.
    let elsewhere = raw(question, "3 years.", "TrailGear warrants the Summit Stove 2 against defects");
    assert!(matches!(check_candidate(&elsewhere, &chunk, &known, &mut checker), Err(Rejection::QuoteNotInManual(_))));

    let short = raw(question, "0.1 micron.", "0.1 micron");
    assert_eq!(check_candidate(&short, &chunk, &known, &mut checker), Err(Rejection::QuoteTooShort(2)));

    let invented = raw(question, "It removes viruses and heavy metals too.", "a pore size of 0.1 micron");
    assert!(matches!(
        check_candidate(&invented, &chunk, &known, &mut checker),
        Err(Rejection::AnswerNotFromQuote(_))
    ));

    let copy = raw("what is the pore size of the AquaPure 500 membrane", "0.1 micron", "with a pore size of 0.1 micron");
    assert_eq!(
        check_candidate(&copy, &chunk, &known, &mut checker),
        Err(Rejection::DuplicateOf("q013".into()))
    );

    let empty = raw("  ", "0.1 micron", "with a pore size of 0.1 micron");
    assert_eq!(check_candidate(&empty, &chunk, &known, &mut checker), Err(Rejection::EmptyField("question")));

    // A real quote (case, spacing and the final stop differ) reaches the support judge, and
    // what is kept is the manual's own text. SmolLM2 is too small to be trusted as the judge,
    // so only the two possible outcomes are checked here.
    let real = raw(question, "A pore size of 0.1 micron.", "A HOLLOW-FIBRE membrane cartridge   with a pore size of 0.1 micron.");
    match check_candidate(&real, &chunk, &known, &mut checker) {
        Ok(kept) => {
            assert_eq!(kept.quote, "a hollow-fibre membrane cartridge with a pore size of 0.1 micron");
            assert!(chunk.text.contains(&kept.quote));
        }
        Err(Rejection::NotSupported(p)) => assert!((0.0..0.5).contains(&p)),
        Err(other) => panic!("a verbatim quote was rejected: {other}"),
    }
}

/// `assay generate … --json` on `dataset` with SmolLM2 as generator and checker.
fn generate(dataset: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["generate", dataset.to_str().unwrap(), "--model", "smollm2-135m-instruct"])
        .args(["--judge-model", "smollm2-135m-instruct", "--json"])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn generation_writes_only_checked_pairs_and_counts_every_candidate() {
    if llm_common::smollm2().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = copy_trailgear(tmp.path());
    let questions_before = std::fs::read(root.join("questions.jsonl")).unwrap();
    let out = generate(&root, &["--per-doc", "1", "--docs", "kestrel-gps", "--seed", "3"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let documents = report["documents"].as_array().unwrap();
    assert_eq!(documents.len(), 1);
    let mut kept_total = 0;
    for d in documents {
        let (candidates, kept) = (d["candidates"].as_u64().unwrap(), d["kept"].as_u64().unwrap());
        let rejected: u64 = d["rejected"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
        assert!(candidates >= 1 && kept <= 1, "{d}");
        assert_eq!(kept + rejected, candidates, "every candidate is kept or rejected for a reason: {d}");
        kept_total += kept;
    }
    assert_eq!(report["kept"].as_u64().unwrap(), kept_total);

    // The dataset's own questions are untouched; the pending file holds exactly the kept
    // pairs, each valid, tagged, and with a context that is the manual's own text.
    assert_eq!(std::fs::read(root.join("questions.jsonl")).unwrap(), questions_before);
    let dataset = load_dataset(&root).unwrap();
    let pending = pending_pairs(&dataset).unwrap();
    assert_eq!(pending.len() as u64, kept_total);
    for pair in &pending {
        assert!(pair.tags.contains(&"generated".to_string()), "{pair:?}");
        let doc = &pair.citations[0];
        let path = root.join("corpus").join(format!("{doc}.md"));
        let (document, _) = read_document(doc, &path, IndexSettings::default().limits).unwrap();
        let context = pair.context.as_deref().unwrap();
        assert!(
            chunk_document(&document, IndexSettings::default().chunking).iter().any(|c| c.text.contains(context)),
            "{context:?} is not in {doc}"
        );
    }
}

#[test]
fn a_document_too_short_is_reported_and_nothing_is_written() {
    if llm_common::smollm2().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = copy_trailgear(tmp.path());
    std::fs::write(root.join("corpus/stub.md"), "# Stub\n\nSee the other manual.\n").unwrap();
    let out = generate(&root, &["--per-doc", "2", "--docs", "stub"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stub = &report["documents"][0];
    assert_eq!(stub["doc"], "stub");
    assert_eq!(stub["candidates"], 0);
    assert!(stub["problem"].as_str().unwrap().contains("too short"), "{stub}");
    assert_eq!(std::fs::read_to_string(root.join(GENERATED_FILE)).unwrap(), "");

    // An unknown document is a usage error before any model loads.
    let out = generate(&root, &["--docs", "no-such-manual"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-manual"));
}

fn pending_fixture(root: &Path) -> Vec<Question> {
    let lines = [
        r#"{"id":"gen-aquapure-500-01","question":"aquapure pore size","answer":"0.1 micron","context":"a hollow-fibre membrane cartridge with a pore size of 0.1 micron","citations":["aquapure-500"],"tags":["generated","keyword"]}"#,
        r#"{"id":"gen-aquapure-500-02","question":"How long is the filter head warranted?","answer":"2 years from the date of purchase.","doc":"aquapure-500","context":"TrailGear warrants the AquaPure 500 filter head, pump and bag against defects in materials and workmanship for 2 years from the date of purchase","citations":["aquapure-500"],"tags":["generated","scoped"]}"#,
        r#"{"id":"gen-aquapure-500-03","question":"Does the carbon stage make water safer?","answer":"No, it only improves taste.","context":"The carbon stage does not make water safer; it only makes it taste better","citations":["aquapure-500"],"tags":["generated","message"]}"#,
    ];
    std::fs::write(root.join(GENERATED_FILE), lines.join("\n") + "\n").unwrap();
    pending_pairs(&load_dataset(root).unwrap()).unwrap()
}

#[test]
fn review_in_the_cli_moves_accepted_pairs_into_the_dataset() {
    let tmp = tempfile::tempdir().unwrap();
    let root = copy_trailgear(tmp.path());
    let before = load_dataset(&root).unwrap().questions.len();
    pending_fixture(&root);
    // Pair 1: edit the question, keep the answer; pair 2: reject; pair 3: skip (stays pending).
    let mut child = Command::new(env!("CARGO_BIN_EXE_assay"))
        .args(["generate", root.to_str().unwrap(), "--review"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(b"e\nWhat is the membrane pore size?\n\nr\ns\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("accepted 1, rejected 1, 1 still pending"));

    let dataset = load_dataset(&root).unwrap();
    assert_eq!(dataset.questions.len(), before + 1);
    let added = dataset.question("gen-aquapure-500-01").unwrap();
    assert_eq!(added.question, "What is the membrane pore size?");
    assert_eq!(added.answer.as_deref(), Some("0.1 micron"));
    assert_eq!(added.tags, ["generated", "keyword", "reviewed"]);
    let left = pending_pairs(&dataset).unwrap();
    assert_eq!(left.iter().map(|q| q.id.as_str()).collect::<Vec<_>>(), ["gen-aquapure-500-03"]);
}

#[test]
fn a_bad_review_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let root = copy_trailgear(tmp.path());
    let pending = pending_fixture(&root);
    let questions = std::fs::read(root.join("questions.jsonl")).unwrap();
    let generated = std::fs::read(root.join(GENERATED_FILE)).unwrap();
    let mut emptied = pending[0].clone();
    emptied.answer = Some("   ".into());
    let mut taken = pending[1].clone();
    taken.id = "q001".into();
    // An edit that passes every field check but makes a line the dataset loader refuses.
    let mut enlarged = pending[0].clone();
    enlarged.answer = Some("0.1 micron ".repeat(200_000));
    let bad: Vec<(Vec<ReviewDecision>, &str)> = vec![
        (vec![ReviewDecision::Reject { id: "gen-nothing".into() }], "no pending pair"),
        (vec![ReviewDecision::Accept { question: emptied }], "field `answer`: empty"),
        (vec![ReviewDecision::Accept { question: taken }], "no pending pair with id \"q001\""),
        (vec![ReviewDecision::Accept { question: enlarged }], "line is over the limit of 1048576 bytes"),
        (
            vec![
                ReviewDecision::Accept { question: pending[2].clone() },
                ReviewDecision::Reject { id: pending[2].id.clone() },
            ],
            "two decisions",
        ),
    ];
    for (decisions, expected) in bad {
        // A good decision first: it must not be applied either.
        let mut all = vec![ReviewDecision::Reject { id: pending[1].id.clone() }];
        all.extend(decisions);
        let error = apply_review(&root, &all).unwrap_err().to_string();
        assert!(error.contains(expected), "{error}");
        assert_eq!(std::fs::read(root.join("questions.jsonl")).unwrap(), questions);
        assert_eq!(std::fs::read(root.join(GENERATED_FILE)).unwrap(), generated);
    }
}

//! The main job through the real CLI: replay both sample answer sets, compare their scores,
//! show, export, gate, resume and import.

use crate::common::{assay, ok, trailgear};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn run_json(db: &Path, answers: &str, name: &str) -> Value {
    let ds = trailgear();
    let stdout = ok(assay(
        &["run", ds.to_str().unwrap(), "--target", &format!("answers:{answers}"), "--name", name, "--json"],
        db,
    ));
    serde_json::from_str(&stdout).expect("--json prints JSON")
}

fn mean(run: &Value, metric: &str) -> f64 {
    run["runs"][0]["summary"][metric]["mean"]
        .as_f64()
        .unwrap_or_else(|| panic!("no {metric} in summary"))
}

#[test]
fn careful_answers_score_clearly_better_than_sloppy_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("runs.sqlite");
    let careful = run_json(&db, "answers-careful.jsonl", "careful");
    let sloppy = run_json(&db, "answers-sloppy.jsonl", "sloppy");

    for run in [&careful, &sloppy] {
        let r = &run["runs"][0];
        assert_eq!(r["status"], "finished");
        assert_eq!(r["items"].as_array().unwrap().len(), 90);
        for key in ["id", "name", "dataset", "created_at", "config", "summary"] {
            assert!(!r[key].is_null(), "JSON export lacks {key}");
        }
        let item = &r["items"][0];
        for key in ["id", "question", "reference", "answer", "citations", "metrics", "verdicts", "latency_ms", "error"] {
            assert!(item.get(key).is_some(), "item lacks {key}");
        }
        let summary = &r["summary"]["token_f1"];
        let (lo, m, hi) = (summary["ci95"][0].as_f64().unwrap(), summary["mean"].as_f64().unwrap(), summary["ci95"][1].as_f64().unwrap());
        assert!(lo <= m && m <= hi, "{lo} <= {m} <= {hi}");
        assert_eq!(summary["n"], 78, "token_f1 applies to the 78 answerable questions");
    }
    // Careful answers decline exactly the out-of-scope questions; sloppy ones invent answers.
    assert_eq!(mean(&careful, "refusal_correct"), 1.0);
    assert!(mean(&sloppy, "refusal_correct") <= 0.9);
    for metric in ["token_f1", "rouge_l", "citation_recall"] {
        let (c, s) = (mean(&careful, metric), mean(&sloppy, metric));
        assert!(c > s + 0.03, "{metric}: careful {c} vs sloppy {s}");
    }
}

#[test]
fn show_and_exports_have_a_row_per_question() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("runs.sqlite");
    run_json(&db, "answers-careful.jsonl", "careful");
    run_json(&db, "answers-sloppy.jsonl", "sloppy");

    let shown = ok(assay(&["show", "careful"], &db));
    assert!(shown.contains("items: 90/90"), "{shown}");
    for id in ["q001", "q045", "q090"] {
        assert!(shown.lines().any(|l| l.starts_with(id)), "show lacks {id}");
    }

    let md = tmp.path().join("report.md");
    ok(assay(&["export", "careful", "sloppy", "--format", "md", "-o", md.to_str().unwrap()], &db));
    let md = std::fs::read_to_string(md).unwrap();
    assert!(md.contains("| token_f1 |"), "summary row");
    assert_eq!(md.matches("| q017 |").count(), 2, "q017 once per run");

    let csv = tmp.path().join("report.csv");
    ok(assay(&["export", "careful", "sloppy", "--format", "csv", "-o", csv.to_str().unwrap()], &db));
    let rows = csv::Reader::from_path(&csv).unwrap().records().count();
    assert_eq!(rows, 180, "one row per question × run");

    let json = tmp.path().join("report.json");
    ok(assay(&["export", "careful", "--format", "json", "-o", json.to_str().unwrap()], &db));
    let parsed: Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    assert_eq!(parsed["runs"][0]["items"].as_array().unwrap().len(), 90);

    let runs: Value = serde_json::from_str(&ok(assay(&["runs", "--json"], &db))).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 2);
}

#[test]
fn fail_under_gates_exit_with_one() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("runs.sqlite");
    let ds = trailgear();
    let base = ["run", ds.to_str().unwrap(), "--target", "answers:answers-sloppy.jsonl"];
    let mut failing = base.to_vec();
    failing.extend(["--fail-under", "refusal_correct=0.99"]);
    let out = assay(&failing, &db);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("gate failed: refusal_correct = "), "{stderr}");

    let mut passing = base.to_vec();
    passing.extend(["--fail-under", "refusal_correct=0.1"]);
    ok(assay(&passing, &db));
}

#[test]
fn an_interrupted_run_resumes_without_duplicates() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("runs.sqlite");
    let ds = trailgear();
    let ds = ds.to_str().unwrap();
    // A run that stopped after 30 items: simulate by running with a limit, then dropping it.
    let first: Value = serde_json::from_str(&ok(assay(
        &["run", ds, "--target", "answers:answers-careful.jsonl", "--json"],
        &db,
    )))
    .unwrap();
    let run_id = first["runs"][0]["id"].as_str().unwrap().to_string();
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "DELETE FROM items WHERE run_id = ?1 AND position >= 30",
        [&run_id],
    )
    .unwrap();
    conn.execute("UPDATE runs SET status = 'running' WHERE id = ?1", [&run_id]).unwrap();
    drop(conn);

    let resumed: Value = serde_json::from_str(&ok(assay(
        &["run", ds, "--resume", &run_id, "--json"],
        &db,
    )))
    .unwrap();
    let items = resumed["runs"][0]["items"].as_array().unwrap();
    assert_eq!(items.len(), 90);
    assert_eq!(resumed["runs"][0]["status"], "finished");
    assert_eq!(resumed["runs"][0]["summary"], first["runs"][0]["summary"]);

    // A finished run cannot be resumed, and changed settings are refused.
    let again = assay(&["run", ds, "--resume", &run_id], &db);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already finished"));
}

#[test]
fn resume_refuses_a_changed_dataset_or_config() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("runs.sqlite");
    let ds = trailgear();
    let ds = ds.to_str().unwrap();
    let first: Value = serde_json::from_str(&ok(assay(
        &["run", ds, "--target", "answers:answers-careful.jsonl", "--limit", "5", "--json"],
        &db,
    )))
    .unwrap();
    let run_id = first["runs"][0]["id"].as_str().unwrap().to_string();
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute("UPDATE runs SET status = 'cancelled' WHERE id = ?1", [&run_id]).unwrap();
    conn.execute("UPDATE runs SET dataset_fingerprint = 'abc' WHERE id = ?1", [&run_id]).unwrap();
    drop(conn);
    let out = assay(&["run", ds, "--resume", &run_id], &db);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("dataset changed"));

    let fresh: Value = serde_json::from_str(&ok(assay(
        &["run", ds, "--target", "answers:answers-careful.jsonl", "--limit", "5", "--json"],
        &db,
    )))
    .unwrap();
    let fresh_id = fresh["runs"][0]["id"].as_str().unwrap().to_string();
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute("UPDATE runs SET status = 'cancelled' WHERE id = ?1", [&fresh_id]).unwrap();
    drop(conn);
    let out = assay(&["run", ds, "--resume", &fresh_id, "--top-k", "9"], &db);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("top_k"));
}

#[test]
fn imports_eshop_and_csv_datasets() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = tmp.path().join("manuals");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(corpus.join("158.md"), "# Tent\nThe tent weighs 2 kg.\n").unwrap();
    std::fs::write(corpus.join("product-7.md"), "# Stove\nIt boils 1 L in 4 minutes.\n").unwrap();

    let eshop = tmp.path().join("evalquestions.json");
    std::fs::write(
        &eshop,
        r#"[{"QuestionId": 1, "ProductId": 158, "Question": "How heavy?", "Answer": "2 kg"},
            {"QuestionId": 2, "ProductId": 7, "Question": "Boil time?", "Answer": "4 minutes"}]"#,
    )
    .unwrap();
    let out_dir = tmp.path().join("eshop-ds");
    let db = tmp.path().join("runs.sqlite");
    ok(assay(&["import", "eshop", eshop.to_str().unwrap(), "--corpus", corpus.to_str().unwrap(), "-o", out_dir.to_str().unwrap()], &db));
    let dataset = assay::dataset::load_dataset(&out_dir).expect("imported dataset loads");
    assert_eq!(dataset.questions.len(), 2);
    assert_eq!(dataset.questions[1].doc.as_deref(), Some("product-7"));

    // An unknown product is refused and nothing is written.
    std::fs::write(
        &eshop,
        r#"[{"QuestionId": 1, "ProductId": 999, "Question": "?", "Answer": "!"}]"#,
    )
    .unwrap();
    let bad_dir = tmp.path().join("bad-ds");
    let out = assay(&["import", "eshop", eshop.to_str().unwrap(), "--corpus", corpus.to_str().unwrap(), "-o", bad_dir.to_str().unwrap()], &db);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ProductId"));
    assert!(!bad_dir.exists());

    let csv_file = tmp.path().join("finqa.csv");
    std::fs::write(
        &csv_file,
        "Question,Golden Response,Golden Context\n\"How heavy, exactly?\",2 kg,The tent weighs 2 kg.\nBoil time?,4 minutes,It boils 1 L in 4 minutes.\n",
    )
    .unwrap();
    let csv_dir = tmp.path().join("csv-ds");
    ok(assay(&["import", "csv", csv_file.to_str().unwrap(), "--corpus", corpus.to_str().unwrap(), "-o", csv_dir.to_str().unwrap()], &db));
    let dataset = assay::dataset::load_dataset(&csv_dir).unwrap();
    assert_eq!(dataset.questions[0].question, "How heavy, exactly?");
    assert_eq!(dataset.questions[1].context.as_deref(), Some("It boils 1 L in 4 minutes."));

    // A missing column names the column and the header.
    let out = assay(&["import", "csv", csv_file.to_str().unwrap(), "--corpus", corpus.to_str().unwrap(), "-o", tmp.path().join("x").to_str().unwrap(), "--answer-column", "Answer"], &db);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("finqa.csv:1") && stderr.contains("`Answer`"), "{stderr}");
}

/// The JUnit export is what CI systems read: check it against the common JUnit schema
/// (tests/fixtures/junit/junit.xsd) with libxml2's validator, and that gated questions fail.
#[test]
fn junit_export_validates_against_the_junit_schema() {
    let Ok(status) = Command::new("xmllint").arg("--version").output() else {
        panic!("xmllint is missing: scripts/system-packages.sh installs libxml2-utils");
    };
    assert!(status.status.success());
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("runs.sqlite");
    run_json(&db, "answers-careful.jsonl", "careful");
    run_json(&db, "answers-sloppy.jsonl", "sloppy");
    let junit = tmp.path().join("report.xml");
    ok(assay(
        &["export", "careful", "sloppy", "--format", "junit", "--fail-under", "token_f1=0.5", "-o", junit.to_str().unwrap()],
        &db,
    ));
    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/junit/junit.xsd");
    let out = Command::new("xmllint")
        .args(["--noout", "--schema", schema.to_str().unwrap(), junit.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let suites: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("testsuite")).collect();
    assert_eq!(suites.len(), 2);
    for suite in &suites {
        let cases = suite.children().filter(|n| n.has_tag_name("testcase")).count();
        let failing = suite
            .children()
            .filter(|n| n.has_tag_name("testcase") && n.children().any(|c| c.has_tag_name("failure")))
            .count();
        assert_eq!(cases, 90);
        assert_eq!(suite.attribute("tests"), Some("90"));
        assert_eq!(suite.attribute("failures"), Some(failing.to_string().as_str()));
    }
    // The sloppy answers fail the token_f1 gate on more questions than the careful ones.
    let failures = |i: usize| suites[i].attribute("failures").unwrap().parse::<usize>().unwrap();
    assert!(failures(1) > failures(0), "careful {} vs sloppy {}", failures(0), failures(1));

    // A broken file must not validate, or the check above proves nothing.
    let broken = tmp.path().join("broken.xml");
    std::fs::write(&broken, xml.replacen("tests=\"90\"", "tests=\"ninety\"", 1)).unwrap();
    let out = Command::new("xmllint")
        .args(["--noout", "--schema", schema.to_str().unwrap(), broken.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success(), "a non-numeric count passed the schema");
}

/// Lists in run settings make a matrix: one run per combination, one experiment, which
/// `compare` and `export` accept by its id.
#[test]
fn a_matrix_of_settings_is_one_experiment() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("runs.sqlite");
    let ds = trailgear();
    let out = ok(assay(
        &["run", ds.to_str().unwrap(), "--target", "retrieve", "--top-k", "2,5", "--retrieval", "bm25", "--json"],
        &db,
    ));
    let export: Value = serde_json::from_str(&out).unwrap();
    let runs = export["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["config"]["top_k"], 2);
    assert_eq!(runs[1]["config"]["top_k"], 5);
    assert_eq!(runs[0]["name"], "trailgear k=2");
    let hits = |run: &Value| run["summary"]["hit_at_k"]["mean"].as_f64().unwrap();
    assert!(hits(&runs[1]) >= hits(&runs[0]), "more chunks, more hits");

    let listed: Value = serde_json::from_str(&ok(assay(&["runs", "--json"], &db))).unwrap();
    let experiment = listed[0]["experiment"].as_str().unwrap().to_string();
    assert!(experiment.starts_with("exp-"));
    assert_eq!(listed[1]["experiment"], experiment.as_str(), "both runs in one experiment");
    assert!(ok(assay(&["runs"], &db)).contains(&format!("experiment {experiment}:")));

    let compared = ok(assay(&["compare", &experiment], &db));
    assert!(compared.contains("hit_at_k"), "{compared}");
    let file = tmp.path().join("exp.json");
    ok(assay(&["export", &experiment, "--format", "json", "-o", file.to_str().unwrap()], &db));
    let exported: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(exported["runs"].as_array().unwrap().len(), 2, "the experiment's runs, oldest first");
    assert_eq!(exported["runs"][0]["config"]["top_k"], 2);
}

/// `compare` leads with the primary metric (default token F1 without judges, or `--primary`),
/// ranks three runs in a leaderboard, breaks the primary down by tag, and refuses a primary no
/// run has.
#[test]
fn compare_leads_with_the_primary_metric_ranks_runs_and_breaks_down_by_tag() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("runs.sqlite");
    run_json(&db, "answers-careful.jsonl", "careful");
    run_json(&db, "answers-sloppy.jsonl", "sloppy");
    run_json(&db, "answers-careful.jsonl", "careful again");

    let two = ok(assay(&["compare", "careful", "sloppy"], &db));
    let headline = two.lines().find(|l| l.starts_with("token_f1 (primary metric)")).unwrap_or_else(|| panic!("{two}"));
    assert!(headline.starts_with("token_f1 (primary metric), 78 questions: A 0.5"), "{two}");
    assert!(headline.ends_with(": careful better."), "{headline}");

    let json: Value = serde_json::from_str(&ok(assay(&["compare", "careful", "sloppy", "--primary", "rouge_l", "--json"], &db))).unwrap();
    let c = &json[0];
    assert_eq!(c["primary"], "rouge_l");
    assert_eq!(c["diffs"][0]["metric"], "rouge_l", "the primary comes first");
    assert_eq!(c["diffs"][0]["primary"], true);
    for d in c["diffs"].as_array().unwrap().iter().skip(1) {
        let (p, adjusted) = (d["permutation_p"].as_f64().unwrap_or(1.0), d["adjusted_p"].as_f64().unwrap_or(1.0));
        assert!(adjusted >= p, "an adjusted p is never below the raw one: {d}");
    }
    assert!(c["headline"].as_str().unwrap().starts_with("rouge_l (primary metric)"));

    let three = ok(assay(&["compare", "careful", "sloppy", "careful again", "--by", "tag"], &db));
    let board: Vec<&str> = three.lines().skip(1).take(3).collect();
    assert!(board[0].trim_start().starts_with("1. careful") && board[1].trim_start().starts_with("1. careful"), "{three}");
    assert!(board[2].trim_start().starts_with("3. sloppy"), "{three}");
    assert!(three.contains("token_f1 by tag (exploratory"), "{three}");
    assert!(three.lines().any(|l| l.trim_start().starts_with("troubleshooting ")), "{three}");
    // Identical runs: no verdict, and no claim about what 78 identical differences could detect.
    assert!(three.contains("+0.000 [+0.000, +0.000], p = 1.0000: no significant difference."), "{three}");

    let refused = assay(&["compare", "careful", "sloppy", "--primary", "no_such_metric"], &db);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--primary no_such_metric: no run has this metric"));
}

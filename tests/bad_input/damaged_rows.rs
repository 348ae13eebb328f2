//! One damaged row in a database that holds several runs (issue 36): settings that are not
//! JSON, a status no Assay writes, text in a number column, binary data in a text column, a
//! NULL where the schema (altered) no longer forbids one, a damaged item, metric and label.
//! `assay runs` still lists every other run and names the damaged one with its field; `show`
//! and `export` of the damaged run fail naming the table, row and field, while the other runs
//! still show; and the file is left byte for byte as it was.

use crate::common::{assay, dataset_copy, expect_refusal, ok, snapshot};
use rusqlite::Connection;
use std::path::Path;

/// Three runs of the sample's careful answers (3 questions each); their ids, oldest first.
fn three_runs(dir: &Path, dataset: &Path) -> (std::path::PathBuf, Vec<String>) {
    let db = dir.join("runs.sqlite");
    for name in ["first", "second", "third"] {
        ok(assay(
            &["run", dataset.to_str().unwrap(), "--target", "answers:answers-careful.jsonl", "--limit", "3", "--name", name],
            &db,
        ));
    }
    let conn = Connection::open(&db).unwrap();
    let mut statement = conn.prepare("SELECT id FROM runs ORDER BY created_at, rowid").unwrap();
    let ids: Vec<String> = statement.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
    assert_eq!(ids.len(), 3);
    (db, ids)
}

/// A copy of `db` with `damage` applied to it (SQL run with the run's id as `?1`), closed so
/// its WAL is folded into the file.
fn damaged_copy(db: &Path, to: &Path, damage: &[&str], run: &str) {
    std::fs::copy(db, to).unwrap();
    for statement in damage {
        // A fresh connection per statement: a schema edit is read again by the next one.
        let conn = Connection::open(to).unwrap();
        if statement.contains("?1") {
            conn.execute(statement, [run]).unwrap();
        } else {
            conn.execute_batch(statement).unwrap();
        }
    }
}

#[test]
fn one_damaged_row_is_named_and_every_other_run_still_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = dataset_copy(tmp.path());
    let (db, ids) = three_runs(tmp.path(), &dataset);
    // Listing closes the database cleanly, so the copies below hold everything in one file.
    ok(assay(&["runs"], &db));
    let (damaged_id, others) = (&ids[1], [&ids[0], &ids[2]]);
    let first_question = "SELECT question_id FROM items WHERE run_id = ?1 ORDER BY position LIMIT 1";

    // (what, statements, the words that name the row and field, whether `runs` lists it as a
    // damaged run row or lists the run with its items unreadable)
    let cases: Vec<(&str, Vec<String>, Vec<String>, bool)> = vec![
        (
            "settings that are not JSON",
            vec!["UPDATE runs SET config_json = '{\"target\": 5' WHERE id = ?1".into()],
            vec![format!("table runs, row {damaged_id}: config_json is not valid JSON for a run's settings")],
            true,
        ),
        (
            "a status no Assay writes",
            vec!["UPDATE runs SET status = 'paused' WHERE id = ?1".into()],
            vec![format!("table runs, row {damaged_id}: status is \"paused\", not one of running, finished, cancelled, failed")],
            true,
        ),
        (
            "text in a number column",
            vec!["UPDATE runs SET total_items = 'many' WHERE id = ?1".into()],
            vec![format!("table runs, row {damaged_id}: total_items is the text \"many\", not a whole number")],
            true,
        ),
        (
            "binary data in a text column",
            vec!["UPDATE runs SET created_at = x'00ff' WHERE id = ?1".into()],
            vec![format!("table runs, row {damaged_id}: created_at is 2 bytes of binary data, not text")],
            true,
        ),
        (
            "a NULL the altered schema let in",
            vec![
                "PRAGMA writable_schema = ON; \
                 UPDATE sqlite_master SET sql = replace(sql, 'dataset_root        TEXT NOT NULL', 'dataset_root TEXT') WHERE name = 'runs'; \
                 PRAGMA writable_schema = OFF;"
                    .into(),
                "UPDATE runs SET dataset_root = NULL WHERE id = ?1".into(),
            ],
            vec![format!("table runs, row {damaged_id}: dataset_root is empty (NULL), not text")],
            true,
        ),
        (
            "an item's answer that is not JSON",
            vec![format!("UPDATE items SET answer_json = '[1,' WHERE run_id = ?1 AND question_id = ({first_question})")],
            vec![format!("table items, row run {damaged_id}, question "), "answer_json is not valid JSON for an answer".into()],
            false,
        ),
        (
            "a metric that is not a number",
            vec![format!(
                "UPDATE metrics SET value = 'high' WHERE run_id = ?1 AND question_id = ({first_question}) AND name = 'token_f1'"
            )],
            vec![format!("table metrics, row run {damaged_id}, question "), "metric token_f1: value is the text \"high\", not a number".into()],
            false,
        ),
    ];
    for (what, statements, needles, run_row) in &cases {
        let case = tmp.path().join("case.sqlite");
        let statements: Vec<&str> = statements.iter().map(String::as_str).collect();
        damaged_copy(&db, &case, &statements, damaged_id);
        let before = snapshot(&case);

        // The list: both other runs, and the damaged one by id with its field.
        let out = assay(&["runs"], &case);
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{what}: runs failed: {stderr}");
        for other in others {
            assert!(stdout.contains(other.as_str()), "{what}: run {other} not listed:\n{stdout}");
        }
        let named = if *run_row { &stderr } else { &stdout };
        for needle in needles {
            assert!(named.contains(needle.as_str()), "{what}: the list lacks {needle:?}:\nstdout {stdout}\nstderr {stderr}");
        }
        if *run_row {
            assert!(stderr.contains(&format!("damaged run {damaged_id}")), "{what}: {stderr}");
            // The JSON list keeps its shape: the two runs that read.
            let out = assay(&["runs", "--json"], &case);
            let listed: serde_json::Value = serde_json::from_slice(&out.stdout).expect("runs --json is JSON");
            assert_eq!(listed.as_array().map(Vec::len), Some(2), "{what}: {listed}");
        } else {
            assert!(stdout.contains(&format!("{damaged_id}  unreadable: ")), "{what}: {stdout}");
        }

        // The damaged run, by id, by prefix and by name, shown and exported: refused naming it.
        // The shortest prefix no other run shares (runs of one second share their stamp).
        let unique = (1..damaged_id.len()).find(|&n| others.iter().all(|o| !o.starts_with(&damaged_id[..n])));
        let prefix = &damaged_id[..unique.unwrap_or(damaged_id.len())];
        let export = tmp.path().join("export.html");
        for args in [
            vec!["show", damaged_id.as_str()],
            vec!["show", prefix],
            vec!["show", "second"],
            vec!["export", damaged_id.as_str(), "--format", "html", "-o", export.to_str().unwrap()],
        ] {
            let mut wanted: Vec<&str> = needles.iter().map(String::as_str).collect();
            wanted.push("case.sqlite");
            wanted.push("the row was left as it is");
            expect_refusal(&args, &case, &wanted);
            assert!(!export.exists(), "{what}: an export was written for a damaged run");
        }
        // The others still show and export.
        for other in others {
            ok(assay(&["show", other.as_str()], &case));
        }
        ok(assay(&["export", others[0].as_str(), "--format", "html", "-o", export.to_str().unwrap()], &case));
        std::fs::remove_file(&export).unwrap();
        assert_eq!(snapshot(&case), before, "{what}: the database changed");
        eprintln!("ok: {what}");
        std::fs::remove_file(&case).unwrap();
    }
}

/// A label the table's CHECK would refuse (written with checks off, as a damaged copy could
/// hold it): `labels list` names its row and field, and the run itself still shows.
#[test]
fn a_damaged_label_is_named_by_its_row() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = dataset_copy(tmp.path());
    let (db, ids) = three_runs(tmp.path(), &dataset);
    let run = &ids[0];
    let question: String = Connection::open(&db)
        .unwrap()
        .query_row("SELECT question_id FROM items WHERE run_id = ?1 ORDER BY position LIMIT 1", [run], |r| r.get(0))
        .unwrap();
    ok(assay(&["labels", "set", run.as_str(), question.as_str(), "correct"], &db));
    let conn = Connection::open(&db).unwrap();
    conn.execute_batch("PRAGMA ignore_check_constraints = ON").unwrap();
    conn.execute("UPDATE labels SET label = 'maybe' WHERE run_id = ?1", [run]).unwrap();
    drop(conn);
    ok(assay(&["runs"], &db));
    let before = snapshot(&db);
    expect_refusal(
        &["labels", "list", run.as_str()],
        &db,
        &[&format!("table labels, row run {run}, question {question}: label is \"maybe\", not one of correct, wrong, skip")],
    );
    ok(assay(&["show", run.as_str()], &db));
    assert_eq!(snapshot(&db), before, "the database changed");
}

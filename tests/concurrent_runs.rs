//! Several `assay run` processes on one database at once (as the CLI and the desktop app may
//! be): all finish, each run holds every one of its questions exactly once, and the file stays
//! sound. The first round starts on a database that does not exist yet, so the processes also
//! race to create and migrate it.

use crate::common::{assay, assay_command, dataset_copy, ok};
use rusqlite::Connection;
use std::process::Stdio;

#[test]
fn concurrent_runs_on_one_database_all_finish_intact() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = dataset_copy(tmp.path());
    let ds = dataset.to_str().unwrap();
    let db = tmp.path().join("shared.sqlite");
    // The retrieval index is built once up front: this test is about the database.
    ok(assay(&["index", ds], &db));
    assert!(!db.exists(), "`assay index` does not touch the database");

    let targets = [
        "answers:answers-careful.jsonl",
        "answers:answers-sloppy.jsonl",
        "retrieve",
        "answers:answers-careful.jsonl",
    ];
    let rounds = 3;
    for round in 0..rounds {
        let children: Vec<_> = targets
            .iter()
            .enumerate()
            .map(|(i, target)| {
                let name = format!("r{round}-{i}");
                let child = assay_command(&["run", ds, "--target", target, "--name", &name], &db)
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                (target, child)
            })
            .collect();
        for (target, child) in children {
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "round {round}, {target}: {}", String::from_utf8_lossy(&out.stderr));
        }
    }

    let conn = Connection::open(&db).unwrap();
    let integrity: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(integrity, "ok");
    let mut statement = conn
        .prepare(
            "SELECT r.name, r.status, count(i.question_id), count(DISTINCT i.question_id)
             FROM runs r LEFT JOIN items i ON i.run_id = r.id GROUP BY r.id ORDER BY r.name",
        )
        .unwrap();
    let runs: Vec<(String, String, i64, i64)> = statement
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(runs.len(), rounds * targets.len(), "{runs:?}");
    for (name, status, items, distinct) in &runs {
        assert_eq!(status, "finished", "{name}");
        assert_eq!((*items, *distinct), (90, 90), "{name}: every question exactly once");
    }
    // Every run's metrics belong to its own items (no row written under another run).
    let orphans: i64 = conn
        .query_row(
            "SELECT count(*) FROM metrics m LEFT JOIN items i
             ON i.run_id = m.run_id AND i.question_id = m.question_id WHERE i.run_id IS NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(orphans, 0);
}

//! A generation cache that cannot be written (a full disk; issue 36): the answer already
//! generated is kept and scored, with a warning, instead of becoming a failed item. The write
//! is made to fail by a trigger on the cache's table, a real SQLite error on the real write
//! that works for root too (CI runs as root, which file modes do not stop), while the item's
//! own commit goes through.

use crate::common::{assay, assay_command, dataset_copy, ok, smollm2_installed};
use rusqlite::Connection;

#[test]
fn a_failed_cache_write_keeps_the_generated_answer() {
    if !smollm2_installed() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dataset = dataset_copy(tmp.path());
    let ds = dataset.to_str().unwrap();
    let db = tmp.path().join("runs.sqlite");
    // The database exists (and is migrated) before the trigger is added.
    ok(assay(&["run", ds, "--target", "answers:answers-careful.jsonl", "--limit", "1"], &db));
    Connection::open(&db)
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER full_disk BEFORE INSERT ON generations
             BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END;",
        )
        .unwrap();
    let out = assay_command(
        &["run", ds, "--target", "rag:smollm2-135m-instruct", "--retrieval", "bm25", "--limit", "1", "--max-tokens", "8"],
        &db,
    )
    .env("ASSAY_INDEX_CACHE", tmp.path().join("index"))
    .env("RAYON_NUM_THREADS", "1")
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("generation cache not written") && stderr.contains("the answer is kept"), "{stderr}");
    let conn = Connection::open(&db).unwrap();
    let (answer, error): (Option<String>, Option<String>) = conn
        .query_row(
            "SELECT answer_json, error FROM items WHERE run_id = (SELECT id FROM runs ORDER BY created_at DESC, rowid DESC LIMIT 1)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(error, None, "the answer became a failed item");
    let answer: serde_json::Value = serde_json::from_str(&answer.expect("an answer is stored")).unwrap();
    assert!(answer["completion_tokens"].as_u64().unwrap_or(0) > 0, "{answer}");
    let cached: i64 = conn.query_row("SELECT COUNT(*) FROM generations", [], |r| r.get(0)).unwrap();
    assert_eq!(cached, 0, "the trigger did not stop the cache write");
}

//! The database file (`--db` / `ASSAY_DB`): not SQLite, someone else's SQLite file, a newer
//! schema, damaged pages, a truncated copy, a folder (one damaged row: `damaged_rows`). Every case is
//! refused with the file named, and the file is left byte for byte as it was, with no WAL or
//! shared-memory file left beside it.

use crate::common::{assay, dataset_copy, expect_refusal, seeded_db, snapshot};
use rusqlite::Connection;
use std::path::Path;

fn wal_files_absent(db: &Path) -> bool {
    !db.with_extension("sqlite-wal").exists() && !db.with_extension("sqlite-shm").exists()
}

#[test]
fn each_bad_database_is_refused_and_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = dataset_copy(tmp.path());
    let ds = dataset.to_str().unwrap();
    let (good, good_bytes) = seeded_db(tmp.path(), &dataset);
    let run = ["run", ds, "--target", "answers:answers-careful.jsonl", "--limit", "2"];

    let mut cases: Vec<(&str, Vec<u8>, Vec<&str>)> = Vec::new();
    cases.push(("a text file", b"these are my notes, not a database\n".repeat(200), vec!["not an Assay database", "file is not a database"]));
    let page = 4096;
    let mut damaged = good_bytes.clone();
    for b in &mut damaged[page..page * 2] {
        *b = 0xA5;
    }
    cases.push(("a damaged page", damaged, vec!["malformed"]));
    cases.push(("a truncated copy", good_bytes[..page * 2].to_vec(), vec!["malformed"]));
    let mut header_only = good_bytes[..100].to_vec();
    header_only.resize(page, 0);
    cases.push(("a header and nothing else", header_only, vec!["malformed"]));

    let foreign = tmp.path().join("foreign.sqlite");
    let conn = Connection::open(&foreign).unwrap();
    conn.execute_batch("CREATE TABLE contacts (name TEXT, phone TEXT); INSERT INTO contacts VALUES ('Ann', '555');").unwrap();
    drop(conn);
    cases.push(("someone else's SQLite file", std::fs::read(&foreign).unwrap(), vec!["not an Assay database", "tables that are not Assay's"]));

    let newer = tmp.path().join("newer.sqlite");
    std::fs::write(&newer, &good_bytes).unwrap();
    let conn = Connection::open(&newer).unwrap();
    conn.pragma_update(None, "journal_mode", "DELETE").unwrap();
    conn.pragma_update(None, "user_version", 99).unwrap();
    drop(conn);
    cases.push(("a newer schema", std::fs::read(&newer).unwrap(), vec!["written by a newer Assay (schema 99"]));

    for (what, bytes, needles) in &cases {
        let db = tmp.path().join("case.sqlite");
        std::fs::write(&db, bytes).unwrap();
        // (A database with one damaged row is still a database: `damaged_rows` has those.)
        for args in [&["runs"][..], &run] {
            let stderr = expect_refusal(args, &db, needles);
            assert!(stderr.contains("case.sqlite"), "{what}: names the file: {stderr}");
            assert!(std::fs::read(&db).unwrap() == *bytes, "{what}: the file changed ({args:?})");
            assert!(wal_files_absent(&db), "{what}: a WAL file was left ({args:?})");
        }
        eprintln!("ok: {what}");
        std::fs::remove_file(&db).unwrap();
    }

    // A folder where the database should be, and a database that does not exist for a command
    // that only reads (no file may appear).
    let folder = tmp.path().join("folder.sqlite");
    std::fs::create_dir(&folder).unwrap();
    expect_refusal(&["runs"], &folder, &["folder.sqlite: not an Assay database", "it is a folder"]);
    expect_refusal(&run, &folder, &["folder.sqlite: not an Assay database", "it is a folder"]);
    let missing = tmp.path().join("missing.sqlite");
    expect_refusal(&["runs"], &missing, &["missing.sqlite: database does not exist"]);
    assert!(!missing.exists());
    eprintln!("{} database cases", cases.len() + 3);

    // The harness itself: the good database is still usable and unchanged by all this.
    assert_eq!(snapshot(&good), good_bytes);
    crate::common::ok(assay(&["runs"], &good));
}

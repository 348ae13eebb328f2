//! A database another connection holds locked while a run commits (issue 36): a second
//! connection takes SQLite's write lock (`BEGIN IMMEDIATE`) just before a question is answered.
//! Held through every try, the run stops with an error naming the holder, the finished answer
//! is kept beside the database, and a resume stores it without asking the question again;
//! released within the tries, the run is only delayed. The store's wait is 100 ms here instead
//! of 30 s, so the tries take a second, not five minutes.

use crate::common::dataset_copy;
use assay::dataset::{load_dataset, Dataset};
use assay::record::{ItemRecord, RunStatus};
use assay::run::{execute, prepare_new_run, prepare_resume, Progress, ResumeRequest, RunError, RunRequest};
use assay::store::Store;
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_millis(100);
const QUESTIONS: usize = 4;

fn open(db: &Path) -> Store {
    let mut store = Store::open(db).unwrap();
    store.set_busy_timeout(WAIT).unwrap();
    store
}

fn new_run(store: &Store, dataset: &Dataset) -> assay::run::PreparedRun {
    let request = RunRequest {
        target: "answers:answers-careful.jsonl".into(),
        limit: Some(QUESTIONS),
        ..RunRequest::default()
    };
    prepare_new_run(store, dataset, &request).unwrap()
}

/// A connection of its own holding the database's write lock until dropped (rolled back).
fn write_lock(db: &Path) -> Connection {
    let conn = Connection::open(db).unwrap();
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    conn
}

fn stored_items(db: &Path, run: &str) -> Vec<(String, String)> {
    let conn = Connection::open(db).unwrap();
    let mut statement = conn.prepare("SELECT question_id, finished_at FROM items WHERE run_id = ?1 ORDER BY position").unwrap();
    statement.query_map([run], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
}

fn status(db: &Path, run: &str) -> String {
    Connection::open(db).unwrap().query_row("SELECT status FROM runs WHERE id = ?1", [run], |r| r.get(0)).unwrap()
}

fn setup() -> (tempfile::TempDir, Dataset, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = load_dataset(&dataset_copy(tmp.path())).unwrap();
    let db = tmp.path().join("runs.sqlite");
    (tmp, dataset, db)
}

#[test]
fn a_lock_held_through_every_try_keeps_the_answer_and_a_resume_stores_it() {
    let (_tmp, dataset, db) = setup();
    let mut store = open(&db);
    let mut prepared = new_run(&store, &dataset);
    let run = prepared.record.id.clone();
    let mut holder: Option<Connection> = None;
    let mut started = 0;
    let cancel = AtomicBool::new(false);
    let result = execute(
        &mut store,
        &prepared.record,
        &dataset,
        prepared.target.as_mut(),
        &mut |event| {
            if let Progress::ItemStarted { .. } = event {
                started += 1;
                if started == 3 {
                    holder = Some(write_lock(&db));
                }
            }
        },
        &cancel,
    );
    let error = match result {
        Err(e @ RunError::DatabaseLocked { .. }) => e.to_string(),
        other => panic!("expected the run to stop on the lock, got {other:?}"),
    };
    eprintln!("{error}");
    let third = dataset.questions[2].id.clone();
    // Who holds the lock (this process's other connection), what is kept where, and how to go on.
    assert!(error.contains(&format!("another connection of this process (pid {})", std::process::id())), "{error}");
    let kept = db.with_file_name(format!(".runs.sqlite.run-{run}.kept.jsonl"));
    assert!(error.contains(&format!("The finished answers to {third} are kept in {}", kept.display())), "{error}");
    assert!(error.contains(&format!("--resume {run}")), "{error}");
    assert!(error.contains("tries"), "{error}");
    // Still locked when the run gave up, so the status could not be written either; no process
    // executes it, which is what a face asks before offering Resume.
    assert!(error.contains("could not be marked"), "{error}");
    let lines = std::fs::read_to_string(&kept).unwrap();
    let kept_items: Vec<ItemRecord> = lines.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(kept_items.len(), 1);
    assert_eq!(kept_items[0].question.id, third);
    assert!(kept_items[0].answer.is_some() && kept_items[0].metrics.contains_key("token_f1"));
    assert_eq!(stored_items(&db, &run).len(), 2, "only the items before the lock were committed");
    assert_eq!(status(&db, &run), "running");
    drop(store);
    drop(holder.take());

    // The resume stores the kept item first and asks only the question never answered.
    let mut store = open(&db);
    let request = ResumeRequest { run: run.clone(), ..ResumeRequest::default() };
    let mut resumed = prepare_resume(&store, &dataset, &request).unwrap();
    let mut asked = Vec::new();
    let outcome = execute(
        &mut store,
        &resumed.record,
        &dataset,
        resumed.target.as_mut(),
        &mut |event| {
            if let Progress::ItemStarted { question_id, .. } = event {
                asked.push(question_id.clone());
            }
        },
        &cancel,
    )
    .unwrap();
    assert_eq!(outcome, RunStatus::Finished);
    assert_eq!(asked, vec![dataset.questions[3].id.clone()], "the kept question was asked again");
    let items = stored_items(&db, &run);
    assert_eq!(items.len(), QUESTIONS);
    // Stored as it was kept: the time it finished before the lock, not a new answer's.
    assert_eq!(items[2], (third, kept_items[0].finished_at.clone()));
    assert!(!kept.exists(), "the kept file stays after its items were stored");
    assert_eq!(status(&db, &run), "finished");
}

#[test]
fn a_lock_released_within_the_tries_only_delays_the_run() {
    let (_tmp, dataset, db) = setup();
    let mut store = open(&db);
    let mut prepared = new_run(&store, &dataset);
    let run = prepared.record.id.clone();
    let held = WAIT * 4;
    let mut release = None;
    let mut started = 0;
    let clock = Instant::now();
    let outcome = execute(
        &mut store,
        &prepared.record,
        &dataset,
        prepared.target.as_mut(),
        &mut |event| {
            if let Progress::ItemStarted { .. } = event {
                started += 1;
                if started == 2 {
                    let holder = write_lock(&db);
                    release = Some(std::thread::spawn(move || {
                        std::thread::sleep(held);
                        drop(holder);
                    }));
                }
            }
        },
        &AtomicBool::new(false),
    )
    .unwrap();
    release.unwrap().join().unwrap();
    assert_eq!(outcome, RunStatus::Finished);
    assert!(clock.elapsed() >= held, "the run did not wait for the lock ({:?})", clock.elapsed());
    assert_eq!(stored_items(&db, &run).len(), QUESTIONS);
    assert!(!db.with_file_name(format!(".runs.sqlite.run-{run}.kept.jsonl")).exists());
}

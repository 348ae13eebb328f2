//! The run store: one SQLite file (WAL) holding every run, item, metric and verdict.
//!
//! Invariants: each finished item is committed in its own transaction together with its
//! metrics and verdicts, so a killed process loses only the items in flight; an item is keyed
//! by (run, question) so a resumed run can never hold a question twice; a file that is not a
//! SQLite database (or is from a newer Assay) is refused before anything is written to it;
//! several processes may use one file at once (they wait for each other's locks).

mod damaged_row;
mod generation_cache;
mod labels;
mod lock_holders;
mod pairwise;
mod run_deletion;
mod run_rows;
mod schema;

pub use damaged_row::DamagedRow;
pub use generation_cache::GenerationCache;
pub use run_deletion::RunContents;
pub use run_rows::{DamagedRun, RunListing};
pub use pairwise::{swap_runs, PairwiseKey, StoredPairwise, StoredPairwiseJudge};
use crate::record::{ItemRecord, RunRecord, RunStatus};
use crate::dataset::Question;
use crate::record::{Answer, Verdict};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: not an Assay database (not a SQLite file, or damaged): {message}")]
    NotADatabase { path: PathBuf, message: String },
    #[error("{path}: written by a newer Assay (schema {found}, this build knows {known}); upgrade Assay")]
    NewerSchema {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    #[error("{path}: database does not exist")]
    Missing { path: PathBuf },
    #[error("{path}: cannot create the database folder: {source}")]
    Folder {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("no run matches {reference:?} (see `assay runs`)")]
    UnknownRun { reference: String },
    #[error("{reference:?} matches several runs: {candidates}; give more of the id")]
    AmbiguousRun {
        reference: String,
        candidates: String,
    },
    #[error(
        "{path}: {damage}; the row was left as it is and the other runs still read \
         (fix or delete that row, or restore a backup of the database)"
    )]
    Damaged { path: PathBuf, damage: DamagedRow },
    #[error(
        "{path}: the database stayed locked past the wait of {waited_s} s ({holder}): {source}"
    )]
    Locked {
        path: PathBuf,
        waited_s: f64,
        holder: String,
        #[source]
        source: rusqlite::Error,
    },
    #[error("{path}: run {run}: stored {what} is not valid JSON: {message}")]
    Corrupt {
        path: PathBuf,
        run: String,
        what: &'static str,
        message: String,
    },
}

pub struct Store {
    conn: Connection,
    path: PathBuf,
    busy_timeout: std::time::Duration,
}

/// The database both faces use when none is named: `$ASSAY_DB`, else `assay.sqlite` in the
/// platform data dir. None when neither exists (no home directory).
pub fn default_db_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("ASSAY_DB").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    directories::ProjectDirs::from("", "", "assay").map(|dirs| dirs.data_dir().join("assay.sqlite"))
}

impl Store {
    /// Open the database at `path`, creating it (and its folder) when missing.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| StoreError::Folder {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        Self::open_with(path)
    }

    /// Open an existing database; read-only commands use this so a typo makes no new file.
    pub fn open_existing(path: &Path) -> Result<Store, StoreError> {
        if !path.exists() {
            return Err(StoreError::Missing {
                path: path.to_path_buf(),
            });
        }
        Self::open_with(path)
    }

    fn open_with(path: &Path) -> Result<Store, StoreError> {
        let sqlite = |source| sqlite_error(path, BUSY_TIMEOUT, source);
        if path.is_dir() {
            return Err(StoreError::NotADatabase {
                path: path.to_path_buf(),
                message: "it is a folder; give the path of a database file".into(),
            });
        }
        let mut conn = Connection::open(path).map_err(sqlite)?;
        // First, so that another process holding a lock (a second `assay run`, the desktop
        // app) makes us wait instead of failing or being mistaken for a damaged file.
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sqlite)?;
        // Read before any write: a non-SQLite file fails here and stays untouched. One read
        // transaction, so a database another process is creating is seen whole or not at all.
        let (version, foreign) = {
            let snapshot = conn.transaction().map_err(sqlite)?;
            // A lock held past the wait is not a damaged file: say who holds it instead.
            let version = read_version(&snapshot).map_err(|e| {
                if is_busy(&e) {
                    sqlite(e)
                } else {
                    StoreError::NotADatabase { path: path.to_path_buf(), message: e.to_string() }
                }
            })?;
            let foreign = version == 0 && has_foreign_tables(&snapshot).map_err(sqlite)?;
            (version, foreign)
        };
        check_version(path, version)?;
        if foreign {
            return Err(StoreError::NotADatabase {
                path: path.to_path_buf(),
                message: "a SQLite file with tables that are not Assay's".into(),
            });
        }
        use_wal(&conn).map_err(sqlite)?;
        // FULL: each commit (one finished item) is on disk before the run goes on, so a power
        // loss cannot take back items a run reported done. It costs about 1-2 ms per commit
        // (measured 2026-11-24: 0.07-0.27 ms with NORMAL, 0.9-1.9 ms with FULL, WAL, one item
        // and 8 metric rows per commit), nothing beside a model's answer or verdict.
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(sqlite)?;
        conn.pragma_update(None, "foreign_keys", "ON").map_err(sqlite)?;
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
            busy_timeout: BUSY_TIMEOUT,
        };
        if version < schema::MIGRATIONS.len() as i64 {
            store.migrate()?;
        }
        Ok(store)
    }

    /// Bring the schema up to date. The version is read again under the write lock: another
    /// process may have migrated (or created) the database since it was first read.
    fn migrate(&mut self) -> Result<(), StoreError> {
        let path = self.path.clone();
        let wait = self.busy_timeout;
        let sqlite = |source| sqlite_error(&path, wait, source);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sqlite)?;
        let from = read_version(&tx).map_err(sqlite)?;
        check_version(&path, from)?;
        if from == 0 && has_foreign_tables(&tx).map_err(sqlite)? {
            return Err(StoreError::NotADatabase {
                path: path.clone(),
                message: "a SQLite file with tables that are not Assay's".into(),
            });
        }
        for (index, sql) in schema::MIGRATIONS.iter().enumerate().skip(from as usize) {
            tx.execute_batch(sql).map_err(sqlite)?;
            tx.pragma_update(None, "user_version", (index + 1) as i64)
                .map_err(sqlite)?;
        }
        tx.commit().map_err(sqlite)?;
        Ok(())
    }

    fn err(&self, source: rusqlite::Error) -> StoreError {
        sqlite_error(&self.path, self.busy_timeout, source)
    }

    /// How long a statement waits for another connection's lock (30 s unless changed).
    pub fn busy_timeout(&self) -> std::time::Duration {
        self.busy_timeout
    }

    /// Wait `wait` for another connection's lock instead of 30 s (a test of what happens when
    /// the wait runs out need not wait that long).
    pub fn set_busy_timeout(&mut self, wait: std::time::Duration) -> Result<(), StoreError> {
        self.conn.busy_timeout(wait).map_err(|e| self.err(e))?;
        self.busy_timeout = wait;
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn insert_run(&self, run: &RunRecord) -> Result<(), StoreError> {
        let config_json = serde_json::to_string(&run.config).map_err(|e| StoreError::Corrupt {
            path: self.path.clone(),
            run: run.id.clone(),
            what: "config",
            message: e.to_string(),
        })?;
        self.conn
            .execute(
                "INSERT INTO runs (id, name, dataset, dataset_root, dataset_fingerprint, config_json,
                 config_hash, status, total_items, created_at, finished_at, experiment)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    run.id,
                    run.name,
                    run.dataset,
                    run.dataset_root,
                    run.dataset_fingerprint,
                    config_json,
                    run.config_hash,
                    run.status.as_str(),
                    run.total_items as i64,
                    run.created_at,
                    run.finished_at,
                    run.experiment,
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    pub fn set_status(
        &self,
        run_id: &str,
        status: RunStatus,
        finished_at: Option<&str>,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE runs SET status = ?2, finished_at = ?3 WHERE id = ?1",
                params![run_id, status.as_str(), finished_at],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Commit one finished item with its metrics and verdicts, atomically.
    pub fn record_item(&mut self, run_id: &str, item: &ItemRecord) -> Result<(), StoreError> {
        let path = self.path.clone();
        let wait = self.busy_timeout;
        let sqlite = |source| sqlite_error(&path, wait, source);
        let corrupt = |what, e: serde_json::Error| StoreError::Corrupt {
            path: path.clone(),
            run: run_id.to_string(),
            what,
            message: e.to_string(),
        };
        let question_json =
            serde_json::to_string(&item.question).map_err(|e| corrupt("question", e))?;
        let answer_json = item
            .answer
            .as_ref()
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| corrupt("answer", e))?;
        let tx = self.conn.transaction().map_err(sqlite)?;
        // A retried item replaces its failed attempt whole.
        for table in ["metrics", "verdicts", "items"] {
            tx.execute(
                &format!("DELETE FROM {table} WHERE run_id = ?1 AND question_id = ?2"),
                params![run_id, item.question.id],
            )
            .map_err(sqlite)?;
        }
        tx.execute(
            "INSERT INTO items (run_id, question_id, position, question_json, answer_json, error,
             latency_ms, prompt_tokens, completion_tokens, finished_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                run_id,
                item.question.id,
                item.position as i64,
                question_json,
                answer_json,
                item.error,
                item.answer.as_ref().map(|a| a.latency_ms as i64),
                item.answer.as_ref().and_then(|a| a.prompt_tokens),
                item.answer.as_ref().and_then(|a| a.completion_tokens),
                item.finished_at,
            ],
        )
        .map_err(sqlite)?;
        for (name, value) in &item.metrics {
            tx.execute(
                "INSERT INTO metrics (run_id, question_id, name, value) VALUES (?1, ?2, ?3, ?4)",
                params![run_id, item.question.id, name, value],
            )
            .map_err(sqlite)?;
        }
        for (judge, verdict) in &item.verdicts {
            let json = serde_json::to_string(verdict).map_err(|e| corrupt("verdict", e))?;
            tx.execute(
                "INSERT INTO verdicts (run_id, question_id, judge, verdict_json, score)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![run_id, item.question.id, judge, json, verdict.score],
            )
            .map_err(sqlite)?;
        }
        tx.commit().map_err(sqlite)?;
        Ok(())
    }

    /// Ids of the questions a run has already committed (finished or errored).
    pub fn done_question_ids(&self, run_id: &str) -> Result<HashSet<String>, StoreError> {
        // An item that failed (no answer, the target's error kept) is not done: a resume asks
        // it again.
        let mut statement = self
            .conn
            .prepare("SELECT question_id FROM items WHERE run_id = ?1 AND error IS NULL")
            .map_err(|e| self.err(e))?;
        let ids = statement
            .query_map([run_id], |r| r.get::<_, String>(0))
            .map_err(|e| self.err(e))?
            .collect::<Result<HashSet<_>, _>>()
            .map_err(|e| self.err(e))?;
        Ok(ids)
    }

    /// Items of the run whose target failed (kept with the error, unscored).
    pub fn failed_item_count(&self, run_id: &str) -> Result<usize, StoreError> {
        self.conn
            .query_row(
                "SELECT COUNT(*) FROM items WHERE run_id = ?1 AND error IS NOT NULL",
                [run_id],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as usize)
            .map_err(|e| self.err(e))
    }

    /// A run's items in dataset order, with their metrics and verdicts. A row that cannot be
    /// read is an error naming its table, row and field: a report without it would mislead.
    pub fn items(&self, run_id: &str) -> Result<Vec<ItemRecord>, StoreError> {
        let damaged = |damage: DamagedRow| StoreError::Damaged { path: self.path.clone(), damage };
        let key = |question: &str| format!("run {run_id}, question {question}");
        let mut metrics: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
        {
            let mut statement = self
                .conn
                .prepare("SELECT question_id, name, value FROM metrics WHERE run_id = ?1")
                .map_err(|e| self.err(e))?;
            let mut rows = statement.query([run_id]).map_err(|e| self.err(e))?;
            while let Some(row) = rows.next().map_err(|e| self.err(e))? {
                let question = damaged_row::text(row, 0, "question_id").map_err(|d| damaged(d.in_row("metrics", format!("run {run_id}"))))?;
                let name = damaged_row::text(row, 1, "name").map_err(|d| damaged(d.in_row("metrics", key(&question))))?;
                let value = damaged_row::real(row, 2, "value")
                    .map_err(|d| damaged(d.in_row("metrics", format!("{}, metric {name}", key(&question)))))?;
                metrics.entry(question).or_default().insert(name, value);
            }
        }
        let mut verdicts: BTreeMap<String, BTreeMap<String, Verdict>> = BTreeMap::new();
        {
            let mut statement = self
                .conn
                .prepare("SELECT question_id, judge, verdict_json FROM verdicts WHERE run_id = ?1")
                .map_err(|e| self.err(e))?;
            let mut rows = statement.query([run_id]).map_err(|e| self.err(e))?;
            while let Some(row) = rows.next().map_err(|e| self.err(e))? {
                let question = damaged_row::text(row, 0, "question_id").map_err(|d| damaged(d.in_row("verdicts", format!("run {run_id}"))))?;
                let judge = damaged_row::text(row, 1, "judge").map_err(|d| damaged(d.in_row("verdicts", key(&question))))?;
                let verdict: Verdict = damaged_row::json(row, 2, "verdict_json", "a verdict")
                    .map_err(|d| damaged(d.in_row("verdicts", format!("{}, judge {judge}", key(&question)))))?;
                verdicts.entry(question).or_default().insert(judge, verdict);
            }
        }
        let mut statement = self
            .conn
            .prepare(
                "SELECT question_id, position, question_json, answer_json, error, finished_at
                 FROM items WHERE run_id = ?1 ORDER BY position",
            )
            .map_err(|e| self.err(e))?;
        let mut rows = statement.query([run_id]).map_err(|e| self.err(e))?;
        let mut items = Vec::new();
        while let Some(row) = rows.next().map_err(|e| self.err(e))? {
            let question_id = damaged_row::text(row, 0, "question_id").map_err(|d| damaged(d.in_row("items", format!("run {run_id}"))))?;
            let read = || -> Result<ItemRecord, damaged_row::FieldDamage> {
                Ok(ItemRecord {
                    position: damaged_row::count(row, 1, "position")?,
                    question: damaged_row::json::<Question>(row, 2, "question_json", "a question")?,
                    answer: damaged_row::optional_json::<Answer>(row, 3, "answer_json", "an answer")?,
                    error: damaged_row::optional_text(row, 4, "error")?,
                    finished_at: damaged_row::text(row, 5, "finished_at")?,
                    metrics: BTreeMap::new(),
                    verdicts: BTreeMap::new(),
                })
            };
            let mut item = read().map_err(|d| damaged(d.in_row("items", key(&question_id))))?;
            item.metrics = metrics.remove(&question_id).unwrap_or_default();
            item.verdicts = verdicts.remove(&question_id).unwrap_or_default();
            items.push(item);
        }
        Ok(items)
    }
}

/// How long a statement waits for another process's lock before giving up. Items commit in
/// milliseconds, so this only runs out when something holds the database for a long time.
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// A SQLite error on the database at `path`. A lock that outlasted the wait (`waited`) is its
/// own error, naming the process that holds it where the system says.
fn sqlite_error(path: &Path, waited: std::time::Duration, source: rusqlite::Error) -> StoreError {
    if is_busy(&source) {
        return StoreError::Locked {
            path: path.to_path_buf(),
            waited_s: waited.as_secs_f64(),
            holder: lock_holders::describe(path),
            source,
        };
    }
    StoreError::Sqlite { path: path.to_path_buf(), source }
}

/// SQLite's "busy" (another connection holds the lock) and "locked" (a conflict inside one
/// connection's own shared cache): both pass once the other side lets go.
fn is_busy(error: &rusqlite::Error) -> bool {
    matches!(
        error,
        rusqlite::Error::SqliteFailure(e, _)
            if matches!(e.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

impl StoreError {
    /// Whether this is a lock another connection held past the wait: trying again later may
    /// succeed, and nothing is wrong with what was being written.
    pub fn is_locked(&self) -> bool {
        matches!(self, StoreError::Locked { .. })
    }
}

/// Switch to WAL. On a database still in rollback mode, two processes switching at once can
/// each hold a read lock and want the write lock: SQLite then answers one of them "busy" at
/// once, without waiting, to avoid a deadlock. That one retries until the other is done.
fn use_wal(conn: &Connection) -> rusqlite::Result<()> {
    let started = std::time::Instant::now();
    loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy && started.elapsed() < BUSY_TIMEOUT =>
            {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            result => return result,
        }
    }
}

fn read_version(conn: &Connection) -> rusqlite::Result<i64> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    // user_version reads the header only; listing the schema proves the pages are readable.
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))?;
    Ok(version)
}

fn check_version(path: &Path, version: i64) -> Result<(), StoreError> {
    let known = schema::MIGRATIONS.len() as i64;
    if version > known {
        return Err(StoreError::NewerSchema {
            path: path.to_path_buf(),
            found: version,
            known,
        });
    }
    Ok(())
}

fn has_foreign_tables(conn: &Connection) -> rusqlite::Result<bool> {
    let count: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
        [],
        |r| r.get(0),
    )?;
    Ok(count > 0)
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

/// Does this run exist? (Used before writing, to refuse a duplicate id.)
pub fn run_exists(store: &Store, run_id: &str) -> Result<bool, StoreError> {
    store
        .conn
        .query_row("SELECT 1 FROM runs WHERE id = ?1", [run_id], |_| Ok(()))
        .optional()
        .map(|r| r.is_some())
        .map_err(|e| store.err(e))
}

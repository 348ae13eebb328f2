//! The run store: one SQLite file (WAL) holding every run, item, metric and verdict.
//!
//! Invariants: each finished item is committed in its own transaction together with its
//! metrics and verdicts, so a killed process loses only the items in flight; an item is keyed
//! by (run, question) so a resumed run can never hold a question twice; a file that is not a
//! SQLite database (or is from a newer Assay) is refused before anything is written to it;
//! several processes may use one file at once (they wait for each other's locks).

mod generation_cache;
mod labels;
mod pairwise;
mod schema;

pub use generation_cache::GenerationCache;
pub use pairwise::{swap_runs, PairwiseKey, StoredPairwise, StoredPairwiseJudge};
use crate::record::{ItemRecord, RunRecord, RunStatus};
use crate::dataset::Question;
use crate::record::{Answer, RunConfig, Verdict};
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
        let sqlite = |source| StoreError::Sqlite {
            path: path.to_path_buf(),
            source,
        };
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
            let version = read_version(&snapshot).map_err(|e| StoreError::NotADatabase {
                path: path.to_path_buf(),
                message: e.to_string(),
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
        let sqlite = |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
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
        StoreError::Sqlite {
            path: self.path.clone(),
            source,
        }
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
        let sqlite = |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
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

    /// All runs, newest first.
    pub fn runs(&self) -> Result<Vec<RunRecord>, StoreError> {
        let mut statement = self
            .conn
            .prepare(&format!(
                "SELECT {RUN_COLUMNS} FROM runs ORDER BY created_at DESC, id DESC"
            ))
            .map_err(|e| self.err(e))?;
        let rows = statement
            .query_map([], raw_run)
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        rows.into_iter().map(|raw| raw.into_record(&self.path)).collect()
    }

    /// Find a run by full id, unique id prefix, or name (the newest run of that name).
    pub fn find_run(&self, reference: &str) -> Result<RunRecord, StoreError> {
        let runs = self.runs()?;
        if let Some(run) = runs.iter().find(|r| r.id == reference) {
            return Ok(run.clone());
        }
        let by_prefix: Vec<&RunRecord> =
            runs.iter().filter(|r| r.id.starts_with(reference)).collect();
        match by_prefix.len() {
            1 => return Ok(by_prefix[0].clone()),
            n if n > 1 => {
                return Err(StoreError::AmbiguousRun {
                    reference: reference.to_string(),
                    candidates: by_prefix
                        .iter()
                        .map(|r| r.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                })
            }
            _ => {}
        }
        runs.into_iter()
            .find(|r| r.name == reference)
            .ok_or_else(|| StoreError::UnknownRun {
                reference: reference.to_string(),
            })
    }

    /// The runs a reference names: all runs of an experiment (by its id or a unique prefix of
    /// it), oldest first, else the one run `find_run` finds.
    pub fn find_runs(&self, reference: &str) -> Result<Vec<RunRecord>, StoreError> {
        let runs = self.runs()?;
        let mut experiments: Vec<&str> = runs
            .iter()
            .filter_map(|r| r.experiment.as_deref())
            .filter(|e| reference.starts_with("exp-") && e.starts_with(reference))
            .collect();
        experiments.sort_unstable();
        experiments.dedup();
        let chosen = match experiments.as_slice() {
            [one] => Some(one.to_string()),
            many => many.iter().find(|e| **e == reference).map(|e| e.to_string()),
        };
        match chosen {
            Some(experiment) => Ok(runs
                .into_iter()
                .rev()
                .filter(|r| r.experiment.as_deref() == Some(experiment.as_str()))
                .collect()),
            None => Ok(vec![self.find_run(reference)?]),
        }
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

    /// A run's items in dataset order, with their metrics and verdicts.
    pub fn items(&self, run_id: &str) -> Result<Vec<ItemRecord>, StoreError> {
        let corrupt = |what, e: serde_json::Error| StoreError::Corrupt {
            path: self.path.clone(),
            run: run_id.to_string(),
            what,
            message: e.to_string(),
        };
        let mut metrics: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
        {
            let mut statement = self
                .conn
                .prepare("SELECT question_id, name, value FROM metrics WHERE run_id = ?1")
                .map_err(|e| self.err(e))?;
            let rows = statement
                .query_map([run_id], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get(2)?))
                })
                .map_err(|e| self.err(e))?;
            for row in rows {
                let (question, name, value) = row.map_err(|e| self.err(e))?;
                metrics.entry(question).or_default().insert(name, value);
            }
        }
        let mut verdicts: BTreeMap<String, BTreeMap<String, Verdict>> = BTreeMap::new();
        {
            let mut statement = self
                .conn
                .prepare("SELECT question_id, judge, verdict_json FROM verdicts WHERE run_id = ?1")
                .map_err(|e| self.err(e))?;
            let rows = statement
                .query_map([run_id], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                    ))
                })
                .map_err(|e| self.err(e))?;
            for row in rows {
                let (question, judge, json) = row.map_err(|e| self.err(e))?;
                let verdict: Verdict =
                    serde_json::from_str(&json).map_err(|e| corrupt("verdict", e))?;
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
        let rows = statement
            .query_map([run_id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, Option<String>>(4)?,
                    r.get::<_, String>(5)?,
                ))
            })
            .map_err(|e| self.err(e))?;
        let mut items = Vec::new();
        for row in rows {
            let (question_id, position, question_json, answer_json, error, finished_at) =
                row.map_err(|e| self.err(e))?;
            let question: Question =
                serde_json::from_str(&question_json).map_err(|e| corrupt("question", e))?;
            let answer: Option<Answer> = answer_json
                .map(|j| serde_json::from_str(&j))
                .transpose()
                .map_err(|e| corrupt("answer", e))?;
            items.push(ItemRecord {
                position: position.max(0) as usize,
                metrics: metrics.remove(&question_id).unwrap_or_default(),
                verdicts: verdicts.remove(&question_id).unwrap_or_default(),
                question,
                answer,
                error,
                finished_at,
            });
        }
        Ok(items)
    }
}

/// How long a statement waits for another process's lock before giving up. Items commit in
/// milliseconds, so this only runs out when something holds the database for a long time.
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

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

const RUN_COLUMNS: &str = "id, name, dataset, dataset_root, dataset_fingerprint, config_json, \
     config_hash, status, total_items, created_at, finished_at, experiment";

/// A runs row before its JSON and status are parsed (those can fail with our own errors).
struct RawRun {
    id: String,
    name: String,
    dataset: String,
    dataset_root: String,
    dataset_fingerprint: String,
    config_json: String,
    config_hash: String,
    status: String,
    total_items: i64,
    created_at: String,
    finished_at: Option<String>,
    experiment: Option<String>,
}

fn raw_run(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawRun> {
    Ok(RawRun {
        id: r.get(0)?,
        name: r.get(1)?,
        dataset: r.get(2)?,
        dataset_root: r.get(3)?,
        dataset_fingerprint: r.get(4)?,
        config_json: r.get(5)?,
        config_hash: r.get(6)?,
        status: r.get(7)?,
        total_items: r.get(8)?,
        created_at: r.get(9)?,
        finished_at: r.get(10)?,
        experiment: r.get(11)?,
    })
}

impl RawRun {
    fn into_record(self, path: &Path) -> Result<RunRecord, StoreError> {
        let config: RunConfig =
            serde_json::from_str(&self.config_json).map_err(|e| StoreError::Corrupt {
                path: path.to_path_buf(),
                run: self.id.clone(),
                what: "config",
                message: e.to_string(),
            })?;
        Ok(RunRecord {
            status: RunStatus::parse(&self.status),
            id: self.id,
            name: self.name,
            dataset: self.dataset,
            dataset_root: self.dataset_root,
            dataset_fingerprint: self.dataset_fingerprint,
            config,
            config_hash: self.config_hash,
            total_items: self.total_items.max(0) as usize,
            created_at: self.created_at,
            finished_at: self.finished_at,
            experiment: self.experiment,
        })
    }
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

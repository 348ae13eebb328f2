//! Generations already computed. The same model file (by sha256), prompt text and generation
//! parameters (seed included) always give the same text, so a matrix run, a rerun or a second
//! judge model reuses a stored generation instead of recomputing it (DESIGN.md, Storage).
//!
//! Keys are computed by whoever generates (`targets::generation_key`); the store keeps rows.
//! The cache has its own connection to the run database: targets live on worker threads apart
//! from the `Store` that commits items, and WAL lets both work on one file. The run opens it
//! and hands it to the target, which never opens a database itself.

use super::{schema, StoreError};
use crate::record::CachedGeneration;
use rusqlite::{params, Connection, OptionalExtension};
use std::path::{Path, PathBuf};

/// The cache waits for another connection's lock as the run store does.
const CACHE_BUSY_TIMEOUT: std::time::Duration = super::BUSY_TIMEOUT;

pub struct GenerationCache {
    conn: Connection,
    path: PathBuf,
}

impl GenerationCache {
    /// Open the cache in an Assay database that `Store::open` has already created and migrated.
    pub fn open(db: &Path) -> Result<Self, StoreError> {
        let sqlite = |source| super::sqlite_error(db, CACHE_BUSY_TIMEOUT, source);
        let conn = Connection::open(db).map_err(sqlite)?;
        // Before the first read: another process may hold a lock for a moment.
        conn.busy_timeout(CACHE_BUSY_TIMEOUT).map_err(sqlite)?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(sqlite)?;
        if version < schema::GENERATIONS_SCHEMA {
            return Err(StoreError::NotADatabase {
                path: db.to_path_buf(),
                message: format!("schema {version} has no generation cache; open it with the run store first"),
            });
        }
        Ok(GenerationCache { conn, path: db.to_path_buf() })
    }

    fn err(&self, source: rusqlite::Error) -> StoreError {
        super::sqlite_error(&self.path, CACHE_BUSY_TIMEOUT, source)
    }

    pub fn get(&self, key: &str) -> Result<Option<CachedGeneration>, StoreError> {
        self.conn
            .query_row(
                "SELECT text, prompt_tokens, completion_tokens, latency_ms FROM generations WHERE key = ?1",
                params![key],
                |row| {
                    Ok(CachedGeneration {
                        text: row.get(0)?,
                        prompt_tokens: row.get(1)?,
                        completion_tokens: row.get(2)?,
                        latency_ms: row.get::<_, i64>(3)?.max(0) as u64,
                    })
                },
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Store a finished generation (never a cancelled or failed one: those are not the text
    /// the same request would give).
    pub fn put(&self, key: &str, model_sha256: &str, generation: &CachedGeneration) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT OR IGNORE INTO generations
                 (key, model_sha256, text, prompt_tokens, completion_tokens, latency_ms, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    key,
                    model_sha256,
                    generation.text,
                    generation.prompt_tokens,
                    generation.completion_tokens,
                    generation.latency_ms as i64,
                    crate::record::now_rfc3339(),
                ],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    #[test]
    fn a_generation_is_found_only_under_its_own_key() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("runs.sqlite");
        Store::open(&db).unwrap();
        let cache = GenerationCache::open(&db).unwrap();
        assert_eq!(cache.get("k1").unwrap(), None);
        let stored = CachedGeneration { text: "Five seconds.".into(), prompt_tokens: 12, completion_tokens: 4, latency_ms: 80 };
        cache.put("k1", "abc", &stored).unwrap();
        assert_eq!(cache.get("k1").unwrap(), Some(stored.clone()));
        assert_eq!(cache.get("k2").unwrap(), None);
        // The first generation stored under a key stays.
        let other = CachedGeneration { text: "Ten.".into(), ..stored.clone() };
        cache.put("k1", "abc", &other).unwrap();
        assert_eq!(cache.get("k1").unwrap(), Some(stored));
    }
}

//! Generations already computed. The same model file (by sha256), prompt text and generation
//! parameters (seed included) always give the same text, so a matrix run, a rerun or a second
//! judge model reuses a stored generation instead of recomputing it (DESIGN.md, Storage).
//!
//! The cache has its own connection to the run database: targets live on worker threads apart
//! from the `Store` that commits items, and WAL lets both work on one file.

use super::{schema, StoreError};
use crate::llm::GenerationParams;
use rusqlite::{params, Connection, OptionalExtension};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// A stored generation: what the model wrote and what it cost the first time.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedGeneration {
    pub text: String,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    /// Generation time when it was computed.
    pub latency_ms: u64,
}

pub struct GenerationCache {
    conn: Connection,
    path: PathBuf,
}

/// The cache key: sha256 over the model's sha256, the prompt and the parameters, each
/// length-prefixed so no two different inputs can run together into one byte string.
pub fn generation_key(model_sha256: &str, prompt: &str, params: &GenerationParams) -> String {
    let params_json = serde_json::to_string(params).unwrap_or_default();
    let mut hasher = Sha256::new();
    for part in [model_sha256, prompt, params_json.as_str()] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hex::encode(hasher.finalize())
}

impl GenerationCache {
    /// Open the cache in an Assay database that `Store::open` has already created and migrated.
    pub fn open(db: &Path) -> Result<Self, StoreError> {
        let sqlite = |source| StoreError::Sqlite { path: db.to_path_buf(), source };
        let conn = Connection::open(db).map_err(sqlite)?;
        // Before the first read: another process may hold a lock for a moment.
        conn.busy_timeout(std::time::Duration::from_secs(30)).map_err(sqlite)?;
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
        StoreError::Sqlite { path: self.path.clone(), source }
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
    fn a_generation_is_found_only_under_its_exact_inputs() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("runs.sqlite");
        Store::open(&db).unwrap();
        let cache = GenerationCache::open(&db).unwrap();
        let params = GenerationParams { max_tokens: 40, seed: 1, ..GenerationParams::default() };
        let key = generation_key("abc", "prompt", &params);
        assert_eq!(cache.get(&key).unwrap(), None);
        let stored = CachedGeneration { text: "Five seconds.".into(), prompt_tokens: 12, completion_tokens: 4, latency_ms: 80 };
        cache.put(&key, "abc", &stored).unwrap();
        assert_eq!(cache.get(&key).unwrap(), Some(stored));
        // Any change of model, prompt, seed or budget is another generation.
        let other_seed = GenerationParams { seed: 2, ..params.clone() };
        for other in [
            generation_key("abd", "prompt", &params),
            generation_key("abc", "prompt ", &params),
            generation_key("abc", "prompt", &other_seed),
        ] {
            assert_ne!(other, key);
            assert_eq!(cache.get(&other).unwrap(), None);
        }
        // Length prefixes: moving text between fields changes the key.
        assert_ne!(generation_key("ab", "cprompt", &params), generation_key("abc", "prompt", &params));
    }
}

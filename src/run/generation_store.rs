//! The run database's generation cache handed to the target: the run opens it once the run row
//! exists (the database did not have to exist while the request was checked) and gives it to a
//! target that keeps generations, so the target is built once and never opens a database.

use super::execute::RunError;
use crate::record::CachedGeneration;
use crate::store::{GenerationCache, Store};
use crate::targets::{GenerationStore, Target};

/// The store's cache seen through the target's trait.
struct StoredGenerations(GenerationCache);

impl GenerationStore for StoredGenerations {
    fn get(&self, key: &str) -> Result<Option<CachedGeneration>, String> {
        self.0.get(key).map_err(|e| e.to_string())
    }

    fn put(&self, key: &str, model: &str, generation: &CachedGeneration) -> Result<(), String> {
        self.0.put(key, model, generation).map_err(|e| e.to_string())
    }
}

/// Give `target` the generation cache of `store`'s database, when it keeps generations.
pub(super) fn hand_generation_store(target: &mut dyn Target, store: &Store) -> Result<(), RunError> {
    if target.keeps_generations() {
        target.use_generation_store(Box::new(StoredGenerations(GenerationCache::open(store.path())?)));
    }
    Ok(())
}

//! Where the rag target finds generations it wrote before. The same model file (by sha256),
//! prompt text and generation parameters (seed included) always give the same text, so a
//! matrix run, a rerun or a second judge model reuses a stored generation instead of
//! recomputing it. The run hands the target a store (its database) once the run row exists;
//! a target never opens a database itself.

use crate::llm::generate::GenerationParams;
use crate::record::CachedGeneration;
use sha2::{Digest, Sha256};

/// Generations kept by key. Errors are the store's message; the target reports them on the
/// item it was answering.
pub trait GenerationStore: Send {
    fn get(&self, key: &str) -> Result<Option<CachedGeneration>, String>;
    /// Keep a finished generation (never a cancelled or failed one: those are not the text the
    /// same request would give). `model` is the model file's sha256 or `server:` and its name.
    fn put(&self, key: &str, model: &str, generation: &CachedGeneration) -> Result<(), String>;
}

/// The key: sha256 over the model's sha256, the prompt and the parameters, each
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_change_of_model_prompt_seed_or_budget_is_another_key() {
        let params = GenerationParams { max_tokens: 40, seed: 1, ..GenerationParams::default() };
        let key = generation_key("abc", "prompt", &params);
        let other_seed = GenerationParams { seed: 2, ..params.clone() };
        let other_budget = GenerationParams { max_tokens: 41, ..params.clone() };
        for other in [
            generation_key("abd", "prompt", &params),
            generation_key("abc", "prompt ", &params),
            generation_key("abc", "prompt", &other_seed),
            generation_key("abc", "prompt", &other_budget),
        ] {
            assert_ne!(other, key);
        }
        assert_eq!(generation_key("abc", "prompt", &params), key);
        // Length prefixes: moving text between fields changes the key.
        assert_ne!(generation_key("ab", "cprompt", &params), key);
    }
}

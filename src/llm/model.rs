//! A loaded language model: weights, tokenizer and chat format from one GGUF file, loaded once
//! per process and shared (target and judge naming the same model get the same instance).

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use candle_core::{Device, Tensor};

use super::chat_template::{ChatFormat, ChatMessage};
use super::device::{open_device, DeviceChoice};
use super::error::{LlmError, Result};
use crate::models::gguf_info::read_content;
use super::gguf_tokenizer::{tokenizer_for_content, ModelTokenizer};
use crate::models::registry::Registry;
use super::transformer::{KvCache, TransformerConfig, TransformerWeights};

pub struct LanguageModel {
    /// Registry id, or the file name for a model loaded by path.
    pub name: String,
    pub path: PathBuf,
    pub device: DeviceChoice,
    pub tokenizer: ModelTokenizer,
    pub chat: ChatFormat,
    weights: TransformerWeights,
    /// llguidance's view of the vocabulary, built on first structured generation.
    pub(crate) grammar: OnceLock<std::result::Result<Arc<llguidance::ParserFactory>, String>>,
}

impl std::fmt::Debug for LanguageModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LanguageModel")
            .field("name", &self.name)
            .field("path", &self.path)
            .field("device", &self.device)
            .finish()
    }
}

type LoadedModels = Mutex<HashMap<(PathBuf, DeviceChoice), Arc<LanguageModel>>>;

fn loaded() -> &'static LoadedModels {
    static LOADED: OnceLock<LoadedModels> = OnceLock::new();
    LOADED.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The weights of a GGUF model file on `device`, without its tokenizer (for comparing
/// devices on the same weights: `device_check`).
pub fn load_weights(path: &Path, device: &Device) -> Result<TransformerWeights> {
    let content = read_content(path)?;
    let mut file = fs::File::open(path).map_err(|e| LlmError::io(path, e))?;
    TransformerWeights::from_gguf(&content, &mut file, device, path)
}

impl LanguageModel {
    /// The model registered as `id`, verified against its sha256, loaded once per process.
    pub fn by_id(registry: &Registry, id: &str, device: DeviceChoice) -> Result<Arc<Self>> {
        let path = registry.model_path(id)?;
        Self::shared(&path, id, device)
    }

    /// The model in `path`, loaded once per process (keyed by canonical path and device).
    pub fn shared(path: &Path, name: &str, device: DeviceChoice) -> Result<Arc<Self>> {
        let key = (
            fs::canonicalize(path).map_err(|e| LlmError::io(path, e))?,
            device,
        );
        // Held while loading: two threads asking for the same model load it once.
        let mut models = loaded()
            .lock()
            .map_err(|_| LlmError::Invalid("model cache poisoned by a panic".into()))?;
        if let Some(m) = models.get(&key) {
            return Ok(m.clone());
        }
        let model = Arc::new(Self::load(path, name, device)?);
        models.insert(key, model.clone());
        Ok(model)
    }

    /// Load a GGUF model (not cached: use [`LanguageModel::shared`] or [`LanguageModel::by_id`]).
    pub fn load(path: &Path, name: &str, device: DeviceChoice) -> Result<Self> {
        let dev = open_device(device)?;
        let content = read_content(path)?;
        let tokenizer = tokenizer_for_content(&content, path)?;
        let mut file = fs::File::open(path).map_err(|e| LlmError::io(path, e))?;
        let weights = TransformerWeights::from_gguf(&content, &mut file, &dev, path)?;
        let token_text = |id: Option<u32>| {
            id.and_then(|i| tokenizer.token_text(i))
                .unwrap_or_default()
        };
        let chat = match content
            .metadata
            .get("tokenizer.chat_template")
            .and_then(|v| v.to_string().ok())
        {
            Some(source) => ChatFormat::Template {
                source: source.clone(),
                bos_token: token_text(tokenizer.bos_id),
                eos_token: token_text(tokenizer.eos_id),
                path: path.to_path_buf(),
            },
            None => ChatFormat::Plain,
        };
        Ok(LanguageModel {
            name: name.to_string(),
            path: path.to_path_buf(),
            device,
            tokenizer,
            chat,
            weights,
            grammar: OnceLock::new(),
        })
    }

    pub fn config(&self) -> &TransformerConfig {
        &self.weights.config
    }

    pub fn context_length(&self) -> usize {
        self.weights.config.context_length
    }

    /// Prompt text for a conversation, ending where the assistant's reply begins.
    pub fn chat_prompt(&self, messages: &[ChatMessage]) -> Result<String> {
        self.chat.render(messages)
    }

    /// Token ids of a prompt (BOS first when the model wants one).
    pub fn encode_prompt(&self, text: &str) -> Result<Vec<u32>> {
        self.tokenizer
            .encode(text, true)
            .map_err(|message| LlmError::Tokenizer {
                path: self.path.clone(),
                message,
            })
    }

    /// Token ids of a continuation (no BOS).
    pub fn encode_continuation(&self, text: &str) -> Result<Vec<u32>> {
        self.tokenizer
            .encode(text, false)
            .map_err(|message| LlmError::Tokenizer {
                path: self.path.clone(),
                message,
            })
    }

    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        self.tokenizer
            .decode(ids, true)
            .map_err(|message| LlmError::Tokenizer {
                path: self.path.clone(),
                message,
            })
    }

    pub fn new_cache(&self) -> KvCache {
        self.weights.new_cache()
    }

    /// Run `tokens` after `cache`; logits of every position (`all_positions`) or the last.
    /// A sequence that would not fit the context window is refused before any work.
    pub fn forward(&self, tokens: &[u32], cache: &mut KvCache, all_positions: bool) -> Result<Tensor> {
        self.check_fits(cache.len() + tokens.len())?;
        Ok(self.weights.forward(tokens, cache, all_positions)?)
    }

    pub fn check_fits(&self, positions: usize) -> Result<()> {
        if positions > self.context_length() {
            return Err(LlmError::ContextOverflow {
                model: self.name.clone(),
                tokens: positions,
                context: self.context_length(),
            });
        }
        Ok(())
    }
}

// Target and judge share one instance across threads.
const _: () = {
    fn assert_send_sync<T: Send + Sync>() {}
    fn check() {
        assert_send_sync::<LanguageModel>();
    }
    let _ = check;
};

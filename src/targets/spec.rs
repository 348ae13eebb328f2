//! `--target` values: parsing a target spec and building the target it names.
//!
//! `answers:FILE` replays a file; `retrieve` runs retrieval alone; `rag` retrieves and then
//! generates with a local model; `http:FILE.toml` asks the user's own service. What a target reads besides the dataset (the answers file,
//! the prompt template, the model file) is fingerprinted into the run config, so a resumed run
//! or a cached generation can never silently mix inputs.

use super::rag::{Generator, RagPrompt, RagPromptError, RagTarget};
use super::{load_answers_file, AnswersFileTarget, HttpTarget, HttpTargetSpec, RetrieveTarget, Target};
use crate::dataset::{Dataset, DatasetError};
use crate::llm::device::DeviceChoice;
use crate::llm::error::LlmError;
use crate::llm::generate::GenerationParams;
use crate::llm::model::LanguageModel;
use crate::llm::server::ServerModel;
use crate::models::registry::Registry;
use crate::record::RerankConfig;
use crate::retrieve::{IndexReport, IndexSettings, RerankModel, Reranker, RetrievalMode, RetrieveError};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The registry id of the embedding model dense and hybrid retrieval use.
pub const EMBEDDING_MODEL_ID: &str = "minilm-l6-v2";
/// Generator used by `--target rag` when no `--model` is given.
pub const DEFAULT_GENERATOR: &str = "qwen2.5-coder-0.5b-instruct";

#[derive(Debug, thiserror::Error)]
pub enum TargetSpecError {
    #[error("unknown target {0:?}; available: answers:FILE, retrieve, rag, http:FILE.toml")]
    Unknown(String),
    #[error("--target answers needs a file: --target answers:FILE")]
    AnswersWithoutFile,
    #[error("--target http needs the service's description: --target http:FILE.toml (see examples/http-target)")]
    HttpWithoutFile,
    #[error(transparent)]
    Http(#[from] super::HttpSpecError),
    #[error("{file}: answers file not found (looked in the current folder and in {dataset})")]
    AnswersNotFound { file: String, dataset: PathBuf },
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    #[error(transparent)]
    Retrieve(#[from] RetrieveError),
    #[error(transparent)]
    Model(#[from] LlmError),
    #[error(transparent)]
    ModelFiles(#[from] crate::models::error::ModelsError),
    #[error(transparent)]
    Prompt(#[from] RagPromptError),
}

/// Settings the retrieval and generation targets need.
#[derive(Clone, Default)]
pub struct TargetOptions {
    pub top_k: usize,
    pub retrieval: RetrievalMode,
    /// Generator model id (rag).
    pub model: Option<String>,
    /// Prompt template file (rag); when None, the dataset's own (`prompt` in dataset.toml),
    /// else the built-in `prompts/rag.md`.
    pub prompt: Option<PathBuf>,
    pub seed: u64,
    pub max_tokens: Option<usize>,
    pub device: DeviceChoice,
    /// Raised to stop generation between tokens.
    pub cancel: Option<Arc<AtomicBool>>,
    /// Retrieve without the chunks that hold each question's golden context.
    pub remove_golden_context: bool,
    /// Requests in flight at once (http, or a served generator); None: the target file's
    /// setting, or one.
    pub concurrency: Option<usize>,
    /// Rerank the first stage's chunks (retrieve, rag).
    pub rerank: Option<RerankConfig>,
}

/// A built target, and the fingerprints of its inputs that belong in the run config.
pub struct BuiltTarget {
    pub target: Box<dyn Target>,
    /// sha256 of the answers file, or of the prompt template and the model file.
    pub input_sha256: Option<String>,
    /// Model id actually used (rag).
    pub model: Option<String>,
    /// The index the target searches, when it has one (for the run's output).
    pub index: Option<IndexReport>,
    /// False for retrieval alone: its answers have no text, so text metrics do not apply.
    pub answers_in_text: bool,
}

/// Build the target named by `spec` for `dataset`.
pub fn build_target(
    spec: &str,
    dataset: &Dataset,
    options: &TargetOptions,
) -> Result<BuiltTarget, TargetSpecError> {
    match spec.split_once(':') {
        Some(("answers", file)) => {
            let path = resolve_answers_path(file, &dataset.root)?;
            let bytes = crate::dataset::read_jsonl_file(&path)?;
            let answers = load_answers_file(&path, dataset)?;
            Ok(BuiltTarget {
                target: Box::new(AnswersFileTarget::new(path, answers)),
                input_sha256: Some(hex::encode(Sha256::digest(&bytes))),
                model: None,
                index: None,
                answers_in_text: true,
            })
        }
        _ if spec == "answers" => Err(TargetSpecError::AnswersWithoutFile),
        Some(("http", file)) => {
            let path = Path::new(file);
            let (http, text) = HttpTargetSpec::load(path)?;
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| file.to_string());
            Ok(BuiltTarget {
                target: Box::new(HttpTarget::new(http, name, options.concurrency, options.cancel.clone())),
                // The file as written: `${NAME}` references, never the secrets they name.
                input_sha256: Some(hex::encode(Sha256::digest(text.as_bytes()))),
                model: None,
                index: None,
                answers_in_text: true,
            })
        }
        _ if spec == "http" => Err(TargetSpecError::HttpWithoutFile),
        _ if spec.starts_with("retrieve") => {
            let (retriever, index, rerank_fingerprint) = retriever(dataset, options)?;
            Ok(BuiltTarget {
                target: Box::new(retriever),
                // The reranking model's file (or served model), when one reorders the chunks.
                input_sha256: rerank_fingerprint.map(|f| hex::encode(Sha256::digest(f.as_bytes()))),
                model: None,
                index: Some(index),
                answers_in_text: false,
            })
        }
        _ if spec.starts_with("rag") => {
            // Everything cheap and checkable first: the prompt and the model file.
            // The run's prompt, else the dataset's, else the built-in one.
            let prompt = match options.prompt.as_ref().or(dataset.prompt.as_ref()) {
                Some(path) => RagPrompt::from_file(path)?,
                None => RagPrompt::default_prompt(),
            };
            let model_id = options
                .model
                .clone()
                .or_else(|| spec.strip_prefix("rag:").map(str::to_string))
                .unwrap_or_else(|| DEFAULT_GENERATOR.to_string());
            let registry = Registry::load()?;
            // The cache key and the run's fingerprint: the model file's sha256 (the registry
            // verified the file against it before loading), or the served model's name.
            let (generator, model_key, fingerprint) = match registry.server(&model_id) {
                Some(server) => {
                    // Keyed by where it is served and what the server reports about its
                    // model, never by the name alone: llama-server calls every model `model`.
                    let served = ServerModel::new(server.clone());
                    let key = format!("server:{}", hex::encode(Sha256::digest(served.identity().as_bytes())));
                    (Generator::Server(Arc::new(served)), key.clone(), key)
                }
                None => {
                    let model = LanguageModel::by_id(&registry, &model_id, options.device)?;
                    // The file's sha256, and a tokenizer.json that replaces its tokenizer.
                    let sha = registry.identity(registry.entry(&model_id)?)?;
                    let path = model.path.to_string_lossy().into_owned();
                    (Generator::Local(model), sha, path)
                }
            };
            let (retriever, index, rerank_fingerprint) = retriever(dataset, options)?;
            let params = GenerationParams {
                max_tokens: options.max_tokens.unwrap_or(160),
                seed: options.seed,
                ..GenerationParams::default()
            };
            let mut hasher = Sha256::new();
            hasher.update(prompt.source().as_bytes());
            hasher.update(fingerprint.as_bytes());
            if let Some(rerank) = rerank_fingerprint {
                hasher.update(rerank.as_bytes());
            }
            Ok(BuiltTarget {
                target: Box::new(RagTarget::new(
                    retriever,
                    generator,
                    prompt,
                    params,
                    options.cancel.clone(),
                    model_key,
                    options.concurrency.unwrap_or(1),
                )),
                input_sha256: Some(hex::encode(hasher.finalize())),
                model: Some(model_id),
                index: Some(index),
                answers_in_text: true,
            })
        }
        _ => Err(TargetSpecError::Unknown(spec.to_string())),
    }
}

/// The retrieval stage of the retrieve and rag targets, its index report, and what identifies
/// the reranking model when there is one (its file's sha256, or the served model's name).
fn retriever(
    dataset: &Dataset,
    options: &TargetOptions,
) -> Result<(RetrieveTarget, IndexReport, Option<String>), TargetSpecError> {
    // The reranking model first: a wrong id must not cost an index build.
    let reranker = options.rerank.as_ref().map(|r| build_reranker(r, options.device)).transpose()?;
    let minilm_dir = if options.retrieval.needs_embeddings() {
        let registry = Registry::load()?;
        let file = registry.model_path(EMBEDDING_MODEL_ID)?;
        file.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        PathBuf::new()
    };
    let (target, index) = RetrieveTarget::for_dataset(
        dataset,
        IndexSettings::for_dataset(dataset),
        options.retrieval,
        options.top_k,
        &minilm_dir,
        options.cancel.as_deref(),
    )?;
    let target = if options.remove_golden_context { target.removing_golden_context() } else { target };
    Ok(match reranker {
        Some((reranker, fingerprint)) => (target.reranking(reranker), index, Some(fingerprint)),
        None => (target, index, None),
    })
}

/// The reranker `config` names, and what identifies its model (file sha256 or served model
/// name): a served model when the registry has a server by that id, else a model file loaded
/// in process.
pub fn build_reranker(config: &RerankConfig, device: DeviceChoice) -> Result<(Reranker, String), TargetSpecError> {
    let registry = Registry::load()?;
    let (model, fingerprint) = match registry.server(&config.model) {
        Some(server) => (
            RerankModel::Served(Arc::new(ServerModel::new(server.clone()))),
            format!("rerank server:{}@{}", server.model, config.depth),
        ),
        None => {
            let model = LanguageModel::by_id(&registry, &config.model, device)?;
            let sha = registry.identity(registry.entry(&config.model)?)?;
            (RerankModel::Local(model), format!("rerank {sha}@{}", config.depth))
        }
    };
    Ok((Reranker::new(model, config.model.clone(), config.depth), fingerprint))
}

/// An answers file is looked up as given, then inside the dataset folder (so the sample
/// dataset's `answers-careful.jsonl` works from anywhere).
fn resolve_answers_path(file: &str, dataset_root: &Path) -> Result<PathBuf, TargetSpecError> {
    let given = PathBuf::from(file);
    if given.is_file() {
        return Ok(given);
    }
    let in_dataset = dataset_root.join(file);
    if in_dataset.is_file() {
        return Ok(in_dataset);
    }
    Err(TargetSpecError::AnswersNotFound {
        file: file.to_string(),
        dataset: dataset_root.to_path_buf(),
    })
}
